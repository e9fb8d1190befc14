"""Containment between families: the parameter of a larger family that gives the
same distance as a member of a smaller one (up to a positive factor, which no
ranking of records notices).

AM lies in every learned family (its ``neutral`` parameter); a weighted mean lies
in CI (the additive measure) and in SB (the diagonal matrix); an OWA lies in CI
(the symmetric measure); MD's matrix, scaled to trace 1, lies in SB (a positive
semi-definite matrix of trace 1 has ``|Q_kl| <= 1``). A figure reached by a
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
from rlopt.families.choquet import Choquet, ChoquetDistance
from rlopt.families.md import MahalanobisDistance
from rlopt.families.owa import OrderedWeightedAverage, OWADistance
from rlopt.families.wm import WeightedMean, WeightedMeanDistance

__all__ = ["embed"]


def _weights(distance: Distance, n: int) -> np.ndarray | None:
    """The attribute weights (summing to 1) of a weighted mean, else ``None``."""
    if isinstance(distance, ArithmeticMeanDistance):
        return np.full(n, 1.0 / n)
    if isinstance(distance, WeightedMeanDistance):
        return distance.weights
    return None


def _matrix(distance: Distance, n: int) -> np.ndarray | None:
    """The symmetric matrix of a quadratic form, scaled to trace 1, else ``None``."""
    weights = _weights(distance, n)
    if weights is not None:
        return np.diag(weights)
    if isinstance(distance, BilinearDistance):
        return distance.matrix
    if isinstance(distance, MahalanobisDistance):
        trace = np.trace(distance.precision)
        return distance.precision / trace if trace > 0 else None
    return None


def _measure(distance: Distance, n: int) -> np.ndarray | None:
    """A fuzzy measure (length ``2^n``, by bitmask) whose Choquet integral is ``distance``."""
    if isinstance(distance, ChoquetDistance):
        return distance.measure
    weights = _weights(distance, n)
    masks = np.arange(2**n)
    if weights is not None:  # additive: mu(S) = sum of the weights in S
        members = (masks[:, None] >> np.arange(n)) & 1
        return members @ weights
    if isinstance(distance, OWADistance):  # symmetric: mu(S) = w_1 + ... + w_|S|
        sizes = np.array([int(m).bit_count() for m in masks])
        return np.concatenate([[0.0], np.cumsum(distance.weights)])[sizes]
    return None


def embed(distance: Distance, family: LearnedFamily, n: int) -> np.ndarray | None:
    """The parameter of ``family`` (on ``n`` attributes, in the same column order)
    whose distance is ``distance`` up to a positive factor, or ``None`` when the
    family's form does not contain it. The family's extra conditions are not
    checked here (see :meth:`LearnedFamily.is_admissible`)."""
    if isinstance(distance, ArithmeticMeanDistance):
        return family.neutral(n)
    if isinstance(family, WeightedMean):
        return _weights(distance, n)
    if isinstance(family, OrderedWeightedAverage):
        return distance.weights if isinstance(distance, OWADistance) else None
    if isinstance(family, Choquet):
        measure = _measure(distance, n)
        return None if measure is None else measure[1:-1]
    if isinstance(family, Bilinear):
        matrix = _matrix(distance, n)
        return None if matrix is None else matrix[np.triu_indices(n)]
    return None
