"""The limits of one call `errcat reproduce` runs, apart from the machinery that enforces them,
so that the command line can state them without loading it."""

DEFAULT_TIMEOUT = 10.0
"""Seconds one call may run before it is killed with its process group."""
