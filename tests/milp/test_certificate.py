"""The anytime certificate: the interval of a learning run over time,
reported during the solve, printed by ``rlopt learn`` and plotted in the risk report."""

import json
import math
import re
import sys
import time
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from markupsafe import escape
from typer.testing import CliRunner

from rlopt import build, published_recipe
from rlopt.cli import app
from rlopt.data import standardise
from rlopt.families import get_family
from rlopt.learn import LearnedDistanceLinkage
from rlopt.milp import SolverOptions, build_model, solve_model
from rlopt.milp.ceilings.certificate import Certificate
from rlopt.milp.pipeline import Collaborators
from rlopt.milp.solvers.runtime import Progress, StopRequest
from rlopt.report import render_risk_report
from rlopt.risk import assess_risk
from tests._helpers import fit_with, noisy_file

LINE = r"^ +\d+\.\d s  \[(\d+|-), (\d+)\]  lower: .+  upper: .+$"


def assert_monotone(history):
    lowers = [e["lower"] for e in history if e["lower"] is not None]
    assert lowers == sorted(lowers)
    assert [e["upper"] for e in history] == sorted((e["upper"] for e in history), reverse=True)
    assert [e["seconds"] for e in history] == sorted(e["seconds"] for e in history)


@pytest.fixture(scope="module")
def m433(tmp_path_factory):
    original, masked = build(published_recipe("M4-33"))
    folder = tmp_path_factory.mktemp("m433")
    original.to_csv(folder / "original.csv", index=False)
    masked.to_csv(folder / "masked.csv", index=False)
    return original, masked, folder


def test_certificate_records_only_improvements():
    seen = []
    certificate = Certificate(10, progress=seen.append)
    assert certificate.events == []  # the starting ceiling (the number of records) is no event
    assert certificate.found(3, "neutral start (AM)")
    assert not certificate.found(3, "solver") and not certificate.found(2, "solver")
    assert certificate.bounded(8, "screening")
    assert not certificate.bounded(8, "MILP bound") and not certificate.bounded(9, "MILP bound")
    assert certificate.found(5, "solver") and certificate.bounded(6, "MILP bound")
    assert [(e["lower"], e["lower_source"], e["upper"], e["upper_source"]) for e in seen] == [
        (3, "neutral start (AM)", 10, "number of records"),
        (3, "neutral start (AM)", 8, "screening"),
        (5, "solver", 8, "screening"),
        (5, "solver", 6, "MILP bound"),
    ]
    assert certificate.to_list() == seen and certificate.to_list() is not certificate.events
    assert_monotone(seen)


def test_a_ceiling_before_any_count_has_no_lower_end():
    certificate = Certificate(10)
    assert certificate.bounded(7, "MILP bound")
    assert certificate.events[0]["lower"] is None and certificate.events[0]["lower_source"] is None


def test_m433_history_is_monotone_and_ends_at_the_result(m433):
    original, masked, _ = m433
    seen = []
    result = LearnedDistanceLinkage("wm", time_limit=20).fit(original, masked, progress=seen.append).result_
    history = result.history
    assert history and history == seen == result.to_dict()["history"]
    assert_monotone(history)
    last = history[-1]
    assert [last["lower"], last["upper"]] == [result.n_correct_verified, result.bound]
    assert last["lower_source"] == result.lower_source
    assert all(e["lower"] is None or e["lower"] <= result.bound for e in history)
    assert all(e["upper"] >= result.n_correct_verified for e in history)


def test_the_solver_reports_during_its_run():
    """With the reductions off (one run, no start) HiGHS finds solutions and raises
    its bound while it runs: events arrive before the run's own report at its end."""
    original, masked = noisy_file(3, n_records=60, n_attributes=3, scale=(0.6, 0.8, 1.0))
    calls, events = [], []

    def recorded(model, options, *, on_improve, **kwargs):
        def report(incumbent, bound, theta):
            calls.append(time.perf_counter())
            on_improve(incumbent, bound, theta)

        return solve_model(model, options, on_improve=report, **kwargs)

    result = fit_with(
        "wm",
        original,
        masked,
        margin=1e-4,
        reductions="none",
        time_limit=5,
        progress=lambda e: events.append((time.perf_counter(), e)),
        collaborators=Collaborators(solve=recorded),
    )
    assert result.cut_rounds == 0  # one run: the last call is the report after it
    during = [
        e
        for t, e in events
        if t < calls[-1] and (e["lower_source"] == "solver" or e["upper_source"] == "MILP bound")
    ]
    assert during, [e for _, e in events]
    assert_monotone(result.history)
    assert all(e["seconds"] < result.seconds["total"] for e in during)


def event(dual, primal, solution=(), objective=math.inf):
    """A HiGHS callback event as highspy passes it (the fields read here)."""
    return SimpleNamespace(
        data_out=SimpleNamespace(
            mip_dual_bound=dual,
            mip_primal_bound=primal,
            objective_function_value=objective,
            mip_solution=np.asarray(solution, dtype=float),
        ),
        interrupt=lambda: None,
    )


def progress(on_improve):
    """The in-run reporter of a run whose theta is in HiGHS's columns 2 and 0."""
    reporter = Progress(on_improve, [], StopRequest())
    reporter.columns = np.array([2, 0])
    reporter.streams = (sys.stdout, sys.stderr)
    return reporter


