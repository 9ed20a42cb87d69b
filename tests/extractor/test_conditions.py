"""Conditions and signatures read from the code around a raise: rules on inline sources, then
real torch raise sites whose answers were checked by hand against the installed sources."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

from extractor import extract_source
from extractor.cache import result_from_record, result_to_record
from extractor.extract import extract_file
from extractor.imports import module_name_for
from extractor.model import Condition, RaiseSite


def _site(source: str, exception: str = "Target") -> RaiseSite:
    result = extract_source(textwrap.dedent(source), "pkg/mod.py", "pkg.mod")
    assert result.ok, result.failure
    (site,) = [site for site in result.sites if site.exception == exception]
    return site


def _read(source: str, exception: str = "Target") -> list[tuple[str, str | None]]:
    return [(c.kind, c.code) for c in _site(source, exception).conditions]


def test_nested_ifs_are_listed_innermost_first() -> None:
    """Every enclosing `if` of the function is a level, the innermost first."""
    assert _read(
        """\
        def f(a, b, c):
            if a:
                if b:
                    if c:
                        raise Target
        """
    ) == [("if", "c"), ("if", "b"), ("if", "a")]


def test_else_negates_the_tests_before_it() -> None:
    """`if a: ... elif b: ... else: raise` is `not a and not b`; an `elif` branch is
    `not a and b`: one condition for the whole chain."""
    chain = """\
        def f(a, b):
            if a:
                pass
            elif b:
                raise Elif
            else:
                raise Target
        """
    assert _read(chain) == [("if", "not a and not b")]
    assert _read(chain, "Elif") == [("if", "not a and b")]


def test_an_if_inside_else_is_a_level_of_its_own() -> None:
    """`else:` holding an `if` is written as two levels, and is shown as two."""
    assert _read(
        """\
        def f(a, b):
            if a:
                pass
            else:
                if b:
                    raise Target
        """
    ) == [("if", "b"), ("if", "not a")]


def test_chain_parts_are_parenthesised_where_and_would_bind_them() -> None:
    """An `or` test negated or joined by `and` keeps its meaning through parentheses."""
    assert _read(
        """\
        def f(a, b, c, d):
            if a or b:
                pass
            elif c or d:
                raise Target
        """
    ) == [("if", "not (a or b) and (c or d)")]


@pytest.mark.parametrize(
    ("test", "negation"),
    [
        ("a == b", "a != b"),
        ("a != b", "a == b"),
        ("a is None", "a is not None"),
        ("a is not None", "a is None"),
        ("key in table", "key not in table"),
        ("key not in table", "key in table"),
        ("not ready", "ready"),
        ("not not ready", "not ready"),
        ("not (a == b)", "a == b"),
        ("a < b", "not (a < b)"),
        ("a >= b", "not (a >= b)"),
        ("a == b == c", "not (a == b == c)"),
        ("a and b", "not (a and b)"),
        ("ready", "not ready"),
        ("self.items[0].ok()", "not self.items[0].ok()"),
        ("x % 2", "not (x % 2)"),
        ("(a == b) == c", "(a == b) != c"),
        ("(m := find()) is None", "(m := find()) is not None"),
        ("isinstance(x, (int, float))", "not isinstance(x, (int, float))"),
    ],
)
def test_not_is_pushed_only_where_that_is_exact(test: str, negation: str) -> None:
    """`==`/`!=`, `is`/`is not`, `in`/`not in` swap; `not not x` is `x`; the rest keeps `not`."""
    source = f"def f(a, b, c, x, key, table, ready, self):\n    if {test}:\n        pass\n"
    source += "    else:\n        raise Target\n"
    assert _read(source) == [("if", negation)]


def test_guards_that_return_continue_or_raise_are_conditions() -> None:
    """An earlier `if` of the same block whose body leaves says what held for the raise."""
    assert _read(
        """\
        def f(items, strict):
            if not items:
                return None
            for item in items:
                if item is None:
                    continue
                if item.bad:
                    raise ValueError("bad")
                if strict and item.odd:
                    raise Target
        """
    ) == [
        ("if", "strict and item.odd"),
        ("guard", "not item.bad"),
        ("guard", "item is not None"),
        ("for", "items"),
        ("guard", "items"),
    ]


def test_a_guard_chain_falls_through_only_past_every_exiting_branch() -> None:
    """`if a: return elif b: break` before the raise: `not a and not b`."""
    assert _read(
        """\
        def f(xs, a, b):
            while xs:
                if a:
                    return
                elif b:
                    break
                else:
                    xs.pop()
                raise Target
        """
    ) == [("guard", "not a and not b"), ("while", "xs")]


def test_ifs_that_may_fall_through_are_not_guards() -> None:
    """Only an `if` whose leading branches always leave is a guard; others say nothing."""
    assert (
        _read(
            """\
            def f(a, b, c):
                if a:
                    print(a)
                if b:
                    pass
                elif c:
                    return
                if a:
                    pass
                else:
                    return
                with open(a) as handle:
                    return handle
                raise Target
            """
        )
        == []
    )


def test_a_guard_whose_branches_both_leave_counts() -> None:
    """A body ending in an `if` whose branches both leave always leaves."""
    assert _read(
        """\
        def f(a, b):
            if a:
                if b:
                    return 1
                else:
                    raise KeyError
            raise Target
        """
    ) == [("guard", "not a")]


def test_handlers_loops_and_blocks_are_noted() -> None:
    """Handlers, `try` else/finally, loops and their `else` blocks are levels of their own."""
    site = _site(
        """\
        async def f(rows, table):
            async for row in rows:
                try:
                    value = table[row]
                except (KeyError, IndexError) as exc:
                    raise Target from exc
        """
    )
    assert site.conditions == (
        Condition("except", "(KeyError, IndexError)", 5, "exc"),
        Condition("for", "rows", 2, "row"),
    )


BLOCKS = {
    "bare except": ("try:\n    g()\nexcept:\n    raise Target", ("except", None)),
    "except*": ("try:\n    g()\nexcept* OSError:\n    raise Target", ("except_group", "OSError")),
    "try else": ("try:\n    g()\nexcept E:\n    pass\nelse:\n    raise Target", ("try_else", None)),
    "finally": ("try:\n    g()\nfinally:\n    raise Target", ("finally", None)),
    "for else": ("for x in xs:\n    pass\nelse:\n    raise Target", ("for_else", "xs")),
    "while else": ("while n:\n    n -= 1\nelse:\n    raise Target", ("while_else", "n")),
}  # fmt: skip


@pytest.mark.parametrize(("body", "expected"), BLOCKS.values(), ids=BLOCKS.keys())
def test_each_kind_of_block_is_named(body: str, expected: tuple[str, str | None]) -> None:
    """Bare and group handlers, `try` else and finally, loop else blocks: one level each."""
    source = "def f(xs, n):\n" + textwrap.indent(body, "    ") + "\n"
    assert _read(source) == [expected]


def test_try_bodies_and_with_blocks_add_nothing() -> None:
    """A raise in a `try` body or a `with` block runs whenever its block does."""
    assert (
        _read(
            """\
            def f(path):
                with open(path) as handle:
                    try:
                        raise Target
                    except KeyError:
                        pass
            """
        )
        == []
    )


def test_match_cases_name_subject_pattern_and_guard() -> None:
    """A raise in a `case` says the pattern (and its guard) that the subject matched."""
    site = _site(
        """\
        def f(command):
            match command:
                case ["go", direction] if direction not in ("n", "s"):
                    raise Target
                case _:
                    pass
        """
    )
    assert site.conditions == (
        Condition("case", '["go", direction] if direction not in ("n", "s")', 3, "command"),
    )


def test_expressions_and_nested_functions_are_not_read() -> None:
    """Lambdas, comprehensions and conditional expressions hold no statement that could raise;
    a nested function's conditions stop at its own `def`."""
    assert (
        _read(
            """\
            def f(xs, flag):
                ys = [x for x in xs if x]
                pick = lambda: 1 if flag else 2
                value = 3 if flag else None
                raise Target
            """
        )
        == []
    )
    assert _read(
        """\
        def outer(a, b):
            if a:
                def inner():
                    if b:
                        raise Target
        """
    ) == [("if", "b")]


