"""Messages built from literal text (issue 24): `textwrap.dedent`/`inspect.cleandoc` of a literal,
`"sep".join` of literals, module-level string constants, and a local extended by `+=`.

Each rule yields a template only when every part is covered; the negative cases pin what the
extractor gave before these rules (None, or the fields of `+`), never a guess.
"""

from __future__ import annotations

import textwrap

import pytest

from extractor import extract_source


def template(source: str) -> str | None:
    result = extract_source(textwrap.dedent(source), "pkg/mod.py")
    assert result.failure is None
    (site,) = result.sites
    return site.template


DEDENT = [
    # `.strip()` (and its one-sided kin) of such text, as torch's C-extension message is built.
    (
        '''
        import textwrap
        def f():
            raise ImportError(textwrap.dedent("""
                Failed to load PyTorch C extensions:
                    It appears {that}
                """).strip())
        ''',
        "Failed to load PyTorch C extensions:\n    It appears {{that}}",
    ),
    (
        """
        def f():
            raise ImportError("  padded message  ".rstrip())
        """,
        "  padded message",
    ),
    # Of an f-string the stripped text is not known where a field is left at a stripped
    # end: its value may begin or end in blanks.
    (
        """
        def f(x):
            raise ImportError(f" {x} ".strip())
        """,
        None,
    ),
    (
        """
        def f(x):
            raise ImportError(f" got {x}".rstrip())
        """,
        None,
    ),
    # Literal text at both ends: stripped as the literal would be, fields in place.
    (
        '''
        def f(x):
            raise ImportError(f"""
        For {x}:
          got {{it}}.
        """.strip())
        ''',
        "For {x}:\n  got {{it}}.",
    ),
    # `dedent` of an f-string: its margin is its literal text's, fields standing as text
    # (exact while a value holds no line break).
    (
        """
        from textwrap import dedent
        def f(x):
            raise ValueError(dedent(f\"\"\"
                got {x}
                  at {x.pos}.
                \"\"\").strip())
        """,
        "got {x}\n  at {x.pos}.",
    ),
    # The literal's value after the function: what the user sees, braces doubled.
    (
        '''
        import textwrap
        def f():
            raise ImportError(textwrap.dedent("""
                Failed to load PyTorch C extensions:
                    It appears {that}
                """))
        ''',
        "\nFailed to load PyTorch C extensions:\n    It appears {{that}}\n",
    ),
    (
        '''
        import textwrap as tw
        def f():
            raise ImportError(tw.dedent("""\\
                a
                  b"""))
        ''',
        "a\n  b",
    ),
    (
        '''
        from textwrap import dedent
        def f():
            raise ImportError(dedent("""
                a
                  b
            """))
        ''',
        "\na\n  b\n",  # a line of only spaces sets no margin
    ),
    (
        '''
        from inspect import cleandoc
        def f():
            raise ImportError(cleandoc("""
                First line.
                    indented
                """))
        ''',
        "First line.\n    indented",
    ),
    (
        '''
        import inspect
        def f():
            raise ImportError(inspect.cleandoc("""first
                second"""))
        ''',
        "first\nsecond",
    ),
    # `.format` of the dedented literal reads as `.format` of a literal (rule 3).
    (
        '''
        from textwrap import dedent
        def f(x):
            raise ValueError(dedent("""
                got {x!r}
                """).format(x=x))
        ''',
        "\ngot {x!r}\n",
    ),
]

DEDENT_NOT_COVERED = [
    # The argument is not a literal.
    """
    from textwrap import dedent
    def f(text):
        raise ValueError(dedent(text))
    """,
    # `dedent` is a parameter here, not textwrap's.
    """
    def f(dedent):
        raise ValueError(dedent("  a"))
    """,
    # Never imported: nothing says what `textwrap` is.
    """
    def f():
        raise ValueError(textwrap.dedent("  a"))
    """,
    # Another module's function of the same name.
    """
    from mylib import dedent
    def f():
        raise ValueError(dedent("  a"))
    """,
    # Extra arguments are not the one-argument function.
    """
    import textwrap
    def f():
        raise ValueError(textwrap.dedent("  a", 1))
    """,
]

JOIN = [
    ('raise ValueError(", ".join(["a", "b"]))', "a, b"),
    ('raise ValueError("\\n".join(("a", "b {")))', "a\nb {{"),
    ('raise ValueError("\\n".join(["got", f"x={x!r}"]))', "got\nx={x!r}"),
    ('raise ValueError(" ".join(["a" "b", "c"]))', "ab c"),
    ('raise ValueError("{}".join(["a", "b"]))', "a{{}}b"),
    ('raise ValueError("-".join([]))', ""),
]

