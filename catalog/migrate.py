"""`errcat migrate`: rewrite raw raises of catalogued messages into typed raises (a libcst codemod).

`raise ValueError(f"... {t.device} ...")` becomes `raise TheEntry(t=t)`, with `from` clauses,
comments and the rest of the file left exactly as they were, and the import of the generated
class added once per file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import MetadataWrapper, PositionProvider


@dataclass(frozen=True)
class Rewrite:
    """One raise to rewrite."""

    line: int
    """1-based line of the `raise` keyword."""
    column: int
    """1-based column of the `raise` keyword."""
    class_name: str
    """The generated class to raise instead."""
    arguments: Mapping[str, str]
    """Keyword parameter → source expression that supplies it."""


class _RaiseRewriter(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, rewrites: Sequence[Rewrite]) -> None:
        super().__init__()
        self.pending = {(r.line, r.column): r for r in rewrites}
        self.done: list[Rewrite] = []

    def leave_Raise(self, original_node: cst.Raise, updated_node: cst.Raise) -> cst.Raise:
        start = self.get_metadata(PositionProvider, original_node).start
        rewrite = self.pending.pop((start.line, start.column + 1), None)
        if rewrite is None:
            return updated_node
        args = [
            cst.Arg(
                keyword=cst.Name(param),
                value=cst.parse_expression(source),
                equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""),
                    whitespace_after=cst.SimpleWhitespace(""),
                ),
            )
            for param, source in rewrite.arguments.items()
        ]
        self.done.append(rewrite)
        return updated_node.with_changes(exc=cst.Call(func=cst.Name(rewrite.class_name), args=args))


class MigrateError(Exception):
    """A requested rewrite could not be applied; the file is left unchanged."""


def migrate_source(source: str, rewrites: Sequence[Rewrite], generated_module: str) -> str:
    """`source` with each rewrite applied and the generated classes imported from `generated_module`."""
    if not rewrites:
        return source
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module)
    rewriter = _RaiseRewriter(rewrites)
    changed = wrapper.visit(rewriter)
    if rewriter.pending:
        missing = ", ".join(f"{line}:{column}" for line, column in sorted(rewriter.pending))
        raise MigrateError(f"no raise statement at {missing}")
    context = CodemodContext()
    for name in sorted({r.class_name for r in rewriter.done}):
        AddImportsVisitor.add_needed_import(context, generated_module, name)
    return AddImportsVisitor(context).transform_module(changed).code
