"""Adopt errcat in real PyPI packages and prove their own test suites do not notice.

For each package (a pinned sdist, downloaded once into ~/.cache/errcat-bench/sdists; each of
these sdists holds its test suite):

1. its test suite runs against the package as released, installed non-editable, and so do the
   package's calls of ERRORS (its public API used wrongly), whose exact texts are kept;
2. a copy goes through the README's adoption path with the `errcat` of this checkout: `init`,
   `new`, then the one step a person does by hand (each raise `new` could not draft gets an
   `# errcat: ignore[<why new gave>]` comment on its `raise` line), `codegen`, `migrate`, and
   `check`, which must pass;
3. the package's own linter (ruff or flake8, as its pyproject.toml, setup.cfg, tox.ini, .flake8
   or pre-commit configuration names it; ruff with its defaults where none is) runs over the
   released copy and the adopted one, and must find no more in the adopted one; then its
   formatter (black or ruff format, as configured; ruff format with the package's ruff
   settings where none is) rewrites the adopted copy, and `check` must still pass;
4. the suite runs again against the adopted, formatted package, installed non-editable; every
   generated class goes through tests/authoring/codegen_probe.py (drop-in behaviour for
   callers) in the same environment; the wrong calls run again, and must raise the same text;
   `errcat explain` is asked each text, alone and as the traceback's last line prints it
   (`module.Class: message`, what a user copies), and the rank of the entry the raise belongs
   to (its generated class's id, or the catalogued raise site of the innermost frame) is
   printed for both.

Both runs happen on every Python of PYTHONS, in a virtual environment of its own (cached), from
a folder holding only the tests and the project's configuration, so the tests can only import
the installed package. The pass/fail/skip counts before and after must be equal. The time of
each errcat command is printed, and `migrate` is compared with a cold `errcat scan` of the
same package measured in the same run.

    .venv/bin/python bench/adopt.py [--only NAME] [--python 3.11]

Nothing here is tuned to these packages: the same steps run on each. What differs per package
is data: what its suite needs, which folders of the sdist it reads, and the wrong calls.
Exit 1 when a suite's counts differ, a wrong call's text changes, the linter finds more,
`check` fails after the formatter, or the probe finds a difference.
"""

from __future__ import annotations

import argparse
import ast
import configparser
import contextlib
import glob
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from collections import Counter
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
    """The distribution's name on PyPI."""
    version: str
    import_name: str
    """The top-level package it installs."""
    test_requirements: tuple[str, ...]
    """What the package's own test suite needs besides the package (from its requirements)."""
    errors: tuple[str, ...]
    """Calls of the public API made wrongly, each a small program that must raise."""
    suite_files: tuple[str, ...] = ("tests",)
    """The sdist's folders the suite reads (its tests import some), copied beside the tests."""


