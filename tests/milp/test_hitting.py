"""The hitting-set ceiling (rlopt.milp.ceilings.hitting): a ceiling that is a proof (never below a
verified count), the optimum where it ends proven (against brute force and the MILP),
and a four-record file worked out by hand."""

import time

import numpy as np
import pytest

from rlopt.data import validate_pair
from rlopt.exceptions import InputError
from rlopt.families import get_learned_family
from rlopt.milp.ceilings.hitting import hitting_set_ceiling
from rlopt.milp.reductions.witnesses import attribute_names, separation
from rlopt.milp.solvers.covering import HittingMaster
from tests._helpers import MARGIN, brute_force_two_attributes, fit, noisy_file

pytest.importorskip("highspy")


def _encoded(original, masked):
    data = validate_pair(original, masked)
    return data.encoded.za, data.encoded.zb


def _count(za, zb, family, theta, margin=MARGIN):
    distance = get_learned_family(family).distance(theta, attribute_names(za.shape[1]))
    return int((separation(za, zb, distance) >= margin).sum())


def test_four_records_worked_by_hand():
    # Records 0 and 1 have their own original 1 away in the second attribute and the
    # other's 1 away in the first: wm with weights (p, 1 - p) re-identifies each iff
    # p - (1 - p) >= eps, i.e. p >= (1 + eps) / 2. Records 2 and 3 are the mirror image
    # (own original 1 away in the first attribute, the other's in the second): each iff
    # p <= (1 - eps) / 2. The two pairs are far apart, so their other rows hold for every
    # p. The optimum is 2, the minimal sets no p re-identifies are {0,2}, {0,3}, {1,2},
    # {1,3}, and their smallest hitting set has 2 records: the ceiling is 4 - 2 = 2.
    zb = np.array([[0.0, 0.0], [1.0, 1.0], [10.0, 10.0], [11.0, 11.0]])
    za = np.array([[0.0, 1.0], [1.0, 0.0], [11.0, 10.0], [10.0, 11.0]])
    ceiling, theta, info = hitting_set_ceiling(za, zb, get_learned_family("wm"), margin=MARGIN)
    assert ceiling == 2 and info.stopped == "proven"
    assert _count(za, zb, "wm", theta) == 2
    assert theta[0] >= (1 + MARGIN) / 2 or theta[0] <= (1 - MARGIN) / 2
    assert {tuple(c) for c in info.sets} <= {(0, 2), (0, 3), (1, 2), (1, 3)}


@pytest.mark.parametrize("seed", range(4))
def test_the_proven_ceiling_is_the_brute_force_optimum_of_wm(seed):
    original, masked = noisy_file(seed, n_records=12, n_attributes=2)
    za, zb = _encoded(original, masked)
    ceiling, theta, info = hitting_set_ceiling(za, zb, get_learned_family("wm"), margin=MARGIN)
    optimum = brute_force_two_attributes(original, masked, MARGIN)["wm"]
    assert info.stopped == "proven"
    assert ceiling == optimum == _count(za, zb, "wm", theta)


@pytest.mark.parametrize(
    ("seed", "family", "n_attributes"), [(0, "sb", 2), (1, "sb", 3), (2, "sb", 3), (3, "wm", 3)]
)
def test_the_proven_ceiling_is_the_milp_optimum(seed, family, n_attributes):
    original, masked = noisy_file(seed, n_records=10, n_attributes=n_attributes)
    za, zb = _encoded(original, masked)
    ceiling, theta, info = hitting_set_ceiling(za, zb, get_learned_family(family), margin=MARGIN)
    result = fit(family, original, masked, big_c="uniform", reductions="none")  # the naive model
    assert info.stopped == "proven" and result.status == "optimal"
    assert ceiling == result.n_correct_verified == _count(za, zb, family, theta)


@pytest.mark.parametrize(("seed", "family"), [(10, "sb"), (11, "ci"), (12, "owa"), (13, "sb")])
def test_the_ceiling_is_never_below_a_verified_count(seed, family):
    original, masked = noisy_file(seed, n_records=25, n_attributes=3)
    za, zb = _encoded(original, masked)
    result = fit(family, original, masked, time_limit=20)
    for seconds in (0.5, 5.0):
        ceiling, theta, info = hitting_set_ceiling(
            za, zb, get_learned_family(family), margin=MARGIN, deadline=time.perf_counter() + seconds
        )
        assert ceiling >= result.n_correct_verified
        assert info.history[-1][1] == _count(za, zb, family, theta) <= ceiling
        if info.stopped == "proven":
            assert ceiling == result.n_correct_verified or result.status != "optimal"


