"""errcat: one set of error definitions for the docs site, the JSON API and the runtime."""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    # Read on first use: importlib.metadata and the search of the installed distributions cost
    # every command a few tens of milliseconds at start, and most never show the version.
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("errcat")
    except PackageNotFoundError:  # running from a source tree that was never installed
        found = "0.0.0+unknown"
    globals()["__version__"] = found
    return found
