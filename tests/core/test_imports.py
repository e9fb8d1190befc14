"""The package's import graph: no import circle anywhere in ``rlopt/`` (imports inside
functions included), and the nouns a report or an options object needs load no solver."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests._helpers import ROOT

PACKAGE = ROOT / "rlopt"


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The rlopt modules ``name`` imports, at its top or inside its functions (not under
    ``if TYPE_CHECKING``): ``from a.b import c`` is ``a.b.c`` when that is a module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _type_checking(node):
            return
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                targets.add(full if full in modules else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {target for target in targets if target in modules and target != name}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_the_circle_finder_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_in_rlopt():
    modules = _modules()
    graph = {name: _imported(name, path, modules) for name, path in modules.items()}
    assert "rlopt.milp.beside" in graph["rlopt.milp.pipeline"]  # imports inside functions are read too
    assert _circles(graph) == []


def _loads(code: str) -> str:
    """What ``code`` leaves in ``sys.modules`` of a fresh interpreter: pyomo, highspy."""
    check = f"{code}\nimport sys\nprint(sorted(m for m in ('pyomo', 'highspy') if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", check], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip().splitlines()[-1]


def test_solver_options_load_no_solver():
    assert _loads("from rlopt.milp import SolverOptions\nSolverOptions(time_limit=5)") == "[]"
    assert _loads("from rlopt.milp.solvers import SolverOptions, SolveResult, Cut") == "[]"
    assert _loads("from rlopt.results import LearnResult") == "[]"


def test_rendering_a_report_loads_no_solver(tmp_path):
    """A report renders from computed figures: its module, the blocks' and the lower
    end's descriptions and the render itself load neither Pyomo nor highspy."""
    from rlopt.risk import assess_risk
    from tests._helpers import noisy_file

    assessment = assess_risk(*noisy_file(4, 20, 2), families=["wm"], time_limit=10, folds=0)
    figures, records = tmp_path / "figures.json", tmp_path / "records.csv"
    import json

    figures.write_text(
        json.dumps(assessment.figures, default=lambda v: v.item() if hasattr(v, "item") else str(v))
    )
    assessment.records.to_csv(records, index=False)
    code = f"""
import json, types
import pandas as pd
from rlopt.report import render_risk_report
from rlopt.milp.ceilings.certificate import describe_blocks, describe_lower
a = types.SimpleNamespace(figures=json.loads(open({str(figures)!r}).read()), records=pd.read_csv({str(records)!r}))
render_risk_report(a, {str(tmp_path / "report.html")!r})
describe_lower("neutral start (AM)")
"""
    assert _loads(code) == "[]"
    assert (tmp_path / "report.html").stat().st_size > 1000


@pytest.mark.parametrize("module", ["rlopt.report", "rlopt.milp.ceilings.certificate", "rlopt.milp.budget"])
def test_light_modules_load_no_solver(module):
    assert _loads(f"import {module}") == "[]"


def test_only_the_solvers_package_imports_highspy():
    modules = _modules()
    importers = {
        name
        for name, path in modules.items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if (isinstance(node, ast.Import) and any(a.name.split(".")[0] == "highspy" for a in node.names))
        or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "highspy")
    }
    assert importers and all(name.startswith("rlopt.milp.solvers") for name in importers), importers
