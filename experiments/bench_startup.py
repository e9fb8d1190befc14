"""Start-up of the command line: two source trees side by side, in one run.

    python experiments/bench_startup.py [--before TREE] [--after TREE] [--repeat N]

Times ``rlopt --help`` and ``rlopt link`` on a 10-record file (fresh processes, the
median of ``--repeat`` runs, the two trees interleaved so that the machine's load
falls on both alike) with ``python -c 'from rlopt.cli import main; main()'`` and the
tree first on ``PYTHONPATH``. ``--before`` defaults to a worktree of the commit before
the command line became a package (make it with ``git worktree add /tmp/before
45b4a2e``); ``--after`` to this checkout.
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

MAIN = "import sys; from rlopt.cli import main; sys.argv[0] = 'rlopt'; main()"


def _seconds(tree: Path, args: list[str], cwd: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", MAIN, *args], cwd=cwd, env=env, capture_output=True, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, default=Path("/tmp/before"))
    parser.add_argument("--after", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rng = np.random.default_rng(0)
        original = pd.DataFrame(rng.normal(size=(10, 3)), columns=list("abc"))
        original.to_csv(folder / "o.csv", index=False)
        (original + rng.normal(scale=0.1, size=(10, 3))).to_csv(folder / "m.csv", index=False)
        commands = {"rlopt --help": ["--help"], "rlopt link (10 records)": ["link", "o.csv", "m.csv"]}
        print(f"| command | before ({args.before}) | after ({args.after}) | ratio |")
        print("|---|---|---|---|")
        for label, command in commands.items():
            times: dict[str, list[float]] = {"before": [], "after": []}
            for _ in range(args.repeat):
                for name, tree in (("before", args.before), ("after", args.after)):
                    times[name].append(_seconds(tree, command, folder))
            before, after = statistics.median(times["before"]), statistics.median(times["after"])
            print(f"| `{label}` | {before:.2f} s | {after:.2f} s | {before / after:.1f}x |")


if __name__ == "__main__":
    main()
