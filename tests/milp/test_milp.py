"""The MILP: brute force on n = 2, containments, strict separations, big-C, recount."""

import itertools
import json

import numpy as np
import pytest

import rlopt.milp.solvers.runtime as solve_module
from rlopt.data import standardise
from rlopt.exceptions import InputError, SolverError
from rlopt.families import LEARNED, get_family
from rlopt.families.am import ArithmeticMeanDistance
from rlopt.families.choquet import ChoquetDistance
from rlopt.families.owa import OWADistance
from rlopt.learn import LearnedDistanceLinkage
from rlopt.linkage import link_records
from tests._helpers import MARGIN, brute_force_two_attributes, fit, noisy_file, run_main

# ---- reference evaluators, by hand -------------------------------------------------


def test_owa_reference_evaluator_by_hand():
    za = np.sqrt(np.array([[1.0, 3.0, 2.0]]))  # differences 1, 3, 2 against zb = 0
    # sorted decreasingly 3, 2, 1 with w = (0.5, 0.3, 0.2): 1.5 + 0.6 + 0.2
    assert OWADistance(np.array([0.5, 0.3, 0.2])).pairwise(za, np.zeros((1, 3)))[0, 0] == pytest.approx(2.3)


def test_choquet_reference_evaluator_by_hand():
    za = np.sqrt(np.array([[1.0, 3.0, 2.0]]))
    mu = np.zeros(8)
    mu[0b111] = 1.0
    mu[0b110] = 0.7  # {a1, a2}
    mu[0b010] = 0.4  # {a1}
    mu[0b001], mu[0b100], mu[0b011], mu[0b101] = 0.1, 0.2, 0.5, 0.6
    # ascending 1 (a0), 2 (a2), 3 (a1): 1 * mu(V) + (2 - 1) * mu({a1,a2}) + (3 - 2) * mu({a1})
    value = ChoquetDistance(mu, ("a0", "a1", "a2")).pairwise(za, np.zeros((1, 3)))[0, 0]
    assert value == pytest.approx(1 + 0.7 + 0.4)
    additive = np.array([sum(w for k, w in enumerate([0.2, 0.5, 0.3]) if m >> k & 1) for m in range(8)])
    assert ChoquetDistance(additive, ("a", "b", "c")).pairwise(za, np.zeros((1, 3)))[0, 0] == pytest.approx(
        0.2 * 1 + 0.5 * 3 + 0.3 * 2
    )


@pytest.mark.parametrize("name", LEARNED)
def test_model_coefficients_agree_with_reference_evaluator(name):
    rng = np.random.default_rng(3)
    za, zb = rng.normal(size=(6, 3)), rng.normal(size=(7, 3))
    family = get_family(name)
    theta = rng.uniform(-1, 1, family.n_params(3))  # linearity holds for any theta
    phi, offset = family.features(za, zb)
    np.testing.assert_allclose(
        phi @ theta + offset, family.distance(theta, ("a", "b", "c")).pairwise(za, zb), atol=1e-12
    )


# ---- brute force, n = 2 -------------------------------------------------------------


@pytest.mark.parametrize("seed", range(10))
def test_wm_and_owa_equal_brute_force_on_two_attributes(seed):
    n_records = [8, 15, 25, 40][seed % 4]
    original, masked = noisy_file(seed, n_records, 2, scale=(0.3, 0.6))
    expected = brute_force_two_attributes(original, masked, MARGIN)
    for name, optimum in expected.items():
        # the MILP's own count (the branch and bound beside it may stop it once it proves)
        assert fit(name, original, masked, searches={"parameter_bb": False}).n_correct == optimum
        assert fit(name, original, masked).n_correct_verified == optimum


def _grid_best(distances, za, zb):
    return max(int((link_records(za, zb, d).separation >= MARGIN).sum()) for d in distances)


@pytest.mark.parametrize("seed", range(3))
def test_ci_and_sb_never_below_a_dense_grid_on_two_attributes(seed):
    original, masked = noisy_file(100 + seed, 25, 2, scale=(0.3, 0.6))
    za, zb = standardise(masked.to_numpy()), standardise(original.to_numpy())
    grid = np.linspace(0, 1, 26)
    choquets = [ChoquetDistance(np.array([0, a, b, 1.0]), ("a", "b")) for a in grid for b in grid]
    assert fit("ci", original, masked).n_correct >= _grid_best(choquets, za, zb)
    sb = get_family("sb")
    bilinears = [
        sb.distance(np.array([q, r, 1 - q]), ("a", "b")) for q in grid for r in np.linspace(-1, 1, 51)
    ]
    assert fit("sb", original, masked).n_correct >= _grid_best(bilinears, za, zb)


# ---- containments and strict separations ---------------------------------------------


@pytest.fixture(scope="module")
def separating_file():
    # found by searching seeds: here every family is really itself
    return noisy_file(9, 20, 3)


