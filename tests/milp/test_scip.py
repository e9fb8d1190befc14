"""SCIP, the second exact solver (rlopt.milp.solvers.scip): the same optimum as HiGHS on
the same model, an interval when its limit stops it, the verification it makes, and
clear errors where PySCIPOpt is missing or the solver's name is unknown."""

import dataclasses
import json
import sys

import numpy as np
import pytest

import rlopt.milp.pipeline as pipeline
import rlopt.milp.solvers.scip as scip_module
from rlopt.data import validate_pair
from rlopt.exceptions import InputError, Interrupted, SolverError, SolverUnavailableError
from rlopt.families import get_learned_family
from rlopt.learn import LearnedDistanceLinkage
from rlopt.milp.formulation import build_model
from rlopt.milp.pipeline import Collaborators, verify
from rlopt.milp.solvers.options import SolverOptions, Termination
from rlopt.milp.solvers.scip import solve_file_scip, solve_model_scip, verifying_solver
from tests._helpers import MARGIN, fit, fit_with, noisy_file, run_main

needs_scip = pytest.mark.skipif(
    not scip_module.scip_available(), reason='PySCIPOpt missing: pip install "rlopt[scip]"'
)


@pytest.fixture(scope="module")
def small_file():
    return noisy_file(9, 20, 3)


@pytest.fixture
def no_pyscipopt(monkeypatch):
    """PySCIPOpt cannot be imported (as where the extra is not installed)."""
    monkeypatch.setitem(sys.modules, "pyscipopt", None)
    scip_module.load_pyscipopt.cache_clear()
    yield
    scip_module.load_pyscipopt.cache_clear()


@needs_scip
@pytest.mark.parametrize("name", ["wm", "owa", "ci", "sb_nc"])
def test_scip_proves_the_optimum_highs_proves(name, small_file):
    """The whole run (lazy rows, a family's cuts, the starts) with SCIP as its solver."""
    highs = fit(name, *small_file, time_limit=60)
    by_scip = fit_with(name, *small_file, time_limit=60, collaborators=Collaborators(solve=solve_model_scip))
    assert highs.status == by_scip.status == "optimal"
    assert by_scip.n_correct_verified == by_scip.n_correct == highs.n_correct_verified
    assert by_scip.solver["name"] == "scip" and by_scip.solver["status"] in ("optimal", "gaplimit")
    assert by_scip.solver["version"].count(".") == 2 and by_scip.solver["threads"] == 1


@needs_scip
def test_scip_adds_the_rows_of_each_round(small_file):
    """A model that starts with the nearest pairs only (lazy rows): SCIP's rounds add the
    rows its parameter violates, and the last round's optimum is the full model's."""
    data = validate_pair(*small_file)
    family = get_learned_family("wm")
    za, zb = data.encoded.za, data.encoded.zb
    full, _ = build_model(za, zb, family, margin=MARGIN, columns=data.columns, big_c="tight")
    expected = solve_model_scip(full, SolverOptions(time_limit=60))
    rows = fit_with("wm", *small_file, time_limit=60, collaborators=Collaborators(solve=solve_model_scip))
    assert rows.cut_rounds > 0 and expected.termination == Termination.OPTIMAL
    assert rows.n_correct_verified == len(za) - round(expected.incumbent)


@needs_scip
def test_a_time_limit_gives_scip_an_interval():
    original, masked = noisy_file(5, 60, 4, scale=(0.5, 0.8, 1.0, 1.2))
    data = validate_pair(original, masked)
    family = get_learned_family("sb")
    model, _ = build_model(data.encoded.za, data.encoded.zb, family, margin=MARGIN, columns=data.columns)
    solved = solve_model_scip(model, SolverOptions(time_limit=0.5))
    assert solved.termination == Termination.TIME_LIMIT and solved.solver["status"] == "timelimit"
    # what SCIP had when stopped (under load, maybe neither a solution nor a finite bound yet)
    if solved.incumbent is not None and solved.objective_bound is not None:
        assert solved.objective_bound <= solved.incumbent
    assert solved.seconds < 5
    result = fit_with(
        "sb", original, masked, time_limit=2, collaborators=Collaborators(solve=solve_model_scip)
    )
    assert result.status == "time_limit" and result.n_correct_verified < result.bound


@needs_scip
@pytest.mark.parametrize("suffix", [".lp", ".mps"])
def test_scip_solves_an_exported_model(tmp_path, suffix, small_file):
    path = tmp_path / f"model{suffix}"
    highs = LearnedDistanceLinkage("wm", margin=MARGIN, big_c="uniform", reductions="none")
    highs.fit(*small_file, export=path)
    solved = solve_file_scip(path, SolverOptions(time_limit=60))
    assert solved.termination == Termination.OPTIMAL and solved.objective_bound == pytest.approx(
        solved.incumbent
    )
    assert len(small_file[0]) - round(solved.incumbent) == highs.result_.n_correct_verified
    assert (
        solved.theta is not None
        and solved.theta.sum() == pytest.approx(1.0)
        and (solved.theta >= -1e-9).all()
    )
    with pytest.raises(InputError, match="model.txt"):
        solve_file_scip(tmp_path / "model.txt")


@needs_scip
def test_verify_re_proves_with_scip(tmp_path, capsys, small_file):
    original, masked = small_file
    original.to_csv(tmp_path / "a.csv", index=False)
    masked.to_csv(tmp_path / "b.csv", index=False)
    code = run_main(["learn", tmp_path / "a.csv", tmp_path / "b.csv", "--family", "ci", "--verify"]
                    + ["--json", tmp_path / "r.json"])  # fmt: skip
    out = capsys.readouterr()
    assert code == 0, out.err
    figures = json.loads((tmp_path / "r.json").read_text())
    v = figures["verification"]
    assert v["solver"] == "scip" and v["status"] == "optimal" and v["agrees"] is True and v["note"] is None
    assert v["n_correct"] == figures["n_correct_verified"] == v["bound"]
    assert f"verified by the plain model solved by SCIP {v['version']}: optimal {v['n_correct']}" in out.out
    assert "the optimum is confirmed" in out.out and "note:" not in out.out


