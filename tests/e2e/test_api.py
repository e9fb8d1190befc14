"""The package's public surface: no private name crosses a module boundary inside
rlopt or experiments, and no package attribute hides the submodule of its name."""

import ast
import importlib
import pkgutil
import types
from pathlib import Path

import rlopt

ROOT = Path(__file__).resolve().parents[2]


def test_no_private_name_is_imported_across_modules():
    offenders = []
    for path in [*ROOT.glob("rlopt/**/*.py"), *ROOT.glob("experiments/*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rlopt"):
                offenders += [
                    f"{path.relative_to(ROOT)}: {alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                ]
    assert offenders == []


def test_every_submodule_is_importable_under_its_name():
    shadowed = []
    packages = ["rlopt"] + [p.name for p in pkgutil.walk_packages(rlopt.__path__, "rlopt.") if p.ispkg]
    for name in packages:
        module = importlib.import_module(name)
        for info in pkgutil.iter_modules(module.__path__):
            value = getattr(module, info.name, None)
            if value is not None and not isinstance(value, types.ModuleType):
                shadowed.append(f"{name}.{info.name}")
    assert shadowed == []
