"""`extractor.fstrings`: f-string templates read from the source give exactly what libcst's
reading of the same source gives, and unusual spellings are left to libcst (None)."""

from __future__ import annotations

import libcst as cst
import pytest

from extractor.fstrings import joined_template
from extractor.templates import template_of

SOURCES = [
    'f"plain"',
    "f'{x}'",
    'f"value {x!r} of {obj.attr[0]} and {call(a, b=2)}"',
    'f"{x:>{width}.{precision}f} end"',
    'f"{n = }"',
    'f"{n=!r:>10}"',
    'f"{ n }"',
    'f"{a != b} {a == b} {a <= b}"',
    'f"braces {{kept}} and {x}"',
    'f"tab\\t{x}\\n"',
    'f"\\N{EM DASH} {x}"',
    'rf"raw \\d+ {x}"',
    "f\"{d['key']}\"",
    'f"{(lambda y: y)(x)}"',
    "f\"{ {'a': 1}[k] }\"",
    '"plain " f"then {x}"  # a comment\n    " and more"',
    '"a" \\\n    f"{b}"',
    'f"""multi\n{x}\nline"""',
    "f'''{x!s:^{w}}'''",
    'f"{x:%Y-%m-%d}"',
    'F"{x}" u"tail {not a field}"',
    'f"\\{x}"',
]


@pytest.mark.parametrize("source", SOURCES)
def test_the_source_reader_agrees_with_libcst(source: str) -> None:
    expected = template_of(cst.parse_expression("(" + source + ")").with_changes(lpar=(), rpar=()))
    assert joined_template(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        'b"bytes"',
        'f"{x:{y!r}}" b"mixed"',
        "f\"{rf'{y}'}\"",
        'f"unclosed {x"',
        "name",
        "",
    ],
)
def test_what_the_reader_does_not_cover_is_left_to_libcst(source: str) -> None:
    assert joined_template(source) is None
