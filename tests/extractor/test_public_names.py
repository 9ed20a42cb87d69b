"""The path a package exports a class under (`CallGraph.public_name`): read from the imports its
modules make, through `*` imports, and kept where the class already is the most public."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import write_files

from extractor import scan_paths
from extractor.calls import CallGraph, call_graph, reaches

PACKAGE = {
    "shop/__init__.py": """\
        from ._errors import OutOfStock
        from .orders import *
        from ._errors import _Hidden as _Hidden
        """,
    "shop/_errors.py": """\
        class OutOfStock(Exception):
            pass


        class Refused(Exception):
            pass


        class _Hidden(Exception):
            pass
        """,
    "shop/orders/__init__.py": """\
        from shop.orders._state import Refused
        """,
    "shop/orders/_state.py": """\
        from shop._errors import Refused
        """,
    "shop/catalogue.py": """\
        class Missing(Exception):
            pass
        """,
    "shop/views.py": """\
        from shop.catalogue import Missing
        """,
}


def _graph(root: Path) -> CallGraph:
    write_files(root, PACKAGE)
    report = scan_paths([root / "shop"], cwd=root)
    return call_graph(report, cwd=root)


def test_a_class_defined_in_a_private_module_is_named_by_its_package_s_import(
    tmp_path: Path,
) -> None:
    graph = _graph(tmp_path)
    assert graph.public_name("shop._errors.OutOfStock") == "shop.OutOfStock"


def test_imports_are_followed_through_a_star_import_of_a_subpackage(tmp_path: Path) -> None:
    """`shop.orders` imports `Refused` from a private module, and `shop` takes all of
    `shop.orders` with `*`: `shop.Refused` is the shortest public path."""
    graph = _graph(tmp_path)
    assert graph.public_name("shop._errors.Refused") == "shop.Refused"


@pytest.mark.parametrize(
    "qualified",
    [
        "shop.catalogue.Missing",  # public already; `shop.views.Missing` is no better
        "shop._errors._Hidden",  # imported under a private name only
        "otherpkg.Unknown",  # nothing imports it
    ],
)
def test_a_class_keeps_its_own_path_when_no_import_is_more_public(
    tmp_path: Path, qualified: str
) -> None:
    assert _graph(tmp_path).public_name(qualified) == qualified


def test_the_cached_answers_of_a_rebuild_give_the_same_public_names(tmp_path: Path) -> None:
    """`reaches` answers from its cache on a second run without building the graph."""
    write_files(tmp_path, PACKAGE)
    cache = tmp_path / ".cache"
    report = scan_paths([tmp_path / "shop"], cwd=tmp_path, cache_dir=cache)
    classes = ["shop._errors.OutOfStock", "shop.catalogue.Missing"]
    first = reaches(report, cwd=tmp_path, cache_dir=cache, classes=classes)
    assert isinstance(first, CallGraph)
    second = reaches(report, cwd=tmp_path, cache_dir=cache, classes=classes)
    assert not isinstance(second, CallGraph)
    assert [second.public_name(name) for name in classes] == [
        "shop.OutOfStock",
        "shop.catalogue.Missing",
    ]


def test_a_method_of_a_re_exported_class_is_a_public_caller_by_its_public_path(
    tmp_path: Path,
) -> None:
    """`Cart` lives in a private module and `shop` re-exports it: `Cart.take`, which calls the
    raising helper, is what users call, as `shop.Cart.take`."""
    write_files(
        tmp_path,
        {
            "shop/__init__.py": "from ._cart import Cart\n",
            "shop/_cart.py": """\
                class Cart:
                    def take(self, item: str) -> None:
                        self._check(item)

                    def _check(self, item: str) -> None:
                        raise ValueError(f"no {item}")
                """,
        },
    )
    report = scan_paths([tmp_path / "shop"], cwd=tmp_path)
    found = call_graph(report, cwd=tmp_path).callers("shop/_cart.py", "Cart._check")
    assert found is not None
    assert [caller.name for caller in found.callers] == ["shop.Cart.take"]
    assert found.public is False  # `_check` itself stays private
