"""Templates of message expressions, case by case: each case pins one rule of
`extractor.templates` that a mutant of it once broke without a test noticing (bench/mutation.py).

A case is the expression's source, the names `follow` resolves (name -> source of its single
assignment), and the template, or None where no rule covers the expression.
"""

from __future__ import annotations

import libcst as cst
import pytest

from extractor.templates import template_of

NO_FOLLOW: dict[str, str] | None = None

CASES: list[tuple[str, dict[str, str] | None, str | None]] = [
    # Literal constants given to .format are inlined, formatted as Python would.
    ('"{}".format(True)', NO_FOLLOW, "True"),
    ('"{}".format(False)', NO_FOLLOW, "False"),
    ('"{}".format(None)', NO_FOLLOW, "None"),
    ('"{}".format(-3)', NO_FOLLOW, "-3"),
    ('"{}".format(-1.5)', NO_FOLLOW, "-1.5"),
    ('"{}".format("a" "b")', NO_FOLLOW, "ab"),
    ('"{}".format(b"x")', NO_FOLLOW, '{b"x"}'),  # bytes are no str constant
    ('"{:>5}".format(1)', NO_FOLLOW, "    1"),
    ('"{!s:>5}".format(True)', NO_FOLLOW, " True"),  # str(True), not int formatting
    ('"{!s}".format(7)', NO_FOLLOW, "7"),
    ('"{!s:d}".format(1)', NO_FOLLOW, None),  # str does not take "d"
    ('"{!a}".format("é")', NO_FOLLOW, "'\\xe9'"),
    ('"{!a:>8}".format("é")', NO_FOLLOW, "  '\\xe9'"),
    ('"{!r}".format("x")', NO_FOLLOW, "'x'"),
    # Fields of .format: auto and manual numbering, stars, nested specs.
    ('"{:{w}}".format(x, w=5)', NO_FOLLOW, "{x:5}"),
    ('"{:{w}}".format(x, w=y)', NO_FOLLOW, "{x:{y}}"),
    ('"{:{}}".format(x)', NO_FOLLOW, None),  # the nested field has no argument
    ('"{}".format(*a, b)', NO_FOLLOW, None),  # b's position depends on a
    ('"{0} {}".format(a, b)', NO_FOLLOW, None),  # manual then automatic numbering
    ('"{} {0}".format(a, b)', NO_FOLLOW, None),  # automatic then manual numbering
    ('"{} {}".format(a)', NO_FOLLOW, None),  # more fields than arguments
    ('"{1}".format(a)', NO_FOLLOW, None),
    ('"{1} {0}".format(a, b)', NO_FOLLOW, "{b} {a}"),
    ('("a" "{}").format(x)', NO_FOLLOW, "a{x}"),
    ('("a" + "{}").format(x)', NO_FOLLOW, "a{x}"),
    ('("a" f"{y}").format(x)', NO_FOLLOW, None),
    ('("a" + b).format(x)', NO_FOLLOW, None),
    ('(b + "a").format(x)', NO_FOLLOW, None),
    ("x.format(y)", NO_FOLLOW, None),
    ('"x".join(y)', NO_FOLLOW, None),
    ("f(x)", NO_FOLLOW, None),
    # String literals.
    ('b"abc"', NO_FOLLOW, None),
    ('B"abc"', NO_FOLLOW, None),
    ('b"a" b"b"', NO_FOLLOW, None),
    ('(b"a" b"{}").format(x)', NO_FOLLOW, None),
    ('r"a\\tb{"', NO_FOLLOW, "a\\tb{{"),
    ('"a\\tb"', NO_FOLLOW, "a\tb"),
    ('rf"a\\tb{x}"', NO_FOLLOW, "a\\tb{x}"),
    ('Rf"a\\tb{x}"', NO_FOLLOW, "a\\tb{x}"),
    ('f"a\\tb{x}"', NO_FOLLOW, "a\tb{x}"),
    # `+`: string operands joined, other operands fields, formatting operands rendered.
    ('"a" + "{}".format(y)', NO_FOLLOW, "a{y}"),
    ('"a" + "%s" % y', NO_FOLLOW, "a{y}"),
    ('"a" + "x".join(y)', NO_FOLLOW, 'a{"x".join(y)}'),
    ("x + y", NO_FOLLOW, None),
    ('"a" + suffix', {"suffix": '"!"'}, "a!"),
    # A name whose value a rule reads is that text, formatting included.
    ('"a" + suffix', {"suffix": '"{}".format(y)'}, "a{y}"),
    ('"a" + suffix', {"suffix": "3"}, "a{suffix}"),
    ('"a" + suffix', {}, "a{suffix}"),
    # Names are followed to their assignment, at most three times.
    ("x", NO_FOLLOW, None),
    ("x.y", NO_FOLLOW, None),
    ("m", {"m": '"x"'}, "x"),
    ("m", {"m": "n", "n": "o", "o": '"x"'}, "x"),
    ("m", {"m": "n", "n": "o", "o": "p", "p": '"x"'}, None),
    ("m", {"m": "n", "n": "o", "o": '"a" + s', "s": '"b"'}, "a{s}"),
    ("m", {"m": '"a" + s', "s": '"b"'}, "ab"),
    ("m", {"m": "m"}, None),
    # printf-style formatting.
    ('"%(n)d items" % {"n": 3}', NO_FOLLOW, "3 items"),
    ('"%(n)s" % {"n": x}', NO_FOLLOW, "{x}"),
    ('"%(a)s" % (x,)', NO_FOLLOW, None),
    ('"%(a)s" % {"b": x}', NO_FOLLOW, None),
    ('"%s" % (x, y)', NO_FOLLOW, None),
    ('"%s %s" % (x,)', NO_FOLLOW, None),
    ('"%s b%" % (x,)', NO_FOLLOW, None),
    ('"%z %s" % (x,)', NO_FOLLOW, None),
    ('"%% %s" % (x,)', NO_FOLLOW, "% {x}"),
    ('"%5%" % ()', NO_FOLLOW, None),
    ('"%*d" % (x,)', NO_FOLLOW, None),
    ('"%.*f" % (x,)', NO_FOLLOW, None),
    ('"%s" % x', NO_FOLLOW, "{x}"),
    ('"%r" % x', NO_FOLLOW, "{x!r}"),
    ('"%a" % x', NO_FOLLOW, "{x!a}"),
    ('"%d" % x', NO_FOLLOW, "{x}"),
    ('"%i" % x', NO_FOLLOW, "{x}"),
    ('"%u" % x', NO_FOLLOW, "{x}"),
    ('"%X" % x', NO_FOLLOW, "{x:X}"),
    ('"%5d" % x', NO_FOLLOW, "{x:5d}"),
    ('"%5i" % x', NO_FOLLOW, "{x:5d}"),
    ('"%-d" % x', NO_FOLLOW, "{x:<d}"),
    ('"%.3d" % x', NO_FOLLOW, "{x:.3d}"),
    ('"%5s" % x', NO_FOLLOW, "{x:>5}"),
    ('"%-5s" % x', NO_FOLLOW, "{x:<5}"),
    ('"%+d" % x', NO_FOLLOW, "{x:+d}"),
    ('"% d" % x', NO_FOLLOW, "{x: d}"),
    ('"%#x" % x', NO_FOLLOW, "{x:#x}"),
    ('"%05d" % x', NO_FOLLOW, "{x:05d}"),
    ('"%-05d" % x', NO_FOLLOW, "{x:<5d}"),
    ('"%.3f" % x', NO_FOLLOW, "{x:.3f}"),
    ('"%.f" % x', NO_FOLLOW, "{x:.0f}"),
    ('"%5.2f" % x', NO_FOLLOW, "{x:5.2f}"),
    ('"%5.2f" % 1.5', NO_FOLLOW, " 1.50"),
    ('"%s and %s" % ("a", 2)', NO_FOLLOW, "a and 2"),
]