PACKAGES = (
    Package(
        "packaging",
        "24.2",
        "packaging",
        ("pytest", "pretend"),
        (
            "from packaging.version import Version; Version('1.0.0-foo-bar')",
            "from packaging.specifiers import SpecifierSet; SpecifierSet('==>1.0')",
            "from packaging.requirements import Requirement; Requirement('foo[')",
            "from packaging.markers import Marker; Marker('python_version >>> \"3\"')",
            "from packaging.utils import parse_wheel_filename; parse_wheel_filename('foo.whl')",
            "from packaging.utils import parse_sdist_filename; parse_sdist_filename('foo.zip')",
            "from packaging.specifiers import Specifier; Specifier('~=1')",
        ),
    ),
    Package(
        "itsdangerous",
        "2.2.0",
        "itsdangerous",
        ("pytest", "freezegun"),
        (
            "from itsdangerous import Signer; Signer('k').unsign('no-dot')",
            "from itsdangerous import Signer; Signer('k').unsign('value.bad')",
            "from itsdangerous import Signer, TimestampSigner\n"
            "TimestampSigner('k').unsign(Signer('k').sign('x'))",
            "from itsdangerous import URLSafeTimedSerializer as S\n"
            "S('k').loads(S('k').dumps('x'), max_age=-1)",
            "from itsdangerous import Signer; Signer('k', key_derivation='bogus').sign('x')",
            "from itsdangerous import URLSafeSerializer; URLSafeSerializer('k').loads('e30.bad')",
        ),
    ),
    Package(
        "jinja2",
        "3.1.4",
        "jinja2",
        ("pytest", "markupsafe"),
        (
            "import jinja2; jinja2.Template('{% if %}x{% endif %}')",
            "import jinja2; jinja2.Template('{{ x | nosuchfilter }}')",
            "import jinja2; jinja2.Environment(loader=jinja2.DictLoader({})).get_template('a.html')",
            "import jinja2; jinja2.Template('{% endfor %}')",
            "import jinja2\n"
            "jinja2.Environment(undefined=jinja2.StrictUndefined).from_string('{{ x + 1 }}').render()",
            "import jinja2; jinja2.Template('{{ x }').render()",
        ),
    ),
    Package(
        "pyparsing",
        "3.2.0",
        "pyparsing",
        # tox.ini: pytest, matplotlib, and the `diagrams` extra (railroad-diagrams, jinja2).
        ("pytest", "matplotlib", "railroad-diagrams", "jinja2"),
        (
            "import pyparsing as pp; pp.Word(pp.nums).parse_string('abc')",
            "import pyparsing as pp; pp.Literal('a').parse_string('b')",
            "import pyparsing as pp; pp.Keyword('if').parse_string('iffy')",
            "import pyparsing as pp; (pp.Word(pp.alphas) + pp.StringEnd()).parse_string('ab cd')",
            "import pyparsing as pp; pp.Word('')",
            "import pyparsing as pp; pp.Regex('(').parse_string('x')",
            "import pyparsing as pp; pp.Regex('')",
            "import pyparsing as pp; pp.one_of(123)",
        ),
        suite_files=("tests", "examples"),
    ),
    Package(
        "python-dateutil",
        "2.9.0.post0",
        "dateutil",
        # requirements-dev.txt; pytest as of the release (a newer one turns a deprecation
        # into an error under the suite's `filterwarnings = error`).
        ("pytest<8.4", "pytest-cov", "freezegun", "hypothesis", "six"),
        (
            "from dateutil.parser import parse; parse('not a date')",
            "from dateutil.parser import isoparse; isoparse('20')",
            "from dateutil.relativedelta import relativedelta; relativedelta(months=1.5)",
            "from dateutil.rrule import rrulestr; rrulestr('FREQ=DAILY;BOGUS=1')",
            "from dateutil.tz import tzstr; tzstr('5X')",
            "from dateutil.parser import parse; parse('')",
            "from dateutil.easter import easter; easter(2024, method=9)",
        ),
    ),
)
PYTHONS = {
    "3.11": "/root/.pyenv/versions/3.11*/bin/python",
    "3.9": "/root/.pyenv/versions/3.9*/bin/python",
}
TOOLS = ("black==24.10.0", "flake8==7.1.1")
"""The linters and formatters errcat's environment lacks, pinned, in a cached environment."""
CONFIG_FILES = ("pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", "conftest.py")
PROBE = REPO / "tests" / "authoring" / "codegen_probe.py"
RUNNER = Path(__file__).with_name("adopt_errors.py")
_SUMMARY = re.compile(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?|warnings?)")
_FINDING = re.compile(r"^(?P<path>[^:\n]+\.py):(?P<line>\d+):(?P<column>\d+): (?P<why>[^;\n]+)")
_LINT = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):\d+: (?P<code>[A-Z]+[0-9]+)")
_SHORTEST_REASON = 12
"""A reason is cut to keep its line within the package's line length, but not below this."""


@dataclass(frozen=True)
class Tool:
    """A linter or formatter as the package configures it."""

    name: str
    """`ruff`, `flake8`, `black` or `ruff format`."""
    configured: str | None
    """Where the package names it, or None: not configured, run with defaults."""