def test_module_and_class_level_raises_read_their_own_body() -> None:
    """Module code and class bodies are scopes too; nothing enclosing means no condition."""
    assert _read("import sys\nif sys.version_info < (3, 9):\n    raise Target\n") == [
        ("if", "sys.version_info < (3, 9)")
    ]
    site = _site("class C:\n    if not hasattr(int, 'x'):\n        raise Target\n")
    assert [(c.kind, c.code) for c in site.conditions] == [("if", "not hasattr(int, 'x')")]
    assert site.signature is None
    assert _site("def f():\n    raise Target\n").conditions == ()


def test_condition_text_is_the_source_as_written() -> None:
    """Multi-line tests keep their lines; non-ASCII text is sliced by characters, not bytes."""
    site = _site(
        """\
        def f(naïve, été):
            if (naïve == "é"
                    and été):
                raise Target
        """
    )
    assert site.conditions == (Condition("if", 'naïve == "é"\n            and été', 2),)
    other = _site(
        """\
        def f(naïve):
            if naïve == "ü":
                pass
            else:
                raise Target
        """
    )
    assert other.conditions == (Condition("if", 'naïve != "ü"', 2),)


def test_signature_keeps_decorators_header_and_annotations_as_written() -> None:
    """The signature runs from the first decorator to the header's colon, continuation lines
    dedented to the `def`; colons in strings, annotations, defaults and comments do not end it."""
    site = _site(
        """\
        class Pool:
            @staticmethod
            @cache(
                size=3,
            )
            def take(sku: "a:b", quantity=lambda: 1,
                     *, tags: dict[str, int] = {}) -> "x:y":  # note: not the end
                raise Target
        """
    )
    assert site.signature == (
        "@staticmethod\n"
        "@cache(\n"
        "    size=3,\n"
        ")\n"
        'def take(sku: "a:b", quantity=lambda: 1,\n'
        '         *, tags: dict[str, int] = {}) -> "x:y":'
    )
    assert _site("async def go(self): raise Target\n").signature == "async def go(self):"


