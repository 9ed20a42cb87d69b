"""`knowledge`: what the package itself says of an error (its docstrings, its tests, the
conditions of its code), on every entry's JSON and page, and in `errcat explain`."""

from __future__ import annotations

import json
import textwrap
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from test_build_project import ACTIVE_ID, DRAFT_ID, STOP_ID, make_project

from catalog.cli import main
from catalog.core.config import load_config
from catalog.pages import knowledge
from catalog.pages.entry_schema import schema
from catalog.pages.knowledge import KnowledgeItem, documented, remedies, turned_around
from catalog.pages.sources import Source
from catalog.publish.build import build_site
from extractor.calls import Caller, Callers
from extractor.model import Condition

CORE = '''\
def turn(name: str, speed: int) -> None:
    """Turn the widget.

    Raises:
        ValueError: If `speed` is negative: widgets turn one way only.
    """
    if speed < 0:
        raise ValueError(f"widget {name} cannot turn backwards")
    if speed > 10:
        raise ValueError(f"widget {name} spins too fast: {speed}")


def stop(name: str) -> None:
    raise RuntimeError(f"widget {name} is already stopped")
'''

TESTS = """\
import pytest

from widgets.core import stop, turn


def test_backwards_is_refused():
    with pytest.raises(ValueError, match="cannot turn backwards"):
        turn("w", -1)


def test_too_fast():
    with pytest.raises(ValueError, match=r"spins too fast: \\d+"):
        turn("w", 11)
"""


@pytest.mark.parametrize(
    ("condition", "wanted"),
    [
        ("speed < 0", "not (speed < 0)"),  # exact: a NaN is neither < 0 nor >= 0
        ("not 0.0 <= lr", "0.0 <= lr"),
        ("x is None", "x is not None"),
        ("key not in table", "key in table"),
        ("a < 0 or b < 0", "not (a < 0 or b < 0)"),
        # A parameter defaulted when None (the extractor's `rank is None or ...`).
        (
            "world is None or rank is None or (rank >= world or rank < 0)",
            "world is not None and rank is not None and not (rank >= world or rank < 0)",
        ),
        ("0 < x < 3", "not (0 < x < 3)"),
        # Any part of an `and` failing will do: each turned around, exactly.
        ('mode != "a" and mode != "b"', 'mode == "a" or mode == "b"'),
        ("x < 0 and (y or z)", "not (x < 0) or not (y or z)"),
        ("mode == 1 and any(s != 1 for s in strides)", "mode != 1 or all(s == 1 for s in strides)"),
        ("broken (", None),
    ],
)
def test_a_condition_is_turned_around_exactly_or_negated(condition: str, wanted: str) -> None:
    assert turned_around(condition) == wanted


def _source(function: str, signature: str, *conditions: Condition) -> Source:
    from catalog.pages.api import DerivedSource

    return DerivedSource(
        path="pkg/m.py",
        line=9,
        column=9,
        function=function,
        url=None,
        snippet=None,
        signature=signature,
        conditions=conditions,
    )


def test_guards_that_return_are_one_test_a_caller_turns_around() -> None:
    """A raise at the end of a function after `if`s that return (`Condition.returns`) runs
    when every one of their tests failed: the run of them is one test, turned around as a
    whole; a guard whose `if` raised (or left a loop) ends the run and gives nothing, since
    failing it leads to that other raise."""
    returned = _source(
        "check",
        "def check(x, mode):",
        Condition("guard", "x is not None", 6, returns=True),
        Condition("guard", "not isinstance(x, int)", 4, returns=True),
    )
    (item,) = remedies(returned)
    assert item.text == (
        "Call `check` with `x` such that `isinstance(x, int) or x is None`: it raises this "
        "error when `not isinstance(x, int) and x is not None` (line 4)."
    )
    assert (item.path, item.line) == ("pkg/m.py", 4)
    raised = _source(
        "check",
        "def check(x, mode):",
        Condition("guard", "x is not None", 6, returns=True),
        Condition("guard", 'mode == "strict"', 4),
    )
    assert "such that `x is None`" in remedies(raised)[0].text
    assert remedies(_source("check", "def check(x):", Condition("guard", "x > 0", 4))) == []
    # A return past a loop around the raise is a shortcut, not a way out worth saying.
    looped = _source(
        "get",
        "def get(target):",
        Condition("if", "not hasattr(mod, item)", 9, locals=("item", "mod")),
        Condition("for", "atoms", 8, "item"),
        Condition("guard", 'target != ""', 4, returns=True),
    )
    assert remedies(looped) == []
    # What the docstring says of the parameters such a run reads.
    said = replace(
        returned,
        callers=Callers("pkg.m.check", True, (), 3, False, (("x", "the value.", 2),)),
    )
    assert [item.text for item in documented(said)] == [
        "The docstring of `check` says of `x`: the value."
    ]


