"""Values the package's docstring examples make (`catalog.evidence.example_values`): read from
`>>>` lines, made once in a child, offered to parameters annotated with (or documented as, or
read like) their class, and the calls passing them tried where a child found the site's tests
to hold of them."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from helpers import errcat_output, guarded_site, package_project, write_files

from catalog.evidence.candidates import candidates
from catalog.evidence.example_values import (
    PER_CLASS,
    RESULT_FILE,
    ExampleValue,
    harvest,
    offered,
    probe_program,
    read_probe,
    read_search,
    search_program,
)
from catalog.evidence.reaching import builtin_having

GRID = '''\
class Grid:
    """Rows of numbers.

    >>> from atlas.grid import Grid
    >>> table = Grid([1, 2], [3, 4])
    >>> flat = Grid([5, 6, 7])
    >>> print(flat)
    >>> rows = len(table.rows)
    >>> other = elsewhere.Grid([1])
    """

    def __init__(self, *rows: list[int]) -> None:
        self.rows = [list(row) for row in rows]

    def rank(self) -> int:
        return 1 if len(self.rows) == 1 else 2
'''

SOLVE = '''\
from atlas.grid import Grid


def solve(grid: Grid, strict: bool = True) -> int:
    """Solve a table of numbers."""
    if grid.rank() != 2:
        raise ValueError(f"solve needs a table of rows, got rank {grid.rank()}")
    return sum(map(sum, grid.rows))


def measure(grid) -> int:
    """Measure a flat grid.

    Args:
        grid (Grid): the grid to measure.
    """
    if grid.rank() != 1:
        raise ValueError("measure needs a flat grid")
    return len(grid.rows[0])


def fold(grid) -> list[int]:
    if grid.rank() == 1:
        raise ValueError("cannot fold a flat grid")
    return [sum(row) for row in grid.rows]


def spread(self) -> int:
    # A function of the module may name a parameter `self`: it is no instance.
    if self.rank() != 1:
        raise ValueError("only a flat grid spreads")
    return 1


def label(name) -> str:
    if len(name.split(".")) < 2:
        raise ValueError("a label needs a dotted name")
    return name.upper()


def settle(fn, count: int) -> int:
    settled = fn(count)
    if count < 0:
        raise ValueError("settle needs a count of 0 or more")
    return settled


class Stack:
    def __init__(self, grid) -> None:
        self._check(grid)
        self.grid = grid

    def _check(self, grid) -> None:
        if grid.rank() == 1:
            raise ValueError("a stack needs a table of rows")


class Plotter:
    def __init__(self, width: int = 3) -> None:
        self.width = width

    def plot(self, grid: Grid) -> None:
        if len(grid.rows[0]) < self.width:
            raise ValueError("the grid is narrower than the plotter")
'''


def _atlas(root: Path) -> Path:
    return package_project(
        root,
        "atlas",
        {
            "atlas/__init__.py": "from atlas import grid, solver\n",
            "atlas/grid.py": GRID,
            "atlas/solver.py": SOLVE,
        },
    )


def test_harvest_keeps_assigned_calls_of_the_package_with_their_imports(tmp_path: Path) -> None:
    root = _atlas(tmp_path)
    write_files(
        root,
        {
            "atlas/more.py": '''\
                """
                >>> import atlas.grid as g
                >>> wide = g.Grid([1, 2, 3, 4])
                >>> grid = atlas.grid.Grid([9])
                >>> broken = atlas.grid.Grid(
                """
                ''',
        },
    )
    found = {value.source: value.imports for value in harvest(root / "atlas", "atlas")}
    assert found == {
        "Grid([1, 2], [3, 4])": ("from atlas.grid import Grid",),
        "Grid([5, 6, 7])": ("from atlas.grid import Grid",),
        "g.Grid([1, 2, 3, 4])": ("import atlas.grid as g",),
        "atlas.grid.Grid([9])": ("import atlas",),
    }
    # Shortest first.
    assert [value.source for value in harvest(root / "atlas", "atlas")] == [
        "Grid([5, 6, 7])",
        "Grid([1, 2], [3, 4])",
        "atlas.grid.Grid([9])",
        "g.Grid([1, 2, 3, 4])",
    ]


def _run(program: str, folder: Path, path: Path) -> str:
    subprocess.run(
        [sys.executable, "-c", program],
        cwd=folder,
        env={"PYTHONPATH": str(path)},
        check=False,
        capture_output=True,
    )
    return (folder / RESULT_FILE).read_text(encoding="utf-8")


def test_the_probe_names_classes_and_leaves_out_what_it_cannot_make(tmp_path: Path) -> None:
    root = _atlas(tmp_path / "project")
    values = [
        ExampleValue("Grid([5, 6, 7])", ("from atlas.grid import Grid",)),
        ExampleValue("Grid(*1)", ("from atlas.grid import Grid",)),
        ExampleValue("atlas.grid.Grid([1], [2])", ("import atlas",)),
        ExampleValue("int('3')", ()),
    ]
    work = tmp_path / "work"
    work.mkdir()
    made = read_probe(values, _run(probe_program(values), work, root))
    assert made.made == 3
    assert [v.source for v in made.by_class["Grid"]] == [
        "Grid([5, 6, 7])",
        "atlas.grid.Grid([1], [2])",
    ]
    assert [v.source for v in made.by_class["int"]] == ["int('3')"]
    # What the values have: a class is known by what a function reads of a parameter.
    assert {"rank", "rows"} <= made.attributes["Grid"]
    assert "bit_length" in made.attributes["int"]
    assert made.classes_having({"rank", "rows"}) == ("Grid",)
    assert made.classes_having({"rank", "real"}) == ()
    assert made.classes_having(set()) == ()
    # Lines of another shape, or cut short, read as nothing made.
    assert read_probe(values, '["not", "a", "dict"]\n{"index": 9, "classes": []}').made == 0
    cut = '{"index": 0, "classes": ["Grid"], "profile": ""}\n{"index": 2, "cla'
    assert [v.source for v in read_probe(values, cut).by_class["Grid"]] == ["Grid([5, 6, 7])"]
    assert read_probe(values, None).made == 0
    # A value that ends the child loses itself and those after it, not those before.
    dying = [values[0], ExampleValue("__import__('os')._exit(3)", ()), values[3]]
    (work / RESULT_FILE).unlink()
    made = read_probe(dying, _run(probe_program(dying), work, root))
    assert [v.source for vs in made.by_class.values() for v in vs] == ["Grid([5, 6, 7])"]


def test_offered_keeps_each_kind_first_then_each_profile_shortest_first() -> None:
    def value(source: str, kind: str, shape: str, *classes: str) -> ExampleValue:
        return ExampleValue(source, classes=frozenset(classes), profile=f"{kind}|{shape}")

    values = [
        value("T(1, 2)", "2|f", "(1, 2)", "T", "Base"),
        value("T(3, 4)", "2|f", "(3, 4)", "T", "Base"),
        value("T(5, 6)", "2|f", "(3, 4)", "T"),
        value("T(3)", "1|f", "(3,)", "T"),
        value("T(1, 2, 3)", "3|f", "(1, 2, 3)", "T"),
        *(value(f"U({i:03})", str(i), "", "U") for i in range(40)),
    ]
    by_class = offered(values)
    # One of each rank first, then another shape of rank 2; never two of one profile.
    assert [v.source for v in by_class["T"]] == ["T(3)", "T(1, 2)", "T(1, 2, 3)", "T(3, 4)"]
    assert [v.source for v in by_class["Base"]] == ["T(1, 2)", "T(3, 4)"]
    assert len(by_class["U"]) == PER_CLASS
    # Values with no shape, dtype or layout are told apart by their source.
    plain = [ExampleValue(f"G({i})", classes=frozenset({"G"})) for i in range(3)]
    assert [v.source for v in offered(plain)["G"]] == ["G(0)", "G(1)", "G(2)"]


def _search(
    root: Path, work: Path, options: list[tuple[str, list[str | None]]], tests: list[str]
) -> tuple[list[list[int]], list[list[int]]]:
    program = search_program("atlas.solver", ("from atlas.grid import Grid",), options, tests, 2)
    return read_search(_run(program, work, root))


def test_the_search_chooses_values_the_tests_hold_of(tmp_path: Path) -> None:
    root = _atlas(tmp_path / "project")
    work = tmp_path / "work"
    work.mkdir()
    grids = ["Grid([1, 2], [3, 4])", "Grid([5])", "Grid([6], [7])", "Grid([8])"]
    # Each test is judged once its parameters have values: up to 2 calls found.
    held, unjudged = _search(
        root,
        work,
        [("grid", grids), ("strict", ["True", "False"])],
        ["grid.rank() != 2", "not strict"],
    )
    assert held == [[1, 1], [3, 1]]
    assert unjudged == []
    # A name the test reads besides the parameters is the raising module's (`Grid`).
    held, _ = _search(
        root, work, [("grid", grids)], ["isinstance(grid, Grid) and grid.rank() == 1"]
    )
    assert held == [[1], [3]]
    # A value that cannot be made, or a test that raises, leaves the call unjudged.
    held, unjudged = _search(root, work, [("grid", [None, "Grid(*1)"])], ["grid.rank() != 2"])
    assert (held, unjudged) == ([], [[0]])
    held, unjudged = _search(root, work, [("grid", grids)], ["grid.missing()", "grid.rank() != 2"])
    assert (held, unjudged) == ([], [[1]])
    # A test reading a local of the function, which the search cannot bind, is left out.
    held, _ = _search(root, work, [("grid", grids)], ["grid.rank() != 2", "total > 3"])
    assert held == [[1], [3]]
    # What it wrote of another shape reads as nothing found.
    assert read_search('["not", "a", "dict"]') == ([], [])
    assert read_search(None) == ([], [])


def test_reproduce_passes_an_example_value_the_tests_hold_of(tmp_path: Path) -> None:
    root = _atlas(tmp_path)
    code, _out, err = errcat_output(root, "new")
    assert code == 0, err
    code, out, err = errcat_output(root, "reproduce", "--json", "--no-tests")
    assert code == 0, err
    result = json.loads(out)
    (entry,) = [e for e in result["entries"] if e["name"].startswith("SolveNeeds")]
    # `Grid()` has no rows (rank 2): the test does not hold, and `Grid(1)` fails; of the values
    # the examples make, the one of rank 1 does.
    assert entry["outcome"] == "reproduced", entry
    assert entry["call"] == "solve(Grid([5, 6, 7]))"
    tried = [attempt["call"] for attempt in entry["sites"][0]["attempts"]]
    assert "solve(Grid([1, 2], [3, 4]))" not in tried
    # A parameter without an annotation, documented as a `Grid`, gets the same values.
    (entry,) = [e for e in result["entries"] if e["name"].startswith("MeasureNeeds")]
    assert entry["call"] == "measure(Grid([1, 2], [3, 4]))", json.dumps(entry)
    # Neither annotated nor documented: known as a `Grid` by what `fold` reads of it.
    (entry,) = [e for e in result["entries"] if e["name"].startswith("CannotFoldFlat")]
    assert entry["call"] == "fold(Grid([5, 6, 7]))", json.dumps(entry)
    # Known as a `Grid` by what the method its constructor hands it to reads of it.
    (entry,) = [e for e in result["entries"] if e["name"].startswith("StackNeeds")]
    assert entry["call"] == "Stack(Grid([5, 6, 7]))", json.dumps(entry)
    # A parameter named `self` of a function of the module is known by its reads too.
    (entry,) = [e for e in result["entries"] if e["name"].startswith("OnlyFlatGrid")]
    assert entry["call"] == "spread(Grid([1, 2], [3, 4]))", json.dumps(entry)
    # What it reads of a parameter (`name.split`) says it is a `str`: a string, not None.
    (entry,) = [e for e in result["entries"] if e["name"].startswith("LabelNeeds")]
    assert entry["call"] == "label('x')", json.dumps(entry)
    # Called and nothing else: a function that hands back its first argument.
    (entry,) = [e for e in result["entries"] if e["name"].startswith("SettleNeeds")]
    assert entry["call"] == "settle(lambda *a, **k: a[0] if a else None, -1)", json.dumps(entry)
    # A method's tests read its instance, made as the call makes it.
    (entry,) = [e for e in result["entries"] if e["name"].startswith("GridNarrower")]
    assert entry["call"] == "Plotter().plot(Grid([1, 2], [3, 4]))", json.dumps(entry)
    assert result["example_values"] == 2
    code, out, _err = errcat_output(root, "reproduce")
    assert "2 values made as the package's docstring examples make them" in out.splitlines()


def test_a_package_without_examples_offers_nothing(tmp_path: Path) -> None:
    root = package_project(
        tmp_path, "plain", {"plain/__init__.py": textwrap.dedent(SOLVE).replace("atlas", "plain")}
    )
    assert harvest(root / "plain", "plain") == []


def test_a_search_passes_none_where_the_calls_before_it_built_a_class_bare() -> None:
    # `ParamsT` may be an alias that cannot be called: the plain calls tried `ParamsT()`.
    site = guarded_site("def f(params: ParamsT, grid: Grid):", "grid.rank() == 1")
    grids = {"Grid": (ExampleValue("Grid([5])", ("from pkg import Grid",)),)}
    found = candidates(site, "pkg.m", example_values=grids)
    assert [c.call for c in found if not c.search] == [
        "f(ParamsT(), Grid())",
        "f(None, None)",
    ]
    (search,) = [c.search for c in found if c.search]
    assert search.options() == [("params", ["None"]), ("grid", ["Grid([5])", None])]
    made = search.call([0, 0])
    assert made is not None
    assert made.call == "f(None, Grid([5]))"
    assert made.program.splitlines()[:2] == ["from pkg import Grid", "from pkg.m import f"]


def test_a_container_of_a_class_gets_one_example_value_in_it() -> None:
    """`list[Grid]`, `Sequence[Grid] | None` and `tuple[Grid, ...]` are offered a list or a
    tuple of one value the examples make, with that value's imports; other containers
    (`dict[str, Grid]`, `tuple[Grid, int]`) nothing."""
    grids = {"Grid": (ExampleValue("Grid([5])", ("from pkg import Grid",)),)}
    for annotation, offered_value in (
        ("list[Grid]", "[Grid([5])]"),
        ("Optional[Sequence[Grid]]", "[Grid([5])]"),
        ("typing.Iterable[pkg.Grid] | None", "[Grid([5])]"),
        ("tuple[Grid, ...]", "(Grid([5]),)"),
        ("Tuple[Grid]", "(Grid([5]),)"),
    ):
        site = guarded_site(f"def f(grids: {annotation}):", "len(grids) == 1")
        (search,) = [c.search for c in candidates(site, "pkg.m", example_values=grids) if c.search]
        assert search.options()[0][1][0] == offered_value, annotation
        made = search.call([0])
        assert made is not None and made.call == f"f({offered_value})"
        assert made.program.splitlines()[0] == "from pkg import Grid"
    for annotation in ("dict[str, Grid]", "tuple[Grid, int]", "list[int]"):
        site = guarded_site(f"def f(grids: {annotation}):", "len(grids) == 1")
        assert not any(c.search for c in candidates(site, "pkg.m", example_values=grids))


def test_what_is_read_of_a_parameter_may_name_a_built_in_type() -> None:
    assert builtin_having({"split", "upper"}) == "str"
    assert builtin_having({"items"}) == "dict"
    assert builtin_having({"append"}) == "list"
    assert builtin_having({"rank", "rows"}) is None
    assert builtin_having(set()) is None


def test_a_parameter_known_as_a_built_in_type_is_tried_as_if_annotated() -> None:
    site = guarded_site("def f(n, name):", "n < 0")
    # `name`, which no test reads, is None where nothing says what it is.
    assert [c.call for c in candidates(site, "pkg.m")] == ["f(-1, None)"]
    found = candidates(site, "pkg.m", types=(("n", ("int",)), ("name", ("str",))))
    assert [c.call for c in found] == ["f(-1, 'x')"]


def test_a_parameter_annotated_callable_gets_a_function() -> None:
    site = guarded_site("def f(fn: Callable[[int], int], x: int):", "x < 0")
    # And once None in its place: the check that it is a function may be the raise.
    assert [c.call for c in candidates(site, "pkg.m")] == [
        "f(lambda *a, **k: a[0] if a else None, -1)",
        "f(None, -1)",
    ]
    # Tested for truth, it may also be None: no function is false.
    site = guarded_site("def f(fn: Callable[[int], int] | None):", "not fn")
    assert [c.call for c in candidates(site, "pkg.m")][:1] == ["f(None)"]
