"""The default ``rlopt risk`` on files shaped like those users bring, at several ``--jobs``.

    python -m benchmarks.bench_user_files                       # every file, --jobs 1 and 2
    python -m benchmarks.bench_user_files --files readme,wine --jobs 1,2,16
    python -m benchmarks.bench_user_files --seconds 60 --before TREE   # two source trees

Each run is the command a user types, in a fresh process: ``rlopt risk ORIGINAL MASKED
--folds 0 --jobs N --json F`` (its defaults: wm, owa, ci, sb at 60 s each, or
``--seconds``). Prints, per file and N, each family's interval, the headline's interval
and gap (points of the records) and the wall time, and appends one row per run to
``benchmarks/results/bench_user_files.csv``.

Files (``--files``, comma-separated names):

- ``readme``: README's own example, made by README's commands (Census 400 x 4, rank
  swap p = 10, seed 1);
- ``wine``: scikit-learn's wine data, first 150 records and 5 attributes, additive noise
  of 0.3 sd (variance ratio 0.09, seed 0);
- ``eia300``: EIA's first 300 records on 4 attributes, MDAV k = 3 (a business file);
- ``diabetes``: scikit-learn's diabetes data (442 x 10), additive noise k = 0.5 (seed 0);
- ``census1080``: Census 1080 x 13, rank swap p = 10 (seed 0);
- ``census20k``: the Census file resampled to 20,000 records on 3 attributes
  (:func:`benchmarks._files.resampled_census`), MDAV k = 5.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from benchmarks import _files
from benchmarks._common import MAIN, add_trees, over_trees, record

README_COLUMNS = "AFNLWGT,AGI,EMCONTRB,FEDTAX"
NAMES = ("readme", "wine", "eia300", "diabetes", "census1080", "census20k")


def _rlopt(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", MAIN, *args], cwd=cwd, capture_output=True, text=True)


def make(name: str, folder: Path) -> tuple[Path, Path]:
    """Write file ``name``'s pair into ``folder``; the two paths."""
    original, masked = folder / f"{name}-original.csv", folder / f"{name}-masked.csv"
    if name == "readme":  # README's commands, as a user runs them
        _rlopt(
            "data",
            "census",
            "--columns",
            README_COLUMNS,
            "--records",
            "400",
            "--out",
            str(original),
            cwd=folder,
        )
        _rlopt(
            "mask",
            str(original),
            "--method",
            "rank_swap",
            "--p",
            "10",
            "--seed",
            "1",
            "--out",
            str(masked),
            cwd=folder,
        )
        return original, masked
    a, b = _built(name)
    a.to_csv(original, index=False)
    b.to_csv(masked, index=False)
    return original, masked


def _built(name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    from rlopt.data import EIA_ATTRIBUTES, load_eia
    from rlopt.masking import additive_noise, microaggregate

    if name == "wine":
        from sklearn.datasets import load_wine

        frame = load_wine(as_frame=True).frame.iloc[:150, :5]
        return frame, additive_noise(frame, 0.09, seed=0)
    if name == "eia300":
        frame = load_eia()[list(EIA_ATTRIBUTES)[:4]].iloc[:300]
        return frame, microaggregate(frame, 3)
    if name == "diabetes":
        return _files.pair("diabetes-noise0.5")
    if name == "census1080":
        return _files.pair("census-rs10")
    if name == "census20k":
        original, _ = _files.resampled_census(20_000, 3)
        return original, microaggregate(original, 5)
    raise SystemExit(f"unknown file {name!r}; expected one of {', '.join(NAMES)}")


def run(name: str, original: Path, masked: Path, jobs: int, seconds: float, folder: Path) -> dict:
    """``rlopt risk`` on the pair at ``jobs`` workers: the row of the table."""
    out = folder / f"{name}-jobs{jobs}.json"
    t0 = time.perf_counter()
    done = _rlopt(
        "risk", str(original), str(masked), "--folds", "0", "--jobs", str(jobs),
        "--time-limit", f"{seconds:g}", "--json", str(out), "--quiet", cwd=folder,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    if done.returncode not in (0, 1):
        return {
            "file": name,
            "jobs": jobs,
            "error": done.stderr.strip().splitlines()[-1:],
            "wall_s": round(wall, 1),
        }
    figures = json.loads(out.read_text())
    head, n = figures["headline"], figures["headline"]["n_records"]
    upper = head["upper_n_correct"] if head["upper_n_correct"] is not None else n
    row = {
        "file": name,
        "records": n,
        "attributes": len(figures["inputs"]["columns"]),
        "jobs": jobs,
        "seconds_per_family": seconds,
        "headline": f"[{head['n_correct']}, {upper}]",
        "gap_points": round(100 * (upper - head["n_correct"]) / n, 2),
        "status": head["status"],
        "wall_s": round(wall, 1),
    }
    for family in figures["families"]:
        lower, bound = family["n_correct"], family["bound"]
        row[family["family"]] = (
            f"{lower}" if family["status"] == "optimal" else f"[{lower}, {'-' if bound is None else bound}]"
        )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default=",".join(NAMES))
    parser.add_argument("--jobs", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--seconds", type=float, default=60.0, help="rlopt risk --time-limit")
    add_trees(parser)
    args = parser.parse_args()
    if over_trees("bench_user_files", args):
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in args.files.split(","):
            original, masked = make(name, folder)
            for jobs in map(int, args.jobs.split(",")):
                rows.append(run(name, original, masked, jobs, args.seconds, folder))
                print(rows[-1], flush=True)
                record("bench_user_files", rows[-1])
    table = pd.DataFrame(rows)
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += [
        "| " + " | ".join(str(v) for v in row) + " |" for row in table.fillna("").itertuples(index=False)
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
