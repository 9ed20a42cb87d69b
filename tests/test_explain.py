"""`errcat explain`: matching concrete messages, tracebacks and logs back to catalog entries."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from catalog.cli import main
from catalog.commands.explain import LINE_LIMIT, read_lines
from catalog.config import load_config
from catalog.examples import run_examples
from catalog.explain import MessageMatcher
from catalog.model import Catalog, Entry
from catalog.placeholders import parse_placeholders
from catalog.validate import load_valid_catalog

ROOT = Path(__file__).resolve().parents[1]

# Two realistic value sets per placeholder, keyed by the field's last name.
SAMPLES: dict[str, tuple[str, str]] = {
    "device": ("cuda:1", "cpu"),
    "devices": ("['mps:0', 'cpu']", "['cuda:0']"),
    "target_device": ("cuda:0", "meta"),
    "device_id": ("3", "0"),
    "dtype": ("torch.bfloat16", "torch.float16"),
    "name": ("lse", "max_logits"),
    "transport_name": ("host shared memory", "CUDA IPC"),
    "torch_version": ("2.12.1", "2.14.0.dev20250101"),
    "mlx_version": ("0.31.0", "0.29.3"),
    "given": ("'triton'", "'SM90'"),
    "capability": ("(8, 0)", "(12, 0)"),
    "data_type": ("<class 'numpy.ndarray'>", "<class 'list'>"),
    "wait_timeout": ("5.0", "0.25"),
}
NUMBER = ("7", "1536")


def sample_value(field: str, variant: int) -> str:
    leaf = field.rsplit(".", 1)[-1]
    if leaf in SAMPLES:
        return SAMPLES[leaf][variant]
    if leaf.endswith("shape"):
        return ("(2, 16, 576)", "torch.Size([1, 64])")[variant]
    return NUMBER[variant]


def render_sample(message: str, variant: int) -> str:
    """The template with each placeholder given a concrete value (attributes via namespaces)."""
    roots: dict[str, object] = {}
    for placeholder in parse_placeholders(message):
        root, _, attribute = placeholder.field.partition(".")
        value = sample_value(placeholder.field, variant)
        if attribute:
            holder = roots.setdefault(root, SimpleNamespace())
            setattr(holder, attribute, value)
        else:
            roots[root] = value
    return message.format(**roots)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_valid_catalog(load_config(ROOT).catalog)


@pytest.fixture(scope="module")
def matcher(catalog: Catalog) -> MessageMatcher:
    return MessageMatcher.from_catalog(catalog, "http://127.0.0.1:8000/")


def _ids(results: object) -> list[str]:
    return [r.id for r in results]  # type: ignore[attr-defined]


@pytest.mark.parametrize("variant", [0, 1])
def test_every_message_with_concrete_values_matches_its_entry_only(
    catalog: Catalog, matcher: MessageMatcher, variant: int
) -> None:
    """Each template rendered with realistic values matches its own entry and no other,
    bare, after its built-in's name, and after its qualified class name. The one exception:
    text identical to another entry's placeholder-free message is that entry's, unless the
    class name says otherwise."""
    fixed = {entry.message: entry.id for entry in catalog if not parse_placeholders(entry.message)}
    wrong = {}
    for entry in catalog:
        concrete = render_sample(entry.message, variant)
        expected = fixed.get(concrete, entry.id)
        for shown, wanted in (
            (concrete, expected),
            (f"{entry.exception}: {concrete}", expected),
            (f"runtime.errors.{entry.name}: {concrete}", entry.id),
        ):
            found = _ids(matcher.match(shown))
            if found != [wanted]:
                wrong[shown] = found
    assert wrong == {}


def test_identical_text_goes_to_the_fixed_message_and_the_class_decides(
    matcher: MessageMatcher,
) -> None:
    """`{transport_name} proxy ...` rendered for CUDA IPC reads exactly like the CUDA IPC
    entry's own message: the placeholder-free entry wins, and a class name overrides it."""
    text = "CUDA IPC proxy does not belong to this pool"
    assert _ids(matcher.match(text)) == ["f1baa79cd2f8fba5"]
    assert _ids(matcher.match(f"runtime.errors.ForeignHostProxy: {text}")) == ["7d12f318815da6bd"]


def test_values_are_read_back_from_the_message(matcher: MessageMatcher) -> None:
    """A match reports the concrete text of each placeholder."""
    [result] = matcher.match("CUDA IPC requires a CUDA tensor")
    assert result.id == "ffbed2bb70a79900"
    assert result.values == (("transport_name", "CUDA IPC"),)
    assert result.url == "http://127.0.0.1:8000/errors/ffbed2bb70a79900/"


def test_word_edges_keep_similar_messages_apart(matcher: MessageMatcher) -> None:
    """`q must be contiguous` does not match inside `kv must be contiguous`, and the specific
    template beats the generic `{name} must be contiguous`."""
    q = matcher.match("q must be contiguous")
    kv = matcher.match("kv must be contiguous")
    generic = matcher.match("lse must be contiguous")
    assert len(q) == len(kv) == len(generic) == 1
    assert len({q[0].id, kv[0].id, generic[0].id}) == 3
    assert generic[0].values == (("name", "lse"),)


