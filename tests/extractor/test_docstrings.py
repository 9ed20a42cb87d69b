"""Raises sections of docstrings (Google, NumPy, reST) and the `documented` entries of sites."""

from __future__ import annotations

import ast
import textwrap

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractor import extract_source
from extractor.cache import result_from_record, result_to_record
from extractor.docstrings import (
    RaisesEntry,
    normalize_exception,
    parameter_entries,
    parameter_types,
    raises_entries,
)
from extractor.extract import _value_rows
from extractor.model import Documented, RaiseSite

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _entries(docstring: str) -> list[tuple[str, str, int]]:
    return [(e.exception, e.text, e.line_offset) for e in raises_entries(docstring)]


def test_google_entries_with_continuations_stop_at_the_next_section() -> None:
    doc = """Take items.

    Args:
        count: how many.

    Raises:
        ValueError: If `count` is
            negative.
        errors.BadInput: When the input
            is bad: really.
        KeyError
            When missing.

        OSError - when the disk
        is full (a dash for the colon, a continuation at the entries' indentation).

    Returns:
        int: the taken. Raises: nothing here.
    """
    assert _entries(doc) == [
        ("ValueError", "If `count` is negative.", 6),
        ("errors.BadInput", "When the input is bad: really.", 8),
        ("KeyError", "When missing.", 10),
        (
            "OSError",
            "when the disk is full (a dash for the colon, a continuation at the"
            " entries' indentation).",
            13,
        ),
    ]


def test_google_roles_and_tildes_become_dotted_names_and_code_spans() -> None:
    doc = """X.

    Raises:
        :class:`~pkg.errors.Foo`: when :class:`~pkg.Bar` is given, not ``None``.
        `Other`: when :py:func:`pkg.run` fails.
        :exc:`!Gone` : gone.
    """
    assert _entries(doc) == [
        ("pkg.errors.Foo", "when `Bar` is given, not ``None``.", 3),
        ("Other", "when `pkg.run` fails.", 4),
        ("Gone", "gone.", 5),
    ]


def test_numpy_entries_stop_at_the_next_underlined_section() -> None:
    doc = """Summary.

    Parameters
    ----------
    x : int
        The x.

    Raises
    ------
    ValueError
        If x is
        negative.
    TypeError, ~pkg.Odd
        When odd.
    Bare

    Examples
    --------
    >>> f(1)
    """
    assert _entries(doc) == [
        ("ValueError", "If x is negative.", 9),
        ("TypeError", "When odd.", 12),
        ("pkg.Odd", "When odd.", 12),
    ]


def test_numpy_section_ends_at_prose_of_its_indentation() -> None:
    doc = "S.\n\nRaises\n------\nValueError\n    Bad.\nThis is not an entry, it ends it.\n"
    assert _entries(doc) == [("ValueError", "Bad.", 4)]


def test_rest_fields_with_several_types_and_continuations() -> None:
    doc = """Summary.

    :param x: the x.
    :raises ValueError: if bad
        and worse.
    :raise TypeError: when typed.
    :raises ValueError, KeyError: either.
    :raises :class:`~a.b.C` or ~d.E: roles.
    :exception X: ex.
    :raises Empty:
    :returns: y
    """
    assert _entries(doc) == [
        ("ValueError", "if bad and worse.", 3),
        ("TypeError", "when typed.", 5),
        ("ValueError", "either.", 6),
        ("KeyError", "either.", 6),
        ("a.b.C", "roles.", 7),
        ("d.E", "roles.", 7),
        ("X", "ex.", 8),
    ]


def test_a_google_header_without_its_colon_still_reads() -> None:
    doc = "S.\n\n    Raises\n        ValueError: when the shapes\n            differ.\n    "
    assert _entries(doc) == [("ValueError", "when the shapes differ.", 3)]
    # Not a header: a line `Raises` with nothing indented under it.
    assert _entries("S.\n\nRaises\nValueError: x\n") == []


def test_docstrings_without_raises_give_nothing() -> None:
    assert raises_entries("Return the thing.\n\n    Returns:\n        int: it.\n    ") == ()
    assert raises_entries("") == ()
    assert raises_entries("This raises ValueError when bad.") == ()


def test_normalize_exception() -> None:
    assert normalize_exception(":class:`~pkg.Foo`") == "pkg.Foo"
    assert normalize_exception("``ValueError``") == "ValueError"
    assert normalize_exception(":py:exc:`the error <pkg.E>`") == "pkg.E"
    assert normalize_exception("not a name") is None


