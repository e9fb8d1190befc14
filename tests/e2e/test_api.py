"""The package's public surface: no private name crosses a module boundary inside
rlopt, benchmarks or experiments, and no package attribute hides the submodule of its name."""

import ast
import importlib
import pkgutil
import types
from pathlib import Path

import rlopt

ROOT = Path(__file__).resolve().parents[2]


def test_no_private_name_is_imported_across_modules():
    offenders = []
    for path in [*ROOT.glob("rlopt/**/*.py"), *ROOT.glob("benchmarks/*.py"), *ROOT.glob("experiments/*.py")]:
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


def test_every_import_inside_rlopt_names_its_module_interface():
    """Inside rlopt a name is imported from a module only when that module's ``__all__``
    offers it (a package's ``__all__`` is what users call; a module's, what the rest of
    rlopt may use); submodules are imported by name."""
    outside = []
    for path in ROOT.glob("rlopt/**/*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rlopt")):
                continue
            offered = getattr(importlib.import_module(node.module), "__all__", None)
            for alias in node.names:
                if offered is None or alias.name in offered:
                    continue
                try:
                    importlib.import_module(f"{node.module}.{alias.name}")
                except ImportError:
                    outside.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.module}.{alias.name}")
    assert outside == []


def test_the_public_surface_stays_small():
    """What a user calls: the names of each package's ``__all__`` (the package map in
    docs/api.md); the rest of rlopt imports the others from their modules. 102: the
    100 of before, with the one measurement of a pair (``rlopt.risk.measure``) and the
    reference recount (``rlopt.linkage.recount``) that the glossary names."""
    packages = [
        "data",
        "masking",
        "families",
        "linkage",
        "attacks",
        "models",
        "risk",
        "report",
        "experiments",
        "milp",
    ]
    sizes = {name: len(importlib.import_module(f"rlopt.{name}").__all__) for name in packages}
    assert sum(sizes.values()) <= 102, sizes
    assert not [n for n in rlopt.__all__ if n.endswith("_validated")]


def test_import_rlopt_reaches_every_package_and_pickles_its_errors():
    """``import rlopt`` alone gives ``rlopt.risk.assess_risk`` (the names load on first
    use), and an error a worker raises comes back whole."""
    import pickle
    import subprocess
    import sys

    code = "import rlopt; print(rlopt.risk.assess_risk.__name__, rlopt.masking.masking_spec.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["assess_risk", "masking_spec"]
    from rlopt.exceptions import NotFittedError

    assert str(pickle.loads(pickle.dumps(NotFittedError("before fit")))) == "before fit"
