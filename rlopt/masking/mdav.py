"""MDAV multivariate microaggregation, applied group of attributes by group.

Exact MDAV costs about ``n^2 / k`` distance evaluations (20,000 records: seconds;
10^6: hours). Above :data:`EXACT_MDAV_RECORDS` records the partition is
*partitioned MDAV*: the records are split by median cuts along their widest attribute
(a KD-tree's cells) into parts of at most :data:`PART_RECORDS` records, and MDAV runs
exactly inside each part: ``n * PART_RECORDS / k`` evaluations, linear in ``n``.
Every group still has ``k .. 2k-1`` records; the information loss is measured beside
exact MDAV's in ``benchmarks/bench_masking_scale.py``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from rlopt.data._standardise import Standardisation, column_scale
from rlopt.data._validate import as_frame, validate_table
from rlopt.exceptions import InputError
from rlopt.masking._groups import attribute_groups
from rlopt.validation import Options, check

__all__ = [
    "EXACT_MDAV_RECORDS",
    "PART_RECORDS",
    "mdav_partition",
    "group_means",
    "microaggregate",
    "check_k",
]

EXACT_MDAV_RECORDS = 10_000
"""Up to this many records ``method="auto"`` runs exact MDAV; above, partitioned MDAV."""

PART_RECORDS = 2_000
"""The largest part of partitioned MDAV (at least ``2k`` is used, so that each half of
a cut keeps ``k`` records)."""


def check_k(k, n_records: int) -> int:
    """``k`` as an int when it is a valid MDAV minimum group size for ``n_records``."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"MDAV minimum group size k={k!r}; expected an integer >= 1")
    if k > n_records:
        raise InputError(
            f"MDAV minimum group size k={k} is larger than the number of records "
            f"({n_records}); expected 1 <= k <= {n_records}"
        )
    return int(k)


def _scaled(values: np.ndarray) -> np.ndarray:
    if values.shape[0] < 2:
        return np.zeros_like(values)
    fitted = Standardisation.fit(values)
    # a constant column adds nothing to any distance
    return (values / fitted.scale - fitted.mean) / np.where(fitted.sd > 0, fitted.sd, 1.0)


def mdav_partition(values: np.ndarray, k: int, *, method: str = "auto") -> np.ndarray:
    """Group labels of the MDAV (maximum distance to average vector) partition.

    Parameters
    ----------
    values : ndarray of shape (n_records, n_attributes)
        Validated numeric values; distances are measured on their z-scores.
    k : int
        Minimum group size.
    method : {"auto", "exact", "partitioned"}, default="auto"
        ``exact``: MDAV on all records; ``partitioned``: MDAV inside the parts of
        median cuts (see the module docstring); ``auto``: exact up to
        :data:`EXACT_MDAV_RECORDS` records. The transparency attack on MDAV calls this
        with the same ``method``, so it rebuilds the partition the file was masked with.

    Returns
    -------
    ndarray of shape (n_records,)
        Group label of each record, numbered in the order groups are formed.

    Notes
    -----
    While at least ``3k`` records remain: take ``r``, the remaining record
    farthest from the centroid of the remaining records, and form a group of
    ``r`` and its ``k-1`` nearest remaining records; then take ``s``, the
    remaining record farthest from ``r``, and form its group likewise. With
    ``2k .. 3k-1`` records left, form one group around the record farthest from
    their centroid and one of the rest; with fewer than ``2k``, one group.
    Every group thus has between ``k`` and ``2k-1`` records (a single group of
    all records when ``n_records < 2k``). Ties (equal distances) are broken by
    the lower row index, so the partition is deterministic.

    References
    ----------
    J. Domingo-Ferrer, J. M. Mateo-Sanz, "Practical data-oriented
    microaggregation for statistical disclosure control", IEEE TKDE 14(1), 2002.
    """
    k = check_k(k, values.shape[0])
    check("method", method, [Options(MDAV_METHODS)])
    z = _scaled(values)
    if method == "exact" or (method == "auto" and values.shape[0] <= EXACT_MDAV_RECORDS):
        return _mdav_labels(z, k)
    return _partitioned_labels(z, k, max(PART_RECORDS, 2 * k))


MDAV_METHODS = ("auto", "exact", "partitioned")


def _parts(z: np.ndarray, rows: np.ndarray, most: int) -> list[np.ndarray]:
    """``rows`` cut at the median of their widest attribute (largest variance), again and
    again, until every part has at most ``most`` rows; each cut leaves ``floor(n/2)``
    and ``ceil(n/2)`` rows, in a fixed order (ties by row index)."""
    out: list[np.ndarray] = []
    stack = [rows]
    while stack:
        part = stack.pop()
        if part.size <= most:
            out.append(part)
            continue
        block = z[part]
        widest = int(np.argmax(block.var(axis=0)))
        order = np.argsort(block[:, widest], kind="stable")
        half = part.size // 2
        stack.append(part[order[half:]])
        stack.append(part[order[:half]])
    return out


