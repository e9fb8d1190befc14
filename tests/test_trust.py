"""Trust: no silent wrong answer under rescaling, no figure below its own evidence,
validated options, clear errors (the trust issue's numbered items)."""

import warnings

import numpy as np
import pandas as pd
import pytest

import rlopt
from rlopt.data import standardise, validate_pair
from rlopt.exceptions import InputError, NonFiniteError
from rlopt.learn import LearnedDistanceLinkage
from rlopt.linkage import link_records
from rlopt.masking import build, microaggregate, published_recipe
from rlopt.risk import information_loss, interval_disclosure

SCALES = [1e-300, 1e-165, 7e153, 1e160, 1e300]


@pytest.fixture(scope="module")
def m433():
    return build(published_recipe("M4-33"))


# 1. Scale ------------------------------------------------------------------------------

def test_standardise_is_exact_under_powers_of_two_and_finite_at_any_scale():
    values = np.random.default_rng(0).normal(size=(50, 3)) * [1.0, 1e5, 1e-3]
    z = standardise(values)
    assert np.array_equal(standardise(values * 2.0**900), z)
    assert np.array_equal(standardise(values * 2.0**-900), z)
    for scale in SCALES:
        assert np.allclose(standardise(values * scale), z, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("scale", SCALES)
def test_linkage_counts_do_not_change_when_every_attribute_is_rescaled(m433, scale):
    original, masked = m433
    for distance in ("am", "md"):
        plain = rlopt.dbrl(original, masked, distance=distance)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # no overflow on the way
            scaled = rlopt.dbrl(original * scale, masked * scale, distance=distance)
        assert (scaled.n_correct, scaled.n_ties) == (plain.n_correct, plain.n_ties)
        assert np.array_equal(scaled.correct, plain.correct)


def test_each_attribute_on_its_own_scale_leaves_learning_and_measures_unchanged(m433):
    original, masked = m433
    scales = np.array([1e300, 1e-300, 7e153, 1e-165])
    plain = LearnedDistanceLinkage("wm").fit(original, masked).result_
    scaled = LearnedDistanceLinkage("wm").fit(original * scales, masked * scales).result_
    assert scaled.status == plain.status == "optimal"
    assert scaled.n_correct_verified == plain.n_correct_verified
    pd.testing.assert_frame_equal(interval_disclosure(original * scales, masked * scales),
                                  interval_disclosure(original, masked))
    loss, loss_scaled = (information_loss(original, masked),
                         information_loss(original * scales, masked * scales))
    assert loss_scaled == pytest.approx(loss, rel=1e-9)


def test_tiny_values_are_not_called_constant():
    values = pd.DataFrame({"a": [1.0, 2.0, 3.0, 5.0], "b": [2.0, 1.0, 4.0, 3.0]}) * 1e-300
    data = validate_pair(values, values[::-1].reset_index(drop=True))
    assert data.n_records == 4


def test_microaggregation_survives_huge_values_with_large_groups():
    values = pd.DataFrame(np.random.default_rng(1).uniform(1, 1.7, size=(40, 2)) * 1e308,
                          columns=["a", "b"])
    masked = microaggregate(values, k=20)
    assert np.isfinite(masked.to_numpy()).all()
    assert masked["a"].nunique() == 2


def test_a_non_finite_distance_is_an_error_not_a_count(m433):
    original, masked = m433
    from rlopt.families.wm import WeightedMeanDistance
    data = validate_pair(original, masked)
    za, zb = standardise(data.masked), standardise(data.original)
    broken = WeightedMeanDistance(np.array([np.nan, 0.5, 0.25, 0.25]), data.columns)
    with pytest.raises(NonFiniteError, match="not finite"):
        link_records(za, zb, broken)
