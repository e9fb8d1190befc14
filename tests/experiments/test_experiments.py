"""Experiment configs, the grid runner (resume, Dask) and the published tables."""

import json
import os
from pathlib import Path

import pandas as pd
import pytest
import yaml

import rlopt.experiments.runner as runner_module
from rlopt.exceptions import InputError
from rlopt.experiments import ExperimentConfig, load_config, paper_config, run_grid, write_tables
from rlopt.experiments.config import expand, load_any_config
from rlopt.experiments.runner import TIMING_COLUMNS

CONFIGS = Path(__file__).resolve().parents[2] / "configs"

TINY = {
    "name": "tiny",
    "files": [
        {
            "recipe": {
                "name": "tiny",
                "data": "census",
                "columns": ["AFNLWGT", "AGI", "EMCONTRB"],
                "n_records": 30,
                "sample_seed": 0,
                "masking": {"method": "rank_swap", "p": 10, "seed": 1},
            }
        }
    ],
    "families": ["am", "wm", "owa"],
    "samples": [0, 1],
    "solver": {"margin": 1e-4, "time_limit": 60, "threads": 1},
}


def write_config(tmp_path, content, name="c.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(content))
    return path


@pytest.mark.parametrize("path", sorted(CONFIGS.rglob("*.yaml")), ids=lambda p: str(p.relative_to(CONFIGS)))
def test_every_config_validates(path):
    config = load_any_config(path)
    if isinstance(config, ExperimentConfig):
        assert expand(config, path.parent)


def test_paper_configs_equal_the_reproduce_grid():
    assert load_config(CONFIGS / "paper.yaml") == paper_config(quick=False)
    assert load_config(CONFIGS / "paper-quick.yaml") == paper_config(quick=True)


def test_reproduce_time_limit_replaces_the_default_and_rejects_bad_values():
    longer = paper_config(quick=True, time_limit=300)
    assert longer.solver.time_limit == 300 and paper_config(quick=True).solver.time_limit == 60
    default = {c.key for c in expand(paper_config(quick=True))}
    for cell in expand(longer):  # learned cells are recomputed, the baselines (no solver) are not
        assert (cell.key in default) == (cell.family in ("am", "md")), cell.describe()
    for bad in (0, -5.0):
        with pytest.raises(InputError, match=f"time_limit={bad!r}"):
            paper_config(quick=True, time_limit=bad)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"familes": ["wm"]}, r"familes: Extra inputs are not permitted"),
        ({"families": ["wm", "cii"]}, r"families: Value error, unknown family \['cii'\]"),
        ({"solver": {"margin": -1}}, r"solver.margin: Input should be greater than or equal to 0"),
        ({"solver": {"time_limt": 5}}, r"solver.time_limt: Extra inputs are not permitted"),
        ({"files": [{"preset": "M4-33", "original": "a.csv"}]}, r"exactly one of"),
        ({"files": [{"preset": "M9-99"}]}, r"unknown published file 'M9-99'"),
    ],
)
def test_bad_configs_name_the_problem(tmp_path, change, message):
    with pytest.raises(InputError, match=message):
        load_config(write_config(tmp_path, {**TINY, **change}))


def test_missing_config_and_bad_yaml(tmp_path):
    with pytest.raises(InputError, match="config file not found"):
        load_config(tmp_path / "none.yaml")
    (tmp_path / "bad.yaml").write_text("name: [unclosed")
    with pytest.raises(InputError, match="not valid YAML"):
        load_config(tmp_path / "bad.yaml")


def test_cell_keys_change_exactly_with_the_cells():
    config = ExperimentConfig.model_validate(TINY)
    keys = [c.key for c in expand(config)]
    assert len(keys) == len(set(keys)) == 6
    assert keys == [c.key for c in expand(ExperimentConfig.model_validate(TINY))]
    more = ExperimentConfig.model_validate({**TINY, "families": ["am", "wm", "owa", "ci"]})
    assert set(keys) < {c.key for c in expand(more)}
    other_solver = ExperimentConfig.model_validate({**TINY, "solver": {**TINY["solver"], "margin": 1e-3}})
    changed = {c.key for c in expand(other_solver)} - set(keys)
    assert changed == {c.key for c in expand(other_solver) if c.family != "am"} and len(changed) == 4


