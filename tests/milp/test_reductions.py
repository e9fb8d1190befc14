"""Exact reductions: each one alone, and all together, leave the optimum of the
naive model unchanged; lazy generation ends with no violated pair; the
screening is exact against brute force; conflicts are really conflicts."""

import functools

import numpy as np
import pytest

from rlopt import load_census
from rlopt.data import standardise
from rlopt.families import LEARNED, get_family
from rlopt.masking import microaggregate, rank_swap
from rlopt.milp.formulation import LinkageRows, dominated, largest_big_c, linkage_rows
from rlopt.milp.reductions import (
    LazyLinkageRows,
    Reductions,
    Searches,
    duplicate_groups,
    find_conflicts,
    nearest_pairs,
    screen_records,
    separation,
)
from tests._helpers import MARGIN, fit, noisy_file, one_weight_intervals

NONE = Reductions.none().to_dict()


def OTHERS_OFF(name):  # noqa: N802 (reads as a constant)
    return {other: False for other in Searches.none().to_dict() if other != name}


VARIANTS = {
    "tight big-C only": dict(reductions="none"),
    "drop_redundant": dict(reductions={**NONE, "drop_redundant": True}, searches="none"),
    "drop_dominated": dict(reductions={**NONE, "drop_dominated": True}, searches="none"),
    "fix_unreachable": dict(reductions={**NONE, "fix_unreachable": True}, searches="none"),
    "conflicts": dict(reductions={**NONE, "conflicts": True}, searches="none"),
    "duplicate_cliques": dict(reductions={**NONE, "duplicate_cliques": True}, searches="none"),
    "lazy": dict(reductions={**NONE, "lazy": True, "lazy_start": 1, "lazy_per_round": 1}, searches="none"),
    "warm_start": dict(reductions={**NONE, "warm_start": True}, searches="none"),
    "line_search": dict(reductions="none", searches={"line_search": True, **OTHERS_OFF("line_search")}),
    "surrogate + line_search + greedy_add": dict(
        reductions="none", searches={"nca_start": False, "parameter_bb": False, "quick_solve": False}
    ),
    "lazy + carry_rounds": dict(
        reductions={
            **NONE,
            "lazy": True,
            "lazy_start": 0,
            "lazy_per_round": 1,
            "warm_start": True,
            "carry_rounds": True,
        },
        searches="none",
    ),
    "all": dict(reductions="all"),
}


def census_masked(method, seed, n_records=22):
    census = load_census()[["AFNLWGT", "AGI", "EMCONTRB"]]
    original = census.sample(n_records, random_state=seed).reset_index(drop=True)
    if method == "mdav":
        return original, microaggregate(original, k=3)
    return original, rank_swap(original, p=15, seed=seed)


FILES = {
    "noise 31": lambda: noisy_file(31, 18, 3),
    "noise 32": lambda: noisy_file(32, 20, 3, scale=(0.5, 0.5, 0.8)),
    "mdav k=3": lambda: census_masked("mdav", 4),
    "rank swap p=15": lambda: census_masked("rank-swap", 5),
}


@functools.cache
def _masked_file(label):
    return FILES[label]()


SB = ("sb_pd", "sb_nc", "sb")


def _in_default_run(label, name):
    """The default run keeps the cheapest files that cover each path of the reductions:
    "noise 31" for every family (each variant on each family; conflicts for wm and ci_k),
    and "mdav k=3" for every family but the sb ones (identical masked records: the only
    file with duplicate cliques, and the one whose screening fixes the most unreachable
    records, 7 of 22 for wm). "noise 32" and "rank swap p=15" (the same variants on two
    more files, 2-25 s each) and the sb families on the MDAV file (12-25 s each) run with
    ``-m slow``."""
    return label == "noise 31" or (label == "mdav k=3" and name not in SB)


