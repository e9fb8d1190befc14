"""The officer's threshold (``rlopt risk --threshold``): parsed exactly, decided by hand
from headlines and rows, and on small files against the proven figure: a run told the
target stops each family once its interval answers it, and its answer agrees with the
worst case proven without a threshold."""

from fractions import Fraction

import pytest

from rlopt.exceptions import InputError
from rlopt.milp import SolverOptions
from rlopt.risk import assess_risk
from rlopt.risk.figures import FamilyRow, Headline
from rlopt.risk.threshold import FAILS, PASSES, UNDECIDED, Threshold, decide
from tests._helpers import noisy_file, run_main


@pytest.mark.parametrize(
    ("text", "share", "count", "target_of_400"),
    [
        ("5%", Fraction(1, 20), None, 20),
        ("0.05", Fraction(1, 20), None, 20),
        (0.05, Fraction(1, 20), None, 20),
        ("12.5 %", Fraction(1, 8), None, 50),
        ("0.1001", Fraction(1001, 10000), None, 41),  # the least count that reaches it
        ("100%", Fraction(1), None, 400),
        ("20 records", None, 20, 20),
        ("1 record", None, 1, 1),
    ],
)
def test_a_threshold_is_read_exactly(text, share, count, target_of_400):
    threshold = Threshold.parse(text)
    assert (threshold.share, threshold.count) == (share, count)
    assert threshold.records(400) == target_of_400


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ("0", "outside \\(0, 100 %\\]"),
        ("0%", "outside"),
        ("150%", "outside"),
        ("-1%", "outside"),
        ("5", "for a percentage, write 5%"),
        ("abc", "expected a percentage \\(5%\\), a share"),
        ("0 records", "no record"),
        ("5 apples", "expected a percentage"),
        (True, "expected a percentage"),
    ],
)
def test_a_bad_threshold_is_one_clear_error(bad, said):
    with pytest.raises(InputError, match=said):
        Threshold.parse(bad)


def test_a_count_above_the_file_is_refused():
    with pytest.raises(InputError, match="above the file's 30 records"):
        Threshold.parse("31 records").records(30)
    with pytest.raises(InputError, match="target=0"):
        SolverOptions(target=0)


def _row(family, lower, bound, status):
    return FamilyRow(family=family, source="learned", n_correct=lower, bound=bound, status=status)


def _headline(lower, upper, source, failed=(), stopped=()):
    status = "proven" if lower == upper else "interval"
    return Headline(
        rate=lower / 400, status=status, source=source, n_correct=lower, upper_n_correct=upper,
        n_records=400, failed=tuple(failed), stopped=tuple(stopped),
    )  # fmt: skip


def test_the_decision_worked_by_hand():
    ten = Threshold.parse("10%")  # 40 records
    rows = [_row("wm", 8, 8, "optimal"), _row("ci", 14, 29, "decided"), _row("sb", 18, 246, "time_limit")]
    undecided = decide(ten, _headline(18, 246, "sb"), rows, 400)
    assert (undecided.verdict, undecided.below, undecided.open) == (UNDECIDED, ("wm", "ci"), ("sb",))
    assert undecided.exit_code == 4 and "sb is between 18 and 246 records" in undecided.text
    rows[2] = _row("sb", 18, 39, "decided")
    passes = decide(ten, _headline(18, 39, "sb"), rows, 400)
    assert passes.verdict == PASSES and passes.exit_code == 0
    assert "no distance of wm, ci, sb re-identifies more than 39 (9.75 %), proven" in passes.text
    rows[2] = _row("sb", 40, 246, "decided")
    fails = decide(ten, _headline(40, 246, "sb"), rows, 400)
    assert (fails.verdict, fails.by, fails.exit_code) == (FAILS, "sb", 3)
    # a family that failed bounds nothing: never a pass, and a count that reaches T still fails
    failed = decide(
        ten, _headline(8, 39, "wm", failed=["sb"]), rows[:2] + [_row("sb", None, None, "failed")], 400
    )
    assert failed.verdict == UNDECIDED and failed.exit_code == 1 and "sb failed" in failed.text
    stopped = decide(ten, _headline(8, 39, "wm", stopped=["sb"]), rows[:2], 400)
    assert stopped.verdict == UNDECIDED and "did not finish" in stopped.text
    sampled = [_row("wm", 12, None, "sampled")]  # a lower end on a large file, no ceiling
    assert "wm is between 12 and 400 records" in decide(ten, _headline(12, 400, "wm"), sampled, 400).text


