"""The `errcat` command line: `main(argv) -> int`.

Exit codes: 0 ok, 1 findings, 2 usage or environment error; 130 when interrupted, 143 when
terminated (`errcat build`) and 141 when the reader of stdout goes away (the shell conventions
for SIGINT, SIGTERM and SIGPIPE). A failure that escapes a command is an `ErrcatError` (or the
extractor's `ExtractorError`) whose class carries its exit code (`catalog.core.errors`): `main`
reports it and returns that code, here and nowhere else.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence

from catalog.cli.commands import COMMANDS
from catalog.core.errors import EXIT_USAGE, ErrcatError, report
from extractor.files import ExtractorError


class _Version(argparse.Action):
    """`--version`: the installed version, looked up only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(
            option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=str(kwargs.get("help"))
        )

    def __call__(self, parser: argparse.ArgumentParser, *_args: object) -> None:
        from catalog import __version__

        print(f"errcat {__version__}")  # on stdout, as argparse's own version action writes
        parser.exit()


EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143

_TERMINATED_CLEANLY = frozenset({"build"})
"""Commands for which SIGTERM unwinds like Ctrl-C, so that their children are stopped and
nothing half-made is published. Not `serve`: its server handles SIGTERM itself."""


class Terminated(BaseException):
    """SIGTERM arrived; a BaseException, like KeyboardInterrupt, so that no `except Exception`
    swallows it on the way out."""


_RAISE_AGAIN_AFTER = 0.01
"""Seconds after a stop was dropped in a finalizer before it is raised again."""


def _terminate(signum: int, frame: object) -> None:
    # A second SIGTERM while cleaning up ends the process at once, as it would have.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise Terminated


@contextlib.contextmanager
def _terminate_raises(command: str | None) -> Iterator[None]:
    if (
        command not in _TERMINATED_CLEANLY
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    previous_hook = sys.unraisablehook
    previous_alarm = signal.getsignal(signal.SIGALRM)
    armed = False

    def raise_again(unraisable: sys.UnraisableHookArgs) -> None:
        # A signal handled inside a weakref callback or a `__del__` (an import lock's cleanup,
        # say) raises where Python can only print and drop the exception, and the command
        # would go on as if never stopped. Raise it again a little later, from an alarm, so
        # that it lands where the command runs (and, should it be dropped again, once more).
        nonlocal armed
        stopped = unraisable.exc_value
        if not isinstance(stopped, Terminated | KeyboardInterrupt):
            previous_hook(unraisable)
            return
        kind = type(stopped)

        def again(signum: int, frame: object) -> None:
            raise kind

        signal.signal(signal.SIGALRM, again)
        signal.setitimer(signal.ITIMER_REAL, _RAISE_AGAIN_AFTER)
        armed = True

    sys.unraisablehook = raise_again
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(
                signal.SIGALRM, signal.SIG_DFL if previous_alarm is None else previous_alarm
            )
        signal.signal(signal.SIGTERM, previous)


_SCAN_PACKAGE = frozenset({"scan", "check", "new", "migrate", "codegen", "build", "stats"})
"""Commands that need the configured package folder (`scan` only without PATH)."""
_READ_CATALOG = frozenset({"explain"})
"""Commands that only answer from the catalog, so need its folder."""


def _project_problem(args: argparse.Namespace) -> str | None:
    """Why the project cannot serve this command, or None. Checked before the command runs, so
    that it writes nothing (no cache, no site, no generated module) for a wrong folder."""
    from catalog.core.config import ConfigError, catalog_problem, load_config, package_problem

    command = args.command
    if command == "scan" and args.paths:
        return None
    if command not in _SCAN_PACKAGE and command not in _READ_CATALOG:
        return None
    try:
        config = load_config()
    except ConfigError:
        return None  # the command reads it again and reports it in its own words
    if command in _READ_CATALOG:
        return catalog_problem(config)
    problem = package_problem(config)
    if problem is not None and command == "scan":
        problem += ", or pass PATH"
    if problem is None and command != "scan":
        # Every command but scan names the generated module (its import name, its classes):
        # a `generated` outside the project is refused here, in one place, as a ConfigError.
        from catalog.authoring.generated_path import check_generated

        check_generated(config)
    return problem


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="errcat",
        description=(
            "Catalog the errors a Python package raises, generate typed exceptions from the "
            "catalog, and publish it as a docs site and a JSON API."
        ),
    )
    parser.add_argument("--version", action=_Version, help="show errcat's version and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="<command>")
    for command in COMMANDS:
        sub = subparsers.add_parser(command.NAME, help=command.HELP, description=command.HELP)
        command.configure(sub)
        sub.set_defaults(handler=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run errcat with `argv` (default: the process arguments) and return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 0 for --help/--version and 2 for usage errors
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if getattr(args, "handler", None) is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        problem = _project_problem(args)
        if problem is not None:
            print(f"errcat {args.command}: {problem}", file=sys.stderr)
            return EXIT_USAGE
        with _terminate_raises(args.command):
            return int(args.handler(args))
    except (ErrcatError, ExtractorError) as exc:
        print(report(exc, args.command), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("errcat: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print("errcat: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except BrokenPipeError:
        # The reader went away (`errcat explain - < log | head`): stop quietly, as Unix tools
        # do, and keep Python from complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