def test_in_run_reports_solutions_always_and_bounds_at_most_twice_a_second():
    calls = []
    reporter = progress(lambda *args: calls.append(args))
    reporter.solution(event(-math.inf, 9.0, [0.25, 1.0, 0.75], 9.0))
    reporter.solution(event(3.2, 8.0, [0.5, 1.0, 0.5], 8.0))
    assert [(a, b) for a, b, _ in calls] == [(9.0, None), (8.0, 3.2)]
    np.testing.assert_array_equal(calls[0][2], [0.75, 0.25])  # theta from its columns
    reporter.poll(event(3.9, 8.0))  # the same ceiling: nothing new
    reporter.poll(event(4.5, 8.0))  # a higher one, but within half a second
    assert len(calls) == 2
    reporter.last -= Progress.BOUND_INTERVAL
    reporter.poll(event(4.5, 8.0))
    assert calls[-1] == (None, 4.5, None)
    reporter.last -= Progress.BOUND_INTERVAL
    reporter.poll(event(7.2, 8.0))  # a bound that meets the incumbent is left to the round's report
    reporter.solution(event(8.0, 8.0, [0.5, 1.0, 0.5], 8.0))
    assert len(calls) == 4 and calls[-1][:2] == (8.0, None)


@pytest.mark.parametrize("error", [KeyboardInterrupt(), ValueError("boom")])
def test_an_error_in_the_callback_stops_the_run_without_raising_into_highs(error):
    """Raised at the first report (during the run): a KeyboardInterrupt ends the solve
    as Ctrl-C does, with its incumbent and bound; another error is raised after the run."""
    original, masked = noisy_file(4, n_records=60, n_attributes=3, scale=(0.6, 0.8, 1.0))
    model, _ = build_model(
        standardise(masked.to_numpy()),
        standardise(original.to_numpy()),
        get_family("wm"),
        margin=1e-4,
        columns=("a", "b", "c"),
    )
    calls = []

    def on_improve(incumbent, bound, theta):
        calls.append(incumbent)
        if len(calls) == 1:
            raise error

    if isinstance(error, KeyboardInterrupt):
        result = solve_model(model, SolverOptions(time_limit=20), on_improve=on_improve)
        assert result.interrupted and result.termination == "interrupted" and result.incumbent is not None
        assert len(calls) == 2  # the first report, then the run's own at its end
    else:
        with pytest.raises(ValueError, match="boom"):
            solve_model(model, SolverOptions(time_limit=20), on_improve=on_improve)
        assert len(calls) == 1


def test_learn_prints_the_interval_on_stderr(m433):
    _, _, folder = m433
    result = CliRunner().invoke(
        app,
        [
            "learn",
            str(folder / "original.csv"),
            str(folder / "masked.csv"),
            "--time-limit",
            "20",
            "--json",
            "-",
            "--progress",
        ],
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)  # stdout holds the JSON alone
    *lines, summary = result.stderr.splitlines()  # with --json -, the summary is on stderr too
    assert summary.startswith("wm: ")
    assert len(lines) == len(figures["history"]) >= 1
    assert all(re.match(LINE, line) for line in lines), lines
    last = re.match(LINE, lines[-1])
    assert [int(last[1]), int(last[2])] == [figures["n_correct_verified"], figures["bound"]]
    original, masked = noisy_file(1, n_records=15)
    original.to_csv(folder / "o15.csv", index=False)
    masked.to_csv(folder / "m15.csv", index=False)
    quiet = CliRunner().invoke(
        app, ["learn", str(folder / "o15.csv"), str(folder / "m15.csv"), "--margin", "1e-4"]
    )  # by default only on a terminal
    assert quiet.exit_code == 0 and quiet.stderr == "", quiet.output


def test_the_report_plots_each_family_interval(small_pair, tmp_path):
    original, masked = small_pair
    assessment = assess_risk(original, masked, families=["wm"], time_limit=10, folds=0)
    (row,) = assessment.families
    history = row.history or LearnedDistanceLinkage("wm", time_limit=10).fit(original, masked).result_.history
    assessment.families = [replace(row, history=None)]
    assert "How each interval narrowed" not in render_risk_report(assessment, tmp_path / "r.html").read_text()
    assessment.families = [replace(row, history=history)]
    html = render_risk_report(assessment, tmp_path / "r.html").read_text()
    last = history[-1]
    assert 'alt="wm: the interval over the run" src="data:image/png;base64,' in html
    assert f"wm: final interval [{last['lower']}, {last['upper']}] of 30 records" in html
    assert f"by {escape(last['lower_source'])}" in html


def test_a_count_the_solver_reported_is_kept_when_its_last_round_ends_lower():
    """The solver reports an improving parameter during its run, then ends on a worse one
    (a later round of lazy rows, stopped): the result's lower end is the reported count,
    with its parameter, never the last round's lower count."""
    original, masked = noisy_file(3, n_records=60, n_attributes=3, scale=(0.6, 0.8, 1.0))
    family = get_family("wm")
    neutral = family.neutral(3)

    def ends_on_the_neutral_parameter(model, options, *, on_improve, **kwargs):
        solved = solve_model(model, options, on_improve=on_improve, **kwargs)
        on_improve(solved.incumbent, None, solved.theta)  # the best parameter, reported
        return replace(solved, termination="time_limit", incumbent=None, theta=neutral)

    result = fit_with(
        "wm",
        original,
        masked,
        margin=1e-4,
        reductions="none",
        time_limit=20,
        collaborators=Collaborators(solve=ends_on_the_neutral_parameter),
    )
    reported = [e["lower"] for e in result.history if e["lower_source"] == "solver"]
    assert reported and result.n_correct_verified == max(reported)
    assert result.lower_source == "solver"
    assert int(result.correct.sum()) == result.n_correct_verified
