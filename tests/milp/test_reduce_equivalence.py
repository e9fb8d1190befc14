"""The fast paths of the reduce phase give the old path's results exactly:
the witness evaluation of the conflict search and of the best start, the conflict
LPs (witness certificates and one reused HiGHS LP), and the sparse linkage rows
of the lazy model. The old paths are kept here verbatim as references."""

import time

import numpy as np
import pytest

import rlopt
from rlopt.data import standardise, validate_pair
from rlopt.families import get_family
from rlopt.milp import formulation as form
from rlopt.milp.reductions import (
    LazyLinkageRows,
    best_start,
    find_conflicts,
    nearest_pairs,
    screen_records,
    separation,
    witness_hits,
)
from rlopt.milp.reductions import conflicts as con_mod
from rlopt.milp.reductions import screening as scr_mod
from rlopt.milp.reductions import witnesses as wit_mod
from tests._helpers import MARGIN, fit_with, noisy_file


def reference_find_conflicts(za, zb, family, screening, *, margin, max_lps=20000, rows_per_record=64):
    """find_conflicts as it was before the fast paths (no deadline)."""
    n = za.shape[1]
    risky = np.flatnonzero(screening.at_risk)
    compatible = np.zeros((risky.size, risky.size), dtype=bool)
    for theta in wit_mod.spread(screening.witnesses, con_mod.MAX_WITNESSES):
        distance = family.distance(theta, wit_mod.attribute_names(n))
        hit = separation(za, zb, distance, records=risky) >= margin + wit_mod.SCREEN_TOL
        compatible[np.ix_(hit, hit)] = True
    a, b = np.nonzero(np.triu(~compatible, k=1))
    if not a.size:
        return np.zeros((0, 2), dtype=int)
    order = np.random.default_rng(0).permutation(a.size)[:max_lps]
    a, b = a[order], b[order]
    needed = np.unique(np.concatenate([risky[a], risky[b]]))
    own_rows = scr_mod.tightest_rows(za, zb, family, needed, margin=margin, count=rows_per_record)
    lp = scr_mod.FamilyLP(family, n, za, zb, margin, 1e-9, max_cut_rounds=0)
    found = []
    for tried, (i, j) in enumerate(zip(risky[a], risky[b])):
        if tried >= 500 and len(found) < 0.01 * tried:
            break
        coefs = np.vstack([own_rows[i][0], own_rows[j][0]])
        constants = np.concatenate([own_rows[i][1], own_rows[j][1]])
        value, _, _ = lp.best(coefs, constants)
        if value < margin - wit_mod.SCREEN_TOL:
            found.append((i, j))
    return np.array(found, dtype=int).reshape(-1, 2)


def reference_best_start(za, zb, family, screening, *, margin, max_candidates=50):
    witnesses = wit_mod.spread(screening.witnesses, max_candidates)
    names = wit_mod.attribute_names(za.shape[1])
    counts = [
        int((separation(za, zb, family.distance(theta, names)) >= margin + wit_mod.SCREEN_TOL).sum())
        for theta in witnesses
    ]
    return np.asarray(witnesses[int(np.argmax(counts))], dtype=float)


def reference_screening(za, zb, family, *, margin, known):
    """screen_records as it was before row generation: the LP over all rows of each record."""
    n_records, n = za.shape
    best = np.full(n_records, np.nan)
    exact = np.ones(n_records, dtype=bool)
    todo = np.flatnonzero(
        separation(za, zb, family.distance(known, wit_mod.attribute_names(n))) < margin + wit_mod.SCREEN_TOL
    )
    lp = scr_mod.FamilyLP(family, n, za, zb, margin, 1e-9, 0)
    rows = form.linkage_rows(za, zb, family, margin=margin, records=todo)
    for i in todo:
        mine = rows.record == i
        best[i], _, exact[i] = lp.best(rows.coefs[mine], rows.constants[mine])
    unreachable = np.zeros(n_records, dtype=bool)
    unreachable[todo] = best[todo] < margin - wit_mod.SCREEN_TOL
    return unreachable, exact


def _standardised(original, masked):
    data = validate_pair(original, masked)
    return standardise(data.masked), standardise(data.original)


