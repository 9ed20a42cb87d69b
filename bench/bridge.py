"""Time the tensor bridge against the cost of copying the same bytes.

Run: `.venv/bin/python bench/bridge.py [--repeat N]`

For float32 tensors of 1, 64 and 256 MiB it measures, in one process:
- the copy floor: `numpy.copyto` of the tensor's bytes into a preallocated array;
- `torch_to_mlx` on a CPU tensor, including `mx.eval` of the result (an MLX-owned copy);
- `mlx_to_torch(device="cpu")` on an evaluated array (a DLPack view, no copy).
Each figure is the median (and minimum) of N runs after one warm-up; ratios are medians over the
copy floor's median. Targets: `torch_to_mlx` within 2x of the floor, `mlx_to_torch` constant.

MLX's CPU allocator takes fresh memory from malloc for every array, so for large tensors
`torch_to_mlx` also pays the page faults of touching new 4 KiB pages, which the preallocated floor
does not. Running with `GLIBC_TUNABLES=glibc.malloc.hugetlb=1` lets malloc ask for transparent huge
pages, and `--mlx-cache-mib 512` raises MLX's buffer cache limit (32 MiB by default on the CPU)
so that a freed buffer is reused by the next conversion instead of being returned to malloc. Both
are process-wide settings for an application to choose, which is why the bridge leaves them alone.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import mlx.core as mx
import numpy as np
import torch

from runtime.tensor_bridge import mlx_to_torch, torch_to_mlx

SIZES_MIB = (1, 64, 256)
"""Tensor sizes, in MiB (2**20 bytes)."""


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
    args = parser.parse_args(argv)
    if args.mlx_cache_mib is not None:
        mx.set_cache_limit(args.mlx_cache_mib * 2**20)

    print(f"torch {torch.__version__}, mlx {vars(mx)['__version__']}, float32, CPU")
    # MLX has no getter for the cache limit: set a placeholder to learn it, then restore it.
    cache_limit = mx.set_cache_limit(0)
    mx.set_cache_limit(cache_limit)
    cache_mib = cache_limit / 2**20
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    print(f"GLIBC_TUNABLES={tunables!r}, MLX cache limit {cache_mib:g} MiB, ms as median/min")
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
        print(
            f"{mib:>4} MiB  {floor_median * 1e3:9.3f}/{min(floor) * 1e3:<9.3f}  "
            f"{fmt(to_mlx_s, floor_median)}  {fmt(to_torch_s, floor_median)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
