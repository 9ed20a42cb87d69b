"""Reading the calls a docstring's examples make of a function, and the calls `errcat
reproduce` builds from them."""

from __future__ import annotations

import ast
import textwrap

from helpers import guarded_site

from catalog.evidence.candidates import candidates, constructor_call
from catalog.evidence.doc_examples import MAX_SETUP, ExampleCall, example_calls, needed

DOCSTRING = textwrap.dedent(
    """\
    Resize a batch.

    Examples::

        >>> import math
        >>> print("resizing")
        resizing
        >>> scale = 2
        >>> images = torch.ones(4, 3, 8, 8) * scale
        >>> unrelated = [1, 2]
        >>> out = F.resize(images, size=(16, 16), mode="nearest")
        >>> out.shape
        torch.Size([4, 3, 16, 16])
        >>> weights = nn.Linear(3, 3)
    """
)


def test_the_call_takes_its_arguments_and_only_the_statements_they_need() -> None:
    (example,) = example_calls(DOCSTRING, "resize")
    assert example.setup == ("scale = 2", "images = torch.ones(4, 3, 8, 8) * scale")
    assert example.positional == ("images",)
    assert example.keywords == (("size", "(16, 16)"), ("mode", "'nearest'"))
    assert example.free == {"torch"}
    assert example.through == "F"


def test_a_statement_binding_a_parameters_name_is_kept_even_after_the_call() -> None:
    """A docstring names its values as the parameters are named: `weights` is bound after the
    call, reading nothing the call's statement made."""
    (example,) = example_calls(DOCSTRING, "resize", ["images", "weights"])
    assert example.setup[-1] == "weights = nn.Linear(3, 3)"
    assert {"weights", "images"} <= example.bound
    assert example.free == {"torch", "nn"}


def test_calls_that_cannot_be_taken_are_left_out() -> None:
    docstring = textwrap.dedent(
        """\
        >>> args = (1, 2)
        >>> resize(*args)
        >>> def helper(x):
        ...     return resize(x)
        >>> resize(
        """
    )
    assert example_calls(docstring, "resize") == ()
    assert example_calls("no examples here", "resize") == ()
    assert example_calls(">>>resize(1)", "resize") == ()  # doctest wants a space after >>>
    chain = "\n".join(f">>> v{i} = v{i - 1} + 1" for i in range(1, MAX_SETUP + 2))
    assert example_calls(f">>> v0 = 0\n{chain}\n>>> resize(v{MAX_SETUP + 1})", "resize") == ()


def test_free_names_resolve_to_imports_or_give_the_example_up() -> None:
    (example,) = example_calls(DOCSTRING, "resize", ["weights"])
    resolved = example.resolved("torch", {"nn"}, "torch.nn.functional", set())
    assert resolved is not None
    assert resolved.imports == ("from torch import nn", "import torch")
    assert example.resolved("torch", set(), "torch.nn.functional", set()) is None
    # A name the module binds is imported from it; the name the function is called through
    # is its module.
    other = ExampleCall((), ("Tensor(2)",), (), frozenset(), frozenset({"Tensor", "F"}), "F")
    resolved = other.resolved("torch", set(), "torch.nn.functional", {"Tensor"})
    assert resolved is not None
    assert resolved.imports == ("import torch.nn.functional as F",)
    assert resolved.from_module == ("Tensor",)


def test_a_call_keeps_only_the_statements_it_reads() -> None:
    """A value the conditions changed leaves the example's statement for it out."""
    setup = ("scale = 2", "images = torch.ones(4) * scale", "other = 3")
    assert needed(setup, "resize(images, 1)") == setup[:2]
    assert needed(setup, "resize(Tensor(), 1)") == ()
    assert needed(setup, "Grid(other).paint(scale)") == ("scale = 2", "other = 3")


def test_calls_from_an_example_change_only_what_the_conditions_read() -> None:
    """The example's values stay for the parameters no condition reads; the one a condition
    reads takes the values the conditions suggest, and the program carries the example's
    statements and imports."""
    (example,) = example_calls(DOCSTRING, "resize")
    resolved = example.resolved("torch", set(), "pkg.m", set())
    assert resolved is not None
    site = guarded_site(
        "def resize(images: Tensor, size, mode: str = 'bilinear'):",
        "mode == 'area'",
        function="resize",
    )
    first, *rest = candidates(site, "pkg.m", examples=[resolved])
    assert first.example
    assert first.call == "resize(images, (16, 16), 'area')"
    assert first.shown == (
        "scale = 2\nimages = torch.ones(4, 3, 8, 8) * scale\nresize(images, (16, 16), 'area')"
    )
    # `F` of `F.resize` is not imported: the call is made through the function's own name.
    assert first.program == "import torch\nfrom pkg.m import resize\n" + first.shown + "\n"
    # Calls of made-up values follow, as without an example.
    assert any(not c.example and c.call.startswith("resize(Tensor()") for c in rest)


def test_a_class_is_made_as_its_example_makes_it() -> None:
    docstring = ">>> grid = Grid(2, cols=3)\n"
    (example,) = example_calls(docstring, "Grid")
    init = ast.parse("def __init__(self, rows: int, cols: int): pass").body[0]
    assert isinstance(init, ast.FunctionDef)
    made = constructor_call("pkg.m", "Grid", init, [example])
    assert made is not None and made.call == "Grid(2, 3)"  # the parameters' own order
    # An inherited `__init__` (no parameters known here): the example as written.
    inherited = constructor_call("pkg.m", "Grid", None, [example])
    assert inherited is not None and inherited.call == "Grid(2, cols=3)"
    assert constructor_call("pkg.m", "Grid", init) is not None