def test_built_ins_in_a_test_are_not_locals_and_a_parameter_may_shadow_one() -> None:
    sized = _source("take", "def take(items):", Condition("if", "len(items) == 0", 4))
    assert "`len(items) != 0`" in remedies(sized)[0].text
    shadow = _source("get", "def get(id):", Condition("if", "id is None", 4))
    assert "`id is not None`" in remedies(shadow)[0].text


def test_names_from_outside_the_function_are_read_as_they_are() -> None:
    """Classes, modules, constants and a comprehension's own names are no locals: the test
    still depends only on what the caller passes."""
    typed = _source(
        "optimize", "def optimize(mod):", Condition("if", "not isinstance(mod, ScriptModule)", 4)
    )
    assert "with `mod` such that `isinstance(mod, ScriptModule)`" in remedies(typed)[0].text
    dtype = _source(
        "Linear.from_float",
        "def from_float(cls, mod, dtype):",
        Condition("if", "dtype != torch.qint8 and dtype != torch.float16", 4),
    )
    assert "with `dtype` such that" in remedies(dtype)[0].text
    sizes = _source("grid", "def grid(sizes):", Condition("if", "any(s < 0 for s in sizes)", 4))
    assert "`all(not (s < 0) for s in sizes)`" in remedies(sizes)[0].text
    in_class = _source(
        "Linear.from_float", "def from_float(cls, mod):", Condition("if", "cls.x", 4)
    )
    assert remedies(in_class) == []


def test_a_row_of_error_inputs_is_said_as_one() -> None:
    """A tested item from a table's row says it is a row of that table, not a test."""
    from extractor.expectations import Expectation

    row = Expectation(
        "pkg/testing/inputs.py",
        12,
        "ValueError",
        "builtins.ValueError",
        "rho value",
        'ErrorInput(0, error_type=ValueError, error_regex="rho value")',
        "error_inputs_adadelta",
        record=True,
    )
    (item,) = knowledge.tested([knowledge.Tested(row)])
    assert item.text == (
        "A row of the error inputs of `error_inputs_adadelta` expects `ValueError`, with a "
        "message matching `rho value`."
    )
    assert item.code == row.code and not item.verified


def test_a_remedy_names_the_public_parameter_and_what_to_pass() -> None:
    """The innermost condition on a parameter of a public function gives what to pass."""
    source = _source(
        "Adam.__init__",
        "def __init__(self, params, lr=1e-3):",
        Condition("if", "not 0.0 <= lr", 7),
        Condition("for", "params", 5, "group"),
    )
    assert remedies(source) == [
        KnowledgeItem(
            kind="remedy",
            text="Call `Adam` with `lr` such that `0.0 <= lr`: it raises this error when "
            "`not 0.0 <= lr` (line 7).",
            path="pkg/m.py",
            line=7,
        )
    ]


def test_dunder_methods_are_how_users_reach_a_public_class() -> None:
    """`__new__` is called as the class, `__getitem__` by indexing: both are public; a
    parameter filled in when None is said as what the caller must pass, a condition that can
    only hold then."""
    made = _source(
        "Results.List.__new__",
        "def __new__(cls, contained=None):",
        Condition(
            "if",
            "not isinstance(contained, list)",
            6,
            None,
            ("contained",),
            "contained is None or (not isinstance(contained, list))",
        ),
    )
    assert remedies(made)[0].text == (
        "Call `Results.List` with `contained` such that `contained is not None and "
        "isinstance(contained, list)`: it raises this error when `not isinstance(contained, "
        "list)` (line 6), which can only hold when `contained is None or (not "
        "isinstance(contained, list))`."
    )
    indexed = _source(
        "Stack.__getitem__", "def __getitem__(self, idx):", Condition("if", "idx < 0", 4)
    )
    assert "Call `Stack.__getitem__` with `idx` such that `not (idx < 0)`" in (
        remedies(indexed)[0].text
    )
    hidden = _source("Stack._get", "def _get(self, idx):", Condition("if", "idx < 0", 4))
    assert remedies(hidden) == []


