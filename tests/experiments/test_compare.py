"""``rlopt compare``: the methods grammar, the Pareto front by hand, a small map end to
end (figures consistent with their parts, resumable, rendered), bad input."""

import re

import pandas as pd
import pytest

from rlopt.data import load_census
from rlopt.exceptions import InputError
from rlopt.experiments.compare import pareto_front, run_compare
from rlopt.masking.grammar import parse_methods, parse_values
from tests._helpers import dump_dom, run_main


def test_methods_grammar():
    assert (
        parse_values("2..6:2", "x") == parse_values("2-6:2", "x") == parse_values("2|4|6", "x") == [2, 4, 6]
    )
    parsed = parse_methods("mdav:k=2..6:2; rank-swapping:p=5|15.5; noise:variance_ratio=0.1")
    assert parsed == [
        ("mdav", {"k": [2.0, 4.0, 6.0]}),
        ("rank_swap", {"p": [5.0, 15.5]}),
        ("noise", {"variance_ratio": [0.1]}),
    ]
    assert parse_methods("dp_mdav:k=20,epsilon=1|10")[0] == (
        "dp_microaggregation",
        {"k": [20.0], "epsilon": [1.0, 10.0]},
    )
    for bad, message in [
        ("mdav:q=3", "a parameter of mdav: groups, k"),
        ("mdav:k=5..2", "rising range"),
        ("mdav:k=inf", "expected finite numbers"),
        ("swirl:p=1", "masking method 'swirl'"),
        ("pram:p=1", "a parameter of pram"),
        ("  ;  ", "expected e.g."),
    ]:
        with pytest.raises(InputError, match=message):
            parse_methods(bad)


def test_pareto_front_by_hand_keeps_what_an_interval_might_win():
    frame = pd.DataFrame(
        {
            "risk": [0.10, 0.20, 0.30, 0.05, 0.12],
            "risk_upper": [0.10, 0.20, 0.30, 0.40, 0.12],
            "il1s": [0.50, 0.30, 0.40, 0.45, 0.60],
        }
    )
    # cell 2 (0.30, 0.40) is dominated by cell 1 (0.20 <= 0.30, 0.30 < 0.40); cell 4 by
    # cell 0 (0.10 < 0.12, 0.50 < 0.60); cell 3's interval [0.05, 0.40] could be lower
    # than cell 0 (its lower end 0.05 < 0.10) and no cell's upper end is <= 0.05: kept
    assert pareto_front(frame, "il1s").tolist() == [True, True, False, True, False]


