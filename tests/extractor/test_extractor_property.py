"""The extractor against an oracle it shares no code with, on generated modules.

Hypothesis writes Python modules full of raise statements in every form the grammar allows
(bare, names, calls with literal, f-string, concatenated, `.format` and `%` messages, `from`
causes, multi-line calls) inside functions, classes, async code, decorators and every compound
statement, among distractors: the word `raise` in comments, strings, docstrings and identifiers,
and unicode identifiers that make character and byte columns differ. The oracle is the standard
library's `tokenize`: the `raise` keyword is a NAME token exactly where a raise statement starts.
"""

from __future__ import annotations

import ast
import io
import tokenize
import warnings
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractor import extract_source

SETTINGS = settings(
    max_examples=200,
    deadline=None,  # a loaded 2-core CI machine must not turn slowness into failures
    derandomize=True,  # the same examples on every run: CI failures reproduce
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

NAMES = ["value", "size", "ñame", "größe", "变量", "данные", "x1", "_private"]
EXCEPTIONS = ["ValueError", "RuntimeError", "errors.PoolError", "builtins.TypeError", "Ошибка"]


@dataclass(frozen=True)
class Block:
    """A compound statement: clauses, each a header line (or lines) and an indented body."""

    clauses: tuple[tuple[str, int, tuple[Block | str, ...]], ...]
    """(header, extra indent, body): `try:` then `except E as exc:`; a `case` is one level in."""


Statement = Block | str


def _literal(text: str) -> str:
    # repr() always gives a valid literal, whatever the drawn text holds (quotes, controls).
    return repr(text)


words = st.text(alphabet=st.sampled_from(list("abc raise {}'\"\\%é中\t")), min_size=0, max_size=12)
names = st.sampled_from(NAMES)


@st.composite
def messages(draw: st.DrawFn) -> str:
    """A message argument in one of the forms the extractor distinguishes."""
    kind = draw(st.integers(0, 8))
    text = draw(words).replace("{", "").replace("}", "")
    name = draw(names)
    if kind == 0:
        return _literal(draw(words))
    if kind == 1:
        spec = draw(st.sampled_from(["", "!r", ":>8", "!r:^10", ".attr"]))
        return f'f"{text.replace(chr(92), "").replace(chr(34), "")} {{{name}{spec}}} raise"'
    if kind == 2:
        return f"{_literal(text)} + str({name})"
    if kind == 3:
        return f'{_literal(text)} "raise" {_literal(text)}'  # implicit concatenation
    if kind == 4:
        return f'"{{}} raise {{!r}}".format({name}, {name})'
    if kind == 5:
        return f'"%s: raise %d" % ({name}, 3)'
    if kind == 6:
        return name  # a variable holding the message
    if kind == 7:
        return f'"""raise\n{text.replace(chr(92), "").replace(chr(34), "")}\n"""'
    return f"({_literal(text)}\n    {_literal(text)})"


@st.composite
def raises(draw: st.DrawFn) -> str:
    """One raise statement (possibly spanning lines), maybe after `;` or with a comment."""
    exception = draw(st.sampled_from(EXCEPTIONS))
    form = draw(st.integers(0, 9))
    if form == 0:
        statement = "raise"
    elif form == 1:
        statement = f"raise {exception}"
    elif form == 2:
        statement = f"raise {exception}()"
    elif form == 3:
        statement = f"raise {exception}({draw(messages())})"
    elif form == 4:
        statement = f"raise {exception}({draw(messages())}) from {draw(names)}"
    elif form == 5:
        statement = f"raise {exception}({draw(messages())}) from None"
    elif form == 6:
        statement = f"raise {exception}(\n    {draw(messages())},\n    code=1,\n)"
    elif form == 7:
        statement = f"raise {exception}({draw(messages())}, key=lambda: {draw(names)})"
    elif form == 8:
        statement = f"raise ({exception} if {draw(names)} else RuntimeError)"
    else:
        statement = f"raise {exception}({draw(messages())}).with_traceback(None)"
    if draw(st.booleans()):
        statement = f"{draw(names)} = 1; {statement}"
    if draw(st.booleans()) and "\n" not in statement:
        statement += "  # raise it again later"
    return statement


DISTRACTORS = [
    "pass",
    "# raise ValueError('commented out')",
    "text = \"raise ValueError('in a string')\"",
    "raise_count = 1",
    "ñraise = _raise = raised = 2",
    "handler = lambda: (_ for _ in ()).throw(ValueError('raise'))",
    '"""A docstring that says: raise ValueError."""',
    "note = f\"{'raise'} {1 + 1}\"",
    "größe = 変数 = 3",
    "value = [\n    'raise',\n    # raise\n]",
]

simple = st.one_of(raises(), st.sampled_from(DISTRACTORS))


def _compound(body: st.SearchStrategy[tuple[Statement, ...]]) -> st.SearchStrategy[Block]:
    def one(header: str) -> st.SearchStrategy[Block]:
        return body.map(lambda b: Block(((header, 0, b),)))

    def two(first: str, second: str) -> st.SearchStrategy[Block]:
        return st.tuples(body, body).map(lambda b: Block(((first, 0, b[0]), (second, 0, b[1]))))

    cases = st.tuples(body, body).map(
        lambda b: Block((("match value:", 0, ()), ("case 1:", 1, b[0]), ("case _:", 1, b[1])))
    )
    return st.one_of(
        one("def function(a, b=1, *args, ñ=2, **kwargs):"),
        one("async def handler(self):"),
        one("class Pool:"),
        one("@decorate(raise_on='error')\ndef decorated():"),
        one("if ñame:"),
        two("if value > 3:", "else:"),
        two("try:", "except (ValueError, KeyError) as exc:"),
        two("try:", "finally:"),
        one("with open(path) as handle, lock:"),
        one("for 变量 in range(3):"),
        one("while False:"),
        cases,
    )


statements: st.SearchStrategy[Statement] = st.recursive(
    simple,
    lambda inner: _compound(st.lists(inner, min_size=1, max_size=4).map(tuple)),
    max_leaves=25,
)


def _render(items: tuple[Statement, ...], indent: str, depth: int) -> list[str]:
    lines: list[str] = []
    for item in items:
        if isinstance(item, str):
            first, *rest = item.split("\n")
            lines.append(indent * depth + first)
            # Continuation lines of a bracketed statement need no particular indent.
            lines.extend(indent * depth + line if line.strip() else line for line in rest)
            continue
        for header, offset, body in item.clauses:
            lines.extend(indent * (depth + offset) + part for part in header.split("\n"))
            inner = _render(body, indent, depth + offset + 1)
            if body and all(line.lstrip().startswith("#") for line in inner):
                inner.append(indent * (depth + offset + 1) + "pass")  # comments are no body
            lines.extend(inner)
    return lines


@st.composite
def modules(draw: st.DrawFn) -> str:
    """The source of a module: a docstring, imports, then generated statements."""
    body = tuple(draw(st.lists(statements, min_size=1, max_size=6)))
    indent = draw(st.sampled_from(["    ", "  ", "\t"]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    head = ['"""Generated module; raise is mentioned here."""', "from pkg import errors", ""]
    return newline.join([*head, *_render(body, indent, 0), ""])


def _oracle(source: str) -> list[tuple[int, int, bool]]:
    """(line, 1-based column, bare?) of every `raise` keyword token."""
    tokens = [
        t
        # newline=None: universal newlines, so a lone "\r" ends a line as it does for Python's
        # own parser (the extractor's lines follow the parser's).
        for t in tokenize.generate_tokens(io.StringIO(source, newline=None).readline)
        if t.type not in (tokenize.NL, tokenize.COMMENT)
    ]
    found = []
    for index, token in enumerate(tokens):
        if token.type == tokenize.NAME and token.string == "raise":
            after = tokens[index + 1]
            bare = after.type in (tokenize.NEWLINE, tokenize.ENDMARKER) or after.string == ";"
            found.append((token.start[0], token.start[1] + 1, bare))
    return found


@SETTINGS
@given(modules())
def test_sites_are_the_raise_tokens(source: str) -> None:
    """Every `raise` keyword token is one site at its line and character column, and no other."""
    ast.parse(source)  # the generator writes valid Python; a failure here is the generator's bug
    expected = _oracle(source)
    result = extract_source(source, "pkg/generated.py", module="pkg.generated")
    assert result.failure is None, result.failure
    assert [(site.line, site.column, site.reraise) for site in result.sites] == expected


@SETTINGS
@given(modules(), st.data())
def test_damaged_modules_never_raise(source: str, data: st.DataObject) -> None:
    """Cut or spliced anywhere, a module gives sites or a positioned failure, never an exception;
    where the damaged text still parses, the sites are still exactly the raise tokens."""
    start = data.draw(st.integers(0, len(source)))
    end = data.draw(st.integers(start, min(len(source), start + 40)))
    insert = data.draw(st.sampled_from(["", "raise", "(", '"', "\\", "\x00", "\t", "é", ":\n"]))
    damaged = source[:start] + insert + source[end:]
    result = extract_source(damaged, "pkg/damaged.py", module="pkg.damaged")
    try:
        # A damaged string may hold an invalid escape such as "\G": a warning for Python, which
        # the suite's warnings-as-errors would otherwise turn into a SyntaxError here.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(damaged)
    except (SyntaxError, ValueError):
        assert result.failure is not None
        assert result.failure.line >= 1 and result.failure.column >= 1
        assert "internal error" not in result.failure.message
        return
    assert result.failure is None, result.failure
    assert [(s.line, s.column, s.reraise) for s in result.sites] == _oracle(damaged)


@pytest.mark.parametrize(
    "damaged",
    [
        # A lone carriage return ends a line for Python's parser, so for the extractor too.
        '"""Doc; raise is mentioned here."""\rraise\nfrom pkg import errors\r\n\r\nraise\r\n',
        # An invalid escape is only a warning: the module parses and has no raise statement.
        '"\\Doc; raise is mentioned here."""\nfrom pkg import errors\n\nfor v in range(3):\n    raise_count = 1\n',
    ],
    ids=["lone-cr", "invalid-escape"],
)
def test_cases_hypothesis_found(damaged: str) -> None:
    """Damaged modules that once disagreed with the oracle: the sites are the raise tokens."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ast.parse(damaged)
    result = extract_source(damaged, "pkg/damaged.py", module="pkg.damaged")
    assert result.failure is None
    assert [(s.line, s.column, s.reraise) for s in result.sites] == _oracle(damaged)
