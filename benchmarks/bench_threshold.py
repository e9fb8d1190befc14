"""Why sb stays undecided at a threshold on the protected tier: the two measurements behind
``benchmarks/README.md`` ("The protected tier and the threshold").

    python -m benchmarks.bench_threshold --file swap40 --target 40 --seconds 60
    python -m benchmarks.bench_threshold --file swap40 --blocks 10,25 --block-seconds 20,40 --count 3
    python -m benchmarks.bench_threshold --file swap40 --target 40 --dives 8 --seed 0

- ``--target T``: sb's MILP (exported by ``rlopt learn --export``, its lazy rows left out,
  so a relaxation) solved by HiGHS for ``--seconds`` on one thread with the objective
  cutoff ``objective_bound = n - T + 0.5`` ("some parameter re-identifies at least T?")
  and without it: status, dual bound (the ceiling is ``n`` less it) and nodes, side by side.
- ``--blocks``: the hitting-set search (:mod:`rlopt.milp.ceilings.hitting`) on the first ``--count``
  random blocks of each size (seed 0), ``--block-seconds`` each: each block's
  ``[verified count, ceiling]``. A partition's ceiling is at least the sum of its blocks'
  optima, so a block's verified count times the blocks bounds what any partition can prove.
- ``--dives D``: how large a branch and bound over sb's *parameter space* would be at
  ``--target``. A region is a box of ``theta`` (trace 1); a record may be re-identified in
  it when an LP finds a ``theta`` there with ``d(a_i, b_i) <= d(a_i, b_j)`` for every
  ``j`` (exact per record, joint feasibility ignored); a region below the target is
  pruned, else halved along its widest side. Once at most ``--milp-at`` records remain
  possible, the MILP over those records alone (big-M from the box) bounds the region for
  ``--milp-seconds``. Knuth's estimator: ``D`` random dives (seed ``--seed``), each
  estimating the tree's node count.

The files are the protected tier of :mod:`benchmarks.bench_user_files` (``--file``).
Appends one row per measurement to ``benchmarks/results/bench_threshold.csv``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks._common import MAIN, record
from benchmarks.bench_user_files import make


def cutoff(original: Path, masked: Path, target: int, seconds: float, folder: Path) -> list[dict]:
    """sb's exported MILP with and without the cutoff at ``target`` records."""
    import highspy

    model = folder / "sb.mps"
    subprocess.run(
        [sys.executable, "-c", MAIN, "learn", str(original), str(masked), "--family", "sb",
         "--time-limit", "5", "--export", str(model)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    n = sum(1 for _ in original.open()) - 1
    rows = []
    for bound in (n - target + 0.5, None):
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.readModel(str(model))
        h.setOptionValue("objective_bound", highspy.kHighsInf if bound is None else bound)
        h.setOptionValue("time_limit", seconds)
        h.setOptionValue("threads", 1)
        h.setOptionValue("mip_abs_gap", 0.99)
        t0 = time.perf_counter()
        h.run()
        info = h.getInfo()
        rows.append({
            "measure": "cutoff", "target": target, "cutoff": bound, "seconds": seconds,
            "status": h.modelStatusToString(h.getModelStatus()),
            "ceiling": n - int(np.ceil(info.mip_dual_bound - 1e-6)) if np.isfinite(info.mip_dual_bound) else None,
            "nodes": info.mip_node_count, "wall_s": round(time.perf_counter() - t0, 1),
        })  # fmt: skip
    return rows


def blocks(original: Path, masked: Path, sizes: list[int], seconds: list[float], count: int) -> list[dict]:
    """Each size's first ``count`` blocks: the hitting-set search's interval."""
    from rlopt.data import load_table, validate_pair
    from rlopt.families import get_learned_family
    from rlopt.milp.ceilings.hitting import hitting_set_ceiling

    data = validate_pair(load_table(original), load_table(masked))
    za, zb, sb = data.encoded.za, data.encoded.zb, get_learned_family("sb")
    rows = []
    for size, limit in zip(sizes, seconds):
        parts = np.array_split(np.random.default_rng(0).permutation(za.shape[0]), za.shape[0] // size)
        for k, part in enumerate(parts[:count]):
            t0 = time.perf_counter()
            ceiling, _, info = hitting_set_ceiling(
                za, zb, sb, margin=1e-5, deadline=time.perf_counter() + limit, records=part
            )
            rows.append({
                "measure": "block", "block_size": len(part), "block": k, "seconds": limit,
                "verified": info.history[-1][1], "ceiling": ceiling, "stopped": info.stopped,
                "sets": len(info.sets), "smallest_set": min((len(c) for c in info.sets), default=None),
                "blocks_in_file": len(parts), "wall_s": round(time.perf_counter() - t0, 1),
            })  # fmt: skip
    return rows


def _possible(g: np.ndarray, lo: np.ndarray, hi: np.ndarray, trace: np.ndarray, among) -> list[int]:
    """The records of ``among`` that some ``theta`` of the box re-identifies (an LP each;
    a row no point of the box satisfies rules a record out first)."""
    from scipy.optimize import linprog

    rows = g[among]  # (records, others, params): rows[r, j] @ theta >= 0
    best = np.maximum(rows * lo, rows * hi).sum(-1)
    kept = [i for i, ok in zip(among, (best >= 0).all(1)) if ok]
    bounds = list(zip(lo, hi))
    return [
        i for i in kept
        if linprog(np.zeros(len(lo)), A_ub=-g[i], b_ub=np.zeros(len(g[i])), A_eq=trace[None], b_eq=[1.0],
                   bounds=bounds, method="highs").status == 0
    ]  # fmt: skip


def _region_ceiling(g: np.ndarray, lo, hi, trace, possible: list[int], seconds: float) -> int:
    """The MILP over ``possible`` alone, ``theta`` in the box: its dual bound (records)."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    m, p = len(possible), len(lo)
    blocks, lower = [], []
    for r, i in enumerate(possible):
        low = np.minimum(g[i] * lo, g[i] * hi).sum(-1)  # g.theta >= low (1 - z_i)
        keep = low < 0
        a = np.zeros((int(keep.sum()), p + m))
        a[:, :p], a[:, p + r] = g[i][keep], low[keep]
        blocks.append(a)
        lower.append(low[keep])
    result = milp(
        -np.r_[np.zeros(p), np.ones(m)],
        constraints=[LinearConstraint(np.vstack(blocks), np.concatenate(lower), np.inf),
                     LinearConstraint(np.r_[trace, np.zeros(m)][None], 1.0, 1.0)],
        integrality=np.r_[np.zeros(p), np.ones(m)], bounds=Bounds(np.r_[lo, np.zeros(m)], np.r_[hi, np.ones(m)]),
        options={"time_limit": seconds},
    )  # fmt: skip
    if result.status == 2:  # infeasible: no theta of the box
        return 0
    return int(np.floor(-result.mip_dual_bound + 1e-6))


def dives(
    original: Path, masked: Path, target: int, count: int, seed: int, milp_at: int, seconds: float
) -> list[dict]:
    """Knuth's estimate of the parameter-space branch and bound's node count, per dive."""
    from rlopt.data import load_table, validate_pair
    from rlopt.families import get_learned_family

    data = validate_pair(load_table(original), load_table(masked))
    za, zb = data.encoded.za, data.encoded.zb
    phi, _ = get_learned_family("sb").features(za, zb)
    n = za.shape[0]
    own = phi[np.arange(n), np.arange(n)]
    g = np.stack([np.delete(phi[i] - own[i], i, axis=0) for i in range(n)])
    k, l = np.triu_indices(za.shape[1])
    trace = (k == l).astype(float)
    rng, rows = np.random.default_rng(seed), []
    for dive in range(count):
        t0 = time.perf_counter()
        lo, hi = -np.ones(len(trace)), np.ones(len(trace))
        possible = _possible(g, lo, hi, trace, list(range(n)))
        weight, nodes, depth, milps = 1.0, 1.0, 0, 0
        while True:
            side = int(np.argmax(hi - lo))
            middle = (lo[side] + hi[side]) / 2
            children = []
            for a, b in ((lo[side], middle), (middle, hi[side])):
                lo2, hi2 = lo.copy(), hi.copy()
                lo2[side], hi2[side] = a, b
                inside = _possible(g, lo2, hi2, trace, possible)
                bound = len(inside)
                if target <= bound <= milp_at:
                    bound, milps = _region_ceiling(g, lo2, hi2, trace, inside, seconds), milps + 1
                children.append((lo2, hi2, inside, bound))
            alive = [c for c in children if c[3] >= target]
            nodes, depth = nodes + 2 * weight, depth + 1
            if not alive:
                break
            weight *= len(alive)
            lo, hi, possible, _ = alive[rng.integers(len(alive))]
        rows.append({
            "measure": "dive", "target": target, "dive": dive, "seed": seed, "milp_at": milp_at,
            "milp_seconds": seconds, "depth": depth, "region_milps": milps, "nodes_estimate": f"{nodes:.3g}",
            "wall_s": round(time.perf_counter() - t0, 1),
        })  # fmt: skip
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default="swap40")
    parser.add_argument("--target", type=int, default=None, help="records: the cutoff's threshold")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--blocks", default=None, help="comma-separated block sizes")
    parser.add_argument("--block-seconds", default="20", help="comma-separated, one per size")
    parser.add_argument("--count", type=int, default=3)
    parser.add_argument("--dives", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--milp-at", type=int, default=0, help="records: a region's MILP at or below it")
    parser.add_argument("--milp-seconds", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        original, masked = make(args.file, folder)
        rows = (
            []
            if args.target is None or args.dives
            else cutoff(original, masked, args.target, args.seconds, folder)
        )
        if args.dives:
            rows += dives(
                original, masked, args.target, args.dives, args.seed, args.milp_at, args.milp_seconds
            )
        if args.blocks:
            sizes = [int(s) for s in args.blocks.split(",")]
            limits = [float(s) for s in args.block_seconds.split(",")]
            rows += blocks(
                original, masked, sizes, limits * len(sizes) if len(limits) == 1 else limits, args.count
            )
    for row in rows:
        print(row, flush=True)
        record("bench_threshold", {"file": args.file, **row})


if __name__ == "__main__":
    main()
