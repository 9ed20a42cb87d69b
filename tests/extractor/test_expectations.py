"""Tested knowledge: reading a package's tests for expected errors, and pairing them with entries."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import entry_of

from catalog.core.config import ConfigError, load_config
from catalog.core.model import Entry
from catalog.evidence.tested import tested_by_entry as pair_tests
from extractor.expectations import Expectation, read_expectations


def _write(folder: Path, relative: str, source: str) -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def _read(tmp_path: Path, source: str) -> list[Expectation]:
    _write(tmp_path, "tests/test_it.py", source)
    found, failures = read_expectations([Path("tests")], cwd=tmp_path)
    assert failures == ()
    return list(found)


def _summary(found: list[Expectation]) -> list[tuple[int, str, str | None, str | None]]:
    return [(e.line, e.exception, e.qualified_name, e.pattern) for e in found]


# Reading --------------------------------------------------------------------------------------


def test_pytest_raises_with_and_without_match(tmp_path: Path) -> None:
    """`with pytest.raises(X)` and `with pytest.raises(X, match=...)`, with line, code, function."""
    found = _read(
        tmp_path,
        """\
        import pytest
        from toyshop.errors import OutOfStock

        class TestShelf:
            def test_take(self):
                shelf = object()
                with pytest.raises(OutOfStock, match="only 2 left") as caught:
                    shelf.take("AB-1", 5)
                assert caught

        def test_plain():
            with pytest.raises(ValueError):
                int("x")
        """,
    )
    assert _summary(found) == [
        (7, "OutOfStock", "toyshop.errors.OutOfStock", "only 2 left"),
        (12, "ValueError", "builtins.ValueError", None),
    ]
    assert found[0].path == "tests/test_it.py"
    assert found[0].function == "TestShelf.test_take"
    assert found[0].code == (
        'with pytest.raises(OutOfStock, match="only 2 left") as caught:\n    shelf.take("AB-1", 5)'
    )
    assert found[1].function == "test_plain"


def test_an_expectation_made_once_and_entered_by_name(tmp_path: Path) -> None:
    """`check = pytest.raises(X, match=...)` then `with check:`: an expectation at each `with`;
    a name bound twice says nothing sure."""
    found = _read(
        tmp_path,
        """\
        import pytest

        def test_blocks(render):
            check = pytest.raises(ValueError, match="only comments")
            with check:
                render("text")
            with check:
                render("block")

        def test_rebound(render):
            check = pytest.raises(ValueError)
            check = pytest.raises(KeyError)
            with check:
                render("x")
        """,
    )
    assert _summary(found) == [
        (5, "ValueError", "builtins.ValueError", "only comments"),
        (7, "ValueError", "builtins.ValueError", "only comments"),
    ]
    assert found[0].code == 'with check:\n    render("text")'


def test_call_form_tuple_and_raises_imported_from_pytest(tmp_path: Path) -> None:
    """The call form with a callable, a tuple of classes (one expectation each), and `raises`
    imported from pytest; `pytest.raises(X)` alone expects nothing and a `raises` that is not
    pytest's is not read."""
    found = _read(
        tmp_path,
        """\
        import pytest
        from pytest import raises
        import toyshop.errors as errors

        def test_call():
            pytest.raises(KeyError, {}.__getitem__, "x")
            info = pytest.raises(errors.InvalidSku, lambda: None)
            pytest.raises(KeyError)

        def test_tuple():
            with raises((ValueError, errors.InvalidSku), match="bad"):
                pass

        def other(raises):
            with raises(ValueError):
                pass
        """,
    )
    assert _summary(found) == [
        (6, "KeyError", "builtins.KeyError", None),
        (7, "errors.InvalidSku", "toyshop.errors.InvalidSku", None),
        (11, "ValueError", "builtins.ValueError", "bad"),
        (11, "errors.InvalidSku", "toyshop.errors.InvalidSku", "bad"),
    ]
    assert found[0].code == 'pytest.raises(KeyError, {}.__getitem__, "x")'


