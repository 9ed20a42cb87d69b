"""What the extractor says about one raise: its template, names, scope, cause and exemption."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from extractor import RaiseSite, extract_source


def extract(source: str, *, path: str = "pkg/mod.py", module: str = "pkg.mod") -> list[RaiseSite]:
    result = extract_source(textwrap.dedent(source), path, module)
    assert result.failure is None, result.failure
    return list(result.sites)


def only(source: str, **kwargs: Any) -> RaiseSite:
    sites = extract(source, **kwargs)
    assert len(sites) == 1, sites
    return sites[0]


TEMPLATES = [
    # Rule 1: literals, implicit concatenation and + of literals.
    ('raise ValueError("bad value")', "bad value"),
    ('raise ValueError("use {x} as is")', "use {{x}} as is"),
    ('raise ValueError("tab\\there")', "tab\there"),
    ("raise ValueError('it''s' \"joined\")", "itsjoined"),
    ('raise ValueError("a " + "b" + "c")', "a bc"),
    # A `+` with a string operand: the other operands are strings too, so each is a field.
    ('raise ValueError("a" + suffix)', "a{suffix}"),
    ('raise ValueError("got " + str(x) + ", want " + repr(y))', "got {str(x)}, want {repr(y)}"),
    ('raise ValueError(("a" + b) + f"{c}")', "a{b}{c}"),
    ('raise ValueError(f"{x = }")', "{x = }"),
    ('raise ValueError(\n    "first line, "\n    "second line"\n)', "first line, second line"),
    ('raise ValueError(r"raw \\d")', "raw \\d"),
    # Rule 2: f-strings keep literal text and fields as written.
    ('raise ValueError(f"bad {kind!r}")', "bad {kind!r}"),
    ('raise ValueError(f"ratio {ratio:.2f} ok")', "ratio {ratio:.2f} ok"),
    ('raise ValueError(f"shape {tuple(t.shape)}")', "shape {tuple(t.shape)}"),
    ('raise ValueError(f"{self.transport_name} is closed")', "{self.transport_name} is closed"),
    ("raise ValueError(f\"key {d['k']}\")", "key {d['k']}"),
    ('raise ValueError(f"{{literal}} {x}")', "{{literal}} {x}"),
    ('raise ValueError(f"line\\n{x}")', "line\n{x}"),
    ('raise ValueError(f"\\x7b{x}\\x7d {{y}}\\t")', "{{{x}}} {{y}}\t"),
    ('raise ValueError(rf"\\d{{2}} {x}")', "\\d{{2}} {x}"),
    ('raise ValueError(f"{x:>{width}}")', "{x:>{width}}"),
    ('raise ValueError(f"{x=}")', "{x=}"),
    ('raise ValueError(f"{a + b!s:>10}")', "{a + b!s:>10}"),
    ('raise ValueError("got " f"{n!r}" " items")', "got {n!r} items"),
    ('raise ValueError(f"a {x}" + " b")', "a {x} b"),
    # Rule 3: str.format and % put the argument's source in the field, inline constants.
    ('raise ValueError("got {} and {}".format(a, b))', "got {a} and {b}"),
    ('raise ValueError("{0.shape} vs {1!r}".format(t, u))', "{t.shape} vs {u!r}"),
    ('raise ValueError("{name:>5}!".format(name=n))', "{n:>5}!"),
    ('raise ValueError("{} has {} items, {!r}".format(x, 3, "s"))', "{x} has 3 items, 's'"),
    ('raise ValueError("{} {{braces}}".format(len(x)))', "{len(x)} {{braces}}"),
    ('raise ValueError("%s vs %r" % (a, b))', "{a} vs {b!r}"),
    ('raise ValueError("bad %d" % n)', "bad {n}"),
    ('raise ValueError("%.2f%%" % ratio)', "{ratio:.2f}%"),
    ('raise ValueError("%s and %d" % (x, 5))', "{x} and 5"),
    ('raise ValueError("%(a)s!" % {"a": v})', "{v}!"),
    ('raise ValueError("%5s|" % name)', "{name:>5}|"),
    # Rule 6: anything else is None, never a guess.
    ('raise ValueError("{} {}".format(a))', None),
    ('raise ValueError("%s %s" % (a,))', None),
    ('raise ValueError("{}".format(*args))', None),
    ("raise ValueError(a + b)", None),
    ('raise ValueError("-" * 3 + b)', None),
    ("raise ValueError(make_message())", None),
    ("raise ValueError(*args)", None),
    ('raise ValueError(b"bytes")', None),
    ("raise ValueError(42)", None),
    ('raise ValueError(", ".join(names))', None),
    ('raise ValueError(message or "default")', None),
]


@pytest.mark.parametrize(("source", "template"), TEMPLATES)
def test_template_rules(source: str, template: str | None) -> None:
    """Each template rule gives the message as written, or None where no rule applies."""
    assert only(source).template == template


RULE_FOUR = [
    (
        """
        def f(kind):
            msg = f"bad {kind}"
            raise ValueError(msg)
        """,
        "bad {kind}",
    ),
    (
        """
        def f(kind):
            message: str = "fixed " "text"
            if kind:
                raise ValueError(message) from None
        """,
        "fixed text",
    ),
    (
        """
        def f(a):
            prefix = "%s failed" % a
            msg = prefix
            raise RuntimeError(msg)
        """,
        "{a} failed",
    ),
    (
        """
        def f(kind):
            msg = "first"
            if kind:
                msg = "second"
            raise ValueError(msg)
        """,
        None,
    ),
    (
        """
        def f(msg):
            raise ValueError(msg)
        """,
        None,
    ),
    (
        """
        def f(kind):
            msg = "base"
            msg += kind
            raise ValueError(msg)
        """,
        "base{kind}",  # built in steps in one block (tests/extractor/test_extractor_built_messages.py)
    ),
    (
        """
        def f(items):
            for item in items:
                if item:
                    raise ValueError(msg)
                msg = "assigned after the raise"
        """,
        None,
    ),
    (
        """
        msg = "module level"
        def f():
            raise ValueError(msg)
        """,
        "module level",  # a module constant assigned once is followed too
    ),
    (
        """
        def f():
            msg = compute()
            raise ValueError(msg)
        """,
        None,
    ),
]


@pytest.mark.parametrize(("source", "template"), RULE_FOUR)
def test_rule_four_follows_a_single_earlier_assignment(source: str, template: str | None) -> None:
    """A message held in a name assigned before the raise is followed where its value is
    certain (once, or built in straight-line steps); nothing else is."""
    assert only(source).template == template


def test_raise_name_without_call() -> None:
    """Rule 5: `raise Name` names the exception and has no template."""
    site = only("raise KeyError")
    assert (site.exception, site.qualified_name, site.template) == (
        "KeyError",
        "builtins.KeyError",
        None,
    )


def test_typed_raise_records_keywords() -> None:
    """A typed raise has no template; its keyword arguments are kept with their source."""
    site = only(
        """
        from runtime.errors import BorrowRequiresMps
        raise BorrowRequiresMps(devices=devices, limit=2 * n)
        """
    )
    assert site.template is None
    assert site.qualified_name == "runtime.errors.BorrowRequiresMps"
    assert site.keywords == (("devices", "devices"), ("limit", "2 * n"))


QUALIFIED = [
    ("raise ValueError('x')", "ValueError", "builtins.ValueError"),
    ("import runtime.errors as errs\nraise errs.Foo('x')", "errs.Foo", "runtime.errors.Foo"),
    ("from runtime.errors import Foo as F\nraise F('x')", "F", "runtime.errors.Foo"),
    ("from runtime import errors\nraise errors.Foo", "errors.Foo", "runtime.errors.Foo"),
    (
        "import numpy\nraise numpy.linalg.LinAlgError",
        "numpy.linalg.LinAlgError",
        "numpy.linalg.LinAlgError",
    ),
    ("from .errors import E\nraise E('x')", "E", "pkg.errors.E"),
    ("from . import errors\nraise errors.E('x')", "errors.E", "pkg.errors.E"),
    ("from ..up import E\nraise E('x')", "E", "up.E"),
    ("class ValueError(Exception): ...\nraise ValueError('x')", "ValueError", "pkg.mod.ValueError"),
    ("Error = ValueError\nraise Error('x')", "Error", "pkg.mod.Error"),
    ("raise Unknown('x')", "Unknown", None),
    ("raise self.error_type('x')", "self.error_type", None),
    ("raise errors[0]('x')", None, None),
    ("raise make_error()('x')", None, None),
]


@pytest.mark.parametrize(("source", "exception", "qualified"), QUALIFIED)
def test_qualified_names(source: str, exception: str | None, qualified: str | None) -> None:
    """Names resolve through imports (aliases included), module definitions and builtins."""
    site = only(source)
    assert (site.exception, site.qualified_name) == (exception, qualified)


def test_locals_do_not_resolve_and_local_imports_do() -> None:
    """A local variable or handler name resolves to None; a function-local import resolves."""
    sites = extract(
        """
        import errors

        def f():
            from runtime.errors import Foo
            raise Foo("x")

        def g():
            error = make()
            raise error

        def h():
            try:
                pass
            except OSError as exc:
                raise exc

        def k(ValueError):
            raise ValueError("shadowed by a parameter")
        """
    )
    assert [site.qualified_name for site in sites] == ["runtime.errors.Foo", None, None, None]


def test_functions_are_dotted_through_classes_and_nesting() -> None:
    """`function` is the dotted path of enclosing classes and functions, None at module level."""
    sites = extract(
        """
        import functools

        class Outer:
            class Inner:
                @functools.cache
                def method(self, key=lambda item: item):
                    raise ValueError("method")

            async def run(self):
                async with lock:
                    raise RuntimeError("async")

        def outer():
            def inner():
                raise KeyError("nested")
            handler = lambda: None
            raise TypeError("after a lambda")

        if DEBUG:
            raise SystemExit("module level")
        """
    )
    assert [site.function for site in sites] == [
        "Outer.Inner.method",
        "Outer.run",
        "outer.inner",
        "outer",
        None,
    ]


def test_cause_and_reraise() -> None:
    """`cause` is the source after `from`; a bare `raise` is a re-raise without an exception."""
    sites = extract(
        """
        try:
            work()
        except KeyError as exc:
            raise ValueError("missing") from exc
        except OSError:
            raise RuntimeError("io") from None
        except TypeError as exc:
            raise LookupError("chained") from exc.__cause__
        except Exception:
            raise
        """
    )
    assert [(s.cause, s.reraise, s.exception) for s in sites] == [
        ("exc", False, "ValueError"),
        ("None", False, "RuntimeError"),
        ("exc.__cause__", False, "LookupError"),
        (None, True, None),
    ]


def test_ignore_comments() -> None:
    """`# errcat: ignore[reason]` on the raise line exempts it; look-alikes in strings do not."""
    sites = extract(
        """
        raise ValueError("a")  # errcat: ignore[legacy api]
        raise ValueError("# errcat: ignore[in a string]")
        raise ValueError(  # errcat: ignore[multi-line]
            "b"
        )
        raise ValueError("c")
        # errcat: ignore[on the next line]
        if x: raise ValueError("d")  # errcat: ignore[one-line if]  # noqa: E701
        raise ValueError("e")  # errcat: ignore
        """
    )
    assert [site.ignored for site in sites] == [
        "legacy api",
        None,
        "multi-line",
        None,
        "one-line if",
        None,
    ]


def test_an_ignore_comment_counts_on_any_line_of_its_raise() -> None:
    """A formatter that wraps a long raise moves its trailing comment to the closing
    parenthesis or an argument's line: the comment still exempts the raise, and a comment
    after the statement's end does not."""
    sites = extract(
        """
        raise ValueError(
            "a long message that a formatter wrapped onto its own line"
        )  # errcat: ignore[moved by the formatter]
        raise ValueError(
            "b"  # errcat: ignore[on an argument]
        )
        raise ValueError("c")
        x = 1  # errcat: ignore[another statement]
        """
    )
    assert [site.ignored for site in sites] == [
        "moved by the formatter",
        "on an argument",
        None,
    ]