FILES = {
    "M4-33": lambda: _standardised(*rlopt.build(rlopt.published_recipe("M4-33"))),
    "noise 60": lambda: _standardised(*noisy_file(15, 60, 4, scale=(0.4, 0.6, 0.9, 1.2))),
    "noise 30x2": lambda: _standardised(*noisy_file(207, 30, 2, scale=(0.9, 1.2))),  # sb has conflicts
    "noise 150x3": lambda: _standardised(*noisy_file(31, 150, 3, scale=(0.8, 1.0, 1.3))),
}
_cache = {}


def screened(file, name):
    """(za, zb, family, screening) for a file and family, computed once per session."""
    if (file, name) not in _cache:
        za, zb = FILES[file]()
        family = get_family(name)
        screening = screen_records(za, zb, family, margin=MARGIN, known=family.neutral(za.shape[1]))
        _cache[file, name] = za, zb, family, screening
    return _cache[file, name]


# M4-33 has 400 records: the conflict LPs are capped there to keep the test fast
CASES = [
    ("noise 60", "wm", 20000),
    ("noise 60", "owa", 20000),
    ("noise 60", "sb", 20000),
    ("noise 30x2", "sb", 20000),
    ("noise 30x2", "sb_nc", 20000),
    ("noise 30x2", "ci", 20000),
    ("noise 30x2", "wm", 20000),
    ("M4-33", "wm", 400),
    ("M4-33", "owa", 400),
    ("M4-33", "sb", 100),
]


SCREENED = [
    ("M4-33", "wm"),
    ("M4-33", "sb"),
    ("noise 60", "owa"),
    ("noise 150x3", "wm"),
    ("noise 150x3", "owa"),
    ("noise 150x3", "ci"),
    ("noise 150x3", "sb_nc"),
    ("noise 150x3", "sb"),
]


@pytest.mark.parametrize("file, name", SCREENED)
def test_the_screening_by_row_generation_decides_as_the_lp_over_all_rows(file, name):
    za, zb, family, screening = screened(file, name)
    unreachable, exact = reference_screening(za, zb, family, margin=MARGIN, known=family.neutral(za.shape[1]))
    assert np.array_equal(screening.unreachable, unreachable)
    assert np.array_equal(screening.at_risk, ~unreachable)
    assert np.array_equal(screening.exact, exact)


def test_the_row_generation_is_exercised_and_finds_unreachable_records():
    za, zb, family, screening = screened("noise 150x3", "wm")
    first = scr_mod._FIRST_ROWS + family.n_params(3)
    assert za.shape[0] - 1 > 2 * first  # records with more rows than the LP starts from
    assert screening.unreachable.sum() > 0 and screening.at_risk.sum() > 0


@pytest.mark.parametrize("file, name, max_lps", CASES)
def test_conflicts_and_start_equal_the_old_path(file, name, max_lps):
    za, zb, family, screening = screened(file, name)
    old = reference_find_conflicts(za, zb, family, screening, margin=MARGIN, max_lps=max_lps)
    new = find_conflicts(za, zb, family, screening, margin=MARGIN, max_lps=max_lps)
    assert np.array_equal(new, old)
    assert np.array_equal(
        best_start(za, zb, family, screening, margin=MARGIN),
        reference_best_start(za, zb, family, screening, margin=MARGIN),
    )


@pytest.mark.parametrize(
    "file, name",
    [("noise 60", "wm"), ("noise 60", "owa"), ("noise 30x2", "sb"), ("M4-33", "wm"), ("M4-33", "owa")],
)
def test_the_comparisons_have_conflicts_to_compare(file, name):
    za, zb, family, screening = screened(file, name)
    assert len(find_conflicts(za, zb, family, screening, margin=MARGIN, max_lps=400)) > 0


