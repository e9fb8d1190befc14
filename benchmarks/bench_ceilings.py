"""Ceilings that are not the big-C MILP's bound, against it, per second (issue 43, item 2).

Methods, each on one file and family:

- ``milp``: ``rlopt learn --family F --time-limit T`` (``LearnedDistanceLinkage``), one run
  per ``T``: its verified count and ceiling;
- ``hitting``: :func:`rlopt.milp.ceilings.hitting.hitting_set_ceiling` on the whole file, one run
  per ``T`` (its deadline): its own count (it runs no search beyond its slave's) and ceiling;
- ``blocks``: the same search on random blocks of ``--size`` records, one after another
  within ``T`` seconds (a block left unfinished keeps its ceiling so far); the ceiling is
  the sum of the blocks' (each block's records are linked against every original, so no
  parameter re-identifies more than its block's optimum of them);
- ``regions`` (sb only): the parameter box split by the signs of the ``--split``
  off-diagonal entries of ``Q`` with the largest share of the big-C, each of the
  ``2^split`` regions learned (the whole pipeline) with its own exact big-C in
  ``T / 2^split`` seconds; the ceiling is the largest region's.

    python -m benchmarks.bench_ceilings --families sb,ci,wm --seconds 10,30,60,120
    python -m benchmarks.bench_ceilings --families sb --methods blocks --size 30 --seconds 120
    python -m benchmarks.bench_ceilings --families sb --methods regions --split 3 --seconds 120

The file is README's example by default (``readme-rs10``: Census 400 x 4, rank swap
p = 10). Appends one row per file, family, method and ``T`` to
``benchmarks/results/bench_ceilings.csv``: the interval, the infeasible record sets found
and their sizes, the blocks proven, wall and CPU seconds (this process and its children:
the machine may be shared, and the MILP's time limit is wall-clock).
"""

from __future__ import annotations

import argparse
import resource
import time
import warnings

import numpy as np

from benchmarks import _files
from benchmarks._common import record


def _sizes(sets: list) -> str:
    """``size:count`` of the infeasible sets, smallest first."""
    counts = np.bincount([c.size for c in sets]) if sets else np.zeros(0, dtype=int)
    return " ".join(f"{k}:{n}" for k, n in enumerate(counts) if n)


def _cpu() -> float:
    """CPU seconds of this process and its children so far (the machine may be shared)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _milp(data, family: str, seconds: float) -> dict:
    from rlopt import LearnedDistanceLinkage

    started, cpu = time.perf_counter(), _cpu()
    result = LearnedDistanceLinkage(family, time_limit=seconds).fit(data).result_
    return {
        "lower": result.n_correct_verified,
        "upper": result.bound,
        "proven": result.status == "optimal",
        "wall_s": round(time.perf_counter() - started, 1),
        "cpu_s": round(_cpu() - cpu, 1),
    }


def _hitting(data, family: str, seconds: float, *, margin: float) -> dict:
    from rlopt.families import get_learned_family
    from rlopt.milp.ceilings.hitting import hitting_set_ceiling

    za, zb = data.encoded.za, data.encoded.zb
    started, cpu = time.perf_counter(), _cpu()
    ceiling, _, info = hitting_set_ceiling(
        za, zb, get_learned_family(family), margin=margin, deadline=started + seconds
    )
    return {
        "lower": info.history[-1][1],
        "upper": ceiling,
        "proven": info.stopped == "proven",
        "sets": len(info.sets),
        "set_sizes": _sizes(info.sets),
        "stopped": info.stopped,
        "master_s": round(info.master_seconds, 1),
        "slave_s": round(info.slave_seconds, 1),
        "lps": info.lps,
        "wall_s": round(time.perf_counter() - started, 1),
        "cpu_s": round(_cpu() - cpu, 1),
    }


def _blocks(data, family: str, seconds: float, *, size: int, seed: int, margin: float) -> dict:
    from rlopt.families import get_learned_family
    from rlopt.milp.ceilings.hitting import hitting_set_ceiling

    za, zb = data.encoded.za, data.encoded.zb
    blocks = np.array_split(np.random.default_rng(seed).permutation(za.shape[0]), max(1, za.shape[0] // size))
    started, cpu = time.perf_counter(), _cpu()
    upper, proven, sets, lowers = 0, 0, [], []
    for k, block in enumerate(blocks):
        deadline = started + seconds * (k + 1) / len(blocks)  # time a block leaves goes to the next
        ceiling, _, info = hitting_set_ceiling(
            za, zb, get_learned_family(family), margin=margin, records=block, deadline=deadline
        )
        upper += ceiling
        proven += info.stopped == "proven"
        sets += info.sets
        lowers.append(info.history[-1][1])
    return {
        "lower": max(lowers),  # a block's count is no count of the file
        "upper": upper,
        "proven": False,
        "sets": len(sets),
        "set_sizes": _sizes(sets),
        "blocks": len(blocks),
        "blocks_proven": proven,
        "block_size": size,
        "wall_s": round(time.perf_counter() - started, 1),
        "cpu_s": round(_cpu() - cpu, 1),
    }


def _region_family(signs: dict[int, int]):
    """sb on the region where each off-diagonal parameter ``t`` of ``signs`` has the sign
    ``signs[t]`` (``Q_kl`` in ``[0, 1]`` or ``[-1, 0]``), with the exact big-C of the
    region: each off-diagonal ``Q_kl`` at the end of its interval that maximises the
    excess, the diagonal as sb's own :meth:`~rlopt.families.bilinear.Bilinear.max_excess`."""
    from rlopt.families.bilinear import Bilinear

    class RegionBilinear(Bilinear):
        def bounds(self, n_attributes):
            lower, upper = super().bounds(n_attributes)
            for t, sign in signs.items():
                (lower if sign > 0 else upper)[t] = 0.0
            return lower, upper

        def max_excess(self, own, other):
            n_attributes = own.shape[-1]
            own = np.broadcast_to(own, other.shape)
            m = own[..., :, None] * own[..., None, :] - other[..., :, None] * other[..., None, :]
            k, l = np.triu_indices(n_attributes)
            lower, upper = self.bounds(n_attributes)
            off = k != l
            values = m[..., k[off], l[off]]
            best = 2 * np.maximum(values * lower[off], values * upper[off]).sum(axis=-1)
            diag = -np.sort(-np.diagonal(m, axis1=-2, axis2=-1), axis=-1)
            q, r = divmod(n_attributes + 1, 2)
            return best + diag[..., :q].sum(axis=-1) - diag[..., q + r :].sum(axis=-1)

    return RegionBilinear()


