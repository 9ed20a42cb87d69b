"""Adopt errcat in real PyPI packages and prove their own test suites do not notice.

For each package (a pinned sdist, downloaded once into ~/.cache/errcat-bench/sdists):

1. its test suite runs against the package as released, installed non-editable;
2. a copy goes through the README's adoption path with the `errcat` of this checkout: `init`,
   `new`, then the one step a person does by hand (each raise `new` could not draft gets an
   `# errcat: ignore[<why new gave>]` comment on its `raise` line), `codegen`, `migrate`, and
   `check`, which must pass;
3. the suite runs again against the adopted package, installed non-editable.

Both runs happen on every Python of PYTHONS, in a virtual environment of its own (cached), from
a folder holding only the tests and the project's configuration, so the tests can only import
the installed package. The pass/fail/skip counts before and after must be equal. The time of
each errcat command is printed, and `migrate` is compared with a cold `errcat scan` of the
same package measured in the same run.

    .venv/bin/python bench/adopt.py [--only NAME] [--python 3.11]

Nothing here is tuned to these packages: the same steps run on each.
"""

from __future__ import annotations

import argparse
import ast
import glob
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from catalog.core.config import load_config  # noqa: E402
from catalog.entries.loader import load_catalog  # noqa: E402

ERRCAT = Path(sys.executable).parent / "errcat"
CACHE = Path.home() / ".cache" / "errcat-bench"


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    test_requirements: tuple[str, ...]
    """What the package's own test suite needs besides the package (from its requirements)."""


PACKAGES = (
    Package("packaging", "24.2", ("pytest", "pretend")),
    Package("itsdangerous", "2.2.0", ("pytest", "freezegun")),
    Package("jinja2", "3.1.4", ("pytest", "markupsafe")),
)
PYTHONS = {
    "3.11": "/root/.pyenv/versions/3.11*/bin/python",
    "3.9": "/root/.pyenv/versions/3.9*/bin/python",
}
CONFIG_FILES = ("pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", "conftest.py")
_SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?|warnings?)")
_FINDING = re.compile(r"^(?P<path>[^:\n]+\.py):(?P<line>\d+):(?P<column>\d+): (?P<why>[^;\n]+)")


@dataclass
class Outcome:
    package: str
    steps: dict[str, float] = field(default_factory=dict)
    """errcat command → wall seconds."""
    exempted: int = 0
    entries: int = 0
    suites: dict[str, tuple[dict[str, int], dict[str, int]]] = field(default_factory=dict)
    """Python version → (counts before, counts after)."""


def run(command: list[str], cwd: Path, timeout: int = 1800) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def sdist(package: Package) -> Path:
    """The pinned source distribution, downloaded once."""
    folder = CACHE / "sdists"
    folder.mkdir(parents=True, exist_ok=True)
    found = sorted(folder.glob(f"{package.name}-{package.version}.tar.gz"))
    if not found:
        done = run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"{package.name}=={package.version}",
                "--dest",
                str(folder),
            ],
            cwd=folder,
        )
        if done.returncode != 0:
            raise SystemExit(f"cannot download {package.name}: {done.stderr}")
        found = sorted(folder.glob(f"{package.name}-{package.version}.tar.gz"))
    return found[0]


