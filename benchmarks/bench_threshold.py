"""Why sb stays undecided at a threshold on the protected tier: the two measurements behind
``benchmarks/README.md`` ("The protected tier and the threshold").

    python -m benchmarks.bench_threshold --file swap40 --target 40 --seconds 60
    python -m benchmarks.bench_threshold --file swap40 --blocks 10,25 --block-seconds 20,40 --count 3

- ``--target T``: sb's MILP (exported by ``rlopt learn --export``, its lazy rows left out,
  so a relaxation) solved by HiGHS for ``--seconds`` on one thread with the objective
  cutoff ``objective_bound = n - T + 0.5`` ("some parameter re-identifies at least T?")
  and without it: status, dual bound (the ceiling is ``n`` less it) and nodes, side by side.
- ``--blocks``: the hitting-set search (:mod:`rlopt.milp.hitting`) on the first ``--count``
  random blocks of each size (seed 0), ``--block-seconds`` each: each block's
  ``[verified count, ceiling]``. A partition's ceiling is at least the sum of its blocks'
  optima, so a block's verified count times the blocks bounds what any partition can prove.

The files are the protected tier of :mod:`benchmarks.bench_user_files` (``--file``).
Appends one row per measurement to ``benchmarks/results/bench_threshold.csv``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._common import MAIN, record
from benchmarks.bench_user_files import make


def cutoff(original: Path, masked: Path, target: int, seconds: float, folder: Path) -> list[dict]:
    """sb's exported MILP with and without the cutoff at ``target`` records."""
    import highspy

    model = folder / "sb.mps"
    subprocess.run(
        [sys.executable, "-c", MAIN, "learn", str(original), str(masked), "--family", "sb",
         "--time-limit", "5", "--export", str(model)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    n = sum(1 for _ in original.open()) - 1
    rows = []
    for bound in (n - target + 0.5, None):
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.readModel(str(model))
        h.setOptionValue("objective_bound", highspy.kHighsInf if bound is None else bound)
        h.setOptionValue("time_limit", seconds)
        h.setOptionValue("threads", 1)
        h.setOptionValue("mip_abs_gap", 0.99)
        t0 = time.perf_counter()
        h.run()
        info = h.getInfo()
        rows.append({
            "measure": "cutoff", "target": target, "cutoff": bound, "seconds": seconds,
            "status": h.modelStatusToString(h.getModelStatus()),
            "ceiling": n - int(np.ceil(info.mip_dual_bound - 1e-6)) if np.isfinite(info.mip_dual_bound) else None,
            "nodes": info.mip_node_count, "wall_s": round(time.perf_counter() - t0, 1),
        })  # fmt: skip
    return rows


def blocks(original: Path, masked: Path, sizes: list[int], seconds: list[float], count: int) -> list[dict]:
    """Each size's first ``count`` blocks: the hitting-set search's interval."""
    from rlopt.data import load_table, validate_pair
    from rlopt.families import get_learned_family
    from rlopt.milp.hitting import hitting_set_ceiling

    data = validate_pair(load_table(original), load_table(masked))
    za, zb, sb = data.encoded.za, data.encoded.zb, get_learned_family("sb")
    rows = []
    for size, limit in zip(sizes, seconds):
        parts = np.array_split(np.random.default_rng(0).permutation(za.shape[0]), za.shape[0] // size)
        for k, part in enumerate(parts[:count]):
            t0 = time.perf_counter()
            ceiling, _, info = hitting_set_ceiling(
                za, zb, sb, margin=1e-5, deadline=time.perf_counter() + limit, records=part
            )
            rows.append({
                "measure": "block", "block_size": len(part), "block": k, "seconds": limit,
                "verified": info.history[-1][1], "ceiling": ceiling, "stopped": info.stopped,
                "sets": len(info.sets), "smallest_set": min((len(c) for c in info.sets), default=None),
                "blocks_in_file": len(parts), "wall_s": round(time.perf_counter() - t0, 1),
            })  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default="swap40")
    parser.add_argument("--target", type=int, default=None, help="records: the cutoff's threshold")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--blocks", default=None, help="comma-separated block sizes")
    parser.add_argument("--block-seconds", default="20", help="comma-separated, one per size")
    parser.add_argument("--count", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        original, masked = make(args.file, folder)
        rows = [] if args.target is None else cutoff(original, masked, args.target, args.seconds, folder)
        if args.blocks:
            sizes = [int(s) for s in args.blocks.split(",")]
            limits = [float(s) for s in args.block_seconds.split(",")]
            rows += blocks(
                original, masked, sizes, limits * len(sizes) if len(limits) == 1 else limits, args.count
            )
    for row in rows:
        print(row, flush=True)
        record("bench_threshold", {"file": args.file, **row})


if __name__ == "__main__":
    main()
