"""errcat's entry package: `python -m errcat`, the `errcat` console script and the MkDocs plugin.

errcat's own packages are the top-level names `catalog` and `extractor`. A project adopting
errcat may well have a folder of either name at its root (a `catalog/` of its own, even one
without `__init__.py`, is a namespace package), and Python puts the current folder first on
`sys.path` for `python -m` and `python -c`. Importing this package first pins both names in
`sys.modules` to errcat's own folders, so every later `import catalog.x` resolves inside errcat
whatever `sys.path` holds.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import NoReturn

PINNED = ("catalog", "extractor")
"""errcat's top-level packages, pinned in `sys.modules` when this package is imported."""

# errcat/ is installed beside catalog/ and extractor/, in a wheel's site-packages as in this
# checkout (which an editable install points at).
_HOME = Path(__file__).resolve().parent.parent


def _own_init(name: str) -> Path:
    return _HOME / name / "__init__.py"


def _is_own(module: ModuleType, name: str) -> bool:
    location = getattr(module, "__file__", None)
    # A namespace package (a bare folder of the project's) has no __file__ at all.
    return location is not None and Path(location).resolve() == _own_init(name)


def _pin(name: str) -> None:
    init = _own_init(name)
    loaded = sys.modules.get(name)
    if loaded is not None:
        if _is_own(loaded, name):
            return
        where = getattr(loaded, "__file__", None) or ", ".join(
            str(p) for p in getattr(loaded, "__path__", ()) or ("an unknown place",)
        )
        raise ImportError(
            f"errcat needs its own `{name}` package ({init.parent}), but another `{name}` was "
            f"imported first, from {where}; import errcat before it, or run errcat through "
            "`python -m errcat` or the `errcat` command",
            name=name,
        )
    if not init.is_file():
        raise ImportError(
            f"errcat's `{name}` package is missing: no {init}; reinstall errcat", name=name
        )
    spec = importlib.util.spec_from_file_location(
        name, init, submodule_search_locations=[str(init.parent)]
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load errcat's `{name}` package from {init}", name=name)
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs, as the import system does, so that the package's own imports
    # of its submodules find it instead of searching sys.path.
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise


for _name in PINNED:
    _pin(_name)


def main(argv: Sequence[str] | None = None) -> int:
    """Run errcat with `argv` (default: the process arguments) and return the exit code."""
    # Imported on call so that importing errcat (the MkDocs plugin does) costs only the pin.
    from catalog.cli import main as cli_main

    return cli_main(argv)


def run() -> NoReturn:
    """The `errcat` console script and `python -m errcat`: `main` with the process arguments,
    then the process ends at once with its exit code.

    By the time a command returns, everything it opened is closed (files, the caches' SQLite
    connections, worker processes), and what is left is the interpreter tearing down every
    object it still holds, a noticeable share of a whole-torch rebuild. Output is
    flushed first; a command that raises ends the ordinary way."""
    import contextlib
    import logging
    import os

    code = main()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        # A reader gone (`errcat scan | head`) or a stream closed: nothing left to write to.
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


__all__ = ["PINNED", "main", "run"]