def test_conditions_and_signature_survive_the_cache_but_not_the_scan_json() -> None:
    """The cache record keeps the new fields; `errcat scan --json` keeps its contract keys."""
    result = extract_source("def f(a):\n    if a:\n        raise Target\n", "m.py")
    again = result_from_record(result_to_record(result), "m.py")
    assert again == result
    assert again.sites[0].conditions == (Condition("if", "a", 2),)
    assert list(result.sites[0].as_dict()) == [
        "path", "line", "column", "exception", "qualified_name", "template", "function",
        "reraise", "cause", "ignored", "entry",
    ]  # fmt: skip


def _torch_root() -> Path | None:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


TORCH = _torch_root()
needs_torch = pytest.mark.skipif(TORCH is None, reason="torch is not installed (`runtime` extra)")


def _torch_site(relative: str, template: str) -> RaiseSite:
    assert TORCH is not None
    path = TORCH / relative
    result = extract_file(path, relative, module_name_for(path))
    (site,) = [site for site in result.sites if site.template == template]
    return site


@needs_torch
def test_torch_adam_sparse_gradients() -> None:
    """`Adam._init_group`: in the loop over the group's params, for a param with a gradient,
    when that gradient is sparse."""
    site = _torch_site(
        "optim/adam.py",
        "Adam does not support sparse gradients, please consider SparseAdam instead",
    )
    assert [(c.kind, c.code, c.subject) for c in site.conditions] == [
        ("if", "p.grad.is_sparse", None),
        ("if", "p.grad is not None", None),
        ("for", 'group["params"]', "p"),
    ]
    assert site.signature is not None and site.signature.startswith("def _init_group(\n    self,")


