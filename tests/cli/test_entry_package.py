"""The `errcat` entry package keeps errcat's own `catalog` and `extractor` in use inside a project
that has folders of those names (Python puts the current folder first on `sys.path` for
`python -m` and `python -c`, so those folders would otherwise be imported instead)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

import errcat

HOME = Path(errcat.__file__).resolve().parent.parent
"""The folder holding errcat's packages: errcat/, catalog/ and extractor/ side by side."""

PYTHON = sys.executable
SCRIPT = Path(sysconfig.get_path("scripts")) / "errcat"

# What the project's own folders hold: importing one of them instead of errcat's shows at once.
SHADOW = "raise SystemExit('the project folder was imported instead of errcat: ' + __file__)\n"


def _project(root: Path, *, regular: bool) -> Path:
    """A project with `catalog/` and `extractor/` folders of its own and a package `app`.

    `regular`: the folders are packages with `__init__.py`; otherwise namespace folders, whose
    modules (`catalog/cli.py`, `extractor/scan.py`) share names with errcat's.
    """
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "app"\n', encoding="utf-8")
    (root / "app").mkdir()
    (root / "app" / "__init__.py").write_text("", encoding="utf-8")
    for name, module in (("catalog", "cli.py"), ("extractor", "scan.py")):
        (root / name).mkdir()
        (root / name / module).write_text(SHADOW, encoding="utf-8")
        if regular:
            (root / name / "__init__.py").write_text(SHADOW, encoding="utf-8")
    return root


@pytest.fixture(params=["namespace", "regular"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return _project(tmp_path / "project", regular=request.param == "regular")


def _run(project: Path, *command: str | Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return subprocess.run(
        [str(part) for part in command],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args} exited {done.returncode}:\n{done.stderr}"
    return done.stdout


def test_the_checked_out_modules_sit_beside_errcat() -> None:
    """The premise of the pin: errcat's packages are siblings of the errcat package folder."""
    import catalog
    import extractor

    assert Path(catalog.__file__ or "").resolve() == HOME / "catalog" / "__init__.py"
    assert Path(extractor.__file__ or "").resolve() == HOME / "extractor" / "__init__.py"


def test_python_m_errcat_runs_errcats_own_cli(project: Path) -> None:
    """`python -m errcat --version` prints errcat's version from inside the project."""
    assert _ok(_run(project, PYTHON, "-m", "errcat", "--version")).startswith("errcat ")


def test_the_console_script_runs_errcats_own_cli(project: Path) -> None:
    """The `errcat` console script, run from inside the project."""
    assert SCRIPT.is_file(), f"no console script at {SCRIPT}; reinstall errcat"
    assert _ok(_run(project, SCRIPT, "--version")).startswith("errcat ")


def test_a_command_imports_errcats_submodules(project: Path) -> None:
    """A command's lazy imports (`catalog.cli.commands.init`, `catalog.authoring.codegen`, ...) resolve inside
    errcat's folder too: `errcat init --dry-run` detects the project's package `app`, which the
    project's `catalog/` and `extractor/` compete with only as candidates."""
    out = _ok(_run(project, PYTHON, "-m", "errcat", "init", "--dry-run"))
    assert 'package = "app"' in out


def test_importing_errcat_first_pins_catalog_and_extractor(project: Path) -> None:
    """After `import errcat`, `import catalog` and `import extractor` give errcat's files."""
    probe = "import errcat, catalog, extractor, catalog.cli; print(catalog.__file__); print(extractor.__file__); print(catalog.cli.__file__)"
    lines = _ok(_run(project, PYTHON, "-c", probe)).splitlines()
    assert [Path(line).resolve() for line in lines] == [
        HOME / "catalog" / "__init__.py",
        HOME / "extractor" / "__init__.py",
        HOME / "catalog" / "cli" / "__init__.py",
    ]


def test_a_foreign_catalog_imported_first_is_a_clear_import_error(project: Path) -> None:
    """The project's `catalog` imported before errcat cannot be undone: ImportError naming
    errcat's folder and the other one."""
    # The regular variant's __init__ exits on import, so only the namespace variant gets far.
    if (project / "catalog" / "__init__.py").exists():
        (project / "catalog" / "__init__.py").write_text("", encoding="utf-8")
    done = _run(project, PYTHON, "-c", "import catalog, errcat")
    assert done.returncode == 1
    assert "ImportError" in done.stderr
    assert str(HOME / "catalog") in done.stderr
    assert str(project / "catalog") in done.stderr


def test_the_mkdocs_plugin_loads_by_entry_point_name(project: Path) -> None:
    """MkDocs loads plugins through the `mkdocs.plugins` entry points; `errcat` gives errcat's
    plugin class, with errcat's own `catalog` behind it."""
    probe = textwrap.dedent(
        """\
        from importlib.metadata import entry_points
        plugin = entry_points(group="mkdocs.plugins")["errcat"].load()
        import catalog
        from mkdocs.plugins import BasePlugin
        assert issubclass(plugin, BasePlugin), plugin
        print(plugin.__module__, plugin.__name__)
        print(catalog.__file__)
        """
    )
    lines = _ok(_run(project, PYTHON, "-c", probe)).splitlines()
    assert lines[0] == "catalog.engine.mkdocs_plugin ErrcatPlugin"
    assert Path(lines[1]).resolve() == HOME / "catalog" / "__init__.py"


def test_the_entry_points_name_the_entry_package() -> None:
    """The console script and the MkDocs plugin both go through `errcat`, which pins first."""
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="errcat")
    (plugin,) = entry_points(group="mkdocs.plugins", name="errcat")
    assert script.value == "errcat:run"
    assert plugin.value == "errcat.mkdocs_plugin:ErrcatPlugin"


def test_python_m_catalog_still_works_here() -> None:
    """This checkout's own `python -m catalog` keeps working beside `python -m errcat`."""
    done = _run(HOME, PYTHON, "-m", "catalog", "--version")
    assert _ok(done) == _ok(_run(HOME, PYTHON, "-m", "errcat", "--version"))


@pytest.mark.parametrize("launcher", ["module", "script"])
def test_the_process_ends_with_the_commands_code_and_all_its_output(
    launcher: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`errcat.run` ends the process at once after a command returns: the exit code is the
    command's and every line it wrote reaches a pipe, on stdout and on stderr."""
    command = [PYTHON, "-m", "errcat"] if launcher == "module" else [str(SCRIPT)]
    scanned = subprocess.run(
        [*command, "scan", "runtime"], cwd=HOME, capture_output=True, text=True, check=False
    )
    monkeypatch.chdir(HOME)
    assert errcat.main(["scan", "runtime"]) == 0
    assert scanned.returncode == 0
    assert scanned.stdout == capsys.readouterr().out
    assert len(scanned.stdout.splitlines()) > 50
    missing = subprocess.run(
        [*command, "explain", "no error anywhere says this"],
        cwd=HOME,
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 1
    assert "nothing in the catalog matches" in missing.stderr