def test_a_test_of_what_the_function_computes_counts_in_what_it_was_passed() -> None:
    """A test reading locals gives a remedy through the extractor's `expanded`, said as
    written and as expanded; a test written over lines reads as one line."""
    computed = _source(
        "conv",
        "def conv(input, weight):",
        Condition("if", "ndim != 4", 5, None, ("ndim",), "input.dim() != 4"),
    )
    assert remedies(computed)[0].text == (
        "Call `conv` with `input` such that `input.dim() == 4`: it raises this error when "
        "`ndim != 4` (line 5), which can only hold when `input.dim() != 4`."
    )
    spread = _source(
        "conv", "def conv(input, weight):", Condition("if", "input.dim() != 4\n    and weight", 5)
    )
    assert "such that `input.dim() == 4 or not weight`" in remedies(spread)[0].text


def test_a_test_of_the_instance_counts_through_what_its_constructor_was_passed() -> None:
    """A method's test reading attributes its class's constructor set from its parameters:
    said in the method's arguments with the attributes explained, or, where it reads none
    of them, in the constructor's. Other public attributes of the instance are said as they
    are; a private one, or the instance passed whole, gives no remedy, nor does a private
    method."""
    held = (
        ("input_size", "input_size", "Features of each input.", 2),
        ("proj", "proj_size", "", 0),
    )
    checked = _source(
        "RNN.check_input",
        "def check_input(self, input):",
        Condition("if", "self.input_size != input.size(-1)", 4, instance=held),
    )
    remedy, said = remedies(checked)
    assert remedy.text == (
        "Call `RNN.check_input` with `input` on an instance such that `self.input_size == "
        "input.size(-1)`, where `self.input_size` is the `input_size` it was made with: it "
        "raises this error when `self.input_size != input.size(-1)` (line 4)."
    )
    # What the class's docstring says that constructor argument is, where it says anything.
    assert (said.kind, said.text, said.path, said.line) == (
        "documented",
        "The docstring of `RNN` says of `input_size`: Features of each input.",
        "pkg/m.py",
        2,
    )
    # The instance's public state, set by anything, is part of what the caller chooses.
    hooked = _source(
        "Tensor.register_hook",
        "def register_hook(self, hook):",
        Condition("if", "not self.requires_grad", 4),
    )
    assert remedies(hooked)[0].text == (
        "Call `Tensor.register_hook` on an instance such that `self.requires_grad`: it raises "
        "this error when `not self.requires_grad` (line 4)."
    )
    constructed = _source(
        "RNN.forward", "def forward(self, x):", Condition("if", "self.proj > 0", 4, instance=held)
    )
    assert remedies(constructed)[0].text == (
        "Make the `RNN` with `proj_size` such that `not (proj_size > 0)`: `forward` raises "
        "this error when `self.proj > 0` (line 4), where `self.proj` is the `proj_size` it was "
        "made with."
    )
    # Not a method (a function whose first parameter is called `self`), or a constructor.
    for function, signature in (
        ("nll_loss", "def nll_loss(self, target):"),
        ("RNN.__init__", "def __init__(self, mode):"),
        ("Signature.__post_init__", "def __post_init__(self):"),
    ):
        plain = _source(function, signature, Condition("if", "self.dim() > 2", 4))
        assert remedies(plain) == [], function
    # A dataclass's `__post_init__` reading its fields: what the instance was made with.
    fields = (("shutdown_timeout", "shutdown_timeout", "Seconds to wait.", 3),)
    validated = _source(
        "LaunchConfig.__post_init__",
        "def __post_init__(self):",
        Condition("if", "self.shutdown_timeout < 0", 9, instance=fields),
    )
    remedy, said = remedies(validated)
    assert remedy.text == (
        "Make the `LaunchConfig` with `shutdown_timeout` such that `not (shutdown_timeout < "
        "0)`: `__post_init__` raises this error when `self.shutdown_timeout < 0` (line 9), "
        "where `self.shutdown_timeout` is the `shutdown_timeout` it was made with."
    )
    assert said.text == (
        "The docstring of `LaunchConfig` says of `shutdown_timeout`: Seconds to wait."
    )
    # ... but not when it reads state no argument gave it.
    partly = _source(
        "LaunchConfig.__post_init__",
        "def __post_init__(self):",
        Condition("if", "self.shutdown_timeout < self.floor", 9, instance=fields),
    )
    assert remedies(partly) == []
    hidden = _source(
        "RNN.forward",
        "def forward(self, x):",
        Condition("if", "self._cache is None", 4, instance=(("_cache", "_cache", "", 0),)),
    )
    assert remedies(hidden) == []
    for other in ("self.proj > self._limit", "self.proj > size(self)", "self._reset() or x"):
        unknown = _source(
            "RNN.forward", "def forward(self, x):", Condition("if", other, 4, instance=held)
        )
        assert remedies(unknown) == [], other
    private = _source(
        "_RNN.forward", "def forward(self, x):", Condition("if", "self.proj > x", 4, instance=held)
    )
    assert remedies(private) == []


