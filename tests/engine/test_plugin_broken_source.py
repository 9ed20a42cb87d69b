"""`mkdocs serve` with the errcat plugin survives a file of the package that Python cannot parse.

Under `strict` the scan's warning used to abort the rebuild, and mkdocs' live-reload server then
holds every request until a rebuild succeeds: the whole site hung until the file was fixed. A
strict serve now shows the findings page in place of errcat's pages (`path:line:col: cannot
scan: ...`, as `errcat check` prints it), the hand-written pages keep answering, and the next
good edit brings the normal pages back. A one-shot strict build still refuses the file; a lax
one publishes the pages without its raise sites, with a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import mkdocs, wait_for
from mkdocs.commands.build import build
from mkdocs.config import load_config as load_mkdocs_config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import Abort
from test_build_project import ACTIVE_ID, STOP_ID, make_project
from test_mkdocs_serve import _get, mkdocs_serving

SERVE_URL = "http://127.0.0.1:8000/"
BROKEN_TAIL = "\n\ndef broken(:\n    pass\n"
"""Appended to widgets/core.py (9 lines): the parser stops at the `:` on line 12, column 12."""
WHERE = "widgets/core.py:12:12"
SCAN_FINDING = (
    f"{WHERE}: cannot scan: cannot parse: invalid syntax; fix the file so Python can parse it"
)
FINDINGS_TITLE = "The package has 1 problem"
GENERATED = (
    "index.html",
    "errors/index.html",
    f"errors/{ACTIVE_ID}/index.html",
    f"errors/{STOP_ID}/index.html",
    "errors/modules/widgets.core/index.html",
)
"""Pages errcat generates: the indexes, entries, and a group page only a good build makes."""
GUIDE = "guides/hello/index.html"


@pytest.fixture(autouse=True)
def _fresh_plugins() -> Iterator[None]:
    """MkDocs keeps one instance of a plugin with `on_startup` per process, for the rebuilds of
    a serve; each test starts with a new one and leaves none behind in serve mode."""
    cache = MkDocsConfig.plugins.plugin_cache
    saved = dict(cache)
    cache.clear()
    yield
    cache.clear()
    cache.update(saved)


class _Serve:
    """The rebuilds `mkdocs serve` runs (`mkdocs.commands.serve.serve`'s builder): `on_startup`
    once with the serve command, then a fresh config per rebuild, its site_url the server's,
    built with `serve_url` set, into the same site folder."""

    def __init__(self, root: Path, *, strict: bool) -> None:
        self.config_file = root / "mkdocs.yml"
        self.site = root / "served"
        self.strict = strict
        self._config().plugins.on_startup(command="serve", dirty=False)

    def _config(self) -> MkDocsConfig:
        config = load_mkdocs_config(
            config_file=str(self.config_file), site_dir=str(self.site), strict=self.strict
        )
        config.site_url = SERVE_URL
        return config

    def rebuild(self) -> None:
        build(self._config(), serve_url=SERVE_URL, dirty=False)

    def page(self, path: str) -> str:
        return (self.site / path).read_text(encoding="utf-8")


def _break(root: Path) -> str:
    """Leave widgets/core.py unparseable; return its good text."""
    core = root / "widgets" / "core.py"
    good = core.read_text(encoding="utf-8")
    assert good.count("\n") == 9
    core.write_text(good + BROKEN_TAIL, encoding="utf-8")
    return good


def _is_normal_entry(page: str) -> bool:
    """The entry's page as a good build makes it: its message, and its raise site in the code."""
    return "cannot turn backwards" in page and "widgets/core.py:3" in page


def test_a_strict_serve_shows_an_unparseable_source_and_recovers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Good, broken, fixed: no rebuild raises (a raise is what leaves the server stuck); while
    the file is broken every errcat page is the findings page naming it, the guide is served
    as written, the terminal lists the finding; the fix brings the normal pages back."""
    root = make_project(tmp_path)
    served = _Serve(root, strict=True)
    served.rebuild()
    assert _is_normal_entry(served.page(f"errors/{ACTIVE_ID}/index.html"))
    assert (served.site / "api" / "errors" / f"{ACTIVE_ID}.json").is_file()

    good = _break(root)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="mkdocs"):
        served.rebuild()
    for path in GENERATED:
        page = served.page(path)
        assert FINDINGS_TITLE in page, path
        assert f"<code>{WHERE}</code> cannot scan: cannot parse: invalid syntax" in page, path
        assert "cannot turn backwards" not in page, path
    assert "A hand-written guide." in served.page(GUIDE)
    messages = [record.getMessage() for record in caplog.records]
    assert f"errcat: {SCAN_FINDING}" in messages
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], messages

    (root / "widgets" / "core.py").write_text(good, encoding="utf-8")
    served.rebuild()
    assert _is_normal_entry(served.page(f"errors/{ACTIVE_ID}/index.html"))
    assert "is already stopped" in served.page(f"errors/{STOP_ID}/index.html")
    for path in GENERATED:
        assert FINDINGS_TITLE not in served.page(path), path
    assert (served.site / "api" / "errors" / f"{ACTIVE_ID}.json").is_file()


def test_a_source_broken_before_the_first_build_is_shown_too(tmp_path: Path) -> None:
    """A strict serve started on a broken file shows the findings from its first build."""
    root = make_project(tmp_path)
    _break(root)
    served = _Serve(root, strict=True)
    served.rebuild()
    assert WHERE in served.page(f"errors/{ACTIVE_ID}/index.html")
    assert "A hand-written guide." in served.page(GUIDE)


def test_a_lax_serve_publishes_the_pages_and_warns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Without `strict` the warning aborts nothing: the pages are built, as a lax `mkdocs
    build` publishes them, without the broken file's raise sites."""
    root = make_project(tmp_path)
    _break(root)
    served = _Serve(root, strict=False)
    with caplog.at_level(logging.WARNING, logger="mkdocs"):
        served.rebuild()
    page = served.page(f"errors/{ACTIVE_ID}/index.html")
    assert "cannot turn backwards" in page and FINDINGS_TITLE not in page
    assert "widgets/core.py:3" not in page
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert f"errcat: {SCAN_FINDING} (its raise sites are missing from the pages)" in warnings


def test_a_strict_build_refuses_an_unparseable_source(tmp_path: Path) -> None:
    """`mkdocs build --strict` exits non-zero naming the file's position, without a
    traceback."""
    root = make_project(tmp_path)
    _break(root)
    done = mkdocs(root, "build", "--strict")
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert SCAN_FINDING in output
    assert "Aborted with 1 warnings in strict mode" in output
    assert "Traceback" not in output


def test_a_real_strict_serve_keeps_answering(tmp_path: Path) -> None:
    """The symptom itself, on `mkdocs serve` (strict: true in mkdocs.yml): after the file breaks,
    requests answer (the findings on errcat's pages, the guide as written) instead of hanging,
    and the fix brings the entry back."""
    root = make_project(tmp_path)
    mkdocs_yml = root / "mkdocs.yml"
    mkdocs_yml.write_text(mkdocs_yml.read_text(encoding="utf-8") + "strict: true\n", "utf-8")
    log = tmp_path / "serve.log"
    with mkdocs_serving(root, log) as base:
        entry = f"{base}errors/{ACTIVE_ID}/"
        assert wait_for(lambda: _is_normal_entry(_get(entry) or ""), timeout=120), log.read_text()
        good = _break(root)
        assert wait_for(lambda: WHERE in (_get(entry) or ""), timeout=60), log.read_text()
        assert "A hand-written guide." in (_get(f"{base}guides/hello/") or "")
        assert "Aborted" not in log.read_text(encoding="utf-8")
        (root / "widgets" / "core.py").write_text(good, encoding="utf-8")
        assert wait_for(lambda: _is_normal_entry(_get(entry) or ""), timeout=60), log.read_text()


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (("package = ", "package = 'gone' #"), "no package folder"),
        (("generated = ", "generated = '../outside.py' #"), "outside the project"),
    ],
)
def test_mkdocs_build_refuses_what_errcat_build_refuses(
    tmp_path: Path, edit: tuple[str, str], expected: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A missing package or a `generated` outside the project stops `mkdocs build` with the
    line `errcat build` prints (a PluginError: logged, no traceback), before anything is written."""
    root = make_project(tmp_path)
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    assert edit[0] in text
    pyproject.write_text(text.replace(edit[0], edit[1], 1), encoding="utf-8")
    config = load_mkdocs_config(config_file=str(root / "mkdocs.yml"), site_dir=str(root / "out"))
    with pytest.raises(Abort):
        build(config)
    refused = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(refused) == 1 and refused[0].startswith("errcat: ") and expected in refused[0]
    assert not (root / "out").exists() and not (root / ".errcat-cache").exists()
