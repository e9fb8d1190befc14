"""Naive versus accelerated MILP, side by side in one run, same HiGHS, same options.

    python -m benchmarks.bench_milp --tier published [--naive-time-limit 60] [--time-limit 600]
    python -m benchmarks.bench_milp --tier census --no-naive --time-limit 600
    python -m benchmarks.bench_milp --tier eia --families wm --no-naive --time-limit 600
    python -m benchmarks.bench_milp --baseline carry_rounds --time-limit 120 --naive-time-limit 120
    python -m benchmarks.bench_milp --files M4-33 --families wm --before TREE   # two trees

The naive model is docs/method.md §3 as written: every pair (N(N-1) rows), one
constant C equal to the largest valid C_ij, no reduction, built through Pyomo
(``big_c="uniform", reductions="none"``). The accelerated one is rlopt's default, every
exact reduction on. With ``--baseline SWITCH`` the left-hand run is instead the
accelerated model with that one switch of ``reductions=`` or ``searches=`` off (the benefit of one
exact reduction; ``rlopt learn --help`` lists the switches). Both run with one HiGHS
thread. A naive run stopped by its time cap makes the ratio a lower bound (">="). Each
cell prints one Markdown row as it finishes and appends it to
``benchmarks/results/bench_milp.csv``; ``--out STEM`` also writes the table and a CSV of
this run to ``STEM.md`` and ``STEM.csv``. With ``--before TREE`` the whole run is made
once in each tree (``--after``: this checkout by default).

Tiers (the files are :mod:`benchmarks._files`'s):
  published  the six published files (400 records, sample seed 0) x wm wm_m owa ci ci_m sb sb_nc sb_pd
  census     full Census (1080 x 13): census-rs2 ... census-rs20 (rank swapping p = 2, 4, ..., 20)
             and census-mdav3, 5, 8 x wm owa sb
  eia        EIA (4092 x 10 attributes RESREVENUE ... TOTSALES), eia-mdav3 x wm
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import resource
import sys
import time
import traceback
from pathlib import Path

import pandas as pd

from benchmarks import _files
from benchmarks._common import add_trees, commit, machine, over_trees, record

TIER_FILES = {
    "published": ["M4-33", "M4-28", "M4-82", "M5-38", "M6-385", "M6-853"],
    "census": [f"census-rs{p}" for p in range(2, 21, 2)] + [f"census-mdav{k}" for k in (3, 5, 8)],
    "eia": ["eia-mdav3"],
}
TIER_FAMILIES = {
    "published": "wm,wm_m,owa,ci,ci_m,sb,sb_nc,sb_pd",
    "census": "wm,owa,sb",
    "eia": "wm",
}


def tier_files(tier: str, names: list[str] | None):
    """``(name, original, masked)`` for every file of the tier (built as they are reached)."""
    for name in names or TIER_FILES[tier]:
        original, masked = _files.pair(name)
        yield name, original, masked


def run(
    family: str,
    original: pd.DataFrame,
    masked: pd.DataFrame,
    *,
    naive: bool,
    time_limit: float | None,
    max_conflict_lps: int = 20000,
    without: str | None = None,
) -> dict:
    """One cell: the naive model, or the accelerated one (``without`` that reduction)."""
    from rlopt import LearnedDistanceLinkage
    from rlopt.milp.reductions import Searches

    is_search = without in {f.name for f in dataclasses.fields(Searches)}
    switches = {
        "max_conflict_lps": max_conflict_lps,
        **({without: False} if without and not is_search else {}),
    }
    kwargs: dict = dict(big_c="uniform", reductions="none") if naive else dict(reductions=switches)
    if is_search and not naive:
        kwargs["searches"] = {without: False}
    try:
        r = (
            LearnedDistanceLinkage(family, time_limit=time_limit, threads=1, **kwargs)
            .fit(original, masked)
            .result_
        )
    except Exception as exc:  # a failed cell is reported, never lost
        traceback.print_exc(file=sys.stderr)
        return {"status": f"error: {type(exc).__name__}: {exc}"}
    seconds = r.seconds
    return {
        "status": r.status,
        "correct": r.n_correct_verified,
        "bound": r.bound,
        "gap": None if r.gap is None else round(r.gap, 4),
        "seconds": round(seconds["total"], 2),
        "reduce": round(seconds.get("reduce", 0.0), 2),
        "build": round(seconds["build"], 2),
        "solve": round(seconds["solve"], 2),
        "rows": r.model["n_linkage_rows"],
        "fixed": r.model.get("n_fixed", 0),
        "conflicts": r.model.get("n_conflicts", 0),
        "at_risk": r.n_at_risk,
        "rounds": r.cut_rounds,
    }


def _value(cell: dict) -> str:
    if cell["status"] == "optimal":
        return str(cell["correct"])
    if cell["status"].startswith("error"):
        return cell["status"][:60]
    return f"[{cell['correct']}, {cell['bound']}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tier", default="published", choices=list(TIER_FAMILIES))
    parser.add_argument("--files", default=None, help="comma-separated file names of the tier")
    parser.add_argument("--families", default=None)
    parser.add_argument("--time-limit", type=float, default=600.0, help="accelerated run, seconds")
    parser.add_argument("--naive-time-limit", type=float, default=60.0, help="naive run cap, seconds")
    parser.add_argument("--no-naive", action="store_true", help="only the accelerated model")
    parser.add_argument(
        "--baseline",
        default="naive",
        help="left-hand run: naive (the naive model), or a reductions= switch, the accelerated model without it",
    )
    parser.add_argument(
        "--max-conflict-lps",
        type=int,
        default=20000,
        help="cap on the pairwise conflict LPs of the accelerated run",
    )
    parser.add_argument("--out", default=None, help="also write this run's table to STEM.md and STEM.csv")
    add_trees(parser)
    args = parser.parse_args()
    if over_trees("bench_milp", args):
        return
    families = (args.families or TIER_FAMILIES[args.tier]).split(",")
    stem = Path(args.out) if args.out else None
    if stem is not None:
        stem.parent.mkdir(parents=True, exist_ok=True)
    where = machine()

    header = [
        f"command: python -m benchmarks.bench_milp {' '.join(sys.argv[1:])}",
        f"machine: {where['cpu']}, {where['cores']} cores, Python {where['python']}, highspy "
        f"{where['highspy']}, one HiGHS thread per run, margin 1e-5; date "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; commit {commit()}",
        "",
        f"baseline (left): {'the naive model' if args.baseline == 'naive' else 'accelerated without ' + args.baseline}",
        "",
        "| file | family | naive: optimum | naive s (build+solve) | naive rows | accelerated: optimum "
        "| accel. s (reduce+build+solve) | accel. rows | fixed | conflicts | at risk | lazy rounds "
        "| ratio | equal |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(header), flush=True)
    lines, rows = list(header), []
    for name, original, masked in tier_files(args.tier, args.files.split(",") if args.files else None):
        for family in families:
            fast = run(
                family,
                original,
                masked,
                naive=False,
                time_limit=args.time_limit,
                max_conflict_lps=args.max_conflict_lps,
            )
            naive = args.baseline == "naive"
            slow = (
                run(
                    family,
                    original,
                    masked,
                    naive=naive,
                    time_limit=args.naive_time_limit,
                    max_conflict_lps=args.max_conflict_lps,
                    without=None if naive else args.baseline,
                )
                if not args.no_naive
                else {"status": "not run"}
            )
            ratio, equal = "", ""
            if "seconds" in fast and "seconds" in slow:
                sign = "" if slow["status"] == "optimal" else ">= "
                ratio = f"{sign}{slow['seconds'] / max(fast['seconds'], 1e-3):.1f}"
                if slow["status"] == fast["status"] == "optimal":
                    equal = "yes" if slow["correct"] == fast["correct"] else "NO"
                elif fast["status"] == "optimal" and slow.get("correct") is not None:
                    inside = slow["correct"] <= fast["correct"] <= slow["bound"]
                    equal = "inside naive interval" if inside else "NO: outside naive interval"
            naive_s = f"{slow['seconds']} ({slow['build']}+{slow['solve']})" if "seconds" in slow else ""
            fast_s = (
                f"{fast['seconds']} ({fast['reduce']}+{fast['build']}+{fast['solve']})"
                if "seconds" in fast
                else ""
            )
            line = (
                f"| {name} | {family} | {_value(slow) if 'seconds' in slow or 'error' in slow['status'] else slow['status']} "
                f"| {naive_s} | {slow.get('rows', '')} | {_value(fast)} | {fast_s} | {fast.get('rows', '')} "
                f"| {fast.get('fixed', '')} | {fast.get('conflicts', '')} | {fast.get('at_risk', '')} "
                f"| {fast.get('rounds', '')} | {ratio} | {equal} |"
            )
            print(line, flush=True)
            lines.append(line)
            rows.append(
                {
                    "file": name,
                    "family": family,
                    "baseline": args.baseline,
                    "time_limit": args.time_limit,
                    "naive_time_limit": args.naive_time_limit,
                    **{f"naive_{k}": v for k, v in slow.items()},
                    **{f"accel_{k}": v for k, v in fast.items()},
                    "ratio": ratio,
                    "equal": equal,
                }
            )
            record("bench_milp", rows[-1])
            _write(stem, lines, rows)
    totals = _totals(rows)
    lines += ["", totals]
    print("\n" + totals)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines.append(f"peak resident memory of the benchmark process: {peak:.0f} MB")
    print(lines[-1])
    _write(stem, lines, rows)


def _totals(rows: list[dict]) -> str:
    fast = sum(r.get("accel_seconds", 0) for r in rows)
    slow = sum(r.get("naive_seconds", 0) for r in rows)
    optimal = sum(r.get("accel_status") == "optimal" for r in rows)
    text = f"accelerated: {optimal}/{len(rows)} cells proven optimal, {fast:.1f} s in all"
    if any("naive_seconds" in r for r in rows):
        capped = sum(r.get("naive_status") != "optimal" for r in rows)
        text += (
            f"; naive: {slow:.1f} s in all, {capped} cells stopped by the cap; grid ratio "
            f"{'>= ' if capped else ''}{slow / max(fast, 1e-3):.1f}"
        )
    return text


def _write(stem: Path | None, lines: list[str], rows: list[dict]) -> None:
    if stem is None:
        return
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k not in ("file", "family"), k))
    with stem.with_suffix(".csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