def test_a_test_of_loop_items_asks_every_item_to_pass() -> None:
    """A test of a loop's item (the extractor says it of the items, `any(...)`) gives a
    remedy over all of them, turned around inside (`all(...)`)."""
    looped = _source(
        "step",
        "def step(params, lr):",
        Condition(
            "if",
            "p.grad is not None and p.grad.is_sparse",
            6,
            None,
            ("p",),
            "any(p.grad is not None and p.grad.is_sparse for p in params)",
        ),
        Condition("for", "params", 5, "p"),
    )
    assert remedies(looped)[0].text == (
        "Call `step` with `params` such that "
        "`all(not (p.grad is not None and p.grad.is_sparse) for p in params)`: it raises this "
        "error when `p.grad is not None and p.grad.is_sparse` (line 6), which can only hold when "
        "`any(p.grad is not None and p.grad.is_sparse for p in params)`."
    )
    assert turned_around('any(q.dtype != lr for g in gs for q in g["params"] if q)') == (
        'all(q.dtype == lr for g in gs for q in g["params"] if q)'
    )


def _check_rate(
    test: str, *callers: Caller, documents: tuple[tuple[str, str, int], ...] = ()
) -> Source:
    """A raise in the private helper `_check_rate(rate, low=0.0)` under `if <test>:`, reached
    by `callers`."""
    from catalog.pages.api import DerivedSource

    return DerivedSource(
        path="pkg/_checks.py",
        line=9,
        column=9,
        function="_check_rate",
        url=None,
        snippet=None,
        signature="def _check_rate(rate, low=0.0):",
        conditions=(Condition("if", test, 8),),
        callers=Callers("pkg._checks._check_rate", False, callers, 3, False, documents),
    )


def test_a_private_check_is_said_of_the_public_caller_that_passes_its_parameters() -> None:
    """A raise in a private helper whose test reads only the helper's parameters: the remedy
    names the nearest public caller that passes its own parameters on to them, in its names;
    a caller that passes only some of them, or none, cannot avoid it by its arguments."""

    def helper(*callers: Caller) -> Source:
        return _check_rate("not low <= rate or rate > 1e9 * rate", *callers)

    partial = Caller("pkg.optim.SGD.__init__", "pkg/optim.py", 3, 1, (("rate", "lr"),))
    deeper = Caller(
        "pkg.optim.Adam.__init__", "pkg/optim.py", 9, 2, (("low", "floor"), ("rate", "lr"))
    )
    direct = Caller(
        "pkg.optim.Rprop.__init__", "pkg/optim.py", 20, 1, (("low", "lo"), ("rate", "r"))
    )
    assert remedies(helper(partial, deeper, direct)) == [
        KnowledgeItem(
            kind="remedy",
            text="Call `pkg.optim.Rprop` with `lo`, `r` such that "
            "`not (not lo <= r or r > 1e9 * r)`: it passes them on to `_check_rate`, which "
            "raises this error when `not low <= rate or rate > 1e9 * rate` (line 8).",
            path="pkg/_checks.py",
            line=8,
        )
    ]
    assert (
        "Call `pkg.optim.Adam` with `floor`, `lr` such that"
        in remedies(helper(partial, deeper))[0].text
    )
    assert remedies(helper(partial)) == []
    assert remedies(helper()) == []


def test_a_check_reached_through_a_returned_function_says_so() -> None:
    """A caller reaching the check through a function it returns (`vmap(f)` returns what
    calls on) is avoided by the same arguments, passed when making what it returns; the remedy
    says the raise comes from that function."""
    returned = Caller(
        "pkg.transform", "pkg/api.py", 3, 2, (("low", "floor"), ("rate", "scale")), returned=True
    )
    (item,) = remedies(_check_rate("not low <= rate", returned))
    assert item.text == (
        "Call `pkg.transform` with `floor`, `scale` such that `floor <= scale`: the function "
        "it returns passes them on to `_check_rate`, which raises this error when `not low <= "
        "rate` (line 8)."
    )