@dataclass(frozen=True)
class RealError:
    """One wrong call: what it raised before and after adoption, and `explain`'s answer."""

    call: str
    before: str | None
    """`str(exc)` from the released package (None: it raised nothing)."""
    after: str | None
    raised: str | None
    """The adopted package's class, by qualified name."""
    entry: str | None
    """The entry the raise belongs to; None when it is not catalogued."""
    why: str
    """How `entry` was found, or why there is none."""
    rank: int | None
    """1-based position of `entry` among explain's matches for the message alone; None: not
    among them."""
    top: str | None
    """explain's first match (id and name), shown when it is not `entry`."""
    printed_rank: int | None
    """The same for what the traceback prints last (`module.Class: message`), the line a
    user copies."""


@dataclass
class Outcome:
    package: str
    steps: dict[str, float] = field(default_factory=dict)
    """errcat command → wall seconds."""
    exempted: int = 0
    marked: dict[str, set[int]] = field(default_factory=dict)
    """The lines the person's step put an ignore comment on, by path."""
    entries: int = 0
    sites: Counter[str] = field(default_factory=Counter)
    """Raise sites of the adopted package by kind: catalogued, exempted, re-raise, other."""
    linter: Tool | None = None
    lint: tuple[list[tuple[str, int, str]], list[tuple[str, int, str]]] = ([], [])
    """Findings `(path, line, rule)`, released copy and adopted copy."""
    generated_lint: int = 0
    """Findings in the generated module when its file-level exemption is disregarded."""
    formatter: Tool | None = None
    unformatted: tuple[int, int] = (0, 0)
    """Files the formatter would change, released copy and adopted copy."""
    failed: list[str] = field(default_factory=list)
    """The errcat commands that ended with findings, and the findings."""
    check_after_format: str = ""
    suites: dict[str, tuple[dict[str, int], dict[str, int]]] = field(default_factory=dict)
    """Python version → (counts before, counts after)."""
    probes: dict[str, tuple[int, list[str]]] = field(default_factory=dict)
    """Python version → (classes probed, failures)."""
    errors: dict[str, list[RealError]] = field(default_factory=dict)
    """Python version → the wrong calls."""

    @property
    def lint_on_marked(self) -> int:
        """The adopted copy's findings on the lines the person's step wrote an ignore on
        (the comment made a line too long): the person's, not errcat's, output."""
        return sum(line in self.marked.get(path, ()) for path, line, _ in self.lint[1])

    @property
    def ok(self) -> bool:
        return (
            not self.failed
            and all(b == a for b, a in self.suites.values())
            and len(self.lint[1]) - self.lint_on_marked <= len(self.lint[0])
            and self.check_after_format.startswith("errcat check ok")
            and all(not failures for _, failures in self.probes.values())
            and all(e.before == e.after for found in self.errors.values() for e in found)
        )


def run(
    command: list[str], cwd: Path, timeout: int = 1800, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=timeout, input=stdin
    )


def sdist(package: Package) -> Path:
    """The pinned source distribution, downloaded once."""
    folder = CACHE / "sdists"
    folder.mkdir(parents=True, exist_ok=True)
    pattern = f"{package.name}-{package.version}.tar.gz"
    found = sorted(folder.glob(pattern))
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
        found = sorted(folder.glob(pattern))
    return found[0]


def unpack(archive: Path, into: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    (root,) = into.iterdir()
    return root


def virtualenv(venv: Path, python: str, requirements: tuple[str, ...]) -> Path:
    """A cached virtual environment with `requirements` installed."""
    marker = venv / ".ready"
    if not marker.exists():
        shutil.rmtree(venv, ignore_errors=True)
        if run([python, "-m", "venv", str(venv)], cwd=CACHE).returncode != 0:
            raise SystemExit(f"cannot create an environment with {python}")
        done = run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *requirements],
            cwd=CACHE,
        )
        if done.returncode != 0:
            raise SystemExit(f"cannot install {requirements}: {done.stderr}")
        marker.touch()
    return venv


def environment(package: Package, version: str, python: str) -> Path:
    """The suite's cached environment: its requirements, not the package itself."""
    venv = CACHE / "venvs" / f"{package.name}-{package.version}-py{version}"
    return virtualenv(venv, python, package.test_requirements)