def test_a_block_counts_its_records_only():
    original, masked = noisy_file(5, n_records=20, n_attributes=2)
    za, zb = _encoded(original, masked)
    block = np.arange(0, 20, 2)
    ceiling, theta, info = hitting_set_ceiling(za, zb, get_learned_family("wm"), margin=MARGIN, records=block)
    whole, _, _ = hitting_set_ceiling(za, zb, get_learned_family("wm"), margin=MARGIN)
    distance = get_learned_family("wm").distance(theta, attribute_names(2))
    assert info.stopped == "proven" and ceiling <= block.size
    assert ceiling == int((separation(za, zb, distance, block) >= MARGIN).sum())
    assert all(np.isin(c, block).all() for c in info.sets)
    assert whole <= ceiling + (20 - block.size)


def test_families_with_cutting_planes_are_refused():
    original, masked = noisy_file(0, n_records=6, n_attributes=2)
    za, zb = _encoded(original, masked)
    with pytest.raises(InputError, match="cutting planes"):
        hitting_set_ceiling(za, zb, get_learned_family("sb_pd"), margin=MARGIN)


MISLEADING_SETS = [
    [5, 6, 12, 18],
    [9, 16, 18, 19],
    [1, 5, 14, 17, 19],
    [3, 5, 9, 13, 18],
    [3, 4, 9, 12, 13, 15],
]
"""HiGHS 1.16.0 with presolve and a MIP start of 5 elements on these sets called
objective 1 optimal; the smallest hitting set has 2 elements ({5, 9})."""


def test_the_master_is_exact_where_a_mip_start_misled_highs(monkeypatch):
    """The master keeps out of the defect's way by construction: it never hands HiGHS a
    start (``setSolution`` is made to fail here) and runs with presolve off, so a return
    of the defect cannot reach it; and it finds the optimum 2. (HiGHS 1.16.0 run by hand
    with presolve on and 5-element starts on these sets now finds 2 as well: the defect
    was met with the master's rows added between solves, and is not reproduced alone.)"""
    import highspy

    def no_start(*args, **kwargs):
        raise AssertionError("the hitting-set master gave HiGHS a MIP start")

    monkeypatch.setattr(highspy.Highs, "setSolution", no_start)
    master = HittingMaster(20)
    master.add([np.array(c) for c in MISLEADING_SETS])
    assert master.highs.getOptionValue("presolve")[1] == "off"
    solution = master.solve()
    assert solution.optimal and solution.bound == 2
    assert solution.chosen is not None and solution.chosen.sum() == 2 and master.hits(solution.chosen)


def test_the_block_search_beside_a_solve_gives_a_valid_ceiling():
    """sb on few attributes: the hitting-set search on blocks runs beside the MILP (the
    region search does not apply), its ceiling enters the run's certificate, and where
    the run proves its optimum the blocks' ceiling is never below it."""
    from rlopt.milp.ceilings.hitting import HITTING_BLOCKS, applies

    assert applies(get_learned_family("sb"), 4) and not applies(get_learned_family("sb"), 6)
    assert not applies(get_learned_family("sb_nc"), 3)  # cutting planes
    original, masked = noisy_file(21, 60, 3, scale=(0.8, 1.0, 1.2))
    result = fit("sb", original, masked, time_limit=15)
    upper = result.solver["hitting_blocks"]["upper"]  # None: ended before its first block
    assert upper is None or result.n_correct_verified <= upper <= 60
    assert result.bound <= (60 if upper is None else upper)  # the run's bound takes the blocks' ceiling
    assert all(
        e["upper"] >= result.n_correct_verified for e in result.history if e["upper_source"] == HITTING_BLOCKS
    )


def test_the_block_search_forked_after_a_many_thread_solve_does_not_crash():
    """HiGHS's scheduler started at 5 threads before a test (as CI runs the CLI's tests),
    then ``rlopt learn``: before, the block search forked beside the solve died of a
    segmentation fault restarting a scheduler whose threads it did not inherit."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tests/cli/test_cli.py",
        "-k",
        "learn_json_has_the_documented_keys",
    ]
    command += ["-s", "-q", "-n0", "-p", "no:cacheprovider", "--no-cov"]
    env = {**os.environ, "RLOPT_TEST_HIGHS_SCHEDULER": "5", "PYTHONPATH": str(root)}
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "Segmentation fault" not in done.stdout + done.stderr
