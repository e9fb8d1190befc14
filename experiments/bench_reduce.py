"""The steps before the solve on large files, and the time limit kept: two source trees
side by side, in one run.

    python experiments/bench_reduce.py --before TREE [--after TREE] [--cells CELLS]

Each cell is one ``LearnedDistanceLinkage(family, time_limit=...)`` fit in a fresh
process with the tree first on ``PYTHONPATH``, the trees alternating cell by cell so
that the machine's load falls on both alike. Prints per cell the reduce phases' seconds
(the screening and conflict LPs of the quick and the full pass together), the searches',
the solve's, the fit's wall clock against its limit, and the interval reached. Cells:
Census 1080x13 rank-swapped p = 10 (seed 0) and EIA 4092x10 under MDAV k = 3 at 60 s, and
EIA at 5 s and 10 s; ``--before`` is a worktree of the commit to compare with (``git
worktree add /tmp/base 3680daa``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CELLS = {
    "census-wm-60": ("census", "wm", 60),
    "census-sb-60": ("census", "sb", 60),
    "eia-wm-60": ("eia", "wm", 60),
    "eia-wm-5": ("eia", "wm", 5),
    "eia-wm-10": ("eia", "wm", 10),
    "eia-sb-10": ("eia", "sb", 10),
}

ONE_CELL = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
import rlopt.milp.steps as steps
from rlopt import LearnedDistanceLinkage
from rlopt.data import CENSUS_ATTRIBUTES, EIA_ATTRIBUTES, load_census, load_eia
from rlopt.masking import microaggregate, rank_swap

data, family, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
if data == "census":
    original = load_census()[list(CENSUS_ATTRIBUTES)]
    masked = rank_swap(original, p=10, seed=0)
else:
    original = load_eia()[list(EIA_ATTRIBUTES)]
    masked = microaggregate(original, k=3)
reduce_seconds = []
real_reduce = steps.reduce

def timed_reduce(*args, **kwargs):
    started = time.perf_counter()
    try:
        return real_reduce(*args, **kwargs)
    finally:
        reduce_seconds.append(time.perf_counter() - started)

steps.reduce = timed_reduce
started = time.perf_counter()
result = LearnedDistanceLinkage(family, time_limit=limit, threads=1).fit(original, masked).result_
wall = time.perf_counter() - started
print(json.dumps({"reduce": sum(reduce_seconds), "search": result.seconds["search"],
    "solve": result.seconds["solve"], "wall": wall, "lower": result.n_correct_verified,
    "upper": result.bound}))
"""


def _cell(tree: Path, data: str, family: str, limit: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    run = subprocess.run(
        [sys.executable, "-c", ONE_CELL, data, family, str(limit)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(run.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--cells", default=",".join(CELLS), help=f"some of {','.join(CELLS)}")
    args = parser.parse_args()
    print("| cell | tree | reduce s | search s | solve s | wall s (limit) | interval |")
    print("|---|---|---|---|---|---|---|")
    for name in args.cells.split(","):
        data, family, limit = CELLS[name]
        for label, tree in (("before", args.before), ("after", args.after)):
            cell = _cell(tree, data, family, limit)
            print(
                f"| {name} | {label} | {cell['reduce']:.1f} | {cell['search']:.1f} | {cell['solve']:.1f} "
                f"| {cell['wall']:.2f} ({limit:g}) | [{cell['lower']}, {cell['upper']}] |",
                flush=True,
            )


if __name__ == "__main__":
    main()
