"""Fidelity protocol: choose attributes and record samples from the baselines alone.

    python experiments/fidelity.py [--candidates 200] [--tolerance 3] [--learn wm,ci] [--seed 0]
    python experiments/fidelity.py --search 40 --restarts 4 [--learn wm,ci,sb]

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

With ``--search STEPS`` the candidates are not only drawn but improved: from each
of ``--restarts`` random starting choices, a hill climb of at most STEPS moves
(replace an attribute by an unused one, exchange attributes between groups, or
draw another record sample) keeps a move when it brings
``max(|AM - published AM|, |MD - published MD|)`` down -- still the baselines
only. The climbs that end within the tolerance are the matching set; the random
starting choices are the unselected set.
"""

from __future__ import annotations

import argparse

import numpy as np

from rlopt import PUBLISHED_FILES, build, dbrl
from rlopt.data import CENSUS_ATTRIBUTES
from rlopt.experiments.reproduce import PUBLISHED_TABLE1
from rlopt.learn import LearnedDistanceLinkage
from rlopt.masking import Recipe
from rlopt.masking.methods import AttributeGroup, MDAVSpec


def candidate(name: str, rng: np.random.Generator) -> Recipe:
    """A random recipe with the structure of the published file ``name``."""
    template = PUBLISHED_FILES[name].masking.groups
    sizes = [len(g.columns) for g in template]
    columns = list(rng.choice(list(CENSUS_ATTRIBUTES), size=sum(sizes), replace=False))
    groups, start = [], 0
    for size, group in zip(sizes, template):
        groups.append(AttributeGroup(columns=columns[start : start + size], k=group.k))
        start += size
    return Recipe(
        name=name,
        data="census",
        columns=columns,
        n_records=400,
        sample_seed=int(rng.integers(0, 2**31 - 1)),
        masking=MDAVSpec(groups=groups),
    )


def _loss(name: str, recipe: Recipe) -> tuple[float, float, float]:
    index = list(PUBLISHED_FILES).index(name)
    original, masked = build(recipe)
    am = 100 * dbrl(original, masked, distance="am").rate
    md = 100 * dbrl(original, masked, distance="md").rate
    return max(abs(am - PUBLISHED_TABLE1["am"][index]), abs(md - PUBLISHED_TABLE1["md"][index])), am, md


def _move(recipe: Recipe, rng: np.random.Generator) -> Recipe:
    """A neighbouring choice: one attribute replaced, two exchanged between groups, or
    another record sample."""
    groups = [list(g.columns) for g in recipe.masking.groups]
    used = [c for g in groups for c in g]
    kind = rng.integers(0, 3 if len(groups) > 1 else 2)
    seed = recipe.sample_seed
    if kind == 0:
        unused = [c for c in CENSUS_ATTRIBUTES if c not in used]
        g = int(rng.integers(len(groups)))
        groups[g][int(rng.integers(len(groups[g])))] = str(rng.choice(unused))
    elif kind == 1:
        seed = int(rng.integers(0, 2**31 - 1))
    else:
        g, h = rng.choice(len(groups), size=2, replace=False)
        i, j = int(rng.integers(len(groups[g]))), int(rng.integers(len(groups[h])))
        groups[g][i], groups[h][j] = groups[h][j], groups[g][i]
    new_groups = [AttributeGroup(columns=cols, k=old.k) for cols, old in zip(groups, recipe.masking.groups)]
    return recipe.model_copy(
        update={
            "columns": [c for g in groups for c in g],
            "sample_seed": seed,
            "masking": MDAVSpec(groups=new_groups),
        }
    )


