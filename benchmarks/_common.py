"""What every benchmark shares: the row it appends, and its runs in other source trees.

:func:`record` appends one row to ``benchmarks/results/<name>.csv``: the date, the commit
of the rlopt that ran (the tree its ``rlopt`` package was imported from, ``+changes``
when that tree's ``rlopt/`` differs from its commit), the label of the run (``before``,
``after`` or empty), the machine (usable cores, CPU, Python, HiGHS) and the figures.
A column a later row adds is added to the file (earlier rows leave it empty).

:func:`add_trees` gives a benchmark ``--before TREE`` and ``--after TREE`` (``git worktree
add /tmp/before COMMIT`` makes one); :func:`in_tree` runs ``python -m benchmarks.<name>``
in a fresh process with that tree's ``rlopt`` first on ``PYTHONPATH`` and this checkout's
``benchmarks/``, so both trees run the same benchmark code on the same files.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import subprocess
import sys
import tempfile
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = ["RESULTS", "ROOT", "MAIN", "machine", "commit", "record", "add_trees", "trees", "in_tree"]

ROOT = Path(__file__).resolve().parents[1]
"""This checkout (the default ``--after`` tree)."""
RESULTS = Path(__file__).resolve().parent / "results"
LABEL = "RLOPT_BENCH_LABEL"
"""The environment variable that carries a run's label into its process."""
MAIN = "import sys; from rlopt.cli import main; sys.argv[0] = 'rlopt'; main()"
"""``python -c MAIN ...`` is the ``rlopt`` command of the tree first on ``PYTHONPATH``."""


def machine() -> dict[str, str | int]:
    """The cores this process may use, the CPU, Python's and HiGHS's versions."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
    except OSError:
        pass
    try:
        highs = version("highspy")
    except PackageNotFoundError:
        highs = "none"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0
    return {"cores": cores, "cpu": cpu, "python": platform.python_version(), "highspy": highs}


def commit(tree: Path | None = None) -> str:
    """The short commit of ``tree`` (default: the tree this process's ``rlopt`` comes
    from); ``unknown`` outside a git checkout."""
    if tree is None:
        import rlopt

        tree = Path(rlopt.__file__).resolve().parents[1]
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True, check=True
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", "rlopt"], cwd=tree, capture_output=True, text=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if changed else "")


def record(
    name: str, figures: dict, *, tree: Path | None = None, label: str | None = None, results: Path = RESULTS
) -> Path:
    """Append one row (date, commit, label, machine, ``figures``) to ``results/<name>.csv``:
    the commit of ``tree`` when the figures are another process's (default: this
    process's rlopt), the label given or this process's (``RLOPT_BENCH_LABEL``)."""
    row = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": commit(tree),
        "label": os.environ.get(LABEL, "") if label is None else label,
        **machine(),
        **figures,
    }
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{name}.csv"
    rows: list[dict] = []
    header: list[str] = []
    if path.is_file():
        with path.open(newline="") as handle:
            reader = csv.DictReader(handle)
            rows, header = list(reader), list(reader.fieldnames or [])
    columns = header + [c for c in row if c not in header]
    if header and columns == header:  # the same columns: one more line
        with path.open("a", newline="") as handle:
            csv.DictWriter(handle, fieldnames=columns).writerow(row)
        return path
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows([*rows, row])
    return path


def add_trees(parser: argparse.ArgumentParser) -> None:
    """``--before TREE`` and ``--after TREE`` (default: this checkout)."""
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="a source tree to compare with (git worktree add DIR COMMIT)",
    )
    parser.add_argument(
        "--after", type=Path, default=None, help=f"the tree compared with --before (default {ROOT})"
    )


def trees(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """``[("before", B), ("after", A)]`` when ``--before`` is given, else ``[]``."""
    if args.before is None:
        return []
    return [("before", args.before.resolve()), ("after", (args.after or ROOT).resolve())]


def without_trees(argv: list[str]) -> list[str]:
    """``argv`` less its ``--before``/``--after`` options."""
    kept, skip = [], False
    for item in argv:
        if skip:
            skip = False
        elif item in ("--before", "--after"):
            skip = True
        elif not item.startswith(("--before=", "--after=")):
            kept.append(item)
    return kept


def in_tree(module: str, tree: Path, argv: list[str], label: str, *, capture: bool = False) -> str:
    """``python -m benchmarks.<module> argv`` with ``tree``'s rlopt and this checkout's
    benchmarks, labelled ``label``; its standard output when ``capture``."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "benchmarks").symlink_to(Path(__file__).resolve().parent)
        env = {**os.environ, "PYTHONPATH": str(tree), LABEL: label}
        done = subprocess.run(
            [sys.executable, "-m", f"benchmarks.{module}", *argv],
            cwd=folder,
            env=env,
            check=True,
            text=True,
            stdout=subprocess.PIPE if capture else None,
        )
    return done.stdout or ""


def over_trees(module: str, args: argparse.Namespace) -> bool:
    """Run the whole benchmark once in each of ``--before`` and ``--after`` (each
    appends its own rows); ``False`` when no ``--before`` was given (run it here)."""
    chosen = trees(args)
    for label, tree in chosen:
        print(f"== {label}: {tree}", flush=True)
        in_tree(module, tree, without_trees(sys.argv[1:]), label)
    return bool(chosen)
