"""AM and MD re-identification rates of the six published files, beside Table 1.

    python experiments/baselines.py [--seeds 0 1 2 ...]

Prints a Markdown table: our rate (%) for each file and sample seed, and the
published figure. The published record sample and attributes are unknown
(configs/published/*.yaml say what we chose), so differences are expected.
"""

from __future__ import annotations

import argparse

import numpy as np

from rlopt import PUBLISHED_FILES, build, dbrl, published_recipe

PUBLISHED = {  # Table 1 of ../shared/reference/published_tables.md
    "am": [84.00, 68.50, 71.00, 39.75, 78.00, 84.75],
    "md": [94.00, 90.00, 92.75, 88.25, 98.50, 98.00],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = parser.parse_args()
    names = list(PUBLISHED_FILES)
    rates = {d: np.zeros((len(names), len(args.seeds))) for d in PUBLISHED}
    for f, name in enumerate(names):
        for s, seed in enumerate(args.seeds):
            original, masked = build(published_recipe(name, sample_seed=seed))
            for distance in PUBLISHED:
                rates[distance][f, s] = 100 * dbrl(original, masked, distance=distance).rate
    seeds = ", ".join(map(str, args.seeds))
    print(f"sample seed(s): {seeds}; rate in % (mean, and min-max over seeds when several)\n")
    print("| distance | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for distance, published in PUBLISHED.items():
        cells = []
        for f in range(len(names)):
            r = rates[distance][f]
            cell = f"{r.mean():.2f}" if r.size == 1 else f"{r.mean():.2f} ({r.min():.2f}-{r.max():.2f})"
            cells.append(cell)
        print(f"| {distance.upper()} (rlopt) | " + " | ".join(cells) + " |")
        print(f"| {distance.upper()} (published) | " + " | ".join(f"{p:.2f}" for p in published) + " |")


if __name__ == "__main__":
    main()