@needs_scip
def test_verify_chooses_the_solver(small_file):
    data = validate_pair(*small_file)
    family = get_learned_family("owa")
    result, _ = pipeline.learn(data, family, margin=MARGIN, options=SolverOptions(time_limit=60))
    by = {
        name: verify(data, family, result, options=SolverOptions(), solver=name) for name in ("scip", "highs")
    }
    assert by["scip"]["solver"] == "scip" and by["highs"]["solver"] == "highs"
    assert by["scip"]["n_correct"] == by["highs"]["n_correct"] == result.n_correct_verified
    assert all(v["agrees"] is True for v in by.values())
    learner = LearnedDistanceLinkage("owa", margin=MARGIN, verify=True, verify_solver="highs").fit(
        *small_file
    )
    assert learner.result_.verification["solver"] == "highs" and learner.result_.verification["agrees"]


@needs_scip
def test_scip_proving_fewer_records_than_the_claim_is_an_error(monkeypatch, small_file):
    """SCIP's optimum (and so its ceiling) one record under the claimed optimum: two proofs
    disagree, the message names SCIP, and neither figure is reported."""
    real = pipeline.learn

    def scip_proves_one_fewer(data, family, **kwargs):
        result, distance = real(data, family, **kwargs)
        if kwargs["collaborators"].solve is solve_model_scip:
            ends = {"n_correct_verified": result.n_correct_verified - 1, "bound": result.bound - 1}
            result = dataclasses.replace(result, **ends)
        return result, distance

    monkeypatch.setattr(pipeline, "learn", scip_proves_one_fewer)
    with pytest.raises(SolverError, match=r"contradicted by the plain model's interval .* solved by SCIP \d"):
        LearnedDistanceLinkage("wm", margin=MARGIN, verify=True).fit(*small_file)


def test_an_unknown_solver_is_an_input_error(small_file):
    with pytest.raises(InputError, match="'gurobi'"):
        verifying_solver("gurobi")
    with pytest.raises(InputError, match="gurobi"):
        LearnedDistanceLinkage("wm", margin=MARGIN, verify=True, verify_solver="gurobi").fit(*small_file)


def test_scip_without_pyscipopt_is_an_input_error_before_the_fit(monkeypatch, no_pyscipopt, small_file):
    def never(*args, **kwargs):
        raise AssertionError("the fit started")

    monkeypatch.setattr("rlopt.learn.learn", never)
    with pytest.raises(
        InputError, match=r"solver 'scip', but PySCIPOpt is not installed \(pip install \"rlopt\[scip\]\"\)"
    ):
        LearnedDistanceLinkage("wm", verify=True, verify_solver="scip").fit(*small_file)
    with pytest.raises(SolverUnavailableError, match="rlopt\\[scip\\]"):
        solve_model_scip(None)
    assert verifying_solver("auto") == "highs" and verifying_solver("highs") == "highs"


def test_auto_re_proves_with_highs_and_says_why(tmp_path, capsys, no_pyscipopt, small_file):
    original, masked = small_file
    original.to_csv(tmp_path / "a.csv", index=False)
    masked.to_csv(tmp_path / "b.csv", index=False)
    code = run_main(["learn", tmp_path / "a.csv", tmp_path / "b.csv", "--family", "owa", "--verify"]
                    + ["--json", tmp_path / "r.json"])  # fmt: skip
    out = capsys.readouterr()
    assert code == 0, out.err
    figures = json.loads((tmp_path / "r.json").read_text())
    v = figures["verification"]
    assert v["solver"] == "highs" and v["agrees"] is True and v["n_correct"] == figures["n_correct_verified"]
    assert "verified by the plain model solved by HiGHS" in out.out and "the optimum is confirmed" in out.out
    assert 'note: SCIP is not installed (pip install "rlopt[scip]")' in out.out


def test_theta_is_read_by_name_only_when_every_index_is_there():
    assert np.array_equal(
        scip_module._theta_by_name({"theta(1)": 0.4, "theta(0)": 0.6, "K(0)": 1}), [0.6, 0.4]
    )
    assert scip_module._theta_by_name({"theta(0)": 0.6, "theta(2)": 0.4}) is None
    assert scip_module._theta_by_name({"K(0)": 1.0}) is None


def test_ctrl_c_before_the_plain_model_is_solved_keeps_the_claim(monkeypatch, small_file):
    """Ctrl-C while the plain model is built: the claim, and a verification with nothing yet."""
    real = pipeline.learn

    def ctrl_c_in_the_plain_model(data, family, **kwargs):
        if kwargs.get("big_c") == "uniform":
            raise KeyboardInterrupt
        return real(data, family, **kwargs)

    monkeypatch.setattr(pipeline, "learn", ctrl_c_in_the_plain_model)
    with pytest.raises(Interrupted) as stopped:
        LearnedDistanceLinkage("wm", margin=MARGIN, verify=True, verify_solver="highs").fit(*small_file)
    claim = stopped.value.partial
    assert claim.status == "optimal" and claim.n_correct_verified == fit("wm", *small_file).n_correct_verified
    v = claim.verification
    assert v["status"] == "interrupted" and v["n_correct"] is None and v["bound"] is None
    assert v["agrees"] is None and v["solver"] == "highs"
