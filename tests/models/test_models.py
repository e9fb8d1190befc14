"""Privacy-model checks (rlopt.models): hand-worked figures, validation, and the
figures of pycanon on the same frames (where pycanon is installed)."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from rlopt import additive_noise, load_census
from rlopt.exceptions import InputError
from rlopt.models import (
    ModelCheck,
    check_models,
    dp_ratio,
    k_anonymity,
    l_diversity,
    p_sensitive_k_anonymity,
    t_closeness,
)

# ----------------------------------------------------------------------------- the hand-worked frame
#
# 8 records, quasi-identifier zip: classes A (4 records), B (2), C (2).
#
#   zip  salary  disease  smoker
#   A    10      flu      y
#   A    20      flu      n
#   A    30      cold     n
#   A    40      hiv      n
#   B    10      flu      y
#   B    10      cold     n
#   C    30      cold     y
#   C    40      hiv      n
#
# k = 2 (B, C); with k = 3: 2 classes, 4 records below.
# distinct l: salary A 4, B 1, C 2 -> 1; disease A 3, B 2, C 2 -> 2; smoker 2, 2, 2 -> 2.
# entropy l = min exp(H):
#   disease A (1/2, 1/4, 1/4): H = 1.5 ln 2, exp = 2^1.5; B, C (1/2, 1/2): exp = 2 -> 2
#   smoker A (1/4, 3/4): exp(H) = 4^(1/4) (4/3)^(3/4) = 4 / 3^(3/4) = 1.7548; B, C: 2 -> 1.7548
# t, ordered EMD of salary: file p = (3, 1, 2, 2)/8 over 10 < 20 < 30 < 40, m - 1 = 3
#   A q = (2, 2, 2, 2)/8: cumulative p - q = 1/8, 0, 0, 0 -> (1/8)/3 = 1/24
#   B q = (8, 0, 0, 0)/8: -5/8, -4/8, -2/8, 0             -> (11/8)/3 = 11/24
#   C q = (0, 0, 4, 4)/8:  3/8,  4/8,  2/8, 0             -> (9/8)/3 = 3/8   => t = 11/24
# t, equal-distance EMD of salary: A (1+1+0+0)/16 = 1/8, B (5+1+2+2)/16 = 5/8, C (3+1+2+2)/16 = 1/2
# t, equal EMD of disease, p = (flu 3, cold 3, hiv 2)/8:
#   A q = (4, 2, 2)/8: (1+1+0)/16 = 1/8; B (4, 4, 0)/8: (1+1+2)/16 = 1/4; C (0, 4, 4)/8: (3+1+2)/16 = 3/8
# t, smoker, p = (y 3, n 5)/8: A (2, 6)/8 -> 1/8; B, C (4, 4)/8 -> 1/8
# dp-ratio, smoker: A q/p = (2/3, 6/5) -> 3/2; B, C q/p = (4/3, 4/5) -> 4/3; t = 3/2, epsilon = 2 ln 1.5
#   disease and salary: B lacks hiv (and 20, 30, 40) -> epsilon = inf

ENTROPY_L_SMOKER = 4 / 3**0.75


@pytest.fixture
def hand():
    return pd.DataFrame(
        {
            "zip": list("AAAABBCC"),
            "salary": [10, 20, 30, 40, 10, 10, 30, 40],
            "disease": ["flu", "flu", "cold", "hiv", "flu", "cold", "cold", "hiv"],
            "smoker": list("ynnnynyn"),
        }
    )


def test_k_anonymity_by_hand(hand):
    check = k_anonymity(hand, ["zip"], k=3)
    assert (check.model, check.value, check.satisfied, check.parameter) == ("k-anonymity", 2, False, {"k": 3})
    assert check.detail["n_classes"] == 3
    assert (check.detail["classes_below_k"], check.detail["records_below_k"]) == (2, 4)
    assert k_anonymity(hand, "zip", 2).satisfied is True
    assert k_anonymity(hand, "zip").satisfied is None
    assert check.note == ""


def test_l_diversity_by_hand(hand):
    distinct = l_diversity(hand, "zip", ["salary", "disease", "smoker"], l=2)
    assert distinct.value == 1 and distinct.satisfied is False
    assert distinct.detail["per_attribute"] == {"salary": 1, "disease": 2, "smoker": 2}
    assert (distinct.detail["classes_below_l"], distinct.detail["records_below_l"]) == (1, 2)
    assert l_diversity(hand, "zip", "disease", 2).satisfied is True

    entropy = l_diversity(hand, "zip", ["disease", "smoker"], kind="entropy")
    assert entropy.model == "l-diversity (entropy)"
    assert entropy.value == pytest.approx(ENTROPY_L_SMOKER, rel=1e-12)
    assert entropy.detail["per_attribute"]["disease"] == pytest.approx(2.0, rel=1e-12)
    # entropy l-diversity holds when H >= ln l in every class: disease reaches l = 2 exactly
    assert l_diversity(hand, "zip", "disease", 2, kind="entropy").satisfied is True
    smoker = l_diversity(hand, "zip", "smoker", 1.76, kind="entropy")
    assert smoker.satisfied is False and smoker.detail["records_below_l"] == 4


def test_t_closeness_by_hand(hand):
    check = t_closeness(hand, "zip", ["salary", "disease", "smoker"])
    assert check.value == pytest.approx(11 / 24, abs=1e-15)
    per = check.detail["per_attribute"]
    assert per["salary"] == {"emd": pytest.approx(11 / 24, abs=1e-15), "distance": "ordered", "n_values": 4}
    assert per["disease"]["emd"] == 3 / 8 and per["disease"]["distance"] == "equal"
    assert per["smoker"]["emd"] == 1 / 8
    assert t_closeness(hand, "zip", "salary", distance="equal").value == 5 / 8
    # t equal to the achieved value is satisfied (the distances are exact fractions)
    assert t_closeness(hand, "zip", "salary", 11 / 24).satisfied is True
    failing = t_closeness(hand, "zip", "salary", 0.4)
    assert failing.satisfied is False and failing.detail["records_above_t"] == 2


def test_dp_ratio_by_hand(hand):
    smoker = dp_ratio(hand, "zip", "smoker")
    assert smoker.value == pytest.approx(2 * math.log(1.5), rel=1e-12)
    assert smoker.detail["ratio"] == 1.5
    assert dp_ratio(hand, "zip", "smoker", epsilon=0.82).satisfied is True
    assert dp_ratio(hand, "zip", "smoker", epsilon=0.8).satisfied is False
    both = dp_ratio(hand, "zip", ["smoker", "disease"], epsilon=5)
    assert both.value == math.inf and both.satisfied is False
    assert both.detail["per_attribute"]["disease"]["classes_missing_a_value"] == 2
    uniform = pd.DataFrame({"q": list("aabb"), "s": list("xyxy")})
    assert dp_ratio(uniform, "q", "s").value == 0.0


def test_p_sensitive_by_hand(hand):
    check = p_sensitive_k_anonymity(hand, "zip", ["disease", "smoker"], k=2, p=2)
    assert check.satisfied is True and check.value == 2
    # k = 3: B and C are too small; p = 3: every class has only 2 smoker values
    check = p_sensitive_k_anonymity(hand, "zip", ["disease", "smoker"], k=3, p=3)
    assert check.satisfied is False
    assert (check.detail["classes_below_k"], check.detail["classes_below_p"]) == (2, 3)
    assert check.detail["per_attribute"] == {"disease": 2, "smoker": 2}


def test_check_models_runs_every_applicable_check(hand):
    checks = check_models(hand, "zip", ["disease", "smoker"], k=2, p=2, l=2, t=0.4, epsilon=1)
    assert [c.model for c in checks] == [
        "k-anonymity",
        "p-sensitive k-anonymity",
        "l-diversity (distinct)",
        "l-diversity (entropy)",
        "t-closeness",
        "dp-ratio",
    ]
    assert [c.satisfied for c in checks] == [True, True, True, False, True, False]
    assert [c.model for c in check_models(hand, ["zip"])] == ["k-anonymity"]
    measured = check_models(hand, "zip", "smoker")
    assert all(c.satisfied is None and c.parameter == {} for c in measured)
    # the same figures as the single checks
    assert measured[3] == t_closeness(hand, "zip", "smoker")


def test_model_check_to_dict_is_plain(hand):
    check = check_models(hand, "zip", ["disease"], k=2)[-1]
    record = check.to_dict()
    assert set(record) == {"model", "parameter", "satisfied", "value", "detail", "note"}
    assert json.loads(json.dumps(record))["value"] == math.inf
    assert isinstance(check, ModelCheck)
    with pytest.raises(AttributeError):
        check.value = 0  # type: ignore[misc]


def test_the_result_does_not_depend_on_the_order_or_index(hand):
    shuffled = hand.sample(frac=1, random_state=3).set_axis(list("qwertyui"))
    for a, b in zip(
        check_models(hand, "zip", ["salary", "smoker"]), check_models(shuffled, "zip", ["salary", "smoker"])
    ):
        assert a == b


# ----------------------------------------------------------------------------- cases


def test_one_record_classes_are_reported_not_raised():
    original = load_census()[["AGI", "TAXINC", "FEDTAX"]]
    masked = additive_noise(original, 0.1, seed=1)
    checks = check_models(masked, ["AGI", "TAXINC"], "FEDTAX", k=3, l=2)
    k_check = checks[0]
    assert k_check.satisfied is False and k_check.value == 1
    assert k_check.detail["one_record_classes"] == len(masked)
    assert "every equivalence class has one record" in k_check.note
    assert "cannot be k-anonymous" in k_check.note
    assert checks[1].satisfied is False and "cannot be l-diverse" in checks[1].note
    assert checks[-1].value == math.inf and "epsilon is infinite" in checks[-1].note
    # k = 1 holds for any file: no note
    assert k_anonymity(masked, ["AGI", "TAXINC"], 1).note == ""


def test_nan_in_quasi_identifiers_is_one_more_value():
    frame = pd.DataFrame({"q": ["a", "a", None, None, np.nan], "r": [1, 1, 2, 2, 2], "s": [1, 2, 1, 2, 1]})
    check = k_anonymity(frame, ["q", "r"])
    assert check.value == 2 and check.detail["n_classes"] == 2
    assert "NaN in quasi-identifier(s) ['q'] (3 record(s))" in check.note
    numeric = pd.DataFrame({"q": [1.0, np.nan, np.nan], "s": [1, 1, 2]})
    assert k_anonymity(numeric, "q").detail["n_classes"] == 2


def test_categorical_columns():
    frame = pd.DataFrame(
        {
            "q": pd.Categorical(["u", "u", "v", "v"], categories=["u", "v", "unused"]),
            "level": pd.Categorical(["lo", "hi", "lo", "mid"], categories=["lo", "mid", "hi"], ordered=True),
            "kind": pd.Categorical(["x", "y", "x", "x"]),
        }
    )
    assert k_anonymity(frame, "q").detail["n_classes"] == 2  # unused categories make no class
    # ordered categorical: ordered EMD over lo < mid < hi, p = (2, 1, 1)/4, m - 1 = 2
    #   u q = (1/2, 0, 1/2): cumulative p - q = 0, 1/4, 0 -> 1/8; v q = (1/2, 1/2, 0): 0, -1/4, 0 -> 1/8
    check = t_closeness(frame, "q", ["level", "kind"])
    assert check.detail["per_attribute"]["level"] == {"emd": 1 / 8, "distance": "ordered", "n_values": 3}
    # nominal categorical: equal distance, p = (3/4, 1/4); u (1/2, 1/2) -> 1/4; v (1, 0) -> 1/4
    assert check.detail["per_attribute"]["kind"]["emd"] == 1 / 4
    assert t_closeness(frame, "q", "level", distance="equal").value == 1 / 4


def test_constant_confidential_attribute():
    frame = pd.DataFrame({"q": [1, 1, 2], "s": [5, 5, 5]})
    assert t_closeness(frame, "q", "s").value == 0.0
    assert dp_ratio(frame, "q", "s").value == 0.0
    assert l_diversity(frame, "q", "s", kind="entropy").value == 1.0


def test_nan_in_a_confidential_attribute():
    frame = pd.DataFrame({"q": [1, 1, 2, 2], "s": [1.0, np.nan, 1.0, 2.0]})
    assert l_diversity(frame, "q", "s").value == 2  # NaN is one more value
    with pytest.raises(InputError, match=r"'s' has 1 NaN value\(s\).*distance='equal'"):
        t_closeness(frame, "q", "s")
    assert t_closeness(frame, "q", "s", distance="equal").value == 0.25


def test_large_file_is_fast_and_exact():
    rng = np.random.default_rng(0)
    n = 100_000
    frame = pd.DataFrame({"q": rng.integers(0, 2000, n), "s": rng.integers(0, 500, n)})
    checks = check_models(frame, "q", ["s"], k=2, l=2, t=0.5)
    assert checks[0].value >= 1 and len(checks) == 5
    # classes whose distribution is the file's: distances exactly 0
    same = pd.DataFrame({"q": np.repeat([0, 1], n // 2), "s": np.tile(np.arange(50), n // 50)})
    assert t_closeness(same, "q", "s").value == 0.0
    assert dp_ratio(same, "q", "s").value == 0.0


def _direct(frame: pd.DataFrame, q: str, s: str) -> tuple[float, float, float]:
    """Ordered EMD, equal EMD and ratio t from the dense class x value table, by the formulas."""
    table = pd.crosstab(frame[q], frame[s]).sort_index(axis=1).to_numpy(dtype=float)
    qs = table / table.sum(axis=1, keepdims=True)
    p = table.sum(axis=0) / table.sum()
    m = p.size
    ordered = np.abs(np.cumsum(p - qs, axis=1)).sum(axis=1).max() / max(m - 1, 1)
    equal = 0.5 * np.abs(p - qs).sum(axis=1).max()
    with np.errstate(divide="ignore"):
        ratio = np.maximum(qs / p, p / qs).max()
    return ordered, equal, ratio


@pytest.mark.parametrize("seed", range(5))
def test_sparse_distances_match_the_dense_formulas(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 400))
    frame = pd.DataFrame(
        {"q": rng.integers(0, rng.integers(1, 30), n), "s": rng.integers(0, rng.integers(1, 40), n)}
    )
    frame["s"] = frame["s"] * 7.5 - 3  # values, not codes: only their order matters
    ordered, equal, ratio = _direct(frame, "q", "s")
    assert t_closeness(frame, "q", "s").value == pytest.approx(ordered, abs=1e-12)
    assert t_closeness(frame, "q", "s", distance="equal").value == pytest.approx(equal, abs=1e-12)
    assert dp_ratio(frame, "q", "s").detail["ratio"] == pytest.approx(ratio, rel=1e-12)


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda f: k_anonymity(f, ["zip", "nope"]), r"unknown column\(s\) \['nope'\]"),
        (lambda f: k_anonymity(f, []), "quasi_identifiers: the list of columns is empty"),
        (lambda f: k_anonymity(f, ["zip", "zip"]), "given more than once"),
        (lambda f: l_diversity(f, "zip", ["zip"]), r"confidential attribute\(s\) \['zip'\] also among"),
        (lambda f: l_diversity(f, "zip", []), "confidential: the list of columns is empty"),
        (lambda f: k_anonymity(f, "zip", 0), "k=0; expected an integer >= 1"),
        (lambda f: k_anonymity(f, "zip", 2.5), "k=2.5; expected an integer"),
        (lambda f: l_diversity(f, "zip", "smoker", 0.5), "l=0.5; expected a number >= 1"),
        (lambda f: l_diversity(f, "zip", "smoker", kind="recursive"), "kind='recursive'"),
        (lambda f: t_closeness(f, "zip", "smoker", 1.5), r"t=1.5; expected a number 0 <= t <= 1"),
        (lambda f: t_closeness(f, "zip", "smoker", -0.1), r"t=-0.1; expected a number 0 <= t <= 1"),
        (lambda f: t_closeness(f, "zip", "smoker", distance="hier"), "distance='hier'"),
        (lambda f: p_sensitive_k_anonymity(f, "zip", "smoker", k=2, p=3), r"p=3 > k=2; expected p <= k"),
        (lambda f: check_models(f, "zip", "smoker", p=2), "p=2 without k"),
        (lambda f: dp_ratio(f, "zip", "smoker", epsilon=-1), "epsilon=-1; expected"),
        (lambda f: k_anonymity(f.iloc[:0], "zip"), "0 records"),
    ],
)
def test_bad_input_raises_input_error(hand, call, message):
    with pytest.raises(InputError, match=message):
        call(hand)


# ----------------------------------------------------------------------------- pycanon on the same frames


def _census_binned() -> pd.DataFrame:
    census = load_census()
    return pd.DataFrame(
        {
            "agi": census["AGI"] // 20_000 * 20_000,
            "weight": census["AFNLWGT"] // 100_000,
            "fedtax": census["FEDTAX"] // 2_000 * 2_000,
            "statetax": census["STATETAX"] // 1_000,
            "fica": pd.qcut(census["FICA"], 5, labels=["q1", "q2", "q3", "q4", "q5"]).astype(str),
        }
    )


def _categorical_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "sex": list("MMMMFFFFMF"),
            "region": list("NNSSNNSSNS"),
            "disease": ["flu", "cold", "flu", "hiv", "flu", "cold", "cold", "flu", "hiv", "hiv"],
            "smoker": list("ynynnyynyy"),
        }
    )


def _one_record_frame() -> pd.DataFrame:
    census = load_census().iloc[:150]
    return pd.DataFrame(
        {"agi": census["AGI"], "taxinc": census["TAXINC"], "fica": census["FICA"] // 1_000 * 1_000}
    )


FRAMES = {
    "census": (_census_binned, ["agi", "weight"], ["fedtax", "statetax", "fica"]),
    "categorical": (_categorical_frame, ["sex", "region"], ["disease", "smoker"]),
    "one_record_classes": (_one_record_frame, ["agi", "taxinc"], ["fica"]),
}


# pycanon 1.3.6 groups by a one-element list, which pandas 3 warns about
IGNORE_PYCANON_WARNING = pytest.mark.filterwarnings("ignore:In a future version, the keys of `groups`")


@pytest.fixture(scope="module")
def pycanon():
    return pytest.importorskip("pycanon.anonymity")


@IGNORE_PYCANON_WARNING
@pytest.mark.parametrize("name", list(FRAMES))
def test_same_figures_as_pycanon(pycanon, name):
    build, qis, confidential = FRAMES[name]
    frame = build()
    checks = {c.model: c for c in check_models(frame, qis, confidential)}
    assert checks["k-anonymity"].value == pycanon.k_anonymity(frame, qis)
    assert checks["l-diversity (distinct)"].value == pycanon.l_diversity(frame, qis, confidential)
    # same definition (min over classes and attributes of exp(H)); pycanon keeps the integer part
    entropy_l = checks["l-diversity (entropy)"].value
    assert pycanon.entropy_l_diversity(frame, qis, confidential) in {
        math.floor(entropy_l - 1e-9),
        math.floor(entropy_l + 1e-9),
    }
    # ordered EMD for the numeric attributes, equal distance for the strings: the same formulas
    assert checks["t-closeness"].value == pytest.approx(
        pycanon.t_closeness(frame, qis, confidential), abs=1e-12
    )
    for column in confidential:
        ours = t_closeness(frame, qis, column).value
        assert ours == pytest.approx(pycanon.t_closeness(frame, qis, [column]), abs=1e-12)
        # delta-disclosure = max |ln(q/p)| over the values present in a class; epsilon = 2 ln t
        delta = pycanon.delta_disclosure(frame, qis, [column])
        epsilon = dp_ratio(frame, qis, column)
        if epsilon.detail["per_attribute"][column]["classes_missing_a_value"] == 0:
            assert epsilon.value == pytest.approx(2 * delta, rel=1e-12)
        else:
            assert epsilon.value == math.inf and math.isfinite(delta)


def test_census_frame_has_classes_of_several_sizes():
    build, qis, _ = FRAMES["census"]
    check = k_anonymity(build(), qis)
    assert (
        5 < check.detail["n_classes"] < 100 and check.detail["one_record_classes"] < check.detail["n_classes"]
    )
    assert k_anonymity(_one_record_frame(), ["agi", "taxinc"]).detail["one_record_classes"] == 150


@IGNORE_PYCANON_WARNING
def test_documented_differences_from_pycanon(pycanon):
    frame = _categorical_frame()
    # NaN in a quasi-identifier: one more value here, pycanon drops the record
    with_nan = frame.assign(region=frame["region"].where(frame.index != 9, None))
    assert k_anonymity(with_nan, ["sex", "region"]).value == 1
    assert pycanon.k_anonymity(with_nan, ["sex", "region"]) == 2
    # entropy l-diversity: a real number here, its integer part in pycanon
    assert l_diversity(frame, ["sex", "region"], "disease", kind="entropy").value == pytest.approx(2.0)
    assert l_diversity(frame, "sex", "smoker", kind="entropy").value == pytest.approx(1.9601, abs=1e-4)
    assert pycanon.entropy_l_diversity(frame, ["sex"], ["smoker"]) == 1
    # an ordered categorical: ordered EMD here, equal distance in pycanon
    ordered = pd.DataFrame(
        {
            "zip": list("AAAABBCC"),
            "s": pd.Categorical(list("lmhhllhh"), categories=["l", "m", "h"], ordered=True),
        }
    )
    # p = (3, 1, 4)/8; B q = (1, 0, 0): cumulative p - q = -5/8, -4/8, 0 -> (9/8)/2 = 9/16; equal: 10/16
    assert t_closeness(ordered, "zip", "s").value == 9 / 16
    assert (
        pycanon.t_closeness(ordered, ["zip"], ["s"])
        == t_closeness(ordered, "zip", "s", distance="equal").value
    )
    assert t_closeness(ordered, "zip", "s", distance="equal").value == 10 / 16


def test_cli_models_prints_each_level_and_bad_roles_are_one_error_line(tmp_path, capsys):
    from tests._helpers import run_main

    frame = pd.DataFrame({"age": [30, 30, 40, 40], "zip": [1, 1, 2, 2], "income": [10, 20, 10, 10]})
    frame.to_csv(tmp_path / "r.csv", index=False)
    code = run_main(
        [
            "models",
            tmp_path / "r.csv",
            "--quasi-identifiers",
            "age,zip",
            "--confidential",
            "income",
            "--k",
            "2",
            "--l",
            "2",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "k-anonymity: 2 (asked k=2) - satisfied" in out
    assert "l-diversity (distinct): 1 (asked l=2) - NOT satisfied" in out
    code = run_main(
        ["models", tmp_path / "r.csv", "--quasi-identifiers", "age,income", "--confidential", "income"]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "also among the quasi-identifiers" in err[0]
