"""Masking at scale: exact MDAV beside partitioned MDAV, and rank swapping's Python walk
beside its compiled walk, side by side in one run on normal records with 4 attributes.

    python -m benchmarks.bench_masking_scale [--largest 1000000] [--python-walk-up-to 100000]
    python -m benchmarks.bench_masking_scale --largest 20000 --before TREE   # two trees

For MDAV it prints seconds, the group sizes and the information loss SSE/SST (on the
z-scores) of each path, and the ratio of partitioned to exact SSE/SST where exact MDAV
still runs (up to 20,000 records); for rank swapping (p = 5, plain) the seconds of each
walk and whether the two files are equal (they must be: the same draws). The walk is
chosen through the documented switch ``rlopt.masking.swapping.COMPILED_SWAP_RECORDS``.
Appends one row per size and method to ``benchmarks/results/bench_masking_scale.csv``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from benchmarks._common import add_trees, over_trees, record
from benchmarks._files import normal_records


def _sse_sst(values: np.ndarray, labels: np.ndarray) -> float:
    """The within-group sum of squares over the total, on the z-scores."""
    from rlopt.masking.mdav import group_means

    z = (values - values.mean(axis=0)) / values.std(axis=0)
    return float(((z - group_means(z, labels)[labels]) ** 2).sum() / ((z - z.mean(axis=0)) ** 2).sum())


def _timed(function, *args, **kwargs):
    started = time.perf_counter()
    out = function(*args, **kwargs)
    return out, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--largest", type=int, default=1_000_000)
    parser.add_argument("--exact-up-to", type=int, default=20_000)
    parser.add_argument("--python-walk-up-to", type=int, default=100_000)
    parser.add_argument("--k", type=int, default=3)
    add_trees(parser)
    args = parser.parse_args()
    if over_trees("bench_masking_scale", args):
        return
    from rlopt.masking import swapping
    from rlopt.masking.mdav import mdav_partition

    sizes = [n for n in (5_000, 10_000, 20_000, 100_000, 1_000_000) if n <= args.largest]
    print(f"MDAV, k = {args.k}, 4 normal attributes")
    print("| records | exact s | exact SSE/SST | partitioned s | partitioned SSE/SST | loss ratio | groups |")
    print("|---|---|---|---|---|---|---|")
    for n in sizes:
        values = normal_records(n).to_numpy()
        fast, fast_s = _timed(mdav_partition, values, args.k, method="partitioned")
        sizes_fast = np.bincount(fast)
        fast_loss = _sse_sst(values, fast)
        row = {"method": f"mdav k={args.k}", "records": n, "partitioned_s": round(fast_s, 3)}
        row["partitioned_sse_sst"] = round(fast_loss, 6)
        if n <= args.exact_up_to:
            exact, exact_s = _timed(mdav_partition, values, args.k, method="exact")
            exact_loss = _sse_sst(values, exact)
            cells = f"{exact_s:.2f} | {exact_loss:.5f} | {fast_s:.2f} | {fast_loss:.5f} | {fast_loss / exact_loss:.3f}"
            row.update(exact_s=round(exact_s, 3), exact_sse_sst=round(exact_loss, 6))
        else:
            cells = f"- | - | {fast_s:.2f} | {fast_loss:.5f} | -"
        record("bench_masking_scale", row)
        print(f"| {n} | {cells} | {sizes_fast.min()}..{sizes_fast.max()} |", flush=True)
    print("\nrank swapping, p = 5, plain, 4 attributes (seconds for the 4 columns)")
    print("| records | Python walk s | compiled walk s | ratio | same file |")
    print("|---|---|---|---|---|")
    for n in sizes:
        frame = normal_records(n)

        def swap(compiled: bool, frame=frame) -> pd.DataFrame:
            # the walk is chosen by the number of records: moved below / above this file's
            swapping.COMPILED_SWAP_RECORDS = 0 if compiled else len(frame) + 1
            return swapping.rank_swap(frame, 5, seed=0)

        swap(True, frame.iloc[:100])  # compile (or load numba's cache) first
        fast, fast_s = _timed(swap, True)
        row = {"method": "rank swap p=5", "records": n, "compiled_s": round(fast_s, 3)}
        if n <= args.python_walk_up_to:
            slow, slow_s = _timed(swap, False)
            same = slow.equals(fast)
            print(f"| {n} | {slow_s:.2f} | {fast_s:.3f} | {slow_s / fast_s:.0f}x | {same} |", flush=True)
            row.update(python_walk_s=round(slow_s, 3), same_file=same)
        else:
            print(f"| {n} | - | {fast_s:.3f} | - | - |", flush=True)
        record("bench_masking_scale", row)


if __name__ == "__main__":
    main()
