"""Which distances never decrease when a difference grows (``Distance.monotone_slack``),
checked on random differences: ``d(x) <= d(y) + slack * max(y)`` for ``x <= y``."""

import numpy as np
import pytest

from rlopt.families import FAMILIES, get_learned_family
from rlopt.families.choquet import ChoquetDistance, measure_slack
from rlopt.families.owa import OWADistance
from rlopt.families.wm import WeightedMeanDistance

COLUMNS = ("a", "b", "c", "d")


def random_parameter(name, rng):
    """A parameter of family ``name`` on 4 attributes: for the Choquet families a random
    monotone measure, else a random mix of the neutral start and the family's vertices."""
    family = get_learned_family(name)
    n = len(COLUMNS)
    if name in ("ci", "ci_m", "ci_super"):
        base = rng.uniform(size=2**n)
        measure = np.zeros(2**n)
        for m in range(1, 2**n):  # the smallest monotone measure above base
            measure[m] = max(base[m], *(measure[m ^ 1 << k] for k in range(n) if m >> k & 1))
        return ChoquetDistance(measure / measure[-1], COLUMNS, name)
    theta = family.neutral(n)
    vertices = family.simplex_vertices(n)
    if vertices is not None:
        mix = rng.dirichlet(np.ones(len(vertices) + 1))
        theta = mix[0] * theta + mix[1:] @ np.asarray(vertices)
    return family.distance(theta, COLUMNS)


def falls(distance, rng, n=20000):
    """The largest ``d(x) - d(y)`` over random ``0 <= x <= y`` (deltas), per unit of ``max(y)``."""
    y = rng.exponential(size=(n, 1, len(COLUMNS)))
    x = y * rng.uniform(size=y.shape) * (rng.uniform(size=y.shape) < 0.7)
    return float(((distance.combine(x) - distance.combine(y)) / (y**2).max(axis=2)).max())


@pytest.mark.parametrize("name", ["wm", "wm_m", "owa", "ci", "ci_k"])
def test_the_monotone_families_are_monotone(name):
    rng = np.random.default_rng(0)
    distance = random_parameter(name, rng)
    assert distance.monotone_slack() == pytest.approx(0.0, abs=1e-12)
    assert falls(distance, rng) <= 1e-12


def test_the_baselines_and_the_bilinear_forms():
    za = np.random.default_rng(1).normal(size=(50, 4))
    am = FAMILIES["am"]().from_data(za, za + 0.1, COLUMNS)
    md = FAMILIES["md"]().from_data(za, za + np.random.default_rng(2).normal(size=za.shape), COLUMNS)
    assert am.monotone_slack() == 0.0 and md.monotone_slack() is None
    sb = get_learned_family("sb").distance(get_learned_family("sb").neutral(4), COLUMNS)
    assert sb.monotone_slack() is None  # a bilinear form's value can fall as a difference grows


def test_a_parameter_off_its_set_states_how_far_it_falls():
    rng = np.random.default_rng(3)
    negative = WeightedMeanDistance(np.array([0.6, 0.5, -0.05, -0.05]), COLUMNS)
    assert negative.monotone_slack() == pytest.approx(0.1)
    assert 0 < falls(negative, rng) <= 0.1
    assert OWADistance(np.array([1.1, -0.1, 0.0, 0.0])).monotone_slack() == pytest.approx(0.1)
    # a measure that falls by 0.01 from {a} to {a, b}: at most 4 x 0.01 below its monotone cover
    sizes = np.array([bin(m).count("1") for m in range(16)])
    measure = sizes / 4.0
    measure[0b0001] = measure[0b0011] + 0.01
    assert measure_slack(measure, 4) == pytest.approx(4 * 0.01)
    dented = ChoquetDistance(measure, COLUMNS)
    x, y = np.array([[[1.0, 0.0, 0.0, 0.0]]]), np.array([[[1.0, 1.0, 0.0, 0.0]]])
    assert (dented.combine(x) - dented.combine(y)).item() == pytest.approx(0.01)  # 0.51 - 0.5
    assert falls(dented, rng) <= dented.monotone_slack()