JOIN_NOT_COVERED = [
    'raise ValueError(", ".join([a, "b"]))',
    'raise ValueError(", ".join(items))',
    'raise ValueError(", ".join([*items]))',
    'raise ValueError(sep.join(["a", "b"]))',
    'raise ValueError(f"{s}".join(["a", "b"]))',
    'raise ValueError(", ".join(["a", str(b)]))',
]

CONSTANTS = [
    (
        """
        _MSG = "bad value"
        def f():
            raise ValueError(_MSG)
        """,
        "bad value",
    ),
    (
        """
        _MSG = "bad {x}"
        def f(x):
            raise ValueError(_MSG.format(x=x))
        """,
        "bad {x}",
    ),
    (
        """
        _MSG = "bad %s"
        class C:
            def f(self, x):
                raise ValueError(_MSG % x)
        """,
        "bad {x}",
    ),
    (
        """
        _MSG = "bad %(x)r"
        def f(x):
            raise ValueError(_MSG % {"x": x})
        """,
        "bad {x!r}",
    ),
    (
        """
        _MSG: str = (
            "multi "
            "line {0}"
        )
        def f(x):
            raise ValueError(_MSG.format(x))
        """,
        "multi line {x}",
    ),
    # A constant built from another constant, read in the module's scope.
    (
        """
        _PREFIX = "No module named "
        _MSG = _PREFIX + "{!r}"
        def f(name):
            raise ModuleNotFoundError(_MSG.format(name), name=name)
        """,
        "No module named {name!r}",
    ),
    # Names in a constant's value resolve in the module, not in the raising function.
    (
        """
        from textwrap import dedent
        _MSG = dedent('''
            a
              b
            ''')
        def f(dedent):
            raise ValueError(_MSG)
        """,
        "\na\n  b\n",
    ),
    (
        """
        _MSG = ", ".join(["a", "b {}"])
        def f(x):
            raise ValueError(_MSG.format(x))
        """,
        "a, b {x}",
    ),
    # A parameter of another function does not hide the module's constant.
    (
        """
        _MSG = "bad"
        def g(_MSG):
            return _MSG
        def f():
            raise ValueError(_MSG)
        """,
        "bad",
    ),
    # A constant operand of `+` is its text, as a local's literal was.
    (
        """
        _TAIL = " (see the docs)"
        def f(x):
            raise ValueError("bad " + str(x) + _TAIL)
        """,
        "bad {str(x)} (see the docs)",
    ),
]

CONSTANTS_NOT_COVERED = [
    # Two module-level assignments.
    """
    _MSG = "one"
    _MSG = "two"
    def f():
        raise ValueError(_MSG)
    """,
    # Assigned inside a branch at module level: maybe never assigned.
    """
    import sys
    if sys.platform == "win32":
        _MSG = "windows"
    def f():
        raise ValueError(_MSG)
    """,
    # Shadowed by the function's own local.
    """
    _MSG = "module"
    def f():
        _MSG = compute()
        raise ValueError(_MSG)
    """,
    # A function that rebinds it through `global`.
    """
    _MSG = "module"
    def g():
        global _MSG
        _MSG = compute()
    def f():
        raise ValueError(_MSG)
    """,
    # Bound in an enclosing function: a closure, not the module's.
    """
    _MSG = "module"
    def outer(_MSG):
        def f():
            raise ValueError(_MSG)
        return f
    """,
    # Imported, not assigned.
    """
    from .messages import _MSG
    def f():
        raise ValueError(_MSG)
    """,
    # Not literal text.
    """
    _MSG = compute()
    def f():
        raise ValueError(_MSG)
    """,
    # `.format` of an f-string constant is not `.format` of literal text.
    """
    _MSG = f"{a} {{}}"
    def f(x):
        raise ValueError(_MSG.format(x))
    """,
    # A cycle of constants stops at the depth limit.
    """
    _A = _B
    _B = _A
    def f():
        raise ValueError(_A)
    """,
]

