"""Raises of an exception raised before are re-raises, however the code keeps it: a variable
that only holds caught exceptions, a value checked to be an exception, `with_traceback`, an
attribute of a caught exception, `typing.cast`. A new exception is never taken for one."""

from __future__ import annotations

import textwrap

from extractor import extract_source


def _sites(source: str) -> dict[int, tuple[bool, str | None]]:
    result = extract_source(textwrap.dedent(source).lstrip(), "m.py", "m")
    return {site.line: (site.reraise, site.qualified_name) for site in result.sites}


def test_exceptions_kept_from_handlers_are_reraised() -> None:
    """`last = err` in the handler, `None` before: `raise last` (also through `typing.cast`)
    raises a caught exception again; a variable also given a new exception is not one."""
    sites = _sites(
        """
        import typing as t

        def retry(attempts):
            last: Exception | None = None
            for attempt in attempts:
                try:
                    return attempt()
                except ValueError as err:
                    last = err
            raise t.cast(ValueError, last)

        def mixed(attempts):
            last = ValueError("none tried")
            for attempt in attempts:
                try:
                    return attempt()
                except ValueError as err:
                    last = err
            raise last
        """
    )
    assert sites[10] == (True, None)
    assert sites[19][0] is False


def test_checked_values_traceback_and_carried_exceptions() -> None:
    """`if isinstance(v, Exception): raise v` of a value not built here, `raise
    err.with_traceback(None)` and `raise err.original` of a caught `err` are re-raises;
    `raise Own(...).with_traceback(None)` raises the `Own` built."""
    sites = _sites(
        """
        class Own(Exception):
            pass

        def cached(cache, key):
            value = cache.get(key)
            if isinstance(value, Exception):
                raise value
            return value

        def wrapped(fn):
            try:
                return fn()
            except Own as err:
                raise err.with_traceback(None)
            except LookupError as err:
                raise err.original
            raise Own("x").with_traceback(None)

        def built():
            value = Own("new")
            if isinstance(value, Exception):
                raise value
        """
    )
    assert sites[7] == (True, None)
    assert sites[14][0] is True
    assert sites[16][0] is True
    assert sites[17] == (False, "m.Own")
    assert sites[22] == (False, "m.Own")


def test_a_new_exception_right_before_the_raise() -> None:
    """`exc = X(...)` as the statement right before `raise exc` is what it raises, even
    where the name is bound elsewhere in the function too."""
    sites = _sites(
        """
        def run(actions):
            exc = None
            for action in actions:
                try:
                    action()
                except IndexError as cause:
                    exc = RuntimeError("action failed")
                    raise exc from cause
        """
    )
    assert sites[8] == (False, "builtins.RuntimeError")