@pytest.mark.parametrize("name", ["wm", "owa", "sb", "ci", "wm_m", "sb_pd"])
@pytest.mark.parametrize("path", ["fast", "features", "all rechecked"])
def test_witness_hits_are_the_reference_separation(monkeypatch, name, path):
    za, zb = FILES["noise 60"]()
    za, zb = za[:, :3], zb[:, :3]  # ci: 6 parameters
    family = get_family(name)
    rng = np.random.default_rng(3)
    thetas = [family.neutral(3)]
    for _ in range(6):  # admissible-ish parameters and some far from it: the evaluation is exact anyway
        thetas.append(family.neutral(3) + 0.3 * rng.normal(size=family.n_params(3)))
    if path == "features":
        monkeypatch.setattr(wit_mod, "quadratic_matrix", lambda distance: None)
    if path == "all rechecked":
        monkeypatch.setattr(wit_mod, "_GUARD", 1e3)
    records = np.flatnonzero(rng.random(za.shape[0]) < 0.7)
    names = wit_mod.attribute_names(3)
    for threshold in (MARGIN + wit_mod.SCREEN_TOL, 0.3):
        for theta, hit in zip(
            thetas, witness_hits(za, zb, family, thetas, records=records, threshold=threshold)
        ):
            expected = separation(za, zb, family.distance(theta, names), records=records) >= threshold
            assert np.array_equal(hit, expected)


def test_a_threshold_on_a_separation_is_rechecked_by_the_reference():
    za, zb = FILES["noise 60"]()
    family = get_family("wm")
    theta = family.neutral(za.shape[1])
    sep = separation(za, zb, family.distance(theta, wit_mod.attribute_names(za.shape[1])))
    records = np.arange(za.shape[0])
    for threshold in sep[:5]:  # a record exactly at the threshold: hit, as the reference says
        hit = next(witness_hits(za, zb, family, [theta], records=records, threshold=threshold))
        assert np.array_equal(hit, sep >= threshold)


@pytest.mark.parametrize("file, name", [("noise 60", "wm"), ("noise 30x2", "sb")])
def test_reused_lp_decisions_equal_the_reference_lp(monkeypatch, file, name):
    za, zb, family, screening = screened(file, name)
    old = reference_find_conflicts(za, zb, family, screening, margin=MARGIN)
    monkeypatch.setattr(con_mod, "MAX_PAIR_WITNESSES", 0)  # every pair through the reused LP
    assert np.array_equal(find_conflicts(za, zb, family, screening, margin=MARGIN), old)
    monkeypatch.setattr(con_mod, "_PAIR_BAND", np.inf)  # every pair through the reference LP
    assert np.array_equal(find_conflicts(za, zb, family, screening, margin=MARGIN), old)


@pytest.mark.parametrize("name", ["wm", "wm_m", "owa", "ci", "ci_m", "sb", "sb_nc"])
@pytest.mark.parametrize("drop_redundant, big_c", [(True, "tight"), (False, "tight"), (True, 7.5)])
def test_sparse_linkage_rows_equal_the_dense_ones_bit_for_bit(monkeypatch, name, drop_redundant, big_c):
    za, zb = FILES["noise 60"]()
    za, zb = za[:, :3], zb[:, :3]
    family = get_family(name)
    rng = np.random.default_rng(1)
    pairs = nearest_pairs(za, zb, 2) | (rng.random((60, 60)) < 0.02)
    pairs[5] = False  # a record without pairs
    pairs[7, 7] = True  # its own pair is never a row
    records = np.array([9, 3, 5, 7, 40, 0, 59, 12])  # not sorted: the order is kept
    kwargs = {
        "margin": MARGIN,
        "drop_redundant": drop_redundant,
        "big_c": big_c,
        "pairs": pairs,
        "records": records,
    }
    assert form._sparse(pairs, records)
    sparse = form.linkage_rows(za, zb, family, **kwargs)
    monkeypatch.setattr(form, "SPARSE_PAIRS_SHARE", 0.0)
    dense = form.linkage_rows(za, zb, family, **kwargs)
    assert len(sparse) > 0
    for attr in ("record", "other", "coefs", "constants", "big_c"):
        assert np.array_equal(getattr(sparse, attr), getattr(dense, attr)), attr
    assert sparse.n_pairs == dense.n_pairs


