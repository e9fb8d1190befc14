"""Start-up of the command line: two source trees side by side, in one run.

    python -m benchmarks.bench_startup [--before TREE] [--after TREE] [--repeat N]

Times ``rlopt --help`` and ``rlopt link`` on a 10-record file (fresh processes, the
median of ``--repeat`` runs, the two trees interleaved so that the machine's load
falls on both alike) with ``python -c 'from rlopt.cli import main; main()'`` and the
tree first on ``PYTHONPATH``. Without ``--before`` it times this checkout alone
(``git worktree add /tmp/before 45b4a2e`` is the commit before the command line became
a package); ``--after`` defaults to this checkout. Appends one row per command and
tree to ``benchmarks/results/bench_startup.csv``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import MAIN, ROOT, add_trees, record, trees


def _seconds(tree: Path, args: list[str], cwd: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", MAIN, *args], cwd=cwd, env=env, capture_output=True, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_trees(parser)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    chosen = trees(args) or [("", ROOT)]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rng = np.random.default_rng(0)
        original = pd.DataFrame(rng.normal(size=(10, 3)), columns=list("abc"))
        original.to_csv(folder / "o.csv", index=False)
        (original + rng.normal(scale=0.1, size=(10, 3))).to_csv(folder / "m.csv", index=False)
        commands = {"rlopt --help": ["--help"], "rlopt link (10 records)": ["link", "o.csv", "m.csv"]}
        print(
            "| command | " + " | ".join(f"{name or 'this'} ({tree})" for name, tree in chosen) + " | ratio |"
        )
        print("|---|" + "---|" * len(chosen) + "---|")
        for label, command in commands.items():
            times: dict[str, list[float]] = {name: [] for name, _ in chosen}
            for _ in range(args.repeat):
                for name, tree in chosen:
                    times[name].append(_seconds(tree, command, folder))
            medians = [statistics.median(times[name]) for name, _ in chosen]
            ratio = f"{medians[0] / medians[-1]:.1f}x" if len(medians) == 2 else ""
            print(f"| `{label}` | " + " | ".join(f"{m:.2f} s" for m in medians) + f" | {ratio} |")
            for (name, tree), median in zip(chosen, medians):
                record(
                    "bench_startup",
                    {
                        "command": label,
                        "tree": str(tree),
                        "repeat": args.repeat,
                        "median_s": round(median, 3),
                    },
                    tree=tree,
                    label=name,
                )


if __name__ == "__main__":
    main()