@needs_torch
def test_torch_adam_epsilon_after_the_learning_rate_check() -> None:
    """`Adam.__init__` rejects eps only once the check on lr (which raises) has passed."""
    site = _torch_site("optim/adam.py", "Invalid epsilon value: {eps}")
    assert [(c.kind, c.code) for c in site.conditions] == [
        ("if", "not 0.0 <= eps"),
        ("guard", "0.0 <= lr"),
    ]


@needs_torch
def test_torch_register_buffer_elif_chain() -> None:
    """`Module.register_buffer`: the `elif` chain's earlier tests are negated, and the
    ScriptModule check before it is a guard."""
    site = _torch_site("nn/modules/module.py", 'buffer name can\'t contain "."')
    assert [(c.kind, c.code) for c in site.conditions] == [
        ("if", '"_buffers" in self.__dict__ and isinstance(name, str) and "." in name'),
        ("guard", "not (persistent is False and isinstance(self, torch.jit.ScriptModule))"),
    ]
    assert site.signature == (
        "def register_buffer(\n"
        "    self, name: str, tensor: Tensor | None, persistent: bool = True\n"
        ") -> None:"
    )


@needs_torch
def test_torch_batch_norm_after_the_torch_function_guard() -> None:
    """`torch.nn.functional.batch_norm`: the `__torch_function__` dispatch returns first."""
    site = _torch_site(
        "nn/functional.py", "batch_norm eps must be positive during training, but got {eps}"
    )
    assert [(c.kind, c.code) for c in site.conditions] == [
        ("if", "training and eps <= 0.0"),
        (
            "guard",
            "not has_torch_function_variadic(input, running_mean, running_var, weight, bias)",
        ),
    ]


def test_an_if_lists_the_locals_its_tests_read() -> None:
    """`locals`: names of the test that the function binds itself, or an enclosing function
    does (a closure's); parameters, module names and a comprehension's own names are not."""
    source = """\
        import torch

        LIMIT = 4

        def f(a, sizes, dtype):
            n = len(a)
            if n > LIMIT or any(s < 0 for s in sizes):
                if dtype != torch.float16:
                    raise Target

            def inner(x):
                if x > n and x < a:
                    raise Other
        """
    assert [(c.code, c.locals) for c in _site(source).conditions] == [
        ("dtype != torch.float16", ()),
        ("n > LIMIT or any(s < 0 for s in sizes)", ("n",)),
    ]
    assert [(c.code, c.locals) for c in _site(source, "Other").conditions] == [
        ("x > n and x < a", ("a", "n"))
    ]
    record = extract_source(textwrap.dedent(source), "pkg/mod.py", "pkg.mod")
    assert result_from_record(result_to_record(record), "pkg/mod.py") == record


def _expanded(source: str, exception: str = "Target") -> list[tuple[str, str | None]]:
    return [
        (c.code or "", c.expanded) for c in _site(source, exception).conditions if c.kind == "if"
    ]


def test_locals_are_replaced_by_their_only_value_where_that_is_exact() -> None:
    """`expanded` says an `if` test in what the function was passed: each local it reads by
    the value of its one assignment ahead of the way to the raise, values within values
    too, parenthesised where the operator would bind differently; the value spans lines as
    written, is read on one line."""
    source = """\
        def f(input, dims, low=0):
            ndim = input.dim()
            wanted = len(dims) + (
                low
            )
            shape = input.shape
            rank = len(shape)
            if ndim != wanted:
                raise Target
            for d in dims:
                if rank < d:
                    raise Deep
            if any(d > rank for d in dims):
                raise Compr
        """
    assert _expanded(source) == [("ndim != wanted", "input.dim() != (len(dims) + (low))")]
    # A loop's item: the test said of every item (see the loop tests below).
    assert _expanded(source, "Deep") == [("rank < d", "any(len(input.shape) < d for d in dims)")]
    assert _expanded(source, "Compr") == [
        ("any(d > rank for d in dims)", "any(d > len(input.shape) for d in dims)")
    ]
    # A comprehension's own `n` is not the local: the test reads only `a`.
    shadow = "def f(a):\n    n = a.pop()\n    if any(n > 3 for n in a):\n        raise Target\n"
    assert _expanded(shadow) == [("any(n > 3 for n in a)", "any(n > 3 for n in a)")]


