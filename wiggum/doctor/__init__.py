"""`wiggum doctor`: find out, for real, whether `wiggum run` would start, and if not, why."""
