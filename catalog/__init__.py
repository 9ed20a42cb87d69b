"""errcat: one set of error definitions for the docs site, the JSON API and the runtime."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("errcat")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
