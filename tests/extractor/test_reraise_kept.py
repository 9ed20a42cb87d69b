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


def test_lists_of_caught_exceptions_are_reraised() -> None:
    """An item of a list the function fills with caught exceptions only (`fatals[0]`, bound
    to a name or raised directly) is raised again; a list that also gets a new exception, or
    is handed to another function, could hold anything."""
    sites = _sites(
        """
        def best(parsers, text):
            fatals: list[Exception] = []
            for parser in parsers:
                try:
                    return parser(text)
                except KeyError as err:
                    fatals.append(err)
            if len(fatals) > 1:
                fatals.sort(key=str)
            if fatals:
                worst = fatals[0]
                raise worst
            raise fatals[-1]

        def padded(parsers, text):
            fatals = []
            for parser in parsers:
                try:
                    return parser(text)
                except KeyError as err:
                    fatals.append(err)
            fatals.append(ValueError("none"))
            raise fatals[0]

        def shared(parsers, text, sink):
            fatals = []
            for parser in parsers:
                try:
                    return parser(text)
                except KeyError as err:
                    fatals.append(err)
            sink(fatals)
            raise fatals[0]
        """
    )
    assert sites[12] == (True, None)
    assert sites[13] == (True, None)
    assert sites[23][0] is False
    assert sites[33][0] is False


def test_the_one_exception_built_beside_caught_ones_is_the_site() -> None:
    """`best = err` in handlers and `best = X(...)` once: the raise re-raises what was caught
    or raises the X built, so it is a site of X with X's message; two built values are not
    guessed between."""
    result = extract_source(
        textwrap.dedent(
            """
            def first(options, text):
                best = None
                for option in options:
                    try:
                        return option(text)
                    except LookupError as err:
                        best = err
                    except IndexError:
                        best = ValueError(f"{text!r} is too short")
                if best is not None:
                    raise best
                raise ValueError("no options")

            def either(options, text, flag):
                best = None
                for option in options:
                    try:
                        return option(text)
                    except LookupError as err:
                        best = err
                if flag:
                    best = TypeError("a")
                else:
                    best = ValueError("b")
                raise best
            """
        ).lstrip(),
        "m.py",
        "m",
    )
    by_line = {site.line: site for site in result.sites}
    assert by_line[11].reraise is False
    assert by_line[11].qualified_name == "builtins.ValueError"
    assert by_line[11].template == "{text!r} is too short"
    assert by_line[11].via == "best"
    assert by_line[25].qualified_name is None