def _split_coordinates(za: np.ndarray, zb: np.ndarray, count: int) -> list[int]:
    """The ``count`` off-diagonal parameters of sb with the largest sum of ``|M_kl|`` over
    every pair (their share of the big-C), as indices of sb's parameter vector."""
    n_attributes = za.shape[1]
    k, l = np.triu_indices(n_attributes)
    own = za - zb
    total = np.zeros(k.size)
    for start in range(0, za.shape[0], 50):
        other = za[start : start + 50, None, :] - zb[None, :, :]
        mine = own[start : start + 50, None, :]
        total += np.abs(mine[..., k] * mine[..., l] - other[..., k] * other[..., l]).sum(axis=(0, 1))
    off = np.flatnonzero(k != l)
    return [int(t) for t in off[np.argsort(-total[off], kind="stable")[:count]]]


def _regions(data, family: str, seconds: float, *, split: int, margin: float) -> dict:
    """sb learned on each of the ``2^split`` sign regions, ``seconds / 2^split`` each: the
    ceiling is the largest region's, the count the best region's."""
    import itertools

    from rlopt.milp.pipeline import learn
    from rlopt.milp.reductions import Reductions, Searches
    from rlopt.milp.solvers import SolverOptions

    if family != "sb":
        raise SystemExit(
            "regions: sb only (its big-C over a region is a closed form; ci's needs an LP per row)"
        )
    za, zb = data.encoded.za, data.encoded.zb
    coordinates = _split_coordinates(za, zb, split)
    started, cpu = time.perf_counter(), _cpu()
    uppers, lowers, proven = [], [], 0
    for signs in itertools.product((1, -1), repeat=split):
        options = SolverOptions(time_limit=seconds / 2**split)
        result, _ = learn(
            data,
            _region_family(dict(zip(coordinates, signs))),
            margin=margin,
            options=options,
            reductions=Reductions(),
            searches=Searches(),
        )
        uppers.append(result.bound if result.bound is not None else za.shape[0])
        lowers.append(result.n_correct_verified or 0)
        proven += result.status == "optimal"
    return {
        "lower": max(lowers),
        "upper": max(uppers),
        "proven": max(lowers) == max(uppers),
        "regions": 2**split,
        "regions_proven": proven,
        "region_uppers": " ".join(map(str, uppers)),
        "wall_s": round(time.perf_counter() - started, 1),
        "cpu_s": round(_cpu() - cpu, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default="readme-rs10", help="a name of benchmarks._files")
    parser.add_argument("--families", default="sb,ci,wm", help="comma-separated")
    parser.add_argument("--methods", default="milp,hitting,blocks", help="of milp, hitting, blocks, regions")
    parser.add_argument("--seconds", default="10,30,60,120", help="the budgets T, comma-separated")
    parser.add_argument("--size", type=int, default=30, help="blocks: records per block")
    parser.add_argument("--seed", type=int, default=0, help="blocks: the partition's seed")
    parser.add_argument(
        "--split", type=int, default=2, help="regions: off-diagonal signs fixed (2^SPLIT regions)"
    )
    parser.add_argument("--margin", type=float, default=1e-5)
    args = parser.parse_args()
    from rlopt import DataWarning
    from rlopt.data import validate_pair

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        data = validate_pair(*_files.pair(args.file))
    seconds = [float(s) for s in args.seconds.split(",")]
    for family in args.families.split(","):
        for method in args.methods.split(","):
            for limit in seconds:
                if method == "hitting":
                    figures = _hitting(data, family, limit, margin=args.margin)
                elif method == "milp":
                    figures = _milp(data, family, limit)
                elif method == "regions":
                    figures = _regions(data, family, limit, split=args.split, margin=args.margin)
                else:
                    figures = _blocks(data, family, limit, size=args.size, seed=args.seed, margin=args.margin)
                row = {"file": args.file, "family": family, "method": method, "seconds": limit, **figures}
                print(", ".join(f"{k}={v}" for k, v in row.items()), flush=True)
                record("bench_ceilings", row)


if __name__ == "__main__":
    main()