def test_a_returned_functions_test_of_what_it_reads_of_its_maker_is_said_of_the_maker() -> None:
    """`jacrev(func, argnums)` returns `wrapper`, whose test reads `argnums` of `jacrev`: the
    remedy names `jacrev`'s own parameter, which it passes on to that name."""
    from catalog.pages.api import DerivedSource

    maker = Caller("pkg.jacrev", "pkg/api.py", 3, 1, (("argnums", "argnums"),), returned=True)
    source = DerivedSource(
        path="pkg/api.py",
        line=6,
        column=13,
        function="jacrev.wrapper",
        url=None,
        snippet=None,
        signature="def wrapper(*args):",
        conditions=(Condition("if", "argnums == ()", 5),),
        callers=Callers("pkg.api.jacrev.wrapper", False, (maker,), 3, False, (), nested=True),
    )
    (item,) = remedies(source)
    assert item.text == (
        "Call `pkg.jacrev` with `argnums` such that `argnums != ()`: the function it returns "
        "passes it on to `jacrev.wrapper`, which raises this error when `argnums == ()` (line 5)."
    )
    # No caller passing it: a name from outside the function, as a module constant is; and
    # the function's own parameters are not said of it, a name nobody calls.
    alone = replace(
        source, callers=Callers("pkg.api.jacrev.wrapper", False, (), 3, False, (), nested=True)
    )
    assert remedies(alone) == []
    own = replace(alone, signature="def wrapper(argnums):")
    assert remedies(own) == []


def test_a_private_check_is_said_of_what_a_public_caller_computes_from_its_parameters() -> None:
    """A caller that computes the helper's arguments from its own parameters (`Conv2d`
    passing `_pair(stride)`): the remedy is said in the caller's parameters through what it
    computes (parenthesised unless it binds as tightly as a name), and names what it passes;
    a caller
    passing the parameters unchanged is still preferred when nearer."""
    computing = Caller(
        "pkg.optim.Scaled.__init__",
        "pkg/optim.py",
        30,
        1,
        (("low", "floor"),),
        documents=(("factor", "How much faster than the default to learn.", 33),),
        computes=(("rate", "factor * 0.01", ("factor",)),),
    )
    source = _check_rate("not low <= rate", computing)
    assert remedies(source) == [
        KnowledgeItem(
            kind="remedy",
            text="Call `pkg.optim.Scaled` with `factor`, `floor` such that "
            "`floor <= (factor * 0.01)`: it passes `factor * 0.01` as `rate` to `_check_rate`, "
            "which raises this error when `not low <= rate` (line 8).",
            path="pkg/_checks.py",
            line=8,
        ),
        KnowledgeItem(
            kind="documented",
            text="The docstring of `pkg.optim.Scaled` says of `factor`: How much faster than "
            "the default to learn.",
            path="pkg/optim.py",
            line=33,
        ),
    ]
    # An operand that binds less tightly than the test's operator is parenthesised.
    shifted = replace(computing, computes=(("rate", "factor + 1", ("factor",)),))
    assert (
        "`floor <= (factor + 1) * 2`"
        in remedies(_check_rate("not low <= rate * 2", shifted))[0].text
    )
    direct = Caller(
        "pkg.optim.Rprop.__init__", "pkg/optim.py", 20, 1, (("low", "lo"), ("rate", "r"))
    )
    assert remedies(_check_rate("not low <= rate", replace(computing, depth=2), direct))[
        0
    ].text.startswith("Call `pkg.optim.Rprop` with `lo`, `r`")


def test_a_private_method_s_test_of_the_instance_is_said_of_public_methods_on_it() -> None:
    """A private method reading the state users see of the instance (`len(self)`, public
    attributes): said of a public method that calls it on its own instance, never of a
    caller holding some other instance."""
    from catalog.pages.api import DerivedSource

    def indexed(*callers: Caller) -> Source:
        return DerivedSource(
            path="pkg/seq.py",
            line=9,
            column=9,
            function="Seq._item",
            url=None,
            snippet=None,
            signature="def _item(self, items, idx):",
            conditions=(Condition("if", "not -len(self) <= idx < len(self)", 8),),
            callers=Callers("pkg.seq.Seq._item", False, callers, 3, False, ()),
        )

    own = Caller("pkg.Seq.__getitem__", "pkg/seq.py", 3, 1, (("idx", "idx"),), same_instance=True)
    other = replace(own, name="pkg.use", same_instance=False)
    assert remedies(indexed(own))[0].text == (
        "Call `pkg.Seq.__getitem__` with `idx` on an instance such that `-len(self) <= idx < "
        "len(self)`: it passes it on to `Seq._item`, which raises this error when `not "
        "-len(self) <= idx < len(self)` (line 8)."
    )
    assert remedies(indexed(other)) == []
    assert remedies(indexed(replace(own, name="pkg.Seq.__init__"))) == []
    # A test of the instance alone: said of a public method calling it on its own instance,
    # whatever that method passes.
    emptied = replace(
        indexed(own),
        conditions=(Condition("if", "len(self) == 0", 8),),
        signature="def _item(self):",
    )
    assert remedies(
        replace(
            emptied,
            callers=Callers("pkg.seq.Seq._item", False, (replace(own, passes=()),), 3, False, ()),
        )
    )[0].text == (
        "Call `pkg.Seq.__getitem__` on an instance such that `len(self) != 0`: it calls "
        "`Seq._item`, which raises this error when `len(self) == 0` (line 8)."
    )


