"""Transparency attacks (rank swapping, microaggregation), the rank swapping
variants, and probabilistic (Fellegi–Sunter) linkage."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from rlopt.attacks import microaggregation_attack, rank_swap_attack
from rlopt.attacks.rank_swap import rank_windows
from rlopt.cli import app
from rlopt.exceptions import DataWarning, InputError
from rlopt.linkage import pld
from rlopt.linkage.probabilistic import agreement_levels, fit_em
from rlopt.masking import microaggregate, rank_swap
from rlopt.masking.swapping import rank_window

# The worked example of shared/reference/published_tables.md (p = 2 ranks).
EXAMPLE_ORIGINAL = np.array(
    [
        [8, 9, 1, 3],
        [6, 7, 10, 2],
        [10, 3, 4, 1],
        [7, 1, 2, 6],
        [9, 4, 6, 4],
        [2, 2, 8, 8],
        [1, 10, 3, 9],
        [4, 8, 7, 10],
        [5, 5, 5, 5],
        [3, 6, 9, 7],
    ],
    dtype=float,
)
EXAMPLE_MASKED = np.array(
    [
        [10, 10, 3, 5],
        [5, 5, 8, 1],
        [8, 4, 2, 2],
        [9, 2, 4, 4],
        [7, 3, 5, 6],
        [4, 1, 10, 10],
        [3, 9, 1, 7],
        [2, 6, 9, 8],
        [6, 7, 6, 3],
        [1, 8, 7, 9],
    ],
    dtype=float,
)
PUBLISHED_SETS = [  # B_1(6), B_2(7), B_3(10), B_4(2) for x = (6, 7, 10, 2)
    {(4, 1, 10, 10), (5, 5, 8, 1), (6, 7, 6, 3), (7, 3, 5, 6), (8, 4, 2, 2)},
    {(5, 5, 8, 1), (2, 6, 9, 8), (6, 7, 6, 3), (1, 8, 7, 9), (3, 9, 1, 7)},
    {(5, 5, 8, 1), (2, 6, 9, 8), (4, 1, 10, 10)},
    {(5, 5, 8, 1), (8, 4, 2, 2), (6, 7, 6, 3), (9, 2, 4, 4)},
]


def _records(rows):
    return {tuple(int(v) for v in EXAMPLE_MASKED[r]) for r in rows}


def test_worked_example_gives_the_published_candidate_sets_and_the_single_match():
    windows = rank_windows(EXAMPLE_ORIGINAL, EXAMPLE_MASKED, 2)
    x = 1  # the intruder's record (6, 7, 10, 2)
    for attribute, published in enumerate(PUBLISHED_SETS):
        assert _records(windows.per_attribute(x, attribute)) == published
    assert _records(np.flatnonzero(windows.intersection(x, x + 1)[0])) == {(5, 5, 8, 1)}
    result = rank_swap_attack(EXAMPLE_ORIGINAL, EXAMPLE_MASKED, window=2)
    assert result.candidates[x] == 1 and result.correct[x] and result.linked_to[x] == 1
    assert result.n_missed == 0 and result.n_empty == 0
    # a window in percent of the records: p = 20 % of 10 records is the same 2 ranks
    same = rank_swap_attack(EXAMPLE_ORIGINAL, EXAMPLE_MASKED, p=20)
    np.testing.assert_array_equal(same.candidates, result.candidates)


def _tied_file(seed, n=60):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "a": rng.integers(0, 6, n).astype(float),
            "b": rng.normal(size=n),
            "c": rng.lognormal(size=n),
            "d": rng.integers(0, 3, n).astype(float),
        }
    )


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), p=st.sampled_from([2, 5, 10, 25]))
def test_true_record_is_always_in_the_intersection_with_the_true_p(seed, p):
    original = _tied_file(seed)
    masked = rank_swap(original, p, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        result = rank_swap_attack(original, masked, p=p)
    assert result.n_missed == 0 and result.n_empty == 0
    assert result.contains_own.all()
    # a sure match with the true window is always the record's own
    assert result.n_sure == result.n_sure_correct


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), window=st.integers(0, 15))
def test_intersections_never_grow_when_attributes_are_added(seed, window):
    original = _tied_file(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        masked = rank_swap(original, window=window, seed=seed)
    windows = rank_windows(original.to_numpy(), masked.to_numpy(), window)
    previous = np.ones((len(original), len(original)), dtype=bool)
    for used in range(1, original.shape[1] + 1):
        current = windows.intersection(0, len(original), attributes=range(used))
        assert not (current & ~previous).any()
        previous = current


def test_too_small_p_empties_intersections_and_says_so():
    rng = np.random.default_rng(3)
    original = pd.DataFrame(rng.normal(size=(200, 5)), columns=list("abcde"))
    masked = rank_swap(original, 10, seed=3)  # window 20 ranks
    honest = rank_swap_attack(original, masked, p=10)
    assert honest.n_missed == 0
    small = rank_swap_attack(original, masked, window=2)
    assert small.n_empty > 0 and small.n_missed >= small.n_empty
    empty = small.candidates == 0
    assert (small.linked_to[empty] == -1).all() and not small.correct[empty].any()
    # missed = own record not in the intersection, checked independently
    windows = rank_windows(original.to_numpy(), masked.to_numpy(), 2)
    inside = windows.intersection(0, 200)[np.arange(200), np.arange(200)]
    assert small.n_missed == int((~inside).sum())


def test_p_distribution_is_unbounded_and_the_attack_reports_its_misses():
    rng = np.random.default_rng(0)
    original = pd.DataFrame(rng.normal(size=(300, 4)), columns=list("abcd"))
    masked = rank_swap(original, 5, variant="p-distribution", seed=0)
    window = rank_window(5, 300)
    moved = []
    for column in original:  # distinct values: a value's rank is where it sorts
        ordered = np.sort(original[column].to_numpy())
        rank_before = np.searchsorted(ordered, original[column].to_numpy())
        rank_after = np.searchsorted(ordered, masked[column].to_numpy())
        moved.append(np.abs(rank_after - rank_before).max())
        assert sorted(masked[column]) == sorted(original[column])
    assert max(moved) > window  # some value moved beyond the nominal window
    result = rank_swap_attack(original, masked, p=5)
    assert result.n_missed > 0  # reported, not assumed zero
    assert result.n_correct <= result.n_records - result.n_missed


@pytest.mark.parametrize("variant", ["p-buckets", "p-distribution"])
def test_variants_are_seeded_permutations_that_move_values(variant):
    rng = np.random.default_rng(1)
    original = pd.DataFrame({"a": rng.normal(size=120), "b": rng.integers(0, 5, 120).astype(float)})
    a = rank_swap(original, 10, variant=variant, seed=4)
    pd.testing.assert_frame_equal(a, rank_swap(original, 10, variant=variant, seed=4))
    for column in original:
        assert sorted(a[column]) == sorted(original[column])
    assert (a["a"] != original["a"]).mean() > 0.5


def test_p_buckets_prefers_the_own_bucket():
    values = pd.DataFrame({"a": np.arange(1000, dtype=float)})
    masked = rank_swap(values, 5, variant="p-buckets", seed=0)  # buckets of 50 ranks
    bucket_before = values["a"].to_numpy() // 50
    bucket_after = masked["a"].to_numpy() // 50
    moved = bucket_before != bucket_after
    # P(own bucket) = 1/2 before renormalisation; most values stay within a bucket or the next
    assert 0.2 < moved.mean() < 0.8
    assert np.abs(bucket_after - bucket_before).max() >= 2  # and some go further


def test_bad_variant_and_window():
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    with pytest.raises(InputError, match="variant='swap'"):
        rank_swap(frame, 10, variant="swap")
    with pytest.raises(InputError, match="give exactly one of --p"):
        rank_swap(frame, 10, window=1)
    with pytest.raises(InputError, match="window=-1"):
        rank_swap_attack(frame, frame, window=-1)
    with pytest.raises(InputError, match="give exactly one of --p"):
        rank_swap_attack(frame, frame)


def test_attack_on_a_file_that_was_not_rank_swapped_warns():
    rng = np.random.default_rng(0)
    original = pd.DataFrame(rng.normal(size=(50, 2)), columns=["a", "b"])
    with pytest.warns(DataWarning, match="not a rank swap"):
        rank_swap_attack(original, original + 0.01, p=10)


# ---- microaggregation ---------------------------------------------------------------


def test_microaggregation_attack_finds_each_records_groups():
    rng = np.random.default_rng(2)
    original = pd.DataFrame(rng.normal(size=(90, 4)), columns=list("abcd"))
    groups = [(["a", "b"], 3), (["c", "d"], 4)]
    masked = microaggregate(original, groups=groups)
    result = microaggregation_attack(original, masked, groups=groups)
    assert result.n_missed == 0 and result.parameters["n_misfits"] == 0
    assert result.n_sure == result.n_sure_correct > 0
    # one group of all attributes: the candidate set is exactly the MDAV group (size k..2k-1)
    whole = microaggregate(original, k=3)
    one = microaggregation_attack(original, whole, k=3)
    assert one.candidates.min() >= 3 and one.candidates.max() <= 5 and one.n_missed == 0


def test_microaggregation_attack_with_a_wrong_k_warns():
    rng = np.random.default_rng(5)
    original = pd.DataFrame(rng.normal(size=(60, 2)), columns=["a", "b"])
    masked = microaggregate(original, k=5)
    with pytest.warns(DataWarning, match="equal no group mean"):
        microaggregation_attack(original, masked, k=3)
    with pytest.raises(InputError, match="needs the published masking: give exactly one of k="):
        microaggregation_attack(original, masked)
    with pytest.raises(InputError, match=r"group column\(s\) \['z'\]"):
        microaggregation_attack(original, masked, groups=[(["z"], 3)])


# ---- probabilistic linkage --------------------------------------------------------------


def test_em_recovers_known_m_and_u_probabilities():
    rng = np.random.default_rng(0)
    m = np.array([[0.80, 0.15, 0.05], [0.70, 0.20, 0.10], [0.90, 0.08, 0.02]])
    u = np.array([[0.05, 0.15, 0.80], [0.10, 0.30, 0.60], [0.02, 0.18, 0.80]])
    n_pairs, share = 400_000, 0.02
    is_match = rng.random(n_pairs) < share
    levels = np.empty((n_pairs, 3), dtype=np.int64)
    for j in range(3):
        levels[is_match, j] = rng.choice(3, is_match.sum(), p=m[j])
        levels[~is_match, j] = rng.choice(3, (~is_match).sum(), p=u[j])
    patterns, counts = np.unique(levels, axis=0, return_counts=True)
    em = fit_em(patterns, counts.astype(float), 3, match_share=0.001)
    assert em.converged
    np.testing.assert_allclose(em.m, m, atol=0.02)
    np.testing.assert_allclose(em.u, u, atol=0.01)
    assert em.match_share == pytest.approx(share, abs=0.002)


def test_agreement_levels_by_hand():
    za = np.array([[0.0, 1.0]])
    zb = np.array([[0.005, 1.0], [0.3, 0.9]])
    np.testing.assert_array_equal(agreement_levels(za, zb, (0.01, 0.05, 0.25)), [[[0, 0], [3, 2]]])


def test_pld_links_a_lightly_masked_file_and_falls_with_the_noise():
    rng = np.random.default_rng(0)
    original = pd.DataFrame(rng.normal(size=(150, 4)), columns=list("abcd"))
    light = pld(original, original + rng.normal(scale=0.005, size=original.shape))
    heavy = pld(original, original + rng.normal(scale=0.5, size=original.shape))
    assert light.rate > 0.9 and heavy.rate < light.rate
    assert sorted(light.linked_to) == list(range(150))  # one-to-one
    with pytest.raises(InputError, match="thresholds="):
        pld(original, original, thresholds=[0.5, 0.1])


# ---- command line ------------------------------------------------------------------------


def test_cli_attack_on_the_worked_example(tmp_path):
    columns = ["a1", "a2", "a3", "a4"]
    pd.DataFrame(EXAMPLE_ORIGINAL, columns=columns).to_csv(tmp_path / "o.csv", index=False)
    pd.DataFrame(EXAMPLE_MASKED, columns=columns).to_csv(tmp_path / "m.csv", index=False)
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "attack",
            str(tmp_path / "o.csv"),
            str(tmp_path / "m.csv"),
            "--method",
            "rank-swapping",
            "--window",
            "2",
            "--json",
            "-",
        ],
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    expected = rank_swap_attack(EXAMPLE_ORIGINAL, EXAMPLE_MASKED, window=2)
    assert figures["n_sure_correct"] == expected.n_sure_correct
    assert figures["n_correct"] == expected.n_correct
    result = runner.invoke(
        app,
        [
            "attack",
            str(tmp_path / "o.csv"),
            str(tmp_path / "m.csv"),
            "--method",
            "rank-swapping",
            "--window",
            "0",
        ],
    )
    assert result.exit_code == 0 and "empty intersection" in result.output
    result = runner.invoke(
        app, ["link", str(tmp_path / "o.csv"), str(tmp_path / "m.csv"), "--distance", "pld", "--json", "-"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["n_records"] == 10


# ---- the learned distance inside the intersections ------------------------------------


@pytest.mark.parametrize("family", ["wm", "owa", "sb"])
def test_learning_inside_candidate_sets(family):
    from rlopt.data import standardise, validate_pair
    from rlopt.families import get_family
    from rlopt.learn import learn
    from rlopt.milp import SolverOptions
    from rlopt.milp.reductions import Reductions, Searches
    from tests._helpers import MARGIN, noisy_file

    original, masked = noisy_file(3, n_records=25)
    data = validate_pair(original, masked)
    fam, options = get_family(family), SolverOptions()
    full, _ = learn(
        data, fam, margin=MARGIN, options=options, reductions=Reductions.none(), searches=Searches.none()
    )
    every, _ = learn(data, fam, margin=MARGIN, options=options, candidates=np.ones((25, 25), dtype=bool))
    assert full.status == every.status == "optimal" and every.n_correct == full.n_correct
    candidates = np.random.default_rng(0).random((25, 25)) < 0.3
    np.fill_diagonal(candidates, True)
    candidates[0, 0] = False  # record 0's own original is excluded: never correct
    inside, distance = learn(data, fam, margin=MARGIN, options=options, candidates=candidates)
    assert inside.status == "optimal" and not inside.correct[0]
    # fewer rivals: at least the unrestricted optimum, less the excluded record
    assert inside.n_correct >= full.n_correct - 1
    # independent recount with plain numpy
    za, zb = standardise(data.masked), standardise(data.original)
    d = np.where(candidates, distance.pairwise(za, zb), np.inf)
    own = np.diag(d).copy()
    np.fill_diagonal(d, np.inf)
    with np.errstate(invalid="ignore"):
        recounted = int(((d.min(axis=1) - own) >= MARGIN - inside.recount_tol).sum())
    assert recounted == inside.n_correct == inside.n_correct_verified


def test_table5_cell_and_table_with_a_learned_column(tmp_path):
    from rlopt.experiments.transparency import AttackCell, run_attack_cell, table5_cells, write_table5

    row = run_attack_cell(AttackCell("census", 2, 0, learned=("wm",), time_limit=10))
    assert row["n_records"] == 1080 and row["window"] == 21 and row["rsld_missed"] == 0
    assert row["rsld"] >= row["rsld_sure"]
    # with every intersection a singleton, the learned distance inside them is the attack
    if row["rsld_sure"] == 100:
        assert row["learned_wm_rsld"] == 100 and row["learned_wm_rsld_status"] == "optimal"
    text = write_table5(pd.DataFrame([row]), tmp_path)
    assert "[77.73," in text and "| 2 |" in text and "wm_rsld" in text
    assert (tmp_path / "table5.csv").is_file()
    with pytest.raises(InputError, match="dataset 'adult'"):
        table5_cells(["adult"])
    with pytest.raises(InputError, match=r"learned family name\(s\) \['xx'\]"):
        table5_cells(["census"], learned=["xx"])


def test_groups_sharing_a_mean_keep_the_own_record_a_candidate():
    # top-coded values: the last six records share the value 50, so MDAV (k=3) makes two
    # groups whose mean is 50; a masked 50 may come from either, and the attack must keep
    # both (keeping the first alone drops the own record of half of them)
    x = np.r_[np.arange(1.0, 13.0), np.full(6, 50.0)]
    original = pd.DataFrame({"a": x, "b": np.arange(18.0)})
    groups = [(["a"], 3), (["b"], 3)]
    masked = microaggregate(original, groups=groups)
    attacked = microaggregation_attack(original, masked, groups=groups)
    assert attacked.n_missed == 0 and attacked.n_empty == 0
    assert attacked.contains_own.all()
