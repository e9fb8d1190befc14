"""Linkage, the rank-swap attack and the risk assessment on 10^4 to 10^6 records, side by side.

    python -m benchmarks.bench_scale [--sizes 10000 100000 1000000] [--attributes 4]
    python -m benchmarks.bench_scale --sizes 10000 100000 --attributes 13 --no-brute --no-dask --no-attack --no-risk
    python -m benchmarks.bench_scale --sizes 10000 --no-dask --no-risk --before TREE   # two trees

How the files are made (``benchmarks._files.resampled_census``): the CASC Census file (1080 records) resampled
with replacement to N records, every value jittered by Normal(0, (0.05 sd)^2) of its
attribute so that the records are distinct, on its first ``--attributes`` attributes
(4: the attributes of the published M4 files); the masked file is additive noise
k = 0.1 (``rlopt.masking.additive_noise``, seed 1).

What runs, each measurement in a fresh process (its time, and its peak memory):
  link       am, md and wm with weights learned by the MILP on 400 records of the 10^4
             file, on every size (the exact nearest-neighbour path, 2 threads)
  brute      the brute-force reference on the same files up to 10^5 records (am,
             2 threads), with the counts of both paths compared
  chunks     owa by brute force on 10^4 records, 1 and 2 threads, chunks of 64 MiB
             (the default) against 4 MiB (best of 3)
  dask       owa (no linear map: brute force only) on 10^4 records over a Dask
             LocalCluster of 1 and of 2 single-threaded worker processes, best of
             3 runs (started
             and rlopt imported before the timing; that time is given beside), and
             the machine's own ceiling beside it: one pure-Python loop against two in
             two processes
  attack     rank swapping p = 1 of the largest file, then the intersection attack
  risk       ``rlopt risk`` (families wm, 60 s, 2 folds, HTML report) on 10^5 records
Each figure is appended as a row to ``benchmarks/results/bench_scale.csv``; ``--out
FILE`` also writes the Markdown the run prints (``experiments/results/bench_scale_4.md``
is the run docs/guide.md quotes). The files are cached in ``$RLOPT_BENCH_DIR``
(default ``/tmp/rlopt-bench-scale``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import MAIN, add_trees, machine, over_trees, record
from benchmarks._files import resampled_census

WORK = Path(os.environ.get("RLOPT_BENCH_DIR", "/tmp/rlopt-bench-scale"))


def _files(n_records: int, n_attributes: int) -> tuple[Path, Path]:
    WORK.mkdir(parents=True, exist_ok=True)
    original, masked = (
        WORK / f"original_{n_attributes}_{n_records}.csv",
        WORK / f"masked_{n_attributes}_{n_records}.csv",
    )
    if not masked.is_file():
        a, b = resampled_census(n_records, n_attributes)
        a.to_csv(original, index=False)
        b.to_csv(masked, index=False)
    return original, masked


def _validated(n_records: int, n_attributes: int):
    from rlopt import validate_pair

    original, masked = _files(n_records, n_attributes)
    return validate_pair(pd.read_csv(original), pd.read_csv(masked))


# ---- one measurement (in a child process) ------------------------------------------------


def measure_link(n_records: int, n_attributes: int, family: str, method: str, weights: str) -> dict:
    from rlopt.families import Distance
    from rlopt.families.wm import WeightedMeanDistance
    from rlopt.linkage import link_records
    from rlopt.linkage.distance_based import resolve_distance

    data = _validated(n_records, n_attributes)
    za, zb = data.standardised()
    distance: Distance
    if family == "wm":
        distance = WeightedMeanDistance(np.array(json.loads(weights)), data.columns)
    else:
        distance = resolve_distance(family, za, zb, data.columns)
    t0 = time.perf_counter()
    linked = link_records(za, zb, distance, method=method, jobs=2)
    return {"seconds": time.perf_counter() - t0, "n_correct": linked.n_correct, "n_ties": linked.n_ties}


def measure_dask(n_records: int, n_attributes: int, workers: int) -> dict:
    from distributed import Client, LocalCluster

    from rlopt.families.owa import OWADistance
    from rlopt.linkage import link_records

    data = _validated(n_records, n_attributes)
    za, zb = data.standardised()
    owa = OWADistance(np.arange(n_attributes, 0, -1) / np.arange(n_attributes, 0, -1).sum())
    with LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None) as cluster:
        t0 = time.perf_counter()
        with Client(cluster) as client:  # the workers import rlopt once (a cost of the cluster, not the run)
            client.run(importlib.import_module, "rlopt.linkage")
        warm = time.perf_counter() - t0
        runs = []
        for _ in range(3):
            t0 = time.perf_counter()
            linked = link_records(za, zb, owa, scheduler=cluster.scheduler_address)
            runs.append(time.perf_counter() - t0)
        return {"seconds": min(runs), "runs": runs, "warm_up": warm, "n_correct": linked.n_correct}


def measure_chunks(n_records: int, n_attributes: int, chunk_mb: int, jobs: int) -> dict:
    from rlopt.families.owa import OWADistance
    from rlopt.linkage import link_records

    za, zb = _validated(n_records, n_attributes).standardised()
    owa = OWADistance(np.arange(n_attributes, 0, -1) / np.arange(n_attributes, 0, -1).sum())
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        linked = link_records(za, zb, owa, method="brute", jobs=jobs, max_bytes=chunk_mb * 2**20)
        runs.append(time.perf_counter() - t0)
    return {"seconds": min(runs), "n_correct": linked.n_correct}


def _spin(n: int = 20_000_000) -> None:
    total = 0
    for i in range(n):
        total += i


def measure_ceiling() -> dict:
    """The machine's own parallel ceiling: a pure-Python loop alone, then two copies in
    two processes at once (2.0 on two free cores; less when the cores are shared)."""
    from multiprocessing import Process

    alone, together = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        _spin()
        alone.append(time.perf_counter() - t0)
        both = [Process(target=_spin) for _ in range(2)]
        t0 = time.perf_counter()
        for process in both:
            process.start()
        for process in both:
            process.join()
        together.append(time.perf_counter() - t0)
    return {"ratio": 2 * min(alone) / min(together), "alone": alone, "together": together}


def measure_attack(n_records: int, n_attributes: int) -> dict:
    from rlopt.attacks import rank_swap_attack
    from rlopt.masking import rank_swap

    original, _ = _files(n_records, n_attributes)
    frame = pd.read_csv(original)
    t0 = time.perf_counter()
    swapped = rank_swap(frame, 1.0, seed=2)
    t1 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        attack = rank_swap_attack(frame, swapped, p=1.0)
    return {
        "mask_seconds": t1 - t0,
        "seconds": time.perf_counter() - t1,
        "n_correct": attack.n_correct,
        "n_sure_correct": attack.n_sure_correct,
        "mean_candidates": float(attack.candidates.mean()),
    }


def measure_risk(n_records: int, n_attributes: int) -> dict:
    original, masked = _files(n_records, n_attributes)
    out = WORK / f"risk_{n_attributes}_{n_records}"
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", MAIN, "risk", str(original), str(masked), "--families", "wm", "--time-limit", "60", "--folds", "2",
         "--report", f"{out}.html", "--json", f"{out}.json", "--records-csv", f"{out}.csv"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    figures = json.loads(Path(f"{out}.json").read_text())
    return {
        "seconds": time.perf_counter() - t0,
        "n_correct": figures["headline"]["n_correct"],
        "report_mb": Path(f"{out}.html").stat().st_size / 2**20,
    }


def learned_weights(n_attributes: int) -> list[float]:
    """wm's weights learned by the MILP on the first 400 records of the 10^4 file."""
    from rlopt.learn import LearnedDistanceLinkage

    original, masked = _files(10_000, n_attributes)
    learner = LearnedDistanceLinkage("wm", time_limit=120, threads=1)
    learner.fit(pd.read_csv(original).iloc[:400], pd.read_csv(masked).iloc[:400])
    assert learner.params_ is not None
    weights = learner.params_["weights"]
    print(
        f"wm weights learned on 400 records: {learner.result_.status}, {learner.result_.n_correct_verified}/400"
    )
    return [weights[c] for c in pd.read_csv(original, nrows=1).columns]