def test_a_constructor_s_test_of_an_attribute_reads_the_parameter_of_its_name() -> None:
    """In `__init__`, `self.nonlinearity` is what the parameter `nonlinearity` was made into
    (taken from `**kwargs` here): the class's docstring entry for that name is given."""
    from catalog.pages.api import DerivedSource

    said = (("nonlinearity", "The non-linearity to use, 'tanh' or 'relu'.", 6),)
    source = DerivedSource(
        path="nn/rnn.py",
        line=12,
        column=9,
        function="RNN.__init__",
        url=None,
        snippet=None,
        signature="def __init__(self, *args, **kwargs):",
        conditions=(Condition("if", 'self.nonlinearity not in ("tanh", "relu")', 11),),
        callers=Callers("nn.rnn.RNN.__init__", True, (), 3, False, said),
    )
    assert [item.text for item in documented(source)] == [
        "The docstring of `RNN` says of `nonlinearity`: The non-linearity to use, 'tanh' or 'relu'."
    ]
    method = replace(source, function="RNN.forward", signature="def forward(self, x):")
    assert documented(method) == []


def test_docstrings_say_what_the_tested_parameters_are_and_callers_say_they_raise() -> None:
    """`documented` also gives what the raising function's docstring says of the parameters
    its innermost test reads (or, where it says nothing of them, what the nearest public
    caller's says of the arguments it passes on to them), what a public caller's docstring
    says of the arguments a remedy through it names, and the raises sections of public
    callers naming the entry's class."""
    adam = Caller(
        "pkg.optim.Adam.__init__",
        "pkg/optim.py",
        20,
        1,
        (("rate", "lr"),),
        (("ValueError", "if lr is negative.", 12), ("TypeError", "never.", 13)),
        (("lr", "learning rate (default: 1e-3).", 9),),
    )
    source = _check_rate(
        "rate < low", adam, documents=(("rate", "the rate.", 3), ("low", "the floor.", 4))
    )
    assert [item.text for item in documented(source, "builtins.ValueError")] == [
        "The docstring of `_check_rate` says of `rate`: the rate.",
        "The docstring of `_check_rate` says of `low`: the floor.",
        "The docstring of `pkg.optim.Adam`, which reaches this raise, says it raises "
        "`ValueError`: if lr is negative.",
    ]
    assert documented(source, "KeyError")[2:] == []
    # A test of a local with no exact value: the parameters it is computed from.
    computed = replace(
        source,
        conditions=(Condition("if", "total < 0", 8, None, ("total",), None, ("low",)),),
    )
    assert [item.text for item in documented(computed)] == [
        "The docstring of `_check_rate` says of `low`: the floor."
    ]
    # A helper that documents nothing: the nearest public caller's word for what it passes.
    bare = _check_rate("rate < low", adam)
    assert [item.text for item in documented(bare)] == [
        "The docstring of `pkg.optim.Adam` says of `lr`: learning rate (default: 1e-3)."
    ]
    computing = replace(adam, passes=(), computes=(("rate", "lr * 2", ("lr",)),))
    assert documented(_check_rate("rate < low", computing)) == documented(bare)
    # An argument no exact text says, but which depends on `lr`.
    feeding = replace(adam, passes=(), feeds=(("rate", ("lr",)),))
    assert documented(_check_rate("rate < low", feeding)) == documented(bare)
    # An innermost test reading nothing documented (a loop item): the `if`s and loops around
    # it name what it depends on, the loop over `rate` and the `if` on `low`; an earlier
    # check that let the call through (a guard) is about something else.
    looped = replace(
        source,
        conditions=(
            Condition("if", "step.size > 1", 8),
            Condition("guard", "not scale", 7),
            Condition("if", "low", 6),
            Condition("for", "rate.steps", 5, "step"),
            Condition("except", "KeyError", 4),
        ),
    )
    assert [item.text for item in documented(looped)] == [
        "The docstring of `_check_rate` says of `rate`: the rate.",
        "The docstring of `_check_rate` says of `low`: the floor.",
    ]
    guarded = replace(looped, conditions=(looped.conditions[0], looped.conditions[1]))
    assert (
        documented(
            replace(
                guarded, callers=replace(guarded.callers, documents=(("scale", "the scale.", 5),))
            )
        )
        == []
    )
    # ... never in place of what the innermost test's own names say.
    inner = replace(looped, conditions=(Condition("if", "low > 1", 8), *looped.conditions[1:]))
    assert [item.text for item in documented(inner)] == [
        "The docstring of `_check_rate` says of `low`: the floor."
    ]
    narrow = replace(source, conditions=(Condition("if", "rate < 0", 8),))
    remedy, said = remedies(narrow)
    assert remedy.kind == "remedy" and "Call `pkg.optim.Adam` with `lr`" in remedy.text
    assert (said.kind, said.text, said.path, said.line) == (
        "documented",
        "The docstring of `pkg.optim.Adam` says of `lr`: learning rate (default: 1e-3).",
        "pkg/optim.py",
        9,
    )


