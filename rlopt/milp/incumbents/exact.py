"""A parameter that re-identifies its records at the exact margin.

A MILP's optimum, and a search's result, sit on the margin: the solver meets each row
``g_ij(theta) >= margin`` only up to its feasibility tolerance, so a record it counts
may be separated by ``margin - 1e-9``. The recount that checks a claim allows that
tolerance; the figure a run reports does not (the parameter it returns must
re-identify its count at the margin itself). :func:`reach_margin` moves such a
parameter to the centre of what the records need: the LP ``max s`` s.t. every
record's rows against its nearest competitors are ``>= s`` (over the family's
admissible set, its cuts included), whose optimum leaves every row ``s > margin``
whenever some parameter separates those records beyond the margin. Its result is
recounted like any other parameter; nothing here is trusted.
"""

from __future__ import annotations

import time

import numpy as np

from rlopt.families import LearnedFamily

__all__ = ["reach_margin", "COMPETITORS", "ROUNDS", "MAX_ROWS", "CHUNK_BYTES"]

COMPETITORS = 8
"""Each record's rows against this many of its nearest originals (under the parameter
being repaired) enter the first LP; a round adds the rows the LP's parameter violates."""

ROUNDS = 4
"""LPs at most: the first, then one per round of violated rows added."""

MAX_ROWS = 200_000
"""No repair of a set whose rows would exceed this (the LP is dense)."""

CHUNK_BYTES = 32 * 2**20
"""The features of this many bytes at most are built at once (a block of records)."""


class _Late(Exception):
    """The deadline passed while the rows were built."""


def reach_margin(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    theta: np.ndarray,
    records: np.ndarray,
    *,
    margin: float,
    feasibility_tol: float,
    candidates: np.ndarray | None = None,
    deadline: float | None = None,
) -> np.ndarray | None:
    """An admissible parameter that separates every record of ``records`` (bool) by at
    least ``margin`` with room to spare where one exists: the LP's max-min parameter
    over their rows (``None`` when HiGHS proves nothing by ``deadline``, a
    ``time.perf_counter()`` value, or the rows would be too many). Not a count: the
    caller recounts it."""
    from rlopt.milp.reductions.screening import FamilyLP  # the screening's LP over the family

    rows = np.flatnonzero(records)
    n_records = za.shape[0]
    if rows.size == 0 or rows.size * COMPETITORS > MAX_ROWS:
        return None
    allowed = np.ones((rows.size, n_records), dtype=bool)
    if candidates is not None:
        allowed = np.asarray(candidates, dtype=bool)[rows].copy()
    allowed[np.arange(rows.size), rows] = False
    lp = FamilyLP(family, za.shape[1], za, zb, margin, feasibility_tol, max_cut_rounds=20)
    best = None
    try:
        chosen = _nearest(za, zb, family, theta, rows, allowed, deadline)
        for _ in range(ROUNDS):
            coefs, constants = _rows(za, zb, family, rows, chosen, deadline)
            value, found, _ = lp.best(coefs, constants, deadline=deadline)
            if found is None or not np.isfinite(value):
                break
            best = found
            violated = _margins(za, zb, family, found, rows, deadline) < value - 10 * feasibility_tol
            violated &= allowed & ~chosen
            if not violated.any() or chosen.sum() + violated.sum() > MAX_ROWS:
                break
            chosen |= violated
    except _Late:
        pass
    return best


def _blocks(za, zb, family: LearnedFamily, rows: np.ndarray, deadline: float | None):
    """``(start, part, phi, offset)`` for blocks of ``rows`` (at most :data:`CHUNK_BYTES` of
    features each); :class:`_Late` once ``deadline`` has passed."""
    size = max(1, CHUNK_BYTES // max(1, zb.shape[0] * family.n_params(za.shape[1]) * 8))
    for start in range(0, rows.size, size):
        if deadline is not None and time.perf_counter() > deadline:
            raise _Late
        part = rows[start : start + size]
        phi, offset = family.features(za[part], zb)
        yield start, part, phi, offset


def _margins(za, zb, family: LearnedFamily, theta: np.ndarray, rows: np.ndarray, deadline) -> np.ndarray:
    """``g[r, j] = d(a_i, b_j) - d(a_i, b_i)`` for ``i = rows[r]`` and every ``j``."""
    theta = np.asarray(theta, dtype=float)
    out = np.empty((rows.size, zb.shape[0]))
    for start, part, phi, offset in _blocks(za, zb, family, rows, deadline):
        h = phi @ theta + offset
        out[start : start + part.size] = h - h[np.arange(part.size), part][:, None]
    return out


def _nearest(za, zb, family, theta, rows: np.ndarray, allowed: np.ndarray, deadline) -> np.ndarray:
    """Each record's :data:`COMPETITORS` closest competitors under ``theta`` among the allowed ones."""
    g = np.where(allowed, _margins(za, zb, family, theta, rows, deadline), np.inf)
    k = min(COMPETITORS, g.shape[1])
    nearest = np.argpartition(g, k - 1, axis=1)[:, :k]
    chosen = np.zeros_like(allowed)
    np.put_along_axis(chosen, nearest, True, axis=1)
    return chosen & allowed


def _rows(za, zb, family: LearnedFamily, rows: np.ndarray, chosen: np.ndarray, deadline):
    """``(coefs, constants)`` of the chosen pairs' margins, one row per pair."""
    coefs, constants = [], []
    for start, part, phi, offset in _blocks(za, zb, family, rows, deadline):
        own = np.arange(part.size), part
        mask = chosen[start : start + part.size]
        coefs.append((phi - phi[own][:, None, :])[mask])
        constants.append((offset - offset[own][:, None])[mask])
    return np.concatenate(coefs), np.concatenate(constants)