MEASURES: dict[str, Callable[..., dict]] = {
    "link": measure_link,
    "chunks": measure_chunks,
    "dask": measure_dask,
    "ceiling": measure_ceiling,
    "attack": measure_attack,
    "risk": measure_risk,
}


def run_child(kind: str, *args) -> dict:
    """One measurement in a fresh Python process: its figures and its peak resident memory."""
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_scale", "--child", kind, json.dumps(args)],
        cwd=Path(__file__).parents[1],  # where this process found the benchmarks package
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def child(kind: str, args: str) -> None:
    figures = MEASURES[kind](*json.loads(args))
    figures["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures["peak_mb_children"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps(figures))


# ---- the table ---------------------------------------------------------------------------


def describe_machine() -> str:
    where = machine()
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{where['cores']} usable cores ({where['cpu']}), {memory:.0f} GiB, Python {where['python']}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--attributes", type=int, default=4)
    for step in ("brute", "dask", "attack", "risk"):
        parser.add_argument(f"--no-{step}", action="store_true")
    parser.add_argument("--out", type=Path, default=None, help="also write the Markdown printed here")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    add_trees(parser)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if over_trees("bench_scale", args):
        return
    lines = [
        f"# bench_scale: {args.attributes} attributes",
        "",
        f"`python -m benchmarks.bench_scale --sizes {' '.join(map(str, args.sizes))} --attributes {args.attributes}`",
        "",
        f"Machine: {describe_machine()}; load average at start {os.getloadavg()[0]:.2f}; {time.strftime('%Y-%m-%d %H:%M %Z')}.",
        "",
    ]
    print("\n".join(lines), flush=True)

    def say(text: str) -> None:
        lines.extend([text, ""])
        print(text, flush=True)

    def keep(measure: str, n_records: int, got: dict, **more) -> None:
        figures = {
            k: round(v, 3) if isinstance(v, float) else v for k, v in got.items() if not isinstance(v, list)
        }
        record(
            "bench_scale",
            {"measure": measure, "records": n_records, "attributes": args.attributes, **more, **figures},
        )

    weights = json.dumps(learned_weights(args.attributes))
    rows = [
        "| records | distance | path | seconds | correct | ties | peak MB |",
        "|---|---|---|---|---|---|---|",
    ]
    print(rows[0] + "\n" + rows[1], flush=True)
    for n in args.sizes:
        for family in ("am", "md", "wm"):
            paths = ["tree"] + (["brute"] if not args.no_brute and n <= 100_000 and family == "am" else [])
            for path in paths:
                got = run_child("link", n, args.attributes, family, path, weights)
                keep("link", n, got, distance=family, path=path)
                row = (
                    f"| {n:,} | {family} | {path} | {got['seconds']:.2f} | {got['n_correct']} | "
                    f"{got['n_ties']} | {got['peak_mb']:.0f} |"
                )
                rows.append(row)
                print(row, flush=True)
    lines += rows + [""]
    if not args.no_brute:
        chunks = {
            (mb, jobs): run_child("chunks", 10_000, args.attributes, mb, jobs)
            for mb in (64, 4)
            for jobs in (1, 2)
        }
        for (mb, jobs), got in chunks.items():
            keep("chunks", 10_000, got, distance="owa", chunk_mb=mb, jobs=jobs)
        say(
            "Brute force, owa on 10,000 records, chunks of 64 MiB (the default) against 4 MiB, best of 3: "
            + "; ".join(
                f"{jobs} thread{'s' * (jobs > 1)} {chunks[64, jobs]['seconds']:.1f} s against "
                f"{chunks[4, jobs]['seconds']:.1f} s ({chunks[64, jobs]['seconds'] / chunks[4, jobs]['seconds']:.2f}x)"
                for jobs in (1, 2)
            )
            + f" (counts {sorted({c['n_correct'] for c in chunks.values()})})."
        )
    if not args.no_dask:
        ceiling = run_child("ceiling")
        one = run_child("dask", 10_000, args.attributes, 1)
        two = run_child("dask", 10_000, args.attributes, 2)
        keep("ceiling", 0, ceiling)
        keep("dask", 10_000, one, distance="owa", workers=1)
        keep("dask", 10_000, two, distance="owa", workers=2)
        runs = "; ".join(
            f"{len(r['runs'])} runs {', '.join(f'{x:.1f}' for x in r['runs'])} s" for r in (one, two)
        )
        text = (
            f"Dask, owa by brute force on 10,000 records, best of 3: 1 worker {one['seconds']:.1f} s, 2 workers "
            f"{two['seconds']:.1f} s: speed-up {one['seconds'] / two['seconds']:.2f}x ({runs}) "
            f"(counts {one['n_correct']} and {two['n_correct']}; the workers' start and import of rlopt, "
            f"before the timing: {one['warm_up']:.1f} s and {two['warm_up']:.1f} s)."
        )
        say(text)
        say(
            f"The machine's own ceiling, measured just before: two pure-Python loops in two processes "
            f"ran {ceiling['ratio']:.2f}x the throughput of one (best of 3 each: one loop "
            f"{', '.join(f'{t:.2f}' for t in ceiling['alone'])} s; two "
            f"{', '.join(f'{t:.2f}' for t in ceiling['together'])} s)."
        )
    if not args.no_attack:
        n = max(args.sizes)
        got = run_child("attack", n, args.attributes)
        keep("attack", n, got)
        text = (
            f"Rank swapping p = 1 of {n:,} records: masking {got['mask_seconds']:.1f} s; intersection attack "
            f"{got['seconds']:.1f} s, {got['n_correct']} re-identified ({got['n_sure_correct']} sure), mean "
            f"intersection {got['mean_candidates']:.2f}; peak {got['peak_mb']:.0f} MB (masking included)."
        )
        say(text)
    if not args.no_risk:
        n = 100_000
        got = run_child("risk", n, args.attributes)
        keep("risk", n, got)
        text = (
            f"`rlopt risk` on {n:,} records (wm, 60 s, 2 folds, report, JSON, records CSV): "
            f"{got['seconds']:.1f} s end to end, worst case at least {got['n_correct']} of {n:,}; "
            f"report {got['report_mb']:.1f} MB; peak {got['peak_mb_children']:.0f} MB."
        )
        say(text)
    lines.append(f"Load average at the end {os.getloadavg()[0]:.2f}.")
    if args.out is not None:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