@pytest.mark.parametrize(
    ("function", "signature", "condition"),
    [
        ("_private", "def _private(lr):", Condition("if", "lr < 0", 3)),
        ("turn", "def turn(lr):", Condition("if", "self.ready", 3)),
        ("turn", "def turn(lr):", Condition("for", "lr", 3, "x")),
        # A guard holds because an earlier check exited: turned around, it sends the caller
        # into that earlier raise.
        ("turn", "def turn(lr):", Condition("guard", "not (lr < 0)", 3)),
        # `age` is computed inside: no value of `max_age` alone is known to avoid the raise.
        (
            "loads",
            "def loads(s, max_age=None):",
            Condition("if", "age > max_age", 3, None, ("age",)),
        ),
        # The instance's private state is not what its users see.
        ("Pool.take", "def take(self, n):", Condition("if", "n > self._size", 3)),
        # The instance passed whole.
        ("Pool.take", "def take(self, n):", Condition("if", "n > size_of(self)", 3)),
        # No parameter at all: a module's state.
        ("start", "def start(n):", Condition("if", "not _initialized", 3)),
    ],
)
def test_no_remedy_without_a_condition_on_a_public_parameter(
    function: str, signature: str, condition: Condition
) -> None:
    assert remedies(_source(function, signature, condition)) == []


