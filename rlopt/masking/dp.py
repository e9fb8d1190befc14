"""Differential privacy for microdata: insensitive microaggregation followed by
Laplace noise on the centroids (Soria-Comas et al. 2014), and the plain
record-level Laplace mechanism it is compared with."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from numbers import Integral, Real

import numpy as np
import pandas as pd

from rlopt.data._validate import as_frame, validate_table
from rlopt.exceptions import DataWarning, InputError
from rlopt.masking.mdav import group_means
from rlopt.validation import SEED, Interval, validate_params

__all__ = [
    "EPSILON",
    "Bounds",
    "prepare_domain",
    "insensitive_microaggregation",
    "dp_microaggregate",
    "dp_microaggregation_scale",
    "laplace_noise",
    "laplace_scale",
]

Bounds = Mapping[str, tuple[float, float]] | Sequence[tuple[float, float]]


# ---- validation -------------------------------------------------------------------


def _is_real(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))


EPSILON = Interval(Real, 0, closed="neither", note="the privacy budget")


def _check_cluster_size(k, n_records: int) -> int:
    """``k`` as an int when ``2 <= k <= n_records`` (a group of one record is no
    microaggregation, and at least one group of ``k`` records must fit)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise InputError(f"cluster size k={k!r}; expected an integer with 2 <= k <= n_records")
    if not 2 <= k <= n_records:
        raise InputError(
            f"cluster size k={k} with {n_records} record(s); expected an integer with "
            f"2 <= k <= {n_records} (the number of records)"
        )
    return int(k)


def _check_widths(widths) -> np.ndarray:
    try:
        array = np.asarray(widths, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"widths={widths!r}; expected a 1-d array of finite numbers >= 0") from None
    if array.ndim != 1 or array.size == 0 or not np.isfinite(array).all() or (array < 0).any():
        raise InputError(f"widths={widths!r}; expected a non-empty 1-d array of finite numbers >= 0")
    return array


def _pair(column: str, pair) -> tuple[float, float]:
    """One ``(lower, upper)`` domain, checked."""
    try:
        lower, upper = pair
    except (TypeError, ValueError):
        raise InputError(f"bounds for column {column!r}: {pair!r}; expected a pair (lower, upper)") from None
    if not (_is_real(lower) and _is_real(upper) and math.isfinite(lower) and math.isfinite(upper)):
        raise InputError(f"bounds for column {column!r}: ({lower!r}, {upper!r}); expected two finite numbers")
    if lower > upper:
        raise InputError(
            f"bounds for column {column!r}: lower={lower!r} > upper={upper!r}; expected lower <= upper"
        )
    return float(lower), float(upper)


def _domain(values: np.ndarray, cols: list[str], bounds: Bounds | None) -> tuple[np.ndarray, np.ndarray]:
    """The per-attribute domain ``(lower, upper)``, from ``bounds`` (checked to hold every
    value) or, with ``bounds=None``, from the data's min and max (with a warning)."""
    if bounds is None:
        warnings.warn(
            "bounds=None: each attribute's domain is taken from the data's min and max, which are "
            "not differentially private by themselves (and make the cluster order, or a histogram's "
            "bins, depend on the data); give a published domain, bounds={column: (lower, upper)} (CLI: --bounds 'A:0:100;B:0:1'), for a formal "
            "epsilon-DP guarantee",
            DataWarning,
            stacklevel=4,  # _domain <- prepare_domain <- the public function <- its caller
        )
        return values.min(axis=0), values.max(axis=0)
    if isinstance(bounds, Mapping):
        extra = sorted(set(map(str, bounds)) - set(cols))
        missing = [c for c in cols if c not in bounds]
        if extra or missing:
            raise InputError(
                f"bounds: no (lower, upper) for column(s) {missing}, unknown column(s) {extra}; "
                f"expected one (lower, upper) for each of {cols}"
            )
        pairs = [_pair(c, bounds[c]) for c in cols]
    else:
        if isinstance(bounds, (str, bytes)) or len(bounds) != len(cols):
            raise InputError(f"bounds={bounds!r}; expected one (lower, upper) pair for each of {cols}")
        pairs = [_pair(c, pair) for c, pair in zip(cols, bounds)]
    lower, upper = (np.array(side) for side in zip(*pairs))
    outside = (values < lower) | (values > upper)
    if outside.any():
        row, a = np.argwhere(outside)[0]
        raise InputError(
            f"column {cols[a]!r} has value {float(values[row, a])!r} (row {int(row)}) outside its "
            f"bounds [{float(lower[a])!r}, {float(upper[a])!r}]; expected every value inside the "
            "given domain"
        )
    return lower, upper


