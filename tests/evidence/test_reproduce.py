"""`errcat reproduce`: candidate calls from signatures and conditions, confined children, the
verdict, the committed results file and the knowledge items made from it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import errcat_output, guarded_site
from test_build_project import ACTIVE_ID, DRAFT_ID, RETIRED_ID, STOP_ID, make_project

from catalog.core.example_worker import NETWORK_REFUSED
from catalog.evidence.candidates import (
    PublicCaller,
    candidates,
    constructor_call,
    method_caller,
)
from catalog.evidence.reproduce import RESULTS_FILE, Reproduction, load_reproduced
from catalog.pages.knowledge import reproduced_items

SPIN_ID = "5555555555555555"
PING_ID = "6666666666666666"
GROW_ID = "7777777777777777"
HIDDEN_ID = "8888888888888888"

FORK_ID = "9999999999999999"
HOME_ID = "aaaaaaaaaaaaaaaa"
ROGUE_ID = "bbbbbbbbbbbbbbbb"
WHO_ID = "cccccccccccccccc"
BOX_ID = "dddddddddddddddd"
DIVE_ID = "eeeeeeeeeeeeeeee"
POOL_ID = "ffffffffffffffff"
PAINT_ID = "abababababababab"
EASEL_ID = "cdcdcdcdcdcdcdcd"
LAMP_ID = "efefefefefefefef"
SHELF_ID = "a1a1a1a1a1a1a1a1"
FRAME_ID = "b2b2b2b2b2b2b2b2"
GALLERY_ID = "c3c3c3c3c3c3c3c3"
PAVE_ID = "d4d4d4d4d4d4d4d4"

EXTRA = """\
import dataclasses
import enum
import os
import socket
from typing import Union

IMPORTED_IN = os.getpid()


class Box:
    def __init__(self) -> None:
        self.items: list[str] = []


def take(box: Box, count: int) -> str:
    if not box.items:
        raise LookupError(f"the box is empty: cannot take {count}")
    return box.items[0]


def whoami(flag: int) -> None:
    if flag > 0:
        here = os.getpid()
        raise KeyError(f"imported in {IMPORTED_IN} called in {here}")


def spin(count: int) -> None:
    if count < 0:
        while count < 0:
            pass
        raise RuntimeError(f"spun {count} times")


def ping(host: str) -> None:
    try:
        socket.create_connection((host, 9), timeout=1).close()
    except OSError as exc:
        raise ConnectionError(f"cannot reach {host}: {exc}") from exc


def grow(size: int) -> None:
    if size > 0:
        block = bytearray(size * 3 * 1024**3)
        raise RuntimeError(f"grew {len(block)} bytes")


def split(parts: int) -> None:
    if parts > 1:
        os.fork()
        raise RuntimeError(f"split into {parts}")


def home(tag: str) -> None:
    if tag:
        where, folder = os.environ["HOME"], os.getcwd()
        raise LookupError(f"home {where} cwd {folder}")


def rogue(level: int) -> None:
    if level > 3:
        os.kill(os.getppid(), 9)
        while True:
            pass
        raise RuntimeError(f"rogue level {level}")


def _hidden(level: int) -> None:
    if level < 0:
        raise ValueError(f"hidden level {level} is negative")


def _check_depth(depth):
    limit = 100
    if depth > limit:
        raise ValueError(f"too deep: {depth} m")


def dive(meters: int) -> None:
    _check_depth(meters)


class Pool:
    def __init__(self, size: int = 2) -> None:
        self.size = size

    def take(self, count: int) -> None:
        if count > 10:
            raise ValueError(f"cannot take {count} at once")


class Grid:
    def __init__(self, rows: int, cols: int) -> None:
        self.rows, self.cols = rows, cols


def paint(grid: Grid, color: str) -> None:
    '''Paint every cell of a grid.

    Example:
        >>> print("painting")
        painting
        >>> g = Grid(2, 3)
        >>> paint(g, "red")
    '''
    if color not in ("red", "blue"):
        raise ValueError(f"no paint {color} for {grid.rows} rows")


class Easel:
    '''Holds a grid while it is painted.

    >>> easel = Easel(Grid(1, 1))
    >>> easel.hold(4)
    '''

    def __init__(self, grid: Grid) -> None:
        self.grid = grid

    def hold(self, hours: int) -> None:
        if hours > 8:
            rows = self.grid.rows
            raise ValueError(f"cannot hold {rows} rows for {hours} hours")


class Shelf:
    def __init__(self, grid: Grid, label: str) -> None:
        self.grid = grid


def stack(shelf: Shelf, count: int) -> None:
    if count > 3:
        raise ValueError(f"cannot stack {count} on {shelf.grid.rows} rows")


class Finish(enum.Enum):
    MATTE = 1
    GLOSS = 2


@dataclasses.dataclass
class Frame:
    rows: int
    finish: Finish
    label: str = "plain"


def hang(frame: Frame) -> None:
    if frame.rows > 0:
        raise ValueError(f"a frame of {frame.rows} rows is too heavy")


@dataclasses.dataclass
class Gallery:
    walls: int
    name: str = "main"
    frames: list = dataclasses.field(default_factory=list)

    def open(self) -> None:
        if self.walls < 2:
            walls = self.walls
            raise ValueError(f"a gallery of {walls} walls cannot open")


Width = Union[int, tuple[int, int]]


def pave(width: Width, count: int) -> None:
    area = width * count
    if count > 2:
        raise ValueError(f"cannot pave {count} rows of {area}")


class Lamp:
    def __init__(self, mode: str = "warm") -> None:
        self.mode = mode

    def light(self) -> None:
        if self.mode not in ("warm", "cold"):
            mode = self.mode
            raise ValueError(f"no light in mode {mode}")
