"""`six.raise_from(X, Y)` is how code that also runs on Python 2 writes `raise X from Y`: such a
call statement is a raise site of `X`, with `Y` as its cause, wherever the name (`raise_from`,
as written) resolves to one of the functions that do it; a function of the same name that is
not one is just a call."""

from __future__ import annotations

import textwrap

from catalog.authoring.migrate import Rewrite, migrate_source
from extractor import extract_source
from extractor.locate import raise_lines

SOURCE = """\
import six
from six import raise_from
import future.utils


def to_ascii(text):
    try:
        return text.encode("ascii")
    except UnicodeEncodeError as e:
        msg = "ISO-8601 strings should contain only ASCII characters"
        six.raise_from(ValueError(msg), e)


def by_name(text):
    if not text:
        raise_from(TypeError(f"empty text: {text!r}"), None)
    future.utils.raise_from(KeyError(text), None)


def not_six(raise_from, text):
    raise_from(ValueError("not a raise"), text)


def keywords(text):
    six.raise_from(ValueError("keywords"), from_value=text)
"""


def test_raise_from_calls_are_raise_sites_with_their_cause() -> None:
    result = extract_source(SOURCE, "pkg/iso.py", "pkg.iso")
    assert not result.failure
    sites = {site.line: site for site in result.sites}
    assert sorted(sites) == [11, 16, 17]
    ascii_site = sites[11]
    assert (ascii_site.qualified_name, ascii_site.template, ascii_site.cause) == (
        "builtins.ValueError",
        "ISO-8601 strings should contain only ASCII characters",
        "e",
    )
    assert (ascii_site.column, ascii_site.function) == (9, "to_ascii")
    # The handler and the `if` around the call are its conditions, as for a raise statement.
    assert [c.kind for c in ascii_site.conditions] == ["except"]
    assert [c.code for c in sites[16].conditions] == ["not text"]
    assert (sites[16].template, sites[16].cause) == ("empty text: {text!r}", "None")
    assert sites[17].qualified_name == "builtins.KeyError"


def test_the_word_raise_from_marks_a_line_to_visit() -> None:
    assert raise_lines("x = 1\nsix.raise_from(E(), e)\nraised = 2\nraise_fromage()\n") == [2]


def test_migrate_rewrites_the_raised_class_inside_the_call() -> None:
    """The scan's site of a `six.raise_from` call is rewritten in place; the message local
    only it read goes with it."""
    after = migrate_source(SOURCE, [Rewrite(11, 9, "NotAsciiError", {})], "pkg.errors")
    assert "        six.raise_from(NotAsciiError(), e)\n" in after
    assert "msg = " not in after
    assert "from pkg.errors import NotAsciiError\n" in after
    untouched = textwrap.dedent(SOURCE).split("def by_name")[1]
    assert after.endswith(untouched)
