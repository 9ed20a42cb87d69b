"""`catalog.gate.check`'s helpers, case by case: each pins a behaviour that a mutant of the checker
once changed unnoticed (bench/mutation.py). Whole-check findings are in
tests/gate/test_check_findings.py; these are the pieces those findings are built from.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest
from helpers import write_files
from test_check_findings import project  # noqa: F401  (the fixture: a small checked project)

from catalog.cli import main
from catalog.core.findings import Finding, Severity
from catalog.gate.check import (
    CheckResult,
    _file_facts,
    _ignore_comments,
    message_shape,
    paused_collector,
    sort_findings,
)


@pytest.mark.parametrize(
    ("message", "shape"),
    [
        ("{name} must be on {expected}", "{} must be on {}"),
        ("{t!r} is bad", "{!r} is bad"),
        ("got {n:>5} items", "got {:>5} items"),
        ("got {n!s:>5}", "got {!s:>5}"),
        ("a {{literal}} {x}", "a {{literal}} {}"),
        ("no fields at all", "no fields at all"),
        ("{key}", None),  # no literal text to recognise it by
        ("  {key}  ", None),  # blanks are no words either
        ("{a}{b}", None),
        ("unclosed {", None),
    ],
    ids=lambda value: "none" if value is None else value.replace("{", "(").replace("}", ")"),
)
def test_message_shape(message: str, shape: str | None) -> None:
    """A message's shape leaves out its placeholders' names and keeps conversions and specs."""
    assert message_shape(message) == shape


def test_ignore_comments_are_found_with_their_positions() -> None:
    """Each `# errcat: ignore[reason]` comment gives its 1-based line and column and reason;
    other comments and strings that look like one do not count."""
    source = (
        "x = 1  # errcat: ignore[kept for upstream]\n"
        "s = '# errcat: ignore[in a string]'\n"
        "    # unrelated comment\n"
        "#errcat:ignore[]\n"
        "y = 2  # note   #  errcat:  ignore[two words]\n"
    )
    assert _ignore_comments(source) == [
        (1, 8, "kept for upstream"),
        (4, 1, ""),
        (5, 8, "two words"),
    ]


def test_ignore_comments_of_untokenizable_source() -> None:
    """Source that cannot be tokenized has none (the scan stage reports it)."""
    assert _ignore_comments("x = (\n# errcat: ignore[r]\n") == []


def test_file_facts() -> None:
    """A file's ignore comments and the classes it defines, each at its first definition;
    `class` inside a line is no definition."""
    data = (
        b"class First:\n"
        b"    pass\n"
        b"x = 'class Inline: pass'  # errcat: ignore[why]\n"
        b"\n"
        b"  class Nested(First):\n"
        b"class First:\n"
        b"\tclass Tabbed: ...\n"
    )
    comments, classes = _file_facts(data)
    assert comments == (3, 27, "why")
    assert classes == ("First", 1, "Nested", 5, "Tabbed", 7)


@pytest.mark.parametrize(
    "data",
    [
        b"x = 1\nclass Foo(Exception): ...\n",
        b"x = 1\r\nclass Foo(Exception): ...\r\n",
        b"x = 1\rclass Foo(Exception): ...\r",
        b"x = 1\r\r\n\rclass A:\r  class B: ...\n\fclass C: ...\r\nclass D: ...\n",
        b"x = 1\r\n\r\n\fclass Fed:\r \f   class Inner: ...\rclass Last: ...",
    ],
    ids=["lf", "crlf", "lone-cr", "mixed", "form-feed"],
)
def test_file_facts_lines_agree_with_ast(data: bytes) -> None:
    """Whatever the line endings (LF, CRLF, a lone CR) and a form feed in the indentation,
    the classes found and their lines are those Python's own parser sees in the bytes."""
    import ast

    parsed = ast.parse(data)
    expected: list[object] = []
    defined = [node for node in ast.walk(parsed) if isinstance(node, ast.ClassDef)]
    for node in sorted(defined, key=lambda node: node.lineno):
        expected += (node.name, node.lineno)
    assert expected, "each case defines a class"
    assert _file_facts(data)[1] == tuple(expected)


def test_file_facts_form_feed_is_no_line_end() -> None:
    """A form feed inside a line is a blank, as Python reads it: `class` after one, behind
    other code, is no definition."""
    assert _file_facts(b"x = 1\fclass Foo: ...\n")[1] == ()


def test_file_facts_without_errcat_or_undecodable() -> None:
    """Only a file that mentions errcat is tokenized; undecodable bytes give no comments."""
    assert _file_facts(b"# ignore[x]\nclass A: ...\n") == ((), ("A", 2))
    assert _file_facts(b"# errcat: ignore[x]\n\xff\n") == ((), ())


def finding(path: str, line: int, column: int, severity: Severity) -> Finding:
    return Finding(Path(path), line, column, "m", severity=severity)


