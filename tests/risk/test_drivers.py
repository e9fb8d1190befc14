"""Attribute drivers (rlopt.risk.drivers): the worst case without each attribute, what the
parameters say of each attribute, and the records every method re-identifies."""

import json

import numpy as np
import pandas as pd
import pytest

from rlopt.exceptions import InputError, NonFiniteError
from rlopt.families import FAMILIES
from rlopt.report import render_risk_report
from rlopt.risk import assess_risk
from rlopt.risk.drivers import RECORD_GROUPS, parameter_shares, record_groups
from rlopt.risk.figures import FamilyRow
from tests._helpers import noisy_file, run_main


def _one_attribute_unmasked(n_records=30, seed=0):
    """``a`` released as it is, ``b`` and ``c`` drowned in noise (3 sd)."""
    rng = np.random.default_rng(seed)
    original = pd.DataFrame(rng.normal(size=(n_records, 3)), columns=["a", "b", "c"])
    masked = original.copy()
    masked[["b", "c"]] += rng.normal(size=(n_records, 2)) * 3.0
    return original, masked


@pytest.fixture(scope="module")
def unmasked_a():
    original, masked = _one_attribute_unmasked()
    return assess_risk(original, masked, families=["wm"], time_limit=10, folds=0, drivers=True)


def test_the_unmasked_attribute_carries_the_risk(unmasked_a):
    """By hand: a's values are distinct and equal in both files, so weight 1 on a
    re-identifies all 30 records, with or without b or c (drop 0, proven); without a
    only the noise is left, and the worst case falls far below 30."""
    drivers = unmasked_a.drivers
    assert drivers["full"] == {**drivers["full"], "lower": 30, "upper": 30, "status": "proven"}
    first, *others = drivers["ranking"]
    assert first["rank"] == 1 and first["attribute"] == "a"
    assert first["lower"] < 20 and first["drop"] == 30 - first["lower"]
    assert sorted(row["attribute"] for row in others) == ["b", "c"]
    for row in others:
        assert (row["lower"], row["upper"], row["status"], row["drop"], row["drop_exact"]) == (
            30,
            30,
            "proven",
            0,
            True,
        )
        (wm,) = row["families"]
        assert wm == {
            "family": "wm",
            "lower": 30,
            "upper": 30,
            "upper_source": "number of records",  # 30 of 30: nothing lower is needed
            "status": "optimal",
            "drop": 0,
            "drop_exact": True,
        }
    weights = unmasked_a.params["wm"]["weights"]
    assert drivers["parameters"]["wm"]["shares"] == pytest.approx(weights)
    assert unmasked_a.inputs["drivers_time_limit"] == pytest.approx(10 / 3)


def test_the_drivers_are_plain_json_in_the_figures(unmasked_a):
    text = json.dumps(unmasked_a.figures["drivers"], allow_nan=False)  # no numpy type, no NaN
    assert json.loads(text) == unmasked_a.drivers


def _contained(full: FamilyRow, without: dict) -> None:
    """Without an attribute the intruder has less: a proven figure never exceeds the whole
    file's proven figure; where either is an interval, the verified lower end without the
    attribute never exceeds the whole file's ceiling."""
    assert without["drop"] == full.n_correct - without["lower"]
    if full.status == "optimal" and without["status"] == "optimal":
        assert without["drop_exact"] and without["drop"] >= 0, (full, without)
    else:
        assert not without["drop_exact"]
        assert full.bound is not None and without["lower"] <= full.bound, (full, without)


