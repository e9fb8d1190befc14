"""Fidelity protocol: choose attributes and record samples from the baselines alone.

    python experiments/fidelity.py [--candidates 200] [--tolerance 3] [--learn wm,ci] [--seed 0]

The publication did not say which 400 Census records and which attributes make
M4-33 ... M6-853. For each file this script draws ``--candidates`` random
choices with the file's structure (as many attributes as the file has, split
into its groups with its k, from the 13 Census attributes; a record-sample
seed), masks each with MDAV and computes only the non-learned baselines AM and
MD. A candidate *matches* when both are within ``--tolerance`` points of the
published AM and MD rates. Then, without any further tuning, the learned
families of ``--learn`` are run on every matching candidate (at most
``--max-learn`` of them, in drawing order) and on as many unselected candidates
(the first non-matching ones drawn), and the mean and spread of each set is
printed next to the published figure. Everything follows from ``--seed``.
"""

from __future__ import annotations

import argparse

import numpy as np

from rlopt import PUBLISHED_FILES, build, dbrl
from rlopt.data import CENSUS_ATTRIBUTES
from rlopt.experiments.reproduce import PUBLISHED_TABLE1
from rlopt.learn import LearnedDistanceLinkage
from rlopt.masking import Recipe
from rlopt.masking.recipes import AttributeGroup, MDAVSpec


def candidate(name: str, rng: np.random.Generator) -> Recipe:
    """A random recipe with the structure of the published file ``name``."""
    template = PUBLISHED_FILES[name].masking.groups
    sizes = [len(g.columns) for g in template]
    columns = list(rng.choice(list(CENSUS_ATTRIBUTES), size=sum(sizes), replace=False))
    groups, start = [], 0
    for size, group in zip(sizes, template):
        groups.append(AttributeGroup(columns=columns[start:start + size], k=group.k))
        start += size
    return Recipe(name=name, data="census", columns=columns, n_records=400,
                  sample_seed=int(rng.integers(0, 2**31 - 1)), masking=MDAVSpec(groups=groups))


def _summary(values: list[float]) -> str:
    if not values:
        return "none"
    return f"{np.mean(values):.2f} ({min(values):.2f}-{max(values):.2f}, n={len(values)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=200)
    parser.add_argument("--tolerance", type=float, default=3.0, help="points of AM and MD rate")
    parser.add_argument("--learn", default="wm,ci", help="learned families run on the chosen sets")
    parser.add_argument("--max-learn", type=int, default=3, help="candidates per set and file")
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--files", default=",".join(PUBLISHED_FILES))
    args = parser.parse_args()
    families = [f for f in args.learn.split(",") if f]
    print(f"seed {args.seed}, {args.candidates} candidates per file, tolerance {args.tolerance:g} points, "
          f"learned families {families} on at most {args.max_learn} candidates per set, "
          f"time limit {args.time_limit:g} s\n")
    print("| file | matching / drawn | AM published | AM matching | MD published | MD matching "
          "| AM unselected | MD unselected |")
    print("|---|---|---|---|---|---|---|---|")
    learned_lines = []
    for k, name in enumerate(args.files.split(",")):
        rng = np.random.default_rng([args.seed, k])
        pub_am, pub_md = PUBLISHED_TABLE1["am"][list(PUBLISHED_FILES).index(name)], \
            PUBLISHED_TABLE1["md"][list(PUBLISHED_FILES).index(name)]
        matching, unselected = [], []
        for _ in range(args.candidates):
            recipe = candidate(name, rng)
            original, masked = build(recipe)
            am = 100 * dbrl(original, masked, distance="am").rate
            md = 100 * dbrl(original, masked, distance="md").rate
            target = matching if abs(am - pub_am) <= args.tolerance and abs(md - pub_md) <= args.tolerance \
                else unselected
            target.append((recipe, am, md))
        print(f"| {name} | {len(matching)} / {args.candidates} | {pub_am:.2f} | "
              f"{_summary([m[1] for m in matching])} | {pub_md:.2f} | {_summary([m[2] for m in matching])} | "
              f"{_summary([u[1] for u in unselected])} | {_summary([u[2] for u in unselected])} |", flush=True)
        for family in families:
            published = PUBLISHED_TABLE1.get(family, [None] * 6)[list(PUBLISHED_FILES).index(name)]
            sets = {}
            for label, chosen in (("matching", matching), ("unselected", unselected)):
                rates, statuses = [], set()
                for recipe, _, _ in chosen[:args.max_learn]:
                    r = LearnedDistanceLinkage(family, time_limit=args.time_limit).fit(*build(recipe)).result_
                    rates.append(100 * r.rate)
                    statuses.add(r.status)
                sets[label] = f"{_summary(rates)} {'/'.join(sorted(statuses))}"
            learned_lines.append(f"| {name} | {family} | {published} | {sets['matching']} | {sets['unselected']} |")
    if learned_lines:
        print("\n| file | family | published % | matching: mean (range, n) status | "
              "unselected: mean (range, n) status |")
        print("|---|---|---|---|---|")
        print("\n".join(learned_lines))


if __name__ == "__main__":
    main()