def test_resume_after_a_failing_cell(tmp_path, monkeypatch):
    config = ExperimentConfig.model_validate(TINY)
    real = runner_module.run_cell

    def flaky(cell):
        if cell.family == "owa" and cell.sample_seed == 1:
            raise RuntimeError("interrupted")
        return real(cell)

    monkeypatch.setattr(runner_module, "run_cell", flaky)
    first = run_grid(config, tmp_path / "out", progress=False)
    assert (
        len(first.computed) == 5
        and len(first.failed) == 1
        and "interrupted" in next(iter(first.failed.values()))
    )
    saved = {p.name: p.read_text() for p in (tmp_path / "out" / "cells").glob("*.json")}
    assert len(pd.read_csv(tmp_path / "out" / "results.csv")) == 5

    calls = []
    monkeypatch.setattr(runner_module, "run_cell", lambda cell: calls.append(cell) or real(cell))
    second = run_grid(config, tmp_path / "out", progress=False)
    assert [c.family for c in calls] == ["owa"] and len(second.skipped) == 5 and not second.failed
    for name, text in saved.items():  # nothing finished was recomputed or lost
        assert (tmp_path / "out" / "cells" / name).read_text() == text
    frame = pd.read_csv(tmp_path / "out" / "results.csv")
    assert len(frame) == 6 and set(frame["status"]) <= {"baseline", "optimal"}
    assert (frame["n_correct"] <= frame["n_records"]).all()


def test_local_processes_and_dask_cluster_give_the_same_rows(tmp_path):
    distributed = pytest.importorskip("distributed")
    config = ExperimentConfig.model_validate({**TINY, "samples": [0]})
    local = run_grid(config, tmp_path / "local", jobs=2, progress=False).frame
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        with distributed.Client(cluster) as client:
            worker_pids = set(client.run(os.getpid).values())
        remote = run_grid(
            config, tmp_path / "dask", scheduler=cluster.scheduler_address, progress=False
        ).frame
    ran_on = {int(w.rsplit(":", 1)[1]) for w in remote["worker"]}
    assert ran_on <= worker_pids and os.getpid() not in ran_on
    pd.testing.assert_frame_equal(local.drop(columns=TIMING_COLUMNS), remote.drop(columns=TIMING_COLUMNS))


def test_unreachable_scheduler_is_a_clear_error(tmp_path):
    pytest.importorskip("distributed")
    config = ExperimentConfig.model_validate({**TINY, "samples": [0], "families": ["am"]})
    with pytest.raises(InputError, match="cannot reach the Dask scheduler"):
        run_grid(config, tmp_path / "x", scheduler="tcp://127.0.0.1:9", progress=False)


def test_tables_put_published_figures_beside_ours(tmp_path):
    rows = []
    for family, rate, status, seconds, bound in [
        ("am", 0.95, "baseline", 0.1, None),
        ("wm", 0.9625, "optimal", 1.5, 385),
        ("sb", 0.96, "time_limit", 600.0, 392),
    ]:
        rows.append(
            {
                "dataset": "M4-33",
                "sample_seed": 0,
                "family": family,
                "rate": rate,
                "status": status,
                "total_seconds": seconds,
                "margin": 1e-5,
                "bound": bound,
                "n_records": 400,
            }
        )
    table1, table2 = write_tables(pd.DataFrame(rows), tmp_path)
    assert "| wm | 96.25 [95.50, +0.75]" in table1
    assert "| am | 95.00 [84.00, +11.00]" in table1
    assert "**time_limit**" in table1 and "1/2 learned cells proven optimal" in table1
    # a stopped cell is the interval verified..bound, and so is its difference
    assert "| sb | 96.00..98.00 [96.75, -0.75..+1.25] **time_limit**" in table1
    assert (
        "| wm | 1.5 [29.8, 19.9x]" in table2
        and "| sb | 600.0 [13.7, not comparable] **time_limit**" in table2
    )
    assert (tmp_path / "table1.csv").is_file() and (tmp_path / "table2.csv").is_file()


def test_cli_run_and_resume(tmp_path):
    from typer.testing import CliRunner

    from rlopt.cli import app

    path = write_config(tmp_path, {**TINY, "samples": [0], "families": ["am", "wm"]})
    result = CliRunner().invoke(app, ["run", str(path), "--out-dir", str(tmp_path / "o"), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "2 cell(s) computed, 0 already finished" in result.output
    again = CliRunner().invoke(app, ["run", str(path), "--out-dir", str(tmp_path / "o"), "--no-progress"])
    assert "0 cell(s) computed, 2 already finished" in again.output
    assert json.loads(next((tmp_path / "o" / "cells").glob("*.json")).read_text())["dataset"] == "tiny"


def test_ctrl_c_while_the_finished_cells_are_listed_still_counts_them(tmp_path, monkeypatch):
    """A re-run interrupted before its first cell (CI's machine once did it while the
    cells were listed) says how many cells a former run finished, not "nothing"."""
    from dataclasses import dataclass

    from rlopt.exceptions import Interrupted
    from rlopt.experiments.runner import run_tasks

    @dataclass
    class Cell:
        key: str

        def describe(self) -> str:
            return self.key

    out = tmp_path / "out"
    (out / "cells").mkdir(parents=True)
    (out / "cells" / "a.json").write_text(json.dumps({"key": "a"}))

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner_module, "oversubscription", ctrl_c)
    with pytest.raises(Interrupted) as caught:
        run_tasks([Cell("a"), Cell("b")], out, work=print, columns=["key"], label="t", jobs=2)
    assert caught.value.partial.skipped == ["a"] and caught.value.partial.rows == [{"key": "a"}]
