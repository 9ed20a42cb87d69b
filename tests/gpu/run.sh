#!/usr/bin/env bash
# Run every @pytest.mark.gpu test on a lent GPU machine and leave the results in $OUT.
#
# That machine is bare: this repository copy, no .venv, no network. Its own python3 holds torch
# (with CUDA), pytest and pytest-timeout, so the tests run against those, with the repository
# root on PYTHONPATH instead of an editable install. Only test modules that contain GPU tests
# are collected: the others import tool dependencies (libcst, mkdocs, ...) that the machine
# need not have, and their collection errors would hide the GPU results.
#
# Usage (repository root or anywhere): OUT=/some/dir tests/gpu/run.sh
# Writes: env.txt (versions, nvidia-smi), pytest.log, junit.xml, summary.txt.
# Exit status: 0 when every selected GPU test passed; otherwise pytest's status, 2 for a
# missing prerequisite, 3 for a skipped GPU test, 124/137 when the time limit hit.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
LIMIT_S="${GPU_TEST_LIMIT_S:-270}"  # keeps the whole script under five minutes
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

finish() {
    echo "exit $1: $2" | tee "$OUT/summary.txt"
    exit "$1"
}

{
    echo "== date: $(date -u +%FT%TZ)  host: $(uname -srm)"
    echo "== python: $(command -v "$PY") $("$PY" --version 2>&1)"
    echo "== nvidia-smi"
    nvidia-smi || echo "nvidia-smi failed (status $?)"
    echo "== packages"
    "$PY" - <<'PYEOF'
import importlib

for name in ("torch", "pytest", "pytest_timeout", "hypothesis", "numpy"):
    try:
        module = importlib.import_module(name)
        print(f"{name} {getattr(module, '__version__', '?')}")
    except ImportError as exc:
        print(f"{name} MISSING ({exc})")
try:
    import torch

    print(f"torch.version.cuda {torch.version.cuda}, cuda available {torch.cuda.is_available()}")
    for i in range(torch.cuda.device_count()):
        print(f"cuda:{i} {torch.cuda.get_device_name(i)} cc {torch.cuda.get_device_capability(i)}")
except Exception as exc:  # report, the checks below decide
    print(f"torch probe failed: {exc!r}")
PYEOF
} 2>&1 | tee "$OUT/env.txt"

"$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" \
    || finish 2 "torch cannot see a CUDA GPU with $PY"
"$PY" -c "import pytest, pytest_timeout" \
    || finish 2 "pytest and pytest-timeout are needed (pyproject sets timeout with --strict-config)"

mapfile -t files < <(grep -rlE --include='test_*.py' 'mark\.gpu' tests | sort)
[ "${#files[@]}" -gt 0 ] || finish 2 "no test module under tests/ uses pytest.mark.gpu"
echo "== GPU test modules: ${files[*]}" | tee -a "$OUT/env.txt"

timeout -k 10 "$LIMIT_S" "$PY" -m pytest -m gpu -p no:cacheprovider -v -rs \
    --junitxml="$OUT/junit.xml" "${files[@]}" 2>&1 | tee "$OUT/pytest.log"
rc=${PIPESTATUS[0]}

case "$rc" in
    0) ;;
    5) finish 5 "no GPU test was collected" ;;
    124 | 137) finish "$rc" "pytest ran past ${LIMIT_S}s" ;;
    *) finish "$rc" "GPU tests failed (see pytest.log)" ;;
esac
# A skip here means a GPU test did not run although a GPU is present: a failure, unless
# GPU_ALLOW_SKIPS=1 (e.g. for tests that need more GPUs than the machine has).
if [ "${GPU_ALLOW_SKIPS:-0}" != 1 ] && grep -qE '^SKIPPED' "$OUT/pytest.log"; then
    finish 3 "some GPU tests were skipped on a GPU machine (see pytest.log)"
fi
finish 0 "all GPU tests passed"
