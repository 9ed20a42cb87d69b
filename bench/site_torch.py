"""Site build benchmark on a real package: the whole installed torch, catalogued by `errcat new`.

    .venv/bin/python bench/site_torch.py                     # every torch file
    .venv/bin/python bench/site_torch.py --limit-files 300   # a quick run on part of torch
    .venv/bin/python bench/site_torch.py --keep /tmp/t       # keep the project for profiling

Copies the `*.py` files of the installed torch package into a temporary project whose
pyproject.toml says `[tool.errcat] package = "torch"`, `catalog = "errors"` (no mkdocs.yml, so
errcat's own site settings apply), runs `errcat new` with no hand edits, then, in the same run:

1. cold: `errcat build` with no site cache and no earlier site (the scan cache `errcat new`
   filled is kept, as it would be for a user);
2. floor: a plain `mkdocs build` of as many ~1 KB Markdown pages as the errcat site has, with the
   Markdown extensions, theme and search settings of the composed `build/mkdocs.yml`, and a
   navigation of the home page only;
3. 1 and 2 again, alternating, `--rounds` times in all (default 2); the best of each is kept;
4. warm: `errcat build` again after the `meaning` of one entry was written;
5. with `--peers`, the two other engines on the very pages errcat composed (`build/docs` and
   `build/mkdocs.yml`, which need no errcat plugin): bare MkDocs (`mkdocs build`) and Zensical
   (a pinned release in a virtual environment of its own under ~/.cache/errcat-bench), each
   cold (no site, no cache) and warm (one composed page changed: MkDocs builds everything again,
   having no cache; Zensical uses its own), with errcat's cold and warm builds as ratios to
   theirs. MkDocs' `--dirty` is not used: it writes only the changed page and leaves every
   other page's navigation as it was, which is not the same site.

Then, on the same project: `errcat codegen`, `errcat check` and `errcat stats` (each run once to
fill their caches, then the median of three), `errcat explain` of a concrete message (its first
call, which compiles the index, and the median of three after), and the generated module's
import time in a fresh interpreter (`bench/commands_scale.py`'s measurement, over `python -c
pass`). `bench/commands_scale.py` sets check and stats against the scan they rest on.

Each command runs in its own process; its wall time and peak resident memory (from `os.wait4`)
are printed, with the ratios to the floor. Targets (issue 16): cold build at most 1.5x the
floor, warm rebuild at most 25% of the cold build, peak memory at most 1 GB, explain at most
0.3 s, the generated module's import at most 100 ms.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

BIN = Path(sys.executable).parent
PYPROJECT = """\
[project]
name = "torchcopy"
version = "0"

[tool.errcat]
package = "torch"
catalog = "errors"
generated = "torch/_errcat_errors.py"
"""
FLOOR_PAGE = """\
# Page {n}

This is page {n} of the floor: a plain Markdown page about the size of a short error page, built
with the same extensions, theme and search as the catalog. It has two paragraphs, a list and some
`inline code`, so every page goes through the usual Markdown blocks and the search indexes real
words rather than an empty body.

## Details

The second paragraph says a little more. A value such as `lr={n}` or a device such as `cuda:0`
appears in text the way error messages put them, and *emphasis* and **strong** words appear too.

- the first item of the list, with a [link to the home page](../index.md)
- the second item, a bit longer than the first so that lines wrap in the browser
- the third item

The page ends with one more sentence, which brings it to about one kilobyte of Markdown in all.
"""
TARGET_COLD = 1.5
TARGET_WARM = 0.25
TARGET_RSS = 1 << 30
TARGET_EXPLAIN = 0.3
TARGET_IMPORT = 0.100
ZENSICAL = "0.0.73"
PEER_ENVS = Path.home() / ".cache" / "errcat-bench" / "venvs"


@dataclass(frozen=True)
class Run:
    """One timed subprocess."""

    seconds: float
    cpu: float
    """User and system CPU seconds: on a shared machine, steadier than the wall time."""
    peak_rss: int
    """Bytes, of the process and its waited-for children."""
    output: str


def torch_root() -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("bench/site_torch.py: torch is not installed (the `runtime` extra)")
    return Path(next(iter(spec.submodule_search_locations)))


def copy_torch(target: Path, limit: int | None) -> int:
    """Copy torch's `*.py` files (the first `limit` in path order, with the `__init__.py` of
    each folder above them, so the package imports the same way) into `target/torch`."""
    source = torch_root()
    files = sorted(
        path.relative_to(source)
        for path in source.rglob("*.py")
        if "__pycache__" not in path.parts and path.is_file()
    )
    chosen = set(files[:limit] if limit else files)
    for relative in list(chosen):
        for parent in relative.parents:
            if (source / parent / "__init__.py").is_file():
                chosen.add(parent / "__init__.py")
    for relative in sorted(chosen):
        destination = target / "torch" / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / relative, destination)
    return len(chosen)


def timed(command: list[str], cwd: Path, ok: tuple[int, ...] = (0,)) -> Run:
    """Run `command`, failing the benchmark when it exits otherwise than `ok`; its time and
    peak memory."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    started = time.perf_counter()
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=log)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        output = log.read().decode("utf-8", "replace")
    if process.returncode not in ok:
        sys.exit(f"bench/site_torch.py: {' '.join(command)} failed:\n{output}")
    # ru_maxrss is in KiB on Linux.
    return Run(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, output)