def test_unittest_forms(tmp_path: Path) -> None:
    """assertRaises and assertRaisesRegex, as context managers and in the call form."""
    found = _read(
        tmp_path,
        """\
        import unittest
        from toyshop import errors

        class ShelfTests(unittest.TestCase):
            def test_forms(self):
                with self.assertRaises(errors.OutOfStock):
                    pass
                self.assertRaises(KeyError, dict().pop, "x")
                with self.assertRaisesRegex(ValueError, r"quantity \\d+"):
                    pass
                self.assertRaisesRegex(ValueError, "call form", int, "x")
                with self.assertRaises(TypeError):
                    with self.assertRaises(ValueError):
                        pass
        """,
    )
    assert _summary(found) == [
        (6, "errors.OutOfStock", "toyshop.errors.OutOfStock", None),
        (8, "KeyError", "builtins.KeyError", None),
        (9, "ValueError", "builtins.ValueError", r"quantity \d+"),
        (11, "ValueError", "builtins.ValueError", "call form"),
        (12, "TypeError", "builtins.TypeError", None),
        (13, "ValueError", "builtins.ValueError", None),
    ]
    assert {e.function for e in found} == {"ShelfTests.test_forms"}


def test_pattern_literals(tmp_path: Path) -> None:
    """Raw strings, implicit concatenation and re.escape of a literal are read; a variable,
    an f-string or another function's result is not (pattern None)."""
    found = _read(
        tmp_path,
        """\
        import re
        import pytest

        def test_patterns(value):
            with pytest.raises(ValueError, match=r"a\\.b" "c+"):
                pass
            with pytest.raises(ValueError, match=re.escape("1.5 (x)")):
                pass
            with pytest.raises(ValueError, match=value):
                pass
            with pytest.raises(ValueError, match=f"got {value}"):
                pass
            with pytest.raises(ValueError, match=exact("text")):
                pass
        """,
    )
    assert [e.pattern for e in found] == [r"a\.bc+", r"1\.5\ \(x\)", None, None, None]


def test_local_class_and_shadowed_builtin(tmp_path: Path) -> None:
    """A class bound by a parameter resolves to None; a class the file defines to its module."""
    found = _read(
        tmp_path,
        """\
        import pytest

        class Mine(Exception):
            pass

        def test_param(exc):
            with pytest.raises(exc):
                pass

        def test_mine():
            with pytest.raises(Mine):
                pass
        """,
    )
    assert _summary(found) == [(7, "exc", None, None), (11, "Mine", "test_it.Mine", None)]


def test_broken_file_is_a_failure_and_reading_goes_on(tmp_path: Path) -> None:
    """A file that does not parse is a failure with its position; the others are read; a missing
    path is a failure too; conftest.py and non-test files in folders are not read."""
    _write(tmp_path, "tests/test_a.py", "def test(:\n    pytest.raises(ValueError, f)\n")
    _write(tmp_path, "tests/test_b.py", "import pytest\npytest.raises(ValueError, f)\n")
    _write(tmp_path, "tests/sub/thing_test.py", "import pytest\npytest.raises(KeyError, f)\n")
    _write(tmp_path, "tests/conftest.py", "import pytest\npytest.raises(TypeError, f)\n")
    _write(tmp_path, "tests/helpers.py", "import pytest\npytest.raises(TypeError, f)\n")
    _write(tmp_path, "tests/.hidden/test_c.py", "import pytest\npytest.raises(TypeError, f)\n")
    _write(tmp_path, "tests/__pycache__/test_d.py", "import pytest\npytest.raises(OSError, f)\n")
    found, failures = read_expectations([Path("tests"), Path("gone")], cwd=tmp_path)
    assert [(e.path, e.exception) for e in found] == [
        ("tests/sub/thing_test.py", "KeyError"),
        ("tests/test_b.py", "ValueError"),
    ]
    assert [(f.path, f.line) for f in failures] == [("gone", 1), ("tests/test_a.py", 1)]
    assert "cannot parse" in failures[1].message


def test_a_file_given_by_name_is_read_whatever_its_name(tmp_path: Path) -> None:
    """Files named explicitly are read even when their name is not test_*.py."""
    _write(tmp_path, "checks.py", "import pytest\npytest.raises(KeyError, f)\n")
    found, _ = read_expectations([tmp_path / "checks.py"], cwd=tmp_path)
    assert [(e.path, e.exception) for e in found] == [("checks.py", "KeyError")]