@pytest.mark.parametrize(
    "label, name",
    [
        pytest.param(label, name, marks=() if _in_default_run(label, name) else pytest.mark.slow)
        for label in FILES
        for name in LEARNED
    ],
)
def test_every_reduction_leaves_the_naive_optimum_unchanged(label, name):
    masked_file = _masked_file(label)
    naive = fit(name, *masked_file, big_c="uniform", reductions="none")
    assert naive.status == "optimal" and naive.model["n_linkage_rows"] == naive.model["n_pairs"]
    for label, kwargs in VARIANTS.items():
        reduced = fit(name, *masked_file, **kwargs)
        assert reduced.status == "optimal", label
        assert reduced.n_correct == reduced.n_correct_verified == naive.n_correct, label


@pytest.mark.parametrize("name", ["wm", "owa", "ci", "ci_m", "sb", "sb_nc"])
@pytest.mark.parametrize("seed", [31, 32])
def test_lazy_generation_ends_with_no_violated_pair(name, seed):
    original, masked = noisy_file(seed, 18, 3)
    lazy = fit(name, original, masked, reductions={**NONE, "lazy": True, "lazy_start": 1})
    assert lazy.status == "optimal"
    # independent of the solver: every pair of every record counted as re-identified
    za, zb = standardise(masked.to_numpy()), standardise(original.to_numpy())
    family = get_family(name)
    d = family.distance(family.theta_from_params(lazy.params, ("a", "b", "c")), ("a", "b", "c")).pairwise(
        za, zb
    )
    slack = d - np.diag(d)[:, None] + np.diag(np.full(len(d), np.inf))
    assert (slack[lazy.correct].min(axis=1) >= MARGIN - lazy.recount_tol).all()
    assert lazy.correct.sum() == lazy.n_correct


@pytest.mark.parametrize("seed", range(6))
def test_screening_equals_brute_force_on_two_attributes(seed):
    original, masked = noisy_file(200 + seed, 30, 2, scale=(0.6, 0.9))
    za, zb = standardise(masked.to_numpy()), standardise(original.to_numpy())
    diff = (za[:, None, :] - zb[None, :, :]) ** 2
    own = diff[np.arange(len(za)), np.arange(len(za))]
    intervals = one_weight_intervals(own, diff, MARGIN)
    reachable = np.array([lo <= hi for lo, hi in intervals])
    screening = screen_records(za, zb, get_family("wm"), margin=MARGIN, known=np.array([0.5, 0.5]))
    clear = np.array([hi - lo > 1e-6 or lo > hi + 1e-6 for lo, hi in intervals])  # not a knife edge
    assert (screening.at_risk[clear] == reachable[clear]).all()
    assert screening.exact.all()
    optimum = fit("wm", original, masked)
    assert optimum.n_at_risk == screening.n_at_risk >= optimum.n_correct == optimum.bound
    assert not (optimum.correct & ~optimum.at_risk).any()  # the optimum only uses records at risk


def test_unreachable_records_exist_and_are_fixed():
    original, masked = noisy_file(3, 30, 2, scale=(1.5, 1.5))
    result = fit("wm", original, masked)
    assert result.model["n_fixed"] > 0 and result.model["n_fixed"] == result.n_records - result.n_at_risk


@pytest.mark.parametrize("name", ["wm", "ci", "sb"])
def test_conflicts_are_never_reidentified_together(name):
    original, masked = noisy_file(207, 30, 2, scale=(0.9, 1.2))
    za, zb = standardise(masked.to_numpy()), standardise(original.to_numpy())
    family = get_family(name)
    screening = screen_records(za, zb, family, margin=MARGIN, known=family.neutral(2))
    pairs = find_conflicts(za, zb, family, screening, margin=MARGIN)
    assert len(pairs) > 0
    if name == "wm":  # brute force on a fine grid of the one free weight
        hits = [
            separation(za, zb, family.distance(np.array([p, 1 - p]), ("a", "b"))) >= MARGIN
            for p in np.linspace(0, 1, 2001)
        ]
        for i, j in pairs:
            assert not any(h[i] and h[j] for h in hits)


