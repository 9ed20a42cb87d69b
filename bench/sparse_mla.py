"""Benchmark: the sparse MLA reference kernel against dense masked attention, on the CPU.

Both compute the same outputs (out, max_logits, lse) for the same FP8 inputs. The dense
version scores every query against all `s_kv` KV rows and masks out the unselected ones, so its
cost and memory grow with `s_q * h_q * s_kv`; the reference gathers only the `topk` selected rows
per query and works through query rows in fixed-size chunks.

Both write into output buffers allocated beforehand, so that the figures below are the cost of
the attention itself: the outputs are the same for both and grow with s_q by necessity.

Time: median wall-clock time of several calls in this process, after one warm-up call, with
`--threads` torch threads (default 1: on a machine whose few cores are shared, a second thread
often waits for a core and makes small element-wise ops ten times slower, which would measure
the neighbours rather than the kernels; both kernels always run with the same thread count).

Memory ("peak extra"): how far the process's resident set rises above where it stood just
before the call, measured in a fresh subprocess per figure so that no earlier measurement's
allocations, caches or freed-but-kept heap pages can hide or inflate it. The subprocess builds
the inputs and outputs, makes one small warm-up call (s_q=8) so that one-time costs (library
initialisation, thread pools) are not counted as per-call memory, returns freed heap pages to
the OS (`malloc_trim`), resets the kernel's peak-RSS counter (writing 5 to
`/proc/self/clear_refs`, Linux), notes VmRSS, runs the kernel once and reads VmHWM. VmHWM - VmRSS
is then every byte the call touched at its peak, whether torch's allocator, oneDNN scratch space
or glibc handed it out; torch's own CPU allocator statistics would not all see that (and this
torch build exposes none). Freed heap pages are mostly kept by the allocator, and how many
depends on fragmentation, so one figure varies by several MiB from run to run; each figure is
therefore the median of `--memory-runs` fresh subprocesses. Where the counter cannot be reset
the figure is reported as unavailable.

Run: `.venv/bin/python bench/sparse_mla.py` (defaults: s_q=256, h_q=64, d_qk=576, topk=256,
s_kv=8192; the reference's memory is also measured at s_q=2048).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runtime.kernels.sparse_mla import sparse_mla_q8kv8_prefill_fwd  # noqa: E402

Inputs = dict[str, torch.Tensor | float]
Outputs = tuple[torch.Tensor, torch.Tensor, torch.Tensor]
Kernel = Callable[[Inputs, Outputs], None]
MIB = 1 << 20


def make_inputs(s_q: int, h_q: int, d_qk: int, topk: int, s_kv: int, seed: int = 0) -> Inputs:
    """FP8 inputs like a real prefill step: distinct indices per row, the last 10% padded -1."""
    gen = torch.Generator().manual_seed(seed)
    q = (0.4 * torch.randn(s_q, h_q, d_qk, generator=gen)).to(torch.float8_e4m3fn)
    kv = (0.4 * torch.randn(s_kv, 1, d_qk, generator=gen)).to(torch.float8_e4m3fn)
    indices = torch.empty(s_q, 1, topk, dtype=torch.int32)
    for s in range(s_q):
        indices[s, 0] = torch.randperm(s_kv, generator=gen)[:topk].to(torch.int32)
    indices[:, :, topk - topk // 10 :] = -1
    return {
        "q": q,
        "kv": kv,
        "indices": indices,
        "sm_scale": 1 / math.sqrt(d_qk),
        "q_scale": torch.tensor([1.0]),
        "kv_scale": torch.tensor([1.0]),
    }


def make_outputs(inputs: Inputs) -> Outputs:
    """Zeroed out [s_q, h_q, 512] bf16, max_logits and lse [s_q, h_q] fp32 for `inputs`."""
    q = inputs["q"]
    assert isinstance(q, torch.Tensor)
    s_q, h_q, _ = q.shape
    # Written now, so their pages are resident before a measurement and not counted in it.
    return (
        torch.empty(s_q, h_q, 512, dtype=torch.bfloat16).fill_(0),
        torch.empty(s_q, h_q).fill_(0),
        torch.empty(s_q, h_q).fill_(0),
    )


def run_reference(inputs: Inputs, outputs: Outputs) -> None:
    """The sparse reference kernel through the public entry point."""
    out, max_logits, lse = outputs
    sparse_mla_q8kv8_prefill_fwd(
        **inputs,  # type: ignore[arg-type]
        out=out,
        max_logits=max_logits,
        lse=lse,
        backend="reference",
    )


def run_dense(inputs: Inputs, outputs: Outputs) -> None:
    """Dense attention over every KV row with a mask of the selected ones (fp32, same maths)."""
    q, kv, indices = inputs["q"], inputs["kv"], inputs["indices"]
    assert isinstance(q, torch.Tensor) and isinstance(kv, torch.Tensor)
    assert isinstance(indices, torch.Tensor)
    s_q, h_q, d_qk = q.shape
    s_kv = kv.shape[0]
    scale = float(inputs["sm_scale"]) * float(inputs["q_scale"]) * float(inputs["kv_scale"])
    idx = indices[:, 0, :].long()
    valid = (idx >= 0) & (idx < s_kv)
    # Invalid slots scatter into a spare last column, so they cannot clear a selected row 0.
    mask = torch.zeros(s_q, s_kv + 1, dtype=torch.bool)
    mask.scatter_(1, torch.where(valid, idx, s_kv), True)
    mask = mask[:, :s_kv]
    keys = kv[:, 0, :].float()
    logits = (q.float().reshape(s_q * h_q, d_qk) @ keys.T).mul_(scale).view(s_q, h_q, s_kv)
    logits.masked_fill_(~mask[:, None, :], -math.inf)
    row_max = logits.amax(dim=-1)
    probs = logits.sub_(row_max[..., None]).exp_()
    total = probs.sum(dim=-1)
    values = (probs.view(s_q * h_q, s_kv) @ keys[:, :512]).view(s_q, h_q, 512)
    out, max_logits, lse = outputs
    out.copy_(values.mul_((float(inputs["kv_scale"]) / total)[..., None]))
    max_logits.copy_(row_max)
    lse.copy_(torch.log(total) + row_max)


KERNELS: dict[str, Kernel] = {"reference": run_reference, "dense": run_dense}


def time_call(fn: Kernel, inputs: Inputs, repeats: int) -> float:
    """Median seconds per call after one warm-up call."""
    outputs = make_outputs(inputs)
    fn(inputs, outputs)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(inputs, outputs)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


def measure_peak_extra(kernel: str, shape: dict[str, int]) -> int | None:
    """In this (fresh) process: bytes the resident set rises during one call, or None."""
    warm = make_inputs(**(shape | {"s_q": 8}))
    KERNELS[kernel](warm, make_outputs(warm))
    del warm
    inputs = make_inputs(**shape)
    outputs = make_outputs(inputs)
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return None
    baseline = _status_kib("VmRSS")
    KERNELS[kernel](inputs, outputs)
    return (_status_kib("VmHWM") - baseline) * 1024


def peak_extra_in_subprocess(kernel: str, shape: dict[str, int], runs: int) -> int | None:
    """Median of `measure_peak_extra` over `runs` fresh interpreters, so nothing earlier skews it."""
    cmd = [sys.executable, __file__, "--child", kernel, "--shape", json.dumps(shape)]
    cmd += ["--threads", str(torch.get_num_threads())]
    values: list[int] = []
    for _ in range(runs):
        result = subprocess.run(cmd, capture_output=True, text=True, check=True)
        value: int | None = json.loads(result.stdout)
        if value is None:
            return None
        values.append(value)
    return int(statistics.median(values))


def _mib(n: int | None) -> str:
    return "n/a" if n is None else f"{n / MIB:8.1f} MiB"


def main(argv: list[str] | None = None) -> int:
    """Print times, peak extra memory and their ratios; exit 1 if a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--s-q", type=int, default=256)
    parser.add_argument("--s-q-long", type=int, default=2048)
    parser.add_argument("--h-q", type=int, default=64)
    parser.add_argument("--d-qk", type=int, default=576)
    parser.add_argument("--topk", type=int, default=256)
    parser.add_argument("--s-kv", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--memory-runs", type=int, default=3, help="subprocesses per figure")
    parser.add_argument("--child", choices=sorted(KERNELS), help=argparse.SUPPRESS)
    parser.add_argument("--shape", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    if args.child:
        print(json.dumps(measure_peak_extra(args.child, json.loads(args.shape))))
        return 0

    shape = {"s_q": args.s_q, "h_q": args.h_q, "d_qk": args.d_qk, "topk": args.topk}
    shape["s_kv"] = args.s_kv
    long_shape = shape | {"s_q": args.s_q_long}
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; shape {shape}")

    inputs = make_inputs(**shape)
    ref_out, dense_out = make_outputs(inputs), make_outputs(inputs)
    run_reference(inputs, ref_out)
    run_dense(inputs, dense_out)
    pairs = zip(ref_out, dense_out, strict=True)
    diffs = [(a.float() - b.float()).abs().max().item() for a, b in pairs]
    print(
        f"max |reference - dense|: out {diffs[0]:.2e}, max_logits {diffs[1]:.2e}, lse {diffs[2]:.2e}"
    )

    t_ref = time_call(run_reference, inputs, args.repeats)
    t_dense = time_call(run_dense, inputs, max(1, args.repeats - 1))
    del inputs, ref_out, dense_out
    m_ref = peak_extra_in_subprocess("reference", shape, args.memory_runs)
    m_ref_long = peak_extra_in_subprocess("reference", long_shape, args.memory_runs)
    m_dense = peak_extra_in_subprocess("dense", shape, args.memory_runs)

    print(
        f"time       reference {t_ref * 1e3:9.1f} ms   dense {t_dense * 1e3:9.1f} ms   "
        f"dense/reference {t_dense / t_ref:6.1f}x"
    )
    print(f"peak extra reference {_mib(m_ref)}   dense {_mib(m_dense)}", end="")
    if m_ref and m_dense:
        print(f"   dense/reference {m_dense / m_ref:6.1f}x")
    else:
        print()
    print(f"peak extra reference at s_q={args.s_q_long}: {_mib(m_ref_long)}", end="")
    if m_ref and m_ref_long:
        print(f"   (s_q={args.s_q_long}) / (s_q={args.s_q}) = {m_ref_long / m_ref:.2f}")
    else:
        print()

    ok = t_dense / t_ref >= 5
    if m_ref and m_ref_long:
        # "The same" up to allocator noise; growing with s_q would show as about 8x here.
        ok = ok and m_ref_long <= 1.5 * m_ref
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