def test_byte_prefilter_skips_the_parse(tmp_path: Path) -> None:
    """A file without `raises`/`assertRaises` is not parsed: even a syntax error goes unseen."""
    _write(tmp_path, "tests/test_quiet.py", "def test(:\n    assert True\n")
    _write(tmp_path, "tests/test_loud.py", "def test(:\n    raises\n")
    _, failures = read_expectations([Path("tests")], cwd=tmp_path)
    assert [f.path for f in failures] == ["tests/test_loud.py"]


def test_long_statement_code_is_capped(tmp_path: Path) -> None:
    """`code` is the whole statement, dedented, cut to 25 lines ending with `...`."""
    body = "".join(f"        x{n} = {n}\n" for n in range(40))
    found = _read(
        tmp_path, "import pytest\ndef test():\n    with pytest.raises(ValueError):\n" + body
    )
    lines = found[0].code.splitlines()
    assert len(lines) == 25
    assert lines[0] == "with pytest.raises(ValueError):"
    assert lines[-1] == "    ..."


def test_records_of_error_inputs_in_tables(tmp_path: Path) -> None:
    """A call passing an exception class and a literal pattern by keyword is a row of a table
    of error inputs, wherever it sits (a list, a `yield`, a nested call); calls without a
    class, with a class that is not an exception, or with a computed pattern are not."""
    found = _read(
        tmp_path,
        """\
        from toyshop.errors import ShelfError
        from toyshop.testing import ErrorInput, Sample

        def error_inputs_take():
            yield ErrorInput(Sample(5), error_type=ShelfError, error_regex="only 2 left")
            return [
                ErrorInput(
                    Sample(-1), error_type=ValueError, error_regex=r"size -1 must be positive"
                ),
                ErrorInput(Sample(0), error_regex="no class"),
                ErrorInput(Sample(0), error_type=Sample, error_regex="not an exception"),
                ErrorInput(Sample(0), error_type=KeyError, error_regex=computed()),
            ]

        CASES = {"neg": dict(exc=(TypeError, ValueError), match="bad value")}
        """,
    )
    assert _summary(found) == [
        (5, "ShelfError", "toyshop.errors.ShelfError", "only 2 left"),
        (7, "ValueError", "builtins.ValueError", "size -1 must be positive"),
        (15, "TypeError", "builtins.TypeError", "bad value"),
        (15, "ValueError", "builtins.ValueError", "bad value"),
    ]
    assert all(e.record for e in found)
    assert found[0].code == (
        'ErrorInput(Sample(5), error_type=ShelfError, error_regex="only 2 left")'
    )
    assert found[1].code.splitlines()[0] == "ErrorInput("
    assert found[0].function == "error_inputs_take"


def test_rows_naming_no_class_take_their_makers_default(tmp_path: Path) -> None:
    """A row that leaves the class out expects what its maker's constructor defaults to, where
    that constructor (in a file read too) takes a pattern; a maker without such a default, or
    one not read, gives nothing."""
    _write(
        tmp_path,
        "pkg/testing/core.py",
        """\
        class ErrorInput:
            def __init__(self, sample, *, error_type=RuntimeError, error_regex):
                self.error_type = error_type

        class Plain:
            def __init__(self, sample, error_regex, kind=None):
                self.kind = kind
        """,
    )
    _write(
        tmp_path,
        "pkg/testing/inputs.py",
        """\
        from pkg.testing.core import ErrorInput, Plain
        from elsewhere import Other

        def error_inputs():
            yield ErrorInput(0, error_regex="step must be nonzero")
            yield Plain(0, error_regex="no default class")
            yield Other(0, error_regex="maker not read")
        """,
    )
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "testing" / "__init__.py").write_text("", encoding="utf-8")
    found, failures = read_expectations([Path("pkg/testing/*.py")], cwd=tmp_path)
    assert failures == ()
    assert _summary(list(found)) == [
        (5, "RuntimeError", "builtins.RuntimeError", "step must be nonzero")
    ]
    assert found[0].record and found[0].path == "pkg/testing/inputs.py"


