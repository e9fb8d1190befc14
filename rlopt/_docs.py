"""The generated pages of ``docs/``: ``cli.md`` (every command's help at 80 columns)
and ``api.md`` (the public names of each package, with their first docstring line).

    python -m rlopt._docs        # rewrites docs/cli.md and docs/api.md

Tests render both again and fail when a page is stale.
"""

from __future__ import annotations

import inspect
from importlib import import_module
from pathlib import Path

CLI_HEADER = """# The `rlopt` command line

Generated from the commands' help (`python -m rlopt._docs`; a test fails when this
page is stale). Exit codes: 0 done; 1 a figure is missing (a failed family or cell, a
solver error); 2 bad input; 130 Ctrl-C, with what was finished kept; `rlopt risk
--threshold` answers with 0 passes, 3 fails, 4 undecided. The method behind
the figures is in [method.md](method.md); the Python names in [api.md](api.md).
"""

API_HEADER = """# The Python API of rlopt

Generated from each package's `__all__` (`python -m rlopt._docs`; a test fails when
this page is stale). The names most work needs are importable from `rlopt` itself;
the command line is in [cli.md](cli.md).
"""

PACKAGES = [
    "rlopt",
    "rlopt.data",
    "rlopt.masking",
    "rlopt.families",
    "rlopt.linkage",
    "rlopt.learn",
    "rlopt.milp",
    "rlopt.attacks",
    "rlopt.models",
    "rlopt.integral",
    "rlopt.risk",
    "rlopt.report",
    "rlopt.experiments",
    "rlopt.results",
    "rlopt.status",
    "rlopt.exceptions",
]
"""The packages of the API page, in the order data flows through them."""


def help_text(args: list[str]) -> str:
    """The help of ``rlopt ARGS --help`` as a terminal of 80 columns shows it."""
    from typer.testing import CliRunner

    from rlopt.cli import app

    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "80"}, terminal_width=80)
    if result.exit_code != 0:
        raise RuntimeError(f"rlopt {' '.join(args)} --help failed: {result.output}")
    return result.output


def render_cli() -> str:
    from rlopt.cli._app import COMMANDS

    parts = [CLI_HEADER, "```text", help_text([]).rstrip(), "```"]
    for name in COMMANDS:
        parts += ["", f"## rlopt {name}", "", "```text", help_text([name]).rstrip(), "```"]
    return "\n".join(parts) + "\n"


def _first_line(value) -> str:
    doc = (
        inspect.getdoc(value)
        if callable(value) or inspect.isclass(value) or inspect.ismodule(value)
        else None
    )
    if not doc or doc == inspect.getdoc(type(value)):
        return f"a constant ({type(value).__name__})"
    return doc.strip().split("\n\n")[0].replace("\n", " ")


def render_api() -> str:
    parts = [API_HEADER]
    for package in PACKAGES:
        module = import_module(package)
        parts += ["", f"## `{package}`", "", _first_line(module), "", "| name | what it is |", "|---|---|"]
        for name in module.__all__:
            if name.startswith("__"):
                continue
            what = _first_line(getattr(module, name)).replace("|", "\\|")
            parts.append(f"| `{name}` | {what} |")
    return "\n".join(parts) + "\n"


def pages(root: Path) -> dict[Path, str]:
    return {root / "docs" / "cli.md": render_cli(), root / "docs" / "api.md": render_api()}


if __name__ == "__main__":
    for path, text in pages(Path(__file__).resolve().parent.parent).items():
        path.write_text(text)
        print(f"wrote {path}")
