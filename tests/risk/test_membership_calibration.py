"""The calibrated membership figures (rlopt.risk.membership.calibration): the
cross-fitting worked by hand, a fold's labels never read by its own attack, the
permutation null's p-value and excess by hand and uniform under an ideal generator, the
anchors at 0 and 1, the same figures for any ``jobs``, and one clear error per bad input."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kstest
from typer.testing import CliRunner

from rlopt.cli import app
from rlopt.exceptions import InputError
from rlopt.risk.membership import membership_risk
from rlopt.risk.membership.calibration import (
    Fit,
    PermutationNull,
    clopper_pearson,
    cross_fitted,
    permutation_null,
)
from rlopt.risk.membership.regions import best_threshold
from rlopt.status import Status
from tests._helpers import run_main

runner = CliRunner()


class _Attack:
    """What the calibration reads of an attack: its threshold and advantage."""

    def __init__(self, threshold: float, advantage: float = 0.0):
        self.threshold, self.advantage = threshold, advantage


def test_clopper_pearson_by_hand():
    # k = 0 of n: the upper end solves (1 - p)^n = alpha / 2; k = n: the lower end p^n = alpha / 2
    low, high = clopper_pearson(0, 10, 0.95)
    assert low == 0 and high == pytest.approx(1 - 0.025 ** (1 / 10))
    low, high = clopper_pearson(10, 10, 0.95)
    assert high == 1 and low == pytest.approx(0.025 ** (1 / 10))
    low, high = clopper_pearson(5, 10, 0.95)
    assert low < 0.5 < high and low == pytest.approx(1 - high)


def test_cross_fitting_by_hand():
    # one attribute; a record's "distance" is its value. The learner calls a member any
    # record at or below the largest held-out value it was given, less a little.
    zm = np.array([[0.0], [1.0], [2.0], [3.0]])
    zh = np.array([[2.5], [4.0], [5.0], [6.0]])
    seen = []

    def learn(members, holdout):
        seen.append((members[:, 0].tolist(), holdout[:, 0].tolist()))
        return Fit(_Attack(threshold=float(holdout[:, 0].min()) - 0.1), 1.0, Status.PROVEN)

    crossed = cross_fitted(learn, lambda attack, records: records[:, 0], zm, zh, folds=2, seed=0)
    assert len(seen) == 2
    # each fit saw the other fold only: two members and two held-out records, and the two
    # fits' members (and held-out records) partition the file's
    assert sorted(seen[0][0] + seen[1][0]) == [0.0, 1.0, 2.0, 3.0]
    assert sorted(seen[0][1] + seen[1][1]) == [2.5, 4.0, 5.0, 6.0]
    assert all(len(m) == 2 and len(h) == 2 for m, h in seen)
    # by hand: fold k's records are called at d <= (the smallest held-out value of the
    # other fold) - 0.1
    expected_tp = expected_fp = 0
    for members, holdout in seen:
        other_members = sorted(set(zm[:, 0]) - set(members))
        other_holdout = sorted(set(zh[:, 0]) - set(holdout))
        threshold = min(holdout) - 0.1
        expected_tp += sum(v <= threshold for v in other_members)
        expected_fp += sum(v <= threshold for v in other_holdout)
    assert (crossed.tp, crossed.fp) == (expected_tp, expected_fp)
    assert crossed.advantage == pytest.approx(expected_tp / 4 - expected_fp / 4)
    # the pooled ranking: each fold's distances over its median (label-free), ranked
    from sklearn.metrics import roc_auc_score

    scores, labels = [], []
    for members, holdout in seen:
        fold_m = sorted(set(zm[:, 0]) - set(members))
        fold_h = sorted(set(zh[:, 0]) - set(holdout))
        median = np.median(fold_m + fold_h)
        scores += [-v / median for v in fold_m + fold_h]
        labels += [1] * len(fold_m) + [0] * len(fold_h)
    assert crossed.auc == pytest.approx(roc_auc_score(labels, scores))
    low, high = crossed.interval
    assert low <= crossed.advantage <= high
    assert crossed.tpr_at_fpr == {"0.1": None, "0.01": None}  # 4 held-out records: no FPR of 0.1


def test_a_folds_own_labels_are_never_read():
    """The attack of fold k is learned without fold k's records: each fit holds the
    records of the other folds only, and each record is left out of exactly one fit."""
    rng = np.random.default_rng(1)
    zm, zh = rng.normal(size=(12, 2)), rng.normal(size=(9, 2))
    fits = []

    def learn(members, holdout):
        fits.append(np.vstack([members, holdout]))
        d_m, d_h = np.linalg.norm(members, axis=1), np.linalg.norm(holdout, axis=1)
        threshold = best_threshold(d_m, d_h)[0]
        return Fit(_Attack(threshold), 1.0, Status.PROVEN)

    crossed = cross_fitted(learn, lambda a, r: np.linalg.norm(r, axis=1), zm, zh, folds=3, seed=4)
    every = {tuple(r) for r in np.vstack([zm, zh])}
    for training in fits:  # each fit holds the records of two folds, never all of them
        rows = {tuple(r) for r in training}
        assert rows < every
    assert sum(len(every) - len({tuple(r) for r in t}) for t in fits) == len(every)
    assert crossed.n_members == 12 and crossed.n_holdout == 9


def test_the_permutation_nulls_p_value_and_excess_by_hand():
    null = PermutationNull(
        19, lower=(0.1,) * 19, ceiling=(0.2,) * 18 + (0.5,), observed=0.4, observed_upper=0.45, seconds=0
    )
    assert null.p_value == pytest.approx(2 / 20)  # one ceiling reaches 0.4 (the lower end), plus the observed
    assert null.mean == pytest.approx(0.1)
    assert null.excess == pytest.approx((0.45 - 0.1) / 0.9)  # by the observed ceiling: never understated
    # the band: lower ends' 2.5 % quantile (all 0.1: excess 0), ceilings' 97.5 % one
    assert null.band == pytest.approx((0.0, (np.quantile(null.ceiling, 0.975) - 0.1) / 0.9), abs=1e-12)


def _fixed_learner(members, holdout, synthetic):
    """The fixed Euclidean attack, exact at its best threshold: its ceiling is its count."""
    d = [np.linalg.norm(z[:, None, :] - synthetic[None], axis=2).min(axis=1) for z in (members, holdout)]
    threshold, units, _, _ = best_threshold(*d)
    advantage = units / (len(members) * len(holdout))
    return Fit(_Attack(threshold, advantage), advantage, Status.PROVEN)


class _Learner:
    def __init__(self, synthetic):
        self.synthetic = synthetic

    def __call__(self, members, holdout):
        return _fixed_learner(members, holdout, self.synthetic)


def test_the_p_value_is_uniform_under_an_ideal_generator():
    """40 ideal releases (every file drawn from one population): the p-values of the
    observed in-sample figure against 39 relabelled splits look uniform."""
    p_values = []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        zm, zh, zs = rng.normal(size=(30, 2)), rng.normal(size=(20, 2)), rng.normal(size=(30, 2))
        learn = _Learner(zs)
        observed = learn(zm, zh).attack.advantage
        null = permutation_null(learn, zm, zh, runs=39, observed=observed, seed=seed)
        p_values.append(null.p_value)
    assert kstest(p_values, "uniform").pvalue > 0.001
    # a copy of the members is always found: the smallest p-value there is
    rng = np.random.default_rng(0)
    zm, zh = rng.normal(size=(30, 2)), rng.normal(size=(20, 2))
    learn = _Learner(zm)
    null = permutation_null(learn, zm, zh, runs=19, observed=learn(zm, zh).attack.advantage, seed=0)
    assert null.p_value == pytest.approx(1 / 20)


def _files(seed=0, n_m=40, n_h=30, n_s=40):
    rng = np.random.default_rng(seed)
    return [pd.DataFrame(rng.normal(size=(n, 2)), columns=["a", "b"]) for n in (n_m, n_h, n_s, n_s)]


def test_the_anchors_read_0_and_1_on_the_same_split():
    members, holdout, synthetic, reserve = _files()
    result = membership_risk(
        members, holdout, synthetic, families=["wm"], time_limit=6, reserve=reserve, folds=4
    )
    copy, ideal = result.anchors["copy"], result.anchors["ideal"]
    assert copy.in_sample == 1 and copy.out_of_sample.advantage >= 0.95
    low, high = ideal.out_of_sample.interval
    assert low <= 0 <= high
    crossed = result.out_of_sample  # an independent generator: its interval holds 0 as well
    assert crossed.interval[0] <= 0 <= crossed.interval[1]
    assert crossed.folds == 4 and len(crossed.attacks) == 4
    assert result.to_dict()["anchors"]["ideal"]["out_of_sample"]["folds"] == 4


def test_the_same_figures_for_any_jobs():
    members, holdout, synthetic, _ = _files(seed=2, n_m=14, n_h=10, n_s=12)
    asked = dict(families=["wm"], folds=3, permutations=19, anchors=False, seed=5)
    one = membership_risk(members, holdout, synthetic, jobs=1, **asked)
    three = membership_risk(members, holdout, synthetic, jobs=3, **asked)
    assert one.null.lower == three.null.lower and one.null.ceiling == three.null.ceiling
    assert one.out_of_sample.to_dict() | {"seconds": 0} == three.out_of_sample.to_dict() | {"seconds": 0}
    assert one.null.p_value == three.null.p_value


def test_bad_calibration_input_gets_one_clear_error():
    members, holdout, synthetic, _ = _files(n_m=10, n_h=4)
    with pytest.raises(InputError, match="larger than the smallest class"):
        membership_risk(members, holdout, synthetic, folds=5)
    with pytest.raises(InputError, match="at least 19"):
        membership_risk(members, holdout, synthetic, folds=0, permutations=5)
    other = holdout.rename(columns={"b": "c"})
    with pytest.raises(InputError, match=r"held-out: column\(s\) \['b'\] not in the file"):
        membership_risk(members, other, synthetic, folds=0)


def test_the_cli_prints_the_out_of_sample_headline_first_and_writes_it(tmp_path, capsys):
    members, holdout, synthetic, reserve = _files(seed=3)
    paths = {}
    for name, frame in (("m", members), ("h", holdout), ("s", synthetic), ("r", reserve)):
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    out = tmp_path / "m.json"
    args = ["membership", str(paths["m"]), "--holdout", str(paths["h"]), "--synthetic", str(paths["s"])]
    result = runner.invoke(
        app, args + ["--reserve", str(paths["r"]), "--time-limit", "4", "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("membership advantage (TPR - FPR) out of sample:")
    assert "learning wm on 40 members, 30 held out, 40 synthetic (time limit 4 s)" in result.stderr
    assert "anchor, ideal release (40 real records" in result.output
    assert "anchor, copy of the training file" in result.output
    figures = json.loads(out.read_text())
    assert figures["out_of_sample"]["folds"] == 5 and set(figures["anchors"]) == {"ideal", "copy"}

    for bad, message in ((["--permutations", "3"], "expected at least 19"),
                         (["--reserve-share", "0.2"], "--reserve-share: only with --method")):  # fmt: skip
        assert run_main(args + bad) == 2
        assert message in capsys.readouterr().err


def test_ctrl_c_in_a_fit_ends_the_calibration_and_starts_no_other_fit():
    zm, zh = np.arange(8.0)[:, None], np.arange(8.0, 14.0)[:, None]
    calls = []

    def interrupted_second(members, holdout):
        calls.append(len(members))
        status = Status.INTERRUPTED if len(calls) == 2 else Status.PROVEN
        return Fit(_Attack(threshold=1.0), 1.0, status)

    assert cross_fitted(interrupted_second, lambda a, r: r[:, 0], zm, zh, folds=3, seed=0) is None
    assert len(calls) == 2  # the third fold's fit never started

    def raised(members, holdout):
        raise KeyboardInterrupt

    assert permutation_null(raised, zm, zh, runs=19, observed=0.5, seed=0) is None


def test_each_family_of_a_fit_starts_from_its_own_attacks_only(monkeypatch):
    """A fit over wm then owa starts owa from owa's search or the fixed attack (in every
    family), never from wm's attack, which owa's ceiling may lie below (a relabelled run
    of the Census copula met it: 'a verified attack above the ceiling')."""
    import rlopt.risk.membership.attack as membership
    from rlopt.milp import SolverOptions

    starts, solve = [], membership._solve_family

    def recorded(family, columns, zm, zh, zs, start, *args, **kwargs):
        starts.append((family.name, start.family))
        return solve(family, columns, zm, zh, zs, start, *args, **kwargs)

    monkeypatch.setattr(membership, "_solve_family", recorded)

    # a search that finds nothing: wm's optimum is then the best attack owa could start from
    def nothing(family, columns, zm, zh, zs, seed):
        params = family.distance(family.neutral(len(columns)), columns).params()
        return membership.Attack(family.name, params, -np.inf, 0, 0.0, 0.0, 0.0)

    monkeypatch.setattr(membership, "_search", nothing)
    rng = np.random.default_rng(0)
    zm, zh, zs = rng.normal(size=(12, 2)), rng.normal(size=(8, 2)), rng.normal(size=(12, 2))
    membership.fit(["wm", "owa"], ("a", "b"), zm, zh, zs, SolverOptions(time_limit=5), seed=0)
    assert [name for name, _ in starts] == ["wm", "owa"]
    assert all(start in (name, "euclidean") for name, start in starts)


def test_ctrl_c_in_a_stage_keeps_what_finished_and_names_only_the_stages_asked(monkeypatch):
    import rlopt.risk.membership.attack as membership

    members, holdout, synthetic, _ = _files(seed=4, n_m=16, n_h=12, n_s=16)
    kept_null = PermutationNull(20, (0.1,) * 20, (0.2,) * 20, 0.3, 0.3, seconds=0, stopped=True)
    monkeypatch.setattr(membership, "permutation_null", lambda *a, **k: kept_null)
    result = membership_risk(members, holdout, synthetic, families=["wm"], folds=2, permutations=25)
    assert result.interrupted and result.out_of_sample is not None and result.null is kept_null
    assert result.skipped == ("permutations: 20 of 25 relabelled runs before Ctrl-C (kept)", "anchors")
    assert result.status == "proven"  # the in-sample figure finished before the stop

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(membership, "cross_fitted", interrupted)
    result = membership_risk(members, holdout, synthetic, families=["wm"], folds=2, anchors=False)
    assert result.interrupted and result.skipped == (
        "out-of-sample: stopped by Ctrl-C",
    )  # no stage not asked
    result = membership_risk(members, holdout, synthetic, families=["wm"], folds=0)
    assert "ideal anchor: no reserve of real records (--reserve FILE or --reserve-share)" in result.skipped
    assert result.anchors["copy"].in_sample == 1 and not result.interrupted


def test_the_most_folds_a_small_map_cell_takes_are_those_check_folds_accepts():
    from rlopt.risk.membership.calibration import check_folds, most_folds

    assert most_folds(2, 50, 5) == 0  # 2 of a class: no fold leaves 2 to learn from
    for smallest in range(3, 13):
        k = most_folds(smallest, 50, 5)
        check_folds(k, smallest, 50)  # accepted
        if k < 5:
            with pytest.raises(InputError):
                check_folds(k + 1, smallest, 50)
