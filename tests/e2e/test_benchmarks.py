"""The scripts beside the package start, so that a rename inside rlopt breaks this test
rather than the next person who runs one: every benchmark (``python -m
benchmarks.NAME``) and every study of ``experiments/`` answers ``--help``, and every
rlopt name they import (at the top or inside a function) exists. ``benchmarks/README.md``
lists each benchmark, and the row every benchmark appends keeps its columns."""

import ast
import csv
import importlib
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks._common import record, without_trees

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.py") if not p.name.startswith("_"))
STUDIES = sorted(p.name for p in (ROOT / "experiments").glob("*.py"))
SCRIPTS = sorted([*(ROOT / "benchmarks").glob("*.py"), *(ROOT / "experiments").glob("*.py")])


def _help(run, monkeypatch, capsys) -> str:
    monkeypatch.setattr(sys, "argv", ["script", "--help"])
    with pytest.raises(SystemExit) as stopped:
        run()
    assert stopped.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_benchmark_answers_help(name, monkeypatch, capsys):
    out = _help(lambda: runpy.run_module(f"benchmarks.{name}", run_name="__main__"), monkeypatch, capsys)
    assert "usage:" in out


@pytest.mark.parametrize("name", STUDIES)
def test_every_study_answers_help(name, monkeypatch, capsys):
    path = str(ROOT / "experiments" / name)
    assert "usage:" in _help(lambda: runpy.run_path(path, run_name="__main__"), monkeypatch, capsys)


def test_the_commands_the_readmes_give_start_from_the_root():
    for command in (["-m", "benchmarks.bench_startup"], ["benchmarks/behaviour.py"]):
        done = subprocess.run(
            [sys.executable, *command, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0 and "usage:" in done.stdout, done.stderr[-2000:]


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_rlopt_name_a_script_imports_exists(path):
    missing = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "rlopt":
            module = importlib.import_module(node.module)
            missing += [f"{node.module}.{a.name}" for a in node.names if not hasattr(module, a.name)]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "rlopt":
                    importlib.import_module(alias.name)
    assert missing == []


def test_the_benchmarks_readme_lists_every_benchmark():
    text = (ROOT / "benchmarks" / "README.md").read_text()
    assert len(BENCHMARKS) >= 10
    assert [name for name in BENCHMARKS if f"`{name}`" not in text] == []


def test_a_row_keeps_the_earlier_rows_when_it_adds_a_column(tmp_path):
    record("bench_x", {"cell": "a", "seconds": 1.5}, results=tmp_path, label="before")
    record("bench_x", {"cell": "b", "seconds": 2.0}, results=tmp_path, label="after")
    record("bench_x", {"cell": "c", "seconds": 3.0, "rows": 7}, results=tmp_path)
    with (tmp_path / "bench_x.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["cell"] for r in rows] == ["a", "b", "c"]
    assert [r["label"] for r in rows] == ["before", "after", ""]
    assert [r["rows"] for r in rows] == ["", "", "7"]
    assert {"date", "commit", "cores", "cpu", "python", "highspy"} <= set(rows[0])


def test_the_trees_are_left_out_of_the_command_each_tree_runs():
    argv = ["--files", "M4-33", "--before", "/tmp/b", "--after=/tmp/a", "--no-naive"]
    assert without_trees(argv) == ["--files", "M4-33", "--no-naive"]
