"""The default ``rlopt risk`` on files shaped like those users bring, at several ``--jobs``.

    python -m benchmarks.bench_user_files                       # every file, --jobs 1 and 2
    python -m benchmarks.bench_user_files --files readme,wine --jobs 1,2,16
    python -m benchmarks.bench_user_files --seconds 60 --before TREE   # two source trees
    python -m benchmarks.bench_user_files --files protected --jobs 1 --threshold 10%

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

The protected tier (``--files protected``): files masked the way an office masks before
release, each made by ``rlopt data`` and ``rlopt mask`` as a user would (seed 1):

- ``noise1``, ``swap40``, ``cart``, ``laplace1``: README's Census 400 x 4 under additive
  noise of variance ratio 1.0, rank swapping p = 40, CART synthesis of every attribute,
  Laplace noise at epsilon 1;
- ``wine-noise1``: wine 150 x 5 (as ``wine``) under noise of variance ratio 1.0;
- ``cps-pram``: CPS1985 400 records (wage, education, age, gender, occupation, sector),
  noise of variance ratio 1.0 on the numbers, then PRAM (theta 0.8) on the categories.

``--threshold 10%`` (or any threshold) adds ``rlopt risk --threshold`` and its decision,
exit code and families' statuses to each row.
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
PROTECTED = ("noise1", "swap40", "cart", "laplace1", "wine-noise1", "cps-pram")
CPS_COLUMNS = "wage,education,age,gender,occupation,sector"
MASKINGS = {  # README's Census pairs: `rlopt mask` arguments (after INPUT)
    "readme": ["--method", "rank_swap", "--p", "10"],
    "noise1": ["--method", "noise", "--variance-ratio", "1.0"],
    "swap40": ["--method", "rank_swap", "--p", "40"],
    "cart": ["--method", "synthetic_cart", "--columns", README_COLUMNS],
    "laplace1": ["--method", "laplace", "--epsilon", "1"],
}


def _rlopt(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", MAIN, *args], cwd=cwd, capture_output=True, text=True)


def make(name: str, folder: Path) -> tuple[Path, Path]:
    """Write file ``name``'s pair into ``folder``; the two paths."""
    original, masked = folder / f"{name}-original.csv", folder / f"{name}-masked.csv"
    if name in MASKINGS:  # README's Census 400 x 4 by README's commands, as a user runs them
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
        seed = "1"  # README's masking seed, and the protected tier's
        _rlopt("mask", str(original), *MASKINGS[name], "--seed", seed, "--out", str(masked), cwd=folder)
        return original, masked
    if name == "cps-pram":
        _rlopt(
            "data",
            "cps1985",
            "--columns",
            CPS_COLUMNS,
            "--records",
            "400",
            "--out",
            str(original),
            cwd=folder,
        )
        noised = folder / f"{name}-noised.csv"
        _rlopt("mask", str(original), "--method", "noise", "--variance-ratio", "1.0",
               "--columns", "wage,education,age", "--seed", "1", "--out", str(noised), cwd=folder)  # fmt: skip
        _rlopt("mask", str(noised), "--method", "pram", "--theta", "0.8", "--seed", "1", "--out", str(masked), cwd=folder)  # fmt: skip
        return original, masked
    a, b = _built(name)
    a.to_csv(original, index=False)
    b.to_csv(masked, index=False)
    return original, masked


def _built(name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    from rlopt.data import EIA_ATTRIBUTES, load_eia
    from rlopt.masking import additive_noise, microaggregate

    if name in ("wine", "wine-noise1"):
        from sklearn.datasets import load_wine

        frame = load_wine(as_frame=True).frame.iloc[:150, :5]
        if name == "wine-noise1":
            return frame, additive_noise(frame, 1.0, seed=1)
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


def run(
    name: str,
    original: Path,
    masked: Path,
    jobs: int,
    seconds: float,
    folder: Path,
    threshold: str | None = None,
) -> dict:
    """``rlopt risk`` on the pair at ``jobs`` workers (with ``--threshold``, if given):
    the row of the table."""
    out = folder / f"{name}-jobs{jobs}.json"
    asked = [] if threshold is None else ["--threshold", threshold]
    t0 = time.perf_counter()
    done = _rlopt(
        "risk", str(original), str(masked), "--folds", "0", "--jobs", str(jobs),
        "--time-limit", f"{seconds:g}", "--json", str(out), "--quiet", *asked, cwd=folder,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    if done.returncode not in (0, 1, 3, 4):
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
    if threshold is not None:
        row |= {"threshold": threshold, "decision": figures["decision"]["verdict"], "exit": done.returncode}
    for family in figures["families"]:
        lower, bound = family["n_correct"], family["bound"]
        row[family["family"]] = (
            f"{lower}"
            if family["status"] == "optimal"
            else f"[{lower}, {'-' if bound is None else bound}]"
            + (" d" if family["status"] == "decided" else "")
        )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default=",".join(NAMES))
    parser.add_argument("--jobs", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--seconds", type=float, default=60.0, help="rlopt risk --time-limit")
    parser.add_argument("--threshold", default=None, help="rlopt risk --threshold (e.g. 10%%)")
    add_trees(parser)
    args = parser.parse_args()
    if over_trees("bench_user_files", args):
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        names = args.files.replace("protected", ",".join(PROTECTED)).split(",")
        for name in names:
            original, masked = make(name, folder)
            for jobs in map(int, args.jobs.split(",")):
                rows.append(run(name, original, masked, jobs, args.seconds, folder, args.threshold))
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