def test_lazy_model_rows_on_census_subset_are_unchanged(monkeypatch):
    za, zb = FILES["M4-33"]()
    for name in ("wm", "sb"):
        family = get_family(name)
        pairs = nearest_pairs(za, zb, 1)
        model_rows = form.linkage_rows(za, zb, family, margin=MARGIN, pairs=pairs)
        lazy = LazyLinkageRows(
            za, zb, family, wit_mod.attribute_names(za.shape[1]), MARGIN, "tight", pairs.copy()
        )
        cuts = lazy(
            family.neutral(za.shape[1]) * 0 + np.eye(family.n_params(za.shape[1]))[0], np.zeros(za.shape[0])
        )
        with monkeypatch.context() as m:
            m.setattr(form, "SPARSE_PAIRS_SHARE", 0.0)
            dense = form.linkage_rows(za, zb, family, margin=MARGIN, pairs=pairs)
            dense_lazy = LazyLinkageRows(
                za, zb, family, wit_mod.attribute_names(za.shape[1]), MARGIN, "tight", pairs.copy()
            )
            dense_cuts = dense_lazy(
                family.neutral(za.shape[1]) * 0 + np.eye(family.n_params(za.shape[1]))[0],
                np.zeros(za.shape[0]),
            )
        for attr in ("record", "other", "coefs", "constants", "big_c"):
            assert np.array_equal(getattr(model_rows, attr), getattr(dense, attr)), attr
        assert len(cuts) == len(dense_cuts) > 0
        for cut, dense_cut in zip(cuts, dense_cuts):
            assert np.array_equal(cut.coefs, dense_cut.coefs) and cut.rhs == dense_cut.rhs
            assert (cut.k_index, cut.k_coef) == (dense_cut.k_index, dense_cut.k_coef)


@pytest.mark.parametrize("file, name", [("noise 150x3", "wm"), ("noise 150x3", "sb_nc"), ("M4-33", "owa")])
def test_a_screening_stopped_then_continued_decides_as_one_run(file, name):
    """A screening stopped by its deadline, continued by a second one (``previous``, another
    known parameter), decides every record as a screening run at once."""
    za, zb, family, whole = screened(file, name)
    n = za.shape[1]
    first = screen_records(
        za, zb, family, margin=MARGIN, known=family.neutral(n), deadline=time.perf_counter()
    )
    assert not first.screened.all()  # stopped before the end
    rng = np.random.default_rng(0)
    other = (
        family.neutral(n)
        if family.has_cuts
        else family.repair(family.neutral(n) + 0.01 * rng.random(family.n_params(n)))
    )
    second = screen_records(za, zb, family, margin=MARGIN, known=other, previous=first)
    assert second.screened.all()
    assert np.array_equal(second.unreachable, whole.unreachable)
    assert np.array_equal(second.at_risk, whole.at_risk)
    assert np.array_equal(second.exact, whole.exact)


def test_a_full_pass_reuses_the_complete_reduce_phase_of_its_quick_pass():
    from rlopt.milp.pipeline import Collaborators
    from rlopt.milp.reductions import screen_records
    from rlopt.milp.solvers import SolveResult, solve_model

    screened_records, solves = [], []

    def counted(*args, **kwargs):
        screening = screen_records(*args, **kwargs)
        screened_records.append(int(screening.screened.sum()))
        return screening

    def first_not_started(model, options, **kwargs):  # the quick pass proves nothing
        solves.append(options.time_limit)
        if len(solves) == 1:
            return SolveResult(
                termination="time_limit", incumbent=None, objective_bound=None, theta=None, seconds=0.0
            )
        return solve_model(model, options, **kwargs)

    original, masked = noisy_file(15, 60, 4, scale=(0.4, 0.6, 0.9, 1.2))
    collaborators = Collaborators(solve=first_not_started, screen=counted)
    result = fit_with("wm", original, masked, time_limit=60, collaborators=collaborators)
    assert len(solves) == 2 and result.status == "optimal"  # a quick pass, then the full pass
    assert len(screened_records) == 1  # the quick pass's complete reduce phase served the full pass
    assert result.n_correct_verified == fit_naive("wm", original, masked)


def fit_naive(name, original, masked):
    learner = rlopt.LearnedDistanceLinkage(name, margin=MARGIN, big_c="uniform", reductions="none")
    return learner.fit(original, masked).result_.n_correct