def test_glob_patterns_read_every_python_file_they_match(tmp_path: Path) -> None:
    """A pattern reads the files it matches whatever their names; one matching nothing is a
    failure, and reading goes on."""
    _write(
        tmp_path,
        "pkg/testing/tables/inputs.py",
        'CASES = [dict(error_type=ValueError, error_regex="size must be positive")]\n',
    )
    _write(tmp_path, "pkg/testing/notes.txt", 'dict(error_type=ValueError, error_regex="x")\n')
    found, failures = read_expectations(
        [Path("pkg/testing/**/*.py"), Path("none/*.py")], cwd=tmp_path
    )
    assert [(e.path, e.pattern) for e in found] == [
        ("pkg/testing/tables/inputs.py", "size must be positive")
    ]
    assert [(f.path, f.message) for f in failures] == [
        ("none/*.py", "no file matches this pattern")
    ]


def test_reads_this_repository_tests() -> None:
    """Over errcat's own tests folder: many expectations, no failures, builtins resolved."""
    root = Path(__file__).resolve().parents[2]
    found, failures = read_expectations([Path("tests")], cwd=root)
    assert failures == ()
    assert len(found) > 50
    assert any(
        e.path == "tests/core/test_config.py"
        and e.qualified_name == "catalog.core.config.ConfigError"
        for e in found
    )


# Pairing --------------------------------------------------------------------------------------


def _entry(entry_id: str, exception: str, message: str, name: str = "Err") -> Entry:
    return entry_of(message, exception, entry_id=entry_id, name=name, module="toyshop.shelf")


def _expect(
    qualified: str | None, pattern: str | None, exception: str | None = None, line: int = 1
) -> Expectation:
    written = exception or (qualified or "X").rpartition(".")[2]
    return Expectation("tests/test_x.py", line, written, qualified, pattern, "code", "test")


CACHE = _entry("a" * 16, "ValueError", "invalid value {value} for the cache", "InvalidCacheValue")
SIZE = _entry("b" * 16, "ValueError", "size {size} must be positive", "SizeNotPositive")
STOCK = _entry("c" * 16, "toyshop.errors.OutOfStock", "only {left} left of {sku!r}", "OutOfStock")


def _pairs(
    entries: list[Entry], *expectations: Expectation, generated: str | None = None
) -> dict[str, list[int]]:
    result = pair_tests(entries, list(expectations), generated_module=generated)
    return {entry_id: [e.line for e in found] for entry_id, found in result.items()}


@pytest.mark.parametrize(
    "pattern",
    [
        r"invalid value \d+ for",
        "invalid value",
        r"^invalid value .* for the cache$",
        r"value [a-z]+ for the",
        r"value 7 for",
        r"inv(al)+id value",
        r"(?i)INVALID VALUE",
        r"for the cache\Z",
        r"nothing|for the",
        r"value '[^']*' for",
        r"value (?:\S+) for th",
        r"\bvalue\b",
    ],
)
def test_patterns_that_agree_with_the_template(pattern: str) -> None:
    """Patterns with regex syntax pair with the template whose messages they find."""
    assert _pairs([CACHE, SIZE], _expect("builtins.ValueError", pattern)) == {CACHE.id: [1]}


@pytest.mark.parametrize(
    "pattern",
    [
        r"invalid value \d+ for the database",  # literal text the template does not have
        r"^value",  # anchored where the template does not start so
        r"the cache for",  # the right words in the wrong order
        r"cache for",  # as much taken by a value as found in the text
        r"some words for the cache",  # a leading value with whitespace
        r"invalid \d+ value",  # a wildcard where the template has literal text
        r"value for the database",
        r"must be positive",  # another entry's text
    ],
)
def test_patterns_that_disagree_do_not_pair(pattern: str) -> None:
    """A pattern no message of the template can satisfy does not pair with it."""
    assert CACHE.id not in _pairs([CACHE, SIZE], _expect("builtins.ValueError", pattern))


@pytest.mark.parametrize(
    ("message", "pattern"),
    [
        ("only {left} left of {sku!r}", "only 2 left"),
        ("only {left} left of {sku!r}", "^only 2 left of 'AB-1'$"),
        ("only {left} left of {sku!r}", "2 left of"),
        ("{version!r} is not a valid version", "'1.x' is not a valid"),
        ("{version!r} is not a valid version", r"'1\.x' is not a valid"),
        ("{version!r} is not a valid version", r"'1\.x\+local' is not a valid version"),
        ("cannot take {count} from {pool}", "^cannot take 3 from the main pool$"),
        ("{a}{b} is odd", "xy is odd"),
    ],
)
def test_patterns_spelling_out_values(message: str, pattern: str) -> None:
    """A literal pattern that writes the placeholders' values pairs with the template."""
    entry = _entry("f" * 16, "ValueError", message)
    assert _pairs([entry, SIZE], _expect("builtins.ValueError", pattern)) == {entry.id: [1]}


