"""wiggum: run autonomous coding agents in a Ralph loop inside an OS sandbox."""

__version__ = "0.1.0"
