"""The steps before the solve on large files, and the time limit kept: two source trees
side by side, in one run.

    python -m benchmarks.bench_reduce --before TREE [--after TREE] [--cells CELLS]
    python -m benchmarks.bench_reduce --cells eia-wm-5          # this checkout alone

Each cell is one ``LearnedDistanceLinkage(family, time_limit=..., threads=1)`` fit in a
fresh process with the tree first on ``PYTHONPATH``, the trees alternating cell by cell
so that the machine's load falls on both alike, on the same records (the files are built
once, by :mod:`benchmarks._files`, and handed to both). Prints per cell the result's own
seconds (``seconds``: the full pass's reductions, the searches, the solve; the quick
pass's whole time, 0 when there was none), the fit's wall clock against its limit and the
interval reached, and appends each to ``benchmarks/results/bench_reduce.csv``. Cells:
Census rank-swapped p = 10 and EIA under MDAV k = 3 at 60 s, and EIA at 5 s and 10 s;
``--before`` is a worktree of the commit to compare with (``git worktree add /tmp/base
COMMIT``).

Until 32eb51a this benchmark patched the pipeline's private reduce step to time both
passes' reductions together; its "reduce" column then is not this one's.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import warnings
from pathlib import Path

from benchmarks import _files
from benchmarks._common import ROOT, add_trees, in_tree, record, trees

CELLS = {
    "census-wm-60": ("census-rs10", "wm", 60),
    "census-sb-60": ("census-rs10", "sb", 60),
    "eia-wm-60": ("eia-mdav3", "wm", 60),
    "eia-wm-5": ("eia-mdav3", "wm", 5),
    "eia-wm-10": ("eia-mdav3", "wm", 10),
    "eia-sb-10": ("eia-mdav3", "sb", 10),
}


def one_cell(name: str, pickled: Path) -> dict:
    """One fit of cell ``name`` on the pair in ``pickled``, with this process's rlopt."""
    from rlopt import LearnedDistanceLinkage

    _, family, limit = CELLS[name]
    original, masked = _files.load(pickled)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = LearnedDistanceLinkage(family, time_limit=limit, threads=1).fit(original, masked).result_
    wall = time.perf_counter() - started
    seconds = result.seconds
    figures = {
        "cell": name,
        "limit_s": limit,
        "reduce_s": round(seconds.get("reduce", 0.0), 2),
        "quick_s": round(seconds.get("quick", 0.0), 2),
        "search_s": round(seconds.get("search", 0.0), 2),
        "solve_s": round(seconds.get("solve", 0.0), 2),
        "wall_s": round(wall, 2),
        "status": str(result.status),
        "lower": result.n_correct_verified,
        "upper": result.bound,
    }
    record("bench_reduce", figures)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_trees(parser)
    parser.add_argument("--cells", default=",".join(CELLS), help=f"some of {','.join(CELLS)}")
    parser.add_argument("--cell", nargs=2, metavar=("NAME", "PICKLE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cell:  # the child: one cell, its figures as the last line
        print(json.dumps(one_cell(args.cell[0], Path(args.cell[1]))))
        return
    chosen = trees(args) or [("", ROOT)]
    print("| cell | tree | reduce s | quick s | search s | solve s | wall s (limit) | interval |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name in args.cells.split(","):
            pickled = _files.save(CELLS[name][0], Path(folder))
            for label, tree in chosen:
                out = in_tree("bench_reduce", tree, ["--cell", name, str(pickled)], label, capture=True)
                cell = json.loads(out.strip().splitlines()[-1])
                print(
                    f"| {name} | {label or tree} | {cell['reduce_s']:.1f} | {cell['quick_s']:.1f} "
                    f"| {cell['search_s']:.1f} | {cell['solve_s']:.1f} | {cell['wall_s']:.2f} ({cell['limit_s']:g}) "
                    f"| [{cell['lower']}, {cell['upper']}] |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
