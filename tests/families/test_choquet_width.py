"""Choquet families on real widths: the size limit of the full
measure, and the k-additive subfamily ci_k (Möbius masses), a lower end for ci."""

import itertools

import numpy as np
import pandas as pd
import pytest

from rlopt.exceptions import InputError
from rlopt.families import get_family
from rlopt.families.choquet import MAX_ROW_BYTES, Choquet, ChoquetDistance
from rlopt.families.containment import embed
from rlopt.families.kadditive import (
    LOWER_END,
    KAdditiveChoquet,
    KAdditiveDistance,
    embed_mobius,
    measure_to_mobius,
    mobius_to_measure,
    subsets,
)
from rlopt.families.wm import WeightedMeanDistance
from rlopt.learn import LearnedDistanceLinkage
from tests._helpers import MARGIN, noisy_file

# ---- the distance, by hand -----------------------------------------------------------


def test_two_additive_distance_by_hand():
    za = np.sqrt(np.array([[1.0, 3.0, 2.0]]))  # squared differences 1, 3, 2 against zb = 0
    # m_a, m_b, m_c, m_ab, m_ac, m_bc (subsets() order)
    mobius = np.array([0.3, 0.4, 0.2, 0.2, -0.1, 0.0])
    assert subsets(3, 2) == ((0,), (1,), (2,), (0, 1), (0, 2), (1, 2))
    distance = KAdditiveDistance(mobius, ("a", "b", "c"), k=2)
    # sum_A m(A) min_{i in A} x_i: 0.3*1 + 0.4*3 + 0.2*2 + 0.2*min(1,3) - 0.1*min(1,2) + 0*min(3,2)
    assert distance.pairwise(za, np.zeros((1, 3)))[0, 0] == pytest.approx(2.0)
    # the same as ci with mu = the measure of m: b (3), then c (2), then a (1):
    # 3 mu(b) + 2 (mu(bc) - mu(b)) + 1 (mu(abc) - mu(bc)) = 1.2 + 0.4 + 0.4
    mu = distance.measure()
    assert mu[0b010] == pytest.approx(0.4) and mu[0b110] == pytest.approx(0.6)
    assert mu[0b011] == pytest.approx(0.9) and mu[0b101] == pytest.approx(0.4)
    assert mu[0b111] == pytest.approx(1.0)
    assert ChoquetDistance(mu, ("a", "b", "c")).pairwise(za, np.zeros((1, 3)))[0, 0] == pytest.approx(2.0)
    family = KAdditiveChoquet()
    theta = family.theta_from_mobius(mobius, 3)
    phi, offset = family.features(za, np.zeros((1, 3)))
    assert phi[0, 0] @ theta + offset[0, 0] == pytest.approx(2.0)
    assert family.is_admissible(theta, za, np.zeros((1, 3)))


@pytest.mark.parametrize("n, k", [(3, 1), (3, 2), (4, 2), (4, 3), (5, 2), (5, 5)])
def test_features_and_reference_evaluator_agree_with_ci(n, k):
    rng = np.random.default_rng(n * 10 + k)
    za, zb = rng.normal(size=(5, n)), rng.normal(size=(6, n))
    columns = tuple("abcde"[:n])
    family = KAdditiveChoquet(k=k)
    theta = rng.uniform(-1, 1, family.n_params(n))  # linearity holds for any theta
    phi, offset = family.features(za, zb)
    distance = family.distance(theta, columns)
    np.testing.assert_allclose(phi @ theta + offset, distance.pairwise(za, zb), atol=1e-12)
    np.testing.assert_allclose(
        ChoquetDistance(distance.measure(), columns).pairwise(za, zb), distance.pairwise(za, zb), atol=1e-12
    )
    # the evaluator of wide files (ranks, no measure) gives the same values
    np.testing.assert_allclose(distance.pairwise_by_ranks(za, zb), distance.pairwise(za, zb), atol=1e-12)
    again = family.theta_from_params(distance.params(), columns)
    np.testing.assert_allclose(family.mobius(again, n), family.mobius(theta, n))
    assert LOWER_END.startswith("a lower end for ci") and distance.params()["note"] == LOWER_END


def test_mobius_and_measure_are_inverse():
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 5):
        mu = rng.uniform(size=2**n)
        np.testing.assert_allclose(mobius_to_measure(measure_to_mobius(mu, n), n), mu, atol=1e-12)


# ---- the Möbius monotonicity rows accept exactly the monotone measures ---------------------


def _monotone(mu, n, tol=1e-9):
    return all(mu[s | 1 << i] >= mu[s] - tol for s in range(2**n) for i in range(n))


def _random_measures(n, count, rng):
    """Measures with mu(V) = 1: half of them made monotone."""
    for t in range(count):
        mu = rng.uniform(size=2**n)
        mu[0], mu[-1] = 0.0, 1.0
        if t % 2:
            for s in range(2**n):  # monotone closure from below, capped at mu(V)
                for i in range(n):
                    if s >> i & 1:
                        mu[s] = max(mu[s], mu[s ^ 1 << i])
            mu = np.minimum(mu, 1.0)
        yield mu


