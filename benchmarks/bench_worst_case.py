"""The interval a time-limited run reaches on real files, with the incumbent portfolio
(NCA and MD starts, surrogate ascent, line search, greedy add) and without it.

    python -m benchmarks.bench_worst_case --seconds 60
    python -m benchmarks.bench_worst_case --seconds 60 --portfolio off
    python -m benchmarks.bench_worst_case --seconds 60 --before TREE       # two trees

Files (:mod:`benchmarks._files`): census-rs10 (Census 1080x13 rank-swapped with p = 10,
seed 0); M5-38 (the published recipe, 400x5); diabetes-noise0.5 (scikit-learn's diabetes
file, 442x10, shipped with scikit-learn, not with rlopt, with additive noise k = 0.5,
seed 0: a file from outside the bundled data). Every lower end is a recount by the
family's reference evaluator at margin 1e-5; the upper end is the proven bound. Prints
the table and appends one row per cell to ``benchmarks/results/bench_worst_case.csv``.
``--portfolio off`` passes the four searches' switches off through ``searches=``.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from benchmarks import _files
from benchmarks._common import add_trees, over_trees, record

OFF = {"nca_start": False, "surrogate": False, "line_search": False, "greedy_add": False}
CELLS = [
    ("census-rs10", "wm"),
    ("census-rs10", "sb"),
    ("diabetes-noise0.5", "wm"),
    ("diabetes-noise0.5", "sb"),
    ("M5-38", "sb"),
    ("M5-38", "sb_nc"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--portfolio", choices=["on", "off"], default="on")
    parser.add_argument("--cells", default="all", help="comma-separated indices into the cell list")
    add_trees(parser)
    args = parser.parse_args()
    if over_trees("bench_worst_case", args):
        return
    from rlopt import LearnedDistanceLinkage

    chosen = CELLS if args.cells == "all" else [CELLS[int(i)] for i in args.cells.split(",")]
    rows = []
    for file, family in chosen:
        original, masked = _files.pair(file)
        t0 = time.perf_counter()
        searches = "all" if args.portfolio == "on" else OFF
        result = (
            LearnedDistanceLinkage(family, time_limit=args.seconds, searches=searches)
            .fit(original, masked)
            .result_
        )
        first = next((e for e in result.history if e["lower"] == result.n_correct_verified), None)
        rows.append(
            {
                "file": file,
                "family": family,
                "seconds": args.seconds,
                "portfolio": args.portfolio,
                "lower": result.n_correct_verified,
                "upper": result.bound,
                "status": result.status,
                "lower_source": result.lower_source,
                "lower_reached_at_s": None if first is None else first["seconds"],
                "wall_s": round(time.perf_counter() - t0, 1),
            }
        )
        print(rows[-1], flush=True)
        record("bench_worst_case", rows[-1])
    table = pd.DataFrame(rows)
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in table.itertuples(index=False)]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
