"""Published cells learned with extra HiGHS options for their MILP runs: a probe of
whether a setting proves a cell faster (each run alone, one HiGHS thread, 60 s limit).
Each setting is a JSON object added to :func:`rlopt.milp.solvers.mip.mip_options` for this
process only; ``{}`` is the default. One line per cell, one column per setting
(seconds / verified count / status):

    python experiments/probe_highs_options.py M6-385:wm,M4-28:wm '{}' '{"presolve": "off"}'

``--quick-only`` gives the settings to the quick pass alone (the full pass keeps the
defaults), as a change of the pipeline would (at 60 s every fit has a quick pass).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import rlopt.milp.pipeline as pipeline
import rlopt.milp.solvers.mip as solve
from rlopt import LearnedDistanceLinkage, build, published_recipe
from rlopt.exceptions import DataWarning

DEFAULT_OPTIONS = solve.mip_options
DEFAULT_PASS = pipeline._pass


class _Probe:
    """The extra options of the fit under way, and how many passes it has begun."""

    extra: dict = {}
    quick_only = False
    passes = 0


def _options(options: solve.SolverOptions) -> dict:
    applies = not _Probe.quick_only or _Probe.passes == 1  # a fit's first pass is its quick pass
    return {**DEFAULT_OPTIONS(options), **(_Probe.extra if applies else {})}


def _counted_pass(run, **kwargs):
    _Probe.passes += 1
    return DEFAULT_PASS(run, **kwargs)


solve.mip_options = _options
pipeline._pass = _counted_pass


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("cells", help="FILE:FAMILY, comma-separated (M6-385:wm,M4-28:wm_m)")
    parser.add_argument("settings", nargs="*", default=["{}"], help="JSON objects of HiGHS options")
    parser.add_argument("--quick-only", action="store_true", help="the settings in the quick pass alone")
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args()
    settings = [json.loads(text) for text in args.settings]
    for cell in args.cells.split(","):
        name, family = cell.split(":")
        original, masked = build(published_recipe(name))
        row = [cell]
        for extra in settings:
            _Probe.extra, _Probe.quick_only, _Probe.passes = extra, args.quick_only, 0
            started = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DataWarning)
                learner = LearnedDistanceLinkage(family, time_limit=args.time_limit, threads=1)
                result = learner.fit(original, masked).result_
            seconds = time.perf_counter() - started
            row.append(f"{seconds:.2f} s / {result.n_correct_verified} / {result.status}")
        print(" | ".join(row), flush=True)


if __name__ == "__main__":
    main()
