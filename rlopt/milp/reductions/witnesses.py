"""Witness evaluation shared by the reductions: a record's separation under a parameter
(:func:`separation`), and many parameters' hits on every record at once
(:func:`witness_hits`: one matrix product per block for wm and sb, the reference
evaluator deciding every record near the threshold).
"""

from __future__ import annotations

import time

import numpy as np

from rlopt.data._standardise import categorical_columns
from rlopt.families import Distance, LearnedFamily
from rlopt.milp.margins import QuadraticMargins, quadratic_matrix
from rlopt.processes import one_native_thread

__all__ = [
    "SCREEN_TOL",
    "slack_blocks",
    "separation",
    "witness_hits",
    "past",
    "spread",
    "attribute_names",
    "RECORD_BLOCK",
    "WITNESS_BATCH",
]

SCREEN_TOL = 1e-7
"""A record is fixed only when its best separation is below ``margin - SCREEN_TOL``
(far beyond the LP's 1e-9 tolerances), so a rounding error can never fix a record
that some parameter re-identifies."""

RECORD_BLOCK = 256


def slack_blocks(za: np.ndarray, zb: np.ndarray, distance: Distance, records: np.ndarray):
    """``(block, slack)`` with ``slack[r, j] = d(a_i, b_j) - d(a_i, b_i)`` for the
    records ``i = block[r]``, ``slack[r, i] = inf``; a block of records at a time."""
    for start in range(0, records.size, RECORD_BLOCK):
        block = records[start : start + RECORD_BLOCK]
        d = distance.pairwise(za[block], zb)
        rows = np.arange(block.size)
        slack = d - d[rows, block][:, None]
        slack[rows, block] = np.inf
        yield block, slack


def separation(
    za: np.ndarray, zb: np.ndarray, distance: Distance, records: np.ndarray | None = None
) -> np.ndarray:
    """``min_{j != i} d(a_i, b_j) - d(a_i, b_i)`` for each record ``i`` of
    ``records`` (default: all), in that order."""
    records = np.arange(za.shape[0]) if records is None else np.asarray(records)
    out = np.empty(records.size)
    done = 0
    for block, slack in slack_blocks(za, zb, distance, records):
        out[done : done + block.size] = slack.min(axis=1)
        done += block.size
    return out


_FEATURE_PARAMS = 32
""":func:`witness_hits` goes through ``family.features`` for families with at most this
many parameters and no quadratic form; above it, the reference evaluator per parameter."""

WITNESS_BATCH = 64
_GUARD = 1e-11
"""Relative width of the band around the threshold in which :func:`witness_hits`
rechecks a fast separation with the reference evaluator (rounding is ~1e-16 relative)."""


def _quadratic_separations(za, zb, q, records):
    """``separation`` for the distance ``(a - b)^T Q (a - b)`` through one matrix
    product per block (:class:`~rlopt.milp.margins.QuadraticMargins`), with a bound of
    its rounding error (and of the reference's) per record."""
    margins = QuadraticMargins(zb, q)
    norm_b = np.abs(zb).sum(axis=1).max()
    qmax = np.abs(q).max()
    sep, guard = np.empty(records.size), np.empty(records.size)
    for start in range(0, records.size, RECORD_BLOCK):
        block = records[start : start + RECORD_BLOCK]
        a = za[block]
        sep[start : start + block.size] = margins.of(a, block).min(axis=1)
        scale = qmax * (np.abs(a).sum(axis=1) + norm_b) ** 2
        guard[start : start + block.size] = _GUARD * (za.shape[1] + 2) * (1.0 + scale)
    return sep, guard


def _feature_separations(za, zb, family, thetas, records):
    """``separation`` for several parameters at once through ``family.features``
    (``phi @ theta + offset``), with a bound of the rounding error per record;
    shapes ``(len(thetas), records.size)``."""
    thetas = np.asarray(thetas, dtype=float).reshape(len(thetas), -1)
    p = thetas.shape[1]
    sep, guard = np.empty((len(thetas), records.size)), np.empty((len(thetas), records.size))
    l1 = np.abs(thetas).sum(axis=1)
    step = max(1, int(16 * 2**20 // (8 * zb.shape[0] * max(p, len(thetas)))))
    for start in range(0, records.size, step):
        block = records[start : start + step]
        phi, offset = family.features(za[block], zb)
        d = phi @ thetas.T + offset[..., None]  # (block, N, thetas)
        rows = np.arange(block.size)
        slack = d - d[rows, block][:, None, :]
        slack[rows, block] = np.inf
        sep[:, start : start + block.size] = slack.min(axis=1).T
        scale = np.abs(phi).max(axis=(1, 2))[None, :] * l1[:, None] + np.abs(offset).max(axis=1)[None, :]
        guard[:, start : start + block.size] = _GUARD * (p + 2) * (1.0 + scale)
    return sep, guard


def witness_hits(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    thetas: list,
    *,
    records: np.ndarray,
    threshold: float,
):
    """For each parameter of ``thetas`` in turn (a generator, so a caller may stop at a
    deadline): ``separation(za, zb, family.distance(theta), records) >= threshold``,
    the same booleans bit for bit.

    The separations are computed fast (one matrix product per block for wm and sb,
    ``features`` once for many parameters for the other small families); a record
    whose fast separation lies within a bound of the rounding error of the threshold
    is rechecked with the reference evaluator on the very block of records that
    :func:`separation` would evaluate it in."""
    names = attribute_names(za.shape[1])
    records = np.asarray(records)
    batch: list[tuple[np.ndarray, np.ndarray]] = []
    # the matrix-product expansion needs numbers in every column; a mixed file's 0/1
    # mismatches are not a linear function of the records
    quadratic = not categorical_columns(za, zb).any()
    for w, theta in enumerate(thetas):
        distance = family.distance(theta, names)
        q = quadratic_matrix(distance) if quadratic else None
        if q is not None:
            with one_native_thread():
                sep, guard = _quadratic_separations(za, zb, q, records)
        elif family.n_params(za.shape[1]) <= _FEATURE_PARAMS:
            if not batch:
                with one_native_thread():
                    seps, guards = _feature_separations(
                        za, zb, family, thetas[w : w + WITNESS_BATCH], records
                    )
                batch = list(zip(seps, guards))
            sep, guard = batch.pop(0)
        else:
            yield separation(za, zb, distance, records=records) >= threshold
            continue
        hit = sep >= threshold
        unsure = np.flatnonzero(~(np.abs(sep - threshold) > guard))  # NaN is unsure too
        for start in np.unique(unsure // RECORD_BLOCK) * RECORD_BLOCK:
            block = records[start : start + RECORD_BLOCK]
            hit[start : start + block.size] = separation(za, zb, distance, records=block) >= threshold
        yield hit


def attribute_names(n_attributes: int) -> tuple[str, ...]:
    return tuple(f"x{k}" for k in range(n_attributes))


def past(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() > deadline


def spread(items: list, count: int) -> list:
    """The first item and ``count - 1`` others spread evenly over the list."""
    if len(items) <= count:
        return list(items)
    picks = np.linspace(0, len(items) - 1, count).round().astype(int)
    return [items[0]] + [items[i] for i in picks if i]
