"""`extractor.helpers` and the sites it adds: assert-style checks and the helpers that pass
their arguments on (`torch._check(cond, lambda: f"...")` through `_check_with(RuntimeError,
cond, message)`) make each of their call statements a site of what they raise, with the text
the call gives and the tests the call's own arguments decide."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from helpers import read_sites

from extractor import RaiseSite, scan_paths
from extractor.helpers import (
    Guard,
    Helper,
    Parameter,
    call_parameters,
    ending,
    forwarded,
    guards,
    passes_through,
)
from extractor.printed import read_printed

CHECKS = """
    def _check_with(error_type, cond, message):
        if not isinstance(cond, bool):
            raise TypeError(f"cond must be a bool, but got {type(cond)}")
        if _expect(cond):
            return
        if message is None:
            text = "Expected cond to be True"
        else:
            if not callable(message):
                raise TypeError("message must be a callable")
            text = str(message())
        raise error_type(text)


    def _check(cond, message=None):
        \"\"\"Raise RuntimeError unless cond holds.\"\"\"
        _check_with(RuntimeError, cond, message)


    def _check_value(cond, message=None):
        _check_with(ValueError, cond, message)


    def _expect(x):
        \"\"\"True when x is; a symbolic x is asked.\"\"\"
        if isinstance(x, Symbolic):
            return x.node.expect_true()
        if type(x) is not bool:
            raise AssertionError(f"Expected bool, got {x}")
        return x


    def _settled(x):
        if isinstance(x, list):
            x = all(x)
        return x


    def check(cond, msg):
        if not cond:
            raise ValueError(msg)


    def require(value, name, strict=True):
        if value:
            return
        if strict:
            raise KeyError(f"missing {name}")


    def lookup(key):
        check(key, "no key")


    def named(key, name):
        check(key, name)


    def check_tensor(param, name, *, rank=None):
        if _settled(param):
            return
        if not isinstance(param, list) or len(param) != rank:
            raise TypeError(f"expected {name} to be a list")


    class Reader:
        KINDS = ("text", "bytes")

        def _ensure(self, what):
            if self.closed:
                raise ValueError(f"cannot {what} a closed reader")

        def read(this):
            this._ensure("read")

        @classmethod
        def _check_kind(cls, kind):
            if kind not in cls.KINDS:
                raise ValueError(f"no reader of {kind}")

        @classmethod
        def make(cls, kind):
            cls._check_kind(kind)
"""

MAIN = """
    import pkg
    from pkg import check, named, require


    def resize(x, n):
        pkg._check(n >= 0, lambda: f"n must be non-negative, got {n}")
        pkg._check_value(x is not None)
        if x:
            check(n < 10, "n too big")
        check(True, "never raised")
        check(False, "always raised")
        require(x.get("size"), "size")
        require(x, "x", strict=False)
        named(n, "the name")
        pkg.check_tensor(x.grad, "grad", rank=n + 1)
        pkg.check_tensor(x, "x")
        check(n != 2, f"{n} == 2")
"""


def _sites(tmp_path: Path) -> dict[int, RaiseSite]:
    return read_sites(tmp_path, {"pkg/__init__.py": CHECKS, "pkg/main.py": MAIN})


def test_checks_passing_a_lambda_through_a_helper_are_sites_of_its_text(tmp_path: Path) -> None:
    """`pkg._check(cond, lambda: f"...")` raises the class `_check` passes on, with the text
    the lambda gives, read from the branch `message is None` leaves; without a message it
    is the other branch's. `_check_with`'s early exit `if _expect(cond): return` tests
    `cond` itself (`_expect` passes a plain bool through), said in the caller's argument."""
    sites = _sites(tmp_path)
    lam, bare = sites[6], sites[7]
    assert (lam.qualified_name, lam.printed, lam.through, lam.call) == (
        "builtins.RuntimeError",
        "n must be non-negative, got {n}",
        "pkg._check",
        True,
    )
    assert [(c.kind, c.code) for c in lam.conditions] == [("if", "not (n >= 0)")]
    assert (bare.qualified_name, bare.printed) == (
        "builtins.ValueError",
        "Expected cond to be True",
    )
    assert [(c.kind, c.code) for c in bare.conditions] == [("if", "x is None")]


