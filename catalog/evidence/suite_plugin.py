"""A pytest plugin that records, for each test that expects an error, the raise that gave it.

Loaded into the package's own test run by `catalog.evidence.suite` (copied next to nothing else
of errcat, so that it imports only the standard library and pytest, on any Python from 3.9:
the tests may run on another interpreter than errcat's). Settings come from the environment:

- `ERRCAT_SUITE_OUT`: the JSON-lines file each record is appended to, one line per caught
  exception (several test processes, such as pytest-xdist workers, may append at once: each
  line is one `write` of a file opened for appending);
- `ERRCAT_SUITE_PACKAGE`: the package folder; frames in files under it are the package's;
- `ERRCAT_SUITE_MEMORY`: bytes of address space the run may map (RLIMIT_AS), optional;
- `ERRCAT_SUITE_NETWORK=0`: socket connections and name lookups raise OSError (a guard inside
  Python against accidental connections, not a sandbox).

A record is written when `pytest.raises` (context or call form, also imported by name after
this plugin loads) or unittest's `assertRaises`/`assertRaisesRegex` (context or call form)
catches an exception: the files and lines of the frames from the one that asked for the
expectation outwards (at most `FRAMES`; unittest's, pytest's and contextlib's left out), the
exception's class and its `id` when it has a string one (errcat's generated classes), and
the package's frames of its traceback, innermost first (at most `FRAMES`), preceded, on Python
3.12 and later, by the line that first raised it and its caller's when the traceback leaves
them out (`sys.monitoring`). Each exception the caught one was raised from (`__cause__`, or
`__context__` unless suppressed; up to `CHAIN` links) that is itself of the class the
expectation names is recorded too, marked `chained`. Nothing else of the run changes: the expectation passes or fails
exactly as it would without the plugin.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import types
import unittest.case
from collections.abc import Callable

import pytest

FRAMES = 8
"""Package frames kept per record, innermost first."""

_OUT = os.environ.get("ERRCAT_SUITE_OUT")
_PACKAGE = os.path.abspath(os.environ.get("ERRCAT_SUITE_PACKAGE", "/nonexistent")) + os.sep
# Frames in these folders are machinery between the test and its expectation: unittest's,
# pytest's (`pytest/` and `_pytest/`, side by side) and this plugin's own.
_PYTEST = os.path.dirname(os.path.abspath(pytest.__file__))
_MACHINERY = tuple(
    folder + os.sep
    for folder in (
        os.path.dirname(os.path.abspath(unittest.case.__file__)),
        _PYTEST,
        os.path.join(os.path.dirname(_PYTEST), "_pytest"),
        os.path.dirname(os.path.abspath(__file__)),
    )
)


def _confine() -> None:
    memory = os.environ.get("ERRCAT_SUITE_MEMORY")
    if memory:
        try:
            import resource

            _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            limit = int(memory) if hard == resource.RLIM_INFINITY else min(int(memory), hard)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ImportError, ValueError, OSError):
            pass
    if os.environ.get("ERRCAT_SUITE_NETWORK") == "0":
        import socket

        def refuse(*_args: object, **_kwargs: object) -> object:
            raise OSError("network access is disabled while errcat runs the tests")

        socket.socket.connect = refuse  # type: ignore[method-assign,assignment]
        socket.socket.connect_ex = refuse  # type: ignore[method-assign,assignment]
        socket.getaddrinfo = refuse  # type: ignore[assignment]


_CONTEXTLIB = os.path.abspath(contextlib.__file__)


def _test_frames(frame: types.FrameType | None) -> list[list[object]]:
    """The frames from the one that asked for the expectation outwards, machinery left out:
    a test's own wrapper of `assertRaises` (a context manager around it) asks first, the
    test that used the wrapper is further out."""
    found: list[list[object]] = []
    while frame is not None and len(found) < FRAMES:
        name = os.path.abspath(frame.f_code.co_filename)
        if not name.startswith(_MACHINERY) and name != _CONTEXTLIB:
            found.append([name, frame.f_lineno])
        frame = frame.f_back
    return found


_ORIGINS: dict[int, tuple[BaseException, list[list[object]]]] = {}
"""Where each recent exception was first raised: its package frames, innermost first (kept
with the exception itself, so that an id is never read for another object)."""
_KEEP = 4096
_IN_PACKAGE: dict[str, bool] = {}


def _in_package(filename: str) -> bool:
    known = _IN_PACKAGE.get(filename)
    if known is None:
        known = _IN_PACKAGE[filename] = os.path.abspath(filename).startswith(_PACKAGE)
    return known


class _Watch:
    """Whether raises are watched: only while an expectation's body runs, since a callback on
    every raise of a whole suite (a parser raises thousands a second to backtrack) doubles
    its time."""

    switch: Callable[[bool], None] | None = None
    active = 0

    @classmethod
    def expecting(cls, change: int) -> None:
        cls.active = max(0, cls.active + change)
        if cls.switch is not None:
            cls.switch(cls.active > 0)


def _watch_raises() -> None:
    """On Python 3.12 and later, note where the package raises each exception first
    (`sys.monitoring`): a package may raise it again with a traceback of its own making
    (a template engine pointing at the template's lines), which would hide the raise."""
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        return
    for tool in (4, 3):
        try:
            monitoring.use_tool_id(tool, "errcat")
        except ValueError:
            continue
        break
    else:
        return

    def raised(code: types.CodeType, _offset: int, exception: BaseException) -> None:
        # Called for every raise while an expectation runs: only the raising frame and its
        # caller are noted, which is all the pairing reads before the traceback's own frames.
        if id(exception) in _ORIGINS or not _in_package(code.co_filename):
            return
        frame = sys._getframe(1)
        frames: list[list[object]] = [[code.co_filename, frame.f_lineno]]
        caller = frame.f_back
        if caller is not None and _in_package(caller.f_code.co_filename):
            frames.append([caller.f_code.co_filename, caller.f_lineno])
        _ORIGINS[id(exception)] = (exception, frames)
        if len(_ORIGINS) > _KEEP:
            del _ORIGINS[next(iter(_ORIGINS))]

    def switch(on: bool) -> None:
        monitoring.set_events(tool, monitoring.events.RAISE if on else 0)

    monitoring.register_callback(tool, monitoring.events.RAISE, raised)
    _Watch.switch = switch


CHAIN = 3
"""Links of an exception's chain (`__cause__`, `__context__`) followed from what was caught."""


def _record(
    frame: types.FrameType | None,
    value: BaseException,
    traceback: types.TracebackType | None,
    expected: object = None,
) -> None:
    """Record what an expectation caught; and each exception it was raised from (its
    `__cause__`, or its `__context__` unless suppressed) that is itself of the expected class,
    marked `chained`: the test provoked that error too, which the one caught reports."""
    _record_one(frame, value, traceback, False)
    link: BaseException | None = value
    for _hop in range(CHAIN):
        assert link is not None
        link = link.__cause__ or (None if link.__suppress_context__ else link.__context__)
        if link is None:
            return
        try:
            wanted = expected is not None and isinstance(link, expected)  # type: ignore[arg-type]
        except TypeError:
            return
        if wanted:
            _record_one(frame, link, link.__traceback__, True)


def _record_one(
    frame: types.FrameType | None,
    value: BaseException,
    traceback: types.TracebackType | None,
    chained: bool,
) -> None:
    if _OUT is None:
        return
    try:
        frames: list[list[object]] = []
        while traceback is not None:
            name = traceback.tb_frame.f_code.co_filename
            if _in_package(name):
                frames.append([name, traceback.tb_lineno])
            traceback = traceback.tb_next
        frames.reverse()
        origin = _ORIGINS.get(id(value))
        if origin is not None and origin[0] is value and origin[1][0] not in frames:
            # Raised again with a traceback that leaves out where it was first raised.
            frames = origin[1] + frames
        frames = [[os.path.abspath(str(name)), line] for name, line in frames]
        tests = _test_frames(frame)
        if not tests or not frames:
            return
        kind = type(value)
        identifier = getattr(value, "id", None)
        line = json.dumps(
            {
                "tests": tests,
                "class": f"{kind.__module__}.{kind.__qualname__}",
                "id": identifier if isinstance(identifier, str) else None,
                "frames": frames[:FRAMES],
                "chained": chained,
            }
        )
        with open(_OUT, "a", encoding="utf-8") as out:
            out.write(line + "\n")
    except Exception:  # recording must never change how a test ends
        pass


class _Recording:
    """`pytest.raises(...)` as a context manager, recording what it caught."""

    def __init__(self, context: object, frame: types.FrameType, expected: object) -> None:
        self._context = context
        self._frame = frame
        self._expected = expected

    def __enter__(self) -> object:
        entered = self._context.__enter__()  # type: ignore[attr-defined]
        _Watch.expecting(1)
        return entered

    def __exit__(
        self, kind: object, value: BaseException | None, traceback: types.TracebackType | None
    ) -> bool:
        _Watch.expecting(-1)
        caught = self._context.__exit__(kind, value, traceback)  # type: ignore[attr-defined]
        if caught and value is not None:
            _record(self._frame, value, traceback, self._expected)
        return bool(caught)


_raises = pytest.raises


def raises(expected: object, *args: object, **kwargs: object) -> object:
    frame = sys._getframe(1)
    if args:
        _Watch.expecting(1)
        try:
            info = _raises(expected, *args, **kwargs)  # type: ignore[call-overload]
        finally:
            _Watch.expecting(-1)
        _record(frame, info.value, info.tb, expected)
        return info
    return _Recording(_raises(expected, **kwargs), frame, expected)  # type: ignore[call-overload]


_assert_enter = unittest.case._AssertRaisesContext.__enter__
_assert_exit = unittest.case._AssertRaisesContext.__exit__


def _assert_raises_enter(self: object) -> object:
    entered = _assert_enter(self)  # type: ignore[type-var]
    _Watch.expecting(1)
    return entered


def _assert_raises_exit(
    self: object,
    kind: object,
    value: BaseException | None,
    traceback: types.TracebackType | None,
) -> bool:
    _Watch.expecting(-1)
    caught = _assert_exit(self, kind, value, traceback)  # type: ignore[arg-type]
    if caught and value is not None:
        _record(sys._getframe(1), value, traceback, getattr(self, "expected", None))
    return caught


_confine()
_watch_raises()
pytest.raises = raises  # type: ignore[assignment]
unittest.case._AssertRaisesContext.__enter__ = _assert_raises_enter  # type: ignore[method-assign,assignment]
unittest.case._AssertRaisesContext.__exit__ = _assert_raises_exit  # type: ignore[method-assign]
