"""Each search of the incumbent portfolio on its own, chained from the neutral start
on the full Census rank-swapped with p = 10 (seed 0): the count after each step and
its seconds.

    python experiments/portfolio_probe.py --families wm,sb

Each figure is recounted with the family's reference evaluator at margin 1e-5.
"""

from __future__ import annotations

import argparse
import time

from rlopt.data import CENSUS_ATTRIBUTES, load_census, standardise, validate_pair
from rlopt.families import get_family
from rlopt.learn import recount
from rlopt.masking import rank_swap
from rlopt.milp.incumbents.greedy import greedy_add
from rlopt.milp.incumbents.line_search import line_search_ascent
from rlopt.milp.incumbents.surrogate import surrogate_ascent
from rlopt.milp.margins import PairMargins

MARGIN = 1e-5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default="wm,sb")
    parser.add_argument(
        "--greedy-rows",
        type=int,
        default=None,
        help="rows per record in the greedy add's LP (default: the module's)",
    )
    args = parser.parse_args()
    census = load_census()[list(CENSUS_ATTRIBUTES)]
    data = validate_pair(census, rank_swap(census, p=10, seed=0))
    za, zb = standardise(data.masked), standardise(data.original)
    print("| family | neutral | margins s | surrogate | s | line search | s | greedy add | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.families.split(","):
        family = get_family(name)

        def count(theta, family=family):
            return int(
                recount(za, zb, family.distance(theta, data.columns), margin=MARGIN, tol=1e-9)[1].sum()
            )

        theta = family.neutral(za.shape[1])
        cells = [str(count(theta))]
        t0 = time.perf_counter()
        margins = PairMargins.build(za, zb, family)
        cells.append(f"{time.perf_counter() - t0:.1f}")
        for step in ("surrogate", "line search", "greedy add"):
            t0 = time.perf_counter()
            if step == "surrogate":
                theta, _ = surrogate_ascent(za, zb, family, theta, margin=MARGIN, margins=margins)
            elif step == "line search":
                theta = line_search_ascent(za, zb, family, theta, margin=MARGIN, margins=margins)
            else:
                rows = {} if args.greedy_rows is None else {"rows_per_record": args.greedy_rows}
                theta, _ = greedy_add(za, zb, family, theta, margin=MARGIN, margins=margins, **rows)
            cells += [str(count(theta)), f"{time.perf_counter() - t0:.1f}"]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
