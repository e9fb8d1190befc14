"""The exact line search on its own: from the neutral start, how far it climbs the
count on the full Census rank-swapped with p = 10 (seed 0), and how long it takes.

    python experiments/line_search_probe.py --families wm,owa,sb --seconds 30

Each figure is recounted with the family's reference evaluator at margin 1e-5.
"""

from __future__ import annotations

import argparse
import time

from rlopt.data import CENSUS_ATTRIBUTES, load_census, standardise, validate_pair
from rlopt.families import get_family
from rlopt.learn import recount
from rlopt.masking import rank_swap
from rlopt.milp.incumbents.line_search import line_search_ascent
from rlopt.milp.margins import PairMargins

MARGIN = 1e-5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default="wm,owa,sb")
    parser.add_argument("--seconds", type=float, default=30.0, help="deadline of each search")
    args = parser.parse_args()
    census = load_census()[list(CENSUS_ATTRIBUTES)]
    data = validate_pair(census, rank_swap(census, p=10, seed=0))
    za, zb = standardise(data.masked), standardise(data.original)
    print("| family | neutral start | after the line search | seconds | admissible |")
    print("|---|---|---|---|---|")
    for name in args.families.split(","):
        family = get_family(name)
        start = family.neutral(za.shape[1])
        t0 = time.perf_counter()
        climbed = line_search_ascent(
            za,
            zb,
            family,
            start,
            margin=MARGIN,
            deadline=t0 + args.seconds,
            margins=PairMargins.build(za, zb, family),
        )
        seconds = time.perf_counter() - t0

        def count(theta, family=family):
            return int(
                recount(za, zb, family.distance(theta, data.columns), margin=MARGIN, tol=1e-9)[1].sum()
            )

        print(
            f"| {name} | {count(start)} | {count(climbed)} | {seconds:.1f} | "
            f"{family.is_admissible(climbed, za, zb)} |"
        )


if __name__ == "__main__":
    main()
