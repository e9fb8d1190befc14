"""Mixed (categorical) microdata: column kinds, the per-attribute differences of
categories, categorical masking methods and the PRAM attack, on frames small
enough to work by hand."""

import warnings

import numpy as np
import pandas as pd
import pytest

from rlopt.attacks import plan_attack
from rlopt.data import KindSpec, load_acs12, load_cps1985, validate_pair
from rlopt.data._kinds import parse_ordinal
from rlopt.data._standardise import squared_diffs
from rlopt.exceptions import DataWarning, InputError
from rlopt.learn import LearnedDistanceLinkage
from rlopt.linkage import dbrl
from rlopt.masking import global_recode, local_suppression, masking_spec
from rlopt.masking.categorical import (
    TransitionMatrix,
    invariant_matrix,
    randomized_response_report,
    retention_matrix,
)
from tests._helpers import MARGIN, brute_force_one_weight, fit, fit_with, run_main

EDU = ["low", "mid", "high"]


@pytest.fixture
def small():
    original = pd.DataFrame(
        {
            "x": [1.0, 2.0, 4.0, 8.0],
            "edu": ["low", "mid", "high", "mid"],
            "colour": ["red", "blue", "red", "green"],
        }
    )
    masked = original.assign(x=[1.5, 2.0, 3.0, 8.5], colour=["red", "red", "red", "green"])
    return original, masked


def _diffs(original, masked, **kinds):
    data = validate_pair(original, masked, kinds=kinds or None)
    za, zb = data.standardised()
    return data, squared_diffs(za, zb)


def test_kinds_are_detected_and_declared(small):
    original, masked = small
    data = validate_pair(original, masked, kinds={"ordinal": {"edu": EDU}})
    assert [(k.name, k.kind) for k in data.kinds] == [
        ("x", "numeric"),
        ("edu", "ordinal"),
        ("colour", "nominal"),
    ]
    assert data.kinds[1].levels == tuple(EDU)
    assert data.kinds[2].levels == ("blue", "green", "red")
    # a numeric column declared nominal; a boolean is nominal; an ordered Categorical is ordinal
    frame = pd.DataFrame({"region": [1, 2, 1, 3], "flag": [True, False, True, True]})
    frame["size"] = pd.Categorical(["s", "l", "m", "s"], categories=["s", "m", "l"], ordered=True)
    kinds = validate_pair(frame, frame, kinds={"nominal": ["region"]}).kinds
    assert [(k.kind, k.levels) for k in kinds] == [
        ("nominal", ("1", "2", "3")),
        ("nominal", ("false", "true")),
        ("ordinal", ("s", "m", "l")),
    ]


def test_parse_ordinal():
    assert parse_ordinal("edu: hs or lower < college<grad ; size") == {
        "edu": ("hs or lower", "college", "grad"),
        "size": None,
    }
    with pytest.raises(InputError, match="at least two non-empty levels"):
        parse_ordinal("edu:hs")


def test_per_attribute_differences_by_hand(small):
    original, masked = small
    data, diff = _diffs(original, masked, ordinal={"edu": EDU})
    # ordinal: squared difference of normalised ranks (low 0, mid 1/2, high 1); masked edu = original edu
    rank = np.array([0.0, 0.5, 1.0, 0.5])
    assert np.allclose(diff[:, :, 1], (rank[:, None] - rank[None, :]) ** 2)
    assert diff[2, 0, 1] == 1.0 and diff[1, 3, 1] == 0.0
    # nominal: 0/1 mismatch (masked colours red, red, red, green against red, blue, red, green)
    expected = np.array([[0, 1, 0, 1], [0, 1, 0, 1], [0, 1, 0, 1], [1, 1, 1, 0]], dtype=float)
    assert np.array_equal(diff[:, :, 2], expected)
    # numeric: as before, each file's own z-scores
    from rlopt.data import standardise

    za, zb = standardise(masked[["x"]].to_numpy()), standardise(original[["x"]].to_numpy())
    assert np.allclose(diff[:, :, 0], (za - zb.T) ** 2)


