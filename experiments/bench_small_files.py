"""Choquet and bilinear ceilings on small files: where ci, sb and sb_nc stand at a limit.

    python experiments/bench_small_files.py [--sources census,eia] [--seconds 60]

Files of the shape issue 31 names: 300 records of 4 attributes drawn from the bundled
Census or EIA file (seed 0), MDAV on two attribute pairs, the first with k = 3 and the
second with k = 8. Each family is one ``LearnedDistanceLinkage`` fit with the default
reductions, one HiGHS thread; prints the interval, its status and the seconds.
"""

from __future__ import annotations

import argparse
import time
import warnings

from rlopt import LearnedDistanceLinkage
from rlopt.data import load_census, load_eia
from rlopt.exceptions import DataWarning
from rlopt.masking import masking_spec

ATTRIBUTES = {
    "census": ["AFNLWGT", "AGI", "EMCONTRB", "FEDTAX"],
    "eia": ["RESREVENUE", "RESSALES", "COMREVENUE", "COMSALES"],
}
FAMILIES = ["ci", "sb", "sb_nc"]


def small_file(source: str):
    """``(original, masked)``: 300 records of 4 attributes, MDAV k = 3 and k = 8 on two pairs."""
    columns = ATTRIBUTES[source]
    data = load_census() if source == "census" else load_eia()
    original = data[columns].sample(300, random_state=0).reset_index(drop=True)
    spec = masking_spec("mdav", groups=[(columns[:2], 3), (columns[2:], 8)])
    return original, spec.apply(original)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", default="census,eia")
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    print("| file | family | status | interval | seconds |")
    print("|---|---|---|---|---|")
    for source in args.sources.split(","):
        original, masked = small_file(source)
        for family in args.families.split(","):
            started = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DataWarning)
                learner = LearnedDistanceLinkage(family, time_limit=args.seconds, threads=1)
                result = learner.fit(original, masked).result_
            seconds = time.perf_counter() - started
            print(
                f"| {source} 300x4 MDAV k=3,8 | {family} | {result.status} "
                f"| [{result.n_correct_verified}, {result.bound}] | {seconds:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
