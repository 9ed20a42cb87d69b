"""Whether a typed raise calls its generated class the way the class is declared.

A generated class takes exactly its entry's placeholder roots, as keyword-only parameters
(see catalog/authoring/codegen.py), so a raise that passes anything else fails where it runs: with a
TypeError in place of the catalogued error, at the moment the error was meant to explain
itself. mypy sees some of these calls, but not where the call is untyped or ignored; `errcat
check` compares every typed raise with its entry.

An unpacked argument (`*args`, `**options`) is refused too: what it holds is not in the
source, so the call cannot be verified, and a generated class's parameters can always be
passed by name.
"""

from __future__ import annotations

from collections.abc import Sequence

from catalog.matching.sites import SiteLike

_SHOWN = 40
"""Longest source of an argument quoted in a finding, in characters."""


def expected_call(name: str, parameters: Sequence[str]) -> str:
    """The call a raise of class `name` must make: `Name(a=..., b=...)`."""
    return f"{name}(" + ", ".join(f"{parameter}=..." for parameter in parameters) + ")"


def _quoted(source: str) -> str:
    source = " ".join(source.split())
    return source if len(source) <= _SHOWN else source[: _SHOWN - 3] + "..."


def _names(names: Sequence[str]) -> str:
    return ", ".join(f"'{name}'" for name in names)


def call_problems(site: SiteLike, parameters: Sequence[str]) -> list[str]:
    """What the site's call does that a class with keyword-only `parameters` refuses, each
    phrased to follow "<class> is raised"; empty when the call fits."""
    arguments = site.arguments
    if arguments is None:
        # `raise X` calls `X()` itself, which is all a class without parameters takes (and
        # what linters such as ruff's RSE102 ask for instead of `raise X()`).
        return [] if not parameters else ["as a class, without a call"]
    problems = []
    for argument in arguments:
        if argument.startswith("*"):
            problems.append(f"with {_quoted(argument)} unpacked, which check cannot verify")
        else:
            problems.append(
                f"with positional argument {_quoted(argument)} (its parameters are keyword-only)"
            )
    given = [name for name, _ in site.keywords if name != "**"]
    for name, value in site.keywords:
        if name == "**":
            problems.append(f"with **{_quoted(value)} unpacked, which check cannot verify")
    unknown = [name for name in given if name not in parameters]
    if unknown:
        word = "keyword" if len(unknown) == 1 else "keywords"
        problems.append(f"with {word} {_names(unknown)}, which it does not take")
    missing = [name for name in parameters if name not in given]
    if missing:
        word = "keyword" if len(missing) == 1 else "keywords"
        problems.append(f"without {word} {_names(missing)}")
    return problems


def mismatch_message(name: str, problems: Sequence[str], via: str | None = None) -> str:
    """One sentence for all of a raise's problems (see `call_problems`)."""
    joined = (
        problems[0] if len(problems) == 1 else ", ".join(problems[:-1]) + ", and " + problems[-1]
    )
    if via is None:
        return f"{name} is raised {joined}"
    return f"{name}, raised through {via}, is built {joined}"
