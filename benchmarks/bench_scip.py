"""SCIP against HiGHS on rlopt's own reduced models: would racing SCIP beside HiGHS pay?

    python -m benchmarks.bench_scip                      # readme-rs10, M4-33, M5-38; wm, sb; 60 s
    python -m benchmarks.bench_scip --files readme-rs10 --families wm --seconds 10

Each cell is one learning run (:func:`rlopt.milp.pipeline.learn`) with every reduction
(the tight big-C, screening, conflicts, lazy rows, the screening LP's start) and no
search, so that the interval is the solver's: its MILP solved by HiGHS
(:func:`~rlopt.milp.solvers.mip.solve_model`) or by SCIP
(:func:`~rlopt.milp.solvers.scip.solve_model_scip`: the same model, rounds and start),
on one thread, the time limit covering the whole run. Files: names of
:mod:`benchmarks._files` (``readme-rs10`` is README's first example).

Prints a markdown table (each solver's interval, and the run's seconds) and appends one
row per cell and solver to ``benchmarks/results/bench_scip.csv``. Needs PySCIPOpt
(``pip install "rlopt[scip]"``).
"""

from __future__ import annotations

import argparse
import time
import warnings

from benchmarks import _files
from benchmarks._common import record


def _cell(name: str, family: str, solver: str, seconds: float) -> dict:
    """One run of ``family`` on file ``name`` with ``solver``'s MILP: its figures."""
    from rlopt import DataWarning
    from rlopt.data import validate_pair
    from rlopt.families import get_learned_family
    from rlopt.milp import SolverOptions
    from rlopt.milp.pipeline import Collaborators, learn
    from rlopt.milp.reductions import Reductions, Searches
    from rlopt.milp.solvers.scip import solve_model_scip

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        data = validate_pair(*_files.pair(name))
        started = time.perf_counter()
        result, _ = learn(
            data,
            get_learned_family(family),
            margin=1e-5,
            options=SolverOptions(time_limit=seconds, threads=1),
            reductions=Reductions(),
            searches=Searches.none(),
            collaborators=Collaborators(solve=solve_model_scip) if solver == "scip" else Collaborators(),
        )
    return {
        "file": name,
        "family": family,
        "solver": solver,
        "version": result.solver.get("version"),
        "time_limit": seconds,
        "status": result.status,
        "lower": result.n_correct_verified,
        "upper": result.bound,
        "solve_s": round(result.seconds["solve"], 1),
        "wall_s": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="readme-rs10,M4-33,M5-38", help="names of benchmarks._files")
    parser.add_argument("--families", default="wm,sb")
    parser.add_argument("--seconds", type=float, default=60.0, help="time limit of each run (default 60)")
    args = parser.parse_args()
    lines = [
        "| file | family | HiGHS interval | HiGHS s | SCIP interval | SCIP s |",
        "|---|---|---|---|---|---|",
    ]
    for name in args.files.split(","):
        for family in args.families.split(","):
            cells = {solver: _cell(name, family, solver, args.seconds) for solver in ("highs", "scip")}
            for cell in cells.values():
                record("bench_scip", cell)
            h, s = cells["highs"], cells["scip"]
            lines.append(
                f"| {name} | {family} | [{h['lower']}, {h['upper']}] | {h['wall_s']} "
                f"| [{s['lower']}, {s['upper']}] | {s['wall_s']} |"
            )
            print(lines[-1], flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
