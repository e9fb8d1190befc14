"""Block ceilings on a bundled file: one family learned with and without blocks, the
interval, the time and each block's figures (issue 32: a ceiling <= 961 at 600 s on the
Census rank swapped with p = 10).

    python experiments/bench_blocks.py --seconds 600 --jobs 2 --size 30   # with blocks
    python experiments/bench_blocks.py --seconds 600 --jobs 0             # without
    python experiments/bench_blocks.py --file census-mdav3 --jobs 2 --dask  # a local Dask cluster

Files: ``census-rs10`` (Census 1080 x 13, rank swapping p = 10, seed 0; the default),
``census-mdav3``, ``census-mdav8`` (MDAV k = 3, 8 on all 13 attributes) and ``eia-mdav3``
(EIA 4092 x 10, MDAV k = 3). ``--dask`` runs the blocks on a local Dask cluster of
``--jobs`` worker processes (``--scheduler`` of the CLI) instead of the runner's pool.

Writes ``experiments/results/bench_blocks_<file>_<family>_<seconds>s_<jobs>j[_dask].json``
(the result's JSON, its certificate included).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

from rlopt import LearnedDistanceLinkage
from rlopt.data import CENSUS_ATTRIBUTES, EIA_ATTRIBUTES, load_census, load_eia
from rlopt.exceptions import DataWarning
from rlopt.masking import microaggregate, rank_swap

RESULTS = Path(__file__).parent / "results"


def pair(name: str):
    """The original and masked file called ``name``."""
    if name.startswith("census"):
        census = load_census()[list(CENSUS_ATTRIBUTES)]
        if name == "census-rs10":
            return census, rank_swap(census, p=10, seed=0)
        return census, microaggregate(census, k=int(name.removeprefix("census-mdav")))
    eia = load_eia()[list(EIA_ATTRIBUTES)]
    return eia, microaggregate(eia, k=int(name.removeprefix("eia-mdav")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", default="wm")
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--jobs", type=int, default=2, help="block workers (0: no blocks)")
    parser.add_argument("--size", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0, help="the partition's seed")
    parser.add_argument(
        "--file", default="census-rs10", choices=["census-rs10", "census-mdav3", "census-mdav8", "eia-mdav3"]
    )
    parser.add_argument("--dask", action="store_true", help="a local Dask cluster of --jobs processes")
    args = parser.parse_args()
    original, masked = pair(args.file)
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
    if result.blocks is not None:
        figures = result.blocks["blocks"]
        seconds = sorted(block["seconds"] for block in figures)
        proven = sum(block["status"] == "optimal" for block in figures)
        print(
            f"block ceiling {result.blocks['ceiling']}: {len(figures)} blocks, {proven} proven optimal, "
            f"{sum(seconds):.0f} s summed, median {seconds[len(seconds) // 2]:.1f} s, "
            f"longest {seconds[-1]:.1f} s"
        )
    RESULTS.mkdir(exist_ok=True)
    tail = "_dask" if cluster is not None else ""
    out = RESULTS / f"bench_blocks_{args.file}_{args.family}_{args.seconds:g}s_{args.jobs}j{tail}.json"
    out.write_text(json.dumps({**result.to_dict(), "wall_seconds": wall}, default=str))


if __name__ == "__main__":
    main()