def prepare_domain(data, columns, bounds, *, min_records: int):
    """The frame, its numeric ``columns`` (validated), their names and the domain
    ``(lower, upper)`` of each (:func:`_domain`): what every DP method starts from. Call
    it from the public function itself: the warning of ``bounds=None`` names its caller."""
    frame = as_frame(data, name="input")
    values, cols = validate_table(frame, columns=columns, name="input", min_records=min_records)
    lower, upper = _domain(values, cols, bounds)
    return frame, values, cols, lower, upper


# ---- insensitive microaggregation ---------------------------------------------------


def _order_labels(values: np.ndarray, lower: np.ndarray, upper: np.ndarray, k: int) -> np.ndarray:
    """Cluster labels along the fixed total order (see :func:`insensitive_microaggregation`)."""
    width = upper - lower
    z = np.where(width > 0, (values - lower) / np.where(width > 0, width, 1.0), 0.0)
    distance = (z**2).sum(axis=1)
    # np.lexsort sorts by the last key first and is stable: distance, then the values
    # attribute by attribute, then (for identical records only) the row index
    order = np.lexsort((*values.T[::-1], distance))
    n_clusters = values.shape[0] // k
    labels = np.empty(values.shape[0], dtype=np.int64)
    labels[order] = np.minimum(np.arange(values.shape[0]) // k, n_clusters - 1)
    return labels


def insensitive_microaggregation(values, k: int, bounds: Bounds) -> np.ndarray:
    """Cluster labels of an insensitive microaggregation with clusters of ``k`` records.

    Parameters
    ----------
    values : array-like of shape (n_records, n_attributes)
        Numeric records (a DataFrame's columns keep their names for ``bounds``).
    k : int
        Cluster size, ``2 <= k <= n_records``.
    bounds : dict {column: (lower, upper)} or sequence of (lower, upper)
        The domain of each attribute, fixed before seeing the data (array columns
        are named ``x0, x1, ...``; a sequence gives the pairs in column order).

    Returns
    -------
    ndarray of shape (n_records,)
        Cluster label of each record, ``0 .. n_records // k - 1`` along the order.

    Notes
    -----
    The records are sorted along a total order of the domain that does not depend
    on the data: first by the squared Euclidean distance from the domain's lower
    corner in domain-standardised coordinates, ``sum_a ((x_a - lower_a) / Δ_a)**2``
    with ``Δ_a = upper_a - lower_a`` (an attribute with ``Δ_a = 0`` adds 0), then,
    on equal distance, lexicographically by the attribute values in column order.
    Only identical records remain tied; they are taken by row index, which changes
    no centroid. The sorted records are cut into consecutive clusters of ``k``; the
    last one takes the remainder, so every cluster has ``k .. 2k-1`` records.

    Why it is insensitive: each record's place in the order depends on its own
    value and the fixed domain only. Changing one record (a neighbouring data set,
    same ``n_records``) removes it from one position of the sorted list and inserts
    it at another; the records in between shift by one position and every other
    record keeps its position. Cluster boundaries are fixed positions (multiples of
    ``k``, given ``n_records``), so each cluster loses at most one record and gains
    at most one: the two clusterings differ in at most one record per cluster,
    which is Soria-Comas et al.'s definition of an insensitive microaggregation.
    Their algorithm is an MDAV variant whose choices are made along such a fixed
    order; the order used here is the simplest construction with that property.

    References
    ----------
    J. Soria-Comas, J. Domingo-Ferrer, D. Sánchez, S. Martínez, "Enhancing data
    utility in differential privacy via microaggregation-based k-anonymity",
    VLDB Journal 23(5):771-794, 2014.
    """
    frame = as_frame(values, name="values")
    array, cols = validate_table(frame, name="values")
    k = _check_cluster_size(k, array.shape[0])
    if bounds is None:
        raise InputError("bounds=None; expected the domain (lower, upper) of every attribute")
    lower, upper = _domain(array, cols, bounds)
    return _order_labels(array, lower, upper, k)


# ---- noise scales -------------------------------------------------------------------


@validate_params({"n_records": [Interval(Integral, 2)], "epsilon": [EPSILON]})
def dp_microaggregation_scale(n_records: int, k: int, epsilon: float, widths) -> np.ndarray:
    """Laplace scale per attribute of :func:`dp_microaggregate`:
    ``b_a = n_attributes * (n_records // k) * Δ_a / (k * epsilon)``.

    Parameters
    ----------
    n_records : int
    k : int
        Cluster size, ``2 <= k <= n_records``.
    epsilon : float
        Privacy budget, finite and > 0.
    widths : array-like of shape (n_attributes,)
        Domain widths ``Δ_a = upper_a - lower_a``.

    Returns
    -------
    ndarray of shape (n_attributes,)
    """
    k = _check_cluster_size(k, int(n_records))
    widths = _check_widths(widths)
    sensitivity = (n_records // k) * widths / k
    return sensitivity / (epsilon / widths.size)


@validate_params({"epsilon": [EPSILON]})
def laplace_scale(epsilon: float, widths) -> np.ndarray:
    """Laplace scale per attribute of :func:`laplace_noise`:
    ``b_a = n_attributes * Δ_a / epsilon``.

    Parameters
    ----------
    epsilon : float
        Privacy budget, finite and > 0.
    widths : array-like of shape (n_attributes,)
        Domain widths ``Δ_a = upper_a - lower_a``.

    Returns
    -------
    ndarray of shape (n_attributes,)
    """
    widths = _check_widths(widths)
    return widths / (epsilon / widths.size)


# ---- the two mechanisms -------------------------------------------------------------


# (over 60 lines by its docstring, which states the sensitivity argument)
@validate_params({"epsilon": [EPSILON], "seed": [SEED, None]})
def dp_microaggregate(
    data,
    k: int,
    epsilon: float,
    *,
    bounds: Bounds | None = None,
    seed: int | None = 0,
    columns: Sequence[str] | None = None,
    clip: bool = False,
) -> pd.DataFrame:
    """ε-differentially private microaggregation: insensitive microaggregation with
    clusters of ``k``, then Laplace noise on each cluster's centroid.

    Parameters
    ----------
    data : DataFrame or array-like of shape (n_records, n_attributes)
    k : int
        Cluster size, ``2 <= k <= n_records``.
    epsilon : float
        Privacy budget, finite and > 0.
    bounds : dict {column: (lower, upper)}, default=None
        The published domain of each perturbed attribute. None takes the data's
        min and max, with a :class:`DataWarning`: such bounds are not private.
    seed : int or None, default=0
        Seed of ``numpy.random.default_rng``. The guarantee holds only if the noise
        is unknown to the attacker: a real release needs a secret seed (or None).
    columns : list of str, default=None
        Attributes to perturb (default: all); the others are left unchanged.
    clip : bool, default=False
        Clip the released values to ``bounds`` (post-processing: keeps ε-DP, but
        biases the centroids near the domain's edges). Off by default.

    Returns
    -------
    DataFrame
        Same shape, index and columns as ``data``; every record of a cluster
        carries the cluster's one noisy centroid.

    Notes
    -----
    Neighbouring data sets differ in the value of one record (``n_records`` is
    public). The clusters (:func:`insensitive_microaggregation`) number
    ``g = n_records // k``, each of ``k .. 2k-1`` records. Changing one record
    changes at most one record in each cluster, so each centroid's attribute
    ``a`` moves by at most ``Δ_a / |C| <= Δ_a / k``; since a neighbouring data set
    can shift every cluster by one record, the L1 sensitivity of the vector of
    the ``g`` centroids of attribute ``a`` is at most ``S_a = g * Δ_a / k`` (``n_records
    * Δ_a / k**2`` when ``k`` divides ``n_records``: Soria-Comas et al.'s
    ``(n/k) * Δ/k``). The budget is split evenly over the ``m`` attributes
    (sequential composition, ``ε/m`` each), so each centroid's attribute ``a``
    gets independent Laplace noise of scale ``b_a = S_a / (ε/m) = m g Δ_a /
    (k ε)`` (:func:`dp_microaggregation_scale`; with equal widths this is the
    L1 Laplace mechanism on all ``g m`` centroid values at once). The noisy
    centroids are ε-DP; the released file, every record replaced by its
    cluster's noisy centroid, is a post-processing of them because the cluster
    sizes depend on ``n_records`` and ``k`` only. Compared with
    :func:`laplace_noise` (scale ``m Δ_a / ε``) the noise shrinks by ``g/k ≈
    n_records/k**2``: the gain needs ``k > sqrt(n_records)``.

    The guarantee is for the released records as a set (in an order that does
    not depend on the data, e.g. shuffled). The returned frame keeps the input's
    row order so that record linkage can be scored against the true
    correspondence; publishing it in that order would also reveal the partition.

    References
    ----------
    J. Soria-Comas, J. Domingo-Ferrer, D. Sánchez, S. Martínez, "Enhancing data
    utility in differential privacy via microaggregation-based k-anonymity",
    VLDB Journal 23(5):771-794, 2014.
    """
    frame, values, cols, lower, upper = prepare_domain(data, columns, bounds, min_records=2)
    k = _check_cluster_size(k, values.shape[0])
    labels = _order_labels(values, lower, upper, k)
    scale = dp_microaggregation_scale(values.shape[0], k, epsilon, upper - lower)
    rng = np.random.default_rng(seed)
    noisy = group_means(values, labels) + rng.laplace(size=(labels.max() + 1, len(cols))) * scale
    released = noisy[labels]
    if clip:
        released = np.clip(released, lower, upper)
    result = frame.copy()
    result[cols] = released
    return result


@validate_params({"epsilon": [EPSILON], "seed": [SEED, None]})
def laplace_noise(
    data,
    epsilon: float,
    *,
    bounds: Bounds | None = None,
    seed: int | None = 0,
    columns: Sequence[str] | None = None,
    clip: bool = False,
) -> pd.DataFrame:
    """ε-differential privacy by Laplace noise on every record: the baseline of
    :func:`dp_microaggregate`.

    Parameters
    ----------
    data : DataFrame or array-like of shape (n_records, n_attributes)
    epsilon : float
        Privacy budget, finite and > 0.
    bounds : dict {column: (lower, upper)}, default=None
        The published domain of each perturbed attribute. None takes the data's
        min and max, with a :class:`DataWarning`: such bounds are not private.
    seed : int or None, default=0
        Seed of ``numpy.random.default_rng`` (a real release needs a secret seed).
    columns : list of str, default=None
        Attributes to perturb (default: all); the others are left unchanged.
    clip : bool, default=False
        Clip the released values to ``bounds`` (post-processing: keeps ε-DP).

    Returns
    -------
    DataFrame
        Same shape, index and columns as ``data``.

    Notes
    -----
    Each record's attribute ``a`` gets independent Laplace noise of scale
    ``b_a = m Δ_a / ε`` (:func:`laplace_scale`), ``m`` attributes, ``Δ_a =
    upper_a - lower_a``: attribute ``a`` of one record has sensitivity ``Δ_a``
    and gets budget ``ε/m`` (sequential composition over the attributes). Each
    released record is thus an ε-DP function of that record alone (local
    differential privacy, the numeric analogue of randomized response), and the
    whole file is ε-DP for neighbouring files that differ in one record: only
    that record's row changes distribution. :func:`dp_microaggregate` multiplies
    this scale by ``(n_records // k) / k``.
    """
    frame, values, cols, lower, upper = prepare_domain(data, columns, bounds, min_records=1)
    scale = laplace_scale(epsilon, upper - lower)
    rng = np.random.default_rng(seed)
    released = values + rng.laplace(size=values.shape) * scale
    if clip:
        released = np.clip(released, lower, upper)
    result = frame.copy()
    result[cols] = released
    return result