def install(venv: Path, project: Path, workdir: Path) -> None:
    python = str(venv / "bin" / "python")
    done = run(
        [python, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", str(project)],
        cwd=workdir,
    )
    if done.returncode != 0:
        raise SystemExit(f"cannot install {project}: {done.stderr[-2000:]}")


def suite(package: Package, venv: Path, project: Path, workdir: Path) -> dict[str, int]:
    """Run the installed package's tests away from its sources."""
    tests = workdir / "suite"
    shutil.rmtree(tests, ignore_errors=True)
    for folder in package.suite_files:
        shutil.copytree(project / folder, tests / folder)
    for name in CONFIG_FILES:
        if (project / name).is_file():
            shutil.copy2(project / name, tests / name)
    python = str(venv / "bin" / "python")
    done = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=tests)
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    counts = {kind.rstrip("s"): int(n) for n, kind in _SUMMARY.findall(tail)}
    counts.pop("warning", None)
    if not counts:
        raise SystemExit(f"no test summary for {project}: {done.stdout[-2000:]}{done.stderr}")
    return counts


def timed(
    outcome: Outcome, label: str, command: list[str], cwd: Path, *, findings_ok: bool = False
) -> str:
    """Run an errcat command and time it; it must succeed, or with `findings_ok` at least run
    (exit 1: findings, kept in `outcome.failed` and reported, and the bench goes on)."""
    start = time.perf_counter()
    done = run([str(ERRCAT), *command], cwd=cwd)
    outcome.steps[label] = time.perf_counter() - start
    if done.returncode == 1 and findings_ok:
        errors = [line for line in done.stdout.splitlines() if ": warning: " not in line]
        outcome.failed.append(f"errcat {' '.join(command)}: " + "\n      ".join(errors[-20:]))
        return done.stderr
    if done.returncode != 0:
        raise SystemExit(
            f"errcat {' '.join(command)} failed in {cwd} ({done.returncode}):\n"
            f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        )
    return done.stderr


def line_length(project: Path) -> int:
    """The longest line the package's linter allows: its ruff, black or flake8 setting, else
    ruff's and black's default."""
    pyproject, ini, _hooks = _configuration(project)
    tool = pyproject.get("tool")
    tool = tool if isinstance(tool, dict) else {}
    for name in ("ruff", "black"):
        table = tool.get(name)
        if isinstance(table, dict):
            value = table.get("line-length", table.get("line_length"))
            if isinstance(value, int):
                return value
    if ini.has_option("flake8", "max-line-length"):
        return int(ini.get("flake8", "max-line-length"))
    return 88


def exempt(project: Path, report: str) -> dict[str, set[int]]:
    """The person's step: an ignore comment, with `new`'s reason, on each undrafted raise; the
    reason is cut short where the line would pass the package's line length, as a person
    would write it. The lines marked, by path relative to the project."""
    limit = line_length(project)
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
            room = max(limit - len(body) - len("  # errcat: ignore[]"), _SHORTEST_REASON)
            if len(reason) > room:
                cut = reason[:room]
                reason = cut.rsplit(" ", 1)[0] if " " in cut else cut
            text[number - 1] = f"{body}  # errcat: ignore[{reason.strip()}]{ending}"
        source = "".join(text)
        ast.parse(source)  # a comment after a raise line can only end that line
        path.write_text(source, encoding="utf-8")
    return {path.relative_to(project).as_posix(): set(lines) for path, lines in marks.items()}