@pytest.fixture(scope="module")
def all_families(separating_file):
    return {name: fit(name, *separating_file) for name in LEARNED}


def test_containments(all_families, separating_file):
    c = {name: r.n_correct for name, r in all_families.items()}
    assert all(r.status == "optimal" for r in all_families.values())
    assert c["ci"] >= c["wm"] >= c["wm_m"]
    assert c["ci"] >= c["owa"] and c["ci"] >= c["ci_m"] >= c["wm_m"] and c["ci"] >= c["ci_super"]
    assert c["sb"] >= c["sb_nc"] >= c["sb_pd"] and c["sb_nc"] >= c["wm"]
    original, masked = separating_file
    za, zb = standardise(masked.to_numpy()), standardise(original.to_numpy())
    am = int((link_records(za, zb, ArithmeticMeanDistance()).separation >= MARGIN).sum())
    assert c["wm"] >= am


def test_strict_separations(all_families):
    c = {name: r.n_correct for name, r in all_families.items()}
    assert c["ci"] > c["wm"] and c["ci"] > c["owa"] and c["sb"] > c["wm"] and c["ci"] > c["ci_m"]


def test_recount_equals_objective_everywhere(all_families):
    for r in all_families.values():
        assert r.n_correct == r.n_correct_verified and r.bound == r.n_correct and r.gap == 0


def test_learned_parameters_are_admissible(all_families):
    n = 3
    weights = np.array(list(all_families["wm_m"].params["weights"].values()))
    assert (weights >= 1e-3 / n - 1e-9).all() and weights.sum() == pytest.approx(1)
    measure = np.zeros(2**n)
    for entry in all_families["ci_m"].params["measure"]:
        measure[sum(1 << "abc".index(c) for c in entry["subset"])] = entry["value"]
    tol = 1e-7
    for s, t in itertools.product(range(2**n), repeat=2):
        if s & t == s:
            assert measure[s] <= measure[t] + tol  # monotone
        assert measure[s] + measure[t] >= measure[s | t] + measure[s & t] - tol  # submodular
    q = np.array(all_families["sb_pd"].params["Q"])
    assert np.linalg.eigvalsh(q)[0] >= 1e-3 / n - 1e-7 and np.trace(q) == pytest.approx(1)


def test_ci_m_published_relaxation_is_a_relaxation(separating_file):
    full = fit("ci_m", *separating_file).n_correct
    relaxed = fit("ci_m", *separating_file, family_options={"published_relaxation": True}).n_correct
    assert fit("ci", *separating_file).n_correct >= relaxed >= full


# ---- big-C ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["wm", "owa", "ci", "sb"])
def test_tight_big_c_equals_a_far_larger_one(name):
    original, masked = noisy_file(21, 15, 3)
    tight = fit(name, original, masked)
    assert tight.model["n_linkage_rows"] <= tight.model["n_pairs"]
    assert fit(name, original, masked, big_c=1e4).n_correct == tight.n_correct


def test_too_small_big_c_cuts_off_parameters():
    original, masked = noisy_file(9, 20, 3)
    assert fit("wm", original, masked).n_correct == 13
    with pytest.raises(SolverError, match="infeasible.*big_c=0.05"):  # never a count from it
        fit("wm", original, masked, big_c=0.05)


# ---- API, JSON, bad input -------------------------------------------------------------


def test_params_round_trip_and_link(tmp_path, separating_file):
    original, masked = separating_file
    for name in ("wm", "owa", "ci_m", "sb_nc"):
        learner = LearnedDistanceLinkage(name, margin=MARGIN).fit(original, masked)
        path = learner.save_params(tmp_path / f"{name}.json")
        again = LearnedDistanceLinkage.load_params(path)
        assert again.params_ == {k: v for k, v in learner.params_.items() if k != "options"}
        assert again.link(original, masked).n_correct == learner.link(original, masked).n_correct
        assert learner.score(original, masked) >= learner.n_correct_ / len(original)
        d = learner.distance(masked.to_numpy()[:2], original.to_numpy())
        assert d.shape == (2, len(original))
        np.testing.assert_allclose(
            d,
            learner.distance_.pairwise(standardise(masked.to_numpy())[:2], standardise(original.to_numpy())),
        )
    json.dumps(learner.result_.to_dict())


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"family": "xyz"}, "unknown distance family 'xyz'"),
        ({"family": "am"}, "baseline without parameters"),
        ({"margin": -1}, r"margin=-1; expected a number >= 0"),
        ({"time_limit": 0}, r"time_limit=0; expected a number > 0 \(seconds\) or None"),
        ({"threads": True}, r"threads=True; expected an integer >= 1 or None"),
        ({"rel_gap": 1}, r"rel_gap=1; expected a number 0 <= rel_gap < 1"),
        ({"big_c": -3}, r"big_c=-3"),
        ({"reductions": {"lazzy": True}}, r"unknown reduction\(s\) \['lazzy'\]"),
        ({"reductions": {"lazy_per_round": 0}}, r"lazy_per_round=0; expected an integer >= 1"),
        ({"reductions": "some"}, r"reductions='some'"),
    ],
)
def test_bad_arguments(kwargs, message, separating_file):
    with pytest.raises(InputError, match=message):
        LearnedDistanceLinkage(**kwargs).fit(*separating_file)


