"""One published cell learned with extra HiGHS options for its MILP runs: a probe of
whether a setting proves a cell faster (each run alone, one HiGHS thread, 60 s limit).

    python experiments/probe_highs_options.py M6-385 wm '{"presolve": "off"}'

The options are added to :func:`rlopt.milp.solve.mip_options` for this process only.
"""

from __future__ import annotations

import json
import sys
import time
import warnings

import rlopt.milp.solve as solve
from rlopt import LearnedDistanceLinkage, build, published_recipe
from rlopt.exceptions import DataWarning


def main() -> None:
    name, family = sys.argv[1], sys.argv[2]
    extra = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    default = solve.mip_options
    solve.mip_options = lambda options: {**default(options), **extra}
    original, masked = build(published_recipe(name))
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        result = LearnedDistanceLinkage(family, time_limit=60, threads=1).fit(original, masked).result_
    seconds = time.perf_counter() - started
    print(
        f"{name} {family} {extra}: {result.status} [{result.n_correct_verified}, {result.bound}] "
        f"in {seconds:.2f} s (solve {result.seconds['solve']:.2f} s)"
    )


if __name__ == "__main__":
    main()
