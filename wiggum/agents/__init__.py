"""Agent presets: what each coding agent needs from the sandbox and how it is started."""
