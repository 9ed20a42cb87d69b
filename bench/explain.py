"""Benchmark `errcat explain`: one call's wall time on a large catalog, and log scanning.

    .venv/bin/python bench/explain.py calls [--entries N] [--files F] [--warm K] [--seed S]
    .venv/bin/python bench/explain.py log [--lines N] [--error-rate R] [--repeat K] [--seed S]

`calls` (the default) writes a synthetic project with a catalog of N draft entries (default
10,000) spread over F YAML files (default 100), in the format `errcat new` writes, then times
`.venv/bin/errcat explain QUERY` in subprocesses for four queries: an id, a class name, a
concrete message and a traceback line. For each it prints the first call on a cold cache (the
compiled index removed) and the median of K warm calls (default 5), against the 0.3 s target,
beside Python's own start-up (`python -c pass`), the floor no call can go below.

`log` builds a synthetic log of N lines (default 100,000) against this project's catalog:
mostly noise in the shapes real training and serving logs have (timestamps, levels, key=value
pairs, paths, some words the catalog also uses such as `CUDA`, `tensor`, `device`,
`contiguous`), and a fraction R (default 2%) of catalogued errors with concrete values, some as
bare lines, some as traceback lines with their docs note. It times `MessageMatcher.scan_lines`
over the lines (one core, best of K), checks that it found exactly the planted errors, and
prints lines per second against the 200,000 target.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from catalog.authoring.scaffold import Draft, class_name, file_text  # noqa: E402
from catalog.core.ids import new_id  # noqa: E402
from catalog.core.model import Entry  # noqa: E402
from catalog.core.placeholders import parse_placeholders  # noqa: E402
from catalog.core.project import CACHE_FOLDER  # noqa: E402
from catalog.matching.messages import MessageMatcher  # noqa: E402

TARGET = 200_000
"""Lines per second the log-scanning issue asks for, on one core."""
CALL_TARGET = 0.3
"""Seconds one warm `errcat explain QUERY` may take on the 10,000-entry catalog."""

NOISE = [
    "{ts} INFO  scheduler: step={n} loss={f} throughput={n} tok/s device=cuda:{d}",
    "{ts} DEBUG allocator: reserved={f} GiB allocated={f} GiB on cuda:{d}",
    "{ts} INFO  [rank{d}] prefill batch of {n} tokens took {f} ms",
    "{ts} WARN  tensor cache at {n}% capacity; contiguous free block {n} KiB",
    "{ts} INFO  loaded weights from /models/llama-{n}b/shard-{d}.safetensors",
    "{ts} DEBUG the CUDA stream {d} is idle after {f} ms",
    "{ts} INFO  http: GET /v1/completions 200 {f}ms request_id={h}",
    "{ts} INFO  mlx bridge: converted {n} tensors from device mps:{d}",
    '  File "/srv/app/worker.py", line {n}, in run_batch',
    "{ts} ERROR worker {d}: connection reset by peer; retrying in {f} s",
]

VALUES = {
    "device": "cuda:1",
    "devices": "['mps:0', 'cpu']",
    "dtype": "torch.bfloat16",
    "name": "lse",
    "transport_name": "host shared memory",
    "given": "'triton'",
    "capability": "(8, 0)",
    "data_type": "<class 'list'>",
    "path": "/srv/models/shard-3.safetensors",
    "key": "'lm_head.weight'",
    "reason": "connection reset by peer",
}

# The vocabulary of the synthetic catalog: the nouns, verbs and qualifiers real messages of an
# inference runtime use, combined into identifiers so that messages are as distinct as real ones.
NOUNS = [
    "tensor",
    "buffer",
    "shard",
    "lease",
    "worker",
    "pipeline",
    "kernel",
    "stream",
    "allocator",
    "pool",
    "segment",
    "page",
    "block",
    "cache",
    "handle",
    "queue",
    "scheduler",
    "request",
    "batch",
    "sequence",
    "token",
    "prompt",
    "adapter",
    "layer",
    "expert",
    "router",
    "replica",
    "rank",
    "group",
    "barrier",
    "channel",
    "socket",
    "transport",
    "proxy",
    "bridge",
    "device",
    "context",
    "graph",
    "plan",
    "tokenizer",
    "vocabulary",
    "checkpoint",
    "manifest",
    "weight",
    "bias",
    "scale",
    "offset",
    "stride",
    "shape",
    "dtype",
    "index",
    "mask",
    "attention",
    "window",
    "rotary",
    "embedding",
    "sampler",
    "logits",
    "grammar",
    "schema",
    "config",
    "option",
    "backend",
    "profile",
    "trace",
    "snapshot",
    "server",
    "client",
    "session",
    "deadline",
    "budget",
    "quota",
    "limit",
    "heartbeat",
]
VERBS = [
    "allocate",
    "release",
    "borrow",
    "return",
    "map",
    "unmap",
    "pin",
    "unpin",
    "copy",
    "move",
    "cast",
    "reshape",
    "split",
    "merge",
    "load",
    "save",
    "open",
    "close",
    "start",
    "stop",
    "pause",
    "resume",
    "register",
    "unregister",
    "attach",
    "detach",
    "encode",
    "decode",
    "compile",
    "launch",
    "schedule",
    "evict",
    "prefetch",
    "flush",
    "lock",
    "unlock",
    "resolve",
    "validate",
    "reserve",
    "commit",
]
QUALIFIERS = [
    "contiguous",
    "aligned",
    "pinned",
    "shared",
    "sparse",
    "dense",
    "quantized",
    "paged",
    "sharded",
    "frozen",
    "cached",
    "pending",
    "detached",
    "closed",
    "stale",
    "empty",
    "full",
    "negative",
    "finite",
    "sorted",
    "unique",
    "readable",
    "writable",
    "mapped",
]
EXCEPTIONS = ["ValueError"] * 6 + ["RuntimeError"] * 3 + ["TypeError", "KeyError", "TimeoutError"]

FRAMES = [
    "{noun} {field} must be {qual}, got {value}",
    "cannot {verb} {noun} {field} while it is {qual}",
    "{ident} expects a {qual} {noun}, got {value}",
    "{ident}: {noun} {field} is not {qual}",
    "failed to {verb} {noun} {field} on {where}: {value}",
    "{noun} of {ident} has {value} entries; expected at most {field}",
    "{ident} requires {noun} and {noun2} on the same device, got {value} and {where}",
    "{noun} {field} was already {verb}ed by {ident}",
    "timed out after {value} s waiting for {noun} {field} to become {qual}",
    "unknown {noun} {value!r} for {ident}; choose one of {where}",
    "{ident} cannot {verb} a {qual} {noun}",
    "{noun} index {value} is out of range for {ident} of size {field}",
    "{noun2} {field} is {qual} but {ident} needs a {noun} that is not",
    "could not {verb} {noun} for {ident}",
    "{ident} {noun} {field} exceeds the {noun2} limit of {value}",
]
FIELD_NAMES = ["name", "device", "dtype", "shape", "size", "rank", "key", "path", "count", "given"]


def _identifier(rng: random.Random) -> str:
    words = [rng.choice(VERBS), rng.choice(NOUNS)]
    if rng.random() < 0.5:
        words.insert(rng.randrange(3), rng.choice(NOUNS + QUALIFIERS))
    return "_".join(words)


def synthetic_message(rng: random.Random) -> str:
    """A plausible runtime error template with one to three placeholders."""
    frame = rng.choice(FRAMES)
    noun, noun2 = rng.sample(NOUNS, 2)
    fields = rng.sample(FIELD_NAMES, 3)
    return (
        frame.replace("{noun}", noun)
        .replace("{noun2}", noun2)
        .replace("{verb}", rng.choice(VERBS))
        .replace("{qual}", rng.choice(QUALIFIERS))
        .replace("{ident}", f"`{_identifier(rng)}`")
        .replace("{field}", "{" + fields[0] + "}")
        .replace("{value!r}", "{" + fields[1] + "!r}")
        .replace("{value}", "{" + fields[1] + "}")
        .replace("{where}", "{" + fields[2] + "}")
    )


def synthetic_catalog(folder: Path, entries: int, files: int, seed: int) -> list[Draft]:
    """Write `entries` draft entries over `files` YAML files of `folder`; return them."""
    rng = random.Random(seed)
    taken_ids: set[str] = set()
    taken_names: set[str] = set()
    seen: set[tuple[str, str]] = set()
    drafts: list[Draft] = []
    while len(drafts) < entries:
        exception = rng.choice(EXCEPTIONS)
        message = synthetic_message(rng)
        if (exception, message) in seen:
            continue
        seen.add((exception, message))
        module = f"gen.module{len(drafts) % files:03d}"
        entry_id = new_id("gen", exception, message, taken_ids)
        taken_ids.add(entry_id)
        name = class_name(message, taken_names)
        drafts.append(Draft(entry_id, name, exception, message, module))
    folder.mkdir(parents=True, exist_ok=True)
    by_module: dict[str, list[Draft]] = {}
    for draft in drafts:
        by_module.setdefault(draft.module, []).append(draft)
    for module, group in by_module.items():
        (folder / f"{module.removeprefix('gen.')}.yaml").write_text(
            file_text(None, module, group), encoding="utf-8"
        )
    return drafts


def synthetic_project(root: Path, entries: int, files: int, seed: int) -> list[Draft]:
    """A project at `root`: pyproject.toml, mkdocs.yml, a package and the synthetic catalog."""
    (root / "pyproject.toml").write_text(
        '[tool.errcat]\npackage = "gen"\ncatalog = "catalog"\ngenerated = "gen/errors.py"\n',
        encoding="utf-8",
    )
    (root / "mkdocs.yml").write_text(
        "site_name: Generated\nsite_url: https://docs.example.org/gen/\n", encoding="utf-8"
    )
    (root / "gen").mkdir()
    (root / "gen" / "__init__.py").write_text("", encoding="utf-8")
    return synthetic_catalog(root / "catalog", entries, files, seed)


def render_values(message: str, rng: random.Random) -> str:
    """The template with a plausible concrete value for each placeholder."""
    roots: dict[str, object] = {}
    for placeholder in parse_placeholders(message):
        root, _, attribute = placeholder.field.partition(".")
        leaf = attribute or root
        value = VALUES.get(leaf) or (
            f"({rng.randint(1, 64)}, {rng.randint(1, 576)})"
            if leaf.endswith("shape")
            else str(rng.randint(1, 4096))
        )
        if attribute:
            setattr(roots.setdefault(root, SimpleNamespace()), attribute, value)
        else:
            roots[root] = value
    return message.format(**roots)


def _environment(root: Path) -> dict[str, str]:
    # Bytecode is cached (in the temporary folder, so the tree stays untouched) as it is for an
    # installed errcat; without it every call would compile errcat's sources again.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    return env


def _time(command: list[str], root: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=root, env=_environment(root), capture_output=True, text=True, check=False
    )
    return time.perf_counter() - started, done


def _median(command: list[str], root: Path, runs: int) -> float:
    return statistics.median(_time(command, root)[0] for _ in range(runs))


def bench_calls(args: argparse.Namespace) -> int:
    """Time `errcat explain` cold and warm for each kind of query; 0 when all meet the target."""
    errcat = str(ROOT / ".venv" / "bin" / "errcat")
    with tempfile.TemporaryDirectory(prefix="errcat-bench-") as folder:
        root = Path(folder) / "project"
        root.mkdir()
        started = time.perf_counter()
        drafts = synthetic_project(root, args.entries, args.files, args.seed)
        written = time.perf_counter() - started
        size = sum(p.stat().st_size for p in (root / "catalog").iterdir())
        print(
            f"catalog: {len(drafts):,} draft entries in {args.files} files, {size / 1e6:.1f} MB, "
            f"written in {written:.1f} s"
        )
        rng = random.Random(args.seed + 1)
        with_fields = [d for d in drafts if parse_placeholders(d.message)]
        by_id, by_name = rng.sample(drafts, 2)
        by_message = rng.choice(with_fields)
        shown = render_values(by_message.message, rng)
        queries = [
            ("id", by_id.id, by_id.id),
            ("class name", by_name.name, by_name.id),
            ("concrete message", shown, by_message.id),
            ("traceback line", f"{by_message.exception}: {shown}", by_message.id),
        ]
        # One call first, not timed: it writes the bytecode of every module a call may import.
        _time([errcat, "explain", by_id.id], root)
        floor = _median([sys.executable, "-c", "pass"], root, args.warm)
        imports = _median([errcat, "--version"], root, args.warm)
        print(
            f"python -c pass: {floor * 1000:.0f} ms (the floor); errcat --version: "
            f"{imports * 1000:.0f} ms (the command line's imports); medians of {args.warm}"
        )
        met = True
        for label, query, wanted in queries:
            command = [errcat, "explain", query, "--json"]
            shutil.rmtree(root / CACHE_FOLDER, ignore_errors=True)
            cold, done = _time(command, root)
            warm_times = []
            for _ in range(args.warm):
                elapsed, done = _time(command, root)
                warm_times.append(elapsed)
            warm = statistics.median(warm_times)
            found = [m["id"] for m in json.loads(done.stdout or "{}").get("matches", [])]
            right = done.returncode == 0 and wanted in found
            met = met and right and warm <= CALL_TARGET
            verdict = (
                ("found its entry" + (f" among {len(found)} ties" if len(found) > 1 else ""))
                if right
                else f"WRONG: {found} rc={done.returncode}"
            )
            print(
                f"{label:>16}: cold {cold:5.2f} s, warm median {warm * 1000:4.0f} ms of "
                f"{args.warm} (target {CALL_TARGET * 1000:.0f} ms: "
                f"{'met' if warm <= CALL_TARGET else 'MISSED'}); {verdict}"
            )
            if not right:
                print(done.stderr, file=sys.stderr)
    return 0 if met else 1


def concrete(entry: Entry, rng: random.Random) -> str:
    """The entry's message with plausible values."""
    return render_values(entry.message, rng)


