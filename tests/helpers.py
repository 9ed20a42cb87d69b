"""Helpers shared by the test modules (imported as `helpers`: pytest puts tests/ on the path)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import SimpleNamespace

from catalog.core.model import Entry, Position, Status
from catalog.core.placeholders import parse_placeholders
from extractor.model import Condition, RaiseSite

# What a source distribution would leave out: build outputs, environments and caches.
NOT_SOURCES = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
    ".hypothesis",
    ".errcat-cache",
)


def mkdocs(
    root: Path, *args: str, environ: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`mkdocs ARGS...` of this environment run in `root`, its output captured; `environ`
    replaces the process's environment (MkDocs' 2.0 notice is always silenced)."""
    return subprocess.run(
        [str(Path(sys.executable).with_name("mkdocs")), *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=240,
        env={**(os.environ if environ is None else environ), "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )


def exact(text: str) -> str:
    """A `pytest.raises(match=...)` pattern that accepts `text` and nothing more."""
    return "^" + re.escape(text) + "$"


def wait_for(condition: Callable[[], bool], timeout: float = 30.0) -> bool:
    """Poll `condition` until it holds or `timeout` seconds pass; the last answer is returned.

    For waiting on something another process or thread does (a file appears, a counter moves):
    the bound is generous because it is only reached when the test fails anyway.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def read_elements(driver: object, selector: str, attribute: str = "textContent") -> list[str]:
    """Each element's `attribute` (or property) under `selector`, read in one script call.

    Search results are re-rendered on every keystroke and every late answer, so elements found
    by one WebDriver call may be gone by the next (a stale element): reading them in the page's
    own script sees one consistent list.
    """
    script = (
        "return Array.from(document.querySelectorAll(arguments[0]))"
        ".map((e) => String(e[arguments[1]] ?? e.getAttribute(arguments[1]) ?? ''));"
    )
    return list(driver.execute_script(script, selector, attribute))  # type: ignore[attr-defined]


def write_files(root: Path, files: Mapping[str, str]) -> Path:
    """Write each `relative path → source` under `root` (dedented), creating folders; return root."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def package_project(root: Path, package: str, files: Mapping[str, str]) -> Path:
    """A project at `root` whose `[tool.errcat]` catalogues `package` into `errors/`, with a
    Material `mkdocs.yml`, and `files` (dedented) beside them."""
    title = package.capitalize()
    return write_files(
        root,
        {
            "pyproject.toml": f"""\
                [project]
                name = "{package}"
                version = "1.0"

                [tool.errcat]
                package = "{package}"
                catalog = "errors"
                """,
            "mkdocs.yml": f"site_name: {title}\ntheme:\n  name: material\n",
            **files,
        },
    )


def read_sites(
    root: Path, files: Mapping[str, str], path: str = "pkg/main.py"
) -> dict[int, RaiseSite]:
    """The sites of `path` by line, read through the package's factories and helpers
    (`extractor.printed`), after writing `files` (dedented, leading blank lines dropped) as the
    package `pkg` under `root`."""
    from extractor import scan_paths
    from extractor.printed import read_printed

    for name, source in {"pkg/__init__.py": "", **files}.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    report = read_printed(scan_paths([root / "pkg"], cwd=root), cwd=root)
    return {site.line: site for site in report.sites if site.path == path}


# Two realistic value sets per placeholder, keyed by the field's last name.
SAMPLES: dict[str, tuple[str, str]] = {
    "device": ("cuda:1", "cpu"),
    "devices": ("['mps:0', 'cpu']", "['cuda:0']"),
    "target_device": ("cuda:0", "meta"),
    "device_id": ("3", "0"),
    "dtype": ("torch.bfloat16", "torch.float16"),
    "name": ("lse", "max_logits"),
    "transport_name": ("host shared memory", "CUDA IPC"),
    "torch_version": ("2.12.1", "2.14.0.dev20250101"),
    "mlx_version": ("0.31.0", "0.29.3"),
    "given": ("'triton'", "'SM90'"),
    "capability": ("(8, 0)", "(12, 0)"),
    "data_type": ("<class 'numpy.ndarray'>", "<class 'list'>"),
    "wait_timeout": ("5.0", "0.25"),
}
NUMBER = ("7", "1536")


def sample_value(field: str, variant: int) -> str:
    """A realistic concrete value for a placeholder `field` (variant 0 or 1)."""
    leaf = field.rsplit(".", 1)[-1]
    if leaf in SAMPLES:
        return SAMPLES[leaf][variant]
    if leaf.endswith("shape"):
        return ("(2, 16, 576)", "torch.Size([1, 64])")[variant]
    return NUMBER[variant]


def render_sample(message: str, variant: int) -> str:
    """The template with each placeholder given a concrete value (attributes via namespaces)."""
    roots: dict[str, object] = {}
    for placeholder in parse_placeholders(message):
        root, _, attribute = placeholder.field.partition(".")
        value = sample_value(placeholder.field, variant)
        if attribute:
            holder = roots.setdefault(root, SimpleNamespace())
            setattr(holder, attribute, value)
        else:
            roots[root] = value
    return message.format(**roots)


def file_digests(folder: Path) -> dict[str, str]:
    """Every file under `folder` (relative, `/`-separated) with the SHA-256 of its bytes: two
    builds wrote the same files exactly when these are equal."""
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def errcat_in(folder: Path, *argv: str) -> int:
    """`errcat ARGV...` run in-process from `folder`, as a user runs it in a project, with the
    current folder restored afterwards (for module-scoped fixtures, which have no monkeypatch)."""
    from catalog.cli import main

    with contextlib.chdir(folder):
        return main(list(argv))


def errcat_output(folder: Path, *argv: str) -> tuple[int, str, str]:
    """`errcat_in`, with what the command printed: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = errcat_in(folder, *argv)
    return code, out.getvalue(), err.getvalue()


def guarded_site(signature: str, *conditions: str, function: str = "f") -> RaiseSite:
    """A `ValueError` raise site in `pkg/m.py`'s `function` (its `def` as `signature`), under
    an `if` for each of `conditions`: what candidate calls are built from."""
    return RaiseSite(
        path="pkg/m.py",
        line=9,
        column=9,
        end_line=9,
        end_column=30,
        exception="ValueError",
        qualified_name="builtins.ValueError",
        template="bad",
        function=function,
        reraise=False,
        cause=None,
        ignored=None,
        conditions=tuple(Condition("if", code, 8) for code in conditions),
        signature=signature,
    )


def entry_of(
    message: str,
    exception: str = "ValueError",
    *,
    entry_id: str = "0123456789abcdef",
    name: str = "BadError",
    status: Status = Status.DRAFT,
    module: str = "pkg.m",
    **fields: object,
) -> Entry:
    """An entry of `m.yaml` (line 1) with these fields, the rest as `Entry` defaults them."""
    return Entry(
        id=entry_id,
        name=name,
        exception=exception,
        message=message,
        status=status,
        module=module,
        position=Position(Path("m.yaml"), 1, 1),
        **fields,  # type: ignore[arg-type]
    )
