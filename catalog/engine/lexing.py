"""Pygments' regex lexers, with one combined pattern per state instead of one try per rule.

At each position a Pygments `RegexLexer` tries the rules of its current state one after the
other, from Python, until one matches: for Python code about thirty `match` calls a token, which
made lexing the largest single cost of a cold whole-torch site build. Python's `re` tries the
alternatives of `a|b|c` in the same order and takes the first one that matches at the position,
so one pattern per state, `(a)|(b)|(c)`, finds the same rule in one call from C. The rule's own
pattern then runs once more, so that its callback gets the match object it always got, and the
rest is the loop of `RegexLexer.get_tokens_unprocessed`, step for step: the same tokens, the
same state changes. A state whose rules cannot be combined without changing what they match
(numbered back-references or conditionals, inline flags, rules compiled with other flags, a
pattern `re` cannot combine) is matched rule by rule as before. The lexer's rules and the class
of token types are Pygments' private names, reached through `catalog.engine.pygments_internals`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

from pygments.lexer import RegexLexer  # type: ignore[import-untyped]
from pygments.token import Error, Whitespace  # type: ignore[import-untyped]

from catalog.engine.pygments_internals import TokenType, lexer_rules

_UNSAFE = re.compile(r"\\[1-9]|\(\?\(|\(\?[aiLmsux]+\)")
_LEADING_FLAGS = re.compile(r"\(\?([imsx]+)\)")
"""What changes meaning inside a larger pattern: a numbered back-reference or conditional
(group numbers shift), and inline flags (they must open a whole pattern) other than those
that open a rule's pattern, which become flags scoped to the rule (`_LEADING_FLAGS`)."""

Finder = tuple[Callable[[str, int], "re.Match[str] | None"], dict[int, int]]


def accelerate(lexer: Any) -> bool:
    """Make `lexer` (a lexer instance) tokenise through combined patterns; False, and the
    lexer left as it is, when it is not a plain `RegexLexer`."""
    if type(lexer).get_tokens_unprocessed is not RegexLexer.get_tokens_unprocessed:
        return False
    lexer.get_tokens_unprocessed = functools.partial(tokens_unprocessed, lexer)
    return True


@functools.cache
def _finder(lexer_class: Any, state: str) -> Finder | None:
    """One pattern for the rules of `state`, and which rule each of its groups stands for."""
    rules = lexer_rules(lexer_class)[state]
    flags = int(lexer_class.flags)
    parts: list[str] = []
    rule_of_group: dict[int, int] = {}
    group = 1
    try:
        plain_flags = re.compile("", flags).flags
        for index, (rexmatch, _, _) in enumerate(rules):
            compiled = getattr(rexmatch, "__self__", None)
            if not isinstance(compiled, re.Pattern) or not isinstance(compiled.pattern, str):
                return None
            pattern = compiled.pattern
            leading = _LEADING_FLAGS.match(pattern)
            if leading is not None:
                # Flags that open a rule's pattern hold for all of it: the same as flags
                # scoped to the whole rule, which a larger pattern allows.
                pattern = f"(?{leading.group(1)}:{pattern[leading.end() :]})"
                if re.compile(pattern, flags).flags != plain_flags:
                    return None
            elif compiled.flags != plain_flags:
                return None
            if _UNSAFE.search(pattern):
                return None
            parts.append(f"({pattern})")
            rule_of_group[group] = index
            group += 1 + compiled.groups
        combined = re.compile("|".join(parts), flags)
    except (re.error, RecursionError, OverflowError, TypeError, ValueError):
        return None
    if combined.groups != group - 1:
        return None
    return combined.match, rule_of_group


def tokens_unprocessed(
    lexer: Any, text: str, stack: tuple[str, ...] = ("root",)
) -> Iterator[tuple[int, Any, str]]:
    """What `RegexLexer.get_tokens_unprocessed(lexer, text, stack)` yields."""
    lexer_class: Any = type(lexer)
    tokendefs = lexer_rules(lexer)
    pos = 0
    statestack = list(stack)
    statetokens = tokendefs[statestack[-1]]
    finder = _finder(lexer_class, statestack[-1])
    while True:
        rule = None
        found = None if finder is None else finder[0](text, pos)
        if found is not None:
            index = finder[1].get(found.lastindex or 0) if finder is not None else None
            if index is not None:
                rule = statetokens[index]
                m = rule[0](text, pos)
                if m is None:  # cannot happen: the same pattern matched just now
                    rule = None
        if rule is None and (finder is None or found is not None):
            for candidate in statetokens:
                m = candidate[0](text, pos)
                if m:
                    rule = candidate
                    break
        if rule is not None:
            _, action, new_state = rule
            if action is not None:
                if type(action) is TokenType:
                    yield pos, action, m.group()
                else:
                    yield from action(lexer, m)
            pos = m.end()
            if new_state is not None:
                if isinstance(new_state, tuple):
                    for state in new_state:
                        if state == "#pop":
                            if len(statestack) > 1:
                                statestack.pop()
                        elif state == "#push":
                            statestack.append(statestack[-1])
                        else:
                            statestack.append(state)
                elif isinstance(new_state, int):
                    # Pop, but keep the bottom state, as Pygments does.
                    if abs(new_state) >= len(statestack):
                        del statestack[1:]
                    else:
                        del statestack[new_state:]
                elif new_state == "#push":
                    statestack.append(statestack[-1])
                else:
                    raise AssertionError(f"wrong state def: {new_state!r}")
                statetokens = tokendefs[statestack[-1]]
                finder = _finder(lexer_class, statestack[-1])
            continue
        # No rule matched: Pygments resets to the root state at a line end, and otherwise
        # gives the character as an error token.
        if pos >= len(text):
            break
        if text[pos] == "\n":
            statestack = ["root"]
            statetokens = tokendefs["root"]
            finder = _finder(lexer_class, "root")
            yield pos, Whitespace, "\n"
            pos += 1
            continue
        yield pos, Error, text[pos]
        pos += 1