def test_sort_findings_puts_errors_first_then_orders_by_place() -> None:
    """Errors before warnings; within each, by path, line and column."""
    warning = finding("a.py", 1, 1, Severity.WARNING)
    late = finding("b.py", 2, 1, Severity.ERROR)
    early = finding("b.py", 1, 9, Severity.ERROR)
    right = finding("b.py", 1, 10, Severity.ERROR)
    other = finding("a.py", 9, 9, Severity.ERROR)
    assert sort_findings([warning, late, right, early, other]) == [
        other,
        early,
        right,
        late,
        warning,
    ]


def test_result_counts_errors_and_warnings() -> None:
    """`errors` and `warnings` count findings of each severity."""
    result = CheckResult(
        findings=[
            finding("a.py", 1, 1, Severity.ERROR),
            finding("a.py", 2, 1, Severity.WARNING),
            finding("a.py", 3, 1, Severity.ERROR),
        ]
    )
    assert (result.errors, result.warnings) == (2, 1)
    assert (CheckResult().errors, CheckResult().warnings) == (0, 0)


def test_paused_collector_restores_the_collectors_state() -> None:
    """The collector is off inside the block and as it was afterwards, even after an error."""
    assert gc.isenabled()
    with pytest.raises(KeyError), paused_collector():
        assert not gc.isenabled()
        raise KeyError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_collector():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


# -- every finding of a whole check run carries its stage ----------------------------------------

PROBE_SOURCE = """\
from pkg.errors import PoolEmpty


class Helper:
    pass


def f(t):
    if t == 1:
        raise ValueError("third-party wording")  # errcat: ignore[upstream's text]
    if t == 2:
        raise OSError(
            "spread over lines"
        )  # errcat: ignore[moved by a formatter: still the raise's]
    if t == 3:
        raise PoolEmpty()  # errcat: ignore[]
    try:
        pass
    except ValueError as err:
        raise err  # errcat: ignore[not needed]
    # errcat: ignore[on no raise]
    raise TypeError("uncatalogued")
"""

EXTRA_ENTRY = """\
module: pkg.base
errors:
  - id: "00000000000000b1"
    name: Helper
    exception: ValueError
    status: draft
    message: "helper {x} failed"
"""


