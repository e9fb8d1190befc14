"""Every family learned on the six published files: rate, status, seconds.

    python experiments/learn_published.py [--time-limit 120] [--sample-seed 0] [--families wm,ci,...]

One Markdown table per run: for each file and family the verified count, the
rate (%), the status (only `optimal` is a proven optimum; otherwise the interval
[count, bound]) and reduce + build + solve seconds. Margin 1e-5, HiGHS defaults otherwise.
"""

from __future__ import annotations

import argparse
import platform

from rlopt import PUBLISHED_FILES, build, dbrl, published_recipe
from rlopt.families import LEARNED
from rlopt.learn import LearnedDistanceLinkage
from rlopt.milp.solvers.runtime import highs_version


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--sample-seed", type=int, default=0)
    parser.add_argument("--families", default=",".join(LEARNED))
    parser.add_argument("--files", default=",".join(PUBLISHED_FILES))
    args = parser.parse_args()
    families = args.families.split(",")
    print(
        f"sample seed {args.sample_seed}, margin 1e-5, time limit {args.time_limit:g} s per cell, "
        f"HiGHS {highs_version()}, {platform.processor() or platform.machine()}\n"
    )
    print("| file | family | correct | rate % | status | bound | reduce s | build s | solve s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.files.split(","):
        original, masked = build(published_recipe(name, sample_seed=args.sample_seed))
        for baseline in ("am", "md"):
            r = dbrl(original, masked, distance=baseline)
            print(
                f"| {name} | {baseline} | {r.n_correct} | {100 * r.rate:.2f} | baseline | | | | |", flush=True
            )
        for family in families:
            r = LearnedDistanceLinkage(family, time_limit=args.time_limit).fit(original, masked).result_
            rate = "" if r.rate is None else f"{100 * r.rate:.2f}"
            print(
                f"| {name} | {family} | {r.n_correct_verified} | {rate} | {r.status} | {r.bound} | "
                f"{r.seconds['reduce']:.1f} | {r.seconds['build']:.1f} | {r.seconds['solve']:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
