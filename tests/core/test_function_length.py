"""Functions a reader can hold: none in rlopt/ over 60 lines unless a comment says why
(``# (over 60 lines ...)`` above it or in its first lines, e.g. a typer command whose
signature declares its options, or a builder whose numpydoc docstring is most of it)."""

import ast
from pathlib import Path

import rlopt

LIMIT = 60
MARK = "over 60 lines"


def _long_functions_without_a_reason() -> list[str]:
    found = []
    for path in sorted(Path(rlopt.__file__).parent.rglob("*.py")):
        text = path.read_text()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            length = node.end_lineno - node.lineno + 1
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            # the comment above the decorators, or in the function's first lines (after
            # its docstring): where a reader meets it before the length
            said = lines[max(first - 3, 0) : first] + lines[node.lineno : node.lineno + 80]
            if length > LIMIT and not any(MARK in line for line in said if line.strip().startswith("#")):
                found.append(
                    f"{path.relative_to(Path(rlopt.__file__).parent.parent)}:{node.lineno} {node.name}"
                )
    return found


def test_no_function_over_60_lines_without_a_comment_saying_why():
    assert _long_functions_without_a_reason() == []
