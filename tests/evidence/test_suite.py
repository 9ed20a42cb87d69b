"""`errcat reproduce` runs the package's own tests that expect errors and pairs each expectation
with the entry whose raise it caught (catalog/evidence/suite.py): tables of inputs, tests
without a pattern, raise helpers, unittest's forms; a test raising outside the package, a
failing test and a hanging run do not stop it; the build shows what was seen as verified
`tested` knowledge while the files are unchanged."""

from __future__ import annotations

import json
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from helpers import errcat_output, write_files

from catalog.core.config import load_config
from catalog.entries.loader import load_catalog
from catalog.evidence.reproduce import sites_by_entry
from catalog.evidence.suite import RESULTS_FILE, load_seen, run_suite

FILES = {
    "pyproject.toml": """\
        [project]
        name = "shop"
        version = "0.1.0"

        [tool.errcat]
        package = "shop"
        catalog = "errors"
        generated = "shop/_errors.py"
        """,
    "shop/__init__.py": "",
    "shop/core.py": """\
        def _fail(message, exc=ValueError):
            raise exc(message)


        def price(amount):
            if amount < 0:
                raise ValueError(f"negative price {amount}")
            if amount > 1000:
                raise ValueError(f"price {amount} is over the limit")
            return amount


        def stock(count):
            if count == 0:
                _fail("out of stock")
            if count < 0:
                _fail(f"stock {count} is negative")
            return count


        def parse(text):
            try:
                return _digits(text)
            except ValueError as error:
                raise ValueError(f"cannot parse {text!r}") from error


        def _digits(text):
            if not text.isdigit():
                raise ValueError(f"not digits: {text}")
            return int(text)


        def lookup(key):
            try:
                return {}[key]
            except KeyError:
                raise ValueError(f"unknown key {key}")
        """,
    "tests/test_core.py": """\
        import unittest

        import pytest

        from shop.core import lookup, parse, price, stock


        @pytest.mark.parametrize("amount", [-1, 5000])
        def test_bad_prices(amount):
            with pytest.raises(ValueError):
                price(amount)


        def test_empty():
            pytest.raises(ValueError, stock, 0)


        def test_raised_elsewhere():
            with pytest.raises(ValueError):
                int("x")


        def test_failing():
            assert price(1) == 2


        class StockTest(unittest.TestCase):
            def test_negative(self):
                with self.assertRaises(ValueError):
                    stock(-2)

            def test_call_form(self):
                self.assertRaises(ValueError, price, -3)


        import contextlib


        class Wrapped(unittest.TestCase):
            @contextlib.contextmanager
            def assertRaises(self, expected):
                with super().assertRaises(expected):
                    yield

            def test_wrapped(self):
                with self.assertRaises(ValueError):
                    price(-4)


        def test_parse():
            with pytest.raises(ValueError):
                parse("x")


        def test_lookup():
            with pytest.raises(ValueError):
                lookup("k")
        """,
}

HANGING = """\
    import time

    import pytest

    from shop.core import price


    def test_first():
        with pytest.raises(ValueError):
            price(-1)


    def test_zz_hangs():
        with pytest.raises(ValueError):
            time.sleep(3600)
    """


def _ids(root: Path) -> dict[str, str]:
    """Entry id by message, from the drafts `errcat new` wrote."""
    found: dict[str, str] = {}
    for path in (root / "errors").glob("*.yaml"):
        for entry in yaml.safe_load(path.read_text(encoding="utf-8"))["errors"]:
            found[entry["message"]] = entry["id"]
    return found


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, object]]]:
    root = write_files(tmp_path_factory.mktemp("shop"), FILES)
    code, _out, err = errcat_output(root, "new")
    assert code == 0, err
    code, out, err = errcat_output(root, "reproduce", "--timeout", "5", "--json")
    assert code == 0, err
    yield root, json.loads(out)


def _pairs(root: Path) -> set[tuple[str, int, str, int]]:
    by_id = {entry_id: message for message, entry_id in _ids(root).items()}
    seen = load_seen(root / "errors", root)
    return {
        (by_id[entry_id], s.test_line, s.site_path, s.site_line)
        for entry_id, rows in seen.items()
        for s in rows
    }