def test_a_checks_tests_are_said_in_the_callers_arguments(tmp_path: Path) -> None:
    """`check(n < 10, ...)` raises when `n < 10` is false, inside the caller's own `if`; a
    constant argument says the call always raises (no test) or never does (no site, as for
    `strict=False`); a guard left to its default says nothing; an early `if value: return`
    is a test too."""
    sites = _sites(tmp_path)
    small = sites[9]
    assert small.printed == "n too big"
    assert [(c.kind, c.code) for c in small.conditions] == [("if", "not (n < 10)"), ("if", "x")]
    assert 10 not in sites
    assert sites[11].printed == "always raised" and sites[11].conditions == ()
    required = sites[12]
    assert (required.qualified_name, required.printed) == ("builtins.KeyError", "missing size")
    assert [(c.kind, c.code) for c in required.conditions] == [("if", 'not x.get("size")')]
    assert 13 not in sites  # `strict=False`: the helper's `if strict:` never lets it raise


def test_a_helper_forwarding_its_callers_text_leaves_its_own_call_to_them(tmp_path: Path) -> None:
    """`named(key, name)` passes its caller's text on: its own `check(key, name)` is no site
    (`named(n, "the name")` is), while `lookup`'s `check(key, "no key")` holds text of its
    own and is one; the helpers' own raises stay sites as the scan found them."""
    sites = _sites(tmp_path)
    assert sites[14].printed == "the name"
    assert [(c.kind, c.code) for c in sites[14].conditions] == [("if", "not n")]
    report = {
        (site.function, site.call): site
        for site in read_printed(scan_paths([tmp_path / "pkg"], cwd=tmp_path), cwd=tmp_path).sites
        if site.path == "pkg/__init__.py"
    }
    assert ("named", True) not in report
    assert report[("lookup", True)].printed == "no key"
    assert report[("check", False)].call is False


def test_a_helpers_test_is_said_in_the_callers_arguments(tmp_path: Path) -> None:
    """A helper's test of its parameters through built-ins reads, at each call, with the
    call's arguments in their places (parenthesised where they bind loosely); a call leaving
    one of them to its default says nothing of it, and a test through a function that does
    not pass its argument through as given (`_settled(param)` rebinds it) is never said."""
    sites = _sites(tmp_path)
    passed, default = sites[15], sites[16]
    assert passed.printed == "expected grad to be a list"
    assert [(c.kind, c.code) for c in passed.conditions] == [
        ("if", "not isinstance(x.grad, list) or len(x.grad) != (n + 1)")
    ]
    assert default.printed == "expected x to be a list" and default.conditions == ()


def test_a_call_giving_no_word_of_its_own_is_no_site(tmp_path: Path) -> None:
    """`check(n != 2, f"{n} == 2")` prints nothing a paste could be found by that the helper's
    own raise does not say: it is left to that raise."""
    sites = _sites(tmp_path)
    assert 17 not in sites
    assert sites[16].printed == "expected x to be a list"


def test_a_methods_instance_is_the_calls_receiver(tmp_path: Path) -> None:
    """`this._ensure("read")` raises when the helper's `self.closed`, said of the caller's
    own instance (`this.closed`); a class method's test of its class is not said."""
    _sites(tmp_path)
    report = read_printed(scan_paths([tmp_path / "pkg"], cwd=tmp_path), cwd=tmp_path)
    calls = {site.function: site for site in report.sites if site.call}
    read, make = calls["Reader.read"], calls["Reader.make"]
    assert read.printed == "cannot read a closed reader"
    assert [(c.kind, c.code) for c in read.conditions] == [("if", "this.closed")]
    assert make.printed == "no reader of {kind}" and make.conditions == ()


def _function(source: str) -> ast.FunctionDef:
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(cond, msg):\n    if not cond:\n        raise ValueError(msg)", [("cond", False)]),
        ("def f(bad, msg):\n    if bad:\n        raise ValueError(msg)", [("bad", True)]),
        ("def f(ok, msg):\n    if ok:\n        return\n    raise ValueError(msg)", [("ok", False)]),
        (
            "def f(ok, msg, *, loud):\n    if not ok:\n        if loud:\n"
            "            raise ValueError(msg)",
            [("ok", False), ("loud", True)],
        ),
        (
            "def f(t, name):\n    if not isinstance(t, Tensor) or t.dim() != 2:\n"
            "        raise TypeError(name)",
            [("not isinstance(t, Tensor) or t.dim() != 2", True)],
        ),
        (
            "def f(n, msg):\n    if n >= 0:\n        return\n    raise ValueError(msg)",
            [("n >= 0", False)],
        ),
        ("def f(ok, msg):\n    if check(ok):\n        return\n    raise ValueError(msg)", []),
        ("def f(ok, msg):\n    ok = bool(ok)\n    if not ok:\n        raise ValueError(msg)", []),
        (
            "def f(xs, msg):\n    if any(x < 0 for x in xs):\n        raise ValueError(msg)",
            [],
        ),
        (
            "def f(n, msg):\n    limit = 3\n    if n > limit:\n        raise ValueError(msg)",
            [],
        ),
    ],
)
def test_guards(source: str, expected: list[tuple[str, bool]]) -> None:
    """A test is a guard where it reads parameters never rebound, through operators,
    built-ins and their own methods, and nothing else the function binds or calls; a bare
    parameter's `not`s fold into what a call raises on, and a test that exits says the
    opposite of one that encloses."""
    node = _function(source)
    end = ending(node)
    assert end is not None
    found = guards(
        node,
        end,
        call_parameters(node, method=False),
        lambda n: ast.get_source_segment(source, n) or "",
    )
    assert [(guard.code, guard.raises_when) for guard in found] == expected


