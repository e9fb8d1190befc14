"""Every package's docstring is its map: each module and subpackage in it is named there
(as ``rlopt.package.module``, e.g. in a ``:mod:`` reference, or as the list item
````module````), so a newcomer finds a
concept's home from the package it lives in."""

import ast
from pathlib import Path

import rlopt

ROOT = Path(rlopt.__file__).parent


def _unnamed() -> list[str]:
    missing = []
    for init in sorted(ROOT.rglob("__init__.py")):
        folder = init.parent
        package = ".".join(("rlopt", *folder.relative_to(ROOT).parts))
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        members = [p.stem for p in folder.glob("*.py") if p.name != "__init__.py"]
        members += [p.name for p in folder.iterdir() if (p / "__init__.py").exists()]
        missing += [
            f"{package}.{m}" for m in sorted(members) if f"{package}.{m}" not in doc and f"``{m}``" not in doc
        ]
    return missing


def test_every_module_is_named_in_its_package_map():
    assert _unnamed() == []