def test_the_last_assignment_ahead_of_the_test_holds_whatever_comes_after() -> None:
    """A local (or parameter) bound more than once reads as the last plain assignment that
    ran ahead of the test, when nothing between changes it: bindings after the test cannot
    reach it (outside a loop around both)."""
    source = """\
        import operator

        def get(self, idx, a):
            idx = operator.index(idx)
            if not (-len(self) <= idx < len(self)):
                raise Target
            if idx < 0:
                idx += len(self)
            b = a
            b = b * 2
            if b > 3:
                raise Other
        """
    assert _expanded(source) == [
        (
            "not (-len(self) <= idx < len(self))",
            "not (-len(self) <= operator.index(idx) < len(self))",
        )
    ]
    assert _expanded(source, "Other") == [("b > 3", "(a * 2) > 3")]


@pytest.mark.parametrize(
    "body",
    [
        # Bound twice (or once more in any other way): which value holds is not known.
        "n = len(a)\nif b:\n    n = 0\nif n > 3:\n    raise Target",
        "n = len(a)\nfor n in a:\n    pass\nif n > 3:\n    raise Target",
        "n = len(a)\nn += 1\nif n > 3:\n    raise Target",
        "n = len(a)\nif (n := 2) and n > 3:\n    raise Target",
        # Changed between the assignment and the test: the list may have grown meanwhile.
        "n = list(a)\nn.append(1)\nif len(n) > 3:\n    raise Target",
        "n = list(a)\ng(n)\nif len(n) > 3:\n    raise Target",
        "n = list(a)\nn[0] = 1\nif n[0] > 3:\n    raise Target",
        # Assigned in a branch the way to the raise does not pass through.
        "if b:\n    n = len(a)\nif n > 3:\n    raise Target",
        # Assigned after the test, or in a loop ahead of it.
        "if m > 3:\n    raise Target\nm = 1",
        "for x in a:\n    n = x\nif n > 3:\n    raise Target",
        # A value that reads a local a branch may bind again.
        "k = 1\nif b:\n    k = 2\nn = k + len(a)\nif n > 3:\n    raise Target",
        # A nested function rebinds it.
        "n = len(a)\ndef g():\n    nonlocal n\n    n = 0\ng()\nif n > 3:\n    raise Target",
    ],
)
def test_a_local_is_left_alone_unless_its_value_is_known(body: str) -> None:
    source = "def f(a, b):\n" + textwrap.indent(body, "    ") + "\n"
    assert all(expanded is None for _code, expanded in _expanded(source))


def test_an_expanded_test_survives_the_cache() -> None:
    result = extract_source(
        "def f(a):\n    n = len(a)\n    if n:\n        raise Target\n", "m.py", "m"
    )
    assert result.sites[0].conditions[0].expanded == "len(a)"
    assert result_from_record(result_to_record(result), "m.py") == result


def test_a_parameter_bound_again_above_the_test_is_a_local() -> None:
    """`lr = abs(lr)` above the test: the test reads the function's value, so `lr` is among
    its locals, and the expansion says it in what was passed; a binding below the test
    (validate, then normalise) leaves the parameter the caller's."""
    source = """\
        def f(lr, n):
            lr = abs(lr)
            if lr > 3 or n > 3:
                raise Target
            n = int(n)
        """
    (condition,) = _site(source).conditions
    assert (condition.code, condition.locals, condition.expanded) == (
        "lr > 3 or n > 3",
        ("lr",),
        "abs(lr) > 3 or n > 3",
    )
    # Bound twice above the test: each value read through the one before.
    twice = "def f(lr):\n    lr = abs(lr)\n    lr = lr + 1\n    if lr > 3:\n        raise Target\n"
    ((_code, expanded),) = _expanded(twice)
    assert expanded == "(abs(lr) + 1) > 3"