def test_a_template_of_short_pieces_does_not_take_in_a_longer_message() -> None:
    """Values spelled out may not be most of the pattern: a message from elsewhere that says
    the template's few words around its own does not pair (torch's tables test C++ messages
    of its RuntimeErrors beside its Python ones)."""
    generic = _entry("f" * 16, "RuntimeError", "Expected {a} but got {b}.")
    other = _entry("e" * 16, "RuntimeError", "size {size} must be positive")
    pattern = (
        r"Expected dim < static_cast<int64_t>\(self_sizes.size\(\)\) to be true, but got false\."
    )
    assert _pairs([generic, other], _expect("builtins.RuntimeError", pattern)) == {}
    short = _expect("builtins.RuntimeError", r"Expected 3 but got 4\.")
    assert _pairs([generic, other], short) == {generic.id: [1]}


def test_gaps_take_values_one_by_one() -> None:
    """Each wildcard may take its own kind of value: no single sample fits both here."""
    entry = _entry("f" * 16, "ValueError", "expected {n} items in {name}")
    pattern = _expect("builtins.ValueError", r"expected \d+ items in [a-z]+")
    assert _pairs([entry, SIZE], pattern) == {entry.id: [1]}


def test_weak_agreement_gives_way_to_a_strong_one() -> None:
    """A pattern read into a value's place only when no entry has it as literal text."""
    plain = _entry("d" * 16, "ValueError", "invalid value for {name}")
    weak = _expect("builtins.ValueError", "invalid value for")
    assert _pairs([CACHE, SIZE], weak) == {CACHE.id: [1]}
    assert _pairs([CACHE, plain], weak) == {plain.id: [1]}


def test_pattern_of_another_entry_pairs_with_that_one() -> None:
    assert _pairs([CACHE, SIZE], _expect("builtins.ValueError", r"size \d+ must")) == {SIZE.id: [1]}


def test_class_mismatch_does_not_pair() -> None:
    """Same words, other class: a TypeError test, a base class or an unresolved name."""
    assert _pairs([CACHE], _expect("builtins.TypeError", "invalid value")) == {}
    assert _pairs([CACHE], _expect("builtins.Exception", "invalid value")) == {}
    assert _pairs([CACHE], _expect(None, "invalid value", exception="ValueError")) == {}
    assert _pairs([STOCK], _expect("other.errors.OutOfStock", None)) == {}
    assert _pairs([STOCK], _expect("toyshop.errors.OutOfStock", "only 2 left")) == {STOCK.id: [1]}


def test_reexported_and_generated_classes() -> None:
    """A package-level re-export pairs; the generated class pairs by its name, in the generated
    module when that is given."""
    assert _pairs([STOCK], _expect("toyshop.OutOfStock", None)) == {STOCK.id: [1]}
    assert _pairs([STOCK], _expect("toyshop.errors.sub.OutOfStock", None)) == {}
    generated = _expect("runtime.errors.InvalidCacheValue", "invalid value")
    assert _pairs([CACHE, SIZE], generated) == {CACHE.id: [1]}
    assert _pairs([CACHE, SIZE], generated, generated="runtime.errors") == {CACHE.id: [1]}
    assert _pairs([CACHE, SIZE], generated, generated="elsewhere") == {}
    # Named through a star import, the class does not resolve: its name as written still counts.
    star = _expect(None, None, exception="InvalidCacheValue")
    assert _pairs([CACHE, SIZE], star) == {CACHE.id: [1]}


def test_missing_pattern_pairs_only_when_unambiguous() -> None:
    assert _pairs([CACHE], _expect("builtins.ValueError", None)) == {CACHE.id: [1]}
    assert _pairs([CACHE, SIZE], _expect("builtins.ValueError", None)) == {}
    assert _pairs([CACHE, SIZE, STOCK], _expect("toyshop.errors.OutOfStock", None)) == {
        STOCK.id: [1]
    }


def test_pattern_agreeing_with_several_entries_pairs_with_none() -> None:
    other = _entry("d" * 16, "ValueError", "invalid value {value} for the pool")
    assert _pairs([CACHE, other], _expect("builtins.ValueError", "invalid value")) == {}
    assert _pairs([CACHE, other], _expect("builtins.ValueError", "the pool")) == {other.id: [1]}


