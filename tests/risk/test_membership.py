"""The worst-case membership attack on a fully synthetic release (rlopt.risk.membership):
the threshold by hand, the optimum against a brute force over the parameter, the known
answers of a copying and an independent generator, and the containment of the fixed
Euclidean attack in wm."""

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from rlopt.cli import app
from rlopt.exceptions import InputError
from rlopt.families import get_learned_family
from rlopt.masking import masking_spec
from rlopt.risk.membership import membership_risk, split_release, standardised
from rlopt.risk.membership.regions import best_threshold
from tests._helpers import run_main

runner = CliRunner()


def test_best_threshold_by_hand():
    # n_m = 3, n_h = 2: units = 2 TP - 3 FP; at 0.9 TP = 3, FP = 1: 3 units, TPR 1 - FPR 1/2
    assert best_threshold(np.array([0.1, 0.5, 0.9]), np.array([0.4, 1.0])) == (0.9, 3, 3, 1)
    # a member and a held-out record at the same distance: no threshold separates them
    assert best_threshold(np.array([0.2]), np.array([0.2]))[1] == 0


def _frames(rng, n_m, n_h, n_s, p=2):
    names = [f"x{k}" for k in range(p)]
    return [pd.DataFrame(rng.normal(size=(n, p)), columns=names) for n in (n_m, n_h, n_s)]


def _brute_force(family, members, holdout, synthetic) -> int:
    """The best units over theta = (t, 1 - t): the attack is constant between the t where
    two (record, synthetic record) distances cross, so those t and the midpoints between
    them hold every value it takes."""
    zm, zh, zs = standardised(*(f.to_numpy(float) for f in (members, holdout, synthetic)))
    lines = np.concatenate([family.features(z, zs)[0].reshape(-1, 2) for z in (zm, zh)])
    ts = {0.0, 1.0}
    for (a1, b1), (a2, b2) in itertools.combinations(lines, 2):
        slope = (a1 - b1) - (a2 - b2)
        if slope != 0 and 0 <= (t := (b2 - b1) / slope) <= 1:
            ts.add(float(t))
    ts = np.array(sorted(ts))
    ts = np.concatenate([ts, (ts[1:] + ts[:-1]) / 2])
    best = 0
    for t in ts:
        theta = np.array([t, 1 - t])
        near = [(family.features(z, zs)[0] @ theta).min(axis=1) for z in (zm, zh)]
        best = max(best, best_threshold(*near)[1])
    return best


@pytest.mark.parametrize("family", ["wm", "owa"])
def test_the_proven_optimum_is_the_brute_force_one(family):
    members, holdout, synthetic = _frames(np.random.default_rng(3), 7, 6, 5)
    synthetic.iloc[:3] = members.iloc[:3].to_numpy() + 0.05  # a release that leaks a little
    result = membership_risk(members, holdout, synthetic, folds=0, anchors=False, families=[family])
    figure = result.families[family]
    exact = _brute_force(get_learned_family(family), members, holdout, synthetic)
    assert figure.status == "optimal"
    assert figure.lower.units == exact
    # the ceiling checked twice: the region search and the MILP both prove it
    assert figure.model["ceilings"] == {"regions": exact / 42, "milp": exact / 42}
    assert result.worst.advantage >= result.fixed.advantage  # wm and owa contain the Euclidean


def test_a_copying_generator_gives_every_member_away():
    members, holdout, _ = _frames(np.random.default_rng(0), 40, 30, 0, p=3)
    result = membership_risk(members, holdout, members.copy(), folds=0, anchors=False, families=["wm", "owa"])
    assert result.status == "proven"
    assert result.worst.advantage == 1.0 and result.fixed.advantage == 1.0
    assert result.dcr_share == 1.0


def test_an_independent_generator_gives_next_to_nothing():
    members, holdout, synthetic = _frames(np.random.default_rng(1), 300, 300, 300)
    result = membership_risk(
        members, holdout, synthetic, folds=0, anchors=False, families=["wm"], time_limit=3
    )
    # the best of a family chosen on the same split: a small advantage by chance only
    assert result.fixed.advantage < 0.1
    assert result.worst.advantage < 0.15
    assert result.families["wm"].lower.advantage >= result.fixed.advantage


