"""The built wheel, installed (not editable) into a fresh virtual environment without torch or
MLX, runs errcat end to end on a small project of its own: scan, new, codegen, migrate, check
and build. Nothing of this checkout is on that environment's path, so a template, schema or path
that only exists in the checkout fails here.

The wheel is built from a copy of the checkout's sources (without build outputs or the virtual
environment), so the in-tree build neither writes into the checkout nor picks up stale files from
its build/ folder. pip reads the machine's configuration and cache, as `make setup` does, and
installs the base dependencies under the project's constraints file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest
import yaml
from helpers import NOT_SOURCES

REPO = Path(__file__).resolve().parents[2]

# Generous: a cold pip cache downloads libcst, mkdocs-material and the rest.
WHEEL_TIMEOUT_S = 300
INSTALL_TIMEOUT_S = 600
COMMAND_TIMEOUT_S = 300

pytestmark = [pytest.mark.slow, pytest.mark.timeout(WHEEL_TIMEOUT_S + INSTALL_TIMEOUT_S + 300)]


# Packages the tool itself must never import.
FOREIGN_PACKAGES = frozenset({"runtime", "torch", "mlx"})

PACKAGE_DATA = (
    "catalog/pages/api_schema.json",
    "catalog/errors/schema.json",
    "catalog/py.typed",
)


@dataclass(frozen=True)
class Installed:
    """A virtual environment holding the installed wheel."""

    venv: Path
    python: Path
    errcat: Path
    """The console script pip wrote for `errcat = errcat:run`."""


def _run(
    command: Sequence[str | Path],
    *,
    cwd: Path,
    timeout: float,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _explain(result: subprocess.CompletedProcess[str]) -> str:
    """The command, its exit status and both streams, for an assertion message."""
    command = " ".join(str(part) for part in result.args)
    return (
        f"`{command}` exited {result.returncode}\n"
        f"--- stdout\n{result.stdout[-6000:]}\n--- stderr\n{result.stderr[-6000:]}"
    )


def _ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, _explain(result)
    return result


def _split_import_trace(stderr: str) -> tuple[set[str], str]:
    """The modules named by `-X importtime` lines, and stderr without those lines."""
    modules: set[str] = set()
    rest: list[str] = []
    for line in stderr.splitlines(keepends=True):
        if line.startswith("import time:"):
            name = line.rsplit("|", 1)[-1].strip()
            if name != "package":  # the header row
                modules.add(name)
        else:
            rest.append(line)
    return modules, "".join(rest)


def _isolated_env(venv: Path) -> dict[str, str]:
    """The environment of a shell that activated `venv`: nothing points back at this checkout."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"}
    }
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built by pip (isolated build) from a clean copy of the sources."""
    work = tmp_path_factory.mktemp("wheel")
    sources = work / "sources"
    shutil.copytree(REPO, sources, ignore=NOT_SOURCES, symlinks=True)
    out = work / "dist"
    _ok(
        _run(
            [
                *(sys.executable, "-m", "pip", "wheel", "--no-deps"),
                *("--disable-pip-version-check", "--wheel-dir", out, sources),
            ],
            cwd=work,
            timeout=WHEEL_TIMEOUT_S,
        )
    )
    wheels = sorted(out.glob("errcat-*.whl"))
    assert len(wheels) == 1, f"expected one errcat wheel in {out}, found {wheels}"
    return wheels[0]


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """A fresh virtual environment with the wheel and its base dependencies only."""
    venv = tmp_path_factory.mktemp("venv") / "env"
    _ok(_run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=venv.parent, timeout=120))
    python = venv / "bin" / "python"
    # The checkout's pip installs into the new interpreter (`--python`): no ensurepip round.
    _ok(
        _run(
            [
                *(sys.executable, "-m", "pip", "--python", python, "install"),
                *("--disable-pip-version-check", "--no-input"),
                *("--constraint", REPO / "constraints.txt", wheel),
            ],
            cwd=venv.parent,
            timeout=INSTALL_TIMEOUT_S,
        )
    )
    errcat = venv / "bin" / "errcat"
    assert errcat.is_file(), f"pip wrote no errcat script into {errcat.parent}"
    return Installed(venv=venv, python=python, errcat=errcat)


def _write_project(root: Path) -> None:
    """A package with three raw raises and a bare mkdocs.yml (no errcat plugin, no theme)."""
    files = {
        "pyproject.toml": """\
            [project]
            name = "gadgets"
            version = "0.1.0"

            [tool.errcat]
            package = "gadgets"
            catalog = "knowledge"
            generated = "gadgets/errors.py"
            """,
        "gadgets/__init__.py": "",
        "gadgets/core.py": """\
            def spin(name: str, speed: int) -> None:
                if speed < 0:
                    raise ValueError(f"gadget {name} cannot spin backwards")
                if speed > 10:
                    raise ValueError(f"gadget {name} spins too fast: {speed}")


            def stop(name: str) -> None:
                raise RuntimeError(f"gadget {name} is already stopped")
            """,
        "mkdocs.yml": """\
            site_name: Gadgets
            site_url: http://127.0.0.1:8000/
            """,
    }
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def test_the_wheel_carries_the_templates_and_schemas(wheel: Path) -> None:
    """Every jinja template and both JSON Schemas travel in the wheel as package data."""
    templates = sorted(
        path.relative_to(REPO).as_posix()
        for path in (REPO / "catalog" / "pages" / "templates").iterdir()
        if path.is_file()
    )
    assert templates, "the checkout holds no templates under catalog/pages/templates"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    missing = [name for name in (*templates, *PACKAGE_DATA) if name not in names]
    assert not missing, f"{wheel.name} lacks {missing}; add them to [tool.setuptools.package-data]"


def test_the_wheel_needs_torch_and_mlx_only_for_the_runtime_extra(wheel: Path) -> None:
    """The wheel's metadata asks for torch and MLX only under the `runtime` extra, and its entry
    points name the CLI and the MkDocs plugin."""
    with zipfile.ZipFile(wheel) as archive:
        dist_info = next(n.split("/")[0] for n in archive.namelist() if ".dist-info/" in n)
        metadata = archive.read(f"{dist_info}/METADATA").decode("utf-8")
        entry_points = archive.read(f"{dist_info}/entry_points.txt").decode("utf-8")
    requires = [
        line.removeprefix("Requires-Dist:").strip()
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:")
    ]
    heavy = [r for r in requires if r.lower().startswith(("torch", "mlx"))]
    assert heavy, f"no torch or mlx requirement at all in METADATA: {requires}"
    unconditional = [r for r in heavy if 'extra == "runtime"' not in r]
    assert not unconditional, f"base requirements of the tool include {unconditional}"
    assert "errcat = errcat:run" in entry_points, entry_points
    assert "errcat = errcat.mkdocs_plugin:ErrcatPlugin" in entry_points, entry_points


def test_the_installed_tool_is_imported_from_the_virtual_environment(
    installed: Installed, tmp_path: Path
) -> None:
    """catalog and extractor load from the new environment's site-packages, and torch is not
    installed there."""
    probe = textwrap.dedent(
        """\
        import importlib.util, json, sysconfig
        import catalog, extractor
        print(json.dumps({
            "purelib": sysconfig.get_paths()["purelib"],
            "catalog": catalog.__file__,
            "extractor": extractor.__file__,
            "torch": importlib.util.find_spec("torch") is not None,
        }))
        """
    )
    result = _ok(
        _run(
            [installed.python, "-c", probe],
            cwd=tmp_path,
            timeout=COMMAND_TIMEOUT_S,
            env=_isolated_env(installed.venv),
        )
    )
    found = json.loads(result.stdout)
    purelib = Path(found["purelib"]).resolve()
    assert purelib.is_relative_to(installed.venv.resolve()), found
    for module in ("catalog", "extractor"):
        location = Path(found[module]).resolve()
        assert location.is_relative_to(purelib), f"{module} loaded from {location}, not {purelib}"
        assert not location.is_relative_to(REPO), f"{module} loaded from the checkout: {location}"
    assert found["torch"] is False, "torch is importable in an environment meant to lack it"


def test_the_installed_wheel_builds_a_site_for_a_small_project(
    installed: Installed, tmp_path: Path
) -> None:
    """From raw raises to a published site with the installed tool alone: scan finds the three
    raises, new drafts three entries, codegen and migrate make them typed, check passes with
    drafts, and build writes the home page, one page and one JSON file per entry, the index and
    the schema."""
    project = tmp_path / "gadgets"
    _write_project(project)
    env = _isolated_env(installed.venv)

    imported: dict[str, set[str]] = {}

    def errcat(*arguments: str | Path) -> subprocess.CompletedProcess[str]:
        # -X importtime lists every module the command imports (on stderr); it is split off so
        # that failure messages show the command's own output.
        traced = _run(
            [installed.python, "-X", "importtime", installed.errcat, *arguments],
            cwd=project,
            timeout=COMMAND_TIMEOUT_S,
            env=env,
        )
        modules, stderr = _split_import_trace(traced.stderr)
        imported.setdefault(str(arguments[0]), set()).update(modules)
        return _ok(
            subprocess.CompletedProcess(traced.args, traced.returncode, traced.stdout, stderr)
        )

    before = json.loads(errcat("scan", "--json").stdout)
    assert [(s["line"], s["exception"]) for s in before["sites"]] == [
        (3, "ValueError"),
        (5, "ValueError"),
        (9, "RuntimeError"),
    ], before

    errcat("new")
    written = sorted((project / "knowledge").glob("*.yaml"))
    assert written, f"errcat new wrote no YAML under {project / 'knowledge'}"
    entries = [
        entry
        for path in written
        for entry in yaml.safe_load(path.read_text(encoding="utf-8"))["errors"]
    ]
    ids = {str(entry["id"]) for entry in entries}
    assert len(ids) == 3, entries
    assert {entry["status"] for entry in entries} == {"draft"}, entries

    errcat("codegen")
    assert (project / "gadgets" / "errors.py").is_file(), "errcat codegen wrote no module"
    errcat("migrate")
    migrated = (project / "gadgets" / "core.py").read_text(encoding="utf-8")
    assert "raise ValueError(" not in migrated, migrated
    assert "raise RuntimeError(" not in migrated, migrated
    after = json.loads(errcat("scan", "--json").stdout)
    assert sorted(site["entry"] for site in after["sites"]) == sorted(ids), after

    errcat("check")

    # The migrated package raises its typed exception with the message rendered.
    raised = _run(
        [installed.python, "-c", "from gadgets.core import stop; stop('g7')"],
        cwd=project,
        timeout=COMMAND_TIMEOUT_S,
        env=env,
    )
    assert raised.returncode == 1, _explain(raised)
    assert "gadgets.errors." in raised.stderr, _explain(raised)
    assert "gadget g7 is already stopped" in raised.stderr, _explain(raised)

    out = tmp_path / "published"
    errcat("build", "--out", out)
    expected = [
        out / "index.html",
        out / "api" / "errors" / "index.json",
        out / "api" / "schema.json",
        *(out / "errors" / entry_id / "index.html" for entry_id in sorted(ids)),
        *(out / "api" / "errors" / f"{entry_id}.json" for entry_id in sorted(ids)),
    ]
    missing = [str(path.relative_to(out)) for path in expected if not path.is_file()]
    assert not missing, f"the built site lacks {missing}"

    rows = json.loads((out / "api" / "errors" / "index.json").read_text(encoding="utf-8"))
    assert {row["id"] for row in rows} == ids, rows
    schema = json.loads((out / "api" / "schema.json").read_text(encoding="utf-8"))
    for entry in entries:
        page = (out / "errors" / str(entry["id"]) / "index.html").read_text(encoding="utf-8")
        assert entry["message"] in page, f"the page of {entry['id']} lacks its message"
        data = json.loads(
            (out / "api" / "errors" / f"{entry['id']}.json").read_text(encoding="utf-8")
        )
        jsonschema.validate(data, schema)
        assert [source["path"] for source in data["sources"]] == ["gadgets/core.py"], data

    # The tool must not lean on this repository's sample `runtime` package, which the wheel
    # leaves out (another project may have a package of that name), nor on torch or MLX.
    assert "catalog.publish.build" in imported["build"], "-X importtime listed no modules for build"
    leaning = {
        command: sorted(m for m in modules if m.split(".")[0] in FOREIGN_PACKAGES)
        for command, modules in imported.items()
    }
    assert not any(leaning.values()), f"errcat commands imported {leaning}"