def test_each_expectation_pairs_with_the_raise_it_caught(
    shop: tuple[Path, dict[str, object]],
) -> None:
    root, payload = shop
    assert payload["tests"] == {
        "files": 1,
        # int("x") raises outside the package: no record; `parse` gives two (what it caught
        # and the ValueError it was raised from), `lookup` one (a KeyError is not expected).
        "records": 9,
        "entries": 7,
        "expectations": 7,
        "ended": "exit 1",  # test_failing fails; the run's pairings stand
        "seconds": payload["tests"]["seconds"],  # type: ignore[index]
    }
    assert _pairs(root) == {
        # One table-driven test, two inputs, two entries.
        ("negative price {amount}", 10, "shop/core.py", 7),
        ("price {amount} is over the limit", 10, "shop/core.py", 9),
        # The helper's call is the site, not the helper's own raise.
        ("out of stock", 15, "shop/core.py", 15),
        ("stock {count} is negative", 29, "shop/core.py", 17),
        # The call form of assertRaises, from inside unittest's machinery.
        ("negative price {amount}", 33, "shop/core.py", 7),
        # Through the test case's own wrapper of assertRaises: the test that used it.
        ("negative price {amount}", 46, "shop/core.py", 7),
        # What was caught, and the error of the expected class it was raised from.
        ("cannot parse {text!r}", 51, "shop/core.py", 25),
        ("not digits: {text}", 51, "shop/core.py", 30),
        ("unknown key {key}", 56, "shop/core.py", 38),
    }
    seen = load_seen(root / "errors", root).values()
    assert {s.site_line for rows in seen for s in rows if s.chained} == {30}


def test_the_build_shows_them_as_verified_tested_knowledge(
    shop: tuple[Path, dict[str, object]],
) -> None:
    root, _payload = shop
    code, _out, err = errcat_output(root, "build")
    assert code == 0, err
    ids = _ids(root)
    entry = json.loads(
        (root / "build/site/api/errors" / f"{ids['negative price {amount}']}.json").read_text()
    )
    tested = [item for item in entry["knowledge"] if item["kind"] == "tested"]
    assert [(item["source"], item["verified"]) for item in tested] == [
        ({"path": "tests/test_core.py", "line": 10}, True),
        ({"path": "tests/test_core.py", "line": 33}, True),
        ({"path": "tests/test_core.py", "line": 46}, True),
    ]
    assert "caught this error raised at `shop/core.py:7`" in tested[0]["text"]
    assert tested[0]["code"] == "with pytest.raises(ValueError):\n    price(amount)"
    inner = json.loads(
        (root / "build/site/api/errors" / f"{ids['not digits: {text}']}.json").read_text()
    )
    (chained,) = [item for item in inner["knowledge"] if item["kind"] == "tested"]
    assert chained["verified"] is True
    assert (
        "the error it caught was raised from this one, raised at `shop/core.py:30`"
        in (chained["text"])
    )


def test_a_changed_test_file_drops_its_pairings(tmp_path: Path) -> None:
    root = write_files(tmp_path, FILES)
    assert errcat_output(root, "new")[0] == 0
    assert errcat_output(root, "reproduce", "--timeout", "5")[0] == 0
    assert len(_pairs(root)) == 9
    test_file = root / "tests" / "test_core.py"
    test_file.write_text(test_file.read_text() + "\n# edited\n", encoding="utf-8")
    assert _pairs(root) == set()
    stored = json.loads((root / "errors" / RESULTS_FILE).read_text())
    assert len(stored["results"]) == 7  # kept in the file, refused when read


def test_no_tests_runs_nothing(tmp_path: Path) -> None:
    root = write_files(tmp_path, FILES)
    assert errcat_output(root, "new")[0] == 0
    code, out, _err = errcat_output(root, "reproduce", "--no-tests", "--json")
    assert code == 0
    assert json.loads(out)["tests"] is None
    assert not (root / "errors" / RESULTS_FILE).exists()


