#!/usr/bin/env bash
# Every GPU check of the project in one run on a lent CUDA machine, in under five minutes:
#   1. the GPU-only tests (every test marked `gpu`),
#   2. the CUDA examples of the catalog (entries whose example `requires` cuda or sm90, run
#      and judged as `errcat check --examples` does, recorded into a copy of verified.json),
#   3. the GPU benchmark (`bench/pool.py --cuda`: the CUDA IPC pool against plain copies).
# It ends with a summary meant to be pasted into a note, and exits non-zero on any failure.
#
# That machine is bare: this repository copy, no .venv, no network, no git metadata. Its own
# python3 holds torch (a CUDA build), pytest, pytest-timeout, hypothesis, numpy and PyYAML,
# which is all these checks import: the repository root goes on PYTHONPATH instead of an
# editable install, and only test modules that contain GPU tests are collected (the others
# import tool dependencies such as libcst that the machine need not have). A package it lacks
# can travel as wheels in .whl/ (see README, "Runtime"); they are installed into /tmp/site first.
# Only the CUDA examples run here: the others need MLX and the pinned Torch 2.13, which this
# machine does not have, and they are checked on every CPU run of `errcat check --examples`.
#
# Usage (from anywhere): OUT=/some/dir [ERRCAT_COMMIT=<commit>] tests/gpu/run.sh
# Writes into $OUT: env.txt, pytest.log, junit.xml, examples.log, verified.json, bench.log and
# summary.txt. ERRCAT_COMMIT names the commit the examples are recorded at (default: git's
# short HEAD where git metadata exists, else "unknown").
# GPU_ALLOW_SKIPS=1 accepts skipped GPU tests and examples; GPU_ALLOW_NO_GPU=1 runs the steps
# without a GPU (to try this script itself; it still exits 2).
# Exit status: 0 when every step passed; 2 for a missing prerequisite; otherwise the status
# of the first failing step: pytest's (1, or 5 when nothing was collected), 3 for a GPU test
# skipped on a GPU machine, 4 for a failed example, 6 for a failed benchmark, 124/137 when a
# step ran past its time limit (GPU_TEST_LIMIT_S, GPU_EXAMPLES_LIMIT_S, GPU_BENCH_LIMIT_S).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
# The three limits add up to 270 s, which keeps the whole script under five minutes.
TEST_LIMIT_S="${GPU_TEST_LIMIT_S:-150}"
EXAMPLES_LIMIT_S="${GPU_EXAMPLES_LIMIT_S:-90}"
BENCH_LIMIT_S="${GPU_BENCH_LIMIT_S:-30}"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
STARTED=$SECONDS
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
status=0
note() { echo "$*" >>"$SUMMARY"; }
fail() {  # remember the first failing step's status
    [ "$status" -ne 0 ] || status=$1
}
finish() {
    note "result: $([ "$status" -eq 0 ] && echo PASS || echo "FAIL (exit $status)") in $((SECONDS - STARTED)) s"
    echo
    echo "==================== summary (also in $SUMMARY) ===================="
    cat "$SUMMARY"
    exit "$status"
}

if compgen -G ".whl/*.whl" >/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || { note "setup: installing .whl/ failed"; fail 2; finish; }
    export PYTHONPATH="/tmp/site:$PYTHONPATH"
fi

