"""Renamed entries: the old class names read from the generated module, and the codemod that
calls the classes by their new names."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from catalog.authoring.codegen import generate
from catalog.authoring.import_style import ImportStyle
from catalog.authoring.migrate import MigrateError, rename_source
from catalog.authoring.renames import mentions, names_on_disk
from catalog.core.model import Catalog, CatalogFile, Entry, Position, Status

STYLE = ImportStyle(first_party=frozenset({"pkg"}))
SINGLE = ImportStyle(first_party=frozenset({"pkg"}), force_single_line=True)


def _entry(entry_id: str, name: str, message: str) -> Entry:
    return Entry(
        id=entry_id,
        name=name,
        exception="ValueError",
        message=message,
        status=Status.DRAFT,
        module="pkg.m",
        position=Position(Path("errors/m.yaml"), 1, 1),
    )


def test_rename_resorts_a_from_import_and_renames_every_use() -> None:
    """The import's names are re-sorted, and raises, `except` clauses and calls use the new name."""
    source = textwrap.dedent("""\
        import os

        from pkg.errors import BadSizeError, PoolEmptyError


        def take(pool, n):
            try:
                if n > pool:
                    raise PoolEmptyError(n=n)
            except PoolEmptyError:
                raise BadSizeError(size=n) from None
            return os.sep, isinstance(n, PoolEmptyError)
    """)
    renamed = rename_source(source, {"PoolEmptyError": "AaEmptyPoolError"}, "pkg.errors", STYLE)
    assert renamed == textwrap.dedent("""\
        import os

        from pkg.errors import AaEmptyPoolError, BadSizeError


        def take(pool, n):
            try:
                if n > pool:
                    raise AaEmptyPoolError(n=n)
            except AaEmptyPoolError:
                raise BadSizeError(size=n) from None
            return os.sep, isinstance(n, AaEmptyPoolError)
    """)


def test_rename_under_force_single_line_sorts_the_run_again() -> None:
    """Under force-single-line the one-name statements of the module are put in order again."""
    source = textwrap.dedent("""\
        from pkg.a import helper
        from pkg.errors import AlphaError
        from pkg.errors import BetaError
        from pkg.z import other

        raise AlphaError(x=helper, y=other)
    """)
    renamed = rename_source(source, {"AlphaError": "GammaError"}, "pkg.errors", SINGLE)
    assert renamed == textwrap.dedent("""\
        from pkg.a import helper
        from pkg.errors import BetaError
        from pkg.errors import GammaError
        from pkg.z import other

        raise GammaError(x=helper, y=other)
    """)


def test_rename_swaps_two_names_at_once() -> None:
    """Two entries trading names are renamed together, not one into the other."""
    source = "from pkg.errors import AError, BError\n\nraise AError(a=1) if x else BError(b=2)\n"
    renamed = rename_source(source, {"AError": "BError", "BError": "AError"}, "pkg.errors", STYLE)
    assert (
        renamed
        == "from pkg.errors import AError, BError\n\nraise BError(a=1) if x else AError(b=2)\n"
    )


def test_rename_through_the_module_and_an_alias() -> None:
    """`errors.Old` through an imported module and an `import ... as` keep their spelling."""
    source = textwrap.dedent("""\
        import pkg.errors as E
        from pkg import errors
        from pkg.errors import OldError as Failure

        raise E.OldError(a=1) if a else errors.OldError(a=2) if b else Failure(a=3)
    """)
    renamed = rename_source(source, {"OldError": "NewError"}, "pkg.errors", STYLE)
    assert renamed == textwrap.dedent("""\
        import pkg.errors as E
        from pkg import errors
        from pkg.errors import NewError as Failure

        raise E.NewError(a=1) if a else errors.NewError(a=2) if b else Failure(a=3)
    """)


def test_rename_keeps_a_comment_inside_the_import() -> None:
    """A comment inside a wrapped import stays; only the name changes."""
    source = "from pkg.errors import (  # typed\n    OldError,\n)\n\nraise OldError\n"
    renamed = rename_source(source, {"OldError": "NewError"}, "pkg.errors", STYLE)
    assert renamed == "from pkg.errors import (  # typed\n    NewError,\n)\n\nraise NewError\n"


def test_rename_refuses_a_new_name_the_module_binds_already() -> None:
    """A new name the module defines itself would shadow it: the file is refused."""
    source = "from pkg.errors import OldError\n\n\nclass NewError(Exception):\n    pass\n"
    with pytest.raises(MigrateError, match="NewError is already bound in this module"):
        rename_source(source, {"OldError": "NewError"}, "pkg.errors", STYLE)


def test_a_file_without_the_old_names_is_left_as_it_is() -> None:
    """A module that imports something else of that name is not touched."""
    source = "from other.errors import OldError\n\nraise OldError\n"
    assert rename_source(source, {"OldError": "NewError"}, "pkg.errors", STYLE) == source
    assert mentions(source, ["OldError"])
    assert not mentions("OldErrorX = 1\n", ["OldError"])


@pytest.mark.parametrize("table", [False, True])
def test_names_on_disk_reads_both_forms_of_the_module(table: bool) -> None:
    """Entry id → class name, from the written-out module and from the compact table form."""
    entries = (
        _entry("0123456789abcdef", "PoolEmptyError", "pool {name} is empty"),
        _entry("fedcba9876543210", "BadSizeError", "bad size {size}"),
    )
    catalog = Catalog((CatalogFile(Path("errors/m.yaml"), "pkg.m", entries),))
    text = generate(catalog, None, table=table)
    assert names_on_disk(text) == {
        "0123456789abcdef": "PoolEmptyError",
        "fedcba9876543210": "BadSizeError",
    }
    assert names_on_disk("def broken(:\n") == {}


def test_rename_of_a_relative_import() -> None:
    """A package that imports the module relatively has that import renamed too."""
    source = "from ._errcat_errors import OldError\n\nraise OldError(a=1)\n"
    renamed = rename_source(source, {"OldError": "NewError"}, "pkg._errcat_errors", STYLE, "pkg")
    assert renamed == "from ._errcat_errors import NewError\n\nraise NewError(a=1)\n"