def follower(names: dict[str, str] | None):  # type: ignore[no-untyped-def]
    if names is None:
        return None
    return lambda name: cst.parse_expression(names[name]) if name in names else None


def case_id(source: str) -> str:
    # Printable ASCII without backslashes: pytest escapes anything else in a test id, and such
    # an id, handed back to pytest by mutmut, is not found again.
    return "".join(c if " " <= c <= "~" and c != "\\" else "_" for c in source)


@pytest.mark.parametrize(
    ("source", "names", "expected"), CASES, ids=[case_id(case[0]) for case in CASES]
)
def test_template(source: str, names: dict[str, str] | None, expected: str | None) -> None:
    """The expression's template is exactly the expected one (None: no rule covers it)."""
    assert template_of(cst.parse_expression(source), follower(names)) == expected


@pytest.mark.parametrize(
    "source",
    ['"""a\r\nb"""', 'r"""a\\t\r\nb"""', 'f"""a\r\nb"""', '"""a\rb"""'],
    ids=["plain", "raw", "fstring", "lone-cr"],
)
def test_line_ends_in_a_literal_are_pythons(source: str) -> None:
    """A triple-quoted message spanning CRLF (or CR) lines has LF in its template, as Python's
    tokenizer gives it in the value."""
    node = cst.parse_module(f"x = {source}\r\n").body[0].body[0].value  # type: ignore[attr-defined]
    assert template_of(node) == compile_value(source)


def compile_value(source: str) -> str:
    """The literal's value as Python computes it from a file with these exact bytes."""
    namespace: dict[str, str] = {}
    exec(compile(f"x = {source}\r\n", "<crlf>", "exec"), namespace)
    return namespace["x"]