@pytest.mark.parametrize("family", ["wm", "ci", "sb"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_leaving_an_attribute_out_never_raises_a_proven_figure(seed, family):
    original, masked = noisy_file(seed, 12, 3)
    result = assess_risk(
        original, masked, families=[family], time_limit=10, folds=0, drivers=True, drivers_time_limit=10
    )
    (full,) = result.families
    for row in result.drivers["ranking"]:
        (without,) = row["families"]
        assert without["family"] == family
        _contained(full, without)
        # the whole file's ceiling bounds the family without an attribute (it has a zero weight)
        assert without["upper"] is not None and without["upper"] <= full.bound
    proven = [row for row in result.drivers["ranking"] if row["families"][0]["status"] == "optimal"]
    assert proven and full.status == "optimal", "nothing proven: the property was not checked"


def test_leaving_an_attribute_out_of_a_mixed_file():
    rng = np.random.default_rng(5)
    n_records = 24
    original = pd.DataFrame(
        {
            "x": rng.normal(size=n_records),
            "y": rng.normal(size=n_records),
            "colour": rng.choice(["red", "green", "blue", "grey"], size=n_records),
        }
    )
    masked = original.assign(
        x=original["x"] + rng.normal(size=n_records) * 0.5,
        y=original["y"] + rng.normal(size=n_records),
        colour=np.where(rng.random(n_records) < 0.2, "red", original["colour"]),
    )
    result = assess_risk(original, masked, families=["wm"], time_limit=10, folds=0, drivers=True)
    assert [k["kind"] for k in result.inputs["kinds"]] == ["numeric", "numeric", "nominal"]
    assert sorted(row["attribute"] for row in result.drivers["ranking"]) == ["colour", "x", "y"]
    (full,) = result.families
    for row in result.drivers["ranking"]:
        _contained(full, row["families"][0])
    assert sum(result.drivers["parameters"]["wm"]["shares"].values()) == pytest.approx(1.0)


def test_each_record_is_in_one_group_matching_its_reid_columns(unmasked_a):
    records = unmasked_a.records.set_index("record")
    groups = unmasked_a.drivers["records"]["groups"]
    assert set(groups) == set(RECORD_GROUPS)
    members = [record for group in groups.values() for record in group["records"]]
    assert sorted(members) == sorted(records.index) and len(members) == len(set(members))
    assert all(group["n"] == len(group["records"]) for group in groups.values())
    fixed = ["reid_am", "reid_md", "reid_pld"]
    for record in groups["exposed"]["records"]:
        assert records.loc[record, ["reid_wm", *fixed]].all()
    for record in groups["learned_only"]["records"]:
        assert records.loc[record, "reid_wm"] and not records.loc[record, fixed].any()
    for record in groups["some_fixed"]["records"]:
        row = records.loc[record, ["reid_wm", *fixed]]
        assert row[fixed].any() and not row.all()
    for record in groups["none"]["records"]:
        assert not records.loc[record, ["reid_wm", *fixed]].any()
    assert groups["learned_only"]["n"] > 0  # AM, MD and PLD see the noise; wm does not


def test_record_groups_by_hand():
    records = pd.DataFrame(
        {
            "record": ["p", "q", "r", "s", "t"],
            "reid_am": [True, False, True, False, False],
            "reid_wm": [True, True, False, False, True],
            "reid_ci": [True, False, False, False, False],
            "reid_attack": [True, False, False, False, True],
        }
    )
    out = record_groups(records, ["wm", "ci", "sb"])  # sb failed: it has no column
    assert out["methods"] == {"learned": ["reid_wm", "reid_ci"], "fixed": ["reid_am", "reid_attack"]}
    assert {name: g["records"] for name, g in out["groups"].items()} == {
        "exposed": ["p"],
        "learned_only": ["q"],
        "some_fixed": ["r", "t"],
        "none": ["s"],
    }


def test_what_the_parameters_say_of_each_attribute():
    columns = ("a", "b", "c")
    q = [[0.5, 0.3, -0.2], [0.3, 0.7, 0.0], [-0.2, 0.0, -0.2]]
    params = {
        "wm": {"family": "wm", "weights": {"a": 0.25, "b": 0.75, "c": 0.0}},
        "owa": {"family": "owa", "weights_by_rank": [0.5, 0.5, 0.0]},
        "sb": {"family": "sb", "columns": list(columns), "Q": q},
    }
    rows = [FamilyRow(family=name, source="learned", status="optimal") for name in params]
    shares = parameter_shares(params, rows, columns)
    assert shares["wm"]["shares"] == {"a": 0.25, "b": 0.75, "c": 0.0}
    assert shares["owa"]["shares"] is None and "ranks" in shares["owa"]["meaning"]
    assert shares["sb"]["shares"] == pytest.approx({"a": 0.5, "b": 0.7, "c": -0.2})
    measure = np.array([0.0, 0.2, 0.3, 0.6, 0.1, 0.4, 0.5, 1.0])  # by bitmask of (a, b, c)
    ci = {
        "family": "ci",
        "columns": list(columns),
        "measure": [
            {"subset": [c for k, c in enumerate(columns) if m >> k & 1], "value": v}
            for m, v in enumerate(measure)
        ],
    }
    ci_shares = FAMILIES["ci"].attribute_shares(ci, columns)
    assert ci_shares == FAMILIES["ci"].shapley_values(ci, columns) and sum(
        ci_shares.values()
    ) == pytest.approx(1)
    params["wm"]["weights"]["c"] = float("nan")
    with pytest.raises(NonFiniteError, match="wm's share of c is nan"):
        parameter_shares(params, rows, columns)


def test_a_file_of_one_attribute_has_no_drivers():
    original, masked = noisy_file(0, 12, 1)
    with pytest.raises(InputError, match=r"drivers on a file of 1 attribute \(a\); expected at least 2"):
        assess_risk(original, masked, families=["wm"], folds=0, drivers=True)
    with pytest.raises(InputError, match="drivers_time_limit=-1"):
        assess_risk(original, masked, families=["wm"], folds=0, drivers=True, drivers_time_limit=-1)


def test_the_report_has_the_drivers_section_only_when_asked(unmasked_a, tmp_path):
    html = render_risk_report(unmasked_a, tmp_path / "r.html").read_text()
    assert "Which attribute carries the risk" in html
    section = html[html.index('id="drivers-ranking"') : html.index('id="drivers-records"')]
    ranking = unmasked_a.drivers["ranking"]
    assert section.index(">a<") < section.index(f">{ranking[1]['attribute']}<")
    assert f"{ranking[0]['lower']} to " in section or f"{ranking[0]['lower']} (proven)" in section
    assert "30 (proven)" in section and "wm share" in section
    exposed = unmasked_a.drivers["records"]["groups"]["learned_only"]
    assert f"<td>{exposed['n']}</td>" in html
    unmasked_a.drivers, kept = None, unmasked_a.drivers
    try:
        plain = render_risk_report(unmasked_a, tmp_path / "plain.html").read_text()
    finally:
        unmasked_a.drivers = kept
    assert "Which attribute carries the risk" not in plain


def test_cli_risk_drivers_prints_the_table_and_writes_the_json(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    original, masked = _one_attribute_unmasked(20, seed=1)
    original.to_csv("a.csv", index=False)
    masked.to_csv("b.csv", index=False)
    args = ["risk", "a.csv", "b.csv", "--families", "wm", "--folds", "0", "--time-limit", "6"]
    assert run_main([*args, "--quiet", "--drivers", "--json", "out.json"]) == 0
    out = capsys.readouterr().out
    assert "drivers: the worst case without each attribute (2 s per family); whole file 20 (proven)" in out
    table = out[out.index("drivers:") :].splitlines()
    assert table[1].split() == ["rank", "attribute", "without", "it", "drop", "wm"]
    assert table[2].split()[:2] == ["1", "a"] and "records: " in out
    figures = json.loads((tmp_path / "out.json").read_text())
    assert figures["drivers"]["ranking"][0]["attribute"] == "a" and figures["inputs"]["drivers"] is True


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--drivers"], "drivers on a file of 1 attribute (a); expected at least 2"),
        (["--drivers-limit", "3"], "--drivers-limit 3 needs --drivers"),
        (["--drivers", "--drivers-limit", "0"], "--drivers-limit 0; expected seconds > 0"),
    ],
)
def test_cli_bad_drivers_use_is_one_error_line(tmp_path, monkeypatch, capsys, extra, message):
    monkeypatch.chdir(tmp_path)
    original, masked = noisy_file(0, 12, 1)
    original.to_csv("a.csv", index=False)
    masked.to_csv("b.csv", index=False)
    code = run_main(["risk", "a.csv", "b.csv", "--families", "wm", "--folds", "0", *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: ") and message in err[0], err


def test_ctrl_c_while_the_drivers_run_keeps_the_whole_files_figures():
    """Ctrl-C during a run without an attribute: the whole file's baselines and families,
    measured before, are what is kept."""
    from rlopt.exceptions import Interrupted

    def stop_without_an_attribute(message):
        if message.startswith("drivers: without"):
            raise KeyboardInterrupt

    original, masked = noisy_file(0, 12, 3)
    with pytest.raises(Interrupted) as caught:
        assess_risk(
            original,
            masked,
            families=["wm"],
            time_limit=10,
            folds=0,
            drivers=True,
            progress=stop_without_an_attribute,
        )
    stopped = caught.value.partial  # the assessment of what finished: the whole file's figures
    (wm,) = stopped.families
    assert wm.family == "wm" and wm.status == "optimal" and set(stopped.baselines) >= {"am", "md", "pld"}
    assert stopped.stopped == ["the attribute drivers"] and stopped.headline.n_correct >= wm.n_correct
    assert stopped.drivers is None and not stopped.complete


def test_correlated_attributes_are_said_together_where_the_two_views_can_disagree():
    """Two attributes that move together (r about 0.999) share a distance's weight and
    cost little when one is dropped: the drivers say so, naming them; an independent
    attribute is not named."""
    import numpy as np
    import pandas as pd

    from rlopt.data import validate_pair
    from rlopt.risk.drivers import correlated_notes

    rng = np.random.default_rng(0)
    a = rng.normal(size=80)
    frame = pd.DataFrame({"a": a, "b": 2 * a + rng.normal(scale=0.05, size=80), "c": rng.normal(size=80)})
    (note,) = correlated_notes(validate_pair(frame, frame + rng.normal(scale=0.1, size=frame.shape)))
    assert note.startswith("a and b correlate in the original file (|r| up to 1.00)")
    assert "c" not in note.split(" correlate")[0]