def test_blanks_are_a_category_or_dropped(small):
    original, masked = small
    original.loc[1, "colour"] = None
    masked.loc[1, "colour"] = None
    masked.loc[3, "colour"] = None
    _, diff = _diffs(original, masked)
    assert diff[1, 1, 2] == 0.0  # a blank equals a blank
    assert diff[3, 3, 2] == 1.0 and diff[0, 1, 2] == 1.0  # a blank differs from every level
    with pytest.warns(
        DataWarning, match=r"left out 2 of 4 records with a blank in categorical attribute\(s\) \['colour'\]"
    ):
        data = validate_pair(original, masked, kinds={"missing": "drop"})
    assert data.n_records == 2 and data.n_dropped == 2


def test_a_published_recoding_is_seen_through(small):
    original, masked = small
    recoded = global_recode(masked, merge={"edu": [["mid", "high"]]})
    assert list(recoded["edu"]) == ["low", "mid|high", "mid|high", "mid|high"]
    data, diff = _diffs(original, recoded, ordinal={"edu": EDU})
    assert data.kinds[1].levels == ("low", "mid|high") and data.kinds[1].recoding == {
        "mid": "mid|high",
        "high": "mid|high",
    }
    assert diff[2, 1, 1] == 0.0 and diff[2, 0, 1] == 1.0  # original mid lies in the released mid|high
    from rlopt.risk.measures import information_loss

    # 3 of 4 records were released in the merged category; colour changed in 1 of 4
    assert information_loss(data)["categorical_changed"] == pytest.approx((3 / 4 + 1 / 4) / 2)


@pytest.mark.parametrize(
    ("change", "kinds", "message"),
    [
        (
            lambda o, m: m.assign(colour=["red", "pink", "red", "green"]),
            None,
            r"categor\w* \['pink'\] not in the original",
        ),
        (lambda o, m: m, {"ordinal": {"edu": ["low", "high"]}}, r"misses level\(s\) \['mid'\]"),
        (lambda o, m: m, {"ordinal": {"edu": None}, "nominal": ["edu"]}, "declared both ordinal and nominal"),
        (
            lambda o, m: m.assign(edu=["low|high", "mid", "low|high", "mid"]),
            {"ordinal": {"edu": EDU}},
            "not adjacent",
        ),
        (
            lambda o, m: m.assign(colour=["red|blue", "red", "red", "green"]),
            None,
            "both on their own and merged",
        ),
        (lambda o, m: m, {"nominal": ["nope"]}, "not linkage attributes"),
    ],
)
def test_bad_kinds_are_one_clear_error(small, change, kinds, message):
    original, masked = small
    with pytest.raises(InputError, match=message):
        validate_pair(original, change(original, masked), kinds=kinds)


def test_a_numeric_typo_is_not_a_category():
    frame = pd.DataFrame({"x": ["1", "2", "3x", "4"]})
    with pytest.raises(InputError, match=r"--nominal x"):
        validate_pair(frame, frame)


def test_learned_optimum_equals_brute_force_on_a_mixed_pair():
    rng = np.random.default_rng(3)
    n = 14
    original = pd.DataFrame({"x": rng.normal(size=n), "c": rng.choice(list("abc"), n)})
    masked = original.assign(
        x=original["x"] + rng.normal(scale=0.6, size=n),
        c=np.where(rng.random(n) < 0.4, rng.choice(list("abc"), n), original["c"]),
    )
    data = validate_pair(original, masked)
    za, zb = data.standardised()
    diff = squared_diffs(za, zb)
    own = np.arange(n)
    expected = brute_force_one_weight(diff[own, own], diff, MARGIN)
    result = fit("wm", original, masked)
    assert result.status == "optimal" and result.n_correct_verified == expected


def test_containments_hold_on_a_mixed_file():
    frame = load_cps1985().iloc[:40][["age", "education", "occupation", "sector", "gender"]]
    masked = masking_spec("pram", theta=0.6, columns=["occupation", "sector"], seed=2).apply(frame)
    masked["age"] = masked["age"] + np.random.default_rng(0).integers(-2, 3, len(masked))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        am = dbrl(frame, masked).n_correct
        wm = fit("wm", frame, masked)
        ci = fit("ci", frame, masked)
    assert wm.status == ci.status == "optimal"
    assert ci.n_correct_verified >= wm.n_correct_verified >= am