def test_docs_link_note_names_its_entry(matcher: MessageMatcher) -> None:
    """The note the typed exceptions add identifies the entry by id."""
    note = "For further information visit https://docs.example.org/errors/f978622eed176d93/"
    [result] = matcher.match(note)
    assert (result.id, result.via) == ("f978622eed176d93", "link")


def test_weak_templates_match_only_by_id_or_class() -> None:
    """`{label}: {err}` is too vague to claim a line by its text; its class name still works."""
    matcher = MessageMatcher.from_rows(
        [
            {"id": "00000000000000aa", "message": "{label}: {err}", "exception": "RuntimeError",
             "name": "LabelledFailure"},
            {"id": "00000000000000bb", "message": "pool of {n} is exhausted",
             "exception": "RuntimeError", "name": "PoolExhausted"},
        ]
    )  # fmt: skip
    assert matcher.is_weak("00000000000000aa")
    assert matcher.match("loader: disk full") == []
    assert _ids(matcher.match("pkg.errors.LabelledFailure: loader: disk full")) == [
        "00000000000000aa"
    ]
    assert matcher.scan_lines(["loader: disk full", "x.LabelledFailure: loader: full"]) == {
        "00000000000000aa": 1
    }
    assert _ids(matcher.match("pool of 4 is exhausted")) == ["00000000000000bb"]


def test_most_literal_characters_wins_and_ties_are_listed() -> None:
    """Specificity is the count of literal characters; equal counts are all returned."""
    matcher = MessageMatcher.from_rows(
        [
            {"id": "00000000000000a1", "message": "worker {rank} lost its lease", "exception": "E"},
            {"id": "00000000000000b2", "message": "worker 3 lost its {what}", "exception": "E"},
        ]
    )
    # 22 literal characters against 18.
    [best] = matcher.match("worker 3 lost its lease")
    assert (best.id, best.literal_chars) == ("00000000000000a1", 22)
    tied = MessageMatcher.from_rows(
        [
            {"id": "00000000000000b2", "message": "{who} failed to load", "exception": "E"},
            {"id": "00000000000000a1", "message": "shard 3 failed {what}", "exception": "E"},
        ]
    )
    # 15 literal characters each.
    found = tied.match("shard 3 failed to load")
    assert [(r.id, r.literal_chars) for r in found] == [
        ("00000000000000a1", 15),
        ("00000000000000b2", 15),
    ]
    assert tied.scan_lines(["shard 3 failed to load"]) == {
        "00000000000000a1": 1,
        "00000000000000b2": 1,
    }


LOG = """\
2025-03-02 10:00:01 INFO  scheduler: step=1 loss=2.31 throughput=1532 tok/s device=cuda:0
2025-03-02 10:00:01 DEBUG the CUDA stream is idle; tensor cache at 71%
2025-03-02 10:00:02 ERROR worker[3]: CUDA IPC requires a CUDA tensor
Traceback (most recent call last):
  File "/srv/app/encode.py", line 88, in encode
    pool.copy_tensor(features)
runtime.errors.TransportRequiresCudaTensor: CUDA IPC requires a CUDA tensor
For further information visit http://127.0.0.1:8000/errors/ffbed2bb70a79900/
2025-03-02 10:00:03 WARN  retrying; contiguous memory is fragmented
Traceback (most recent call last):
  File "/srv/app/attn.py", line 12, in forward
    out = sparse_mla_q8kv8_prefill_fwd(q, kv, indices, sm_scale)
ValueError: kv must be torch.float8_e4m3fn, got torch.bfloat16
2025-03-02 10:00:04 ERROR rank 1: q must be contiguous
2025-03-02 10:00:05 ERROR rank 2: q must be contiguous
2025-03-02 10:00:06 INFO  see http://127.0.0.1:8000/errors/f978622eed176d93/ for MPS borrowing
2025-03-02 10:00:07 INFO  lse must be contiguousish, says nobody
"""


def test_log_scanning_counts_each_error_once_per_occurrence(
    catalog: Catalog, matcher: MessageMatcher
) -> None:
    """Noise is ignored; a traceback's message and its docs note count once; repeats add up."""
    by_name = {entry.name: entry.id for entry in catalog}
    counts = matcher.scan_lines(LOG.splitlines())
    assert counts == {
        by_name["TransportRequiresCudaTensor"]: 2,
        by_name["KvCacheNotFloat8"]: 1,
        by_name["QueryNotContiguous"]: 2,
        by_name["BorrowRequiresMps"]: 1,
    }


def test_input_is_read_in_chunks_and_long_lines_are_cut() -> None:
    """Lines span chunk boundaries intact; a line far beyond the limit is cut, not kept whole,
    and a character split across chunks still decodes."""
    data = (
        b"x" * (LINE_LIMIT * 40 + 10)
        + b"\n"
        + "température\n".encode() * 200_000
        + b"q must be contiguous"
    )
    lines = list(read_lines(io.BytesIO(data)))
    assert lines[0] == "x" * LINE_LIMIT
    assert lines[1:-1] == ["température"] * 200_000
    assert lines[-1] == "q must be contiguous"