def test_learned_worst_case_contains_the_fixed_distance_on_a_copula_release():
    frame = pd.DataFrame(np.random.default_rng(2).gamma(2.0, size=(160, 3)), columns=["a", "b", "c"])
    members, holdout, synthetic = split_release(
        frame, masking_spec("synthetic_copula", seed=1), holdout_share=0.4, seed=1
    )
    assert (len(members), len(holdout), len(synthetic)) == (96, 64, 96)
    result = membership_risk(
        members, holdout, synthetic, folds=0, anchors=False, families=["wm", "owa"], time_limit=1.5
    )
    for figure in result.families.values():
        assert figure.lower.advantage >= result.fixed.advantage
        assert figure.lower.advantage <= figure.ceiling <= 1.0


@pytest.mark.parametrize("share", [0, 1, -0.2, 0.001])
def test_a_held_out_share_without_records_is_refused(share):
    frame = pd.DataFrame({"a": np.arange(50.0), "b": np.arange(50.0) ** 2})
    with pytest.raises(InputError, match="held-out share"):
        split_release(frame, masking_spec("synthetic_copula"), holdout_share=share)


def test_bad_inputs_name_what_is_wrong():
    members, holdout, synthetic = _frames(np.random.default_rng(0), 10, 10, 10)
    with pytest.raises(InputError, match="membership families \\['ci'\\]"):
        membership_risk(members, holdout, synthetic, folds=0, anchors=False, families=["ci"])
    with pytest.raises(InputError, match="\\['zz'\\] not in the file"):
        membership_risk(members, holdout, synthetic, folds=0, anchors=False, columns=["x0", "zz"])
    text = holdout.assign(x1=["a"] * 10)
    with pytest.raises(InputError, match="column 'x1' is not numeric"):
        membership_risk(members, text, synthetic)


def test_command_line(tmp_path, capsys):
    frame = pd.DataFrame(np.random.default_rng(4).normal(size=(60, 2)), columns=["a", "b"])
    frame.to_csv(tmp_path / "data.csv", index=False)
    args = ["membership", str(tmp_path / "data.csv"), "--method", "dp_histogram", "--epsilon", "1",
            "--bounds", "a:-4:4;b:-4:4", "--time-limit", "2", "--json", "-"]  # fmt: skip
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    figures = json.loads(done.stdout)
    assert figures["n_members"] == 42 and figures["n_holdout"] == 18
    assert figures["advantage"] <= figures["advantage_upper"]
    for bad, said in [
        (["--method", "noise"], "measure it by record linkage"),
        (["--method", "dp_histogram", "--epsilon", "0"], "epsilon"),
        (["--method", "synthetic_copula", "--holdout-share", "0"], "held-out share 0"),
        ([], "give --method GENERATOR"),
    ]:
        assert run_main(["membership", tmp_path / "data.csv", *bad]) == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, err


def test_ctrl_c_in_the_region_search_keeps_a_valid_ceiling(monkeypatch):
    import rlopt.risk.membership.regions as regions

    members, holdout, synthetic = _frames(np.random.default_rng(5), 12, 10, 8)
    family = get_learned_family("wm")
    exact = _brute_force(family, members, holdout, synthetic)
    zm, zh, zs = standardised(*(f.to_numpy(float) for f in (members, holdout, synthetic)))
    calls, counted = [0], regions._units

    def stopped_at_the_third(*args):
        calls[0] += 1
        if calls[0] == 3:
            raise KeyboardInterrupt
        return counted(*args)

    monkeypatch.setattr(regions, "_units", stopped_at_the_third)
    found = regions.region_search(
        family.features(zm, zs)[0], family.features(zh, zs)[0], np.eye(2), deadline=None
    )
    # the region being split when Ctrl-C came still bounds the optimum
    assert found.interrupted and found.regions == 3
    assert found.best_units <= exact <= found.ceiling_units


def test_the_command_line_says_what_it_cannot_do(tmp_path, capsys):
    frame = pd.DataFrame(np.random.default_rng(6).normal(size=(60, 2)), columns=["a", "b"])
    for name, part in (("t", frame[:30]), ("h", frame[30:45]), ("s", frame[45:])):
        part.to_csv(tmp_path / f"{name}.csv", index=False)
    files = [tmp_path / "t.csv", "--holdout", tmp_path / "h.csv", "--synthetic", tmp_path / "s.csv"]
    for bad, said in [
        (["--holdout-share", "0.5"], "--holdout-share: only with --method"),
        (["--epsilon", "1"], "--epsilon: only with --method"),
    ]:
        assert run_main(["membership", *files, *bad]) == 2
        assert said in capsys.readouterr().err
    # a method that is not fully synthetic is named before its missing parameters
    assert run_main(["membership", tmp_path / "t.csv", "--method", "noise"]) == 2
    assert "measure it by record linkage" in capsys.readouterr().err
    assert run_main(["membership", tmp_path / "t.csv", "--method", "copula", "--holdout-share", "1.5"]) == 2
    assert "leaves no record to train the generator" in capsys.readouterr().err


