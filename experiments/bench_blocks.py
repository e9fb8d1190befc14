"""Block ceilings on the bundled Census (1080 records x 13 attributes, rank swapping
p = 10, seed 0): one family learned with and without blocks, the interval, the time and
each block's figures (issue 32's first target: a ceiling <= 961 at 600 s).

    python experiments/bench_blocks.py --seconds 600 --jobs 2 --size 30   # with blocks
    python experiments/bench_blocks.py --seconds 600 --jobs 0             # without

Writes ``experiments/results/bench_blocks_<family>_<seconds>s_<jobs>j.json`` (the
result's JSON, its certificate included).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

from rlopt import LearnedDistanceLinkage
from rlopt.data import CENSUS_ATTRIBUTES, load_census
from rlopt.exceptions import DataWarning
from rlopt.masking import rank_swap

RESULTS = Path(__file__).parent / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", default="wm")
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--jobs", type=int, default=2, help="block workers (0: no blocks)")
    parser.add_argument("--size", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0, help="the partition's seed")
    args = parser.parse_args()
    census = load_census()[list(CENSUS_ATTRIBUTES)]
    masked = rank_swap(census, p=10, seed=0)
    blocks = None if args.jobs == 0 else {"size": args.size, "jobs": args.jobs, "seed": args.seed}
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        learner = LearnedDistanceLinkage(args.family, time_limit=args.seconds, blocks=blocks)
        result = learner.fit(census, masked).result_
    wall = time.perf_counter() - started
    print(f"{args.family}: {result.status} [{result.n_correct_verified}, {result.bound}] in {wall:.1f} s")
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
    out = RESULTS / f"bench_blocks_{args.family}_{args.seconds:g}s_{args.jobs}j.json"
    out.write_text(json.dumps({**result.to_dict(), "wall_seconds": wall}, default=str))


if __name__ == "__main__":
    main()