@pytest.fixture(scope="module")
def widgets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The widgets project with a docstring that documents a raise and tests that expect two."""
    root = make_project(tmp_path_factory.mktemp("knowledge") / "widgets")
    (root / "widgets" / "core.py").write_text(CORE, encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_core.py").write_text(TESTS, encoding="utf-8")
    build_site(load_config(root), root / "build" / "site", build_dir=root / "build")
    return root


def _entry(root: Path, entry_id: str) -> dict[str, object]:
    document = json.loads((root / "build/site/api/errors" / f"{entry_id}.json").read_text())
    assert isinstance(document, dict)
    return document


def test_every_entry_carries_knowledge_and_its_schema_holds(widgets: Path) -> None:
    for entry_id in (ACTIVE_ID, DRAFT_ID, STOP_ID):
        document = _entry(widgets, entry_id)
        jsonschema.validate(document, schema())
        assert isinstance(document["knowledge"], list)
    assert _entry(widgets, STOP_ID)["knowledge"] == []


def test_documented_tested_and_remedy_items_are_read_from_the_package(widgets: Path) -> None:
    knowledge = _entry(widgets, ACTIVE_ID)["knowledge"]
    assert isinstance(knowledge, list)
    by_kind = {item["kind"]: item for item in knowledge}
    assert set(by_kind) == {"documented", "tested", "remedy"}
    assert by_kind["documented"]["source"] == {"path": "widgets/core.py", "line": 5}
    assert "widgets turn one way only" in by_kind["documented"]["text"]
    tested = by_kind["tested"]
    assert tested["source"] == {"path": "tests/test_core.py", "line": 7}
    assert 'turn("w", -1)' in tested["code"]
    assert by_kind["remedy"]["text"].startswith(
        "Call `turn` with `speed` such that `not (speed < 0)`"
    )
    assert not any(item["verified"] for item in knowledge)
    # The draft is tested by the other test, and its remedy is the other condition; the
    # docstring names the class both raise, so it is said of both.
    draft = _entry(widgets, DRAFT_ID)["knowledge"]
    assert isinstance(draft, list)
    assert [item["kind"] for item in draft] == ["documented", "tested", "remedy"]
    assert "not (speed > 10)" in draft[2]["text"]


def test_the_page_says_what_the_package_says(widgets: Path) -> None:
    page = (widgets / "build/site/errors" / DRAFT_ID / "index.html").read_text()
    assert "What the package says" in page
    assert "test_too_fast" in page and "not (speed &gt; 10)" in page


def test_explain_json_gives_the_published_knowledge(
    widgets: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(widgets)
    assert main(["explain", "--json", "widget w cannot turn backwards"]) == 0
    (match,) = json.loads(capsys.readouterr().out)["matches"]
    assert [item["kind"] for item in match["knowledge"]] == ["documented", "tested", "remedy"]
    assert main(["explain", "widget w cannot turn backwards"]) == 0
    out = capsys.readouterr().out
    assert "What the package says" in out and "remedy: Call `turn`" in out


def test_knowledge_text_stays_text(tmp_path: Path) -> None:
    """A docstring's markup is the package's prose: it reaches the page as text, never HTML."""
    root = make_project(tmp_path / "widgets")
    core = CORE.replace(
        "If `speed` is negative: widgets turn one way only.",
        "If <script>alert(1)</script> [x](javascript:alert(1)) happens.",
    )
    (root / "widgets" / "core.py").write_text(textwrap.dedent(core), encoding="utf-8")
    build_site(load_config(root), root / "build" / "site", build_dir=root / "build")
    page = (root / "build/site/errors" / ACTIVE_ID / "index.html").read_text()
    section = page[page.index('class="errcat-knowledge"') :]
    section = section[: section.index("</section>")]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in section
    assert "<script" not in section and 'href="javascript:' not in section


def test_a_reproduced_call_is_verified_knowledge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `errcat reproduce` stored beside the catalog reaches the build (which runs nothing
    itself) as a verified item; a change of the raising file drops it."""
    root = make_project(tmp_path / "widgets")
    monkeypatch.chdir(root)
    assert main(["reproduce", ACTIVE_ID]) == 0
    capsys.readouterr()
    build_site(load_config(root), root / "build" / "site", build_dir=root / "build")
    knowledge = _entry(root, ACTIVE_ID)["knowledge"]
    assert isinstance(knowledge, list)
    (reproduced,) = [item for item in knowledge if item["kind"] == "reproduced"]
    assert reproduced["verified"] is True
    assert reproduced["code"] == "turn('x', -1)"
    assert reproduced["source"] == {"path": "widgets/core.py", "line": 3}
    core = root / "widgets" / "core.py"
    core.write_text(core.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    build_site(load_config(root), root / "build" / "site", build_dir=root / "build")
    kinds = [item["kind"] for item in _entry(root, ACTIVE_ID)["knowledge"]]
    assert "reproduced" not in kinds


def test_a_test_written_over_lines_reads_on_one_line_without_its_comments() -> None:
    """A comment inside a test spread over lines (`# type: ignore[...]`) would end the test
    early once joined on one line: it is left out, and a `#` inside a string is kept."""
    commented = _source(
        "pick",
        "def pick(args):",
        Condition(
            "if",
            "not (\n    isinstance(args[0], type)\n"
            "    and issubclass(args[0], Pipe)  # type: ignore[arg-type]\n"
            '    and "#" not in args[1]\n)',
            4,
        ),
    )
    (item,) = remedies(commented)
    assert item.text.endswith(
        "raises this error when `not (isinstance(args[0], type) and issubclass(args[0], Pipe) "
        'and "#" not in args[1])` (line 4).'
    )


def test_where_no_test_reads_a_documented_parameter_the_message_s_parameters_are_said() -> None:
    """A raise no test around reads a documented parameter of (`for ... else`, an `if` of a
    local): what the docstrings say of the parameters its message prints, by the name a
    placeholder starts with; an expression's placeholder names none. A test that reads a
    documented parameter comes first and alone."""
    documents = (("name", "the parameter's name.", 3), ("module", "the module.", 4))
    bare = replace(
        _source(
            "remove",
            "def remove(module, name):",
            Condition("if", "not found", 8, None, ("found",), None, ()),
        ),
        callers=Callers("pkg.m.remove", True, (), 3, False, documents),
    )
    message = "Parameter '{name}' of {module.kind} has to be pruned ({mod__get_name})"
    assert [item.text for item in documented(bare, None, message)] == [
        "The docstring of `remove` says of `name`: the parameter's name.",
        "The docstring of `remove` says of `module`: the module.",
    ]
    assert documented(bare) == []
    tested = replace(bare, conditions=(Condition("if", "name is None", 8),))
    assert [item.text for item in documented(tested, None, message)] == [
        "The docstring of `remove` says of `name`: the parameter's name."
    ]
