"""The answer a finished run's page starts with, read from the figures the run wrote:
a risk run's (proven, open, stopped), a map's, and none for figures without a pair's
worst case."""

import json

import pytest

pytest.importorskip("starlette")
from rlopt.app.views import run_answer  # noqa: E402


def _headline(status, lower, upper, **more):
    return {
        "rate": lower / 200, "n_correct": lower, "upper_n_correct": upper, "n_records": 200, "status": status,
        "source": "wm", "upper_source": "sb's proven bound", "failed": [], "stopped": [], **more,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("headline", "rows", "proven", "start"),
    [
        (_headline("proven", 81, 81), [("wm", "optimal")], True, "Worst case: 40.50 %"),
        (_headline("interval", 81, 120), [("wm", "optimal"), ("sb", "time_limit")], False, "Worst case not proven"),
        (_headline("interrupted", 81, 200, stopped=["sb"]), [("wm", "optimal"), ("sb", "interrupted")], False, "At least"),
        (_headline("proven", 81, 81, stopped=["the generalisation folds"]), [("wm", "optimal")], False, "Worst case"),
    ],
)  # fmt: skip
def test_a_risk_runs_answer_and_whether_it_is_proven(tmp_path, headline, rows, proven, start):
    families = [{"family": f, "source": "learned", "status": s} for f, s in rows]
    figures = {"headline": headline, "families": families, "inputs": {"time_limit": 60.0}}
    (tmp_path / "figures.json").write_text(json.dumps(figures))
    found = run_answer(tmp_path)
    assert found["proven"] is proven and found["text"].startswith(start)


def test_a_maps_answer_and_none_without_a_pairs_worst_case(tmp_path):
    (tmp_path / "compare.csv").write_text(
        "label,risk,risk_upper,risk_status\nnoise 0.1,0.9,0.9,proven\nnoise 0.5,0.4,0.7,interval\n"
    )
    found = run_answer(tmp_path)
    assert found["proven"] is False and found["text"].startswith(
        "Of 2 masked files, the lowest worst case is"
    )
    other = tmp_path / "update"
    other.mkdir()
    (other / "figures.json").write_text(json.dumps({"removed": ["r1"]}))  # figures of no kind it knows
    assert run_answer(other) is None
    assert run_answer(tmp_path / "nothing") is None
    update = {
        "integrally_private": False,
        "size": 1,
        "max_changes": 1,
        "removed_surely": ["r1"],
        "added_surely": [],
    }
    (other / "figures.json").write_text(json.dumps(update))  # an update attack's
    assert run_answer(other) == {
        "text": "Not integrally private: every modification that explains the two models removes record r1.",
        "proven": False,
    }
