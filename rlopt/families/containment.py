"""Containment between families: the parameter of a larger family that gives the
same distance as a member of a smaller one (up to a positive factor, which no
ranking of records notices).

AM lies in every learned family (its ``neutral`` parameter); a weighted mean lies
in CI (the additive measure) and in SB (the diagonal matrix); an OWA lies in CI
(the symmetric measure); MD's matrix, scaled to trace 1, lies in SB (a positive
semi-definite matrix of trace 1 has ``|Q_kl| <= 1``). A weighted mean lies in
CI_k (Möbius masses on single attributes only), CI_k in CI (the measure of its
Möbius masses, on a width the full measure takes) and in CI_k' for ``k <= k'``; a
measure of CI, CI_m, CI_super or an OWA lies in CI_k when its Möbius masses vanish
on every subset of more than ``k`` attributes (checked up to :data:`MOBIUS_TOL`,
at most :data:`MAX_MOBIUS_ATTRIBUTES` attributes). A figure reached by a
contained distance is therefore a lower end of the larger family's worst case,
once the larger family's own extra conditions (``delta``, non-negativity, cuts)
are checked with :meth:`LearnedFamily.is_admissible`.
"""

from __future__ import annotations

import numpy as np

from rlopt.families._base import Distance
from rlopt.families._learned import LearnedFamily
from rlopt.families.am import ArithmeticMeanDistance
from rlopt.families.bilinear import Bilinear, BilinearDistance
from rlopt.families.choquet import MAX_ROW_BYTES, Choquet, ChoquetDistance
from rlopt.families.kadditive import (
    KAdditiveChoquet,
    KAdditiveDistance,
    embed_mobius,
    measure_to_mobius,
    subsets,
)
from rlopt.families.md import MahalanobisDistance
from rlopt.families.owa import OrderedWeightedAverage, OWADistance
from rlopt.families.wm import WeightedMean, WeightedMeanDistance

__all__ = ["embed", "MOBIUS_TOL", "MAX_MOBIUS_ATTRIBUTES"]

MOBIUS_TOL = 1e-12
"""A Möbius mass of a larger subset at most this large counts as zero (rounding of
the transform); the embedded parameter is recounted by ``learn`` like every start."""

MAX_MOBIUS_ATTRIBUTES = 20
"""The widest file on which a measure is transformed (``n 2^n`` operations)."""


def _weights(distance: Distance, n_attributes: int) -> np.ndarray | None:
    """The attribute weights (summing to 1) of a weighted mean, else ``None``."""
    if isinstance(distance, ArithmeticMeanDistance):
        return np.full(n_attributes, 1.0 / n_attributes)
    if isinstance(distance, WeightedMeanDistance):
        return distance.weights
    return None


def _matrix(distance: Distance, n_attributes: int) -> np.ndarray | None:
    """The symmetric matrix of a quadratic form, scaled to trace 1, else ``None``."""
    weights = _weights(distance, n_attributes)
    if weights is not None:
        return np.diag(weights)
    if isinstance(distance, BilinearDistance):
        return distance.matrix
    if isinstance(distance, MahalanobisDistance):
        trace = np.trace(distance.precision)
        return distance.precision / trace if trace > 0 else None
    return None


def _measure(distance: Distance, n_attributes: int) -> np.ndarray | None:
    """A fuzzy measure (length ``2^n``, by bitmask) whose Choquet integral is ``distance``."""
    if isinstance(distance, ChoquetDistance):
        return distance.measure
    if isinstance(distance, KAdditiveDistance):  # over mu(V) = sum m = 1 up to the solver's tolerance
        if n_attributes > MAX_MOBIUS_ATTRIBUTES:
            return None
        measure = distance.measure()
        return measure / measure[-1] if measure[-1] > 0 else None
    weights = _weights(distance, n_attributes)
    masks = np.arange(2**n_attributes)
    if weights is not None:  # additive: mu(S) = sum of the weights in S
        members = (masks[:, None] >> np.arange(n_attributes)) & 1
        return members @ weights
    if isinstance(distance, OWADistance):  # symmetric: mu(S) = w_1 + ... + w_|S|
        sizes = np.array([int(m).bit_count() for m in masks])
        return np.concatenate([[0.0], np.cumsum(distance.weights)])[sizes]
    return None


def embed(distance: Distance, family: LearnedFamily, n_attributes: int) -> np.ndarray | None:
    """The parameter of ``family`` (on ``n_attributes`` attributes, in the same column order)
    whose distance is ``distance`` up to a positive factor, or ``None`` when the
    family's form does not contain it. The family's extra conditions are not
    checked here (see :meth:`LearnedFamily.is_admissible`)."""
    if isinstance(distance, ArithmeticMeanDistance):
        return family.neutral(n_attributes)
    if isinstance(family, WeightedMean):
        return _weights(distance, n_attributes)
    if isinstance(family, OrderedWeightedAverage):
        return distance.weights if isinstance(distance, OWADistance) else None
    if isinstance(family, KAdditiveChoquet):
        return _k_additive(distance, family, n_attributes)
    if isinstance(family, Choquet):
        if isinstance(distance, KAdditiveDistance) and family.row_bytes(n_attributes) > MAX_ROW_BYTES:
            return None  # wider than the full measure takes
        measure = _measure(distance, n_attributes)
        return None if measure is None else measure[1:-1]
    if isinstance(family, Bilinear):
        matrix = _matrix(distance, n_attributes)
        return None if matrix is None else matrix[np.triu_indices(n_attributes)]
    return None


def _k_additive(distance: Distance, family: KAdditiveChoquet, n_attributes: int) -> np.ndarray | None:
    """The parameter of ``ci_k`` for a weighted mean, a ``ci_k'`` with ``k' <= k``, or a
    measure whose Möbius masses are k-additive; else ``None``."""
    weights = _weights(distance, n_attributes)
    if weights is not None:  # additive: the masses of single attributes
        return family.theta_from_mobius(
            np.concatenate([weights, np.zeros(family.n_mobius(n_attributes) - n_attributes)]), n_attributes
        )
    if isinstance(distance, KAdditiveDistance):
        if distance.k > family.k:
            return (
                None
                if n_attributes > MAX_MOBIUS_ATTRIBUTES
                else embed_mobius(
                    measure_to_mobius(distance.measure(), n_attributes), n_attributes, family, tol=MOBIUS_TOL
                )
            )
        index = {a: p for p, a in enumerate(subsets(n_attributes, family.k))}
        mobius = np.zeros(family.n_mobius(n_attributes))
        for subset, value in zip(distance.subsets, distance.mobius):
            mobius[index[subset]] = value
        return family.theta_from_mobius(mobius, n_attributes)
    if n_attributes > MAX_MOBIUS_ATTRIBUTES:
        return None
    measure = _measure(distance, n_attributes)
    return (
        None
        if measure is None
        else embed_mobius(measure_to_mobius(measure, n_attributes), n_attributes, family, tol=MOBIUS_TOL)
    )