def test_retention_and_invariant_matrices():
    p = retention_matrix(4, 0.7)
    assert np.allclose(p.sum(axis=1), 1) and np.allclose(np.diag(p), 0.7) and np.isclose(p[0, 1], 0.1)
    pi = np.array([50.0, 30.0, 15.0, 5.0])
    r = invariant_matrix(p, pi)
    assert np.allclose(r.sum(axis=1), 1) and (r >= 0).all()
    assert np.allclose((pi / pi.sum()) @ r, pi / pi.sum())  # expected released frequencies kept


def test_pram_is_seeded_and_keeps_blanks_and_theta_one_changes_nothing():
    acs = load_acs12()
    spec = masking_spec("pram", theta=0.6, columns=["race", "edu"], seed=4)
    first, second = spec.apply(acs), spec.apply(acs)
    assert first.equals(second)
    assert first["edu"].isna().equals(acs["edu"].isna())
    changed = (first["race"] != acs["race"]).mean()
    assert 0.3 < changed < 0.5  # 1 - theta = 0.4 of the values move, up to sampling
    same = masking_spec("pram", theta=1.0, columns=["race"]).apply(acs)
    assert (same["race"] == acs["race"]).all()


def test_a_users_matrix_must_be_stochastic():
    frame = pd.DataFrame({"c": ["a", "b", "a", "b"]})
    bad = {"c": {"a": {"a": 0.5, "b": 0.6}, "b": {"a": 0.5, "b": 0.5}}}
    with pytest.raises(InputError, match=r"row 'a' sums to 1.1"):
        masking_spec("pram", matrices=bad).apply(frame)


def test_randomized_response_figures_by_hand():
    published = TransitionMatrix(("no", "yes"), np.array([[0.75, 0.25], [0.25, 0.75]]))
    report = randomized_response_report(pd.Series(["no", "yes"] * 50), published)
    assert np.isclose(report["epsilon"], np.log(3))
    assert np.allclose(list(report["estimate"].values()), [0.5, 0.5])
    # posterior given "no": (0.75, 0.25), entropy 0.811 bits
    assert np.isclose(report["deniability_bits"]["no"], -(0.75 * np.log2(0.75) + 0.25 * np.log2(0.25)))
    # lambda = (0.3, 0.7): 0.75 pi_0 + 0.25 (1 - pi_0) = 0.3 -> pi_hat = (0.1, 0.9)
    skewed = randomized_response_report(pd.Series(["no"] * 30 + ["yes"] * 70), published)
    assert np.allclose(list(skewed["estimate"].values()), [0.1, 0.9])
    with pytest.raises(InputError, match="singular"):
        randomized_response_report(
            pd.Series(["no", "yes"]), TransitionMatrix(("no", "yes"), np.full((2, 2), 0.5))
        )


def test_global_recoding_by_hand():
    frame = pd.DataFrame({"income": [5.0, 120.0, 60.0], "age": [23.0, 37.0, 61.0], "c": ["a", "b", "c"]})
    out = global_recode(
        frame, merge={"c": [["b", "c"]]}, top={"income": 100.0}, bottom={"age": 30.0}, base={"age": 5.0}
    )
    assert out["income"].tolist() == [5.0, 100.0, 60.0]
    assert out["age"].tolist() == [30.0, 35.0, 60.0]
    assert out["c"].tolist() == ["a", "b|c", "b|c"]


def test_local_suppression_reaches_k_anonymity():
    frame = pd.DataFrame({"a": list("xxxxyyz"), "b": list("pppqqqq")})
    out = local_suppression(frame, ["a", "b"], 2)
    # the rarest value of each unsafe record goes first: z (record 6), then x/q of record 3
    assert out.isna().sum().sum() == 2 and pd.isna(out.loc[6, "a"]) and pd.isna(out.loc[3, "a"])
    sizes = out.fillna("*").groupby(["a", "b"]).size()
    assert (sizes >= 2).all()


def _pram_pair(unchanged: bool):
    original = pd.DataFrame({"race": ["a", "a", "b", "c"]})
    masked = pd.DataFrame({"race": ["a", "a", "c", "c"]})  # record 2's b released as c
    if unchanged:
        original["age"] = masked["age"] = [1.0, 2.0, 3.0, 4.0]
    matrix = {
        "race": {
            "a": {"a": 1, "b": 0, "c": 0},
            "b": {"a": 0, "b": 0.5, "c": 0.5},
            "c": {"a": 0, "b": 0, "c": 1},
        }
    }
    return original, masked, masking_spec("pram", matrices=matrix, columns=["race"])