@pytest.mark.usefixtures("project")
def test_findings_of_a_check_run_name_their_stage(capsys: pytest.CaptureFixture[str]) -> None:
    """Each finding says which stage found it; files after one that cannot be parsed are
    still checked, and so are the exemptions after a valid one."""
    write_files(
        Path.cwd(),
        {
            "pkg/a_broken.py": "def f(:\n    pass  # errcat: ignore[in a broken file]\n",
            "pkg/probe.py": PROBE_SOURCE,
            "knowledge/extra.yaml": EXTRA_ENTRY,
        },
    )
    capsys.readouterr()
    assert main(["check", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    found = [
        (f["stage"], f"{f['path']}:{f['line']}:{f['column']}", f["message"].split(";")[0][:40])
        for f in report["findings"]
    ]
    assert found == [
        ("entries", "knowledge/extra.yaml:3:5", "entry 00000000000000b1 (Helper) is raise"),
        ("entries", "knowledge/extra.yaml:4:11", "name Helper is also a class of the packa"),
        ("sites", "pkg/a_broken.py:1:7", "cannot scan: cannot parse: invalid synta"),
        ("codegen", "pkg/errors.py:1:1", "the generated module is stale: it differ"),
        ("exemptions", "pkg/probe.py:16:9", "exemption [] on a catalogued raise of Po"),
        ("exemptions", "pkg/probe.py:20:9", "exemption [not needed] on a re-raise is "),
        ("exemptions", "pkg/probe.py:21:5", "exemption [on no raise] matches no raise"),
        ("sites", "pkg/probe.py:22:5", "uncatalogued raise of TypeError"),
        ("drafts", "knowledge/base.yaml:3:5", "entry 00000000000000a1 (WrongDevice) is "),
        ("drafts", "knowledge/base.yaml:8:5", "entry 00000000000000a2 (PoolEmpty) is a "),
        ("drafts", "knowledge/base.yaml:19:5", "entry 00000000000000a4 (PoolClosedError)"),
        ("drafts", "knowledge/base.yaml:24:5", "entry 00000000000000a5 (MissingKey) is a"),
        ("drafts", "knowledge/extra.yaml:3:5", "entry 00000000000000b1 (Helper) is a dra"),
    ]


def test_ignore_comments_after_a_lone_carriage_return() -> None:
    """A lone CR ends a line, as when Python reads the file."""
    assert _ignore_comments("x = 1\r# errcat: ignore[a]\r") == [(2, 1, "a")]


def test_file_facts_count_lines_from_the_start_of_the_file() -> None:
    """Every ignore comment is kept; a file may start with a blank line; text before `class`
    on its line, even one character and a blank, makes it no definition."""
    data = b"\nclass Late:  # errcat: ignore[one]\nX class NotOne\ny = 1  # errcat: ignore[two]\n"
    comments, classes = _file_facts(data)
    assert comments == (2, 14, "one", 4, 8, "two")
    assert classes == ("Late", 2)


def codegen_findings(capsys: pytest.CaptureFixture[str]) -> list[str]:
    capsys.readouterr()
    main(["check", "--json"])
    report = json.loads(capsys.readouterr().out)
    return [f"{f['path']}: {f['message']}" for f in report["findings"] if f["stage"] == "codegen"]


@pytest.mark.usefixtures("project")
def test_a_changed_site_url_makes_the_cached_module_stale(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The generated module holds the docs URL: once mkdocs.yml changes it, check says the
    module is stale even though the catalog, and so the cache's catalog key, did not change;
    the same mkdocs.yml again is served from the cache and stays clean."""
    assert codegen_findings(capsys) == []
    write_files(Path.cwd(), {"mkdocs.yml": "site_name: x\nsite_url: https://docs.example/\n"})
    stale = [
        "pkg/errors.py: the generated module is stale: it differs from what the catalog generates"
    ]
    assert codegen_findings(capsys) == stale
    assert main(["codegen"]) == 0
    assert codegen_findings(capsys) == []
    assert codegen_findings(capsys) == []
    (Path.cwd() / "mkdocs.yml").unlink()
    assert codegen_findings(capsys) == stale


@pytest.mark.usefixtures("project")
def test_an_uncatalogued_raise_names_the_exception_an_alias_stands_for(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A raise of an imported alias is reported by the exception it resolves to."""
    write_files(
        Path.cwd(),
        {
            "pkg/probe.py": "from builtins import OSError as Oops\n\n\ndef f():\n    raise Oops('x')\n"
        },
    )
    capsys.readouterr()
    main(["check", "--json"])
    report = json.loads(capsys.readouterr().out)
    found = [f["message"] for f in report["findings"] if f["path"] == "pkg/probe.py"]
    assert found == ["uncatalogued raise of OSError"]


@pytest.mark.usefixtures("project")
def test_an_exempted_raise_worded_like_an_entry_after_one_catalogued_in_place(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The entries recognised by their message's shape include those after an entry of the
    package's own class (which is skipped, not the end of the list)."""
    write_files(
        Path.cwd(),
        {
            "knowledge/extra.yaml": 'module: pkg.base\nerrors:\n  - id: "00000000000000c1"\n'
            "    name: Drained\n    exception: RuntimeError\n    status: draft\n"
            '    message: "the pool drained {n} items"\n',
            "pkg/probe.py": "def f(count):\n"
            "    raise RuntimeError(f'the pool drained {count} items')  # errcat: ignore[old]\n",
        },
    )
    assert main(["codegen"]) == 0
    capsys.readouterr()
    main(["check", "--json"])
    report = json.loads(capsys.readouterr().out)
    found = [f["message"] for f in report["findings"] if f["path"] == "pkg/probe.py"]
    assert found == [
        "exemption [old] hides a raise the catalog covers: RuntimeError with the message of "
        "entry 00000000000000c1"
    ]


def test_file_facts_see_a_class_after_a_form_feed() -> None:
    """A form feed is indentation to Python (`\\f` may start a line before `class`), so the
    class after it is defined; a vertical tab is no indentation (a file with one there does not
    parse), so `class` after it can only be inside a string, as here, and defines nothing."""
    data = (
        b"\x0cclass Paged:\n"
        b"    pass\n"
        b"if True:\n"
        b" \x0c class Inner: ...\n"
        b's = """\n'
        b"\x0bclass InString\n"
        b'"""\n'
        b"class\x0cFed: ...\n"
    )
    assert _file_facts(data) == ((), ("Paged", 1, "Inner", 4, "Fed", 8))


EXEMPTED_UNREADABLE = """\
def f(d, args):
    if d:
        raise ValueError(*args)  # errcat: ignore[passes its arguments on]
    raise ValueError(  # errcat: ignore[a mapping's value]
        d[  # a ) in a comment: the argument's text is no template field
            "k"
        ]
    )
"""


@pytest.mark.usefixtures("project")
def test_exempted_raises_whose_message_cannot_be_read(capsys: pytest.CaptureFixture[str]) -> None:
    """An exempted raise is looked up by its message's shape only when there is a message to
    shape: a raise of unpacked arguments has no template, and one whose only argument holds a
    comment with a lone bracket has a template that cannot be rewritten. Both are exempted with
    a reason and covered by no entry: no finding (without the comments, two), and no error."""

    def probe_findings(source: str) -> list[str]:
        write_files(Path.cwd(), {"pkg/probe.py": source})
        capsys.readouterr()
        main(["check", "--json"])
        report = json.loads(capsys.readouterr().out)
        return [
            f"{f['line']}: {f['message']}"
            for f in report["findings"]
            if f["path"] == "pkg/probe.py"
        ]

    plain = EXEMPTED_UNREADABLE.replace("  # errcat: ignore[", "  # was [")
    assert probe_findings(plain) == [
        "3: uncatalogued raise of ValueError",
        "4: uncatalogued raise of ValueError",
    ]
    assert probe_findings(EXEMPTED_UNREADABLE) == []