@pytest.fixture(scope="module")
def small_map(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compare")
    load_census().iloc[:120, :4].to_csv(folder / "o.csv", index=False)  # FEDTAX confidential
    methods = "mdav:k=3|8; rank_swap:p=10; noise:variance_ratio=0.2"
    result = run_compare(
        folder / "o.csv", methods, folder / "out", confidential=["FEDTAX"], time_limit=10, progress=False
    )
    return folder, methods, result


def test_a_small_map_is_consistent_with_its_parts(small_map):
    folder, _, result = small_map
    frame = result.frame
    assert list(frame["label"]) == ["mdav k=3", "mdav k=8", "rank_swap p=10", "noise variance_ratio=0.2"]
    for row in frame.to_dict(orient="records"):
        parts = [row["am_rate"], row["md_rate"], row["wm_rate"]]
        if not pd.isna(row["attack_rate"]):
            parts.append(row["attack_rate"])
        assert row["risk"] == max(parts)  # the lower end is the best verified count
        assert row["risk"] <= row["risk_upper"] and row["risk_upper"] >= row["wm_bound_rate"]
        assert (row["risk_status"] == "proven") == (row["risk"] == row["risk_upper"])
    assert list(frame["k_anonymity"][:2]) == [3, 8] and frame["k_anonymity"][2] == 1
    assert (frame["n_attributes"] == 3).all()  # the confidential attribute is released as it is
    assert (frame["l_diversity"] <= frame["k_anonymity"]).all() and frame["l_diversity"][1] >= 2
    assert frame["t_closeness"].between(0, 1).all() and (frame["dp_ratio_epsilon"] > 0).all()
    written = pd.read_csv(folder / "out" / "compare.csv")
    assert written["pareto"].tolist() == pareto_front(frame, "il1s").tolist()
    # the kinds of the quasi-identifiers, and no claim that they were released unmasked
    # (before: the file checked against itself called every column unmasked)
    assert result.kinds == "numeric: AFNLWGT, AGI, EMCONTRB"


def test_a_map_resumes_and_renders(small_map, tmp_path):
    folder, methods, result = small_map
    again = run_compare(
        folder / "o.csv", methods, folder / "out", confidential=["FEDTAX"], time_limit=10, progress=False
    )
    assert again.run.computed == [] and len(again.run.skipped) == 4
    pd.testing.assert_frame_equal(again.frame, result.frame)
    dom = dump_dom(result.page, tmp_path)
    assert "Pareto front" in dom
    rendered = re.findall(r'data-rendered="(\d+)x(\d+)"', dom)
    assert len(rendered) == 1 and all(int(w) > 50 and int(h) > 50 for w, h in rendered)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--methods", "mdav:k=500"], "k=500 is larger than the number of records"),
        (["--methods", "dp_mdav:k=2,epsilon=0"], "epsilon=0.0: expected a value greater than 0"),
        (["--methods", "mdav:k=3", "--confidential", "AGI,AFNLWGT,EMCONTRB"], "every column is confidential"),
        (["--methods", "mdav:k=3", "--columns", "AGI,AFNLWGT", "--confidential", "AGI"], "in one role"),
        (["--methods", "mdav:k=3", "--loss", "nope"], "loss='nope'"),
        (["--methods", "mdav:k=0"], "k=0.0: expected a value greater than or equal to 1"),
        (["--methods", "mdav:k=3", "--jobs", "0"], "jobs=0; expected an integer >= 1"),
    ],
)
def test_bad_parameters_end_in_one_error_line(tmp_path, capsys, args, message):
    load_census().iloc[:40, :3].to_csv(tmp_path / "o.csv", index=False)
    code = run_main(["compare", str(tmp_path / "o.csv"), "--out-dir", str(tmp_path / "out"), *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: ") and message in err[0], err
    assert not (tmp_path / "out").exists()  # a rejected option leaves nothing behind


def test_a_mixed_map_masks_each_part_with_its_methods(tmp_path):
    from rlopt.data import load_cps1985

    frame = load_cps1985().iloc[:60][["age", "wage", "occupation", "sector", "gender"]]
    frame.to_csv(tmp_path / "o.csv", index=False)
    result = run_compare(
        tmp_path / "o.csv",
        "pram:theta=0.6; mdav:k=3",
        tmp_path / "out",
        time_limit=5,
        loss="categorical_changed",
        progress=False,
    )
    pram, mdav = result.frame.to_dict(orient="records")
    # PRAM moves categories only: no numeric loss, some categorical change; MDAV the reverse
    assert pram["il1s"] == 0 and 0 < pram["categorical_changed"] < 1
    assert mdav["il1s"] > 0 and mdav["categorical_changed"] == 0
    assert pram["attack_rate"] is not None and mdav["k_anonymity"] >= 1
    for row in (pram, mdav):
        assert row["risk"] <= row["risk_upper"] and row["risk"] >= row["am_rate"]


def test_pareto_front_compares_cells_of_one_kind_only():
    frame = pd.DataFrame(
        {
            "risk": [0.10, 0.05],
            "risk_upper": [0.10, 0.05],
            "pmse": [0.01, 0.02],
            "risk_kind": ["re-identification", "membership"],
        }
    )
    # cell 0 would dominate cell 1 on one scale, but an advantage is not a share re-identified
    assert pareto_front(frame, "pmse").tolist() == [True, True]


def test_a_fully_synthetic_cell_is_on_the_map_with_its_membership_worst_case(tmp_path):
    load_census().iloc[:90, :3].to_csv(tmp_path / "o.csv", index=False)
    methods = "synthetic_copula:n_records=60; mdav:k=5"
    result = run_compare(
        tmp_path / "o.csv", methods, tmp_path / "out", time_limit=2, loss="pmse", progress=False
    )
    rows = result.frame.set_index("method")
    copula = rows.loc["synthetic_copula"]
    assert copula["risk_kind"] == "membership" and rows.loc["mdav", "risk_kind"] == "re-identification"
    # the map's figure is the calibrated one: out of sample, with its 95 % interval; the
    # in-sample worst case (chosen on the records it counts) beside it
    assert copula["risk_status"] == "estimate"
    assert copula["risk_low"] <= copula["risk"] <= copula["risk_upper"] <= 1
    assert copula["fixed_dcr"] <= copula["membership_in_sample"] <= copula["membership_in_sample_upper"] <= 1
    assert pd.isna(copula["il1s"]) and copula["pmse"] >= 0  # no record alignment: no il1s
    assert "out of sample" in (tmp_path / "out" / "compare.html").read_text()
    # on a record-aligned loss the synthetic cell is named, not placed, nor on the front
    again = run_compare(tmp_path / "o.csv", methods, tmp_path / "out", time_limit=2, progress=False)
    assert any("not on the map: synthetic_copula" in note for note in again.notes)
    assert not again.front[again.frame["method"].eq("synthetic_copula").to_numpy()].any()


def test_a_map_of_fully_synthetic_cells_only_renders(tmp_path, capsys):
    load_census().iloc[:90, :3].to_csv(tmp_path / "o.csv", index=False)
    args = [
        "compare",
        tmp_path / "o.csv",
        "--methods",
        "synthetic_copula:n_records=60",
        "--out-dir",
        tmp_path / "out",
    ]
    assert run_main([*args, "--time-limit", "2", "--no-progress"]) == 0  # was a KeyError on the default il1s
    out = capsys.readouterr().out
    assert "synthetic_copula n_records=60: membership advantage" in out and "out of sample" in out
    assert "(Pareto front)" not in out  # not on an il1s map: not on its front
    assert (tmp_path / "out" / "compare.html").exists()


def test_a_cell_without_the_loss_is_not_on_the_front():
    frame = pd.DataFrame({"risk": [0.1, 0.0], "risk_upper": [0.1, 0.0], "il1s": [0.5, float("nan")]})
    assert pareto_front(frame, "il1s").tolist() == [True, False]


def test_a_membership_estimate_is_dropped_from_the_front_only_below_its_whole_interval():
    frame = pd.DataFrame(
        {
            "risk": [0.30, 0.20],
            "risk_low": [0.10, 0.15],
            "risk_upper": [0.50, 0.25],
            "pmse": [0.02, 0.01],
            "risk_kind": ["membership", "membership"],
        }
    )
    # cell 1's upper end 0.25 is below cell 0's estimate but not below its interval's 0.10
    assert pareto_front(frame, "pmse").tolist() == [True, True]
    assert pareto_front(frame.drop(columns="risk_low"), "pmse").tolist() == [False, True]