def unpack(archive: Path, into: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    (root,) = into.iterdir()
    return root


def environment(package: Package, version: str, python: str) -> Path:
    """A cached virtual environment with the suite's requirements (not the package itself)."""
    venv = CACHE / "venvs" / f"{package.name}-{package.version}-py{version}"
    marker = venv / ".ready"
    if not marker.exists():
        shutil.rmtree(venv, ignore_errors=True)
        if run([python, "-m", "venv", str(venv)], cwd=CACHE).returncode != 0:
            raise SystemExit(f"cannot create a Python {version} environment")
        done = run(
            [
                str(venv / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                *list(package.test_requirements),
            ],
            cwd=CACHE,
        )
        if done.returncode != 0:
            raise SystemExit(f"cannot install {package.test_requirements}: {done.stderr}")
        marker.touch()
    return venv


def suite(venv: Path, project: Path, workdir: Path) -> dict[str, int]:
    """Install `project` non-editable into `venv`, then run its tests away from its sources."""
    python = str(venv / "bin" / "python")
    done = run(
        [python, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", str(project)],
        cwd=workdir,
    )
    if done.returncode != 0:
        raise SystemExit(f"cannot install {project}: {done.stderr[-2000:]}")
    tests = workdir / "suite"
    shutil.rmtree(tests, ignore_errors=True)
    shutil.copytree(project / "tests", tests / "tests")
    for name in CONFIG_FILES:
        if (project / name).is_file():
            shutil.copy2(project / name, tests / name)
    done = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=tests)
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    counts = {kind.rstrip("s"): int(n) for n, kind in _SUMMARY.findall(tail)}
    counts.pop("warning", None)
    if not counts:
        raise SystemExit(f"no test summary for {project}: {done.stdout[-2000:]}{done.stderr}")
    return counts


def timed(outcome: Outcome, label: str, command: list[str], cwd: Path) -> str:
    start = time.perf_counter()
    done = run([str(ERRCAT), *command], cwd=cwd)
    outcome.steps[label] = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(
            f"errcat {' '.join(command)} failed in {cwd} ({done.returncode}):\n"
            f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        )
    return done.stderr


def exempt(project: Path, report: str) -> int:
    """The person's step: an ignore comment, with `new`'s reason, on each undrafted raise."""
    marks: dict[Path, dict[int, str]] = {}
    for line in report.splitlines():
        found = _FINDING.match(line)
        if found:
            reason = found.group("why").replace("[", "(").replace("]", ")")[:80]
            path = project / found.group("path")
            marks.setdefault(path, {})[int(found.group("line"))] = reason
    for path, lines in marks.items():
        text = path.read_text(encoding="utf-8").splitlines(keepends=True)
        for number, reason in lines.items():
            body = text[number - 1].rstrip("\r\n")
            ending = text[number - 1][len(body) :]
            text[number - 1] = f"{body}  # errcat: ignore[{reason}]{ending}"
        source = "".join(text)
        ast.parse(source)  # a comment after a raise line can only end that line
        path.write_text(source, encoding="utf-8")
    return sum(len(lines) for lines in marks.values())


def adopt(package: Package, project: Path, outcome: Outcome) -> None:
    timed(outcome, "init", ["init"], project)
    timed(outcome, "scan (cold)", ["scan", "--no-cache"], project)
    report = timed(outcome, "new", ["new"], project)
    outcome.exempted = exempt(project, report)
    timed(outcome, "codegen", ["codegen"], project)
    timed(outcome, "migrate", ["migrate"], project)
    timed(outcome, "check", ["check"], project)
    timed(outcome, "check (cached scan)", ["check"], project)
    outcome.entries = len(load_catalog(load_config(project).catalog)[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="one package name")
    parser.add_argument("--python", action="append", help="Python versions (default: all)")
    args = parser.parse_args(argv)
    versions = args.python or list(PYTHONS)
    pythons: dict[str, str] = {}
    for version in versions:
        found = sorted(glob.glob(PYTHONS[version]))
        if not found:
            print(f"skipping Python {version}: nothing matches {PYTHONS[version]}")
            continue
        pythons[version] = found[-1]
    outcomes: list[Outcome] = []
    for package in PACKAGES:
        if args.only and package.name != args.only:
            continue
        outcome = Outcome(f"{package.name} {package.version}")
        with tempfile.TemporaryDirectory(prefix=f"adopt-{package.name}-") as scratch:
            work = Path(scratch)
            archive = sdist(package)
            original = unpack(archive, work / "original")
            adopted = unpack(archive, work / "adopted")
            adopt(package, adopted, outcome)
            for version, python in pythons.items():
                venv = environment(package, version, python)
                before = suite(venv, original, work)
                after = suite(venv, adopted, work)
                outcome.suites[version] = (before, after)
        outcomes.append(outcome)
        report(outcome)
    return 0 if all(b == a for o in outcomes for b, a in o.suites.values()) else 1


def report(outcome: Outcome) -> None:
    print(
        f"\n== {outcome.package}: {outcome.entries} entries; "
        f"{outcome.exempted} raise(s) exempted by hand"
    )
    for label, seconds in outcome.steps.items():
        print(f"   errcat {label:<20} {seconds:7.2f} s")
    scan = outcome.steps.get("scan (cold)")
    if scan:
        print(f"   migrate / cold scan: {outcome.steps['migrate'] / scan:.2f}")
    for version, (before, after) in outcome.suites.items():
        same = "equal" if before == after else "DIFFERENT"
        print(f"   Python {version}: before {before}  after {after}  ({same})")


if __name__ == "__main__":
    raise SystemExit(main())
