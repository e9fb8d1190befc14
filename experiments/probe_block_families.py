"""Issue 32, item 4: the block MILP for other families than wm. The first ``--blocks``
blocks of the Census rank-swap partition (the one ``bench_blocks.py`` uses: 36 blocks of
30, seed 0) solved alone, one after the other, for each family, at ``--seconds`` each;
prints each block's status, proven bound, verified count and time (a family that cannot
be learned on the file says why).

    python experiments/probe_block_families.py --families wm,wm_m,owa,sb_nc,sb,ci --blocks 3 --seconds 60
    python experiments/probe_block_families.py --families wm --size 60 --blocks 2 --seconds 300  # other sizes
    python experiments/probe_block_families.py --file census-mdav8 --families wm --groups 4 --blocks 5

``--groups K``: blocks of K whole groups of identical masked records (MDAV's groups; at
most one record of a group can be re-identified), drawn at random with the seed.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from bench_blocks import pair

from rlopt.data import validate_pair
from rlopt.exceptions import DataWarning, RloptError
from rlopt.families import get_learned_family
from rlopt.milp.beside import BlockLimits, partition
from rlopt.milp.certificate import BlockOptions
from rlopt.milp.pipeline import solve_block


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default="wm,wm_m,owa,sb_nc,sb,ci")
    parser.add_argument("--blocks", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--file", default="census-rs10")
    parser.add_argument("--size", type=int, default=BlockOptions().size, help="records per block")
    parser.add_argument("--groups", type=int, default=0, help="blocks of this many masked groups")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        data = validate_pair(*pair(args.file))
    seed = BlockOptions().seed
    if args.groups:
        _, group = np.unique(data.masked, axis=0, return_inverse=True)
        order = np.random.default_rng(seed).permutation(int(group.max()) + 1)
        chosen = [order[b * args.groups : (b + 1) * args.groups] for b in range(args.blocks)]
        blocks = [np.flatnonzero(np.isin(group.ravel(), groups)) for groups in chosen]
    else:
        blocks = partition(data.original.shape[0], args.size, seed)[: args.blocks]
    solver = BlockLimits(args.seconds, 1e-9)
    print("| family | block | records | status | bound | verified | seconds |")
    print("|---|---|---|---|---|---|---|")
    for name in args.families.split(","):
        for b, records in enumerate(blocks):
            try:
                family = get_learned_family(name)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DataWarning)
                    found = solve_block(data, family, 1e-5, records, time.time() + args.seconds + 30, solver)
            except RloptError as exc:
                print(f"| {name} | {b} | {len(records)} | error: {exc} | | | |", flush=True)
                break
            print(
                f"| {name} | {b} | {len(records)} | {found['status']} | {found['bound']} | "
                f"{found['verified']} | {found['seconds']:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
