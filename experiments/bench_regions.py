"""The parameter-space branch and bound (rlopt/milp/regions.py) against the MILP, and
its speed-up with 2 worker processes over 1, side by side in one run.

    python experiments/bench_regions.py --seconds 60

Files: the first 400 records and first 4, 5 and 6 attributes of Census rank-swapped
with p = 10 (seed 0, swapped on all 13 attributes), and M5-38 (the published recipe,
400x5). For each file and family: the search alone with 1 worker and with 2 (seconds
to the proof, or the interval at the deadline; the speed-up is the ratio of the times
to the proof, or where neither proves, the ratio of regions searched in the same time),
and ``rlopt learn`` with the search
switched off (the MILP after the incumbent portfolio) at the same limit. Every count
of the search is recounted with the family's reference evaluator at margin 1e-5.
Writes ``experiments/results/bench_regions_<seconds>s.{csv,md}``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from rlopt import LearnedDistanceLinkage, build, published_recipe
from rlopt.data import CENSUS_ATTRIBUTES, load_census, standardise
from rlopt.families import get_family
from rlopt.linkage.distance_based import recount
from rlopt.masking import rank_swap
from rlopt.milp.margins import PairMargins
from rlopt.milp.regions import branch_and_bound

MARGIN = 1e-5
CELLS = [
    ("census 400 x 4", "wm"),
    ("census 400 x 5", "wm"),
    ("census 400 x 6", "wm"),
    ("census 400 x 6", "owa"),
    ("M5-38", "wm"),
    ("M5-38", "owa"),
]


def files() -> dict:
    census = load_census()[list(CENSUS_ATTRIBUTES)]
    swapped = rank_swap(census, p=10, seed=0)
    pairs = {f"census 400 x {n}": (census.iloc[:400, :n], swapped.iloc[:400, :n]) for n in (4, 5, 6)}
    pairs["M5-38"] = build(published_recipe("M5-38"))
    return pairs


def search(original, masked, family, seconds: float, workers: int) -> dict:
    za, zb = standardise(masked.to_numpy(float)), standardise(original.to_numpy(float))
    t0 = time.perf_counter()
    margins = PairMargins.build(za, zb, family)
    result = branch_and_bound(
        margins,
        family.simplex_vertices(za.shape[1]),
        margin=MARGIN,
        tol=1e-8,
        deadline=t0 + seconds,
        workers=workers,
    )
    seconds_used = time.perf_counter() - t0
    _, correct = recount(
        za, zb, family.distance(result.theta, tuple(original.columns)), margin=MARGIN, tol=1e-8
    )
    assert int(correct.sum()) >= result.lower, "the recount must confirm the search's count"
    return {
        "lower": int(correct.sum()),
        "upper": result.upper,
        "proven": result.proven,
        "seconds": round(seconds_used, 2),
        "regions": result.regions,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--cells", default="all", help="comma-separated indices into the cell list")
    args = parser.parse_args()
    pairs = files()
    chosen = CELLS if args.cells == "all" else [CELLS[int(i)] for i in args.cells.split(",")]
    rows = []
    for file, name in chosen:
        original, masked = pairs[file]
        family = get_family(name)
        one = search(original, masked, family, args.seconds, 1)
        two = search(original, masked, family, args.seconds, 2)
        t0 = time.perf_counter()
        milp = (
            LearnedDistanceLinkage(
                name, margin=MARGIN, time_limit=args.seconds, reductions={"parameter_bb": False}
            )
            .fit(original, masked)
            .result_
        )
        milp_seconds = time.perf_counter() - t0

        def interval(r):
            return str(r["lower"]) if r["proven"] else f"[{r['lower']}, {r['upper']}]"

        rows.append(
            {
                "file": file,
                "family": name,
                "limit_s": args.seconds,
                "search, 1 worker": interval(one),
                "s (1)": one["seconds"],
                "regions (1)": one["regions"],
                "search, 2 workers": interval(two),
                "s (2)": two["seconds"],
                "regions (2)": two["regions"],
                # proven by both: the ratio of their times; else the ratio of regions searched
                "speed-up": (
                    round(one["seconds"] / two["seconds"], 2) if one["proven"] and two["proven"] else None
                ),
                "regions ratio": round(two["regions"] / max(one["regions"], 1), 2),
                "MILP (search off)": (
                    str(milp.n_correct_verified)
                    if milp.status == "optimal"
                    else f"[{milp.n_correct_verified}, {milp.bound}]"
                ),
                "s (MILP)": round(milp_seconds, 2),
            }
        )
        print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    out = Path(__file__).parent / "results" / f"bench_regions_{args.seconds:g}s"
    table.to_csv(out.with_suffix(".csv"), index=False)
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += [
        "| " + " | ".join("" if pd.isna(v) else str(v) for v in row) + " |"
        for row in table.itertuples(index=False)
    ]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
