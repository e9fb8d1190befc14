"""The verified incumbent portfolio: starts and searches only move the lower end up,
every parameter they return is admissible and recounted, and the optimum is unchanged."""

import numpy as np
import pytest
from sklearn.neighbors import NeighborhoodComponentsAnalysis

from rlopt import LearnedDistanceLinkage, build, published_recipe
from rlopt.data import standardise, validate_pair
from rlopt.families import get_family
from rlopt.families.md import Mahalanobis
from rlopt.linkage.distance_based import recount
from rlopt.milp.incumbents.greedy import greedy_add
from rlopt.milp.incumbents.portfolio import search_incumbents
from rlopt.milp.incumbents.surrogate import _projection, surrogate_ascent
from rlopt.milp.margins import PairMargins
from tests._helpers import MARGIN, fit, noisy_file, one_weight_intervals
from tests.learn.test_trust import correlated_noise_file

SEARCHES_OFF = {"nca_start": False, "surrogate": False, "line_search": False, "greedy_add": False}


def _pair(original, masked):
    data = validate_pair(original, masked)
    return data, standardise(data.masked), standardise(data.original)


def _count(family, theta, data, za, zb):
    return int(recount(za, zb, family.distance(theta, data.columns), margin=MARGIN, tol=1e-9)[1].sum())


@pytest.mark.parametrize("name", ["wm", "owa", "ci", "sb"])
def test_searches_climb_stay_admissible_and_never_pass_the_optimum(name):
    original, masked = noisy_file(41, 30, 3, scale=(0.6, 0.9, 1.2))
    data, za, zb = _pair(original, masked)
    family = get_family(name)
    start = family.neutral(3)
    margins = PairMargins.build(za, zb, family)
    optimum = fit(name, original, masked, reductions="none").n_correct
    surrogate, planned = surrogate_ascent(za, zb, family, start, margin=MARGIN, margins=margins)
    grown, grown_plan = greedy_add(za, zb, family, surrogate, margin=MARGIN, margins=margins)
    for theta, plan in ((surrogate, planned), (grown, grown_plan)):
        assert family.is_admissible(theta, za, zb)
        assert _count(family, theta, data, za, zb) == plan  # the plan is what the recount finds
    assert _count(family, start, data, za, zb) <= planned <= grown_plan <= optimum


def test_projection_is_the_nearest_admissible_point():
    family = get_family("wm")
    project = _projection(family, 3)
    # onto the simplex: (0.5, 0.5, 2) -> (0, 0, 1); (0.4, 0.3, 0.6) -> subtract 0.1 each
    assert np.allclose(project(np.array([0.5, 0.5, 2.0])), [0.0, 0.0, 1.0], atol=1e-7)
    assert np.allclose(project(np.array([0.4, 0.3, 0.6])), [0.3, 0.2, 0.5], atol=1e-7)


def test_greedy_add_ends_with_a_set_no_record_can_join():
    # wm on two attributes: record i is re-identified exactly for the weight p of an
    # interval (worked out row by row); a set is re-identified together iff its
    # intervals meet. The greedy add refuses a record only when no parameter adds it.
    original, masked = noisy_file(7, 14, 2, scale=(0.3, 1.0))
    data, za, zb = _pair(original, masked)
    family = get_family("wm")
    margins = PairMargins.build(za, zb, family)
    theta, count = greedy_add(za, zb, family, family.neutral(2), margin=MARGIN, margins=margins)
    assert count == _count(family, theta, data, za, zb) > _count(family, family.neutral(2), data, za, zb)
    own = (za - zb) ** 2
    other = (za[:, None, :] - zb[None, :, :]) ** 2
    intervals = one_weight_intervals(own, other, MARGIN)
    members = margins.at(theta).min(axis=1) >= MARGIN
    lo = max(intervals[i][0] for i in np.flatnonzero(members))
    hi = min(intervals[i][1] for i in np.flatnonzero(members))
    assert lo <= hi
    for c in np.flatnonzero(~members):
        assert max(lo, intervals[c][0]) > min(hi, intervals[c][1]) - 1e-9, c


def test_starts_and_searches_leave_the_proven_optimum_unchanged():
    original, masked = build(published_recipe("M4-33"))
    for name in ("wm", "sb"):
        plain = LearnedDistanceLinkage(name, searches=SEARCHES_OFF).fit(original, masked).result_
        searched = LearnedDistanceLinkage(name).fit(original, masked).result_
        assert plain.status == searched.status == "optimal"
        assert plain.n_correct_verified == searched.n_correct_verified


