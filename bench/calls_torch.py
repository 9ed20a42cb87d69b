"""Summarise every Python file of the installed torch for the call graph, in one process.

    .venv/bin/python bench/calls_torch.py [--root DIR] [--profile N]

Reads every `*.py` under the torch folder (or `--root`) first, then, with no cache and no
workers: (a) runs `extractor.calls.summarise` on each file, in sorted path order; (b) does
the same steps again with `ast.parse` and the rest (the summariser's walk, freeing the tree)
timed apart. Times are CPU seconds (`time.process_time`), so a busy machine inflates them
less than wall time would (it still does: compare runs made under the same load). Prints the
file count, the total of (a), the parse and walk split of (b), and a sha256 of `repr` of
every (path, summary) pair of (a) in path order: two versions of the summariser that print the
same digest produce the same summaries.
`--profile N` instead runs (a) under cProfile and prints its N costliest functions.
"""

from __future__ import annotations

import argparse
import ast
import cProfile
import gc
import hashlib
import importlib.util
import pstats
import sys
import time
import warnings
from pathlib import Path

from extractor.calls import Summary, _Summariser, summarise
from extractor.imports import ModuleName, module_name_for


def torch_root() -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("bench/calls_torch.py: torch is not installed (the `runtime` extra)")
    return Path(next(iter(spec.submodule_search_locations)))


def load(root: Path) -> list[tuple[str, bytes, ModuleName]]:
    """(path relative to `root`, contents, module name) of every file, in path order."""
    known: dict[Path, tuple[str, ...]] = {}
    files = sorted(path for path in root.rglob("*.py") if path.is_file())
    return [
        (path.relative_to(root).as_posix(), path.read_bytes(), module_name_for(path, known))
        for path in files
    ]


def summarise_all(work: list[tuple[str, bytes, ModuleName]]) -> list[tuple[str, Summary]]:
    return [(name, summarise(data, module)) for name, data, module in work]


def split(work: list[tuple[str, bytes, ModuleName]]) -> tuple[float, float]:
    """CPU seconds of `ast.parse` and of the rest, timed apart file by file.

    The steps of `summarise`, under its conditions (cyclic GC off, warnings ignored), so that
    both parts see the same state of the allocator: timing `ast.parse` in a pass of its own
    would credit the parse with memory that the summarising pass before it had set up.
    """
    parse = rest = 0.0
    clock = time.process_time
    for _name, data, module in work:
        gc.disable()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = clock()
                try:
                    tree = ast.parse(data)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    continue
                finally:
                    parse += clock() - start
            start = clock()
            _Summariser(module).summary(tree)
            del tree  # freeing the tree is part of the cost
            rest += clock() - start
        finally:
            gc.enable()
    return parse, rest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, help="the package folder (default: torch's)")
    parser.add_argument("--profile", type=int, metavar="N", help="print cProfile's top N")
    options = parser.parse_args()
    root = options.root or torch_root()
    work = load(root)
    if options.profile:
        profile = cProfile.Profile()
        profile.runcall(summarise_all, work)
        pstats.Stats(profile).sort_stats("tottime").print_stats(options.profile)
        return 0
    start = time.process_time()
    summaries = summarise_all(work)
    total = time.process_time() - start
    parse, rest = split(work)
    digest = hashlib.sha256(repr(summaries).encode()).hexdigest()
    print(f"files:   {len(work)} under {root}")
    print(f"total:   {total:.2f} s CPU (summarise)")
    print(f"parse:   {parse:.2f} s CPU (ast.parse, second pass)")
    print(f"walk:    {rest:.2f} s CPU (the rest, second pass: summariser and freeing the tree)")
    print(f"digest:  {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
