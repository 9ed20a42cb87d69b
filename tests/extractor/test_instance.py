"""A method's test of the instance, through what the class's constructor set from its own
parameters (`Condition.instance`)."""

from __future__ import annotations

import ast
import textwrap

from extractor import extract_source
from extractor.instance import init_fields

SOURCE = '''\
class RNN:
    """A recurrent layer.

    Args:
        input_size: The number of features each input has.
    """

    def __init__(self, input_size, hidden_size, mode="tanh", layers=1):
        self.input_size = input_size
        self.hidden_size = hidden_size
        if mode:
            self.mode = mode
        layers = int(layers)
        self.layers = layers
        self.scale = 2

    def check_input(self, input):
        if self.input_size != input.size(-1):
            raise RuntimeError(f"expected {self.input_size} features")
        if self.mode == "relu6" and self.hidden_size > 3:
            raise ValueError("mode and size")
        if self.layers < 1 or self.scale > input:
            raise ValueError("layers")

    def resize(self, hidden_size):
        self.hidden_size = hidden_size

    @staticmethod
    def plain(self):
        if self.input_size:
            raise ValueError("static")


class Narrow(RNN):
    def check(self, x):
        if self.input_size != x:
            raise ValueError("inherited")
'''


def _instance(line: int) -> tuple[tuple[str, str, str, int], ...]:
    result = extract_source(textwrap.dedent(SOURCE), "pkg/rnn.py", "pkg.rnn")
    (site,) = [site for site in result.sites if site.line == line]
    return site.conditions[0].instance


def test_attributes_the_constructor_set_from_its_parameters_are_recorded() -> None:
    assert _instance(19) == (
        ("input_size", "input_size", "The number of features each input has.", 5),
    )


def test_attributes_set_conditionally_elsewhere_from_locals_or_constants_are_not() -> None:
    # `mode` is set under an `if`, `hidden_size` again by `resize`, `layers` from a rebound
    # parameter and `scale` from a constant.
    assert _instance(21) == ()
    assert _instance(23) == ()


def test_only_methods_of_the_class_defining_the_constructor_read_it() -> None:
    # A static method's first parameter is no instance; a subclass without a constructor of
    # its own is not followed to its base's.
    assert _instance(31) == ()
    assert _instance(37) == ()


DATACLASSES = '''\
import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar


@dataclass(frozen=True)
class LaunchConfig:
    """How to launch.

    Args:
        timeout: Seconds to wait for the workers.
    """

    nproc: int
    timeout: float = 30.0
    rank: int = field(default=0, init=False)
    limit: ClassVar[int] = 8
    scaled: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "scaled", self.scaled * 2)
        if self.timeout < 0 or self.nproc < 1:
            raise ValueError("timeout")
        if self.rank or self.limit or self.scaled:
            raise ValueError("not fields")


@dataclasses.dataclass(init=False)
class Hand:
    size: int

    def __post_init__(self):
        if self.size < 0:
            raise ValueError("no constructor of its own")
'''


def test_a_dataclass_writing_its_own_constructor_has_no_generated_one() -> None:
    tree = ast.parse(
        "@dataclass\nclass Own:\n    size: int\n    def __init__(self, n):\n        self.size = n\n"
    )
    klass = tree.body[0]
    assert isinstance(klass, ast.ClassDef)
    assert init_fields(klass) is None


def test_a_dataclass_constructor_takes_its_fields_as_parameters() -> None:
    """A `@dataclass`'s fields are what its constructor was passed, by name, what the class's
    docstring says of them included; a field left out of the constructor, a `ClassVar`, one
    the class stores again and a class whose decorator writes no constructor are not."""
    result = extract_source(DATACLASSES, "pkg/launch.py", "pkg.launch")
    by_line = {site.line: site.conditions[0].instance for site in result.sites}
    assert by_line[23] == (
        ("nproc", "nproc", "", 0),
        ("timeout", "timeout", "Seconds to wait for the workers.", 11),
    )
    assert by_line[25] == ()
    assert by_line[34] == ()