"""

EXTRA_CATALOG = {
    "module": "widgets.extra",
    "errors": [
        {
            "id": entry_id,
            "name": name,
            "exception": exception,
            "status": "draft",
            "message": message,
        }
        for entry_id, name, exception, message in [
            (SPIN_ID, "SpunForever", "RuntimeError", "spun {count} times"),
            (PING_ID, "CannotReach", "ConnectionError", "cannot reach {host}: {exc}"),
            (GROW_ID, "GrewTooMuch", "RuntimeError", "grew {block} bytes"),
            (HIDDEN_ID, "HiddenNegative", "ValueError", "hidden level {level} is negative"),
            (FORK_ID, "SplitUp", "RuntimeError", "split into {parts}"),
            (HOME_ID, "HomeIs", "LookupError", "home {where} cwd {folder}"),
            (ROGUE_ID, "Rogue", "RuntimeError", "rogue level {level}"),
            (WHO_ID, "WhoAmI", "KeyError", "imported in {IMPORTED_IN} called in {here}"),
            (BOX_ID, "EmptyBox", "LookupError", "the box is empty: cannot take {count}"),
            (DIVE_ID, "TooDeep", "ValueError", "too deep: {depth} m"),
            (POOL_ID, "TakeTooMany", "ValueError", "cannot take {count} at once"),
            (PAINT_ID, "NoSuchPaint", "ValueError", "no paint {color} for {grid.rows} rows"),
            (EASEL_ID, "HeldTooLong", "ValueError", "cannot hold {rows} rows for {hours} hours"),
            (LAMP_ID, "NoSuchLight", "ValueError", "no light in mode {mode}"),
            (FRAME_ID, "TooHeavy", "ValueError", "a frame of {frame.rows} rows is too heavy"),
            (GALLERY_ID, "Closed", "ValueError", "a gallery of {walls} walls cannot open"),
            (PAVE_ID, "PavedTooMuch", "ValueError", "cannot pave {count} rows of {area}"),
            (
                SHELF_ID,
                "StackedTooHigh",
                "ValueError",
                "cannot stack {count} on {shelf.grid.rows} rows",
            ),
        ]
    ],
}


def _project(root: Path) -> Path:
    make_project(root)
    (root / "widgets" / "extra.py").write_text(EXTRA, encoding="utf-8")
    # The package imports its modules, so that a worker's one import of it loads them all.
    (root / "widgets" / "__init__.py").write_text("from widgets import extra\n", encoding="utf-8")
    (root / "catalog" / "widgets.extra.yaml").write_text(
        yaml.safe_dump(EXTRA_CATALOG, sort_keys=False), encoding="utf-8"
    )
    return root


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int, str]]:
    """One run over the whole project (the hanging call costs its one-second limit once)."""
    root = _project(tmp_path_factory.mktemp("widgets"))
    code, out, _err = errcat_output(root, "reproduce", "--timeout", "1", "--jobs", "2", "--json")
    yield root, code, out


def _entries(out: str) -> dict[str, dict[str, object]]:
    return {entry["id"]: entry for entry in json.loads(out)["entries"]}


def test_both_value_errors_are_reproduced_and_stored(reproduced: tuple[Path, int, str]) -> None:
    root, code, out = reproduced
    assert code == 0
    entries = _entries(out)
    assert entries[ACTIVE_ID]["call"] == "turn('x', -1)"
    assert entries[DRAFT_ID]["call"] == "turn('x', 11)"
    assert entries[STOP_ID]["call"] == "stop('x')"
    stored = load_reproduced(root / "catalog", root)
    assert set(stored) == {
        *(ACTIVE_ID, DRAFT_ID, STOP_ID, PING_ID, HOME_ID, WHO_ID, BOX_ID, DIVE_ID, POOL_ID),
        *(PAINT_ID, EASEL_ID, LAMP_ID, SHELF_ID, FRAME_ID, GALLERY_ID, PAVE_ID),
    }
    # `box: Box` got an instance of the package's own class.
    assert stored[BOX_ID][0].call == "take(Box(), 1)"
    # A private check is reached through the public function that passes its parameter on,
    # its test of a local read as the value of that local, in the caller's parameter.
    assert stored[DIVE_ID][0].call == "dive(101)"
    # A method is called on an instance its class's constructor makes.
    assert stored[POOL_ID][0].call == "Pool().take(11)"
    # A grid errcat cannot make (its class needs arguments) is made as the docstring's example
    # makes it; the statements the call needs come with it, the others (`print`) do not.
    assert stored[PAINT_ID][0].call == "g = Grid(2, 3)\npaint(g, 'x')"
    # A method's instance, as the class's example makes it.
    assert stored[EASEL_ID][0].call == "Easel(Grid(1, 1)).hold(9)"
    # A test of what the constructor set steers the constructor's argument.
    assert stored[LAMP_ID][0].call == "Lamp('x').light()"
    # A class whose constructor takes arguments is made with made-up ones, classes of the
    # package in turn, by their full names.
    assert stored[SHELF_ID][0].call == (
        "stack(widgets.extra.Shelf(widgets.extra.Grid(1, 1), 'x'), 4)"
    )
    # A dataclass is made with its required fields, an enumeration as its first member.
    assert stored[FRAME_ID][0].call == (
        "hang(widgets.extra.Frame(rows=1, finish=widgets.extra.Finish.MATTE))"
    )
    # A dataclass's method, on an instance made through the constructor it generates.
    assert stored[GALLERY_ID][0].call == "Gallery(1).open()"
    # An alias written out (`Union[int, tuple[int, int]]`) gives a plain value, not `Width()`.
    assert stored[PAVE_ID][0].call == "pave(1, 3)"
    raise_line = EXTRA.splitlines().index('        raise ValueError(f"too deep: {depth} m")') + 1
    assert (stored[DIVE_ID][0].path, stored[DIVE_ID][0].line) == ("widgets/extra.py", raise_line)
    (backwards,) = stored[ACTIVE_ID]
    assert (backwards.path, backwards.line, backwards.call) == (
        "widgets/core.py",
        3,
        "turn('x', -1)",
    )
    assert backwards.output == "ValueError: widget x cannot turn backwards"
    assert stored[DRAFT_ID][0].output == "ValueError: widget x spins too fast: 11"
    assert json.loads(out)["counts"] == {"reproduced": 16, "failed": 4, "no candidate": 2}
    assert entries[RETIRED_ID]["why"] == "raised nowhere in the package"


def test_human_output_names_calls_and_sums_up(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    code, out, _err = errcat_output(root, "reproduce")
    assert code == 0
    lines = out.splitlines()
    assert f"{ACTIVE_ID} TurnBackwards: reproduced by turn('x', -1)" in lines
    assert f"{RETIRED_ID} WidgetJammed: not reproduced (raised nowhere in the package)" in lines
    assert lines[-2] == "4 entries: 3 reproduced, 0 failed, 1 without a candidate"
    assert lines[-1] == "tests: not run: no test file expects an error"


def test_human_output_keeps_a_call_with_its_statements_on_the_entrys_line(
    reproduced: tuple[Path, int, str],
) -> None:
    """A call from a docstring's example comes with the statements it needs: joined by `; `
    on the entry's line, as Python reads them."""
    root, _code, _out = reproduced
    code, out, _err = errcat_output(root, "reproduce", "--no-tests", PAINT_ID)
    assert code == 0
    assert out.splitlines()[0] == (
        f"{PAINT_ID} NoSuchPaint: reproduced by g = Grid(2, 3); paint(g, 'x')"
    )


def test_a_hanging_call_is_killed_and_the_run_goes_on(reproduced: tuple[Path, int, str]) -> None:
    _root, _code, out = reproduced
    spin = _entries(out)[SPIN_ID]
    assert spin["outcome"] == "failed"
    assert "spin(-1) did not finish within 1 s and was killed" in str(spin["why"])
    # Entries after it in the catalog were still run.
    assert _entries(out)[ACTIVE_ID]["outcome"] == "reproduced"


def test_network_connections_get_the_oserror(reproduced: tuple[Path, int, str]) -> None:
    root, _code, out = reproduced
    assert _entries(out)[PING_ID]["call"] == "ping('x')"
    (ping,) = load_reproduced(root / "catalog", root)[PING_ID]
    assert ping.output == f"ConnectionError: cannot reach x: {NETWORK_REFUSED}"


def test_memory_is_limited(reproduced: tuple[Path, int, str]) -> None:
    _root, _code, out = reproduced
    grow = _entries(out)[GROW_ID]
    assert grow["outcome"] == "failed"
    assert "grow(1) raised MemoryError" in str(grow["why"])


def test_forking_fails_the_call(reproduced: tuple[Path, int, str]) -> None:
    _root, _code, out = reproduced
    split = _entries(out)[FORK_ID]
    assert split["outcome"] == "failed"
    assert "split(2) forked a process" in str(split["why"])


def test_a_call_that_kills_its_worker_fails_and_the_run_goes_on(
    reproduced: tuple[Path, int, str],
) -> None:
    _root, _code, out = reproduced
    rogue = _entries(out)[ROGUE_ID]
    assert "rogue(4) killed the worker running it" in str(rogue["why"])


def test_calls_run_in_a_temporary_folder_that_is_removed(
    reproduced: tuple[Path, int, str],
) -> None:
    root, _code, out = reproduced
    assert _entries(out)[HOME_ID]["call"] == "home('x')"
    (seen,) = load_reproduced(root / "catalog", root)[HOME_ID]
    _, home, _, cwd = seen.output.removeprefix("LookupError: ").split(" ")
    assert home == cwd and Path(cwd).name.startswith("errcat-reproduce-")
    assert not Path(cwd).exists()


