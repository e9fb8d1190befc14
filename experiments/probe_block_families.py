"""Issue 32, item 4: the block MILP for other families than wm. The first ``--blocks``
blocks of the Census rank-swap partition (the one ``bench_blocks.py`` uses: 36 blocks of
30, seed 0) solved alone, one after the other, for each family, at ``--seconds`` each;
prints each block's status, proven bound, verified count and time (a family that cannot
be learned on the file says why).

    python experiments/probe_block_families.py --families wm,wm_m,owa,sb_nc,sb,ci --blocks 3 --seconds 60
    python experiments/probe_block_families.py --families wm --size 60 --blocks 2 --seconds 300  # other sizes
"""

from __future__ import annotations

import argparse
import time
import warnings

from bench_blocks import pair

from rlopt.data import validate_pair
from rlopt.exceptions import DataWarning, RloptError
from rlopt.families import get_learned_family
from rlopt.milp.blocks import BlockOptions, _BlockSolver, partition, solve_block


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default="wm,wm_m,owa,sb_nc,sb,ci")
    parser.add_argument("--blocks", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--file", default="census-rs10")
    parser.add_argument("--size", type=int, default=BlockOptions().size, help="records per block")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        data = validate_pair(*pair(args.file))
    blocks = partition(data.original.shape[0], args.size, BlockOptions().seed)[: args.blocks]
    solver = _BlockSolver(args.seconds, 1e-9)
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
