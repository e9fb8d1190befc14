"""The code's shape, for a before/after table of a restructuring.

    python -m benchmarks.structure [--tree TREE]

For the ``rlopt`` of ``TREE`` (default: this checkout; a tree of a commit:
``git worktree add /tmp/before COMMIT``):

- lines and modules per package (``rlopt/<package>/``; the top-level modules as ``.``);
- functions over 60 lines, and how many of them carry their reason
  (``tests/core/test_function_length.py``'s rule);
- the walk of the original file: ``assess_risk`` on a small pair (wm, no folds) run in a
  fresh process under a profiler that follows the file. The original ``DataFrame`` is
  followed into every rlopt function that receives it, or receives what a followed
  function returned (a tuple's items and an object's attributes too). The modules of
  those calls, in order, with repeats in a row merged, are the walk: its length
  (visits), its distinct modules (places), the calls from a module of a lower layer
  into a higher one (up; the layers, front doors highest, are :data:`LAYERS`), and the
  ``linkage`` -> ``data`` -> ``linkage`` round trips.

Nothing is timed; the figures depend on the code only.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

LIMIT, MARK = 60, "over 60 lines"

WALK = r"""
import json, sys
import numpy as np, pandas as pd
import rlopt

rng = np.random.default_rng(0)
original = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
masked = original + rng.normal(scale=0.5, size=original.shape)
followed, keep, walk, stack = {id(original)}, [original], [], []

def carries(value):
    return id(value) in followed

def follow(value, depth=0):
    if value is None or isinstance(value, (int, float, str, bool)) or depth > 2:
        return
    if id(value) not in followed:
        followed.add(id(value)); keep.append(value)
    items = value if isinstance(value, (tuple, list)) else ()
    if isinstance(value, dict):
        items = list(value.values())
    for item in items:
        follow(item, depth + 1)
    for item in getattr(value, "__dict__", {}).values():
        follow(item, depth + 1)
    for slot in getattr(type(value), "__slots__", ()):
        follow(getattr(value, slot, None), depth + 1)

def profile(frame, event, arg):
    module = frame.f_globals.get("__name__", "")
    if not module.startswith("rlopt"):
        return
    code = frame.f_code
    if event == "call":
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        hit = any(carries(frame.f_locals.get(n)) for n in names)
        if not hit:  # an object holding a followed value (self, a pair)
            for n in names:
                held = getattr(frame.f_locals.get(n), "__dict__", None)
                if held and any(carries(v) for v in held.values()):
                    hit = True
                    break
        stack.append((frame, hit))
        if hit:
            caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back else ""
            walk.append([caller, f"{module}.{code.co_name}"])
    elif event == "return" and stack:
        top, hit = stack.pop()
        if hit and top is frame:
            follow(arg)

sys.setprofile(profile)
rlopt.assess_risk(original, masked, families=["wm"], folds=0, time_limit=20, threads=1)
sys.setprofile(None)
json.dump(walk, sys.stdout)
"""


def packages(root: Path) -> dict[str, dict]:
    """Lines, modules and long functions per package of ``root/rlopt``."""
    found: dict[str, dict] = {}
    for path in sorted((root / "rlopt").rglob("*.py")):
        parts = path.relative_to(root / "rlopt").parts
        package = parts[0] if len(parts) > 1 else "."
        entry = found.setdefault(package, {"lines": 0, "modules": 0, "long": 0, "long_with_reason": 0})
        text = path.read_text()
        lines = text.splitlines()
        entry["lines"] += len(lines)
        entry["modules"] += 1
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if (node.end_lineno or node.lineno) - node.lineno + 1 <= LIMIT:
                continue
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            said = lines[max(first - 3, 0) : first] + lines[node.lineno : node.lineno + 80]
            entry["long"] += 1
            entry["long_with_reason"] += int(
                any(MARK in line for line in said if line.strip().startswith("#"))
            )
    return found


def walk(root: Path) -> list[tuple[str, str]]:
    """The modules the original file passes through (see the module's docstring)."""
    done = subprocess.run(
        [sys.executable, "-c", WALK],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,  # ``python -c`` puts its folder first: the tree's own rlopt
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    return [(caller, call.rsplit(".", 1)[0]) for caller, call in json.loads(done.stdout)]


LAYERS = {"cli": 5, "app": 5, "report": 5, "risk": 4, "experiments": 4, "integral": 4, "learn": 3, "milp": 2}
LAYERS |= {"linkage": 1, "attacks": 1}
"""The layers data flows down through: front doors (cli, app, report), workflows (risk,
experiments, integral), the estimator (learn), the proof (milp), linkage and attacks; the
rest (families, masking, models, data, results, ...) 0."""


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.get(parts[1], 0) if len(parts) > 1 and parts[0] == "rlopt" else 0


def walk_figures(calls: list[tuple[str, str]]) -> dict:
    """Visits (the calls' modules, repeats in a row merged), places, calls from a module
    of a lower layer into a higher one (up), and linkage -> data -> linkage round trips."""
    modules = [module for _, module in calls]
    merged = [m for i, m in enumerate(modules) if i == 0 or modules[i - 1] != m]
    up = sum(1 for caller, module in calls if caller.startswith("rlopt") and _layer(module) > _layer(caller))
    layer = [m.split(".")[1] if "." in m else m for m in merged]
    trips = sum(
        1
        for i in range(len(layer) - 2)
        if layer[i] == "linkage" and layer[i + 1] == "data" and layer[i + 2] == "linkage"
    )
    return {"visits": len(merged), "places": len(set(merged)), "calls_up": up, "linkage_data_linkage": trips}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--walk", action="store_true", help="print the walk's modules in order")
    args = parser.parse_args(argv)
    table = packages(args.tree)
    total: Counter[str] = Counter()
    print(f"{'package':<14}{'lines':>7}{'modules':>9}{'long':>6}{'w/ reason':>11}")
    for name, entry in sorted(table.items(), key=lambda kv: -kv[1]["lines"]):
        total.update(entry)
        print(
            f"{name:<14}{entry['lines']:>7}{entry['modules']:>9}{entry['long']:>6}{entry['long_with_reason']:>11}"
        )
    print(
        f"{'all':<14}{total['lines']:>7}{total['modules']:>9}{total['long']:>6}{total['long_with_reason']:>11}"
    )
    calls = walk(args.tree)
    print("walk of the original file from assess_risk:", json.dumps(walk_figures(calls)))
    if args.walk:
        print("\n".join(f"{caller} -> {module}" for caller, module in calls))


if __name__ == "__main__":
    main()
