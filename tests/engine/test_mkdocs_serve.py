"""`mkdocs serve` with the errcat plugin survives a broken catalog: the pages answer with the
findings, the terminal lists them, and the next good edit brings the pages back. Builds stay
strict: `errcat build` refuses the catalog and keeps the previous site."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers import wait_for
from test_build_project import ACTIVE_ID, STOP_ID, make_project

from catalog.cli import main

TYPO = "  sevrity: high\n"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _get(url: str) -> str | None:
    """The page's text, or None while the server does not answer it (starting, rebuilding)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            text: str = response.read().decode("utf-8")
            return text
    except (urllib.error.URLError, OSError):
        return None


def _catalog_file(root: Path) -> Path:
    return root / "catalog" / "widgets.core.yaml"


def _break(root: Path) -> str:
    """Add an unknown key to the AlreadyStopped entry; return the file's good text."""
    path = _catalog_file(root)
    good = path.read_text(encoding="utf-8")
    at = good.index("name: AlreadyStopped\n") + len("name: AlreadyStopped\n")
    path.write_text(good[:at] + TYPO + good[at:], encoding="utf-8")
    return good


@contextmanager
def mkdocs_serving(root: Path, log: Path) -> Iterator[str]:
    """`mkdocs serve` of the project at `root` on a free port, its output in `log`; yields the
    base URL and stops the server (terminated, killed if it lingers) whatever happens."""
    port = _free_port()
    with log.open("w", encoding="utf-8") as output:
        server = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("mkdocs")),
                "serve",
                "--dev-addr",
                f"127.0.0.1:{port}",
            ],
            cwd=root,
            stdout=output,
            stderr=subprocess.STDOUT,
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        )
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str, Path, str]]:
    """A project served by `mkdocs serve` (strict, as this repository's mkdocs.yml is), whose
    catalog is broken before the first build; yields its root, base URL, the server's log and
    the catalog file's good text."""
    root = make_project(tmp_path)
    mkdocs_yml = root / "mkdocs.yml"
    mkdocs_yml.write_text(mkdocs_yml.read_text(encoding="utf-8") + "strict: true\n", "utf-8")
    good = _break(root)
    log = tmp_path / "serve.log"
    with mkdocs_serving(root, log) as base:
        yield root, base, log, good


def _shows_findings(page: str | None) -> bool:
    return page is not None and "The catalog has" in page


def test_a_broken_catalog_is_shown_and_the_next_good_edit_recovers(
    served: tuple[Path, str, Path, str],
) -> None:
    """Broken from the start, fixed, broken again: every page answers throughout, showing the
    findings with their positions while the catalog is broken and the entry once it is not."""
    root, base, log, good = served
    entry_page = f"{base}errors/{STOP_ID}/"
    assert wait_for(lambda: _shows_findings(_get(entry_page)), timeout=120), log.read_text()
    page = _get(entry_page) or ""
    assert "catalog/widgets.core.yaml:" in page and "unknown key &#x27;sevrity&#x27;" in page
    for other in (base, f"{base}errors/", f"{base}errors/{ACTIVE_ID}/"):
        assert _shows_findings(_get(other)), other
    assert wait_for(lambda: "unknown key 'sevrity'" in log.read_text(encoding="utf-8"))
    assert "Aborted" not in log.read_text(encoding="utf-8")

    _catalog_file(root).write_text(good, encoding="utf-8")
    assert wait_for(lambda: "is already stopped" in (_get(entry_page) or ""), timeout=120)
    assert not _shows_findings(_get(entry_page))
    assert "cannot turn backwards" in (_get(f"{base}errors/{ACTIVE_ID}/") or "")

    _break(root)
    assert wait_for(lambda: _shows_findings(_get(f"{base}errors/{ACTIVE_ID}/")), timeout=120)
    # A page of the good build that the broken one would not generate keeps answering too.
    assert _shows_findings(_get(f"{base}errors/modules/widgets.core/"))


def test_errcat_build_stays_strict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`errcat build` with a broken entry exits 1 naming it, and the previous site stays."""
    root = make_project(tmp_path)
    monkeypatch.chdir(root)
    assert main(["build"]) == 0
    site = root / "build" / "site"
    before = {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}
    _break(root)
    capsys.readouterr()
    assert main(["build"]) == 1
    captured = capsys.readouterr()
    assert "unknown key 'sevrity'" in captured.out + captured.err
    after = {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}
    assert after == before


def test_the_findings_page_escapes_what_it_quotes(tmp_path: Path) -> None:
    """A finding quotes the author's text: it is shown as text, never as HTML."""
    from catalog.core.findings import Finding
    from catalog.pages.findings_page import findings_page

    hostile = Finding(tmp_path / "c" / "m.yaml", 3, 5, "unknown key '<script>x</script>'", "a&b")
    page = findings_page([hostile], tmp_path)
    assert page.startswith("# The catalog has 1 problem\n")
    assert "<script>" not in page
    assert (
        "<code>c/m.yaml:3:5</code> unknown key &#x27;&lt;script&gt;x&lt;/script&gt;&#x27;" in page
    )
    assert "<em>Fix:</em> a&amp;b" in page