def test_a_family_open_below_anothers_optimum_leaves_the_release_proven():
    from rlopt.risk.membership import Attack, FamilyFigure, MembershipRisk

    def attack(units):
        return Attack("wm", {}, 0.5, units, 0.0, 0.0, units / 100)

    fixed = attack(10)
    wm = FamilyFigure("wm", attack(30), 0.30, "optimal", 1.0, "regions")
    owa = FamilyFigure("owa", attack(20), 0.25, "time_limit", 1.0, "regions")
    proven = MembershipRisk(("a",), 10, 10, 10, fixed, 0.5, 0.1, {"wm": wm, "owa": owa})
    assert proven.status == "proven" and proven.upper == 0.30
    owa = FamilyFigure("owa", attack(20), 0.40, "time_limit", 1.0, "regions")
    assert MembershipRisk(("a",), 10, 10, 10, fixed, 0.5, 0.1, {"wm": wm, "owa": owa}).status == "interval"


def test_workers_prove_the_same_optimum_as_one_process(monkeypatch):
    import rlopt.risk.membership.attack

    monkeypatch.setattr(rlopt.risk.membership.attack, "MILP_CHECK_SECONDS", 0.5)  # no limit on the search
    frame = pd.DataFrame(np.random.default_rng(7).gamma(2.0, size=(90, 3)), columns=["a", "b", "c"])
    members, holdout, synthetic = split_release(
        frame, masking_spec("synthetic_copula", seed=2), holdout_share=0.4, seed=2
    )
    one = membership_risk(members, holdout, synthetic, folds=0, anchors=False, families=["wm"])
    three = membership_risk(members, holdout, synthetic, folds=0, anchors=False, families=["wm"], jobs=3)
    assert one.status == three.status == "proven"
    assert one.worst.units == three.worst.units
    with pytest.raises(InputError, match="jobs=0"):
        membership_risk(members, holdout, synthetic, folds=0, anchors=False, jobs=0)


def test_the_searches_for_a_lower_end_only_ever_raise_it():
    from rlopt.risk.membership.attack import _drawn, _off_ties, _search, recount

    members, holdout, synthetic = _frames(np.random.default_rng(8), 20, 15, 12, p=3)
    zm, zh, zs = standardised(*(f.to_numpy(float) for f in (members, holdout, synthetic)))
    family, columns = get_learned_family("owa"), ("x0", "x1", "x2")
    neutral = recount("owa", family.distance(family.neutral(3), columns), zm, zh, zs)
    searched = _search(family, columns, zm, zh, zs, seed=0)
    assert searched.units >= neutral.units
    assert _drawn(family, columns, zm, zh, zs, searched, None, 0).units >= searched.units
    moved = _off_ties(family, columns, family.neutral(3), neutral, zm, zh, zs, 0)
    assert moved.units >= neutral.units
    # each is a recount of its own parameter
    again = recount(
        "owa", family.distance(family.theta_from_params(moved.params, columns), columns), zm, zh, zs
    )
    assert again.units == moved.units


def test_each_step_is_heard_and_a_ctrl_c_in_the_start_search_leaves_the_family_not_started(monkeypatch):
    import rlopt.risk.membership.attack as membership

    members, holdout, synthetic = _frames(np.random.default_rng(7), 30, 20, 30)
    heard: list[str] = []
    result = membership_risk(members, holdout, synthetic, families=["wm"], folds=2, progress=heard.append)
    assert (
        heard
        == [
            "learning wm on 30 members, 20 held out, 30 synthetic",
            "out of sample: 2 folds, each called by the attack learned on the others",
            "the copy anchor: 30 records measured as the release",
        ]
        and result.status == "proven"
    )

    def stopped(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(membership, "_search", stopped)
    result = membership_risk(members, holdout, synthetic, families=["wm", "owa"], folds=0)
    assert result.interrupted and result.status == "interrupted" and result.not_started == ("wm", "owa")
    assert result.families == {} and result.upper == 1.0  # nothing learned: the ceiling is 1
    assert result.worst.family == "euclidean"  # the fixed attack's figure is kept