@pytest.mark.parametrize("seed", [0, 1])
def test_the_decision_agrees_with_the_proven_figure(seed):
    original, masked = noisy_file(seed, 30, 3, scale=(0.6, 0.9, 1.2))
    plain = assess_risk(original, masked, families=["wm", "ci"], folds=0, time_limit=60)
    assert plain.headline.proven
    optimum = plain.headline.n_correct
    for target in (max(1, optimum - 3), optimum, optimum + 1, min(30, optimum + 4)):
        run = assess_risk(
            original, masked, families=["wm", "ci"], folds=0, time_limit=60, threshold=f"{target} records"
        )
        assert run.decision.target == target
        assert run.decision.verdict == (FAILS if optimum >= target else PASSES)
        for row, proven in zip(run.families, plain.families):  # each interval holds the optimum
            assert row.n_correct <= proven.n_correct <= row.bound
            assert row.status in ("optimal", "decided")
        assert run.figures["decision"]["verdict"] == run.decision.verdict
        assert run.figures["inputs"]["target"] == target


def test_the_command_line_answers_with_its_exit_code(tmp_path, capsys):
    original, masked = noisy_file(0, 30, 3, scale=(0.6, 0.9, 1.2))
    original.to_csv(tmp_path / "o.csv", index=False)
    masked.to_csv(tmp_path / "m.csv", index=False)
    files = [tmp_path / "o.csv", tmp_path / "m.csv", "--folds", "0", "--families", "wm", "--quiet"]
    assert run_main(["risk", *files, "--threshold", "1 record"]) == 3
    assert capsys.readouterr().out.startswith("Fails the threshold 1 record")
    assert run_main(["risk", *files, "--threshold", "100%"]) == 0
    assert capsys.readouterr().out.startswith("Passes the threshold 100%")
    assert run_main(["risk", *files, "--threshold", "5"]) == 2
    err = capsys.readouterr().err
    assert "threshold '5' is outside (0, 100 %]" in err and "Traceback" not in err


def test_a_run_told_the_target_stops_once_its_interval_answers_it():
    from rlopt.data import validate_pair
    from rlopt.families import get_learned_family
    from rlopt.milp.pipeline import learn

    data = validate_pair(*noisy_file(2, 25, 3, scale=(0.6, 0.9, 1.2)))
    sb = get_learned_family("sb")
    full, _ = learn(data, sb, margin=1e-5, options=SolverOptions(time_limit=60))
    assert full.status == "optimal" and full.n_correct_verified == 12  # 4 s on 2 cores
    fails, _ = learn(data, sb, margin=1e-5, options=SolverOptions(time_limit=60, target=2))
    assert fails.status == "decided" and fails.n_correct_verified >= 2  # a verified count reached it
    assert fails.solver.get("not_started") == "the interval already answers the target"
    assert fails.n_correct_verified <= full.n_correct_verified <= fails.bound


def test_a_map_cell_is_decided_from_its_interval():
    from rlopt.risk.threshold import cell_verdict

    ten = Threshold.parse("10%")
    cell = {"n_records": 400, "risk_kind": "re-identification", "risk_status": "interval"}
    assert cell_verdict(ten, cell | {"risk": 0.1, "risk_upper": 0.5}) == FAILS  # 40 records reach it
    assert cell_verdict(ten, cell | {"risk": 0.02, "risk_upper": 0.0975}) == PASSES  # 39 < 40
    assert cell_verdict(ten, cell | {"risk": 0.02, "risk_upper": 0.1}) == UNDECIDED
    assert cell_verdict(ten, cell | {"risk": float("nan"), "risk_upper": float("nan")}) == ""  # failed
    assert cell_verdict(ten, cell | {"risk_kind": "membership", "risk": 0.3, "risk_upper": 0.4}) == ""


def test_compares_map_has_each_cells_decision(tmp_path, capsys):
    from rlopt.data import load_census

    load_census().iloc[:60, :3].to_csv(tmp_path / "o.csv", index=False)
    args = ["compare", tmp_path / "o.csv", "--methods", "mdav:k=3|20", "--out-dir", tmp_path / "out",
            "--time-limit", "5", "--threshold", "20%", "--no-progress"]  # fmt: skip
    assert run_main(args) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    import pandas as pd

    table = pd.read_csv(tmp_path / "out" / "compare.csv")
    for row in table.to_dict(orient="records"):
        lower, upper = round(row["risk"] * 60), round(row["risk_upper"] * 60)
        assert row["decision"] == (FAILS if lower >= 12 else PASSES if upper < 12 else UNDECIDED)
        assert f"{row['decision']} the threshold" in out
    assert (
        "<th>decision</th>" in (tmp_path / "out" / "compare.html").read_text()
    )  # a column of the map's tables


def test_racing_workers_give_the_same_decision():
    original, masked = noisy_file(1, 30, 3, scale=(0.6, 0.9, 1.2))
    runs = [
        assess_risk(original, masked, families=["wm", "ci"], folds=0, time_limit=60, threshold=t, n_jobs=jobs)
        for jobs in (1, 3)
        for t in ("1 record", "100%")
    ]
    assert [r.decision.verdict for r in runs] == [FAILS, PASSES] * 2
