"""The time limit covers everything a family does, on files large enough for each step
to matter: every step before the solve ends by a deadline, HiGHS gets what is left once
the model is loaded, and a MILP that could not even be loaded is not started."""

import time

import numpy as np
import pandas as pd
import pytest

import rlopt.milp.budget as budget
from rlopt.families import get_family
from rlopt.learn import LearnedDistanceLinkage
from rlopt.milp.incumbents.surrogate import competitors, surrogate_ascent
from rlopt.milp.solvers import runtime as solve_module
from rlopt.status import Status


def large_file(n_records: int, n_attributes: int, seed: int = 7):
    rng = np.random.default_rng(seed)
    columns = [f"v{k}" for k in range(n_attributes)]
    original = pd.DataFrame(rng.normal(size=(n_records, n_attributes)), columns=columns)
    noise = rng.normal(scale=0.5, size=original.shape) * np.linspace(0.3, 1.2, n_attributes)
    return original, original + noise


def test_the_surrogate_stops_at_its_deadline_even_before_its_first_step():
    rng = np.random.default_rng(1)
    za, zb = rng.normal(size=(300, 3)), rng.normal(size=(300, 3))
    family = get_family("wm")
    assert competitors(za, zb, family, family.neutral(3), 4, deadline=time.perf_counter() - 1) is None
    theta, count = surrogate_ascent(za, zb, family, family.neutral(3), margin=1e-5, deadline=0.0)
    assert np.array_equal(theta, family.neutral(3)) and count == 0
    sep, nearest = competitors(za, zb, family, family.neutral(3), 4)
    assert nearest.shape == (300, 4) and np.isfinite(sep).all()


@pytest.mark.parametrize("name", ["wm", "sb"])
def test_the_quadratic_competitors_are_the_reference_ones(monkeypatch, name):
    """One matrix product per block gives the separations of the reference evaluator
    (rounding aside) and the same nearest competitors."""
    rng = np.random.default_rng(2)
    za, zb = rng.normal(size=(120, 3)), rng.normal(size=(120, 3))
    family = get_family(name)
    theta = family.neutral(3) + 0.05 * rng.random(family.n_params(3))
    theta = np.clip(theta, *family.bounds(3))
    fast = competitors(za, zb, family, theta, 5)
    monkeypatch.setattr("rlopt.milp.incumbents.surrogate.quadratic_matrix", lambda distance: None)
    reference = competitors(za, zb, family, theta, 5)
    np.testing.assert_allclose(fast[0], reference[0], rtol=1e-9, atol=1e-12)
    assert (np.sort(fast[1], axis=1) == np.sort(reference[1], axis=1)).all()


def test_highs_gets_what_is_left_once_the_model_is_loaded(monkeypatch):
    """Pyomo hands HiGHS the limit it was given before it loads the model; rlopt resets it
    to what is left before the run's deadline."""
    seen = []
    real = solve_module._limit_to_deadline

    def loaded_slowly(interface):
        time.sleep(0.3)  # a model that takes 0.3 s to load
        given = interface._active_config.time_limit  # what Pyomo was handed before the load
        real(interface)
        seen.append((given, interface._active_config.time_limit))

    monkeypatch.setattr(solve_module, "_limit_to_deadline", loaded_slowly)
    # 100 records: HiGHS proves in about a second once loaded (200 records: it ran to the
    # 20 s limit); the limit it gets does not depend on the file's size
    original, masked = large_file(100, 3)
    LearnedDistanceLinkage("wm", time_limit=20, reductions="none").fit(original, masked)
    (given, reset), *_ = seen
    # the reset takes off at least the 0.3 s the load took (without it, reset == given;
    # a busy machine only takes off more)
    assert reset <= given - 0.3 + 1e-6


def test_a_milp_that_could_not_be_loaded_in_time_is_not_started(monkeypatch):
    """When what is left of the limit is below the model's load time, HiGHS is not run:
    the interval is what the other steps proved, labelled as such."""
    monkeypatch.setattr(budget, "LOAD_FACTOR", 1e9)
    original, masked = large_file(200, 3)
    result = LearnedDistanceLinkage("sb", time_limit=4).fit(original, masked).result_
    assert result.status == Status.TIME_LIMIT and "not_started" in result.solver
    assert result.n_correct_verified is not None and result.lower_source != "solver"
    assert result.bound >= result.n_correct_verified


@pytest.mark.slow
@pytest.mark.parametrize("limit", [4.0, 5.0])
def test_a_large_file_keeps_its_time_limit(limit):
    """4000 records of 10 attributes, wm: before the searches and the MILP's load kept
    their deadlines the fit took 9.7 s of a 5 s limit on EIA (4092 x 10)."""
    original, masked = large_file(4000, 10)
    started = time.perf_counter()
    LearnedDistanceLinkage("wm", time_limit=limit, threads=1).fit(original, masked)
    assert time.perf_counter() - started <= 1.05 * limit