def build_log(
    entries: list[Entry], count: int, error_rate: float, rng: random.Random, site_url: str
) -> tuple[list[str], dict[str, int]]:
    """`count` lines and the number of planted occurrences of each entry."""
    lines: list[str] = []
    planted: dict[str, int] = {}
    while len(lines) < count:
        if rng.random() < error_rate:
            entry = rng.choice(entries)
            message = concrete(entry, rng)
            planted[entry.id] = planted.get(entry.id, 0) + 1
            if rng.random() < 0.5:
                lines.append(f"2025-03-02 10:{rng.randint(0, 59):02d}:00 ERROR rank 0: {message}")
            else:
                lines.append(f"runtime.errors.{entry.name}: {message}")
                lines.append(f"For further information visit {site_url}errors/{entry.id}/")
            continue
        template = rng.choice(NOISE)
        lines.append(
            template.format(
                ts=f"2025-03-02 10:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}",
                n=rng.randint(1, 100_000),
                f=f"{rng.random() * 100:.2f}",
                d=rng.randint(0, 7),
                h=f"{rng.getrandbits(64):016x}",
            )
        )
    return lines[:count], planted


def bench_log(args: argparse.Namespace) -> int:
    """Time log scanning over this project's catalog; 0 when correct and fast enough."""
    from catalog.core.config import load_config
    from catalog.entries.validate import load_valid_catalog

    config = load_config(ROOT)
    catalog = load_valid_catalog(config.catalog)
    site_url = "http://127.0.0.1:8000/"
    started = time.perf_counter()
    matcher = MessageMatcher.from_catalog(catalog, site_url)
    built = time.perf_counter() - started
    rng = random.Random(args.seed)
    lines, planted = build_log(list(catalog), args.lines, args.error_rate, rng, site_url)
    times = []
    counts: dict[str, int] = {}
    for _ in range(args.repeat):
        started = time.perf_counter()
        counts = matcher.scan_lines(lines)
        times.append(time.perf_counter() - started)
    best = min(times)
    rate = len(lines) / best
    correct = counts == planted
    print(
        f"{len(lines):,} lines, {sum(planted.values()):,} planted errors of "
        f"{len(planted)} entries; matcher of {len(matcher)} templates built in "
        f"{built * 1000:.1f} ms"
    )
    print(
        f"scan_lines: best {best * 1000:.1f} ms of {args.repeat} -> {rate:,.0f} lines/s "
        f"(target {TARGET:,}: {'met' if rate >= TARGET else 'MISSED'}); "
        f"counts {'match' if correct else 'DIFFER from'} the planted errors"
    )
    if not correct:
        for entry_id in sorted(set(counts) | set(planted)):
            if counts.get(entry_id) != planted.get(entry_id):
                print(
                    f"  {entry_id}: found {counts.get(entry_id, 0)}, planted {planted.get(entry_id, 0)}"
                )
    return 0 if correct and rate >= TARGET else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="mode")
    calls = sub.add_parser("calls", help="wall time of `errcat explain QUERY` (the default)")
    calls.add_argument("--entries", type=int, default=10_000)
    calls.add_argument("--files", type=int, default=100)
    calls.add_argument("--warm", type=int, default=5)
    calls.add_argument("--seed", type=int, default=7)
    log = sub.add_parser("log", help="lines per second of `errcat explain -`'s scanning")
    log.add_argument("--lines", type=int, default=100_000)
    log.add_argument("--error-rate", type=float, default=0.02)
    log.add_argument("--repeat", type=int, default=5)
    log.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv if argv is not None else sys.argv[1:] or ["calls"])
    return bench_log(args) if args.mode == "log" else bench_calls(args)


if __name__ == "__main__":
    raise SystemExit(main())