{
    echo "== date: $(date -u +%FT%TZ)  host: $(uname -srm)"
    echo "== python: $(command -v "$PY") $("$PY" --version 2>&1)"
    echo "== nvidia-smi"
    nvidia-smi || echo "nvidia-smi failed (status $?)"
    echo "== packages"
    "$PY" - <<'PYEOF'
import importlib

for name in ("torch", "pytest", "pytest_timeout", "hypothesis", "numpy", "yaml"):
    try:
        module = importlib.import_module(name)
        print(f"{name} {getattr(module, '__version__', '?')}")
    except ImportError as exc:
        print(f"{name} MISSING ({exc})")
PYEOF
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

machine=$("$PY" - <<'PYEOF' 2>&1
import platform

import torch

if not torch.cuda.is_available():
    raise SystemExit("torch cannot see a CUDA GPU")
name = torch.cuda.get_device_name(0)
capability = ".".join(map(str, torch.cuda.get_device_capability(0)))
print(
    f"{name} (cc {capability}, {torch.cuda.device_count()} GPU), torch {torch.__version__} "
    f"(CUDA {torch.version.cuda}), Python {platform.python_version()}"
)
PYEOF
)
machine_rc=$?
note "GPU checks of errcat at ${ERRCAT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}, $(date -u +%F)"
note "machine: $machine"
if [ "$machine_rc" -ne 0 ]; then
    # GPU_ALLOW_NO_GPU=1 runs every step anyway, to try the script itself on a CPU machine
    # (GPU tests and CUDA examples then skip, the benchmark fails); it still exits 2.
    fail 2
    [ "${GPU_ALLOW_NO_GPU:-0}" = 1 ] || finish
fi
"$PY" -c "import pytest, pytest_timeout, yaml" 2>/dev/null || {
    note "setup: pytest, pytest-timeout and PyYAML are needed (pyproject sets timeout with --strict-config)"
    fail 2
    finish
}

# 1. GPU-only tests --------------------------------------------------------------------------
mapfile -t files < <(grep -rlE --include='test_*.py' 'mark\.gpu' tests | sort)
if [ "${#files[@]}" -eq 0 ]; then
    note "tests: no test module under tests/ uses pytest.mark.gpu"
    fail 5
else
    step=$SECONDS
    timeout -k 10 "$TEST_LIMIT_S" "$PY" -m pytest -m gpu -p no:cacheprovider -v -rs \
        --junitxml="$OUT/junit.xml" "${files[@]}" >"$OUT/pytest.log" 2>&1
    rc=$?
    tail -n 40 "$OUT/pytest.log"
    counts=$(grep -E '^=+ .*(passed|failed|error|skipped|deselected).* in [0-9.]+s' "$OUT/pytest.log" \
        | tail -n 1 | sed -E 's/^=+ //; s/ =+$//')
    note "tests: ${counts:-no pytest summary} (pytest -m gpu over ${files[*]}; $((SECONDS - step)) s)"
    case "$rc" in
        0)
            # A skip here means a GPU test did not run although a GPU is present: a failure,
            # unless GPU_ALLOW_SKIPS=1 (e.g. for tests that need more GPUs than there are).
            if [ "${GPU_ALLOW_SKIPS:-0}" != 1 ] && grep -qE '^SKIPPED' "$OUT/pytest.log"; then
                note "tests: some GPU tests were skipped on a GPU machine (see pytest.log)"
                fail 3
            fi
            ;;
        124 | 137) note "tests: pytest ran past ${TEST_LIMIT_S} s"; fail "$rc" ;;
        *)
            grep -E '^(FAILED|ERROR) ' "$OUT/pytest.log" | head -n 20 | sed 's/^/  /' >>"$SUMMARY"
            fail "$rc"
            ;;
    esac
fi

# 2. CUDA examples of the catalog ------------------------------------------------------------
step=$SECONDS
cp catalog/errors/verified.json "$OUT/verified.json" 2>/dev/null || true
timeout -k 10 "$EXAMPLES_LIMIT_S" "$PY" - "$OUT/verified.json" >"$OUT/examples.log" 2>&1 <<'PYEOF'
"""Run the examples that need CUDA, as `errcat check --examples` does for all, and judge them."""

import os
import sys
from pathlib import Path

from catalog.gate.examples import current_commit, record_results, run_examples
from catalog.entries.loader import load_catalog

root = Path.cwd()
catalog, findings = load_catalog(root / "catalog" / "errors")
errors = [finding for finding in findings if finding.severity == "error"]
for finding in errors:
    print(f"catalog: {finding.path}:{finding.line}: {finding.message}")
if errors:
    raise SystemExit(4)
wanted = [
    entry.id
    for entry in catalog
    if entry.example is not None and {"cuda", "sm90"} & set(entry.example.requires)
]
run = run_examples(catalog, root, only=wanted)
for result in run.results:
    line = f"{result.outcome:8} {result.entry_id} {result.name}"
    print(line if not result.reason else f"{line}: {result.reason}")
counts = run.counts()
print(f"platform {run.platform}: " + ", ".join(f"{n} {outcome}" for outcome, n in counts.items()))
commit = os.environ.get("ERRCAT_COMMIT") or current_commit(root)
record_results(Path(sys.argv[1]), run, commit, catalog)
# On the GPU machine a skipped CUDA example did not run although it should have.
allow_skips = os.environ.get("GPU_ALLOW_SKIPS") == "1"
raise SystemExit(4 if run.failed or (counts["skipped"] and not allow_skips) else 0)
PYEOF
rc=$?
cat "$OUT/examples.log"
counts=$(grep -E '^platform ' "$OUT/examples.log" | tail -n 1)
note "examples: ${counts:-no result} (the catalog's CUDA examples; $((SECONDS - step)) s)"
case "$rc" in
    0) ;;
    124 | 137) note "examples: ran past ${EXAMPLES_LIMIT_S} s"; fail "$rc" ;;
    *)
        grep -E '^(failed|skipped) |^catalog: |Error' "$OUT/examples.log" | head -n 12 \
            | sed 's/^/  /' >>"$SUMMARY"
        fail 4
        ;;
esac

# 3. GPU benchmark ---------------------------------------------------------------------------
step=$SECONDS
timeout -k 10 "$BENCH_LIMIT_S" "$PY" bench/pool.py --cuda >"$OUT/bench.log" 2>&1
rc=$?
cat "$OUT/bench.log"
if [ "$rc" -eq 0 ]; then
    note "bench: bench/pool.py --cuda ($((SECONDS - step)) s), medians in ms:"
    grep -E '^ +size|MiB ' "$OUT/bench.log" | sed 's/^/  /' >>"$SUMMARY"
else
    note "bench: bench/pool.py --cuda failed with status $rc (see bench.log)"
    tail -n 5 "$OUT/bench.log" | sed 's/^/  /' >>"$SUMMARY"
    case "$rc" in 124 | 137) fail "$rc" ;; *) fail 6 ;; esac
fi

finish
