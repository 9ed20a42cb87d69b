"""errcat's own failures, and the exit code each one ends a command with.

Every failure errcat raises for a person to read derives from `ErrcatError`, and its class says
how the command ends (the contract: 0 ok, 1 findings, 2 usage or environment error), so the
command line maps an escaping failure to its exit status in one place
(`catalog.cli.main`) rather than once per command.

The extractor knows nothing of the catalog, so its few failures derive from
`extractor.files.ExtractorError`, which carries `exit_code` the same way; the one `except` in
`catalog.cli.main` names both bases.

Exceptions that never leave errcat (the private `_Unsure`, `_Declined` and the like signal a
fast path giving up) are control flow, not failures, and stay plain.
"""

from __future__ import annotations

from typing import ClassVar

from extractor.files import ExtractorError

EXIT_OK = 0
EXIT_FINDINGS = 1
"""A check failed, nothing matched, or the scan failed with `--strict`."""
EXIT_USAGE = 2
"""The command was used wrongly, or the project or machine cannot serve it."""


class ErrcatError(Exception):
    """A failure of errcat that a person reads: the message says what and what to do.

    `exit_code` belongs to the class, never to an instance, so that which status a failure
    gives is decided once, where the failure is defined.
    """

    exit_code: ClassVar[int] = EXIT_USAGE

    def report(self, command: str) -> str:
        """The line `errcat <command>` prints on stderr when this failure ends it."""
        return f"errcat {command}: {self}"


class FindingsError(ErrcatError):
    """A failure that is a finding about the project (exit 1), not a misuse of errcat."""

    exit_code: ClassVar[int] = EXIT_FINDINGS


class CatalogUnusable(ErrcatError):
    """A command that only reads the catalog cannot answer from an invalid one (exit 2: the
    project is not in a state to serve it; `errcat check` is the command that reports why)."""

    def __init__(self, problems: int) -> None:
        super().__init__(f"the catalog has {problems} problem(s); run: errcat check")


def report(failure: ErrcatError | ExtractorError, command: str) -> str:
    """The stderr line for `failure` ending `errcat <command>`."""
    if isinstance(failure, ErrcatError):
        return failure.report(command)
    return f"errcat {command}: {failure}"
