"""Subcommands of `errcat`: one module each, listed in `COMMANDS` in the order `--help` shows them.

A command module exposes `NAME`, `HELP`, `configure(parser)` to declare its arguments, and
`run(args) -> int` returning the exit code (0 ok, 1 findings, 2 usage or environment error).
"""

from __future__ import annotations

import argparse
from types import ModuleType
from typing import Protocol, cast


class Command(Protocol):
    NAME: str
    HELP: str

    def configure(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def _load() -> tuple[Command, ...]:
    from catalog.cli.commands import (
        build,
        check,
        codegen,
        explain,
        init,
        migrate,
        new,
        reproduce,
        scan,
        serve,
        stats,
    )

    modules: list[ModuleType] = [
        init,
        scan,
        check,
        new,
        migrate,
        codegen,
        build,
        serve,
        explain,
        stats,
        reproduce,
    ]
    return tuple(cast(Command, module) for module in modules)


COMMANDS: tuple[Command, ...] = _load()