def edit_one_entry(catalog: Path) -> str:
    """Write a `meaning` for the first entry of the first catalog file; return its id."""
    path = sorted(catalog.glob("*.yaml"))[0]
    lines = path.read_text(encoding="utf-8").split("\n")
    for index, line in enumerate(lines):
        if line.startswith("  - id: "):
            entry_id = line.split('"')[1]
            lines.insert(
                index + 1,
                '    meaning: "Written by bench/site_torch.py: one entry\'s prose changed."',
            )
            path.write_text("\n".join(lines), encoding="utf-8")
            return entry_id
    sys.exit(f"bench/site_torch.py: no entry in {path}")


def floor_project(root: Path, composed: Path, pages: int) -> None:
    """`pages` Markdown pages of about 1 KB, with the composed config's extensions and search."""
    settings = yaml.safe_load(composed.read_text(encoding="utf-8"))
    config = {
        "site_name": "floor",
        "site_url": settings.get("site_url", "http://127.0.0.1:8000/"),
        "theme": {"name": "material"},
        "markdown_extensions": settings.get("markdown_extensions", []),
        "plugins": settings.get("plugins", ["search"]),
        "nav": [{"Home": "index.md"}],
        "docs_dir": "docs",
        "site_dir": "site",
    }
    (root / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    docs = root / "docs"
    (docs / "pages").mkdir(parents=True)
    (docs / "index.md").write_text("# Floor\n\nThe home page.\n", encoding="utf-8")
    for n in range(pages - 1):
        (docs / "pages" / f"p{n}.md").write_text(FLOOR_PAGE.format(n=n), encoding="utf-8")


def zensical() -> Path:
    """The pinned Zensical's command, installed once into a virtual environment of its own."""
    env = PEER_ENVS / f"zensical-{ZENSICAL}"
    command = env / "bin" / "zensical"
    if not command.is_file():
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
        pip = [str(env / "bin" / "python"), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, f"zensical=={ZENSICAL}"], check=True)
    return command


@dataclass(frozen=True)
class PeerBuild:
    """Another engine's builds of errcat's composed folder."""

    cold: Run
    warm: Run
    pages: int


def peer_builds(project: Path) -> dict[str, PeerBuild]:
    """Bare MkDocs and Zensical on errcat's composed folder: each cold, then each warm after
    one composed page changed. The page is put back afterwards, for errcat's own warm build."""
    config = project / "build" / "mkdocs.yml"
    settings = yaml.safe_load(config.read_text(encoding="utf-8"))
    composed_site = config.parent / settings["site_dir"]
    page = sorted((config.parent / "docs" / "errors").glob("*.md"))[0]
    engines = {
        # Cold: no site and no cache (Zensical's cleaned); warm: the same command again.
        "mkdocs": [str(BIN / "mkdocs"), "build", "-q", "-f", str(config)],
        "zensical": [str(zensical()), "build", "-f", str(config)],
    }
    builds: dict[str, PeerBuild] = {}
    for name, command in engines.items():
        shutil.rmtree(composed_site, ignore_errors=True)
        cold = timed([*command, *(["--clean"] if name == "zensical" else [])], project)
        pages = count_pages(composed_site)
        original = page.read_text(encoding="utf-8")
        page.write_text(original + "\nOne more sentence, written by bench/site_torch.py.\n")
        try:
            warm = timed(command, project)
        finally:
            page.write_text(original, encoding="utf-8")
        builds[name] = PeerBuild(cold, warm, pages)
    shutil.rmtree(composed_site, ignore_errors=True)
    return builds