def ignore_lines(project: Path) -> dict[str, set[int]]:
    """The lines holding an errcat ignore comment (the released package has none), by path."""
    found: dict[str, set[int]] = {}
    for path in sorted(project.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "errcat: ignore[" in text:
            lines = {n for n, line in enumerate(text.splitlines(), 1) if "errcat: ignore[" in line}
            found[path.relative_to(project).as_posix()] = lines
    return found


def adopt(project: Path, outcome: Outcome) -> None:
    timed(outcome, "init", ["init"], project)
    timed(outcome, "scan (cold)", ["scan", "--no-cache"], project)
    report = timed(outcome, "new", ["new"], project)
    outcome.marked = exempt(project, report)
    outcome.exempted = sum(len(lines) for lines in outcome.marked.values())
    timed(outcome, "codegen", ["codegen"], project)
    timed(outcome, "migrate", ["migrate"], project)
    # migrate moved lines (its imports): where the comments stand now, for the lint counts.
    outcome.marked = ignore_lines(project)
    timed(outcome, "check", ["check"], project, findings_ok=True)
    timed(outcome, "check (cached scan)", ["check"], project, findings_ok=True)
    outcome.entries = len(load_catalog(load_config(project).catalog)[0])


def _configuration(project: Path) -> tuple[dict[str, object], configparser.ConfigParser, str]:
    """pyproject.toml's data, setup.cfg, tox.ini and .flake8 read together, and the
    pre-commit configuration's text."""
    try:
        pyproject = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        pyproject = {}
    ini = configparser.ConfigParser(interpolation=None)
    for name in ("setup.cfg", "tox.ini", ".flake8"):
        with contextlib.suppress(configparser.Error):
            ini.read(project / name, encoding="utf-8")
    hooks = project / ".pre-commit-config.yaml"
    return pyproject, ini, hooks.read_text(encoding="utf-8") if hooks.is_file() else ""


def linter(project: Path) -> Tool:
    """The package's linter: ruff where it configures ruff, else flake8 where it configures
    flake8, else ruff with its defaults."""
    pyproject, ini, hooks = _configuration(project)
    tool = pyproject.get("tool")
    if isinstance(tool, dict) and "ruff" in tool:
        return Tool("ruff", "pyproject.toml [tool.ruff]")
    for name in ("ruff.toml", ".ruff.toml"):
        if (project / name).is_file():
            return Tool("ruff", name)
    if re.search(r"id:\s*ruff\b(?!-format)", hooks):
        return Tool("ruff", ".pre-commit-config.yaml")
    if ini.has_section("flake8") or re.search(r"id:\s*flake8\b", hooks):
        return Tool("flake8", "[flake8]" if ini.has_section("flake8") else "pre-commit")
    return Tool("ruff", None)


def formatter(project: Path) -> Tool:
    """The package's formatter: black or ruff format as configured, else ruff format (with
    the package's ruff settings, if any)."""
    pyproject, _ini, hooks = _configuration(project)
    tool = pyproject.get("tool")
    tool = tool if isinstance(tool, dict) else {}
    if "black" in tool:
        return Tool("black", "pyproject.toml [tool.black]")
    if re.search(r"id:\s*black\b", hooks):
        return Tool("black", ".pre-commit-config.yaml")
    ruff = tool.get("ruff")
    if isinstance(ruff, dict) and "format" in ruff:
        return Tool("ruff format", "pyproject.toml [tool.ruff.format]")
    if re.search(r"id:\s*ruff-format\b", hooks):
        return Tool("ruff format", ".pre-commit-config.yaml")
    return Tool("ruff format", None)


def tools() -> Path:
    """The cached environment holding black and flake8."""
    return virtualenv(CACHE / "tools", sys.executable, TOOLS)


def lint(tool: Tool, project: Path, *only: str) -> list[tuple[str, int, str]]:
    """The linter's findings in `project` (or in the files `only`), `(path, line, rule)`."""
    if tool.name == "flake8":
        command = [str(tools() / "bin" / "flake8"), "--exit-zero", *(only or ["."])]
    else:
        # `--no-fix`: a package may configure `fix = true`, and this must only count.
        command = [str(ERRCAT.with_name("ruff")), "check", "--no-fix", "--exit-zero"]
        command += ["--output-format", "concise"]
        command += [*(["--isolated"] if tool.configured is None else []), *(only or ["."])]
    done = run(command, cwd=project)
    if done.returncode != 0:
        raise SystemExit(f"{tool.name} failed in {project}: {done.stderr[-2000:]}")
    found = map(_LINT.match, done.stdout.splitlines())
    return [(Path(m["path"]).as_posix(), int(m["line"]), m["code"]) for m in found if m]


def generated_findings(tool: Tool, project: Path) -> int:
    """The linter's findings in the generated module with any file-level `noqa` disregarded:
    how far codegen's output is from the package's rules."""
    module = load_config(project).generated.relative_to(project).as_posix()
    if tool.name == "flake8":
        return len(lint(tool, project, "--disable-noqa", module))
    return len(lint(tool, project, "--ignore-noqa", module))


def format_command(tool: Tool, check: bool) -> list[str]:
    if tool.name == "black":
        # Checking, black names each file it would change; writing, it is kept quiet.
        return [str(tools() / "bin" / "black"), *(["--check"] if check else ["-q"]), "."]
    return [str(ERRCAT.with_name("ruff")), "format", *(["--check"] if check else []), "."]


def unformatted(tool: Tool, project: Path) -> int:
    """How many files the formatter would change."""
    done = run(format_command(tool, check=True), cwd=project)
    if tool.name == "black":
        return done.stderr.count("would reformat ")
    return sum(line.startswith("Would reformat") for line in done.stdout.splitlines())


def scan_sites(project: Path) -> list[dict[str, object]]:
    done = run([str(ERRCAT), "scan", "--json"], cwd=project)
    if done.returncode not in (0, 1):
        raise SystemExit(f"errcat scan failed in {project}: {done.stderr[-2000:]}")
    sites: list[dict[str, object]] = json.loads(done.stdout)["sites"]
    return sites


def site_kinds(sites: list[dict[str, object]]) -> Counter[str]:
    kinds: Counter[str] = Counter()
    for site in sites:
        if site["reraise"]:
            kinds["re-raise"] += 1
        elif site["ignored"] is not None:
            kinds["exempted"] += 1
        elif site["entry"] is not None:
            kinds["catalogued"] += 1
        else:
            kinds["other"] += 1
    return kinds


def raise_calls(package: Package, venv: Path, workdir: Path) -> list[dict[str, object]]:
    done = run(
        [str(venv / "bin" / "python"), str(RUNNER), package.import_name],
        cwd=workdir,
        stdin=json.dumps(list(package.errors)),
        timeout=300,
    )
    if done.returncode != 0:
        raise SystemExit(f"the wrong calls failed to run: {done.stderr[-2000:]}")
    found: list[dict[str, object]] = json.loads(done.stdout)
    return found


def entry_of(seen: dict[str, object], sites: list[dict[str, object]]) -> tuple[str | None, str]:
    """The entry a raised error belongs to, and how that is known: the generated class's id,
    else the catalogued raise site at the innermost frame of the package that has one. None
    where the traceback holds no raise of the error itself (a package may re-raise it with
    its traceback cut, `raise exc.with_traceback(None)`): `explain_rank` then takes the first
    entry of its class."""
    if isinstance(seen["id"], str):
        return seen["id"], "its class's id"
    frames = seen["frames"]
    assert isinstance(frames, list)
    for path, line in frames:
        for site in sites:
            shown = str(site["path"])
            if site["line"] == line and (shown == path or shown.endswith("/" + path)):
                if site["reraise"] or site["qualified_name"] is None:
                    continue  # a re-raise, or a raise of a value: not where it was built
                if site["ignored"] is not None:
                    return None, f"its raise at {shown}:{line} is exempted"
                if site["entry"] is None:
                    return None, f"its raise at {shown}:{line} is not catalogued"
                return str(site["entry"]), f"the raise at {shown}:{line}"
    return None, "its traceback holds no raise that built it (re-raised, or cut short)"


def explain_rank(
    project: Path, text: str, entry: str | None, raised: str | None
) -> tuple[int | None, str | None]:
    done = run([str(ERRCAT), "explain", "--json", "--", text], cwd=project)
    try:
        matches = json.loads(done.stdout).get("matches", [])
    except json.JSONDecodeError:
        matches = []
    ids = [match["id"] for match in matches]
    top = f"{matches[0]['id']} {matches[0]['name']}" if matches else None
    if entry is None:
        # Only the class is known: the first entry of that class explain gives.
        ranks = [n for n, match in enumerate(matches, 1) if match["exception"] == raised]
        return (ranks[0] if ranks else None), top
    return (ids.index(entry) + 1 if entry in ids else None), top


def real_errors(
    before: list[dict[str, object]],
    after: list[dict[str, object]],
    sites: list[dict[str, object]],
    project: Path,
) -> list[RealError]:
    found = []
    for old, new in zip(before, after, strict=True):
        entry, why = entry_of(new, sites)
        text = new["text"]
        raised = None if new["raised"] is None else str(new["raised"])
        rank, top = (
            (None, None) if text is None else explain_rank(project, str(text), entry, raised)
        )
        printed = new.get("printed")
        printed_rank = (
            None if printed is None else explain_rank(project, str(printed), entry, raised)[0]
        )
        if entry is None and rank is not None:
            why += f"; ranked: the first entry of {raised}"
        found.append(
            RealError(
                str(new["call"]),
                None if old["text"] is None else str(old["text"]),
                None if text is None else str(text),
                None if new["raised"] is None else str(new["raised"]),
                entry,
                why,
                rank,
                top,
                printed_rank,
            )
        )
    return found


def probe(venv: Path, package: Package, workdir: Path) -> tuple[int, list[str]]:
    """Every generated class of the installed, adopted package through the caller probe."""
    empty = workdir / "probe"
    empty.mkdir(exist_ok=True)
    module = f"{package.import_name}._errcat_errors"
    done = run([str(venv / "bin" / "python"), str(PROBE), str(empty), module], cwd=empty)
    if done.returncode != 0:
        return 0, [f"the probe failed: {done.stderr[-2000:]}"]
    result = json.loads(done.stdout)
    return len(result["classes"]), list(result["failures"])


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
            adopt(adopted, outcome)
            outcome.linter = linter(original)
            outcome.lint = (lint(outcome.linter, original), lint(outcome.linter, adopted))
            outcome.generated_lint = generated_findings(outcome.linter, adopted)
            outcome.formatter = formatter(original)
            outcome.unformatted = (
                unformatted(outcome.formatter, original),
                unformatted(outcome.formatter, adopted),
            )
            run(format_command(outcome.formatter, check=False), cwd=adopted)
            done = run([str(ERRCAT), "check"], cwd=adopted)
            outcome.check_after_format = (done.stdout + done.stderr).strip().splitlines()[-1]
            if done.returncode != 0:
                outcome.check_after_format += "\n" + (done.stdout + done.stderr)[-3000:]
            sites = scan_sites(adopted)
            outcome.sites = site_kinds(sites)
            for version, python in pythons.items():
                venv = environment(package, version, python)
                install(venv, original, work)
                before = suite(package, venv, original, work)
                errors_before = raise_calls(package, venv, work)
                install(venv, adopted, work)
                after = suite(package, venv, adopted, work)
                errors_after = raise_calls(package, venv, work)
                outcome.suites[version] = (before, after)
                outcome.probes[version] = probe(venv, package, work)
                outcome.errors[version] = real_errors(errors_before, errors_after, sites, adopted)
        outcomes.append(outcome)
        report(outcome)
    summary(outcomes)
    return 0 if all(outcome.ok for outcome in outcomes) else 1


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def report(outcome: Outcome) -> None:
    kinds = outcome.sites
    raised = kinds["catalogued"] + kinds["exempted"] + kinds["other"]
    print(
        f"\n== {outcome.package}: {outcome.entries} entries; {raised} raise sites (not counting "
        f"{kinds['re-raise']} re-raises): {kinds['catalogued']} catalogued "
        f"({_percent(kinds['catalogued'], raised)}), {outcome.exempted} ignored by hand "
        f"({_percent(outcome.exempted, raised)}), {kinds['other']} other"
    )
    for label, seconds in outcome.steps.items():
        print(f"   errcat {label:<20} {seconds:7.2f} s")
    for failure in outcome.failed:
        print(f"   FAILED {failure}")
    scan = outcome.steps.get("scan (cold)")
    if scan:
        print(f"   migrate / cold scan: {outcome.steps['migrate'] / scan:.2f}")
    if outcome.linter is not None:
        tool = outcome.linter
        where = tool.configured or "not configured: ruff's defaults"
        before = Counter(code for _, _, code in outcome.lint[0])
        after = Counter(code for _, _, code in outcome.lint[1])
        more = {code: after[code] - before[code] for code in after if after[code] > before[code]}
        marked = outcome.lint_on_marked
        print(
            f"   linter {tool.name} ({where}): {sum(before.values())} findings before, "
            f"{sum(after.values())} after ({marked} on the hand-written ignore lines)"
            + (f"; more: {dict(sorted(more.items()))}" if more else "")
            + f"; the generated module alone, any noqa disregarded: {outcome.generated_lint}"
        )
    if outcome.formatter is not None:
        tool = outcome.formatter
        where = tool.configured or "not configured: ruff format with the package's settings"
        print(
            f"   formatter {tool.name} ({where}): would change {outcome.unformatted[0]} files "
            f"before, {outcome.unformatted[1]} after adoption; after running it: "
            f"{outcome.check_after_format}"
        )
    for version, (counts, again) in outcome.suites.items():
        equal = "equal" if counts == again else "DIFFERENT"
        print(f"   Python {version}: before {counts}  after {again}  ({equal})")
    for version, (classes, failures) in outcome.probes.items():
        print(f"   probe on Python {version}: {classes} classes, {len(failures)} failures")
        for failure in failures[:10]:
            print(f"      {failure}")
    for version, found in outcome.errors.items():
        ranked = sum(error.rank == 1 for error in found)
        printed = sum(error.printed_rank == 1 for error in found)
        kept = sum(error.before == error.after for error in found)
        print(
            f"   real errors on Python {version}: {len(found)} calls, {kept} with the same text "
            f"before and after, {ranked} at explain rank 1 by the message alone, {printed} by "
            "the traceback's last line"
        )
        if version != next(iter(outcome.errors)):
            continue
        for error in found:
            rank = "not found" if error.rank is None else f"rank {error.rank}"
            line = "not found" if error.printed_rank is None else f"rank {error.printed_rank}"
            rank += f" (the traceback's last line: {line})"
            print(f"      {error.call!r}")
            print(f"         raised {error.raised}: {error.after!r}")
            if error.before != error.after:
                print(f"         BEFORE ADOPTION: {error.before!r}")
            print(f"         entry {error.entry} ({error.why}); explain: {rank}", end="")
            print(f", top {error.top}" if error.rank != 1 and error.top else "")


def summary(outcomes: list[Outcome]) -> None:
    print(
        "\n| package | sites | catalogued | ignored by hand | lint before → after | "
        "check after format | suites equal | probe failures | explain rank 1: message | "
        "explain rank 1: traceback line |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for o in outcomes:
        raised = o.sites["catalogued"] + o.sites["exempted"] + o.sites["other"]
        first = next(iter(o.errors.values()), [])
        print(
            f"| {o.package} | {raised} | {o.sites['catalogued']} "
            f"({_percent(o.sites['catalogued'], raised)}) | {o.exempted} "
            f"({_percent(o.exempted, raised)}) | {len(o.lint[0])} → {len(o.lint[1])}"
            f"{f' ({o.lint_on_marked} on ignore lines)' if o.lint_on_marked else ''} | "
            f"{'green' if o.check_after_format.startswith('errcat check ok') else 'FAILED'} | "
            f"{'yes' if all(b == a for b, a in o.suites.values()) else 'NO'} | "
            f"{sum(len(f) for _, f in o.probes.values())} | "
            f"{sum(e.rank == 1 for e in first)}/{len(first)} | "
            f"{sum(e.printed_rank == 1 for e in first)}/{len(first)} |"
        )


if __name__ == "__main__":
    raise SystemExit(main())