@pytest.mark.parametrize("n", [3, 4])
def test_k_equal_n_is_cis_admissible_set(n):
    rng = np.random.default_rng(n)
    ci, full = Choquet(), KAdditiveChoquet(k=n)
    z = np.zeros((1, n))
    seen = set()
    for mu in _random_measures(n, 200, rng):
        theta = embed_mobius(measure_to_mobius(mu, n), n, full)
        verdict = full.is_admissible(theta, z, z, tol=1e-9)
        assert verdict == ci.is_admissible(mu[1:-1], z, z, tol=1e-9) == _monotone(mu, n)
        seen.add(verdict)
    assert seen == {True, False}
    assert len(full.constraints(n)) == 1 + n * (2 ** (n - 1) - 1)


@pytest.mark.parametrize("n", [3, 4])
def test_two_additive_rows_accept_exactly_the_monotone_two_additive_measures(n):
    rng = np.random.default_rng(10 + n)
    family, ci = KAdditiveChoquet(k=2), Choquet()
    z = np.zeros((1, n))
    seen = set()
    for _ in range(300):
        mobius = np.concatenate([rng.uniform(0, 1, n), rng.uniform(-0.5, 0.3, n * (n - 1) // 2)])
        mobius /= mobius.sum()
        mu = mobius_to_measure(dict(zip(subsets(n, 2), mobius)), n)
        verdict = family.is_admissible(family.theta_from_mobius(mobius, n), z, z, tol=1e-9)
        assert verdict == _monotone(mu, n) == ci.is_admissible(mu[1:-1], z, z, tol=1e-9)
        # the enumerated Möbius rows of the brief, sum_{j in B} m_ij >= -m_i for every B
        rows = all(
            mobius[i]
            + sum(
                mobius[n + p]
                for p, pair in enumerate(itertools.combinations(range(n), 2))
                if i in pair and set(pair) - {i} <= set(b)
            )
            >= -1e-9
            for i in range(n)
            for size in range(n)
            for b in itertools.combinations([j for j in range(n) if j != i], size)
        )
        assert verdict == rows
        seen.add(verdict)
    assert seen == {True, False}
    # n(n+1)/2 masses, n(n-1)/2 auxiliary u, 1 + n(n-1)/2 + n rows
    assert family.n_mobius(n) == n * (n + 1) // 2 and family.n_params(n) == n * n
    assert len(family.constraints(n)) == 1 + n * (n - 1) // 2 + n


def test_options_and_limits_are_checked_before_any_work():
    with pytest.raises(InputError, match=r"ci_k k=0; expected an integer >= 1"):
        get_family("ci_k", k=0)
    with pytest.raises(InputError, match=r"ci_k k=True"):
        get_family("ci_k", k=True)
    with pytest.raises(InputError, match=r"ci_k k=5 for 4 attributes; expected 1 <= k <= 4"):
        get_family("ci_k", k=5).check_attributes(4)
    with pytest.raises(InputError, match=r"k=3 on 17 attributes .* use k=2"):
        get_family("ci_k", k=3).check_attributes(17)
    get_family("ci_k").check_attributes(60)  # k = 2: polynomial, any width
    # the full measure: limited by size, 13 attributes for ci, 12 for ci_m and ci_super
    assert Choquet().row_bytes(13) <= MAX_ROW_BYTES < Choquet().row_bytes(14)
    get_family("ci").check_attributes(13)
    with pytest.raises(
        InputError,
        match=r"'ci' takes at most 13 attributes; the file has 14: .*"
        r"16,382 measure values .* 15\.0 GB .* ci_k",
    ):
        get_family("ci").check_attributes(14)
    with pytest.raises(InputError, match=r"'ci_m' takes at most 12 attributes; the file has 13"):
        get_family("ci_m").check_attributes(13)
    get_family("ci_m", published_relaxation=True).check_attributes(13)
    with pytest.raises(InputError, match=r"'ci_super' takes at most 12 attributes"):
        get_family("ci_super").check_attributes(13)


def test_full_measure_rows_are_cheap_to_build_and_check_at_thirteen():
    family = Choquet()
    rows = family.constraints(13)
    assert len(rows) == family.n_family_rows(13) == 13 * 2**12 - 26
    assert rows.matrix().dtype == np.int8 and rows.matrix().shape == (53222, 8190)
    z = np.zeros((1, 13))
    assert family.is_admissible(family.neutral(13), z, z)
    bad = family.neutral(13)
    bad[0b11 - 1] = 0.0  # mu({0, 1}) below mu({0})
    assert not family.is_admissible(bad, z, z)


# ---- containment: embeddings ------------------------------------------------------------


def test_embeddings_give_the_same_distances():
    rng = np.random.default_rng(5)
    n, columns = 4, tuple("abcd")
    za, zb = rng.normal(size=(6, n)), rng.normal(size=(7, n))
    z = np.zeros((1, n))
    weights = rng.dirichlet(np.ones(n))
    wm = WeightedMeanDistance(weights, columns)
    two = KAdditiveChoquet(k=2)
    theta = embed(wm, two, n)
    assert two.is_admissible(theta, z, z)
    np.testing.assert_allclose(two.distance(theta, columns).pairwise(za, zb), wm.pairwise(za, zb))
    # a monotone 2-additive measure -> ci, ci_k with k = 3 and back to k = 2
    mobius = np.array([0.3, 0.2, 0.25, 0.15, 0.1, -0.05, 0.0, 0.05, 0.0, 0.0])
    k2 = two.distance(two.theta_from_mobius(mobius, n), columns)
    for family in (get_family("ci"), KAdditiveChoquet(k=3), KAdditiveChoquet(k=4)):
        theta = embed(k2, family, n)
        assert family.is_admissible(theta, z, z)
        np.testing.assert_allclose(family.distance(theta, columns).pairwise(za, zb), k2.pairwise(za, zb))
    ci = get_family("ci").distance(embed(k2, get_family("ci"), n), columns)
    back = embed(ci, two, n)  # ci's measure is 2-additive here
    np.testing.assert_allclose(two.mobius(back, n), mobius, atol=1e-12)
    # a measure that is not 2-additive does not embed
    k3 = KAdditiveChoquet(k=3)
    three = k3.distance(k3.theta_from_mobius(np.concatenate([mobius, [0.05, 0, 0, 0]]) / 1.05, n), columns)
    assert embed(three, two, n) is None


# ---- learning: wm <= ci_k <= ci on a small file, proven optimal ---------------------------


@pytest.fixture(scope="module")
def small_file():
    return noisy_file(11, 30, 4, scale=(0.3, 0.5, 0.8, 1.0))


def _fit(name, original, masked, **options):
    return LearnedDistanceLinkage(name, margin=MARGIN, time_limit=60, family_options=options or None).fit(
        original, masked
    )


def test_ci_k_lies_between_wm_and_ci_and_is_labelled_a_lower_end(small_file):
    fits = {
        "wm": _fit("wm", *small_file),
        "ci_k": _fit("ci_k", *small_file),
        "ci_k3": _fit("ci_k", *small_file, k=3),
        "ci_k4": _fit("ci_k", *small_file, k=4),
        "ci": _fit("ci", *small_file),
    }
    counts = {name: f.result_.n_correct_verified for name, f in fits.items()}
    assert all(f.result_.status == "optimal" for f in fits.values())
    assert counts["wm"] <= counts["ci_k"] <= counts["ci_k3"] <= counts["ci_k4"] == counts["ci"]
    assert counts["wm"] < counts["ci_k"] < counts["ci"]  # on this file each family is itself
    result = fits["ci_k"].result_
    assert result.family == "ci_k" and result.params["note"] == LOWER_END
    assert result.params["k"] == 2 and len(result.params["mobius"]) == 10
    assert result.model["n_params"] == 16  # 10 masses and 6 auxiliary u
    # ci_k's optimum, handed to ci, is a start and a lower end of ci
    ci = LearnedDistanceLinkage("ci", margin=MARGIN, time_limit=60)
    ci.fit(*small_file, known=[("ci_k's best parameter", fits["ci_k"].distance_)])
    assert ci.result_.n_correct_verified == counts["ci"]
    # saved and loaded, the parameters give the same count
    learner = fits["ci_k"]
    assert learner.link(*small_file).n_correct == result.n_correct_strict


# ---- 13 attributes: ci and ci_k are learned ------------------------------------------------


@pytest.fixture(scope="module")
def wide_file():
    rng = np.random.default_rng(13)
    original = pd.DataFrame(rng.normal(size=(16, 13)), columns=[f"c{k}" for k in range(13)])
    return original, original + rng.normal(size=original.shape) * 2.5


def test_thirteen_attributes_learn_ci_k_and_ci(wide_file):
    wm = LearnedDistanceLinkage("wm", margin=MARGIN, time_limit=30).fit(*wide_file)
    k2 = LearnedDistanceLinkage("ci_k", margin=MARGIN, time_limit=30).fit(*wide_file)
    assert k2.result_.status == "optimal" and k2.result_.model["n_params"] == 13 * 13
    assert k2.result_.params["note"] == LOWER_END
    assert k2.result_.n_correct_verified > wm.result_.n_correct_verified  # 15 > 14
    # ci: 8,190 measure values and 53,222 monotonicity rows; building them into the
    # model takes most of the time, so a short limit (an interval) and no screening LPs
    ci = LearnedDistanceLinkage("ci", margin=MARGIN, time_limit=5, reductions="none")
    ci.fit(*wide_file, known=[("ci_k's best parameter", k2.distance_)])
    result = ci.result_
    assert result.model["n_params"] == 2**13 - 2 and result.model["n_family_rows"] == 13 * 2**12 - 26
    assert result.bound >= result.n_correct_verified >= k2.result_.n_correct_verified