def test_records_are_frozen() -> None:
    entry = RaisesEntry("ValueError", "x", 0)
    try:
        entry.text = "y"  # type: ignore[misc]
    except AttributeError:
        pass
    else:
        raise AssertionError("RaisesEntry is mutable")


_DOC_LINES = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "Raises:",
                "Raises",
                "------",
                "---",
                ":raises ValueError: x",
                ":raises :class:`",
                ":raise",
                "    ValueError: because",
                "        more",
                "ValueError",
                "    :class:`~a.`:",
                "Returns:",
                "`` `",
                "\t\tx:",
                "",
                "   ",
            ]
        ),
        st.text(max_size=30),
    ),
    max_size=14,
)


@SETTINGS
@given(_DOC_LINES)
def test_any_docstring_shape_never_raises(lines: list[str]) -> None:
    docstring = "\n".join(lines)
    for entry in raises_entries(docstring):
        assert entry.text
        assert 0 <= entry.line_offset < len(lines) or not lines
        assert normalize_exception(entry.exception) == entry.exception


@SETTINGS
@given(st.text(max_size=40))
def test_random_text_never_raises(text: str) -> None:
    raises_entries(text)


@SETTINGS
@given(st.text(alphabet=st.sampled_from("ab\n\\\t'\"é\x00\x07\u2022\U0001f600"), max_size=30))
def test_the_decoder_accounts_for_every_character_of_a_literal(value: str) -> None:
    """`repr` writes escapes; each decoded character of the literal gets one line."""
    written = [repr(value)]
    if "\x00" not in value:  # a null byte may only be written as an escape
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        written.append('"""' + escaped + '"""')
        # A backslash-newline after each `a` adds source lines, not characters.
        written.append('"""' + escaped.replace("a", "a\\\n") + '"""')
    for text in written:
        assert ast.literal_eval(text) == value
        rows = _value_rows(text)
        assert rows is not None and len(rows) == len(value)
        assert rows == sorted(rows)
        assert all(1 <= row <= text.count("\n") + 1 for row in rows)


def _sites(source: str) -> list[RaiseSite]:
    result = extract_source(textwrap.dedent(source), "pkg/mod.py", "pkg.mod")
    assert result.ok, result.failure
    return list(result.sites)


def test_a_documented_site_gets_the_entry_with_its_file_line() -> None:
    first, second, other = _sites(
        '''\
        from pkg import errors

        def take(x):
            """Take.

            Raises:
                ValueError: If `x` is
                    negative.
                BadInput: when bad.
            """
            if x < 0:
                raise ValueError("negative")
            raise errors.BadInput("bad")

        def other():
            """:raises KeyError: when missing."""
            raise ValueError("v")
        '''
    )
    assert first.documented == (Documented("If `x` is negative.", 7, "take"),)
    assert second.documented == (Documented("when bad.", 9, "take"),)
    assert other.documented == ()


def test_the_qualified_name_matches_too() -> None:
    (site,) = _sites(
        '''\
        from pkg.errors import BadInput as Bad

        def f():
            """F.

            :raises pkg.errors.BadInput: always.
            """
            raise Bad()
        '''
    )
    assert site.qualified_name == "pkg.errors.BadInput"
    assert site.documented == (Documented("always.", 6, "f"),)


def test_init_reads_the_class_docstring_too_and_methods_their_own_only() -> None:
    init, method = _sites(
        '''\
        class Pool:
            """A pool.

            Raises:
                TypeError: when the size is not an int.
            """

            def __init__(self, size):
                """Make it.

                :raises TypeError: if `size` is bad.
                """
                raise TypeError("size")

            def take(self):
                raise TypeError("take")
        '''
    )
    assert init.documented == (
        Documented("if `size` is bad.", 11, "Pool.__init__"),
        Documented("when the size is not an int.", 5, "Pool"),
    )
    assert method.documented == ()


def test_lines_stay_exact_through_escapes_and_concatenation() -> None:
    first, second, third = _sites(
        r'''
        def f():
            """Line one\
        still one
            :raises KeyError: when \N{BULLET} missing.
            """
            raise KeyError("k")

        def g():
            ("""Head
            """ """:raises OSError: oops""")
            raise OSError

        def h():
            r"""Raw \n stays.

            :raises OSError: on \d.
            """
            raise OSError
        '''
    )
    assert first.documented == (Documented("when \u2022 missing.", 5, "f"),)
    assert second.documented == (Documented("oops", 11, "g"),)
    assert third.documented == (Documented("on \\d.", 17, "h"),)