def test_a_hanging_run_is_killed_and_what_it_saw_is_kept(tmp_path: Path) -> None:
    root = write_files(tmp_path, {**FILES, "tests/test_hang.py": HANGING})
    assert errcat_output(root, "new")[0] == 0
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        config = load_config()
        catalog, _findings = load_catalog(config.catalog)
        sites = sites_by_entry(config, catalog)
        # Long enough for pytest to start and run the first test on a slow machine.
        run = run_suite(config, catalog, sites, timeout=15)
    assert run.ended == "timed out"
    ids = _ids(root)
    lines = {(s.test_path, s.test_line) for s in run.seen[ids["negative price {amount}"]]}
    assert ("tests/test_hang.py", 9) in lines


def test_a_missing_interpreter_is_reported(tmp_path: Path) -> None:
    root = write_files(tmp_path, FILES)
    assert errcat_output(root, "new")[0] == 0
    # The calls run on it too: nothing runs, and nothing recorded before is touched.
    code, out, err = errcat_output(root, "reproduce", "--python", str(tmp_path / "nope"))
    assert code == 2
    assert out == ""
    assert f"--python {tmp_path / 'nope'}: no Python interpreter runs there" in err
    assert not (root / "errors" / "reproduced.json").exists()


REWRITTEN = {
    "shop/render.py": """\
        def _parse(text):
            if not text:
                raise ValueError("empty template")
            return text


        def render(text):
            try:
                return _parse(text)
            except ValueError as exc:
                # As template engines do: a traceback of its own making hides the raise.
                raise exc.with_traceback(None)
        """,
    "tests/test_render.py": """\
        import pytest

        from shop.render import render


        def test_empty():
            with pytest.raises(ValueError):
                render("")
        """,
}

PYENV = Path("/root/.pyenv/versions")


def _monitoring_python() -> Path | None:
    """A Python with `sys.monitoring` (3.12 or later), this one first."""
    if sys.version_info >= (3, 12):
        return Path(sys.executable)
    found = sorted(PYENV.glob("3.1[2-9].*/bin/python"))
    return found[-1] if found else None


def test_the_first_raise_is_found_behind_a_rewritten_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From Python 3.12 `sys.monitoring` notes where the package first raised the exception,
    so a package that raises it again with a traceback of its own making (a template engine's)
    still shows which raise its test reached; before 3.12 only the traceback is there, and
    it pairs nothing rather than something wrong."""
    python = _monitoring_python()
    if python is None:
        pytest.skip("no Python 3.12 or later here: sys.monitoring is what this reads")
    root = write_files(tmp_path, {**FILES, **REWRITTEN})
    assert errcat_output(root, "new")[0] == 0
    if Path(python) != Path(sys.executable):
        # pytest and its own requirements are pure Python: this environment's serve another
        # version; plugins installed here (some compiled) are not loaded.
        monkeypatch.setenv("PYTHONPATH", sysconfig.get_paths()["purelib"])
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        config = load_config()
        catalog, _findings = load_catalog(config.catalog)
        sites = sites_by_entry(config, catalog)
        seen = run_suite(config, catalog, sites, python=str(python)).seen
        old = run_suite(config, catalog, sites).seen if sys.version_info < (3, 12) else None
    empty = _ids(root)["empty template"]
    assert [(s.test_path, s.test_line, s.site_line) for s in seen[empty]] == [
        ("tests/test_render.py", 7, 3)
    ]
    if old is not None:
        assert empty not in old


def test_tables_of_error_inputs_are_not_run() -> None:
    """A file holding only records of error inputs is no test file to run: the test that
    reads the table catches the error, wherever it is."""
    from catalog.evidence.suite import files_to_run
    from extractor.expectations import Expectation

    def expectation(path: str, record: bool) -> Expectation:
        return Expectation(path, 3, "ValueError", "builtins.ValueError", "x", "code", None, record)

    found = [
        expectation("pkg/testing/inputs.py", True),
        expectation("tests/test_core.py", False),
        expectation("tests/test_core.py", True),
    ]
    assert files_to_run(found, None) == ["tests/test_core.py"]