def test_dominated_rows_by_hand():
    rows = LinkageRows(
        record=np.array([0, 0, 0, 1, 1]),
        other=np.array([1, 2, 3, 0, 2]),
        coefs=np.array([[1.0, 2.0], [2.0, 2.0], [1.0, 3.0], [1.0, 2.0], [0.5, 5.0]]),
        constants=np.array([0.0, 0.0, -1.0, 0.0, 0.0]),
        big_c=np.ones(5),
        n_pairs=6,
    )
    # row 1 >= row 0 entrywise: implied; row 2 has a smaller constant: kept; record 1 is apart
    assert dominated(rows).tolist() == [False, True, False, False, False]
    equal = LinkageRows(np.array([0, 0]), np.array([1, 2]), np.ones((2, 2)), np.zeros(2), np.ones(2), 2)
    assert dominated(equal).tolist() == [False, True]


def test_uniform_big_c_is_the_largest_tight_one():
    original, masked = noisy_file(5, 15, 3)
    za, zb = standardise(masked.to_numpy()), standardise(original.to_numpy())
    for name in ("wm", "owa", "sb"):
        family = get_family(name)
        tight = linkage_rows(za, zb, family, margin=MARGIN, drop_redundant=False)
        assert largest_big_c(za, zb, family, margin=MARGIN) == pytest.approx(tight.big_c.max())


def test_warm_start_reaches_the_solver():
    result = fit("wm", *noisy_file(9, 20, 3))
    assert result.solver["starts_passed"] >= 1


@pytest.mark.parametrize("name", ["sb_nc", "sb_pd"])
def test_screening_with_cuts_refines_the_relaxed_one(name):
    # 16 records: the relaxation is exact for 8 of them, the cut rounds for all 16 (on 25
    # records, 5 and 25), and the MILP proves in about a second (25 records: 16-48 s)
    original, masked = noisy_file(207, 16, 3, scale=(0.9, 1.2, 1.5))
    za, zb = standardise(masked.to_numpy()), standardise(original.to_numpy())
    family = get_family(name)
    relaxed = screen_records(za, zb, family, margin=MARGIN, known=family.neutral(3))
    exact = screen_records(za, zb, family, margin=MARGIN, known=family.neutral(3), max_cut_rounds=50)
    assert not relaxed.exact.all()  # the cut rounds have something to do
    assert exact.exact.all()
    assert not (exact.at_risk & ~relaxed.at_risk).any()  # the relaxation never misses a record at risk
    assert (relaxed.unreachable <= exact.unreachable).all()
    assert fit(name, original, masked).n_correct <= exact.n_at_risk


def test_screening_past_its_deadline_fixes_nothing():
    original, masked = noisy_file(3, 30, 2, scale=(1.5, 1.5))
    za, zb = standardise(masked.to_numpy()), standardise(original.to_numpy())
    late = screen_records(za, zb, get_family("wm"), margin=MARGIN, known=np.array([0.5, 0.5]), deadline=0.0)
    assert late.n_at_risk == len(za) and not late.unreachable.any() and not late.exact.all()


def test_identical_masked_records_form_cliques_of_at_most_one_correct():
    original, masked = census_masked("mdav", 4)  # k = 3 on all attributes: groups of equal rows
    groups = duplicate_groups(standardise(masked.to_numpy()))
    assert groups and all(len(g) >= 3 for g in groups)
    result = fit("wm", original, masked)
    assert result.model["n_cliques"] == len(groups)
    for group in groups:
        assert result.correct[group].sum() <= 1
    from rlopt.learn import LearnedDistanceLinkage

    tied = LearnedDistanceLinkage("wm", margin=0.0).fit(original, masked).result_
    assert tied.model["n_cliques"] == 0  # with margin 0 ties count: no clique is valid