STEPS = [
    (
        """
        def f(x):
            msg = "a"
            msg += f" {x}"
            raise ValueError(msg)
        """,
        "a {x}",
    ),
    (
        """
        def f(x, y):
            msg = "got {}".format(x)
            msg += "; " + str(y)
            msg += " and {%s}" % y
            raise ValueError(msg)
        """,
        "got {x}; {str(y)} and {{{y}}}",
    ),
    # The raise may sit deeper than the block that builds the message.
    (
        """
        def f(items):
            msg: str = "bad"
            msg += ": "
            for item in items:
                if item:
                    raise ValueError(msg)
        """,
        "bad: ",
    ),
    # An operand that is no string is a field, as in `+`.
    (
        """
        def f(kind):
            msg = "base"
            msg += kind
            raise ValueError(msg)
        """,
        "base{kind}",
    ),
    # The last assignment before the raise counts; earlier ones are overwritten.
    (
        """
        def f(a, b):
            if a:
                msg = f"first {a}"
            msg = "second"
            msg += f" {b}"
            raise ValueError(msg)
        """,
        "second {b}",
    ),
    # A binding after the loop holding the raise comes after the raise.
    (
        """
        def f(items):
            while items:
                msg = "a"
                msg += "b"
                for item in items:
                    raise ValueError(msg)
                msg += "c"
        """,
        "ab",
    ),
    # The raise in the branch that extends the message: every step on the way to it runs.
    (
        """
        def f(x):
            msg = "a"
            if x:
                msg += "b"
                raise ValueError(msg)
        """,
        "ab",
    ),
    # Steps in outer and inner blocks, the other branch's steps never run before the raise.
    (
        """
        def f(reasons):
            msg = "no code"
            msg += " was found."
            if reasons:
                msg += " Skipped frames."
                print(msg)
            else:
                msg += " Not attempted."
                raise RuntimeError(msg)
        """,
        "no code was found. Not attempted.",
    ),
    # Multi-line parenthesized literals, comments included.
    (
        """
        def f(x):
            msg = (
                "first "  # why
                "second"
            )
            raise ValueError(msg)
        """,
        "first second",
    ),
]

STEPS_NOT_COVERED = [
    # A `+=` in a branch between the assignment and the raise.
    """
    def f(x):
        msg = "a"
        if x:
            msg += "b"
        raise ValueError(msg)
    """,
    # In a loop.
    """
    def f(items):
        msg = "a"
        for item in items:
            msg += item
        raise ValueError(msg)
    """,
    # A branch that extends the message, then raises elsewhere.
    """
    def f(x):
        msg = "a"
        if x:
            msg += "b"
        else:
            return
        raise ValueError(msg)
    """,
    # A `try` body extends it around a raise in its handler: it may have stopped before.
    """
    def f(g):
        msg = "a"
        try:
            msg += "b"
            g()
        except OSError:
            raise ValueError(msg)
    """,
    # An earlier turn of the loop holding the raise extended it.
    """
    def f(items):
        msg = "a"
        for item in items:
            msg += item
            if not item:
                raise ValueError(msg)
    """,
    # `except ... as` around the raise binds the name.
    """
    def f(g):
        msg = "a"
        try:
            g()
        except OSError as msg:
            raise ValueError(msg)
    """,
    # `msg = msg + ...` is no `+=` step.
    """
    def f(x):
        msg = "a"
        msg = msg + x
        raise ValueError(msg)
    """,
    # The start is not literal text.
    """
    def f(x):
        msg = compute()
        msg += "a"
        raise ValueError(msg)
    """,
    # Not `+=`.
    """
    def f(x):
        msg = "a %s"
        msg %= x
        raise ValueError(msg)
    """,
    # The loop holding the raise rebinds the name after it: a later pass raises that.
    """
    def f(items):
        msg = "a"
        for item in items:
            if item:
                raise ValueError(msg)
            msg = "b"
    """,
    # A handler raises what the `try` may have rebound.
    """
    def f():
        msg = "a"
        try:
            msg = compute()
        except OSError:
            raise ValueError(msg)
    """,
    # A walrus in the condition around the raise.
    """
    def f():
        msg = "a"
        if msg := compute():
            raise ValueError(msg)
    """,
    # Other code may rebind a global between the statements.
    """
    def f():
        global msg
        msg = "a"
        msg += "b"
        raise ValueError(msg)
    """,
    # A nested definition of the name between.
    """
    def f():
        msg = "a"
        def msg():
            pass
        raise ValueError(msg)
    """,
    # Starts with a `+=` (the name is a parameter).
    """
    def f(msg):
        msg += "a"
        raise ValueError(msg)
    """,
]


@pytest.mark.parametrize(("source", "expected"), DEDENT)
def test_dedent_and_cleandoc_of_a_literal(source: str, expected: str) -> None:
    assert template(source) == expected


@pytest.mark.parametrize("source", DEDENT_NOT_COVERED)
def test_dedent_of_anything_else_is_not_read(source: str) -> None:
    assert template(source) is None


@pytest.mark.parametrize(("raise_line", "expected"), JOIN)
def test_join_of_literals(raise_line: str, expected: str) -> None:
    assert template(f"def f(x):\n    {raise_line}\n") == expected


@pytest.mark.parametrize("raise_line", JOIN_NOT_COVERED)
def test_join_of_anything_else_is_not_read(raise_line: str) -> None:
    assert template(f"def f(a, b, items, sep, s):\n    {raise_line}\n") is None


def test_join_inside_plus_stays_a_field() -> None:
    """`+` reads its operands as before: a join there is still a field."""
    source = 'def f(y):\n    raise ValueError("a" + ", ".join(["b", "c"]))\n'
    assert template(source) == 'a{", ".join(["b", "c"])}'