def _nca_projection(za, zb, name):
    """scikit-learn's NCA on the pairs, projected into ``name`` (computed here, apart from rlopt)."""
    n = za.shape[0]
    nca = NeighborhoodComponentsAnalysis(init="identity", max_iter=50, random_state=0)
    nca.fit(np.vstack([za, zb]), np.tile(np.arange(n), 2))
    matrix = nca.components_.T @ nca.components_
    matrix = matrix / np.trace(matrix)
    if name == "wm":
        return np.diag(matrix)
    return matrix[np.triu_indices(za.shape[1])]


@pytest.mark.parametrize(
    "files",
    # both families on the correlated noise (120 records, 2-8 s each) in the default run; on
    # the published M5-38 (400 x 5, 10-13 s each) with -m slow
    ["correlated noise", pytest.param("M5-38", marks=pytest.mark.slow)],
)
@pytest.mark.parametrize("name", ["wm", "sb"])
def test_lower_end_is_never_below_nca_md_or_am_projected_into_the_family(files, name):
    if files == "M5-38":
        original, masked = build(published_recipe("M5-38"))
    else:
        original, masked = correlated_noise_file(n=120)
    data, za, zb = _pair(original, masked)
    family = get_family(name)
    md = Mahalanobis().from_data(za, zb, data.columns).precision
    md = md / np.trace(md)
    md_theta = np.diag(md) if name == "wm" else md[np.triu_indices(za.shape[1])]
    figures = {
        "AM": _count(family, family.neutral(za.shape[1]), data, za, zb),
        "MD": _count(family, md_theta, data, za, zb),
        "NCA": _count(family, _nca_projection(za, zb, name), data, za, zb),
    }
    result = LearnedDistanceLinkage(name, margin=MARGIN, time_limit=8).fit(original, masked).result_
    assert result.n_correct_verified >= max(figures.values()), (figures, result.lower_source)
    assert result.n_correct_verified <= result.bound


def test_search_incumbents_records_every_admissible_parameter_best_first():
    original, masked = noisy_file(3, 25, 3)
    data, za, zb = _pair(original, masked)
    family = get_family("sb")
    found = []
    bad = np.zeros(6)  # trace 0: not admissible (sb has no repair)
    met = search_incumbents(
        za,
        zb,
        family,
        data.columns,
        [("neutral", family.neutral(3)), ("not admissible", bad)],
        margin=MARGIN,
        tol=1e-9,
        feasibility_tol=1e-9,
        found=lambda count, label: found.append((count, label)),
    )
    labels = [item.label for item in met]
    assert "not admissible" not in labels and "neutral" in labels
    assert [item.count for item in met] == sorted((item.count for item in met), reverse=True)
    assert len(found) == len(met) and all(family.is_admissible(item.theta, za, zb) for item in met)


def test_a_repaired_search_result_says_so():
    original, masked = noisy_file(3, 25, 3)
    data, za, zb = _pair(original, masked)
    family = get_family("sb_pd")
    met = search_incumbents(
        za,
        zb,
        family,
        data.columns,
        [("zero matrix", np.zeros(6))],
        margin=MARGIN,
        tol=1e-9,
        feasibility_tol=1e-9,
        searches=(),
    )
    assert [item.label for item in met] == ["zero matrix (repaired)"]
    assert family.is_admissible(met[0].theta, za, zb)


def test_nca_is_fitted_on_a_bounded_sample(monkeypatch):
    """NCA's deadline is checked between iterations, each O(N^2): on 1918 mixed records its
    first iteration took 3.3 s of a 5 s limit. It sees at most NCA_MAX_RECORDS pairs."""
    import rlopt.milp.incumbents.portfolio as portfolio

    seen = []
    real_fit = NeighborhoodComponentsAnalysis.fit

    def fit_and_see(self, X, y):
        seen.append(len(X))
        return real_fit(self, X, y)

    monkeypatch.setattr(NeighborhoodComponentsAnalysis, "fit", fit_and_see)
    portfolio._NCA_DONE.clear()
    za, zb = (standardise(f.to_numpy()) for f in noisy_file(4, n_records=1200, n_attributes=3))
    assert portfolio.nca_matrix(za, zb) is not None
    assert seen == [2 * portfolio.NCA_MAX_RECORDS]
