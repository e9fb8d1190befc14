"""One measurement of a pair (:func:`rlopt.risk.pair.measure`): every command that
reports a worst case gets the same figures for the same pair."""

import json

import numpy as np
import pandas as pd
import pytest

from rlopt.data import validate_pair
from rlopt.milp import SolverOptions
from rlopt.risk.pair import measure
from tests._helpers import run_main


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    rng = np.random.default_rng(11)
    folder = tmp_path_factory.mktemp("pair")
    frame = pd.DataFrame(rng.normal(size=(50, 3)) * [1.0, 3.0, 10.0], columns=["a", "b", "c"])
    frame.to_csv(folder / "original.csv", index=False)
    return folder / "original.csv"


def test_risk_compare_and_tradeoff_give_one_pair_the_same_worst_case(original, tmp_path):
    """The same noise-masked file through ``rlopt risk``, one cell of ``rlopt compare``
    and one value of ``rlopt tradeoff``: the same lower end, ceiling and status."""
    masked = tmp_path / "masked.csv"
    mask = ["mask", original, "--method", "noise", "--variance-ratio", "0.3", "--seed", "0", "--out", masked]
    assert run_main(mask) == 0
    common = ["--families", "wm,owa", "--time-limit", "60"]
    assert run_main(["risk", original, masked, *common, "--folds", "0", "--json", tmp_path / "r.json"]) == 0
    grid = ["compare", original, "--methods", "noise:variance_ratio=0.3", "--out-dir", tmp_path / "map"]
    assert run_main([*grid, *common, "--no-progress"]) == 0
    values = ["tradeoff", original, "--method", "noise", "--values", "0.3", "--quiet"]
    assert run_main([*values, *common, "--json", tmp_path / "t.json"]) == 0

    headline = json.loads((tmp_path / "r.json").read_text())["headline"]
    n = headline["n_records"]
    assert headline["source"] != "pld"  # PLD is left out of the map: the pair must not hinge on it
    risk = (headline["n_correct"], headline["upper_n_correct"], headline["status"])
    (cell,) = pd.read_csv(tmp_path / "map" / "results.csv").to_dict(orient="records")
    compare = (round(cell["risk"] * n), round(cell["risk_upper"] * n), cell["risk_status"])
    rows = json.loads((tmp_path / "t.json").read_text())["rows"]
    assert {row["risk_status"] for row in rows} == {rows[0]["risk_status"]}  # one file, one worst case
    tradeoff = (round(rows[0]["risk"] * n), round(rows[0]["risk_upper"] * n), rows[0]["risk_status"])
    assert risk == compare == tradeoff
    assert headline["status"] == "proven"  # the comparison is of proofs, not of time limits


def test_measure_by_hand_on_four_records():
    """Four records whose masked versions lie nearest their own originals: AM and MD
    re-identify all four, wm's optimum does too, and the worst case 4 of 4 is proven;
    without PLD there is no PLD row, and a family's row and the per-record columns say
    the same count."""
    original = pd.DataFrame({"a": [0.0, 10, 20, 30], "b": [5.0, 0, 15, 10]})
    masked = original + np.array([[0.5, -0.5], [-0.5, 0.5], [0.5, 0.5], [-0.5, -0.5]])
    data = validate_pair(original, masked)
    measured = measure(data, ["wm"], margin=1e-5, options=SolverOptions(time_limit=30), with_pld=False)
    assert set(measured.baselines) == {"am", "md"}
    assert measured.baselines["am"].n_correct == measured.baselines["am"].n_correct_margin == 4
    (wm,) = measured.families
    assert (wm.n_correct, wm.bound, wm.status) == (4, 4, "optimal")
    assert measured.records["reid_wm"].sum() == 4 and measured.records["reid_am"].all()
    worst = measured.worst
    assert (worst.n_correct, worst.upper, worst.status) == (4, 4, "proven")
    assert not measured.failures and measured.attack is None