def test_a_private_function_gets_no_candidate(reproduced: tuple[Path, int, str]) -> None:
    _root, _code, out = reproduced
    hidden = _entries(out)[HIDDEN_ID]
    assert hidden["outcome"] == "no candidate"
    assert "`_hidden` is private" in str(hidden["why"])
    assert hidden["sites"][0]["attempts"] == []  # type: ignore[index]


def test_results_of_changed_code_are_dropped(
    reproduced: tuple[Path, int, str], tmp_path: Path
) -> None:
    root = shutil.copytree(reproduced[0], tmp_path / "copy")
    assert ACTIVE_ID in load_reproduced(root / "catalog", root)
    core = root / "widgets" / "core.py"
    core.write_text(core.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    stored = load_reproduced(root / "catalog", root)
    assert ACTIVE_ID not in stored and STOP_ID not in stored
    assert PING_ID in stored  # widgets/extra.py did not change


def test_given_ids_none_reproduced_exits_1_and_keeps_other_results(
    reproduced: tuple[Path, int, str], tmp_path: Path
) -> None:
    root = shutil.copytree(reproduced[0], tmp_path / "copy")
    code, out, _err = errcat_output(root, "reproduce", HIDDEN_ID)
    assert code == 1
    assert out.splitlines()[-2] == "1 entries: 0 reproduced, 0 failed, 1 without a candidate"
    assert ACTIVE_ID in load_reproduced(root / "catalog", root)
    assert errcat_output(root, "reproduce", "0000000000000000")[0] == 2
    assert errcat_output(root, "reproduce", "--timeout", "0")[0] == 2


def test_an_invalid_catalog_is_reported(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    (root / "catalog" / "broken.yaml").write_text("errors: [{id: 12}]\n", encoding="utf-8")
    code, _out, err = errcat_output(root, "reproduce")
    assert code == 2
    assert "errcat reproduce:" in err
    assert not (root / "catalog" / RESULTS_FILE).exists()


def test_a_broken_results_file_reads_as_empty(tmp_path: Path) -> None:
    (tmp_path / RESULTS_FILE).write_text("{not json", encoding="utf-8")
    assert load_reproduced(tmp_path, tmp_path) == {}
    (tmp_path / RESULTS_FILE).write_text('{"version": 1, "results": {"a": [{}]}}')
    assert load_reproduced(tmp_path, tmp_path) == {}


@pytest.mark.parametrize(
    ("signature", "conditions", "call"),
    [
        ("def f(x: int):", ["x < 0"], "f(-1)"),
        ("def f(x: int):", ["x > 10"], "f(11)"),
        ("def f(lr: float = 0.1, *, eps: float):", ["not 0.0 <= lr"], "f(-1.0, eps=1.0)"),
        ("def f(x: int | None = 3):", ["x is None"], "f(None)"),
        ("def f(x: str):", ['x == "a"'], "f('a')"),
        ("def f(x: str, n=2):", ["not isinstance(x, str)"], "f(1)"),
        ("def f(x, n: int = 2):", ["n > 2", "not x"], "f(None, 3)"),
        ("def f(x: str):", ["not x"], "f('')"),
        ("def f(x: list):", ["len(x) == 0"], "f([])"),
        ("def f(x: str):", ["len(x) == 0"], "f('')"),
        ("def f(mode: str):", ["mode not in ('a', 'b')"], "f('x')"),
        ("def f(mode: str):", ["mode in ('a', 'b')"], "f('a')"),
        ("def f(a: int, b: int):", ["a < 0 or b > 3"], "f(0, 4)"),
        # No test reads `x`, and nothing gives it a value: None.
        ("def f(x, n: int):", ["n > 2"], "f(None, 3)"),
        # A test of an item: the default with that item changed, the others kept.
        ("def f(betas=(0.9, 0.999)):", ["not 0.0 <= betas[0] < 1.0"], "f((1.0, 0.999))"),
        ("def f(betas=(0.9, 0.999)):", ["not 0.0 <= betas[1] < 1.0"], "f((0.9, 1.0))"),
    ],
)
def test_candidates_satisfy_the_conditions(
    signature: str, conditions: list[str], call: str
) -> None:
    assert candidates(guarded_site(signature, *conditions), "pkg.m")[0].call == call


def test_candidates_for_classes_and_what_has_none() -> None:
    init = guarded_site("def __init__(self, size: int):", "size < 1", function="Pool.__init__")
    (first, *_rest) = candidates(init, "pkg.m")
    assert (first.call, first.program) == ("Pool(0)", "from pkg.m import Pool\nPool(0)\n")
    static = guarded_site("@staticmethod\ndef make(n: int):", "n < 0", function="Pool.make")
    assert candidates(static, "pkg.m")[0].call == "Pool.make(-1)"
    for site, why in [
        (guarded_site("def take(self, n: int):", "n < 0", function="Pool.take"), "a method"),
        (guarded_site("def _f(x: int):", "x < 0", function="_f"), "private"),
        (guarded_site("def f(x):", "x.ndim != 2"), "no value for parameter `x`"),
        # Names of typing and the built-ins are no classes of the package to call.
        (guarded_site("def f(x: Any):", "x.ndim != 2"), "no value for parameter `x`"),
        (guarded_site("def f(x: Exception):", "x.ndim != 2"), "no value for parameter `x`"),
        (guarded_site("async def f(x: int):", "x < 0"), "coroutine"),
        (guarded_site("def f(x: int):", "x < 0", "x > 5"), "no combination"),
    ]:
        with pytest.raises(ValueError, match=why):
            candidates(site, "pkg.m")


def test_a_private_site_is_called_through_a_public_caller_in_its_names() -> None:
    """A helper's tests are said in the parameters each public caller passes it; a test of a
    helper parameter the caller does not pass, or of a name the caller binds otherwise, is
    left out; a caller passing arguments no test reads, or nothing on, gives its plain call
    when no caller steers."""
    import ast as ast_module

    site = guarded_site(
        "def _check(rate, low=0.0, scale=1):",
        "rate < 0",
        "scale > 2",
        "lr",
        function="_check",
    )

    def caller(header: str, passes: tuple[tuple[str, str], ...]) -> PublicCaller:
        node = ast_module.parse(header + "\n    pass").body[0]
        assert isinstance(node, ast_module.FunctionDef)
        return PublicCaller("pkg.optim", node.name, node, passes)

    # `lr` here is the caller's own parameter, not what the helper tested: that test goes.
    sgd = caller("def sgd(lr: float, low: float = 0.0):", (("rate", "lr"), ("low", "low")))
    assert candidates(site, "pkg.m", [sgd])[0].call == "sgd(-1)"
    assert candidates(site, "pkg.m", [sgd])[0].module == "pkg.optim"
    unsteered = caller("def other(x: int):", (("scale", "x"),))
    assert candidates(site, "pkg.m", [unsteered])[0].call == "other(3)"
    unread = caller("def none(x: int):", (("unknown", "x"),))
    (only,) = candidates(site, "pkg.m", [unread])
    assert only.call == "none(1)"
    assert candidates(site, "pkg.m", [unread, sgd])[0].call == "sgd(-1)"
    # No public caller gives a call: the reasons of each are said beside the site's own.
    sparse = guarded_site("def _dense(rate):", "rate.is_sparse", function="_dense")
    untyped = caller("def untyped(x):", (("rate", "x"),))
    with pytest.raises(ValueError, match="`_dense` is private; through `untyped`, no value"):
        candidates(sparse, "pkg.m", [untyped])
    # A caller that passes nothing on: its shortest plain call, as a last resort only.
    plain = caller("def run(n: int, name='x'):", ())
    (only,) = candidates(site, "pkg.m", [plain])
    assert only.call == "run(1)"
    assert candidates(site, "pkg.m", [plain, sgd])[0].call == "sgd(-1)"
    # Its class parameter built first, None in its place only after: None is the shorter call,
    # yet the one that fails on the first attribute the caller reads.
    board = caller("def draw(board: Board):", ())
    assert [c.call for c in candidates(site, "pkg.m", [board])] == ["draw(Board())", "draw(None)"]


def test_a_parameter_nothing_types_is_passed_none_where_tests_read_it_whole() -> None:
    """Compared, passed to a call or tested for truth, None reaches the test (and a check of
    its type holds of it); read through an attribute, an item, a call or a loop, it would fail
    on the way: no call."""
    fuse = guarded_site("def f(conv, bn):", "not (type(conv) == Conv2d and type(bn) == Norm)")
    assert candidates(fuse, "pkg.m")[0].call == "f(None, None)"
    for test in ("conv.groups > 1", "conv[0] is None", "conv() is None", "[c for c in conv] == []"):
        with pytest.raises(ValueError, match="no value for parameter `conv`"):
            candidates(guarded_site("def f(conv, bn):", test), "pkg.m")
    # Looped over by `any` or `all` and its items tested, a sequence of one item of each kind.
    looped = guarded_site("def f(conv, bn):", "any(c for c in conv)")
    assert [c.call for c in candidates(looped, "pkg.m")] == ["f([1], None)", "f(['x'], None)"]


def test_a_module_constant_a_test_reads_offers_its_members() -> None:
    import ast as ast_module

    from catalog.evidence.candidates import _with_constants
    from catalog.evidence.reaching import _module_constants

    site = guarded_site("def pad(mode: str):", "mode in _LEGACY", function="pad")
    assert [c.call for c in candidates(site, "pkg.m")] == ["pad('x')"]
    legacy = {"_LEGACY": "{'old', 'older'}"}
    assert [c.call for c in candidates(site, "pkg.m", constants=legacy)] == [
        "pad('old')",
        "pad('older')",
    ]
    # A parameter of the same name is what the test reads, not the module's constant.
    header = ast_module.parse("def pad(mode, _LEGACY):\n    pass").body[0]
    assert isinstance(header, ast_module.FunctionDef)
    test = ast_module.parse("mode in _LEGACY", mode="eval").body
    (kept,) = _with_constants([test], legacy, header)
    assert ast_module.unparse(kept) == "mode in _LEGACY"
    tree = ast_module.parse(
        "_LEGACY = frozenset({'older', 'old'})\n"
        "LIMIT = 3\n"
        "COUNT = 0\n"
        "COUNT += 1\n"
        "SEEN = 1\n"
        "def f():\n    global SEEN\n"
        "FOUND = compute()\n"
        "_OPS = dict.fromkeys(['call', 'get'])\n"
    )
    assert _module_constants(tree) == {
        "_LEGACY": "{'old', 'older'}",
        "LIMIT": "3",
        "_OPS": "{'call': None, 'get': None}",
    }
    # A CapWords name bound to built-in classes is a test of those, not of a class of the
    # package that no made-up value is: `isinstance(idx, Dim)` holds of 1.
    tree = ast_module.parse(
        "Dim = int\nIntLike = (int, torch.SymInt)\nTensorLike = torch.Tensor\n"
        "Same = (Dim, Other)\nMine = str\nstr = bytes\n"
    )
    classes = _module_constants(tree)
    # `Mine` is not `str`: the module rebinds that name (to `bytes`, as the test then reads).
    assert classes == {"Dim": "int", "IntLike": "(int, torch.SymInt)", "str": "bytes"}
    site = guarded_site("def at(idx):", "isinstance(idx, Dim) and idx < 0", function="at")
    with pytest.raises(ValueError, match="no combination of values"):
        candidates(site, "pkg.m")
    assert candidates(site, "pkg.m", constants=classes)[0].call == "at(-1)"


def test_a_test_is_kept_in_the_parts_a_caller_steers() -> None:
    """Of a test that is an `and`, the parts reading what the caller passes on are kept where
    another part reads what it does not (`padding == "same" and ...stride...`, `stride`
    computed by the caller): they hold whenever the site raises."""
    import ast as ast_module

    site = guarded_site(
        "def _conv(padding, stride):",
        'padding == "same" and any(s != 1 for s in stride)',
        function="_conv",
    )
    node = ast_module.parse("def conv(padding: str, stride: int = 1):\n    pass").body[0]
    assert isinstance(node, ast_module.FunctionDef)
    conv = PublicCaller("pkg.nn", "conv", node, (("padding", "padding"),))
    assert [c.call for c in candidates(site, "pkg.m", [conv])] == ["conv('same')"]


def test_a_caller_computing_an_argument_passes_its_own_on_one_branch() -> None:
    from types import SimpleNamespace

    from catalog.evidence.reaching import _passed_on

    caller = SimpleNamespace(
        passes=(("groups", "groups"),),
        computes=(
            ("padding", "padding if isinstance(padding, str) else _single(padding)", ("padding",)),
            ("stride", "_single(stride)", ("stride",)),
            ("size", "_pair(size) if size else size", ("size",)),
            ("mode", "mode.lower() if mode else 'zeros'", ("mode",)),
        ),
    )
    assert _passed_on(caller) == (("groups", "groups"), ("padding", "padding"), ("size", "size"))


def test_a_method_is_called_on_an_instance_its_constructor_makes() -> None:
    """The receiver is the shortest constructor call errcat has values for; the method's own
    tests steer its arguments."""
    import ast as ast_module

    def init(header: str) -> ast_module.FunctionDef:
        node = ast_module.parse(header + "\n    pass").body[0]
        assert isinstance(node, ast_module.FunctionDef)
        return node

    receiver = constructor_call("pkg.m", "Pool", init("def __init__(self, size: int, tag=None):"))
    assert receiver is not None and receiver.call == "Pool(1)"
    # A parameter that neither a default nor an annotation gives a value gets None.
    unknown = constructor_call("pkg.m", "Pool", init("def __init__(self, thing):"))
    assert unknown is not None and unknown.call == "Pool(None)"
    assert constructor_call("pkg.m", "Pool", None).call == "Pool()"  # type: ignore[union-attr]
    site = guarded_site("def take(self, n: int):", "n < 0", "self.closed", function="Pool.take")
    method = method_caller(site, "pkg.m", receiver)
    assert method is not None
    (first, *_rest) = candidates(site, "pkg.m", [method])
    assert (first.call, first.program) == (
        "Pool(1).take(-1)",
        "from pkg.m import Pool\nPool(1).take(-1)\n",
    )
    private = guarded_site("def _take(self, n: int):", "n < 0", function="Pool._take")
    assert method_caller(private, "pkg.m", receiver) is None
    # A property is read, as users meet its error, not called on what it returns.
    for decorator in ("property", "functools.cached_property"):
        getter = guarded_site(f"@{decorator}\ndef size(self):", "self.closed", function="Pool.size")
        method = method_caller(getter, "pkg.m", receiver)
        assert method is not None
        assert [c.call for c in candidates(getter, "pkg.m", [method])] == ["Pool(1).size"]
    # Its setter is assigned to, with the value its tests steer.
    setter = guarded_site(
        "@size.setter\ndef size(self, value: int):", "value < 0", function="Pool.size"
    )
    method = method_caller(setter, "pkg.m", receiver)
    assert method is not None
    assert [c.call for c in candidates(setter, "pkg.m", [method])][:1] == ["Pool(1).size = -1"]


def test_a_parameter_annotated_with_a_class_gets_an_instance_built_in_the_program() -> None:
    """`x: Tensor` gets `Tensor()`, named as the callee's module names it and imported from
    it; a condition on it is left to the run to judge."""
    site = guarded_site("def f(x: torch.Tensor | None, y: Box, n: int):", "x.ndim != 2")
    (first, *rest) = candidates(site, "pkg.m")
    assert first.call == "f(torch.Tensor(), Box(), 1)"
    assert first.program == "from pkg.m import f, Box, torch\nf(torch.Tensor(), Box(), 1)\n"
    # Then the same call without what it builds: `Box` may need arguments, or be an alias.
    assert rest[-1].call == "f(None, None, 1)"
    assert rest[-1].program == "from pkg.m import f\nf(None, None, 1)\n"


def test_an_isinstance_test_of_a_class_of_the_package_is_judged_on_made_up_values() -> None:
    """A made-up `'x'` or `1` is no `Module`, and a bare `Module()` is one: the calls kept are
    those that pass the earlier check (`add_module`'s, then `swap_submodule`'s, in torch),
    not the shorter ones it would stop."""
    add = guarded_site(
        'def add_module(name: str, module: Optional["Module"]):',
        "not (not isinstance(module, Module) and module is not None)",
        '"." in name',
        function="add_module",
    )
    calls = [c.call for c in candidates(add, "pkg.m")]
    assert calls[0] == "add_module('.', None)"
    assert all(not re.search(r", ('x'|1|1\.0|\[\])\)$", call) for call in calls), calls
    swap = guarded_site(
        'def swap(module: "pkg.Module", name: str, sub: "Module"):',
        "not (not isinstance(module, pkg.Module))",
        "not (not isinstance(sub, Module))",
        '"." in name',
        function="swap",
    )
    # Forward references name the class to build, under `Optional` and `Union` too.
    (first, *_rest) = candidates(swap, "pkg.m")
    assert first.call == "swap(pkg.Module(), '.', Module())"
    # Names of the numeric tower and of `typing` are no class of the package: left to the run.
    tower = guarded_site("def g(x: int):", "not isinstance(x, Number)", function="g")
    assert "g(1)" in [c.call for c in candidates(tower, "pkg.m")]
    # A module that shadows a built-in's name writes it through `builtins`.
    shadowed = guarded_site("def h(x):", "isinstance(x, (SymBool, builtins.bool))", function="h")
    assert [c.call for c in candidates(shadowed, "pkg.m")][:1] == ["h(True)"]


def test_callable_hasattr_all_and_any_of_a_parameter_are_judged_on_made_up_values() -> None:
    """Tests torch writes of functions and sequences (`_dynamo.run`'s `fn is not None and not
    callable(fn)`, `nadam`'s `not all(isinstance(t, Tensor) for t in mu_products)`): values
    that make them true are offered, and those that make them false dropped."""

    def calls(signature: str, *conditions: str) -> list[str]:
        return [c.call for c in candidates(guarded_site(signature, *conditions), "pkg.m")]

    assert calls("def f(fn=None):", "fn is not None", "not callable(fn)")[0] == "f(1)"
    # Where being a function is what raises, the function made up for a `Callable`.
    assert calls("def f(fn):", "callable(fn)")[0] == "f(lambda *a, **k: a[0] if a else None)"
    assert calls("def f(ts: list, n: int):", "not all(isinstance(t, Tensor) for t in ts)")[0] in (
        "f([None], 1)",
        "f([1], 1)",
        "f(['x'], 1)",
    )
    # `any` over an empty sequence is false: an item is needed, one that passes the test.
    assert calls("def f(ts: list):", "any(t is None for t in ts)") == ["f([None])"]
    assert calls("def f(ts: list):", "all(t is None for t in ts)")[0] == "f([])"
    # `hasattr` of a built-in value is asked of it here.
    assert calls("def f(x: int | str):", 'not hasattr(x, "upper")')[0] == "f(1)"
    # `type(p)` compared with classes: an instance of the class of the package built, a value
    # of a built-in type made up, None for none of them; each judged where it can be.
    assert calls("def f(conv, bn):", "type(conv) is Conv2d") == [
        "f(Conv2d(), None)",
        "f(None, None)",
    ]
    assert calls("def f(conv):", "type(conv) not in (Conv1d, nn.Conv2d)")[0] == "f(None)"
    assert calls("def f(x: int | str):", "type(x) is str") == ["f('x')"]
    assert calls("def f(x: int | str):", "type(x) in (int, float)") == ["f(1)", "f(1.0)"]
    # Lengths of two parameters compared: sequences of a few lengths each.
    assert calls("def f(xs, ys: tuple):", "len(xs) > len(ys)")[:2] == [
        "f([0], ())",
        "f([0, 0], ())",
    ]


def _reaching_with(tmp_path: Path, **modules: str) -> Any:
    """A `Reaching` over the widgets project with the modules given (name: source) added."""
    from catalog.core.config import load_config
    from catalog.evidence.reaching import Reaching

    root = make_project(tmp_path)
    for name, source in modules.items():
        (root / "widgets" / f"{name}.py").write_text(source, encoding="utf-8")
    return Reaching(load_config(root))


def test_a_class_imported_for_type_checkers_only_is_built_where_the_package_defines_it(
    tmp_path: Path,
) -> None:
    """A forward reference (`board: "Board"`) often names a class its module imports only
    `if TYPE_CHECKING:`: importing it from that module fails, so the call names it where it is
    defined; a class the module binds while it runs is built bare under that name."""
    reaching = _reaching_with(
        tmp_path,
        board=(
            "class Board:\n    def __init__(self, size=3):\n        self.size = size\n\n\n"
            "class Peg:\n    pass\n"
        ),
        typed=(
            "from typing import TYPE_CHECKING\n\nfrom widgets.board import Peg\n\n"
            "if TYPE_CHECKING:\n    from outside import Far\n\n"
            "    from widgets.board import Board\n\n\n"
            'def place(board: "Board", peg: Peg):\n    if board.size < 0:\n'
            '        raise ValueError("no room")\n'
        ),
    )
    assert reaching.build("Board", "widgets.typed") == (
        "widgets.board.Board()",
        ("import widgets.board",),
    )
    assert reaching.build("Peg", "widgets.typed") is None
    # One errcat cannot make either is passed as None, not imported from where it is not.
    assert reaching.build("Far", "widgets.typed") == ("None", ())


def test_an_abstract_class_is_made_as_a_concrete_class_deriving_from_it(tmp_path: Path) -> None:
    """`Shape()` fails (`area` is abstract): the first class of the package deriving from it
    that defines every abstract method stands in for it, public ones first; none where no
    such class exists."""
    reaching = _reaching_with(
        tmp_path,
        shapes=(
            "import abc\nfrom abc import abstractmethod\n\n\n"
            "class Shape(abc.ABC):\n    @abc.abstractmethod\n    def area(self): ...\n\n\n"
            "class _Private(Shape):\n    def area(self):\n        return 0\n\n\n"
            "class Half(Shape):\n    @abstractmethod\n    def side(self): ...\n\n\n"
            "class Square(Half):\n    def __init__(self, size: int):\n        self.size = size\n\n"
            "    def area(self):\n        return self.size**2\n\n    def side(self):\n"
            "        return self.size\n\n\n"
            "class Solid(abc.ABC):\n    @abstractmethod\n    def volume(self): ...\n\n\n"
            "class Cube(Solid):\n    pass\n\n\n"
            "class Middle(Shape):\n    pass\n\n\n"
            "class Tiled(Middle):\n    def area(self):\n        return 1\n"
        ),
    )
    # A method of the abstract class runs on an instance of the class standing in for it.
    import dataclasses

    site = dataclasses.replace(
        guarded_site("def grow(self, by: int):", "by < 0", function="Shape.grow"),
        path="widgets/shapes.py",
    )
    method = reaching._method(site)
    assert method is not None and method.receiver is not None
    assert method.receiver.call == "widgets.shapes.Square(1)"
    (first, *_rest) = candidates(site, "widgets.shapes", [method])
    assert first.program == (
        "import widgets.shapes\nfrom widgets.shapes import Shape\n"
        "widgets.shapes.Square(1).grow(-1)\n"
    )
    # Two levels down, past `Half`, which adds an abstract method of its own; before the
    # private `_Private`.
    assert reaching.build("Shape", "widgets.shapes") == (
        "widgets.shapes.Square(1)",
        ("import widgets.shapes",),
    )
    assert reaching.build("Solid", "widgets.shapes") is None
    # Abstract by what it inherits, declaring nothing itself.
    assert reaching.build("Middle", "widgets.shapes") == (
        "widgets.shapes.Tiled()",
        ("import widgets.shapes",),
    )


def test_reproduced_items_are_verified_knowledge() -> None:
    (item,) = reproduced_items(
        [Reproduction("widgets/core.py", 3, "turn('w', -1)", "ValueError: ...", "0" * 64)]
    )
    assert item.as_dict() == {
        "kind": "reproduced",
        "text": (
            "Reproduced by errcat: `turn('w', -1)` raised it at `widgets/core.py:3`, printing "
            "`ValueError: ...`."
        ),
        "code": "turn('w', -1)",
        "source": {"path": "widgets/core.py", "line": 3},
        "verified": True,
    }
    # A call with the statements it needs is the code below the sentence.
    program = "g = Grid(2, 3)\npaint(g, 'x')"
    (multi,) = reproduced_items([Reproduction("w.py", 3, program, "", "0" * 64)])
    assert (multi.text, multi.code) == (
        "Reproduced by errcat: the code below raised it at `w.py:3`.",
        program,
    )


def test_the_package_is_imported_once_per_worker_not_per_call(
    reproduced: tuple[Path, int, str],
) -> None:
    """A worker imports the package once, confined as the calls are, and forks a child per
    call: the module was loaded in another process than the one the call ran in."""
    root, _code, _out = reproduced
    (seen,) = load_reproduced(root / "catalog", root)[WHO_ID]
    # KeyError prints its argument's repr: the judge reads the text inside the quotes.
    assert seen.output.startswith("KeyError: 'imported in ")
    imported, called = re.findall(r"\d+", seen.output)
    assert imported != called


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_GET_PDEATHSIG is Linux's")
def test_a_worker_that_imports_the_package_outlives_the_thread_that_started_it(
    tmp_path: Path,
) -> None:
    """A worker confines itself before importing the package, but without the parent-death
    signal, which Linux ties to the thread that started the process: with `--jobs 2` a worker
    handed from one thread to another died when the first thread ended."""
    program = (
        "import ctypes, sys\n"
        "from catalog.evidence.call_worker import _preload\n"
        f"_preload('json', {str(tmp_path)!r})\n"
        "signal = ctypes.c_int(-1)\n"
        "ctypes.CDLL(None).prctl(2, ctypes.byref(signal), 0, 0, 0)\n"
        "print(signal.value)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "0"


def test_calls_run_on_the_interpreter_given_where_the_packages_dependencies_are(
    tmp_path: Path,
) -> None:
    """errcat installed apart from the project (pipx) lacks what the package imports: the
    calls run on `--python`, the project's environment, where it is installed."""
    root = _gauges(
        tmp_path / "project",
        """\
                import needle


                def turn(degrees: int) -> int:
                    if degrees < 0:
                        raise ValueError("a dial turns forwards only")
                    return needle.clamp(degrees)
                """,
    )
    # The dependency, where only the project's interpreter finds it.
    deps = tmp_path / "site"
    deps.mkdir()
    (deps / "needle.py").write_text("def clamp(n):\n    return min(n, 360)\n", encoding="utf-8")
    python = tmp_path / "env" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(
        f'#!/bin/sh\nPYTHONPATH="{deps}:$PYTHONPATH" exec {sys.executable} "$@"\n',
        encoding="utf-8",
    )
    python.chmod(0o755)
    assert errcat_output(root, "new")[0] == 0
    code, out, err = errcat_output(root, "reproduce", "--no-tests", "--json")
    (entry,) = json.loads(out)["entries"]
    assert entry["outcome"] == "failed"
    assert "No module named 'needle'" in entry["why"]
    # Said once, as what it is: a dependency missing where the calls ran.
    assert json.loads(out)["unimportable"] == {"needle": 1}
    assert "calls could not import needle (1 entries)" in err
    code, out, err = errcat_output(
        root, "reproduce", "--no-tests", "--json", "--python", str(python)
    )
    assert code == 0, err
    (entry,) = json.loads(out)["entries"]
    assert entry["outcome"] == "reproduced", entry
    assert entry["call"] == "turn(-1)"
    assert json.loads(out)["unimportable"] == {}
    assert "could not import" not in err
    code, _out, err = errcat_output(root, "reproduce", "--python", str(tmp_path / "nothing"))
    assert code == 2
    assert "no Python interpreter runs there" in err


def test_a_call_of_a_raise_helper_is_reproduced_where_the_helper_raises(tmp_path: Path) -> None:
    """The helper's own raise is the innermost frame; the site, the call that gave it its
    message, is the frame just outside: that is a reproduction of the call's entry (and of
    no other: a frame outside a file of the package in between is not)."""
    root = _gauges(
        tmp_path,
        """\
                def _fail(message):
                    raise ValueError(message)


                def turn(degrees: int) -> int:
                    if degrees < 0:
                        _fail("a dial turns forwards only")
                    return degrees
                """,
    )
    assert errcat_output(root, "new")[0] == 0
    code, out, err = errcat_output(root, "reproduce", "--no-tests", "--json")
    assert code == 0, err
    (entry,) = [e for e in json.loads(out)["entries"] if e["name"].startswith("DialTurns")]
    assert entry["outcome"] == "reproduced", entry
    assert entry["call"] == "turn(-1)"
    assert entry["sites"][0]["line"] == 7


def test_the_judge_follows_a_helper_out_to_its_call_only_through_the_packages_files(
    tmp_path: Path,
) -> None:
    from dataclasses import replace

    from helpers import entry_of

    from catalog.evidence.reproduce import judge

    root = tmp_path / "project"
    package = root / "pkg"
    package.mkdir(parents=True)
    site_file = package / "m.py"
    site_file.write_text("", encoding="utf-8")
    site = replace(guarded_site("def f(x):", "x < 0"), call=True)
    entry = entry_of("bad")
    helper = str(package / "checks.py")
    outside = str(tmp_path / "elsewhere" / "lib.py")

    def reply(*frames: list[object]) -> dict[str, object]:
        return {
            "ended": "raised",
            "exception": "ValueError",
            "message": "bad",
            "where": list(frames[0]),
            "frames": [list(f) for f in frames],
        }

    assert judge(entry, site, site_file, reply([str(site_file), 9]), root) is None
    # Raised by a helper of the package that the site's call reached: the site's error.
    through = reply([helper, 3], [helper, 7], [str(site_file), 9])
    assert judge(entry, site, site_file, through, root) is None
    # Not for a site that is no helper's call, nor through a file outside the package, nor
    # further out than a helper's few frames.
    assert "not at the site" in str(
        judge(entry, replace(site, call=False), site_file, through, root)
    )
    elsewhere = reply([outside, 3], [str(site_file), 9])
    assert "not at the site" in str(judge(entry, site, site_file, elsewhere, root))
    deep = reply(*([helper, n] for n in range(1, 7)), [str(site_file), 9])
    assert "not at the site" in str(judge(entry, site, site_file, deep, root))


def test_a_bug_building_one_sites_calls_is_said_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import catalog.evidence.reproduce as reproducing
    from catalog.cli.commands.common import valid_catalog_or_report
    from catalog.core.config import load_config

    root = _gauges(
        tmp_path,
        """\
                def turn(degrees: int) -> int:
                    if degrees < 0:
                        raise ValueError("a dial turns forwards only")
                    return degrees


                def tilt(degrees: int) -> int:
                    if degrees > 90:
                        raise ValueError("a dial tilts a quarter turn at most")
                    return degrees
                """,
    )
    assert errcat_output(root, "new")[0] == 0
    real = reproducing.candidates

    def broken(site: object, *args: object, **kwargs: object) -> object:
        if getattr(site, "function", None) == "turn":
            raise TypeError("a bug")
        return real(site, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(reproducing, "candidates", broken)
    config = load_config(root)
    catalog = valid_catalog_or_report(config, "reproduce")
    assert catalog is not None
    run = reproducing.reproduce(config, catalog)
    outcomes = {entry.name: entry for entry in run.entries}
    (turned,) = [o for name, o in outcomes.items() if name.startswith("DialTurns")]
    assert turned.outcome == "no candidate"
    assert "errcat failed to build its calls (TypeError: a bug)" in str(turned.why)
    (tilted,) = [o for name, o in outcomes.items() if name.startswith("DialTilts")]
    assert tilted.outcome == "reproduced"
    assert "dial.py:3: errcat failed to build its calls" in capsys.readouterr().err


def _gauges(root: Path, dial: str) -> Path:
    """A project at `root` whose package `gauges` holds `dial` as `gauges/dial.py`."""
    from helpers import package_project

    return package_project(root, "gauges", {"gauges/__init__.py": "", "gauges/dial.py": dial})


def _two_files(root: Path) -> Path:
    """A project whose package raises in two files, each a group of calls of its own."""
    from helpers import package_project

    return package_project(
        root,
        "gauges",
        {
            "gauges/__init__.py": "",
            "gauges/dial.py": (
                "import os\n\n\n"
                "def turn(degrees: int) -> int:\n"
                "    if degrees < 0:\n"
                '        raise ValueError(f"turned on worker {os.getppid()}")\n'
                "    return degrees\n\n\n"
                "def tilt(degrees: int) -> int:\n"
                "    if degrees > 90:\n"
                '        raise KeyError(f"tilted on worker {os.getppid()}")\n'
                "    return degrees\n"
            ),
            "gauges/meter.py": (
                "def read(volts: int) -> int:\n"
                "    if volts > 400:\n"
                '        raise OverflowError("a meter reads 400 volts at most")\n'
                "    return volts\n"
            ),
        },
    )


def _run_reproduce(root: Path, jobs: int = 2) -> Any:
    import catalog.evidence.reproduce as reproducing
    from catalog.cli.commands.common import valid_catalog_or_report
    from catalog.core.config import load_config

    assert errcat_output(root, "new")[0] == 0
    config = load_config(root)
    catalog = valid_catalog_or_report(config, "reproduce")
    assert catalog is not None
    return reproducing.reproduce(config, catalog, jobs=jobs, timeout=30)


def test_calls_start_while_later_sites_are_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading a site's calls is errcat's own work and running them the children's: the calls
    of one file's sites run while the next file's are read, so the two overlap."""
    import catalog.evidence.reproduce as reproducing

    root = _two_files(tmp_path)
    ran = threading.Event()
    waited: list[bool] = []
    real_plan, real_run = reproducing._plan, reproducing._run_job

    def run_job(job: Any, pool: Any, timeout: float) -> None:
        real_run(job, pool, timeout)
        ran.set()

    def plan(config: Any, reaching: Any, values: Any, entry: Any, site: Any) -> Any:
        if site.path.endswith("meter.py"):
            # dial.py's sites come first (by path); its calls must not wait for this one.
            waited.append(ran.wait(60))
        return real_plan(config, reaching, values, entry, site)

    monkeypatch.setattr(reproducing, "_run_job", run_job)
    monkeypatch.setattr(reproducing, "_plan", plan)
    run = _run_reproduce(root, jobs=1)
    assert waited == [True]
    assert run.counts() == {"reproduced": 3, "failed": 0, "no candidate": 0}


def test_one_files_calls_run_on_one_worker(tmp_path: Path) -> None:
    """The calls of one file's sites go to one worker, which imported what the first of them
    needed: with two workers the second would import it again."""
    run = _run_reproduce(_two_files(tmp_path), jobs=2)
    outputs = [r.output for entry in run.entries for r in entry.reproductions]
    workers = {re.sub(r"\D", "", text) for text in outputs if "on worker" in text}
    assert len(outputs) == 3
    assert len(workers) == 1


def test_a_planning_stopped_midway_stops_the_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An interrupt while sites are read, calls running, leaves no thread and no worker."""
    import catalog.evidence.reproduce as reproducing

    root = _two_files(tmp_path)
    real_plan = reproducing._plan
    started: list[object] = []
    real_init = reproducing._Worker.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        started.append(self)

    ran = threading.Event()
    real_run = reproducing._run_job

    def run_job(job: Any, pool: Any, timeout: float) -> None:
        real_run(job, pool, timeout)
        ran.set()

    def plan(config: Any, reaching: Any, values: Any, entry: Any, site: Any) -> Any:
        if site.path.endswith("meter.py"):
            assert ran.wait(60)
            raise KeyboardInterrupt
        return real_plan(config, reaching, values, entry, site)

    monkeypatch.setattr(reproducing, "_plan", plan)
    monkeypatch.setattr(reproducing, "_run_job", run_job)
    monkeypatch.setattr(reproducing._Worker, "__init__", counted)
    before = threading.active_count()
    with pytest.raises(KeyboardInterrupt):
        _run_reproduce(root, jobs=2)
    assert threading.active_count() == before
    assert started
    assert all(worker.worker.process.poll() is not None for worker in started)  # type: ignore[attr-defined]


def test_calls_run_on_every_cpu_unless_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import catalog.evidence.reproduce as reproducing

    root = _two_files(tmp_path)
    assert errcat_output(root, "new")[0] == 0
    asked: list[int] = []

    def reproduce(config: Any, catalog: Any, **options: Any) -> Any:
        asked.append(options["jobs"])
        return reproducing.ReproduceRun(())

    monkeypatch.setattr(reproducing, "reproduce", reproduce)
    monkeypatch.setattr(reproducing, "default_jobs", lambda: 3)
    assert errcat_output(root, "reproduce", "--no-tests")[0] == 0
    assert errcat_output(root, "reproduce", "--no-tests", "--jobs", "1")[0] == 0
    assert asked == [3, 1]


@pytest.mark.parametrize(("cpus", "gib", "jobs"), [(3, 64, 3), (8, 8, 2), (2, 3, 1)])
def test_default_jobs_are_the_cpus_the_memory_holds(
    monkeypatch: pytest.MonkeyPatch, cpus: int, gib: int, jobs: int
) -> None:
    """A worker and its child may each map `MEMORY_LIMIT` (2 GiB): 4 GiB a job."""
    import catalog.evidence.reproduce as reproducing
    import extractor.jobs

    sizes = {"SC_PHYS_PAGES": gib * 1024**3 // 4096, "SC_PAGE_SIZE": 4096}
    monkeypatch.setattr(extractor.jobs, "available_cpus", lambda: cpus)
    monkeypatch.setattr(reproducing.os, "sysconf", lambda name: sizes[name])
    assert reproducing.default_jobs() == jobs


def test_a_stopped_run_starts_no_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread finishing its call after Ctrl-C closed the pool gets a failed call, not a
    fresh worker that nothing would close."""
    import catalog.evidence.reproduce as reproducing
    from catalog.core.worker_process import WorkerFailed

    started: list[object] = []
    monkeypatch.setattr(reproducing, "_Worker", lambda *args: started.append(args))
    pool = reproducing._Pool(tmp_path, tmp_path)
    pool.close()
    with pytest.raises(WorkerFailed):
        pool.take()
    reply, _ = reproducing._run_program(pool, "x = 1", "json", 5.0)
    assert reply["ended"] == "crashed"
    assert started == []


def test_a_method_that_always_raises_is_called_itself_before_a_callers_plain_call() -> None:
    """With no test to steer, the site's own method on an instance still reaches the raise;
    a public caller's shorter plain call (which may stop short of it) must not replace it."""
    import ast as ast_module

    init = ast_module.parse("def __init__(self, source: str):\n    pass").body[0]
    assert isinstance(init, ast_module.FunctionDef)
    receiver = constructor_call("pkg.m", "Tokenizer", init)
    assert receiver is not None
    site = guarded_site("def fail(self, message: str):", function="Tokenizer.fail")
    method = method_caller(site, "pkg.m", receiver)
    assert method is not None
    parse = ast_module.parse("def parse(text: str):\n    pass").body[0]
    assert isinstance(parse, ast_module.FunctionDef)
    caller = PublicCaller("pkg", "parse", parse, (("message", "text"),))
    calls = [candidate.call for candidate in candidates(site, "pkg.m", [method, caller])]
    # The caller's plain call keeps its one try after it.
    assert calls == ["Tokenizer('x').fail('x')", "parse('x')"]


_DEFINE = """\
                def _split(qualname):
                    if "::" not in qualname:
                        raise ValueError("a name needs its namespace")
                    return qualname.split("::", 1)


                def define(qualname: str, schema: str) -> None:
                    namespace, name = _split(qualname)
                    if schema == "":
                        raise ValueError("an operator needs a schema")
                """
"""A package whose `define` first calls `_split`, whose check stops `define('x', '')` before
the schema's."""


def test_a_call_stopped_at_another_check_is_tried_again_steered_past_it(tmp_path: Path) -> None:
    """`define('x', '')` stops at `_split`'s check, not at the schema's: the second round
    passes a name that check lets by (`'::'`, its negation's constant), and gets there."""
    root = _gauges(
        tmp_path,
        _DEFINE,
    )
    assert errcat_output(root, "new")[0] == 0
    code, out, err = errcat_output(root, "reproduce", "--no-tests", "--json")
    assert code == 0, err
    (entry,) = [e for e in json.loads(out)["entries"] if e["name"].startswith("OperatorNeeds")]
    assert entry["outcome"] == "reproduced", entry
    assert entry["call"] == "define('::', '')"
    tried = [attempt["call"] for attempt in entry["sites"][0]["attempts"]]
    assert tried[0] == "define('x', '')"
    assert "a name needs its namespace" in entry["sites"][0]["attempts"][0]["problem"]


def test_what_a_call_must_meet_to_get_past_a_check_is_said_in_each_callers_terms(
    tmp_path: Path,
) -> None:
    import ast as ast_module
    from dataclasses import replace

    from catalog.evidence.candidates import avoiding
    from catalog.evidence.stops import Stops

    check = guarded_site(
        "def _split(qualname, strict=False):", "'::' not in qualname", "strict", function="_split"
    )
    header = ast_module.parse("def define(name, schema):\n    pass").body[0]
    assert isinstance(header, ast_module.FunctionDef)
    define = PublicCaller("pkg.ops", "define", header, (("qualname", "name"),))
    said = {
        key: [ast_module.unparse(test) for test in tests]
        for key, tests in avoiding(check, "pkg.m", [define]).items()
    }
    # The caller does not steer `strict`: only the test it does is negated, which is stronger.
    assert said == {
        ("pkg.m", "_split"): ["not ('::' not in qualname and strict)"],
        ("pkg.ops", "define"): ["not '::' not in name"],
    }
    # The site's own `if`s, not the guards on the way (earlier checks that passed, here one
    # errcat cannot judge): `not (mode != 'a')` is judged, `not (... and number(x))` is not.
    from extractor.model import Condition

    guarded = replace(
        guarded_site("def _mode(mode, x):", "mode != 'a'", function="_mode"),
        conditions=(Condition("if", "mode != 'a'", 8), Condition("guard", "number(x)", 7)),
    )
    ((_key, (negation,)),) = avoiding(guarded, "pkg.m").items()
    assert ast_module.unparse(negation) == "not mode != 'a'"
    # The site is named by the frame on its lines: the raise's own, or a raise helper's caller
    # a few frames out, never a frame outside the package's sites.
    (tmp_path / "pkg").mkdir()
    stops = Stops(tmp_path, [check])
    at = str(tmp_path / "pkg" / "m.py")
    assert stops.site_of({"ended": "raised", "frames": [[at, 9], ["x.py", 1]]}) == check
    assert stops.site_of({"ended": "raised", "frames": [[at, 10]]}) is None
    assert stops.site_of({"ended": "raised", "frames": [["h.py", 2], [at, 9]]}) is None
    helped = replace(check, call=True)
    assert (
        Stops(tmp_path, [helped]).site_of({"ended": "raised", "frames": [["h.py", 2], [at, 9]]})
        == helped
    )
    assert stops.site_of({"ended": "finished"}) is None


def test_a_class_is_made_with_arguments_its_constructors_own_checks_let_by(
    tmp_path: Path,
) -> None:
    """`Node('x', 'x')` stops in the constructor, as torch's `fx.Node` does for an `op` outside
    `_legal_ops` (and None in its place fails on `node.op`): the node is made with an `op` its
    check lets by."""
    root = _gauges(
        tmp_path,
        """\
                _LEGAL = dict.fromkeys(["call", "get"])


                class Node:
                    def __init__(self, op: str, target: str) -> None:
                        if op not in _LEGAL:
                            raise ValueError(f"op {op!r} is not one a node runs")
                        self.op = op


                def run(node: Node, times: int) -> None:
                    runs = node.op
                    if times < 0:
                        raise ValueError(f"a {runs} node runs zero times or more")
                """,
    )
    assert errcat_output(root, "new")[0] == 0
    code, out, err = errcat_output(root, "reproduce", "--no-tests", "--json")
    assert code == 0, err
    (entry,) = [e for e in json.loads(out)["entries"] if e["name"].startswith("RunsNodeZero")]
    assert entry["outcome"] == "reproduced", entry
    assert entry["call"] == "run(gauges.dial.Node('call', 'x'), -1)"


def test_a_bug_building_a_second_round_is_said_and_the_run_keeps_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import catalog.evidence.reproduce as reproducing

    root = _gauges(
        tmp_path,
        _DEFINE,
    )
    real = reproducing.candidates

    def broken(*args: Any) -> Any:
        if len(args) > 8 and args[8]:  # `avoid`: only the second round's
            raise TypeError("a bug")
        return real(*args)

    monkeypatch.setattr(reproducing, "candidates", broken)
    run = _run_reproduce(root)
    (entry,) = [e for e in run.entries if e.name.startswith("OperatorNeeds")]
    assert entry.outcome == "failed"
    assert entry.sites[0].attempts[0].call == "define('x', '')"
    assert "errcat failed to build its calls (TypeError: a bug)" in capsys.readouterr().err


def test_a_methods_instance_is_made_past_its_constructors_own_checks(tmp_path: Path) -> None:
    """`Lamp(1)` stops at the constructor's check; the instance `light` runs on is made with
    volts that check lets by."""
    root = _gauges(
        tmp_path,
        """\
                class Lamp:
                    def __init__(self, volts: int) -> None:
                        if volts < 100:
                            raise ValueError("a lamp needs 100 volts at least")
                        self.volts = volts

                    def light(self, hours: int) -> None:
                        if hours < 0:
                            raise ValueError("a lamp lights for no negative time")
                """,
    )
    assert errcat_output(root, "new")[0] == 0
    code, out, err = errcat_output(root, "reproduce", "--no-tests", "--json")
    assert code == 0, err
    (entry,) = [e for e in json.loads(out)["entries"] if "Negative" in e["name"]]
    assert entry["outcome"] == "reproduced", entry
    assert entry["call"] == "Lamp(100).light(-1)"