def test_a_file_the_validator_rejects(separating_file):
    original, masked = separating_file
    with pytest.raises(InputError, match="column 'a' is constant"):
        LearnedDistanceLinkage("wm").fit(original.assign(a=1.0), masked)


def test_missing_highs_is_a_clear_error(monkeypatch, separating_file):
    class Missing:
        def available(self):
            return False

    monkeypatch.setattr(solve_module, "_highs_class", lambda: Missing)
    with pytest.raises(solve_module.SolverUnavailableError, match="pip install highspy"):
        LearnedDistanceLinkage("wm").fit(*separating_file)


def test_a_ctrl_c_while_highs_initialises_is_a_ctrl_c_not_a_missing_highs(monkeypatch):
    """A Ctrl-C during the import of a compiled module surfaces as ``ImportError:
    initialization failed`` with the KeyboardInterrupt as its cause (seen 3 times in 80
    imports of highspy interrupted at 20-100 ms); rlopt reported HiGHS missing, exit 1."""
    import builtins
    import sys

    real_import = builtins.__import__

    def interrupted_import(name, *args, **kwargs):
        if name == "highspy":
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt as exc:
                raise ImportError("initialization failed") from exc
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "highspy")
    monkeypatch.setattr(builtins, "__import__", interrupted_import)
    solve_module.load_highspy.cache_clear()
    try:
        with pytest.raises(KeyboardInterrupt):
            solve_module.load_highspy()
    finally:
        solve_module.load_highspy.cache_clear()


def test_time_limit_gives_an_interval_not_an_optimum():
    original, masked = noisy_file(5, 60, 4, scale=(0.5, 0.8, 1.0, 1.2))
    result = LearnedDistanceLinkage("sb", margin=MARGIN, time_limit=0.5).fit(original, masked).result_
    assert result.status in ("optimal", "time_limit")
    if result.status == "time_limit":
        assert result.n_correct is None or result.bound >= result.n_correct


def test_model_export(tmp_path, separating_file):
    LearnedDistanceLinkage("wm", margin=MARGIN).fit(*separating_file, export=tmp_path / "m.lp")
    assert "K" in (tmp_path / "m.lp").read_text()
    with pytest.raises(InputError, match="expected a .lp or .mps"):
        LearnedDistanceLinkage("wm").fit(*separating_file, export=tmp_path / "m.txt")


def test_a_relative_gap_gives_an_interval_unless_closed():
    original, masked = noisy_file(5, 40, 3, scale=(0.6, 0.9, 1.2))
    exact = fit("ci", original, masked)
    loose = fit("ci", original, masked, rel_gap=0.5)
    assert loose.status in ("optimal", "gap_limit")
    assert loose.n_correct <= exact.n_correct <= loose.bound
    if loose.status == "optimal":
        assert loose.n_correct == exact.n_correct


def test_verify_re_proves_a_claimed_optimum(tmp_path, capsys, separating_file):
    original, masked = separating_file
    original.to_csv(tmp_path / "a.csv", index=False)
    masked.to_csv(tmp_path / "b.csv", index=False)
    code = run_main(["learn", tmp_path / "a.csv", tmp_path / "b.csv", "--family", "owa", "--verify"]
                    + ["--json", tmp_path / "r.json"])  # fmt: skip
    out = capsys.readouterr()
    assert code == 0, out.err
    figures = json.loads((tmp_path / "r.json").read_text())
    v = figures["verification"]
    assert figures["status"] == "optimal" and v["status"] == "optimal"
    assert v["agrees"] is True and v["n_correct"] == figures["n_correct_verified"]
    assert f"verified by the plain model solved by {'SCIP' if v['solver'] == 'scip' else 'HiGHS'}" in out.out
    assert f": optimal {v['n_correct']} in " in out.out
    assert "the optimum is confirmed" in out.out


def test_verify_turns_a_contradiction_into_an_error(monkeypatch, separating_file):
    """Two proofs that disagree report neither figure."""
    import dataclasses

    import rlopt.milp.pipeline as learn_module

    real = learn_module.learn

    def plain_model_finds_one_more(data, family, **kwargs):
        result, distance = real(data, family, **kwargs)
        if kwargs.get("big_c") == "uniform":
            result = dataclasses.replace(result, n_correct_verified=result.n_correct_verified + 1)
        return result, distance

    monkeypatch.setattr(learn_module, "learn", plain_model_finds_one_more)
    with pytest.raises(SolverError, match="contradicted by the plain model"):
        LearnedDistanceLinkage("wm", margin=MARGIN, verify=True).fit(*separating_file)
