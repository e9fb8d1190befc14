"""Block ceilings on a bundled file: one family learned with and without blocks, the
interval, the time and each block's figures (the target was a ceiling <= 961 at 600 s on
the Census rank swapped with p = 10).

    python -m benchmarks.bench_blocks --seconds 600 --jobs 2 --size 30   # with blocks
    python -m benchmarks.bench_blocks --seconds 600 --jobs 0             # without
    python -m benchmarks.bench_blocks --file census-mdav3 --jobs 2 --dask  # a local Dask cluster

Files (:mod:`benchmarks._files`): ``census-rs10`` (the default), ``census-mdav3``,
``census-mdav8`` (MDAV k = 3, 8 on all 13 attributes) and ``eia-mdav3`` (EIA 4092 x 10,
MDAV k = 3), or any other name :mod:`benchmarks._files` builds. ``--dask`` runs the blocks
on a local Dask cluster of ``--jobs`` worker processes (``--scheduler`` of the CLI)
instead of the runner's pool; ``--before TREE`` runs the whole benchmark in each tree.

Appends one row to ``benchmarks/results/bench_blocks.csv``; ``--json FILE`` also writes
the result's JSON (its certificate included), as the runs kept in
``experiments/results/bench_blocks_*.json`` were.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

from benchmarks import _files
from benchmarks._common import add_trees, over_trees, record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", default="wm")
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--jobs", type=int, default=2, help="block workers (0: no blocks)")
    parser.add_argument("--size", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0, help="the partition's seed")
    parser.add_argument("--file", default="census-rs10", help="a name of benchmarks._files")
    parser.add_argument("--dask", action="store_true", help="a local Dask cluster of --jobs processes")
    parser.add_argument("--json", type=Path, default=None, help="also write the result's JSON here")
    add_trees(parser)
    args = parser.parse_args()
    if over_trees("bench_blocks", args):
        return
    from rlopt import DataWarning, LearnedDistanceLinkage

    original, masked = _files.pair(args.file)
    blocks = None if args.jobs == 0 else {"size": args.size, "jobs": args.jobs, "seed": args.seed}
    cluster = None
    if args.dask and blocks is not None:
        from distributed import LocalCluster

        cluster = LocalCluster(
            n_workers=args.jobs, threads_per_worker=1, processes=True, dashboard_address=None
        )
        blocks = {**blocks, "jobs": 1, "scheduler": cluster.scheduler_address}
    started = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataWarning)
            learner = LearnedDistanceLinkage(args.family, time_limit=args.seconds, blocks=blocks)
            result = learner.fit(original, masked).result_
    finally:
        if cluster is not None:
            cluster.close()
    wall = time.perf_counter() - started
    print(
        f"{args.file} {args.family}: {result.status} [{result.n_correct_verified}, {result.bound}] in {wall:.1f} s"
    )
    row = {
        "file": args.file,
        "family": args.family,
        "seconds": args.seconds,
        "jobs": args.jobs,
        "size": args.size,
        "seed": args.seed,
        "dask": cluster is not None,
        "status": result.status,
        "lower": result.n_correct_verified,
        "upper": result.bound,
        "wall_s": round(wall, 1),
    }
    if result.blocks is not None:
        figures = result.blocks["blocks"]
        seconds = sorted(block["seconds"] for block in figures)
        proven = sum(block["status"] == "optimal" for block in figures)
        print(
            f"block ceiling {result.blocks['ceiling']}: {len(figures)} blocks, {proven} proven optimal, "
            f"{sum(seconds):.0f} s summed, median {seconds[len(seconds) // 2]:.1f} s, "
            f"longest {seconds[-1]:.1f} s"
        )
        row.update(
            block_ceiling=result.blocks["ceiling"],
            blocks=len(figures),
            blocks_proven=proven,
            block_seconds_summed=round(sum(seconds), 1),
        )
    record("bench_blocks", row)
    if args.json is not None:
        args.json.write_text(json.dumps({**result.to_dict(), "wall_seconds": wall}, default=str))


if __name__ == "__main__":
    main()
