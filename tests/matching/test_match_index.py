"""The template index the search box matches against, and the browser's matcher agreeing with
`errcat explain` on it (catalog/pages/theme/assets/errcat-match.js, run under Node)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from helpers import render_sample

from catalog.core.config import load_config
from catalog.core.model import Catalog
from catalog.core.project import generated_module
from catalog.entries.validate import load_valid_catalog
from catalog.matching.browser_index import (
    FORMAT,
    MATCH_FILE,
    class_names,
    dumps,
    index_of_rows,
    match_index,
    pieces,
    site_matcher,
)
from catalog.matching.messages import MessageMatcher, catalog_rows, lookup

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "catalog" / "pages" / "theme" / "assets" / "errcat-match.js"
SITE_URL = "http://127.0.0.1:8000/"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(
    NODE is None, reason="node is not installed: the JS matcher runs under it"
)

# Reads {"index": ..., "queries": [...]} on stdin; prints each query's result ids.
RUNNER = """
const { Matcher } = require(process.argv[1]);
let input = "";
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const { index, queries } = JSON.parse(input);
  const matcher = new Matcher(index);
  console.log(JSON.stringify(queries.map((q) => matcher.match(q).map((r) => r.id))));
});
"""

# Rows for what the project's catalog lacks: entries catalogued in place, a weak template,
# doubled braces, non-ASCII text, a format spec, one message under two classes.
EDGE_ROWS = [
    {"id": "00000000000000b1", "message": "Invalid version: {version!r}",
     "exception": "packaging.version.InvalidVersion", "name": "InvalidVersionString"},
    {"id": "00000000000000b2", "message": "version {version} has no release segment",
     "exception": "packaging.version.InvalidVersion", "name": "InvalidVersion"},
    {"id": "00000000000000b3", "message": "Invalid version: {version!r} is out of range",
     "exception": "ValueError", "name": "VersionOutOfRange"},
    {"id": "00000000000000b4", "message": "{what}: {why}",
     "exception": "mypkg.errors.LoadFailed", "name": "LoadFailedAnyhow"},
    {"id": "00000000000000c1", "message": "expected {{key}} in {where}, found {found:>8}",
     "exception": "KeyError", "name": "MissingKey"},
    {"id": "00000000000000c2", "message": "naïve façade {x} 🚀 lancée",
     "exception": "RuntimeError", "name": "FacadeFailed"},
    {"id": "00000000000000c3", "message": "bad value {v} for the cache",
     "exception": "ValueError", "name": "BadCacheValue"},
    {"id": "00000000000000c4", "message": "bad value {v} for the cache",
     "exception": "TypeError", "name": "BadCacheType"},
    {"id": "00000000000000c5", "message": "", "exception": "SystemExit", "name": "BareExit"},
    {"id": "00000000000000c6", "message": "Exceeded {limit} redirects.",
     "exception": "httpx._exceptions.TooManyRedirects", "name": "RedirectLimit"},
    {"id": "00000000000000d1", "message": "bad value ", "exception": "ValueError",
     "name": "BadValueSpaced"},
    {"id": "00000000000000d2", "message": "expected {n} \t", "exception": "ValueError",
     "name": "ExpectedSpaced"},
    {"id": "00000000000000d3", "message": "torch.nn.functional: bad shape",
     "exception": "ValueError", "name": "FunctionalBadShape"},
    {"id": "00000000000000d4", "message": "bad shape", "exception": "ValueError",
     "name": "BadShape"},
    {"id": "00000000000000d5", "message": "{where}: bad size for the cache",
     "exception": "RuntimeError", "name": "BadSizeFor"},
    {"id": "00000000000000d6", "message": "bad size for the cache", "exception": "ValueError",
     "name": "BadSize"},
    {"id": "00000000000000d7", "message": "Pool2d: bad size for the cache",
     "exception": "ValueError", "name": "PoolBadSize"},
    {"id": "00000000000000e1", "exception": "RuntimeError", "name": "StateDictMismatch",
     "message": "Error(s) in loading state_dict for {name}:\n\tMissing key(s) in state_dict: {keys}."},
    {"id": "00000000000000e2", "message": "buffer name can't contain \".\"",
     "exception": "KeyError", "name": "DottedBufferName"},
    {"id": "00000000000000e3", "message": "Not a valid integer.", "exception": "ValueError",
     "name": "NotAnInteger"},
    {"id": "00000000000000e4", "exception": "mypkg.errors.LoadFailed", "name": "Unreadable",
     "message": "{path}:\n  cannot be read"},
    # One text raised in a private module and in a public one: the public one first.
    {"id": "00000000000000f1", "message": "{owner} has no attribute `{name}`",
     "exception": "AttributeError", "name": "NoAttrPrivate", "module": "pkg.utils._access"},
    {"id": "00000000000000f2", "message": "{mod} has no attribute `{item}`",
     "exception": "AttributeError", "name": "NoAttrDeep", "module": "pkg.nn.modules.module"},
    {"id": "00000000000000f3", "message": "{m} has no attribute `{target}`",
     "exception": "AttributeError", "name": "NoAttr", "module": "pkg.nn"},
]  # fmt: skip
PASTES = {
    # A multi-line message whole, after its class, under a traceback, and by its first line.
    "RuntimeError: Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "
    '"fc.weight".': "00000000000000e1",
    "Traceback (most recent call last):\n  File 'x.py', line 3\nRuntimeError: Error(s) in "
    'loading state_dict for Net:\n\tMissing key(s) in state_dict: "w".\n': "00000000000000e1",
    "Error(s) in loading state_dict for Net:": "00000000000000e1",
    "RuntimeError: Error(s) in loading state_dict for Net:": "00000000000000e1",
    # A multi-line message whose first line is only a placeholder: whole pastes only.
    "mypkg.errors.LoadFailed: /etc/x.toml:\n  cannot be read": "00000000000000e4",
    # str() of a KeyError is its message's repr; containers print theirs.
    "KeyError: 'buffer name can\\'t contain \".\"'": "00000000000000e2",
    "'buffer name can\\'t contain \".\"'": "00000000000000e2",
    "{'age': ['Not a valid integer.']}": "00000000000000e3",
    "marshmallow.exceptions.ValidationError: {'age': ['Not a valid integer.'], 'n': ['x']}": (
        "00000000000000e3"
    ),
    "['na\\xefve fa\\xe7ade 3 \\U0001f680 lanc\\xe9e']": "00000000000000c2",
    # A one-line message holding a value printed over several lines (a tree, a tensor).
    "expected {key} in Spec(tuple, [*,\n  *]), found     None": "00000000000000c1",
    "KeyError: expected {key} in tensor([[1, 2],\n        [3, 4]]), found        x": (
        "00000000000000c1"
    ),
}
APPROXIMATE = [
    # Another case, or the start of a message: approximate, only when nothing matches.
    ("NOT A VALID INTEGER.", ["00000000000000e3"]),
    ("invalid version: 'x' is out of range", ["00000000000000b3"]),
    ("valueerror: Bad value 3 for the cache", ["00000000000000c3", "00000000000000c4"]),
    ("Invalid version", ["00000000000000b1", "00000000000000b3"]),
    ("error(s) in loading", ["00000000000000e1"]),
    ("naïve façade", ["00000000000000c2"]),
    ("naïve faç", []),
    ("Expected", ["00000000000000d2", "00000000000000c1"]),
    ("Expect", []),
    ("ERROR(S) IN LOADING STATE_DICT FOR Net:\nmore of it", ["00000000000000e1"]),
]
EDGE_QUERIES = [
    "httpx.TooManyRedirects",
    "httpx._exceptions.TooManyRedirects",
    "httpx.TooManyRedirects: Exceeded 20 redirects.",
    "httpx.other.TooManyRedirects: Exceeded 20 redirects.",
    "packaging.version.InvalidVersion: Invalid version: 'x' is out of range",
    "Invalid version: 'x' is out of range",
    "packaging.version.InvalidVersion: Invalid version: 'x'",
    "packaging.version.InvalidVersion: version 1.x has no release segment",
    "builtins.RuntimeError: Invalid version: 'x' is out of range",
    "disk: full",
    "mypkg.errors.LoadFailed: disk: full",
    "packaging.version.InvalidVersion",
    "InvalidVersionString",
    "expected {key} in config.toml, found     None",
    "KeyError: expected {key} in a, found b",
    "naïve façade 3 🚀 lancée",
    "x naïve façade 3 🚀 lancéex",
    "bad value 3 for the cache",
    "TypeError: bad value 3 for the cache",
    "SystemExit",
    "SystemExit: ",
    "00000000000000c2",
    "see /errors/00000000000000c3/ for more",
    "Traceback (most recent call last):\n  File 'x.py'\nTypeError: bad value 3 for the cache\n",
    "naïve façade \ud800 🚀 lancée",
    "bad value",
    "ValueError: bad value\u3000",
    "bad values",
    "expected 3",
    "expected 3 \t more",
    "ValueError: expected 3 ",
    "torch.nn.functional: bad shape",
    "torch.nn.functional: bad size for the cache",
    "cuda: bad shape",
    "KeyError: bad size for the cache",
    "Pool2d: bad size for the cache",
    "MyError: bad size for the cache",
    "pkg.MyError: bad size for the cache",
    "ValueError: bad shape",
    "",
    "   ",
    *PASTES,
    "KeyError: 'unclosed",
    "['\\q', '']",
    "Error(s) in loading state_dict",
    "AttributeError: Module has no attribute `missing`",
    *(paste for paste, _ in APPROXIMATE),
]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_valid_catalog(load_config(ROOT).catalog)


def _node(index: Mapping[str, object], queries: list[str]) -> list[list[str]]:
    """Each query's result ids from the JavaScript matcher."""
    assert NODE is not None
    done = subprocess.run(
        [NODE, "-e", RUNNER, str(SCRIPT)],
        input=json.dumps({"index": index, "queries": queries}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: list[list[str]] = json.loads(done.stdout)
    return found


def _python(rows: Iterable[Mapping[str, str]], queries: list[str]) -> list[list[str]]:
    matcher = MessageMatcher.from_rows(rows)
    return [[r.id for r in lookup(q, matcher)] for q in queries]


def table(catalog: Catalog) -> list[tuple[str, str]]:
    """(what was pasted, the entry it must find first) for every entry of every module: the
    concrete message bare and after its built-in, the traceback line, the docs-link note, the
    class name, qualified and not, and the id."""
    module = generated_module(load_config(ROOT))
    matcher = MessageMatcher.from_catalog(catalog)
    fixed = {e.message: e.id for e in catalog if "{" not in e.message}
    rows: list[tuple[str, str]] = []
    for entry in catalog:
        for variant in (0, 1):
            concrete = render_sample(entry.message, variant)
            rows.append((f"{module}.{entry.name}: {concrete}", entry.id))
            if not matcher.is_weak(entry.id):
                # Text identical to a placeholder-free message is that entry's (test_explain).
                expected = fixed.get(concrete, entry.id)
                rows += [(concrete, expected), (f"{entry.exception}: {concrete}", expected)]
        rows += [
            (f"For further information visit {SITE_URL}errors/{entry.id}/", entry.id),
            (entry.name, entry.id),
            (f"{module}.{entry.name}", entry.id),
            (entry.id, entry.id),
        ]
    return rows


def test_pieces_alternate_literal_text_and_placeholders() -> None:
    """Literal first and last, braces undoubled, placeholders as written without braces."""
    assert pieces("{name} must be on device {device}, got {t.device}") == [
        "", "name", " must be on device ", "device", ", got ", "t.device", "",
    ]  # fmt: skip
    assert pieces("expected {{key}} in {where!r:>8}") == ["expected {key} in ", "where!r:>8", ""]
    assert pieces("no placeholder") == ["no placeholder"]
    assert pieces("") == [""]


def test_the_index_holds_every_entry_in_catalog_order(catalog: Catalog) -> None:
    """One row per entry, in the matcher's order, with its class name and its anchor word
    (None for a weak template); exceptions and modules are stored once each."""
    index = match_index(catalog, "runtime.errors")
    assert index["format"] == FORMAT
    assert index["module"] == "runtime.errors"
    assert [row[0] for row in index["entries"]] == [entry.id for entry in catalog]
    assert {row[1] for row in index["entries"]} == {entry.name for entry in catalog}
    assert len(index["modules"]) == len({entry.module for entry in catalog})
    assert ["ValueError", 1] in index["exceptions"]
    by_id = {row[0]: row for row in index["entries"]}
    weak = MessageMatcher.from_catalog(catalog)
    assert [i for i, row in by_id.items() if row[4] is None] == [
        entry.id for entry in catalog if weak.is_weak(entry.id)
    ]
    assert by_id["0fdb60950b3588f4"][4:] == [
        "device", ["", "name", " must be on device ", "device", ", got ", "t.device", ""],
    ]  # fmt: skip
    assert json.loads(dumps(index)) == index
    assert "\n" not in dumps(index).rstrip("\n")


def test_the_index_of_an_in_place_class_says_it_has_no_generated_class() -> None:
    """An exception that is not a generated class's base is marked 0: its traceback prints the
    class itself, so the script narrows by it instead of taking the entry's name as a class."""
    index = index_of_rows(EDGE_ROWS, "mypkg.errors")
    assert dict(map(tuple, index["exceptions"])) == {
        "packaging.version.InvalidVersion": 0,
        "ValueError": 1,
        "mypkg.errors.LoadFailed": 0,
        "KeyError": 1,
        "RuntimeError": 1,
        "TypeError": 1,
        "SystemExit": 0,
        "httpx._exceptions.TooManyRedirects": 0,
        "AttributeError": 1,
    }


def test_served_matcher_finds_class_names_through_the_sites_index(
    catalog: Catalog, tmp_path: Path
) -> None:
    """`/api/match`'s matcher is built on the API index's rows, which carry no class names: the
    site's template index supplies them. A site without one still matches messages."""
    rows = [
        {key: row[key] for key in ("id", "status", "exception", "message", "module", "url")}
        for row in catalog_rows(catalog, SITE_URL)
    ]
    assert site_matcher(tmp_path, rows).match("BorrowRequiresMps") == []
    (tmp_path / MATCH_FILE).parent.mkdir(parents=True)
    (tmp_path / MATCH_FILE).write_text(dumps(match_index(catalog, "runtime.errors")), "utf-8")
    assert class_names(tmp_path)["f978622eed176d93"] == "BorrowRequiresMps"
    matcher = site_matcher(tmp_path, rows)
    for query in ("BorrowRequiresMps", "runtime.errors.BorrowRequiresMps"):
        [found] = matcher.match(query)
        assert (found.id, found.url) == ("f978622eed176d93", f"{SITE_URL}errors/f978622eed176d93/")
    line = "out must be on device cuda:1, got cuda:0"
    assert [r.id for r in matcher.match(line)] == ["0fdb60950b3588f4"]
    (tmp_path / MATCH_FILE).write_text("{not json", "utf-8")
    assert class_names(tmp_path) == {}


@needs_node
def test_the_browser_matcher_ranks_like_explain_on_every_entry(catalog: Catalog) -> None:
    """For every entry of every module, each way of pasting it finds it first in JavaScript,
    and the whole result list is the one `errcat explain` gives."""
    cases = table(catalog)
    queries = [query for query, _ in cases]
    rows = list(catalog_rows(catalog))
    javascript = _node(match_index(catalog, "runtime.errors"), queries)
    python = _python(rows, queries)
    disagree = {
        q: (js, py) for q, js, py in zip(queries, javascript, python, strict=True) if js != py
    }
    assert disagree == {}
    wrong = {q: js for (q, wanted), js in zip(cases, javascript, strict=True) if js[:1] != [wanted]}
    assert wrong == {}
    assert len({entry.module for entry in catalog}) > 1


@needs_node
def test_the_browser_matcher_agrees_on_edge_cases() -> None:
    """Classes catalogued in place, weak templates, braces, non-ASCII text, format specs, one
    message under two classes, tracebacks of several lines, empty queries: same results."""
    index = index_of_rows(EDGE_ROWS, "mypkg.errors")
    javascript = _node(index, EDGE_QUERIES)
    python = _python(EDGE_ROWS, EDGE_QUERIES)
    assert dict(zip(EDGE_QUERIES, javascript, strict=True)) == dict(
        zip(EDGE_QUERIES, python, strict=True)
    )
    # The table is not vacuous: most queries find something.
    assert sum(bool(found) for found in python) >= len(EDGE_QUERIES) - 10


def test_pastes_of_multi_line_and_printed_messages_find_their_entry_first() -> None:
    """Whole or first-line pastes of a multi-line message, a KeyError's repr and a message in a
    printed list or dict each put their entry first (the browser agrees: the edge-case test)."""
    found = dict(zip(PASTES, _python(EDGE_ROWS, list(PASTES)), strict=True))
    assert {paste: ids[:1] for paste, ids in found.items()} == {
        paste: [ident] for paste, ident in PASTES.items()
    }


def test_equally_specific_matches_list_the_more_public_module_first() -> None:
    """Ties in literal text (one message raised in several modules) go to the entry filed
    under the module with fewer private parts, then the shallower one, then the lower id; the
    browser orders them the same way (the edge-case test holds this query too)."""
    (found,) = _python(EDGE_ROWS, ["AttributeError: Module has no attribute `missing`"])
    assert found == ["00000000000000f3", "00000000000000f2", "00000000000000f1"]


def test_other_cases_and_cut_pastes_are_approximate_answers() -> None:
    """With no exact match, ASCII case is ignored, then a paste that is a template's literal
    start (cut between words, long enough) lists those templates, shortest first."""
    matcher = MessageMatcher.from_rows(EDGE_ROWS)
    for paste, expected in APPROXIMATE:
        found = matcher.match(paste)
        assert [r.id for r in found] == expected, paste
        assert all(r.via == "approximate" for r in found), paste
    # An exact answer leaves no room for approximate ones.
    assert [r.via for r in matcher.match("Not a valid integer.")] == ["message"]


def test_a_class_is_found_by_the_public_path_its_package_re_exports_it_under() -> None:
    """A traceback or a query names the class as the package exports it (`httpx.X`) while the
    entry names it where it is defined (`httpx._exceptions.X`): same package, same class name."""
    matcher = MessageMatcher.from_rows(EDGE_ROWS)
    for query in (
        "httpx.TooManyRedirects",
        "httpx._exceptions.TooManyRedirects",
        "httpx.TooManyRedirects: Exceeded 20 redirects.",
    ):
        assert [r.id for r in matcher.match(query)] == ["00000000000000c6"], query
    assert matcher.match("otherpkg.TooManyRedirects") == []


def test_the_browser_lists_the_built_in_exception_classes_python_does() -> None:
    """A bare built-in class before a colon reads as a class in both matchers: the script's
    list is errcat's, and that list holds every built-in exception of this Python."""
    import builtins
    import re

    from catalog.core.exceptions import EVERY_BUILTIN_EXCEPTION

    text = SCRIPT.read_text(encoding="utf-8")
    listed = re.search(r"const BUILTIN_EXCEPTIONS = new Set\(\[(.*?)\]\);", text, re.DOTALL)
    assert listed is not None
    assert set(re.findall(r'"(\w+)"', listed.group(1))) == EVERY_BUILTIN_EXCEPTION
    here = {
        name
        for name, value in vars(builtins).items()
        if isinstance(value, type)
        and issubclass(value, BaseException)
        and not name.startswith("_")
        and name != "WindowsError"
    }
    assert here <= EVERY_BUILTIN_EXCEPTION