def _partitioned_labels(z: np.ndarray, k: int, most: int) -> np.ndarray:
    """MDAV inside each part of :func:`_parts`, the labels numbered part after part."""
    labels = np.empty(z.shape[0], dtype=np.int64)
    offset = 0
    for part in _parts(z, np.arange(z.shape[0]), most):
        inner = _mdav_labels(z[part], k)
        labels[part] = inner + offset
        offset += int(inner.max()) + 1
    return labels


def _farthest_from(z: np.ndarray, remaining: np.ndarray, point: np.ndarray) -> int:
    """The remaining record farthest from ``point`` (the lowest index on a tie)."""
    d = ((z[remaining] - point) ** 2).sum(axis=1)
    return int(remaining[np.argmax(d)])  # first maximum: the lowest index


def _take_group(
    z: np.ndarray, remaining: np.ndarray, seed_index: int, k: int, labels: np.ndarray, label: int
) -> np.ndarray:
    """Label ``seed_index`` and its ``k-1`` nearest remaining records with ``label``
    (in place in ``labels``); return the records still remaining."""
    d = ((z[remaining] - z[seed_index]) ** 2).sum(axis=1)
    d[remaining == seed_index] = -1.0  # the seed record always belongs to its group
    chosen = remaining[np.argsort(d, kind="stable")[:k]]
    labels[chosen] = label
    return remaining[labels[remaining] < 0]


def _mdav_labels(z: np.ndarray, k: int) -> np.ndarray:
    """The MDAV group labels of the (scaled) records ``z`` (see :func:`mdav_partition`)."""
    labels = np.full(z.shape[0], -1, dtype=np.int64)
    remaining = np.arange(z.shape[0])
    label = 0
    while remaining.size >= 3 * k:
        r = _farthest_from(z, remaining, z[remaining].mean(axis=0))
        remaining = _take_group(z, remaining, r, k, labels, label)
        s = _farthest_from(z, remaining, z[r])
        remaining = _take_group(z, remaining, s, k, labels, label + 1)
        label += 2
    if remaining.size >= 2 * k:
        seed_index = _farthest_from(z, remaining, z[remaining].mean(axis=0))
        remaining = _take_group(z, remaining, seed_index, k, labels, label)
        label += 1
    if remaining.size:
        labels[remaining] = label
    return labels


def group_means(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The mean of each group (row ``g`` for label ``g``), summed in units of a power
    of two per column so that no sum overflows."""
    scale = column_scale(values)
    n_groups = labels.max() + 1
    sums = np.zeros((n_groups, values.shape[1]))
    np.add.at(sums, labels, values / scale)
    counts = np.bincount(labels, minlength=n_groups)[:, None]
    return sums / counts * scale


def microaggregate(
    data,
    k: int | None = None,
    *,
    groups: Sequence[tuple[Sequence[str], int]] | None = None,
    method: str = "auto",
) -> pd.DataFrame:
    """MDAV microaggregation, each group of attributes on its own.

    Parameters
    ----------
    data : DataFrame or array-like of shape (n_records, n_attributes)
        Numeric attributes (array columns are named ``x0, x1, ...``).
    k : int, default=None
        Minimum group size when all attributes form one group.
    groups : list of (columns, k), default=None
        A partition of (some of) the attributes, each microaggregated on its own
        with its own k -- the recipe of the published files (e.g. M4-33:
        ``[(["AFNLWGT", "AGI"], 3), (["EMCONTRB", "FEDTAX"], 3)]``). Attributes
        in no group are left unchanged. Give either ``k`` or ``groups``.
    method : {"auto", "exact", "partitioned"}, default="auto"
        Exact MDAV up to :data:`EXACT_MDAV_RECORDS` records, partitioned MDAV above
        (see :func:`mdav_partition`).

    Returns
    -------
    DataFrame
        Same shape, index and columns as ``data``; every value in a group of
        attributes replaced by its MDAV group's mean, in original units.
    """
    frame = as_frame(data, name="input")
    plan = attribute_groups(frame.columns, "k", k, groups)
    result = frame.copy()
    for columns, group_k in plan:
        values, cols = validate_table(frame, columns=list(columns), name="input")
        labels = mdav_partition(values, group_k, method=method)
        result[cols] = group_means(values, labels)[labels]
    return result
