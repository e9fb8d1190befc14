"""Linkage at scale: the nearest-neighbour path and the parallel brute force give the
brute-force reference's verdicts exactly."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.sparse import csr_array

from rlopt import (
    EIA_ATTRIBUTES,
    PUBLISHED_FILES,
    build,
    load_census,
    load_eia,
    published_recipe,
    validate_pair,
)
from rlopt.exceptions import InputError
from rlopt.families import get_family
from rlopt.families.bilinear import BilinearDistance
from rlopt.families.owa import OWADistance
from rlopt.families.wm import WeightedMeanDistance
from rlopt.linkage import link_records
from rlopt.linkage.distance_based import TREE_MIN_RECORDS, resolve_distance, tree_map
from rlopt.linkage.nearest import pair_verdicts
from rlopt.masking import additive_noise, microaggregate
from rlopt.report import render_risk_report


def assert_same(reference, fast):
    assert fast.n_correct == reference.n_correct
    assert fast.n_ties == reference.n_ties
    np.testing.assert_array_equal(fast.correct, reference.correct)
    np.testing.assert_array_equal(fast.tied, reference.tied)
    np.testing.assert_array_equal(fast.linked_to, reference.linked_to)
    np.testing.assert_allclose(fast.separation, reference.separation, rtol=1e-9, atol=1e-12)


def mapped_distances(data, seed=0):
    """am, md, a wm, a wm_m, a positive semi-definite sb (singular: one attribute unweighted)."""
    za, zb = data.standardised()
    n = za.shape[1]
    rng = np.random.default_rng(seed)
    out = [resolve_distance(name, za, zb, data.columns) for name in ("am", "md")]
    out.append(WeightedMeanDistance(rng.dirichlet(np.ones(n)), data.columns))
    low = get_family("wm_m").lower(n)
    out.append(WeightedMeanDistance(low + (1 - n * low) * rng.dirichlet(np.ones(n)), data.columns, "wm_m"))
    root = rng.normal(size=(n, n))
    root[:, 0] = 0.0
    q = root @ root.T
    out.append(BilinearDistance(q / np.trace(q), data.columns, "sb"))
    return za, zb, out


def bundled_pairs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = {name: validate_pair(*build(published_recipe(name))) for name in PUBLISHED_FILES}
        census = load_census()
        mdav = validate_pair(census, microaggregate(census, k=3))
        pairs["census MDAV k=3"] = mdav
        # the intruder's direction: original records query a file full of identical masked records
        pairs["census MDAV k=3, reversed"] = validate_pair(mdav.masked, mdav.original)
        eia = load_eia()[list(EIA_ATTRIBUTES)]
        pairs["EIA noise 0.1"] = validate_pair(eia, additive_noise(eia, 0.1, seed=1))
        pairs["EIA MDAV k=5, reversed"] = validate_pair(microaggregate(eia, k=5), eia)
        from rlopt.data import load_cps1985

        cps = load_cps1985()[["wage", "education", "experience", "age"]]  # integer-valued: many ties
        pairs["CPS1985 numeric MDAV k=3"] = validate_pair(cps, microaggregate(cps, k=3))
    return pairs


BUNDLED = bundled_pairs()


@pytest.mark.parametrize(
    "name",
    # the EIA file under MDAV, reversed (4092 x 10, 14 s), with -m slow: the census file
    # reversed keeps ties of identical originals in the default run, EIA under noise ten
    # attributes
    [pytest.param(n, marks=pytest.mark.slow) if n == "EIA MDAV k=5, reversed" else n for n in BUNDLED],
)
def test_the_tree_gives_the_brute_force_verdicts_on_every_bundled_file(name):
    za, zb, distances = mapped_distances(BUNDLED[name])
    for distance in distances:
        assert tree_map(distance, za, zb) is not None, distance.family
        assert_same(
            link_records(za, zb, distance, method="brute"), link_records(za, zb, distance, method="tree")
        )


def test_the_reversed_mdav_file_is_full_of_ties_and_the_tree_keeps_them():
    za, zb, distances = mapped_distances(BUNDLED["census MDAV k=3, reversed"])
    fast = link_records(za, zb, distances[0], method="tree")
    assert fast.n_ties > 900 and fast.n_correct == 0  # 1080 originals, groups of 3 identical masked records


def test_a_worked_example_with_identical_originals():
    # originals 0, 1, 2 identical; 3 alone; masked records at known distances
    zb = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [3.0, 0.0]])
    za = np.array([[0.1, 0.0], [0.0, 0.0], [5.0, 0.0], [2.9, 0.0]])
    am = resolve_distance("am", za, zb, ("x", "y"))
    fast = link_records(za, zb, am, method="tree")
    # 0 and 1 tie with their identical twins (linked to the lowest index, 0); 2 is nearer 3;
    # 3 is correct with separation (2.9^2 - 0.1^2) / 2
    assert fast.correct.tolist() == [False, False, False, True]
    assert fast.tied.tolist() == [True, True, False, False]
    assert fast.linked_to.tolist() == [0, 0, 3, 3]
    assert fast.separation[3] == pytest.approx((2.9**2 - 0.1**2) / 2)
    assert_same(link_records(za, zb, am, method="brute"), fast)


def test_pair_verdicts_by_hand():
    rows = np.array([0, 0, 0, 1, 2])
    cols = np.array([2, 0, 1, 0, 2])
    values = np.array([1.0, 2.0, 1.0, 4.0, 0.5])
    own, other, linked = pair_verdicts(4, rows, cols, values)
    assert own.tolist() == [2.0, np.inf, 0.5, np.inf]
    assert other.tolist() == [1.0, 4.0, np.inf, np.inf]
    assert linked.tolist() == [1, 0, 2, -1]  # row 0: 1 and 2 tie at 1.0, the lower index wins


def test_distances_without_a_linear_map_stay_on_brute_force():
    data = BUNDLED["M4-33"]
    za, zb = data.standardised()
    owa = OWADistance(np.array([0.4, 0.3, 0.2, 0.1]))
    indefinite = BilinearDistance(np.diag([1.0, 0.5, -0.25, -0.25]), data.columns)
    negative = WeightedMeanDistance(np.array([1.5, -0.5, 0.0, 0.0]), data.columns)
    for distance in (owa, indefinite, negative):
        assert tree_map(distance, za, zb) is None
        with pytest.raises(InputError, match="no exact nearest-neighbour path"):
            link_records(za, zb, distance, method="tree")
        assert (
            link_records(za, zb, distance).n_correct
            == link_records(za, zb, distance, method="brute").n_correct
        )


def test_nominal_attributes_stay_on_brute_force():
    from rlopt.data import load_cps1985

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = load_cps1985()
        data = validate_pair(frame, frame.sample(frac=1.0, random_state=0).set_index(frame.index))
    za, zb = data.standardised()
    assert data.mixed and tree_map(resolve_distance("am", za, zb, data.columns), za, zb) is None


@pytest.mark.parametrize(
    "name",
    # census under MDAV: identical masked records, each evaluated once; reversed: 1080
    # distinct queries, no record deduplicated; EIA under noise (4092 x 10, 33 s) with -m slow
    [
        "census MDAV k=3",
        "census MDAV k=3, reversed",
        pytest.param("EIA noise 0.1", marks=pytest.mark.slow),
    ],
)
def test_threads_and_a_dask_cluster_give_the_same_verdicts(name):
    from distributed import Client, LocalCluster

    za, zb, distances = mapped_distances(BUNDLED[name])
    owa = OWADistance(np.linspace(2, 1, za.shape[1]) / np.linspace(2, 1, za.shape[1]).sum())
    reference = dense_verdicts(za, zb, owa)
    seen = []
    threads = link_records(
        za, zb, owa, method="brute", jobs=2, max_bytes=1 << 20, progress=lambda d, n: seen.append((d, n))
    )
    assert_same(reference, threads)
    assert seen[-1] == (za.shape[0], za.shape[0]) and len(seen) > 1
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        with Client(cluster):
            on_dask = link_records(
                za, zb, owa, method="brute", scheduler=cluster.scheduler_address, max_bytes=1 << 20
            )
            assert_same(reference, on_dask)


def dense_verdicts(za, zb, distance):
    """The verdicts from the whole distance matrix at once, record by record (the reference)."""
    from rlopt.linkage.distance_based import LinkageResult, verdict

    d = distance.pairwise(za, zb)
    rows = np.arange(za.shape[0])
    linked_to, own = d.argmin(axis=1), d[rows, rows].copy()
    d[rows, rows] = np.inf
    correct, tied, separation = verdict(own, d.min(axis=1))
    return LinkageResult(
        n_records=za.shape[0],
        n_correct=int(correct.sum()),
        n_ties=int(tied.sum()),
        distance=distance.family,
        correct=correct,
        tied=tied,
        linked_to=linked_to,
        separation=separation,
    )


def test_brute_force_evaluates_each_distinct_masked_record_once():
    data = BUNDLED["census MDAV k=3"]
    za, zb = data.standardised()
    owa = OWADistance(np.linspace(2, 1, za.shape[1]) / np.linspace(2, 1, za.shape[1]).sum())
    rows_evaluated = []

    class Counting(OWADistance):
        def pairwise(self, a, b):
            rows_evaluated.append(a.shape[0])
            return super().pairwise(a, b)

    counted = link_records(za, zb, Counting(owa.weights), method="brute", max_bytes=1 << 20)
    assert sum(rows_evaluated) == 360 and len(rows_evaluated) > 1  # 1080 records, 360 groups of 3
    assert_same(dense_verdicts(za, zb, owa), counted)
    assert counted.n_correct <= 360  # at most one of each group (the ceiling of identical records)


def monotone_distances(data, seed=0):
    """owa (random, the max, the min), a Choquet integral of a random monotone measure
    (and one that breaks monotonicity by 1e-10, within a solver's tolerance), ci_k, a wm."""
    from rlopt.families.choquet import ChoquetDistance
    from rlopt.families.kadditive import KAdditiveDistance, subsets

    za, zb = data.standardised()
    n = za.shape[1]
    rng = np.random.default_rng(seed)
    out = [OWADistance(rng.dirichlet(np.ones(n))), OWADistance(np.eye(n)[0]), OWADistance(np.eye(n)[-1])]
    out.append(WeightedMeanDistance(rng.dirichlet(np.ones(n)), data.columns))
    if n <= 6:
        weights = rng.dirichlet(np.ones(n))
        base = np.array([weights[[k for k in range(n) if m >> k & 1]].sum() for m in range(2**n)])
        base = base ** rng.uniform(0.3, 3) + rng.uniform(0, 0.05, size=2**n)
        measure = np.zeros(2**n)
        for m in range(1, 2**n):  # the smallest monotone measure above base
            measure[m] = max(base[m], *(measure[m ^ 1 << k] for k in range(n) if m >> k & 1))
        measure /= measure[-1]
        out.append(ChoquetDistance(measure, data.columns))
        dented = measure.copy()
        dented[3] = max(dented[1], dented[2]) - 1e-10  # mu({a, b}) below mu({a}) or mu({b}) by 1e-10:
        # monotone within a solver's tolerance
        assert ChoquetDistance(dented, data.columns).monotone_slack() == pytest.approx(n * 1e-10, rel=1e-3)
        out.append(ChoquetDistance(dented, data.columns))
    masses = rng.dirichlet(np.ones(len(subsets(n, 2))))
    out.append(KAdditiveDistance(masses, data.columns, k=2))
    return za, zb, out


@pytest.mark.parametrize(
    "name",
    # the EIA files (4092 x 10) with -m slow: under noise with nothing identical, 40 s; under
    # MDAV, reversed, 32 s. The census file reversed keeps ties of identical originals in the
    # default run, and the boxes on EIA's ten attributes are checked against brute force by
    # the two tests of EIA under noise below
    [
        pytest.param(n, marks=pytest.mark.slow) if n in ("EIA noise 0.1", "EIA MDAV k=5, reversed") else n
        for n in BUNDLED
    ],
)
def test_the_boxes_give_the_brute_force_verdicts_on_every_bundled_file(name):
    za, zb, distances = monotone_distances(BUNDLED[name])
    for distance in distances:
        assert distance.monotone_slack() is not None, distance.family
        assert_same(
            link_records(za, zb, distance, method="brute"), link_records(za, zb, distance, method="box")
        )


def test_boxes_on_a_file_with_nominal_attributes():
    from rlopt.data import load_cps1985

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = load_cps1985()
        data = validate_pair(
            frame,
            microaggregate(frame[["wage", "education", "experience", "age"]], k=3).join(
                frame.drop(columns=["wage", "education", "experience", "age"])
            ),
        )
    za, zb, distances = monotone_distances(data)
    assert data.mixed
    for distance in distances:
        assert_same(
            link_records(za, zb, distance, method="brute"), link_records(za, zb, distance, method="box")
        )


def eia_head(n_records=2500):
    """The first records of EIA under noise, standardised on the whole file: enough for the
    boxes to prune an OWA throughout and for ``method="auto"`` to look past brute force
    (from 2000 records on), at 2500 of 4092 records a third of the time."""
    za, zb = BUNDLED["EIA noise 0.1"].standardised()
    return za[:n_records], zb[:n_records]


def test_a_distance_the_bounds_cannot_prune_goes_pair_by_pair(monkeypatch):
    import rlopt.linkage.boxes as boxes

    za, zb = eia_head()
    n = za.shape[1]
    chunks = []
    block_verdicts = boxes.block_verdicts
    monkeypatch.setattr(boxes, "block_verdicts", lambda *a, **k: chunks.append(1) or block_verdicts(*a, **k))
    spread = OWADistance(np.linspace(2, 1, n) / np.linspace(2, 1, n).sum())
    assert_same(link_records(za, zb, spread, method="brute"), link_records(za, zb, spread, method="box"))
    assert chunks == []  # pruned by the boxes throughout
    smallest = OWADistance(np.eye(n)[-1])  # the smallest difference: a box's corner bounds nothing
    assert_same(link_records(za, zb, smallest, method="brute"), link_records(za, zb, smallest, method="box"))
    assert len(chunks) > 1  # every chunk pair by pair


def test_the_boxes_partition_the_originals():
    from rlopt.linkage.boxes import BOX_RECORDS, kd_boxes

    za, zb = BUNDLED["EIA noise 0.1"].standardised()
    order, starts = kd_boxes(zb)
    np.testing.assert_array_equal(np.sort(order), np.arange(zb.shape[0]))
    sizes = np.diff(starts)
    assert starts[0] == 0 and starts[-1] == zb.shape[0]
    assert sizes.max() <= BOX_RECORDS and sizes.min() >= 2


def test_auto_takes_the_boxes_for_a_monotone_distance_without_a_linear_map(monkeypatch):
    import rlopt.linkage.distance_based as distance_based

    za, zb = eia_head()
    assert za.shape[0] >= TREE_MIN_RECORDS  # where "auto" looks for a faster path
    owa = OWADistance(np.linspace(2, 1, za.shape[1]) / np.linspace(2, 1, za.shape[1]).sum())
    taken = []
    box_verdicts = distance_based.box_verdicts
    monkeypatch.setattr(
        distance_based, "box_verdicts", lambda *a, **k: taken.append(1) or box_verdicts(*a, **k)
    )
    assert_same(link_records(za, zb, owa, method="brute"), link_records(za, zb, owa))
    assert taken == [1]
    indefinite = BilinearDistance(np.diag(np.r_[1.0, -np.ones(za.shape[1] - 1) / (za.shape[1] - 1)]), ())
    assert indefinite.monotone_slack() is None
    with pytest.raises(InputError, match="no exact box path"):
        link_records(za, zb, indefinite, method="box")


def test_sparse_and_dense_candidates_agree():
    data = BUNDLED["M4-33"]
    za, zb = data.standardised()
    rng = np.random.default_rng(3)
    allowed = rng.random((za.shape[0], za.shape[0])) < 0.05
    allowed[rng.random(za.shape[0]) < 0.5] = False  # some rows without any candidate
    am = resolve_distance("am", za, zb, data.columns)
    dense = link_records(za, zb, am, candidates=allowed)
    assert_same(dense, link_records(za, zb, am, candidates=csr_array(allowed)))
    # by hand for each row, on the full distance matrix
    d = np.where(allowed, am.pairwise(za, zb), np.inf)
    for i in range(za.shape[0]):
        others = np.delete(d[i], i)
        assert dense.correct[i] == (d[i, i] < others.min())
        assert dense.linked_to[i] == (d[i].argmin() if allowed[i].any() else -1)


# ---- transparency attacks without N^2 candidate matrices ----------------------------------


@pytest.mark.parametrize("window", [0, 3, 54, 400])
def test_rank_windows_pairs_are_the_intersection(window):
    from rlopt.attacks.rank_swap import rank_windows
    from rlopt.masking import rank_swap

    census = load_census()
    tied = census.round(-3)  # heavily tied columns: rank ranges, not ranks
    for original in (census, tied):
        masked = rank_swap(original, window=max(window, 1), seed=2)
        windows = rank_windows(original.to_numpy(float), masked.to_numpy(float), window)
        rows, cols = windows.pairs(workers=2)
        dense = windows.intersection(0, len(original))
        expected_rows, expected_cols = np.nonzero(dense)
        order = np.lexsort((cols, rows))
        np.testing.assert_array_equal(rows[order], expected_rows)
        np.testing.assert_array_equal(cols[order], expected_cols)


def dense_mdav_candidates(original, masked, groups, columns):
    """The attack's candidate matrix by comparing every masked vector with every group mean."""
    from rlopt.attacks.microaggregation import MATCH_RTOL
    from rlopt.data._standardise import column_scale
    from rlopt.masking.mdav import group_means, mdav_partition

    allowed = np.ones((len(original), len(original)), dtype=bool)
    for group_columns, k in groups:
        idx = [columns.index(c) for c in group_columns]
        a, m = original[:, idx], masked[:, idx]
        labels = mdav_partition(a, k)
        means = group_means(a, labels)
        gaps = np.abs((m[:, None, :] - means[None, :, :]) / column_scale(a)).max(axis=2)
        matches = gaps <= MATCH_RTOL
        misfit = ~matches.any(axis=1)
        matches[misfit, gaps[misfit].argmin(axis=1)] = True
        allowed &= matches[:, labels].T
    return allowed


@pytest.mark.parametrize(
    "groups",
    [
        [(("TAXINC", "POTHVAL", "FEDTAX", "FICA"), 3)],
        [(("TAXINC", "POTHVAL"), 3), (("FEDTAX", "FICA"), 4)],
        [(("AFNLWGT",), 3), (("AGI",), 5), (("EMCONTRB",), 4)],
    ],
)
def test_mdav_attack_candidates_are_the_dense_ones(groups):
    from rlopt.attacks import microaggregation_attack
    from rlopt.masking import microaggregate

    census = load_census()
    columns = [c for g, _ in groups for c in g]
    original = census[columns]
    masked = microaggregate(original, groups=[(list(g), k) for g, k in groups])
    masked.iloc[:5] = masked.iloc[:5] * 1.01  # five misfits: nearest group
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        attack = microaggregation_attack(original, masked, groups=[(list(g), k) for g, k in groups])
    dense = dense_mdav_candidates(original.to_numpy(float), masked.to_numpy(float), groups, columns)
    np.testing.assert_array_equal(attack.candidates, dense.sum(axis=1))
    np.testing.assert_array_equal(attack.contains_own, dense.diagonal())
    data = validate_pair(original, masked)
    za, zb = data.standardised()
    reference = link_records(zb, za, resolve_distance("am", za, zb, data.columns), candidates=dense)
    np.testing.assert_array_equal(attack.correct, reference.correct)
    np.testing.assert_array_equal(attack.linked_to, reference.linked_to)


# ---- verified lower ends on files too large for the MILP ----------------------------------


def test_risk_learned_on_a_sample_is_a_whole_file_lower_end_without_ceiling(monkeypatch, tmp_path):
    import rlopt.risk.pair as pair
    from rlopt import assess_risk
    from rlopt.families.wm import WeightedMeanDistance
    from rlopt.status import Status

    monkeypatch.setattr(pair, "PLD_MAX_RECORDS", 500)
    census = load_census()[["AFNLWGT", "AGI", "EMCONTRB", "FEDTAX"]]
    masked = additive_noise(census, 0.2, seed=3)
    result = assess_risk(
        census, masked, families=["wm"], time_limit=10, folds=2, learn_sample=300, blocks={"size": 30}
    )
    (row,) = result.figures["families"]
    assert row["status"] == Status.SAMPLED and row["bound"] is None and row["sample"]["n_records"] == 300
    # blocks bound nothing on the file from a sample: none, and a note says so
    assert row["blocks"] is None and result.figures["inputs"]["blocks"] is None
    assert "no block ceilings: the families were learned on a sample" in result.figures["inputs"]["notes"]
    # the row's count is a whole-file recount of the parameter it reports
    data = validate_pair(census, masked)
    za, zb = data.standardised()
    weights = np.array([result.figures["params"]["wm"]["weights"][c] for c in data.columns])
    recount = link_records(za, zb, WeightedMeanDistance(weights, data.columns))
    assert recount.n_correct == row["n_correct"]
    assert row["n_correct"] >= result.figures["baselines"]["am"]["n_correct"]  # AM is a wm parameter
    headline = result.headline
    assert headline.upper_n_correct == len(census) and headline.status == Status.INTERVAL
    assert headline.n_correct == max(row["n_correct"], result.figures["baselines"]["md"]["n_correct"])
    assert result.figures["baselines"]["pld"]["n_correct"] is None
    assert "not computed" in result.figures["baselines"]["pld"]["status"]
    assert result.figures["generalisation"][0]["on_sample"] == 300
    assert result.records["reid_wm"].sum() == row["n_correct"]
    html = render_risk_report(result, tmp_path / "risk.html").read_text()
    assert "at least" in html and "(within the 300-record learning sample)" in html


def test_a_learning_sample_below_two_records_is_an_error():
    from rlopt import assess_risk

    census = load_census()[["AFNLWGT", "AGI"]]
    with pytest.raises(InputError, match="learn_sample=1"):
        assess_risk(census, additive_noise(census, 0.2, seed=3), families=["wm"], learn_sample=1)