def test_guard_places() -> None:
    """A guard names the places of the parameters it reads, keyword-only ones by name."""
    source = "def f(a, b, *, c):\n    if a < b or c:\n        raise ValueError(a)"
    node = _function(source)
    end = ending(node)
    assert end is not None
    (guard,) = guards(
        node,
        end,
        call_parameters(node, method=False),
        lambda n: ast.get_source_segment(source, n) or "",
    )
    assert guard.reads == (Parameter("a", 0), Parameter("b", 1), Parameter("c", None))
    assert guard.plain is None


@pytest.mark.parametrize(
    "source",
    [
        "def f(msg):\n    if msg:\n        return msg\n    raise ValueError(msg)",
        "def f(msg):\n    yield\n    raise ValueError(msg)",
        "async def f(msg):\n    raise ValueError(msg)",
        "def f(msg):\n    if msg:\n        raise ValueError(msg)\n    else:\n        pass",
        "def f(msg):\n    log = msg",
    ],
)
def test_no_ending(source: str) -> None:
    """A function returning a value, a generator, a coroutine, an `if` with an `else` or an
    ending that is neither a raise nor a call statement gives no helper ending."""
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    assert ending(node) is None


def test_forwarded_guards_follow_the_parameters_passed() -> None:
    """A call passing its own parameters for the inner helper's guard passes that guard on,
    renamed and at their own places; a guard given anything else is dropped; a call passing
    none of its parameters as they are is no helper."""
    inner = Helper(
        "pkg/a.py",
        "check",
        (
            Guard("cond", (Parameter("cond", 0),), False),
            Guard("len(items) > size", (Parameter("items", 2), Parameter("size", 3)), True),
        ),
    )
    node = _function("def outer(msg, ok, xs):\n    check(ok, msg, xs, 4)")
    end = ending(node)
    assert end is not None
    assert forwarded(end, inner, ["msg", "ok", "xs"], node) == [
        Guard("ok", (Parameter("ok", 1),), False)
    ]
    both = _function("def outer(msg, ok, xs, n):\n    check(ok, msg, xs, n)")
    both_end = ending(both)
    assert both_end is not None
    assert forwarded(both_end, inner, ["msg", "ok", "xs", "n"], both) == [
        Guard("ok", (Parameter("ok", 1),), False),
        Guard("len(xs) > n", (Parameter("xs", 2), Parameter("n", 3)), True),
    ]
    fixed = _function("def outer(n):\n    check(n < 10, 'n too big')")
    fixed_end = ending(fixed)
    assert fixed_end is not None
    assert forwarded(fixed_end, inner, ["n"], fixed) is None


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(a):\n    return a", Parameter("a", 0)),
        (
            'def f(a, skip=0):\n    """Doc."""\n    if isinstance(a, Sym):\n'
            "        return a.node.expect_true(skip)\n    if type(a) is not bool:\n"
            "        raise AssertionError(a)\n    return a",
            Parameter("a", 0),
        ),
        (
            "def f(n, a):\n    if not isinstance(a, (int, bool)):\n        return n\n    return a",
            Parameter("a", 1),
        ),
        ("def f(a):\n    return not a", None),
        ("def f(a):\n    if a:\n        return False\n    return a", None),
        ("def f(a):\n    if isinstance(a, list):\n        a = all(a)\n    return a", None),
        ("def f(a):\n    if isinstance(a, list):\n        log(a)\n    return a", None),
        ("def f(a):\n    log(a)\n    return a", None),
        ("def f(*, a):\n    return a", None),
        ("@cache\ndef f(a):\n    return a", None),
        (
            "def f(a):\n    if isinstance(a, Sym):\n        return 1\n    else:\n"
            "        return 2\n    return a",
            None,
        ),
    ],
)
def test_passes_through(source: str, expected: Parameter | None) -> None:
    """A function passes a parameter through when its body is type tests that leave the
    function, then `return` of that parameter, never bound again: a call of it is true
    exactly when its argument is, for every value no test catches."""
    assert passes_through(_function(source)) == expected