def test_pram_attack_by_hand():
    original, masked, spec = _pram_pair(unchanged=False)
    result = plan_attack(validate_pair(original, masked), spec)("am")
    # every record has two masked records of equal likelihood: posterior 1/2 each, no strict winner
    assert np.allclose(result.posterior_own, 0.5) and result.expected_correct == pytest.approx(2.0)
    assert result.n_correct == 0 and result.n_sure == 0
    original, masked, spec = _pram_pair(unchanged=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        result = plan_attack(validate_pair(original, masked), spec)("am")
    assert result.parameters["matched_unchanged"] == ["age"]
    assert result.n_correct == result.n_sure == 4 and result.expected_correct == pytest.approx(4.0)


def test_cli_on_categorical_files(tmp_path, capsys):
    original, masked = tmp_path / "o.csv", tmp_path / "m.csv"
    acs = load_acs12()[["age", "race", "gender", "edu"]]
    acs.to_csv(original, index=False)
    assert run_main(["mask", original, "--method", "pram", "--theta", "0.8", "--out", masked]) == 0
    edu = "edu:hs or lower<college<grad"
    assert run_main(["link", original, masked, "--ordinal", edu]) == 0
    out = capsys.readouterr().out
    assert (
        "kinds: numeric: age; race: nominal (4 levels)" in out
        and "edu: ordinal (hs or lower < college < grad)" in out
    )
    assert run_main(["attack", original, masked, "--method", "pram", "--theta", "0.8", "--ordinal", edu]) == 0
    assert "PRAM attack" in capsys.readouterr().out
    # bad input: one error line, exit 2
    for args, message in [
        (["link", original, masked, "--ordinal", "edu:college<grad"], "misses level"),
        (["link", original, masked, "--ordinal", "edu", "--nominal", "edu"], "both ordinal and nominal"),
        (
            [
                "mask",
                original,
                "--method",
                "rr",
                "--theta",
                "0.25",
                "--columns",
                "race",
                "--out",
                tmp_path / "x.csv",
            ],
            "singular",
        ),
    ]:
        assert run_main(args) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("error:") == 1
    assert not (tmp_path / "x.csv").exists()  # nothing written before the error
    (tmp_path / "P.csv").write_text("true,female,male\nfemale,0.5,0.6\nmale,0.5,0.5\n")
    args = [
        "mask",
        original,
        "--method",
        "pram",
        "--matrix",
        f"gender={tmp_path / 'P.csv'}",
        "--columns",
        "gender",
    ]
    assert run_main([*args, "--out", tmp_path / "y.csv"]) == 2
    assert "row 'female' sums to 1.1" in capsys.readouterr().err


def test_learned_parameters_of_a_mixed_file_round_trip(tmp_path):

    frame = load_cps1985().iloc[:50][["age", "occupation", "sector"]]
    masked = masking_spec("pram", theta=0.6, columns=["occupation", "sector"], seed=3).apply(frame)
    learner = LearnedDistanceLinkage("wm", margin=MARGIN, time_limit=10).fit(frame, masked)
    path = learner.save_params(tmp_path / "wm.json")
    loaded = LearnedDistanceLinkage.load_params(path)
    assert loaded.link(frame, masked).n_correct == learner.link(frame, masked).n_correct
    assert [k.kind for k in loaded.kinds_] == ["numeric", "nominal", "nominal"]
    with pytest.raises(InputError, match="categorical"):
        loaded.distance(frame.to_numpy()[:2], frame.to_numpy()[:2])


def test_uniqueness_by_hand():
    from rlopt.risk import uniqueness

    sample = pd.DataFrame({"a": ["x", "x", "y", "z"], "b": [1, 1, 2, 3.0]})
    population = pd.DataFrame({"a": ["x", "x", "x", "y", "z", "z"], "b": [1, 1, 4, 2, 3, 3]})
    # sample uniques: (y, 2) and (z, 3); in the population (y, 2) is unique, (z, 3) is not
    figures = uniqueness(sample, ["a", "b"], population=population)
    assert figures["n_sample_uniques"] == 2 and figures["n_population_uniques"] == 1
    assert figures["p_pu_given_su"] == 0.5
    with pytest.raises(InputError, match="population lacks"):
        uniqueness(sample, ["a", "b"], population=population.iloc[:4])


def test_intersection_attack_by_hand():
    from rlopt.attacks import intersection_attack

    # release 1 groups subjects {1, 2} and {3, 4}; release 2 groups {1, 3} and {2, 4}
    r1 = pd.DataFrame({"id": [1, 2, 3, 4], "q": ["a", "a", "b", "b"], "d": ["flu", "cold", "flu", "hiv"]})
    r2 = pd.DataFrame({"id": [1, 2, 3, 4], "q": ["c", "e", "c", "e"], "d": ["flu", "cold", "flu", "hiv"]})
    result = intersection_attack([r1, r2], id_column="id", confidential=["d"])
    # S_1 = {flu, cold} & {flu} = {flu}; S_2 = {flu, cold} & {cold, hiv} = {cold};
    # S_3 = {flu, hiv} & {flu} = {flu}; S_4 = {flu, hiv} & {cold, hiv} = {hiv}: every 2-anonymous subject disclosed
    assert result.smallest_class == [2, 2] and result.n_disclosed == 4
    r2 = r2.assign(q=["c", "c", "e", "e"])  # the same classes as release 1: nothing more learned
    assert intersection_attack([r1, r2], id_column="id", confidential=["d"]).n_disclosed == 0


def test_risk_report_of_a_mixed_file_states_the_kinds(tmp_path):
    from rlopt.report import render_risk_report
    from rlopt.risk import assess_risk

    frame = load_cps1985().iloc[:60][["age", "education", "occupation", "sector", "gender"]]
    masked = masking_spec("pram", theta=0.7, columns=["occupation", "sector"], seed=1).apply(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        result = assess_risk(
            frame,
            masked,
            families=["wm"],
            folds=2,
            time_limit=5,
            attack={"method": "pram", "theta": 0.7, "columns": ["occupation", "sector"]},
            kinds={"ordinal": {"education": None}},
        )
    figures = result.figures
    assert [k["kind"] for k in figures["inputs"]["kinds"]] == [
        "numeric",
        "ordinal",
        "nominal",
        "nominal",
        "nominal",
    ]
    assert figures["attack"]["method"] == "pram" and figures["generalisation"][0]["folds"] == 2
    assert figures["information_loss"]["categorical_changed"] > 0
    assert [row["attribute"] for row in figures["interval_disclosure"]] == ["age"]  # numbers only
    page = render_risk_report(result, tmp_path / "r.html").read_text()
    assert 'id="kinds"' in page and "education: ordinal" in page


def test_probabilistic_linkage_compares_categories_by_agreement(small):
    from rlopt.linkage.probabilistic import DEFAULT_THRESHOLDS, agreement_levels

    original, masked = small
    data = validate_pair(original, masked, kinds={"ordinal": {"edu": EDU}})
    za, zb = data.standardised()
    levels = agreement_levels(za, zb)
    top = len(DEFAULT_THRESHOLDS)
    # colour: masked red, red, red, green against original red, blue, red, green
    assert levels[0, :, 2].tolist() == [0, top, 0, top] and levels[3, :, 2].tolist() == [top, top, top, 0]
    # edu (3 levels): a rank step of 1/2 is beyond every threshold, equal levels agree
    assert levels[1, :, 1].tolist() == [top, 0, top, 0]


def test_a_text_identifier_is_warned(small):
    original, masked = small
    original["name"] = masked["name"] = ["ann", "bob", "cy", "dee"]
    with pytest.warns(
        DataWarning, match="'name' looks like a record identifier .a category of its own on every record"
    ):
        validate_pair(original, masked)


def test_a_sure_release_has_zero_deniability_not_minus_zero(tmp_path, capsys):
    published = TransitionMatrix(("no", "yes"), np.eye(2))
    report = randomized_response_report(pd.Series(["no", "yes"] * 5), published)
    assert all(str(bits) == "0.0" for bits in report["deniability_bits"].values())
    load_cps1985().to_csv(tmp_path / "cps.csv", index=False)
    args = ["mask", tmp_path / "cps.csv", "--method", "rr", "--theta", 1, "--columns", "gender"]
    assert run_main([*args, "--out", tmp_path / "rr.csv"]) == 0
    assert "-0.00" not in capsys.readouterr().out


def test_suppression_reaches_k_on_cps1985():
    """Before, a record whose values were all blanked stayed a class of its own (k = 1)."""
    from rlopt.models import check_models

    columns = ["ethnicity", "region", "sector"]
    out = local_suppression(load_cps1985(), columns, 2)
    sizes = out[columns].astype(object).fillna("*").groupby(columns).size()
    assert sizes.min() >= 2
    (k,) = [c.value for c in check_models(out, columns, []) if c.model == "k-anonymity"]
    assert k >= 2


def test_a_file_smaller_than_k_is_all_blank_with_a_warning():
    with pytest.warns(DataWarning, match="fewer than k=5"):
        out = local_suppression(pd.DataFrame({"a": list("xyz")}), ["a"], 5)
    assert out["a"].isna().all()


def test_compare_masks_and_attacks_the_same_columns(tmp_path):
    """A category stored as numbers and declared ordinal is PRAM'd, as the attack assumes
    (before, PRAM took only text columns and released education unmasked)."""
    from rlopt.experiments.compare import _cells, _masked_pair, masked_columns, run_compare

    cps = load_cps1985()[["age", "education", "gender"]]
    kinds = {"ordinal": {"education": None}}
    spec = masking_spec("pram", theta=0.5)
    assert masked_columns(cps, KindSpec.coerce(kinds), spec) == ["education", "gender"]
    assert masked_columns(cps, KindSpec.coerce(kinds), masking_spec("mdav", k=3)) == ["age"]
    cps.to_csv(tmp_path / "cps.csv", index=False)
    (cell,) = _cells(
        str(tmp_path / "cps.csv"), "", len(cps), [("pram", {"theta": [0.5]})], families=("wm",),
        confidential=(), time_limit=5, margin=1e-5, threads=1, seed=0, bounds=None,
        kinds=KindSpec.coerce(kinds),
    )  # fmt: skip
    original, released, _, _ = _masked_pair(cell, cell.spec())
    assert (released["education"] != original["education"]).any()
    assert (released["age"] == original["age"]).all()
    comparison = run_compare(
        cps, "pram:theta=0.5", tmp_path / "c", families=("wm",), time_limit=5, kinds=kinds, progress=False
    )
    assert "education: ordinal" in comparison.kinds
    assert set(pd.read_csv(comparison.csv)["kinds"]) == {comparison.kinds}
    assert 'id="kinds"' in comparison.page.read_text()


def test_the_milp_gets_what_the_limit_leaves(monkeypatch):
    """The time limit covers everything a family does: the MILP is given what is left of it
    less the conclusion's share (before: at least 1 s, whatever the steps before it took,
    and nothing kept for the recount after it). A mixed file of 1000 acs12 records."""
    import time

    import rlopt.milp.budget as budget
    import rlopt.milp.pipeline as learn_module
    from rlopt.milp.pipeline import Collaborators
    from rlopt.milp.solvers import solve_model

    acs = load_acs12()[["income", "hrs_work", "age", "race", "gender", "married", "edu"]].dropna()[:1000]
    masked = masking_spec("pram", theta=0.7, columns=["race", "gender", "married", "edu"]).apply(acs)
    solves: list = []  # per solve: when it began, the model's build seconds, the MILP's limit
    given: list = []
    real_solve = learn_module._solve

    def solve_and_see(run, built, *args):
        at, before = time.perf_counter() - run.t0, len(given)
        solved = real_solve(run, built, *args)
        solves.append((at, built.seconds, given[-1] if len(given) > before else None))
        return solved

    def model_and_see(model, options, **kwargs):
        given.append(options.time_limit)
        return solve_model(model, options, **kwargs)

    monkeypatch.setattr(learn_module, "_solve", solve_and_see)  # sees the run's clock and its model
    limit = 4.0
    fit_with(
        "wm", acs, masked, margin=1e-5, time_limit=limit, collaborators=Collaborators(solve=model_and_see)
    )
    # the full pass's solve (after a quick pass that did not prove)
    at, build_seconds, milp_limit = solves[-1]
    if milp_limit is None:  # not started (a busy machine): only when not even the glimpse could load it
        assert budget.LOAD_FACTOR * build_seconds > budget.MIN_SOLVE_SHARE * limit
    else:
        left = (1 - budget.CONCLUDE_SHARE) * limit - at
        assert milp_limit <= max(budget.MIN_SOLVE_SHARE * limit, left) + 0.02
