"""Time the tensor bridge against the cost of copying the same bytes.

Run: `.venv/bin/python bench/bridge.py [--repeat N]`

For float32 tensors of 1, 64 and 256 MiB it measures, in one process:
- the copy floor: `numpy.copyto` of the tensor's bytes into a preallocated array;
- `torch_to_mlx` on a CPU tensor, including `mx.eval` of the result (an MLX-owned copy);
- `mlx_to_torch(device="cpu")` on an evaluated array (a DLPack view, no copy).
Each figure is the median (and minimum) of N runs after one warm-up; ratios are medians over the
copy floor's median. Targets: `torch_to_mlx` within 2x of the floor at 64 and 256 MiB (the goal
is 1.2x), `mlx_to_torch` constant; the last lines give the verdicts.

Nothing is tuned for the benchmark: MLX's buffer cache limit is whatever the bridge itself
leaves in place (see `runtime.tensor_bridge`: it raises the limit to twice the largest copy, at
most 1 GiB, so that the buffer of a freed copy serves the next one instead of fresh pages whose
faults cost several times the copy). The header shows the limit before the first conversion,
the footer the one the bridge left. `--mlx-cache-mib N` sets a limit first, as an application
may (the bridge only ever raises it); `--no-bridge-cache` keeps the bridge from touching the
limit at all, which shows what the fresh pages cost.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import mlx.core as mx
import numpy as np
import torch

# The sample package is this repository's, importable from the checkout (the wheel leaves it out).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runtime import tensor_bridge
from runtime.tensor_bridge import mlx_to_torch, torch_to_mlx

SIZES_MIB = (1, 64, 256)
"""Tensor sizes, in MiB (2**20 bytes)."""
TARGET_SIZES_MIB = (64, 256)
"""Sizes the targets are stated for."""
TARGET_RATIO = 2.0
"""Most `torch_to_mlx` may take, as a multiple of the copy floor."""
GOAL_RATIO = 1.2
"""What `torch_to_mlx` should take, as a multiple of the copy floor."""


def cache_limit_mib() -> float:
    """MLX's current buffer cache limit in MiB; MLX has no getter, so it is set and restored
    (to a huge value first, so the cache is never lowered even for an instant)."""
    limit = mx.set_cache_limit(1 << 62)
    mx.set_cache_limit(limit)
    return float(limit) / 2**20


def timings(run: Callable[[], object], repeat: int) -> list[float]:
    """Seconds taken by each of `repeat` calls of `run`, after one untimed warm-up."""
    run()
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - start)
    return seconds


def fmt(seconds: list[float], floor: float) -> str:
    """`median/min` in milliseconds and the median's ratio to the floor."""
    median = statistics.median(seconds)
    return f"{median * 1e3:9.3f}/{min(seconds) * 1e3:<9.3f} {median / floor:7.2f}x"


def main(argv: list[str] | None = None) -> int:
    """Print the timing table; returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9, help="timed runs per figure (default 9)")
    parser.add_argument(
        "--mlx-cache-mib",
        type=int,
        default=None,
        help="set MLX's buffer cache limit to this many MiB before timing (default: MLX's own)",
    )
    parser.add_argument(
        "--no-bridge-cache",
        action="store_true",
        help="keep the bridge from raising MLX's cache limit (shows the cost of fresh pages)",
    )
    args = parser.parse_args(argv)
    if args.mlx_cache_mib is not None:
        mx.set_cache_limit(args.mlx_cache_mib * 2**20)
    if args.no_bridge_cache:
        tensor_bridge._CachePolicy.released = True  # what the bridge does once overruled

    print(f"torch {torch.__version__}, mlx {vars(mx)['__version__']}, float32, CPU")
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    print(
        f"GLIBC_TUNABLES={tunables!r}, MLX cache limit {cache_limit_mib():g} MiB before the "
        "first conversion, ms as median/min"
    )
    ratios: dict[int, float] = {}
    header = f"{'size':>8}  {'copy floor':>19}  {'torch_to_mlx':>28}  {'mlx_to_torch':>28}"
    print(header)
    print("-" * len(header))
    for mib in SIZES_MIB:
        tensor = torch.rand(mib * 2**20 // 4, dtype=torch.float32)
        source = tensor.numpy()
        target = np.empty_like(source)
        array = mx.array(source)
        mx.eval(array)

        def to_mlx(tensor: torch.Tensor = tensor) -> object:
            copy = torch_to_mlx(tensor)
            mx.eval(copy)
            return copy

        def copy_floor(source: np.ndarray = source, target: np.ndarray = target) -> None:
            np.copyto(target, source)

        def to_torch(array: mx.array = array) -> object:
            return mlx_to_torch(array, device="cpu")

        floor = timings(copy_floor, args.repeat)
        floor_median = statistics.median(floor)
        to_mlx_s = timings(to_mlx, args.repeat)
        to_torch_s = timings(to_torch, args.repeat)
        ratios[mib] = statistics.median(to_mlx_s) / floor_median
        print(
            f"{mib:>4} MiB  {floor_median * 1e3:9.3f}/{min(floor) * 1e3:<9.3f}  "
            f"{fmt(to_mlx_s, floor_median)}  {fmt(to_torch_s, floor_median)}"
        )
    print(f"MLX cache limit left by the bridge: {cache_limit_mib():g} MiB")
    for mib in TARGET_SIZES_MIB:
        ratio = ratios[mib]
        verdict = (
            "meets the 1.2x goal"
            if ratio <= GOAL_RATIO
            else "meets the 2x target"
            if ratio <= TARGET_RATIO
            else "MISSES the 2x target"
        )
        print(f"torch_to_mlx at {mib} MiB: {ratio:.2f}x the copy floor, {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
