"""A stopped run: Ctrl-C keeps what finished as an assessment whose headline is over it
("at least X %"), each stopped family with the interval it had reached; and the
one-line answer every report and page starts with, worked by hand."""

import pytest

import rlopt.risk.pair as pair_module
from rlopt.exceptions import Interrupted
from rlopt.report.answers import answer
from rlopt.risk import assess_risk
from tests._helpers import noisy_file


def test_ctrl_c_in_the_second_family_keeps_the_first_and_the_interval_reached(monkeypatch):
    """wm finishes, ci is stopped after its first interval, sb never starts."""
    original, masked = noisy_file(5, 30, 3)
    learn = pair_module.learn

    def stopped_in_ci(data, family, **kwargs):
        if family.name != "ci":
            return learn(data, family, **kwargs)
        kwargs["progress"](
            {"seconds": 0.5, "lower": 3, "lower_source": "a start", "upper": 29, "upper_source": "MILP bound"}
        )
        raise KeyboardInterrupt

    monkeypatch.setattr(pair_module, "learn", stopped_in_ci)
    with pytest.raises(Interrupted, match="1 of 3 families done") as caught:
        assess_risk(original, masked, families=["wm", "ci", "sb"], folds=0, time_limit=10)
    assessment = caught.value.partial
    wm, ci, sb = assessment.families
    assert (wm.status, ci.status, sb.status) == ("optimal", "interrupted", "interrupted")
    assert (ci.n_correct, ci.bound, ci.upper_source) == (3, 29, "MILP bound")  # the interval reached
    assert (sb.n_correct, sb.bound) == (None, None)  # not started: no figure, no ceiling
    h = assessment.headline
    assert h.stopped == ("ci", "sb") and h.status == "interrupted" and not assessment.complete
    assert h.n_correct >= wm.n_correct and h.upper_n_correct == 30  # sb bounds nothing
    assert assessment.figures["interrupted"] is True
    assert answer(assessment.figures).startswith(f"At least {100 * h.n_correct / 30:.2f} % of the records")
    assert "ci and sb did not finish" in answer(assessment.figures)


def _figures(status, *, lower=155, upper=377, source="ci", upper_source="sb's proven bound", rows=(), **h):
    headline = {
        "rate": lower / 400, "n_correct": lower, "upper_n_correct": upper, "n_records": 400,
        "status": status, "source": source, "upper_source": upper_source, "failed": [], "stopped": [], **h,
    }  # fmt: skip
    families = [{"family": f, "source": "learned", "status": s} for f, s in rows]
    return {"headline": headline, "families": families, "inputs": {"time_limit": 60.0}}


def test_the_answer_in_one_line_worked_by_hand():
    proven = _figures(
        "proven", lower=146, upper=146, source="owa", rows=[("wm", "optimal"), ("owa", "optimal")]
    )
    assert answer(proven) == "Worst case: 36.50 % of the records (146 of 400) re-identified, by owa, proven."
    open_ = _figures("interval", rows=[("wm", "optimal"), ("ci", "time_limit"), ("sb", "time_limit")])
    assert answer(open_) == (
        "Worst case not proven: between 38.75 % and 94.25 % (155 to 377 of 400 records); "
        "sb's time limit (60 s) left it open; ci also ended as an interval."
    )
    strict = _figures(
        "interval", upper=400, source="am", upper_source="the number of records (a strict count)"
    )
    assert answer(strict).endswith("the upper end is the number of records (a strict count).")
    failed = _figures("interval", failed=["sb"], upper=400, rows=[("ci", "optimal"), ("sb", "failed")])
    assert answer(failed) == (
        "At least 38.75 % of the records (155 of 400) re-identified, by ci; "
        "the worst case may be higher: sb failed."
    )
    folds = _figures("proven", upper=155, stopped=["the generalisation folds"], rows=[("ci", "optimal")])
    assert answer(folds).endswith("proven; the generalisation folds stopped.")
    nothing = {"headline": {"rate": None}, "families": []}
    assert answer(nothing).startswith("No worst case")


def test_the_answer_of_a_map_ranks_its_cells_by_their_upper_end():
    from rlopt.report.answers import map_answer

    rows = [
        {"label": "noise 0.05", "risk": 0.9833, "risk_upper": 0.9833, "risk_status": "proven"},
        {"label": "noise 0.5", "risk": 0.45, "risk_upper": 0.8667, "risk_status": "interval"},
        {"label": "mdav k=5", "risk": 0.60, "risk_upper": 0.60, "risk_status": "proven"},  # lower ceiling
        {"label": "swap", "risk": float("nan"), "risk_upper": float("nan"), "risk_status": "failed"},
    ]
    assert map_answer(rows) == (
        "Of 3 masked files, the lowest worst case is mdav k=5's: 60.00 % re-identified (proven); "
        "the highest is noise 0.05's: 98.33 % re-identified (proven). 2 of 3 proven; 1 failed."
    )
    assert (
        map_answer(rows[1:2])
        == "Worst case of noise 0.5: between 45.00 % and 86.67 % re-identified (not proven)."
    )
    assert map_answer([]).startswith("No cell")
    copula = {
        "label": "copula",
        "risk": 0.31,
        "risk_upper": 0.4,
        "risk_status": "interval",
        "risk_kind": "membership",
    }
    # a fully synthetic cell is ranked apart: an advantage, not a share re-identified
    assert map_answer([rows[2], copula]) == (
        "Worst case of mdav k=5: 60.00 % re-identified (proven). Worst case of copula: "
        "membership advantage between 0.310 and 0.400 (not proven)."
    )


def test_a_raced_familys_stopped_row_takes_the_best_of_its_runs_reports():
    """Two runs of sb report in turn: the row holds the best verified count and the
    lowest proven ceiling of either, each with what reached it."""
    from rlopt.risk.pair import stopped_row

    history = [
        {"seconds": 1.0, "lower": 20, "lower_source": "run 1", "upper": 50, "upper_source": "MILP bound"},
        {"seconds": 2.0, "lower": 24, "lower_source": "run 2", "upper": 55, "upper_source": "MILP bound (2)"},
        {"seconds": 3.0, "lower": 22, "lower_source": "run 1", "upper": 48, "upper_source": "hitting sets"},
    ]
    row = stopped_row("sb", history, 60)
    assert (row.n_correct, row.lower_source, row.bound, row.upper_source) == (24, "run 2", 48, "hitting sets")
    assert (row.status, row.seconds, row.rate) == ("interrupted", 3.0, 0.4)
    empty = stopped_row("ci", [], 60)
    assert (empty.n_correct, empty.bound, empty.history) == (None, None, None)