def test_newline_escapes_move_later_value_lines_up() -> None:
    (site,) = _sites(
        r'''
        def f():
            """One\ntwo\nthree

            :raises KeyError: when missing.
            """
            raise KeyError("k")
        '''
    )
    assert site.documented == (Documented("when missing.", 5, "f"),)


def test_nested_scopes_use_the_innermost_function() -> None:
    inner, in_class = _sites(
        '''\
        def outer():
            """:raises ValueError: outer's."""
            def inner():
                """Nothing."""
                raise ValueError("inner")
            class Local:
                raise ValueError("class body")
        '''
    )
    assert inner.documented == ()
    assert in_class.documented == (Documented("outer's.", 2, "outer"),)


def test_documented_survives_the_cache_but_not_the_scan_json() -> None:
    result = extract_source(
        'def f():\n    """:raises ValueError: always."""\n    raise ValueError("x")\n', "m.py"
    )
    assert result.sites[0].documented == (Documented("always.", 2, "f"),)
    again = result_from_record(result_to_record(result), "m.py")
    assert again == result
    assert "documented" not in result.sites[0].as_dict()


def test_parameter_sections_of_each_style_are_read() -> None:
    """Google, NumPy and reST parameter entries: the name without its type or stars, the
    description joined, the entry's line; a name without a description is dropped."""
    from extractor.docstrings import ParameterEntry, parameter_entries

    google = """Step.

        Args:
            lr (float, optional): learning rate
                (default: 1e-3).
            eps: term added to the denominator.
            **kwargs: passed on.
            silent:

        Returns:
            nothing.
        """
    assert parameter_entries(google) == (
        ParameterEntry("lr", "learning rate (default: 1e-3).", 3),
        ParameterEntry("eps", "term added to the denominator.", 5),
        ParameterEntry("kwargs", "passed on.", 6),
    )
    numpy = """Step.

        Parameters
        ----------
        x, y : int
            The values
            to add.
        z
            Other.

        Returns
        -------
        int
        """
    assert parameter_entries(numpy) == (
        ParameterEntry("x", "The values to add.", 4),
        ParameterEntry("y", "The values to add.", 4),
        ParameterEntry("z", "Other.", 7),
    )
    rest = """Step.

        :param float lr: the rate,
            as a float.
        :keyword eps: small.
        :raises ValueError: never read here.
        """
    assert parameter_entries(rest) == (
        ParameterEntry("lr", "the rate, as a float.", 2),
        ParameterEntry("eps", "small.", 4),
    )
    assert parameter_entries("No sections at all.") == ()


def test_parameter_types_are_the_class_words_each_style_documents() -> None:
    docstring = """Scale a tensor.

    Args:
        input (Tensor): what is scaled.
        weight (torch.Tensor, optional): per element; the default scales all alike.
        mode (str): how.
        input (Module): a second line for a documented name is not read.
    Note: a line of prose is no parameter (`Note` reads no type).

    grid : :class:`~atlas.grid.Grid` or None
    :type other: list of Tensor
    :param Module m: the module
    count : int
    """
    assert parameter_types(docstring) == {
        "input": ("Tensor",),
        "weight": ("Tensor",),
        "mode": ("str",),
        "grid": ("Grid",),
        "other": ("Tensor",),
        "m": ("Module",),
        "count": ("int",),
    }
    assert parameter_types("") == {}
    # A built-in type counts only as the whole type: `int or float` says neither.
    assert parameter_types("Args:\n    n (int or float): a number.\n") == {}
    assert parameter_types("Args:\n    n (int, optional): a number.\n") == {"n": ("int",)}


def test_bulleted_entries_with_their_names_in_backticks_are_read() -> None:
    """An Args section written as a list (`` * `model` (GraphModule): ... ``, `- ``x``: ...`)
    gives the same entries and types as the plain form; `*args` stays a parameter."""
    doc = textwrap.dedent(
        """\
        Convert a model.

        Args:
            * `model` (GraphModule): A prepared model,
                calibrated or trained.

            - ``mode`` (str): how.
            *args: the rest.
        """
    )
    assert [(e.name, e.text, e.line_offset) for e in parameter_entries(doc)] == [
        ("model", "A prepared model, calibrated or trained.", 3),
        ("mode", "how.", 6),
        ("args", "the rest.", 7),
    ]
    assert parameter_types(doc) == {"model": ("GraphModule",), "mode": ("str",)}
