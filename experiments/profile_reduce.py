"""Where the seconds go from ``learn`` to the first HiGHS ``run()``, before and after
the reduce-phase speed-ups of ``rlopt/milp/acceleration.py`` and ``formulation.py``,
side by side in one process (issue 15).

    python experiments/profile_reduce.py                       # Census p=10: wm, sb at 60 s; M5-38 sb
    python experiments/profile_reduce.py --cases census:wm:none --compare
    python experiments/profile_reduce.py --cases census:sb:60 --profile /tmp/sb.prof

"Before" is the two files as they are at ``--base`` (a git revision, default
``HEAD``), loaded from git as modules of their own; "after" is the working tree.
Everything else (learn, solve, families, the incumbent searches) is the working tree's in
both. Each case runs ``learn`` until HiGHS's first ``run()`` of the MILP (the run
is not made) and prints the seconds of each step; ``--compare`` also runs the
screening and the conflict search both ways without a deadline and asserts that
``unreachable``, ``at_risk``, the witnesses, the conflicts, the best start and the
model rows are identical (``--rounds`` alternates before/after to spread the load).

Case ``data:family:limit``: data ``census`` (Census 1080 x 13 with rank swapping
p = 10, seed 0) or a published file (``M5-38`` ...); limit in seconds or ``none``.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import importlib.util
import os
import pstats
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import rlopt
import rlopt.learn as learn_module
from rlopt.data import standardise, validate_pair
from rlopt.families import get_family
from rlopt.masking import rank_swap
from rlopt.milp import SolverOptions
from rlopt.milp import formulation as new_form
from rlopt.milp import reductions as new_acc
from rlopt.milp.solvers import runtime as solve_module

ROOT = Path(__file__).resolve().parents[1]
STEPS = [
    "search_incumbents",
    "screen_records",
    "find_conflicts",
    "duplicate_groups",
    "nearest_pairs",
    "build_model",
    "LazyLinkageRows",
    "best_start",
    "start_from",
]


def load_base(revision: str):
    """``(acceleration, formulation)`` as they are at ``revision``, as fresh modules."""
    modules = []
    for name in ("formulation", "acceleration"):
        source = subprocess.run(
            ["git", "show", f"{revision}:rlopt/milp/{name}.py"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        spec = importlib.util.spec_from_loader(f"_base_{name}", loader=None)
        module = importlib.util.module_from_spec(spec)
        module.__file__ = f"<{revision}:rlopt/milp/{name}.py>"
        if name == "acceleration":
            source = source.replace(
                "from rlopt.milp.formulation import linkage_rows",
                "from _base_formulation import linkage_rows",
            )
        sys.modules[spec.name] = module
        exec(compile(source, module.__file__, "exec"), module.__dict__)
        modules.append(module)
    formulation, acceleration = modules
    return acceleration, formulation


def files(name: str):
    if name == "census":
        original = rlopt.load_census()
        return original, rank_swap(original, p=10, seed=0)
    return rlopt.build(rlopt.published_recipe(name))


class _FirstRun(Exception):
    pass


def to_first_run(data, family, limit, acc, form, *, profile=None) -> dict:
    """Seconds of each step of ``learn`` until HiGHS's first ``run()``, with the reduce
    functions of ``acc``/``form`` (the module under test)."""
    times: dict[str, float] = {}
    marks: dict[str, float] = {}
    model_info: dict = {}

    def timed(name, f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            t = time.perf_counter()
            try:
                out = f(*args, **kwargs)
            finally:
                times[name] = times.get(name, 0.0) + time.perf_counter() - t
            if name == "build_model":
                model_info.update(out[1].to_dict())
            return out

        return wrapper

    sources = {name: getattr(acc, name, None) or getattr(learn_module, name) for name in STEPS}
    sources["build_model"] = form.build_model
    saved = {name: getattr(learn_module, name) for name in STEPS}
    cls = solve_module._highs_class()
    solve, _solve = cls.solve, cls._solve

    def entering(self, *args, **kwargs):
        marks["solve"] = time.perf_counter()
        return solve(self, *args, **kwargs)

    def first_run(self):
        marks["run"] = time.perf_counter()
        raise _FirstRun

    for name in STEPS:
        setattr(learn_module, name, timed(name, sources[name]))
    cls.solve, cls._solve = entering, first_run
    profiler = cProfile.Profile() if profile else None
    t0 = time.perf_counter()
    try:
        if profiler:
            profiler.enable()
        learn_module.learn(data, get_family(family), margin=1e-5, options=SolverOptions(time_limit=limit))
    except _FirstRun:
        pass
    finally:
        if profiler:
            profiler.disable()
        for name, f in saved.items():
            setattr(learn_module, name, f)
        cls.solve, cls._solve = solve, _solve
    times["Pyomo load (solve() to run())"] = marks["run"] - marks["solve"]
    accounted = sum(times.values())
    times["rest of learn"] = (marks["run"] - t0) - accounted
    times["TOTAL to first run()"] = marks["run"] - t0
    if profiler:
        profiler.dump_stats(profile)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
    return times, model_info


def compare(data, family, base_acc, base_form, rounds: int) -> list[tuple[str, float, float]]:
    """The reduce steps without a deadline, before and after: identical outputs asserted."""
    za, zb = standardise(data.masked), standardise(data.original)
    fam = get_family(family)
    neutral = fam.neutral(za.shape[1])
    out: dict[str, list[list[float]]] = {}
    results = {}

    def record(step, side, f, *args, **kwargs):
        t = time.perf_counter()
        value = f(*args, **kwargs)
        out.setdefault(step, [[], []])[side].append(time.perf_counter() - t)
        return value

    pairs = new_acc.nearest_pairs(za, zb, 1)
    for _ in range(rounds):
        for side, (acc, form) in enumerate([(base_acc, base_form), (new_acc, new_form)]):
            s = record("screen_records", side, acc.screen_records, za, zb, fam, margin=1e-5, known=neutral)
            c = record("find_conflicts", side, acc.find_conflicts, za, zb, fam, s, margin=1e-5)
            w = record("best_start", side, acc.best_start, za, zb, fam, s, margin=1e-5)
            rows = record(
                "linkage_rows (lazy start)",
                side,
                form.linkage_rows,
                za,
                zb,
                fam,
                margin=1e-5,
                pairs=pairs,
                records=np.flatnonzero(~s.unreachable),
            )
            results[side] = (s, c, w, rows)
    (s0, c0, w0, r0), (s1, c1, w1, r1) = results[0], results[1]
    assert np.array_equal(s0.unreachable, s1.unreachable) and np.array_equal(s0.at_risk, s1.at_risk)
    assert np.array_equal(s0.best, s1.best, equal_nan=True) and np.array_equal(s0.exact, s1.exact)
    assert len(s0.witnesses) == len(s1.witnesses) and all(
        np.array_equal(a, b) for a, b in zip(s0.witnesses, s1.witnesses)
    )
    assert np.array_equal(c0, c1), (len(c0), len(c1))
    assert np.array_equal(w0, w1)
    for attr in ("record", "other", "coefs", "constants", "big_c"):
        assert np.array_equal(getattr(r0, attr), getattr(r1, attr)), attr
    print(
        f"  identical: {s1.n_at_risk} at risk, {int(s1.unreachable.sum())} unreachable, "
        f"{len(s1.witnesses)} witnesses, {len(c1)} conflicts, same best start, {len(r1)} lazy-start rows"
    )
    return [(step, float(np.median(b)), float(np.median(a))) for step, (b, a) in out.items()]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", nargs="+", default=["census:wm:60", "census:sb:60", "M5-38:sb:60"])
    parser.add_argument("--base", default="HEAD", help="git revision of the 'before' files")
    parser.add_argument(
        "--compare",
        action="store_true",
        help="also run the reduce steps without a deadline and assert identical outputs",
    )
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--no-learn", action="store_true", help="only --compare")
    parser.add_argument("--profile", help="cProfile the 'after' run of each case to this file")
    args = parser.parse_args(argv)
    base_acc, base_form = load_base(args.base)
    print(
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; before = {args.base}, "
        "after = working tree\n"
    )
    for case in args.cases:
        name, family, limit = case.split(":")
        limit = None if limit == "none" else float(limit)
        original, masked = files(name)
        data = validate_pair(original, masked)
        print(f"## {name} ({data.n_records} x {data.n_attributes}) {family}, time_limit={limit}")
        if not args.no_learn:
            runs = [[], []]
            for k in range(args.rounds):  # alternating, to spread the load of the machine
                for side, (acc, form) in enumerate([(base_acc, base_form), (new_acc, new_form)]):
                    runs[side].append(
                        to_first_run(
                            data, family, limit, acc, form, profile=args.profile if side and not k else None
                        )
                    )
            before = {step: float(np.median([t[step] for t, _ in runs[0]])) for step in runs[0][0][0]}
            after = {step: float(np.median([t.get(step, 0.0) for t, _ in runs[1]])) for step in before}
            print(f"| step (median of {args.rounds}) | before s | after s |\n|---|---:|---:|")
            for step in before:
                b, a = before[step], after[step]
                if max(b, a) >= 0.005:
                    print(f"| {step} | {b:.2f} | {a:.2f} |")
            for label, side in (("before", runs[0]), ("after", runs[1])):
                print(
                    f"  model {label}: "
                    + "; ".join(
                        f"{info.get('n_fixed')} fixed, {info.get('n_conflicts')} conflicts, "
                        f"{info.get('n_linkage_rows')} rows"
                        for _, info in side
                    )
                )
        if args.compare:
            print(f"  without a deadline (median of {args.rounds}, alternating):")
            rows = compare(data, family, base_acc, base_form, args.rounds)
            print("| step | before s | after s | ratio |\n|---|---:|---:|---:|")
            for step, b, a in rows:
                print(f"| {step} | {b:.2f} | {a:.2f} | {b / max(a, 1e-9):.1f}x |")
        print(f"  (load average now {os.getloadavg()[0]:.2f})\n", flush=True)


if __name__ == "__main__":
    main()