def count_pages(site: Path) -> int:
    return sum(1 for _ in site.rglob("index.html"))


def concrete_message(catalog: Path) -> str:
    """A message as a raise would print it: the first entry's template with at least 30
    literal characters, each placeholder given a value."""
    for path in sorted(catalog.glob("*.yaml")):
        for entry in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("errors", []):
            message = str(entry.get("message", ""))
            literal = re.sub(r"\{[^{}]*\}", "", message)
            if len(literal) >= 30 and "{{" not in message and "}}" not in message:
                return re.sub(r"\{[^{}]*\}", "7", message)
    sys.exit(f"bench/site_torch.py: no entry in {catalog} has a message to explain")


def median_of(runs: int, command: list[str], cwd: Path, ok: tuple[int, ...] = (0,)) -> float:
    return statistics.median(timed(command, cwd, ok).seconds for _ in range(runs))


def commands(project: Path, errcat: str) -> dict[str, float]:
    """codegen, check, stats and explain on the built project, and the module's import."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from commands_scale import import_times

    codegen = timed([errcat, "codegen"], project)
    figures = {"codegen_s": codegen.seconds}
    for name in ("check", "stats"):
        timed([errcat, name], project, ok=(0, 1))  # fills its caches
        figures[f"{name}_s"] = median_of(3, [errcat, name], project, ok=(0, 1))
    query = concrete_message(project / "errors")
    explain = [errcat, "explain", query]
    figures["explain_first_s"] = timed(explain, project).seconds
    figures["explain_s"] = median_of(3, explain, project)
    times = import_times(project / "torch" / "_errcat_errors.py", 5)
    figures["import_ms"] = (times["import"] - times["pass"]) * 1000
    return {key: round(value, 3) for key, value in figures.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--limit-files", type=int, help="copy only the first N torch files")
    parser.add_argument("--keep", type=Path, help="build in this (new) folder and keep it")
    parser.add_argument(
        "--rounds", type=int, default=2, help="cold builds and floors to take the best of"
    )
    parser.add_argument(
        "--peers",
        action="store_true",
        help="also build the composed pages with bare MkDocs and Zensical, cold and warm",
    )
    args = parser.parse_args(argv)
    errcat = str(BIN / "errcat")
    with tempfile.TemporaryDirectory(prefix="errcat-site-torch-") as scratch:
        work = args.keep.resolve() if args.keep else Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        # Every command may keep its bytecode, in a folder of this run's own, as an installed
        # errcat and MkDocs have theirs: this checkout's environment sets
        # PYTHONDONTWRITEBYTECODE, which makes every process compile errcat from source
        # (about 50 ms of each `errcat explain`).
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        project = work / "project"
        if project.exists():
            sys.exit(f"bench/site_torch.py: {project} exists; choose a new --keep folder")
        project.mkdir()
        (project / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
        copied = copy_torch(project, args.limit_files)
        new = timed([errcat, "new"], project)
        catalog = project / "errors"
        entries = sum(
            len((yaml.safe_load(p.read_text(encoding="utf-8")) or {}).get("errors", []))
            for p in catalog.glob("*.yaml")
        )
        floor_root = work / "floor"
        colds: list[Run] = []
        floors: list[Run] = []
        # Cold build and floor alternate, `--rounds` times each, and the best of each is
        # compared: this machine's speed drifts by a third from one minute to the next, and a
        # single pair measured minutes apart compares the drift as much as the builds.
        for round_number in range(args.rounds):
            # A site cache or site from an earlier build must not make the cold build warm.
            for leftover in (project / ".errcat-cache").glob("site*"):
                if leftover.is_dir():
                    shutil.rmtree(leftover)
                else:
                    leftover.unlink()
            shutil.rmtree(project / "build", ignore_errors=True)
            colds.append(timed([errcat, "build"], project))
            site = (project / "build" / "site").resolve()
            pages = count_pages(site)
            if round_number == 0:
                floor_root.mkdir()
                floor_project(floor_root, project / "build" / "mkdocs.yml", pages)
            shutil.rmtree(floor_root / "site", ignore_errors=True)
            floors.append(timed([str(BIN / "mkdocs"), "build", "--strict", "-q"], floor_root))
        cold = min(colds, key=lambda run: run.seconds)
        floor = min(floors, key=lambda run: run.seconds)
        floor_pages = count_pages(floor_root / "site")
        peers = peer_builds(project) if args.peers else {}
        edited = edit_one_entry(catalog)
        warm = timed([errcat, "build"], project)
        warm_site = (project / "build" / "site").resolve()
        if "one entry's prose changed" not in (
            warm_site / "errors" / edited / "index.html"
        ).read_text(encoding="utf-8"):
            sys.exit("bench/site_torch.py: the warm build does not show the edited prose")
        index_bytes = (site / "search" / "search_index.json").stat().st_size
        command_figures = commands(project, errcat)
    figures = {
        "torch_files": copied,
        "entries": entries,
        "pages": pages,
        "floor_pages": floor_pages,
        "new_s": round(new.seconds, 2),
        "cold_s": round(cold.seconds, 2),
        "cold_runs_s": [round(run.seconds, 2) for run in colds],
        "floor_runs_s": [round(run.seconds, 2) for run in floors],
        "warm_s": round(warm.seconds, 2),
        "floor_s": round(floor.seconds, 2),
        "cold_cpu_s": round(cold.cpu, 2),
        "warm_cpu_s": round(warm.cpu, 2),
        "floor_cpu_s": round(floor.cpu, 2),
        "cold_over_floor": round(cold.seconds / floor.seconds, 3),
        "warm_over_cold": round(warm.seconds / cold.seconds, 3),
        "cold_over_floor_cpu": round(cold.cpu / floor.cpu, 3),
        "warm_over_cold_cpu": round(warm.cpu / cold.cpu, 3),
        "cold_peak_rss_mb": round(cold.peak_rss / 1e6),
        "warm_peak_rss_mb": round(warm.peak_rss / 1e6),
        "floor_peak_rss_mb": round(floor.peak_rss / 1e6),
        "search_index_bytes_per_page": round(index_bytes / pages),
        **command_figures,
    }
    for name, peer in peers.items():
        figures[f"{name}_pages"] = peer.pages
        figures[f"{name}_cold_s"] = round(peer.cold.seconds, 2)
        figures[f"{name}_warm_s"] = round(peer.warm.seconds, 2)
        figures[f"cold_over_{name}"] = round(cold.seconds / peer.cold.seconds, 3)
        figures[f"warm_over_{name}_warm"] = round(warm.seconds / peer.warm.seconds, 3)
    print(json.dumps(figures, indent=2))
    print(
        f"cold build {cold.seconds:.1f} s = {figures['cold_over_floor']:.2f}x the floor "
        f"({floor.seconds:.1f} s for {floor_pages} pages; target <= {TARGET_COLD}x; best of "
        f"{args.rounds} alternated runs each: cold {figures['cold_runs_s']}, floor "
        f"{figures['floor_runs_s']})"
    )
    print(
        f"warm rebuild {warm.seconds:.1f} s = {figures['warm_over_cold']:.0%} of the cold build "
        f"(target <= {TARGET_WARM:.0%})"
    )
    for name, peer in peers.items():
        print(
            f"{name} on the composed pages ({peer.pages} pages): cold {peer.cold.seconds:.1f} s, "
            f"warm {peer.warm.seconds:.1f} s; errcat's cold build "
            f"{figures[f'cold_over_{name}']:.2f}x and warm rebuild "
            f"{figures[f'warm_over_{name}_warm']:.2f}x of theirs"
        )
    peak = max(cold.peak_rss, warm.peak_rss)
    print(f"peak memory {peak / 1e6:.0f} MB (target <= {TARGET_RSS / 1e6:.0f} MB)")
    print(
        f"check {command_figures['check_s']:.2f} s, stats {command_figures['stats_s']:.2f} s "
        "(median of 3, caches filled; bench/commands_scale.py sets them against the scan)"
    )
    print(
        f"explain {command_figures['explain_s']:.2f} s (first call "
        f"{command_figures['explain_first_s']:.2f} s; target <= {TARGET_EXPLAIN} s)"
    )
    print(
        f"generated module import {command_figures['import_ms']:.0f} ms over python -c pass "
        f"(target <= {TARGET_IMPORT * 1000:.0f} ms)"
    )
    ok = (
        cold.seconds <= TARGET_COLD * floor.seconds
        and warm.seconds <= TARGET_WARM * cold.seconds
        and peak <= TARGET_RSS
        and floor_pages == pages
        and command_figures["explain_s"] <= TARGET_EXPLAIN
        and command_figures["import_ms"] <= TARGET_IMPORT * 1000
    )
    print("ok: every target met" if ok else "some targets missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