@pytest.fixture(scope="module")
def before_runs(catalog: Catalog) -> list[tuple[Entry, str, str]]:
    """(entry, message, traceback) of every example `before` that raised its own entry here."""
    run = run_examples(catalog, ROOT)
    entries = catalog.by_id()
    return [
        (entries[r.entry_id], r.before.message or "", r.before.detail)
        for r in run.results
        if r.before is not None and r.before.exception_id == r.entry_id
    ]


def test_each_example_output_matches_its_own_entry(
    matcher: MessageMatcher, before_runs: list[tuple[Entry, str, str]]
) -> None:
    """What each runnable example's `before` really printed matches its entry and no other,
    as a message and inside the traceback it printed."""
    assert before_runs, "no example ran on this machine"
    wrong = {}
    for entry, message, traceback in before_runs:
        found = _ids(matcher.match(message))
        scanned = matcher.scan_lines(traceback.splitlines())
        if found != [entry.id] or scanned.get(entry.id) != 1:
            wrong[entry.id] = (message, found, scanned)
    assert wrong == {}


def _explain(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    monkeypatch.chdir(ROOT)
    capsys.readouterr()
    code = main(["explain", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_query_by_id_and_by_class_name(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An id, a class name and a qualified class name all find the entry; output has no colour
    when stdout is not a terminal."""
    for query in ("f978622eed176d93", "BorrowRequiresMps", "runtime.errors.BorrowRequiresMps"):
        code, out, _ = _explain([query], capsys, monkeypatch)
        assert code == 0
        assert out.startswith("BorrowRequiresMps  f978622eed176d93  ValueError, active\n")
        assert "\033[" not in out
        assert "Solutions\n  1. " in out
    code, out, _ = _explain(["BorrowRequiresMps", "--json"], capsys, monkeypatch)
    [match] = json.loads(out)["matches"]
    assert (match["id"], match["via"]) == ("f978622eed176d93", "class")


def test_concrete_message_query_as_json(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pasted traceback line matches, with the values it carried."""
    line = "runtime.errors.BorrowRequiresMps: borrow_torch_tensors requires MPS tensors, got cpu"
    code, out, _ = _explain([line, "--json"], capsys, monkeypatch)
    assert code == 0
    [match] = json.loads(out)["matches"]
    assert match["id"] == "f978622eed176d93"
    assert match["values"] == {"devices": "cpu"}


def test_no_match_exits_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message the catalog does not know is exit 1 with a hint, JSON or not."""
    code, out, err = _explain(["the disk is on fire"], capsys, monkeypatch)
    assert (code, out) == (1, "")
    assert "nothing in the catalog matches 'the disk is on fire'" in err
    code, out, _ = _explain(["the disk is on fire", "--json"], capsys, monkeypatch)
    assert code == 1 and json.loads(out)["matches"] == []


class _Stdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


def test_stdin_log(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`-` reads a log from standard input and lists every error once with its count."""
    monkeypatch.setattr(sys, "stdin", _Stdin(LOG.encode()))
    code, out, _ = _explain(["-", "--json"], capsys, monkeypatch)
    assert code == 0
    report = json.loads(out)
    assert report["lines"] == len(LOG.splitlines())
    assert {row["name"]: row["count"] for row in report["errors"]} == {
        "TransportRequiresCudaTensor": 2,
        "KvCacheNotFloat8": 1,
        "QueryNotContiguous": 2,
        "BorrowRequiresMps": 1,
    }
    monkeypatch.setattr(sys, "stdin", _Stdin(LOG.encode()))
    code, out, _ = _explain(["-"], capsys, monkeypatch)
    assert code == 0 and out.startswith("4 catalogued errors in 17 line(s):\n")


def test_stdin_single_traceback_renders_the_entry(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One traceback on stdin shows that entry in full."""
    traceback = "\n".join(LOG.splitlines()[3:8]) + "\n"
    monkeypatch.setattr(sys, "stdin", _Stdin(traceback.encode()))
    code, out, _ = _explain(["-"], capsys, monkeypatch)
    assert code == 0
    assert out.startswith("TransportRequiresCudaTensor  ffbed2bb70a79900  ValueError, active, ")
    assert "seen 1 time\n" in out.splitlines()[0] + "\n"


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"", "standard input is empty"),
        (b"\n   \n", "standard input is empty"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00" * 50, "standard input looks binary"),
    ],
)
def test_empty_or_binary_stdin_is_a_clear_message(
    data: bytes,
    said: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Empty or binary input answers in one line and exit 1, never a traceback."""
    monkeypatch.setattr(sys, "stdin", _Stdin(data))
    code, out, err = _explain(["-"], capsys, monkeypatch)
    assert (code, out) == (1, "")
    assert err.startswith(f"errcat explain: {said}")
    assert "Traceback" not in err