@pytest.mark.parametrize("name", ["wm", "ci", "sb_nc"])
def test_completion_reidentifies_every_counted_record_or_gives_up(name):
    original, masked = census_masked("rank-swap", 5)
    za, zb = standardise(masked.to_numpy()), standardise(original.to_numpy())
    family, columns = get_family(name), ("a", "b", "c")
    lazy = LazyLinkageRows(za, zb, family, columns, MARGIN, "tight", nearest_pairs(za, zb, 1))
    best = fit(name, original, masked)
    counted = best.correct.copy()
    theta = lazy.complete((~counted).astype(float))
    assert theta is not None  # the optimum's records are re-identified together
    sep = separation(za, zb, family.distance(theta, columns))
    assert (sep[counted] >= MARGIN).all()
    rows = family.constraints(3)
    values = rows.matrix() @ theta  # admissible (sb_nc: its cuts are checked by complete itself)
    assert (values >= np.array(rows.lo) - 1e-9).all() and (values <= np.array(rows.hi) + 1e-9).all()
    assert not family.separate(theta, za, zb)
    # one more record than the optimum can never be re-identified together with them
    for extra in np.flatnonzero(~counted)[:3]:
        more = counted.copy()
        more[extra] = True
        assert lazy.complete((~more).astype(float)) is None


@pytest.mark.parametrize("name", ["wm", "owa", "ci", "sb"])
def test_line_search_climbs_from_its_start_and_stays_admissible_and_below_the_optimum(name):
    from rlopt.data import standardise, validate_pair
    from rlopt.families import get_family
    from rlopt.learn import recount
    from rlopt.milp.incumbents.line_search import line_search_ascent
    from rlopt.milp.margins import PairMargins

    original, masked = noisy_file(41, 30, 3, scale=(0.6, 0.9, 1.2))
    data = validate_pair(original, masked)
    za, zb = standardise(data.masked), standardise(data.original)
    family = get_family(name)
    start = family.neutral(3)

    def count(theta):
        return int(recount(za, zb, family.distance(theta, data.columns), margin=MARGIN, tol=1e-9)[1].sum())

    climbed = line_search_ascent(
        za, zb, family, start, margin=MARGIN, margins=PairMargins.build(za, zb, family)
    )
    assert family.is_admissible(climbed, za, zb)
    optimum = fit(name, original, masked, reductions="none").n_correct
    assert count(start) < count(climbed) <= optimum  # (5 -> 15, 10, 10, 10 of 16, 10, 16, 17)


def test_a_quick_pass_stopped_at_once_then_the_full_pass_keep_the_optimum(monkeypatch):
    import rlopt.milp.budget as budget

    monkeypatch.setattr(budget, "QUICK_SECONDS", 1e-6)  # the quick pass proves little
    monkeypatch.setattr(budget, "QUICK_MIN_SECONDS", 0.0)
    two_passes = 0
    for name in ("wm", "ci", "sb_nc"):
        for label in ("noise 31", "mdav k=3"):
            masked_file = _masked_file(label)
            naive = fit(name, *masked_file, big_c="uniform", reductions="none")
            result = fit(name, *masked_file, time_limit=60)
            assert result.status == "optimal" and result.n_correct_verified == naive.n_correct, (name, label)
            assert 0 < result.seconds["quick"] <= result.seconds["total"]
            two_passes += result.seconds["quick"] < result.seconds["total"]
    assert two_passes >= 2  # the full pass ran after a quick pass that did not prove


def test_a_file_the_quick_pass_proves_runs_no_search():
    result = fit("wm", *_masked_file("noise 31"), time_limit=60)
    assert result.status == "optimal" and result.seconds["search"] < 0.1
    assert result.seconds["quick"] == result.seconds["total"]
    short = fit("wm", *_masked_file("noise 31"), time_limit=10)  # a 1.5 s budget: no quick pass
    assert short.status == "optimal" and short.seconds["quick"] == 0.0
