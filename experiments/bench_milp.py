"""Naive versus accelerated MILP, side by side in one run, same HiGHS, same options.

    python experiments/bench_milp.py --tier published [--naive-time-limit 60] [--time-limit 600]
    python experiments/bench_milp.py --tier census --no-naive --time-limit 600
    python experiments/bench_milp.py --tier eia --families wm --no-naive --time-limit 600
    python experiments/bench_milp.py --baseline carry_rounds --time-limit 120 --naive-time-limit 120

The naive model is docs/method.md §3 as written: every pair (N(N-1) rows), one
constant C equal to the largest valid C_ij, no reduction, built through Pyomo.
The accelerated one applies every exact reduction of rlopt.milp.reductions.
With ``--baseline SWITCH`` the left-hand run is instead the accelerated model
with that one reduction switched off (the benefit of one exact reduction).
Both run with one HiGHS thread. A naive run stopped by its time cap makes the
ratio a lower bound (">="). Each cell prints one Markdown row as it finishes;
the table and a CSV go to experiments/results/bench_<tier>.{md,csv}.

Tiers:
  published  the six published files (400 records, sample seed 0) x wm wm_m owa ci ci_m sb sb_nc sb_pd
  census     full Census (1080 x 13): rank swapping p = 2, 4, ..., 20 and MDAV k = 3, 5, 8 x wm owa sb
  eia        EIA (4092 x 10 attributes RESREVENUE ... TOTSALES), MDAV k = 3 x wm
"""

from __future__ import annotations

import argparse
import csv
import platform
import resource
import subprocess
import sys
import time
import traceback
from dataclasses import fields
from pathlib import Path

import pandas as pd

from rlopt import PUBLISHED_FILES, build, published_recipe
from rlopt.data import CENSUS_ATTRIBUTES, EIA_ATTRIBUTES, load_census, load_eia
from rlopt.learn import LearnedDistanceLinkage
from rlopt.masking import microaggregate, rank_swap
from rlopt.milp.reductions import Reductions
from rlopt.milp.solvers.runtime import highs_version

RESULTS = Path(__file__).parent / "results"
_SWITCHES = [f.name for f in fields(Reductions) if f.type in (bool, "bool")]
TIER_FAMILIES = {
    "published": "wm,wm_m,owa,ci,ci_m,sb,sb_nc,sb_pd",
    "census": "wm,owa,sb",
    "eia": "wm",
}


def tier_files(tier: str, names: list[str] | None):
    """``(name, original, masked)`` for every file of the tier (lazily built)."""
    if tier == "published":
        for name in names or PUBLISHED_FILES:
            original, masked = build(published_recipe(name, sample_seed=0))
            yield name, original, masked
    elif tier == "census":
        census = load_census()[list(CENSUS_ATTRIBUTES)]
        cells = [f"RS p={p}" for p in range(2, 21, 2)] + [f"MDAV k={k}" for k in (3, 5, 8)]
        for name in names or cells:
            method, value = name.split(" ")
            value = int(value.split("=")[1])
            masked = rank_swap(census, p=value, seed=0) if method == "RS" else microaggregate(census, k=value)
            yield name, census, masked
    elif tier == "eia":
        eia = load_eia()[list(EIA_ATTRIBUTES)]
        for name in names or ["MDAV k=3"]:
            yield name, eia, microaggregate(eia, k=int(name.split("=")[1]))
    else:
        raise SystemExit(f"unknown tier {tier!r}; expected published, census or eia")


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
    switches = {"max_conflict_lps": max_conflict_lps, **({without: False} if without else {})}
    kwargs = dict(big_c="uniform", reductions="none") if naive else dict(reductions=switches)
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
        choices=["naive"] + _SWITCHES,
        help="left-hand run: the naive model, or the accelerated one without this reduction",
    )
    parser.add_argument(
        "--max-conflict-lps",
        type=int,
        default=20000,
        help="cap on the pairwise conflict LPs of the accelerated run",
    )
    parser.add_argument(
        "--out", default=None, help="stem of the .md/.csv output (default results/bench_<tier>)"
    )
    args = parser.parse_args()
    families = (args.families or TIER_FAMILIES[args.tier]).split(",")
    stem = Path(args.out) if args.out else RESULTS / f"bench_{args.tier}"
    stem.parent.mkdir(parents=True, exist_ok=True)

    header = [
        f"command: python experiments/bench_milp.py {' '.join(sys.argv[1:])}",
        f"machine: {platform.machine()}, {len(__import__('os').sched_getaffinity(0))} cores, "
        f"Python {platform.python_version()}, HiGHS {highs_version()}, one HiGHS thread per run, "
        f"margin 1e-5; date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; commit {_commit()}",
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
                    **{f"naive_{k}": v for k, v in slow.items()},
                    **{f"accel_{k}": v for k, v in fast.items()},
                    "ratio": ratio,
                    "equal": equal,
                }
            )
            _write(stem, lines, rows)
    totals = _totals(rows)
    lines += ["", totals]
    print("\n" + totals)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines.append(f"peak resident memory of the benchmark process: {peak:.0f} MB")
    print(lines[-1])
    _write(stem, lines, rows)


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


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


def _write(stem: Path, lines: list[str], rows: list[dict]) -> None:
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k not in ("file", "family"), k))
    with stem.with_suffix(".csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main()
