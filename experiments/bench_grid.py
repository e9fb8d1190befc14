"""The published grid, cell by cell: ours beside the published seconds and the ratio,
and, given two runs (before and after a change), both side by side.

    rlopt reproduce --quick --jobs 2 --out-dir grid      # once in each tree
    python experiments/bench_grid.py grid/results.csv
    python experiments/bench_grid.py before/results.csv after/results.csv

A cell meets the speed target when it is proven and at least 10 times faster than
published, or takes at most 1 s in all.
"""

from __future__ import annotations

import argparse

import pandas as pd

from rlopt.experiments.reproduce import PUBLISHED_TABLE2
from rlopt.families import BASELINES
from rlopt.status import Status

FILES = ["M4-33", "M4-28", "M4-82", "M5-38", "M6-385", "M6-853"]


def _cell(row) -> str:
    bound = row.bound if row.bound == row.bound else row.n_correct
    return f"{row.status} [{row.n_correct}, {int(bound)}]"


def _meets(row, published: float | None) -> bool:
    fast = published is not None and published / row.total_seconds >= 10
    return row.status == Status.OPTIMAL and (fast or row.total_seconds <= 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="one or two results.csv (before, after)")
    args = parser.parse_args()
    runs = [pd.read_csv(path) for path in args.runs[:2]]
    runs = [r[~r["family"].isin(BASELINES)].set_index(["dataset", "family"]) for r in runs]
    names = ["before", "after"] if len(runs) == 2 else ["ours"]
    head = [f"{n} | {n} s" for n in names]
    print(f"| file | family | {' | '.join(head)} | published s | ratio | met |")
    print("|---|---|" + "---|---|" * len(runs) + "---|---|---|")
    last = runs[-1]
    met = 0
    for dataset, family in last.index:
        published = PUBLISHED_TABLE2.get(family, [None] * len(FILES))[FILES.index(dataset)]
        cells = []
        for run in runs:
            row = run.loc[(dataset, family)]
            cells.append(f"{_cell(row)} | {row.total_seconds:.1f}")
        row = last.loc[(dataset, family)]
        ratio = "" if published is None else f"{published / row.total_seconds:.1f}x"
        met += _meets(row, published)
        print(
            f"| {dataset} | {family} | {' | '.join(cells)} | {published} | {ratio} | {'yes' if _meets(row, published) else ''} |"
        )
    for name, run in zip(names, runs):
        proven = run[run["status"] == Status.OPTIMAL]
        print(f"{name}: {len(proven)} of {len(run)} proven, {run['total_seconds'].sum():.1f} s summed")
    print(f"speed target met by {met} of {len(last)} cells")


if __name__ == "__main__":
    main()
