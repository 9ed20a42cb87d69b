"""errcat's pre-commit hook (`.pre-commit-hooks.yaml`), run as users run it: `pre-commit
try-repo` installs errcat from this repository into a hook environment and runs `errcat check`
on a small project's git repository: it passes on a clean project and fails showing the
finding on a drifted one.

Installing the environment needs errcat's dependencies from a package index (or pip's cache);
where none can be reached the test skips and says so. Everything else failing is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import errcat_in, write_files

ROOT = Path(__file__).resolve().parents[2]
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")

PROJECT = {
    "pyproject.toml": """\
        [tool.errcat]
        package = "pkg"
        catalog = "knowledge"
        generated = "pkg/errors.py"
        """,
    ".gitignore": ".errcat-cache/\n",
    "pkg/__init__.py": "",
    "pkg/m.py": """\
        from pkg.errors import PoolSizePositiveError


        def open_pool(size):
            if size <= 0:
                raise PoolSizePositiveError(size=size)
            return size
        """,
    "knowledge/m.yaml": """\
        module: pkg.m
        errors:
          - id: 47afe9f0304f070c
            name: PoolSizePositiveError
            exception: ValueError
            status: draft
            message: "pool size must be positive, got {size}"
        """,
}

# What cannot be installed without a package index: pip's words when it finds no distribution.
_OFFLINE = ("No matching distribution found", "Could not find a version", "NewConnectionError")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=_env(cwd))


def _env(home: Path) -> dict[str, str]:
    """Git identity and no user configuration; pre-commit's store under `home`."""
    return {
        **os.environ,
        "GIT_AUTHOR_NAME": "errcat tests",
        "GIT_AUTHOR_EMAIL": "tests@errcat.invalid",
        "GIT_COMMITTER_NAME": "errcat tests",
        "GIT_COMMITTER_EMAIL": "tests@errcat.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "PRE_COMMIT_HOME": str(home),
        "PRE_COMMIT_COLOR": "never",
    }


def _snapshot(target: Path) -> Path:
    """This repository's working tree as it is (tracked and untracked, not ignored), committed
    into a fresh repository: what a user's clone holds, without the rest of `.git`."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the working tree is left out
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    _git(target, "init", "-q")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "snapshot")
    return target


def _project(root: Path, *, drifted: bool) -> Path:
    """The small project as a git repository with one commit; `drifted` adds a raise that the
    catalog does not know, after the generated module was written."""
    project = write_files(root, PROJECT)
    assert errcat_in(project, "codegen") == 0
    if drifted:
        module = project / "pkg" / "m.py"
        module.write_text(
            module.read_text(encoding="utf-8")
            + "\n\ndef close(x):\n    raise KeyError(f'no {x}')\n",
            encoding="utf-8",
        )
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "the project")
    return project


def _try_repo(project: Path, errcat: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(PRE_COMMIT), "try-repo", str(errcat), "errcat-check", "--all-files"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env(project.with_name(project.name + "-pre-commit-home")),
    )


# try-repo installs the hook's environment afresh on every run (it uses a temporary store),
# mostly pip installing errcat's dependencies: the two runs go side by side.
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_hook_passes_a_clean_project_and_fails_a_drifted_one(tmp_path: Path) -> None:
    """try-repo with errcat-check: exit 0 on a clean project; exit 1 with the finding's
    `path:line:col:` line on a project where a raise drifted from the catalog."""
    assert PRE_COMMIT.is_file(), "pre-commit is a dev dependency; run: make setup"
    errcat = _snapshot(tmp_path / "errcat")
    runs = {
        drifted: _try_repo(_project(tmp_path / f"project-{drifted}", drifted=drifted), errcat)
        for drifted in (False, True)
    }
    try:
        outputs = {drifted: run.communicate(timeout=500)[0] for drifted, run in runs.items()}
    finally:
        for run in runs.values():
            if run.poll() is None:
                run.kill()
                run.wait()
    clean, drifted = runs[False], runs[True]
    output = outputs[False]
    offline = [line.strip() for line in output.splitlines() if any(w in line for w in _OFFLINE)]
    if clean.returncode != 0 and offline:
        pytest.skip(
            "pre-commit could not install errcat's hook environment (no package index or pip "
            f"cache reachable): {offline[0]}"
        )
    assert clean.returncode == 0, output
    assert "errcat check" in output and "Passed" in output

    output = outputs[True]
    assert drifted.returncode == 1, output
    assert "Failed" in output
    assert "pkg/m.py:11:5: " in output
    assert "errcat check failed: 1 error(s)" in output