def test_positions_are_one_based_characters() -> None:
    """Lines and columns are 1-based; columns count characters, not UTF-8 bytes."""
    sites = extract('x = "é€"; raise ValueError("y")\n\nif x:\n    raise KeyError\n')
    assert [(site.line, site.column) for site in sites] == [(1, 11), (4, 5)]
    assert (sites[0].end_line, sites[0].end_column) == (1, 32)


def test_several_raises_on_one_line() -> None:
    """Statements joined by `;` are separate sites."""
    sites = extract("raise A; raise B\n")
    assert [(site.exception, site.column) for site in sites] == [("A", 1), ("B", 10)]


def test_context_is_the_short_enclosing_function() -> None:
    """A function of at most 40 lines is the context, from its first decorator."""
    site = only(
        """
        x = 1

        @decorator
        def f(a):
            if a:
                raise ValueError("a")
            return a
        """
    )
    assert site.context is not None
    assert site.context.start_line == 4
    assert site.context.highlight_line == site.line == 7
    assert site.context.code.splitlines()[0] == "@decorator"
    assert site.context.code.splitlines()[-1] == "    return a"


def test_context_is_a_window_in_long_functions() -> None:
    """In a function longer than 40 lines (or at module level) the context is 20 lines each way."""
    body = "".join(f"    x{i} = {i}\n" for i in range(60))
    source = f"def f():\n{body}    raise ValueError('late')\n{body}"
    site = only(source)
    assert site.context is not None
    assert (site.context.start_line, site.context.highlight_line) == (site.line - 20, site.line)
    assert len(site.context.code.splitlines()) == 41


def test_raise_word_in_strings_and_comments_is_not_a_site() -> None:
    """Only raise statements are sites, not the word in a docstring, comment or name."""
    sites = extract(
        '''
        def f():
            """We raise here."""
            # raise in a comment
            raise_error = "raise"
            raise ValueError("raise it")
        '''
    )
    assert [site.line for site in sites] == [6]


def test_entry_is_never_set_by_the_extractor() -> None:
    """The extractor leaves `entry` null: only the scan command asks the catalog."""
    assert only('raise ValueError("x")').as_dict()["entry"] is None