def search(name: str, rng: np.random.Generator, *, steps: int, restarts: int, tolerance: float):
    """Hill climbs on the baselines' distance to the published AM and MD rates."""
    matching, starts = [], []
    for _ in range(restarts):
        recipe = candidate(name, rng)
        loss, am, md = _loss(name, recipe)
        starts.append((recipe, am, md))
        for _ in range(steps):
            if loss <= tolerance:
                break
            trial = _move(recipe, rng)
            trial_loss, trial_am, trial_md = _loss(name, trial)
            if trial_loss < loss:
                recipe, loss, am, md = trial, trial_loss, trial_am, trial_md
        if loss <= tolerance:
            matching.append((recipe, am, md))
    return matching, starts


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
    parser.add_argument("--search", type=int, default=0, help="hill-climb steps (0: draw only)")
    parser.add_argument("--restarts", type=int, default=4, help="hill climbs per file")
    args = parser.parse_args()
    families = [f for f in args.learn.split(",") if f]
    drawing = (
        f"{args.restarts} hill climbs of at most {args.search} moves per file"
        if args.search
        else f"{args.candidates} candidates per file"
    )
    print(
        f"seed {args.seed}, {drawing}, tolerance {args.tolerance:g} points, "
        f"learned families {families} on at most {args.max_learn} candidates per set, "
        f"time limit {args.time_limit:g} s\n"
    )
    print(
        "| file | matching / drawn | AM published | AM matching | MD published | MD matching "
        "| AM unselected | MD unselected |"
    )
    print("|---|---|---|---|---|---|---|---|")
    learned_lines, chosen_lines = [], []
    for k, name in enumerate(args.files.split(",")):
        rng = np.random.default_rng([args.seed, k])
        pub_am, pub_md = (
            PUBLISHED_TABLE1["am"][list(PUBLISHED_FILES).index(name)],
            PUBLISHED_TABLE1["md"][list(PUBLISHED_FILES).index(name)],
        )
        matching, unselected = [], []
        if args.search:
            matching, unselected = search(
                name, rng, steps=args.search, restarts=args.restarts, tolerance=args.tolerance
            )
        for _ in range(0 if args.search else args.candidates):
            recipe = candidate(name, rng)
            original, masked = build(recipe)
            am = 100 * dbrl(original, masked, distance="am").rate
            md = 100 * dbrl(original, masked, distance="md").rate
            target = (
                matching
                if abs(am - pub_am) <= args.tolerance and abs(md - pub_md) <= args.tolerance
                else unselected
            )
            target.append((recipe, am, md))
        for recipe, am, md in matching:
            groups = "; ".join(f"{','.join(g.columns)}:{g.k}" for g in recipe.masking.groups)
            chosen_lines.append(f"| {name} | {groups} | {recipe.sample_seed} | {am:.2f} | {md:.2f} |")
        drawn = args.restarts if args.search else args.candidates
        print(
            f"| {name} | {len(matching)} / {drawn} | {pub_am:.2f} | "
            f"{_summary([m[1] for m in matching])} | {pub_md:.2f} | {_summary([m[2] for m in matching])} | "
            f"{_summary([u[1] for u in unselected])} | {_summary([u[2] for u in unselected])} |",
            flush=True,
        )
        for family in families:
            published = PUBLISHED_TABLE1.get(family, [None] * 6)[list(PUBLISHED_FILES).index(name)]
            sets = {}
            for label, chosen in (("matching", matching), ("unselected", unselected)):
                rates, statuses = [], set()
                for recipe, _, _ in chosen[: args.max_learn]:
                    r = LearnedDistanceLinkage(family, time_limit=args.time_limit).fit(*build(recipe)).result_
                    rates.append(100 * r.rate)
                    statuses.add(r.status)
                sets[label] = f"{_summary(rates)} {'/'.join(sorted(statuses))}"
            learned_lines.append(
                f"| {name} | {family} | {published} | {sets['matching']} | {sets['unselected']} |"
            )
    if chosen_lines:
        print("\n| file | matching choice: groups | record sample seed | AM | MD |")
        print("|---|---|---|---|---|")
        print("\n".join(chosen_lines))
    if learned_lines:
        print(
            "\n| file | family | published % | matching: mean (range, n) status | "
            "unselected: mean (range, n) status |"
        )
        print("|---|---|---|---|---|")
        print("\n".join(learned_lines))


if __name__ == "__main__":
    main()
