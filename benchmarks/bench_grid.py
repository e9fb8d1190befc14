"""The published grid, cell by cell: ours beside the published seconds and the ratio,
and, given two runs (before and after a change), both side by side.

    rlopt reproduce --quick --jobs 2 --out-dir grid      # once in each tree
    python -m benchmarks.bench_grid grid/results.csv
    python -m benchmarks.bench_grid before/results.csv after/results.csv
    python -m benchmarks.bench_grid --before TREE [--after TREE]   # runs the grid in each tree

A cell meets the speed target when it is proven and at least 10 times faster than
published, or takes at most 1 s in all. With ``--before`` the quick grid (36 learned
cells, about 6 minutes on two cores) runs in each tree, ``python -c 'from rlopt.cli import
main; main()' reproduce --quick --jobs 2`` with the tree first on ``PYTHONPATH``. Appends
one row per run (cells proven, seconds summed, cells meeting the target) to
``benchmarks/results/bench_grid.csv``; a run given as a file is labelled by its path and
carries this checkout's commit, a tree's run its tree's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from benchmarks._common import MAIN, add_trees, record, trees

FILES = ["M4-33", "M4-28", "M4-82", "M5-38", "M6-385", "M6-853"]


def _cell(row) -> str:
    bound = row.bound if row.bound == row.bound else row.n_correct
    return f"{row.status} [{row.n_correct}, {int(bound)}]"


def _meets(row, published: float | None) -> bool:
    fast = published is not None and published / row.total_seconds >= 10
    return row.status == "optimal" and (fast or row.total_seconds <= 1)


def _grid(tree: Path, out: Path) -> Path:
    """The quick grid run with ``tree``'s rlopt; its results.csv."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-c", MAIN, "reproduce", "--quick", "--jobs", "2", "--out-dir", str(out)]
    subprocess.run(command, cwd=out.parent, env=env, check=True)
    return out / "results.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", help="one or two results.csv (before, after)")
    add_trees(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        chosen = trees(args)
        paths = [_grid(tree, Path(folder) / label) for label, tree in chosen] or args.runs[:2]
        if not paths:
            parser.error("give one or two results.csv, or --before TREE")
        labels = [label for label, _ in chosen] or [str(path) for path in paths]
        origins: list[Path | None] = [tree for _, tree in chosen] or [None] * len(paths)
        compare([pd.read_csv(path) for path in paths], labels, origins)


def compare(runs: list[pd.DataFrame], labels: list[str], origins: list[Path | None]) -> None:
    from rlopt.experiments.reproduce import PUBLISHED_TABLE2
    from rlopt.families import BASELINES

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
    for name, run, label, tree in zip(names, runs, labels, origins):
        proven = run[run["status"] == "optimal"]
        print(f"{name}: {len(proven)} of {len(run)} proven, {run['total_seconds'].sum():.1f} s summed")
        meeting = sum(
            _meets(run.loc[key], PUBLISHED_TABLE2.get(key[1], [None] * len(FILES))[FILES.index(key[0])])
            for key in run.index
        )
        figures = {
            "cells": len(run),
            "proven": len(proven),
            "seconds_summed": round(float(run["total_seconds"].sum()), 1),
            "target_met": meeting,
        }
        record("bench_grid", figures, tree=tree, label=label)
    print(f"speed target met by {met} of {len(last)} cells")


if __name__ == "__main__":
    main()