def test_a_test_of_a_loop_item_is_said_of_the_loop_items() -> None:
    """A test reading the item of a `for` loop around it holds, whenever the raise runs, for
    some item: `any(<test> for <item> in <iterable>)`, nested loops outermost first, an
    iterable in what was passed as its loop began, a local computed from the item in the
    same pass read through its value. Nothing is said where the body may change the item
    before the test, or where a nested function may rebind it."""
    source = """\
        def f(params, groups, lr):
            for p in params:
                if p.grad is not None and p.grad.is_sparse:
                    raise Target
            for i, (name, value) in enumerate(params.items()):
                if value < lr:
                    raise Pairs
            for group in groups:
                for q in group["params"]:
                    if q.dtype != lr:
                        raise Nested
            for p in params:
                g = p.grad
                if g.is_sparse:
                    raise Derived
            for p in params:
                p.zero_()
                if p.ndim > 2:
                    raise Changed
        """
    assert _expanded(source) == [
        (
            "p.grad is not None and p.grad.is_sparse",
            "any(p.grad is not None and p.grad.is_sparse for p in params)",
        )
    ]
    assert _expanded(source, "Pairs") == [
        ("value < lr", "any(value < lr for i, (name, value) in enumerate(params.items()))")
    ]
    assert _expanded(source, "Nested") == [
        ("q.dtype != lr", 'any(q.dtype != lr for group in groups for q in group["params"])')
    ]
    assert _expanded(source, "Derived") == [
        ("g.is_sparse", "any(p.grad.is_sparse for p in params)")
    ]
    assert _expanded(source, "Changed") == [("p.ndim > 2", None)]
    # An iterable a comprehension needs in parentheses gets them.
    either = """\
        def f(ts, table):
            for t in ts if isinstance(ts, tuple) else (ts,):
                if t in table:
                    raise Target
        """
    assert _expanded(either) == [
        ("t in table", "any(t in table for t in (ts if isinstance(ts, tuple) else (ts,)))")
    ]
    rebinding = """\
        def f(items):
            def later():
                nonlocal x
                x = 0
            for x in items:
                if x > 3:
                    raise Target
        """
    assert _expanded(rebinding) == [("x > 3", None)]
    # A value set ahead of the loop that a pass changes after the test is not the value the
    # next pass tests; one no pass changes is.
    passes = """\
        def f(ranks, k):
            seen = set()
            limit = k * 2
            for rank in ranks:
                if rank in seen:
                    raise Target
                if rank > limit:
                    raise Big
                seen.add(rank)
        """
    assert _expanded(passes) == [("rank in seen", None)]
    assert _expanded(passes, "Big") == [("rank > limit", "any(rank > (k * 2) for rank in ranks)")]


def test_a_parameter_defaulted_when_none_is_the_callers_otherwise() -> None:
    """`if rank is None: rank = get_rank()` keeps what the caller passed unless it passed
    None: the test holds for what was passed, or the raise may run because None was passed.
    Any other binding of the parameter leaves it the function's own."""
    source = """\
        def sampler(dataset, num_replicas=None, rank=None):
            if num_replicas is None:
                num_replicas = world_size()
            if rank is None:
                rank = get_rank()
            if rank >= num_replicas or rank < 0:
                raise Target
        """
    assert _expanded(source) == [
        (
            "rank >= num_replicas or rank < 0",
            "num_replicas is None or rank is None or (rank >= num_replicas or rank < 0)",
        )
    ]
    changed = """\
        def f(x=None):
            if x is None:
                x = 3
            x = x + 1
            if x > 3:
                raise Target
        """
    assert _expanded(changed) == [("x > 3", None)]
    # Filled in only when None and more: passed anything but None, it is still the caller's.
    also = """\
        def step(self, epoch=None):
            if epoch is None and self.last_epoch < 0:
                epoch = 0
            if epoch < 0:
                raise Target
        """
    assert _expanded(also) == [("epoch < 0", "epoch is None or (epoch < 0)")]
    either = """\
        def step(epoch=None, late=False):
            if epoch is None or late:
                epoch = 0
            if epoch < 0:
                raise Target
        """
    assert _expanded(either) == [("epoch < 0", None)]


