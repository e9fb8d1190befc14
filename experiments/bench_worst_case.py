"""Issue 15's table: the interval a time-limited run reaches on real files, with the
incumbent portfolio (NCA and MD starts, surrogate ascent, line search, greedy add)
and without it, side by side in one run.

    python experiments/bench_worst_case.py --seconds 60
    python experiments/bench_worst_case.py --seconds 60 --portfolio off   # before

Files: Census 1080x13 rank-swapped with p = 10 (seed 0); M5-38 (the published
recipe, 400x5); scikit-learn's diabetes file (442x10, shipped with scikit-learn,
not with rlopt) with additive noise k = 0.5 (seed 0), a file from outside the
bundled data. Every lower end is a recount by the family's reference evaluator
at margin 1e-5; the upper end is the proven bound. Writes
``experiments/results/bench_worst_case_<seconds>s_<portfolio>.{csv,md}``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd
from sklearn.datasets import load_diabetes

from rlopt import LearnedDistanceLinkage, build, published_recipe
from rlopt.data import CENSUS_ATTRIBUTES, load_census
from rlopt.masking import additive_noise, rank_swap

OFF = {"nca_start": False, "surrogate": False, "line_search": False, "greedy_add": False}
CELLS = [
    ("census rank swap p=10", "wm"),
    ("census rank swap p=10", "sb"),
    ("diabetes noise k=0.5", "wm"),
    ("diabetes noise k=0.5", "sb"),
    ("M5-38", "sb"),
    ("M5-38", "sb_nc"),
]


def files() -> dict:
    census = load_census()[list(CENSUS_ATTRIBUTES)]
    diabetes = load_diabetes(scaled=False, as_frame=True).frame.drop(columns=["target"])
    return {
        "census rank swap p=10": (census, rank_swap(census, p=10, seed=0)),
        "diabetes noise k=0.5": (diabetes, additive_noise(diabetes, 0.5, seed=0)),
        "M5-38": build(published_recipe("M5-38")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--portfolio", choices=["on", "off"], default="on")
    parser.add_argument("--cells", default="all", help="comma-separated indices into the cell list")
    args = parser.parse_args()
    pairs = files()
    chosen = CELLS if args.cells == "all" else [CELLS[int(i)] for i in args.cells.split(",")]
    rows = []
    for file, family in chosen:
        original, masked = pairs[file]
        t0 = time.perf_counter()
        reductions = "all" if args.portfolio == "on" else OFF
        result = (
            LearnedDistanceLinkage(family, time_limit=args.seconds, reductions=reductions)
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
    table = pd.DataFrame(rows)
    out = Path(__file__).parent / "results" / f"bench_worst_case_{args.seconds:g}s_{args.portfolio}"
    table.to_csv(out.with_suffix(".csv"), index=False)
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in table.itertuples(index=False)]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
