"""Scan templates become catalog messages, keeping the source of each parameter for migrate."""

from __future__ import annotations

import pytest

from catalog.entries.templates import parse_template, to_catalog_message


@pytest.mark.parametrize(
    ("template", "message", "arguments"),
    [
        ("plain text", "plain text", {}),
        (
            "{self.transport_name} requires a CUDA tensor",
            "{transport_name} requires a CUDA tensor",
            {"transport_name": "self.transport_name"},
        ),
        ("got {tensor.device}", "got {tensor.device}", {"tensor": "tensor"}),
        (
            "{name} must have shape {tuple(shape)}, got {tuple(t.shape)}",
            "{name} must have shape {shape}, got {t_shape}",
            {"name": "name", "shape": "tuple(shape)", "t_shape": "tuple(t.shape)"},
        ),
        (
            "value {kind!r} ratio {ratio:.2f}",
            "value {kind!r} ratio {ratio:.2f}",
            {"kind": "kind", "ratio": "ratio"},
        ),
        ("braces {{kept}} {x}", "braces {{kept}} {x}", {"x": "x"}),
        ("same {x} twice {x}", "same {x} twice {x}", {"x": "x"}),
        ("clash {x} {self.x}", "clash {x} {x_2}", {"x": "x", "x_2": "self.x"}),
        ("{a != b}", "{a_b}", {"a_b": "a != b"}),
        ("{d['k']!r}", "{d_k!r}", {"d_k": "d['k']"}),
        ("{', '.join(names)}", "{names}", {"names": "', '.join(names)"}),
    ],
)
def test_to_catalog_message(template: str, message: str, arguments: dict[str, str]) -> None:
    """Each field is renamed to an identifier and its source expression is remembered."""
    converted = to_catalog_message(template)
    assert converted.message == message
    assert converted.arguments == arguments


@pytest.mark.parametrize("template", ["{unclosed", "stray } brace", "{f(}"])
def test_unbalanced_templates_are_errors(template: str) -> None:
    """An unbalanced template is a ValueError, never a guess."""
    with pytest.raises(ValueError, match="template"):
        parse_template(template)