def test_what_a_method_set_on_the_instance_is_read_through_its_value() -> None:
    """A constructor's check of what it just set (`self.dtype = dtype` then `if self.dtype
    not in ...`) is a check of the argument; another attribute set between changes nothing,
    a method called on the instance may change anything, and an attribute the method does
    not set is the instance's state."""
    source = """\
        class Packed:
            def __init__(self, count, dtype=None):
                self.dtype = dtype
                self.other = 3
                if self.dtype not in [A, B]:
                    raise Target
                self.n = count * 2
                self.reset()
                if self.n > 10:
                    raise Reset
            def forward(self, x):
                if self.dtype != x:
                    raise State
        """
    assert _expanded(source) == [("self.dtype not in [A, B]", "dtype not in [A, B]")]
    assert _expanded(source, "Reset") == [("self.n > 10", None)]
    assert _expanded(source, "State") == [("self.dtype != x", None)]


def test_a_guards_locals_are_read_as_an_ifs_are() -> None:
    """A guard's locals are read through their values, as of the guard (what ran ahead of it
    in its own block included)."""
    source = """\
        def f(weights, scale):
            if not weights:
                return None
            total = sum(weights)
            if total == 0:
                raise Empty
            raise Target
        """
    guards = [c for c in _site(source).conditions if c.kind == "guard"]
    assert [(c.code, c.locals, c.expanded) for c in guards] == [
        ("total != 0", ("total",), "sum(weights) != 0"),
        ("weights", (), None),
    ]


def test_a_test_of_locals_with_no_exact_value_says_what_they_are_computed_from() -> None:
    """Where the locals a test reads have no one value (assigned in branches), `depends`
    names the parameters any of their bindings reads, through other locals."""
    source = """\
        def interp(input, size=None, mode="nearest", scale=None):
            if size is not None:
                out = size
            else:
                factors = [scale] * 2
                out = [int(s * f) for s, f in zip(input.shape, factors)]
            if len(out) != input.dim() - 2:
                raise Target
        """
    (condition,) = [c for c in _site(source).conditions if c.kind == "if"]
    assert (condition.expanded, condition.depends) == (None, ("input", "scale", "size"))


def test_a_list_filled_in_place_depends_on_what_decides_each_change() -> None:
    """Errors gathered into a list (`append`, `insert`) under tests of the parameters, then a
    test of the list: `depends` names the parameters the changes read and those the `if`s
    deciding them read, as an assignment's own do."""
    source = """\
        def load(state, strict=True, assign=False, verbose=False):
            errors = []
            missing = [key for key in state if key.startswith("_")]
            if strict:
                if missing:
                    errors.insert(0, f"missing: {missing}")
            if assign:
                log = verbose
            if len(errors) > 0:
                raise Target
        """
    (condition,) = [c for c in _site(source).conditions if c.kind == "if"]
    assert (condition.expanded, condition.depends) == (None, ("state", "strict"))


def test_a_guard_says_whether_its_if_returns() -> None:
    """`returns` holds for a guard whose exiting branches all `return` (the call then leaves
    normally), not for one that raises or leaves a loop."""
    source = """\
        def pick(name, items, strict):
            if name == "a":
                return 1
            elif name == "b":
                if strict:
                    return 2
                else:
                    return 3
            for item in items:
                if item is None:
                    continue
                if strict and item == name:
                    raise KeyError(name)
                raise Target
        """
    assert [(c.code, c.returns) for c in _site(source).conditions if c.kind == "guard"] == [
        ("not (strict and item == name)", False),
        ("item is not None", False),
        ('name != "a" and name != "b"', True),
    ]
    # The flag survives the scan cache.
    result = extract_source(textwrap.dedent(source), "pkg/mod.py", "pkg.mod")
    assert result_from_record(result_to_record(result), "pkg/mod.py") == result