@pytest.mark.parametrize(("source", "expected"), CONSTANTS)
def test_module_constants_are_followed(source: str, expected: str) -> None:
    assert template(source) == expected


@pytest.mark.parametrize("source", CONSTANTS_NOT_COVERED)
def test_module_constants_not_covered(source: str) -> None:
    assert template(source) is None


@pytest.mark.parametrize(("source", "expected"), STEPS)
def test_local_built_in_steps(source: str, expected: str) -> None:
    assert template(source) == expected


@pytest.mark.parametrize("source", STEPS_NOT_COVERED)
def test_local_built_otherwise_is_not_read(source: str) -> None:
    assert template(source) is None


def test_module_level_raise_keeps_its_scope_rules() -> None:
    """At module level the constant is the raise's own scope: the single assignment rule."""
    assert template('_MSG = "x"\nraise ValueError(_MSG)\n') == "x"
    assert template('_MSG = "x"\n_MSG = "y"\nraise ValueError(_MSG)\n') == "y"
    assert template('_MSG = "x"\nif c:\n    _MSG = "y"\nraise ValueError(_MSG)\n') is None


def test_reraise_of_a_caught_name_is_unchanged() -> None:
    """Module-constant counting leaves the caught-exception rule alone."""
    source = """
    try:
        pass
    except ValueError as e:
        raise e
    def f():
        try:
            pass
        except KeyError as e:
            return e
    """
    result = extract_source(textwrap.dedent(source), "pkg/mod.py")
    (site,) = result.sites
    assert site.reraise is True


BUILDER = """
import textwrap
_HINT = textwrap.dedent(
    f\"\"\"\\
    Please report it {_WHERE}.\"\"\"
)
_WHERE = "upstream"


def bug_message(config, expected: str) -> str:
    \"\"\"Builds the text.\"\"\"
    return (
        f"graph {config.graph_id} assumed {expected}, "
        "which did not hold. " + _HINT
    )
"""

BUILT = [
    # An argument a rule reads is spliced in where the builder's field is the parameter;
    # a constant the builder adds (`dedent` of an f-string) is read too.
    (
        'def f(config, x):\n    raise AssertionError(bug_message(config, f"x is {x}"))\n',
        "graph {config.graph_id} assumed x is {x}, which did not hold. Please report it {_WHERE}.",
    ),
    # Other fields are put in the raise's terms: `config` is `self.cfg` here.
    (
        "class C:\n    def m(self):\n        raise AssertionError(bug_message(self.cfg, 'ok'))\n",
        "graph {self.cfg.graph_id} assumed ok, which did not hold. Please report it {_WHERE}.",
    ),
    # Through the raise's local, assigned once.
    (
        "def f(cfg):\n    text = bug_message(cfg, expected='sizes agree')\n"
        "    raise AssertionError(text)\n",
        "graph {cfg.graph_id} assumed sizes agree, which did not hold. Please report it {_WHERE}.",
    ),
    # A builder nested in the raise's function.
    (
        "def f(n):\n    def why(count):\n        return f'expected {count} outputs'\n"
        "    raise RuntimeError(why(n + 1))\n",
        "expected {(n + 1)} outputs",
    ),
]

BUILT_NOT_READ = [
    # A parameter the call does not pass (its default, unknown here) is read by a field.
    "def f(cfg):\n    raise AssertionError(bug_message(cfg))\n",
    # The raise's function binds a name the builder reads from the module: another value.
    "def f(cfg, _WHERE):\n    raise AssertionError(bug_message(cfg, 'x'))\n",
    # More than one `return`.
    "def pick(a):\n    if a:\n        return 'x'\n    return 'y'\n"
    "def f(a):\n    raise RuntimeError(pick(a))\n",
    # A local of the builder in a field: not something the raise can evaluate.
    "def listed(items):\n    joined = ', '.join(items)\n    return f'unknown: {joined}'\n"
    "def f(items):\n    raise RuntimeError(listed(items))\n",
    # Decorated: the decorator may return anything.
    "import functools\n@functools.wraps(print)\ndef said():\n    return 'x'\n"
    "def f():\n    raise RuntimeError(said())\n",
    # `*args`: which argument lands where is not written.
    "def f(args):\n    raise AssertionError(bug_message(*args))\n",
]


@pytest.mark.parametrize(("raise_source", "expected"), BUILT)
def test_a_message_builder_of_the_module_is_read(raise_source: str, expected: str) -> None:
    assert template(textwrap.dedent(BUILDER) + "\n\n" + raise_source) == expected


@pytest.mark.parametrize("raise_source", BUILT_NOT_READ)
def test_a_builder_read_otherwise_is_not(raise_source: str) -> None:
    assert template(textwrap.dedent(BUILDER) + "\n\n" + raise_source) is None
