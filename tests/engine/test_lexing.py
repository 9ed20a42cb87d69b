"""`catalog.engine.lexing` gives the tokens Pygments gives, state for state."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexers import PythonLexer, get_lexer_by_name  # type: ignore[import-untyped]

from catalog.engine.lexing import _finder, accelerate

ROOT = Path(__file__).resolve().parents[2]


def _pair(name: str = "python") -> tuple[object, object]:
    plain, fast = get_lexer_by_name(name), get_lexer_by_name(name)
    assert accelerate(fast)
    return plain, fast


def _windows(paths: list[Path], per_file: int, seed: int) -> list[str]:
    """Pieces of 13 lines from anywhere in each file, as a page shows them: some start inside
    a string or a bracket, where the lexer is in an unusual state."""
    chosen = random.Random(seed)
    out = []
    for path in paths:
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        for _ in range(per_file):
            start = chosen.randrange(len(lines))
            out.append("\n".join(lines[start : start + 13]))
    return out


def test_python_tokens_of_errcats_own_sources() -> None:
    paths = sorted(
        p
        for folder in ("catalog", "extractor", "runtime", "tests")
        for p in (ROOT / folder).rglob("*.py")
    )
    plain, fast = _pair()
    whole = random.Random(0).sample(paths, min(25, len(paths)))
    for text in [path.read_text(encoding="utf-8") for path in whole] + _windows(paths, 2, 1):
        assert list(fast.get_tokens(text)) == list(plain.get_tokens(text))


def test_python_tokens_of_torch() -> None:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    folder = Path(next(iter(spec.submodule_search_locations)))
    paths = sorted(folder.rglob("*.py"))
    paths = random.Random(2).sample(paths, min(150, len(paths)))
    plain, fast = _pair()
    for text in _windows(paths, 3, 3):
        assert list(fast.get_tokens(text)) == list(plain.get_tokens(text))


def test_most_python_states_are_combined() -> None:
    """The speed comes from combined states: the main ones must be (a lexer whose states all
    fell back to rule-by-rule matching would still pass the comparisons above)."""
    states = PythonLexer._tokens if hasattr(PythonLexer, "_tokens") else PythonLexer()._tokens
    combined = [state for state in states if _finder(PythonLexer, state) is not None]
    assert {"root", "expr", "keywords", "builtins", "numbers"} <= set(combined)


def test_only_plain_regex_lexers_are_changed() -> None:
    from pygments.lexers.special import TextLexer  # type: ignore[import-untyped]

    assert accelerate(TextLexer()) is False


_PIECES = [
    *"abc_ 019.()[]{}:,;=+-*/%<>!'\"\\#@\n\tfrbu",
    "def ",
    "class ",
    'f"',
    "'''",
    '"""',
    "import ",
    "from ",
    "lambda ",
    "{x}",
    "\\\n",
    "match ",
    "case ",
]
_PYTHONISH = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


@settings(max_examples=600, deadline=None)
@given(_PYTHONISH)
def test_python_tokens_of_random_text(text: str) -> None:
    plain, fast = _pair()
    assert list(fast.get_tokens(text)) == list(plain.get_tokens(text))


@pytest.mark.parametrize("name", ["json", "yaml", "bash", "toml", "c", "javascript", "pytb"])
def test_other_languages(name: str) -> None:
    plain, fast = get_lexer_by_name(name), get_lexer_by_name(name)
    accelerate(fast)
    sample = (ROOT / "README.md").read_text(encoding="utf-8")[:20000]
    assert list(fast.get_tokens(sample)) == list(plain.get_tokens(sample))