def test_invalid_regex_is_skipped() -> None:
    assert _pairs([CACHE], _expect("builtins.ValueError", "invalid value (")) == {}
    assert _pairs([CACHE], _expect("builtins.ValueError", "[")) == {}


def test_key_error_message_is_quoted() -> None:
    """str(KeyError(text)) quotes the text, and a test's anchored pattern sees the quotes."""
    missing = _entry("e" * 16, "KeyError", "no sku {sku}")
    assert _pairs([missing], _expect("builtins.KeyError", r"^'no sku \w+'$")) == {missing.id: [1]}


def test_pairings_are_in_path_and_line_order() -> None:
    found = [
        Expectation("tests/test_z.py", 3, "ValueError", "builtins.ValueError", "cache", "", None),
        Expectation("tests/test_a.py", 9, "ValueError", "builtins.ValueError", "cache", "", None),
        Expectation("tests/test_a.py", 2, "ValueError", "builtins.ValueError", "cache", "", None),
    ]
    result = pair_tests([CACHE, SIZE], found)
    assert [(e.path, e.line) for e in result[CACHE.id]] == [
        ("tests/test_a.py", 2),
        ("tests/test_a.py", 9),
        ("tests/test_z.py", 3),
    ]


def test_read_then_pair_end_to_end(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "tests/test_cache.py",
        """\
        import pytest

        def test_cache():
            with pytest.raises(ValueError, match=r"invalid value \\d+ for"):
                pass
            with pytest.raises(ValueError, match="must be positive"):
                pass
        """,
    )
    found, _ = read_expectations([Path("tests")], cwd=tmp_path)
    result = pair_tests([CACHE, SIZE], found)
    assert {k: [e.line for e in v] for k, v in result.items()} == {CACHE.id: [4], SIZE.id: [6]}


# Configuration --------------------------------------------------------------------------------


def _project(tmp_path: Path, table: str, *folders: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent(table), encoding="utf-8")
    for folder in folders:
        (tmp_path / folder).mkdir()
    return tmp_path.resolve()


def test_tests_default_prefers_tests_then_test(tmp_path: Path) -> None:
    assert load_config(_project(tmp_path / "a", "", "tests", "test")).tests == (
        tmp_path.resolve() / "a" / "tests",
    )
    assert load_config(_project(tmp_path / "b", "", "test")).tests == (
        tmp_path.resolve() / "b" / "test",
    )
    assert load_config(_project(tmp_path / "c", "")).tests == ()


def test_tests_explicit(tmp_path: Path) -> None:
    root = _project(tmp_path, '[tool.errcat]\ntests = ["checks", "more/test_x.py"]\n', "tests")
    assert load_config(root).tests == (root / "checks", root / "more/test_x.py")
    root = _project(tmp_path / "none", "[tool.errcat]\ntests = []\n", "tests")
    assert load_config(root).tests == ()


@pytest.mark.parametrize("value", ['"tests"', "[1]", '[""]', "true"])
def test_tests_bad_value(tmp_path: Path, value: str) -> None:
    root = _project(tmp_path, f"[tool.errcat]\ntests = {value}\n")
    with pytest.raises(ConfigError, match=r"tests has value .*; expected a list of folder"):
        load_config(root)


def test_a_template_of_placeholders_only_agrees_weakly_with_any_pattern() -> None:
    """`{msg}` prints any text: a test with a pattern pairs with it as one without does, when
    it is the class's only candidate, and gives way to an entry whose own text agrees."""
    anything = _entry("e" * 16, "jinja2.exceptions.TemplateAssertionError", "{msg}", "Assert")
    worded = _entry(
        "f" * 16, "jinja2.exceptions.TemplateAssertionError", "No test named {name!r}.", "NoTest"
    )
    test = _expect("jinja2.exceptions.TemplateAssertionError", "No test named 'f'")
    assert _pairs([anything], test) == {anything.id: [1]}
    assert _pairs([anything, worded], test) == {worded.id: [1]}
    other = _entry("9" * 16, "jinja2.exceptions.TemplateAssertionError", "{reason}", "Other")
    assert _pairs([anything, other], test) == {}
