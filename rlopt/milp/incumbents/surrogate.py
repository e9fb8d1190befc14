"""A smooth surrogate of the count, climbed by projected gradient ascent: a
verified incumbent for the MILP (a start and a lower end), never a bound.

Record ``i`` is re-identified when its separation ``s_i(theta) = min_{j != i}
g_ij(theta)`` reaches the margin, ``g_ij = d(a_i, b_j) - d(a_i, b_i)`` linear in
``theta``. The count ``sum_i [s_i >= margin]`` is a step function; its surrogate

    F(theta) = sum_i sigmoid((softmin_j g_ij(theta) - margin) / tau)

(softmin at the same temperature ``tau``) is smooth, and as ``tau`` shrinks it
approaches the count. Each step moves ``theta`` along the gradient and projects it
back onto the family's admissible polytope (bounds and linear rows; a small QP),
while ``tau`` is annealed. Only each record's nearest competitors enter the
softmin (re-chosen every few steps at the current parameter): far ones have
weight ``exp(-gap / tau)``, nothing.

Every few steps the exact count of the current parameter is taken with the
family's reference evaluator, and the best parameter seen is returned: the
surrogate only proposes, the count decides.
"""

from __future__ import annotations

import time

import numpy as np

from rlopt.data._standardise import categorical_columns
from rlopt.families import LearnedFamily
from rlopt.milp.margins import PairMargins, QuadraticMargins, quadratic_matrix
from rlopt.milp.solvers.lp import Projection
from rlopt.processes import one_native_thread

__all__ = ["surrogate_ascent", "competitors"]

NEIGHBOURS = 16
"""Competitors ``j`` per record in the softmin."""

REFRESH = 10
"""Steps between two exact counts (and re-chosen competitors)."""

STEPS = 200
"""Gradient steps of one ascent."""

STEP_SIZE = 0.1
"""The first step's length, relative to the norm of the neutral parameter (it
shrinks linearly over the steps). Measured on Census 1080x13, rank swap p=10:
0.03 / 0.1 / 0.3 reach 739 / 744 / 733 for wm and 779 / 779 / 777 for sb in 300 steps."""

COOLING = 100.0
"""The temperature falls by this factor over the steps."""


def _projection(family: LearnedFamily, n_attributes: int) -> Projection:
    """The projection onto the family's polytope (bounds and linear rows)."""
    rows = family.constraints(n_attributes)
    lower, upper = family.bounds(n_attributes)
    return Projection(rows.matrix(), np.array(rows.lo), np.array(rows.hi), lower, upper)


def competitors(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    theta: np.ndarray,
    count: int,
    *,
    deadline: float | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """``(separation, nearest)``: each record's separation at ``theta`` and its ``count``
    competitors ``j != i`` with the smallest ``g_ij`` (shape ``(N, count)``); ``None``
    once ``deadline`` (``time.perf_counter()``) has passed. The separations of a
    quadratic form on numeric files come from one matrix product per block (rounding
    aside, the reference's): they choose competitors and a parameter to recount, no count."""
    n_records = za.shape[0]
    count = min(count, n_records - 1)
    sep = np.empty(n_records)
    nearest = np.empty((n_records, count), dtype=int)
    distance = family.distance(theta, tuple(f"x{k}" for k in range(za.shape[1])))
    q = None if categorical_columns(za, zb).any() else quadratic_matrix(distance)
    with one_native_thread():
        quadratic = None if q is None else QuadraticMargins(zb, q)
    step = max(1, int(2**22 // max(1, n_records)))
    for start in range(0, n_records, step):
        if deadline is not None and time.perf_counter() > deadline:
            return None
        rows = np.arange(start, min(n_records, start + step))
        if quadratic is not None:
            with one_native_thread():
                g = quadratic.of(za[rows], rows)
        else:
            d = distance.pairwise(za[rows], zb)
            g = d - d[np.arange(rows.size), rows][:, None]
            g[np.arange(rows.size), rows] = np.inf
        part = np.argpartition(g, count - 1, axis=1)[:, :count]
        nearest[rows] = part
        sep[rows] = np.take_along_axis(g, part, axis=1).min(axis=1)
    return sep, nearest


def pair_slopes(
    za: np.ndarray, zb: np.ndarray, family: LearnedFamily, nearest: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(G, c)`` with ``g_ij(theta) = G[i, r] @ theta + c[i, r]`` for ``j = nearest[i, r]``."""
    n_records, count = nearest.shape
    size = family.n_params(za.shape[1])
    slopes, consts = np.empty((n_records, count, size)), np.empty((n_records, count))
    for i in range(n_records):
        phi, offset = family.features(za[i : i + 1], zb[np.append(nearest[i], i)])
        slopes[i] = phi[0, :count] - phi[0, count]
        consts[i] = offset[0, :count] - offset[0, count]
    return slopes, consts


def _softmin(g: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """``(value, weights)``: ``-tau log sum_j exp(-g_ij / tau)`` per row and its gradient in ``g``."""
    low = g.min(axis=1, keepdims=True)
    e = np.exp(-(g - low) / tau)
    total = e.sum(axis=1, keepdims=True)
    return low[:, 0] - tau * np.log(total[:, 0]), e / total


def _nearest(za, zb, family, theta, count, margins, deadline=None):
    """``(separation, G, c)``: every record's separation at ``theta`` and the margins of
    its ``count`` nearest competitors (see :meth:`PairMargins.pairs`); ``None`` once
    ``deadline`` has passed."""
    if margins is None:
        found = competitors(za, zb, family, theta, count, deadline=deadline)
        return None if found is None else (found[0], *pair_slopes(za, zb, family, found[1]))
    g = margins.at(theta)
    nearest = np.argpartition(g, min(count, g.shape[0] - 1) - 1, axis=1)[:, :count]
    return g.min(axis=1), *margins.pairs(np.arange(g.shape[0]), nearest)


# over 60 lines: one projected ascent loop, its step control and stopping rules kept together
def surrogate_ascent(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    theta: np.ndarray,
    *,
    margin: float,
    margins: PairMargins | None = None,
    deadline: float | None = None,
    steps: int = STEPS,
    neighbours: int = NEIGHBOURS,
    step_size: float = STEP_SIZE,
) -> tuple[np.ndarray, int]:
    """Projected gradient ascent on the smooth surrogate from ``theta`` (admissible
    for the family's bounds and rows) for at most ``steps`` steps or until
    ``deadline`` (``time.perf_counter()``). ``margins``: the pairs' margins when
    they are in memory (else they are computed from the family's features).

    Returns ``(best, count)``: the parameter with the most records whose exact
    separation reaches ``margin`` among those counted (``theta`` included) and that
    number -- a plan the caller recounts and checks for admissibility (cuts).
    """
    n_records, n_attributes = za.shape
    theta = np.asarray(theta, dtype=float).copy()
    if n_records < 2:
        return theta, 0
    project = _projection(family, n_attributes)
    nearest = _nearest(za, zb, family, theta, neighbours, margins, deadline)
    if nearest is None:
        return theta, 0  # the deadline passed: no step taken
    sep, slopes, consts = nearest
    best, best_count = theta.copy(), int((sep >= margin).sum())
    scale = float(np.linalg.norm(family.neutral(n_attributes)))  # the parameter's natural size
    # the temperature starts at the typical distance of a separation to the margin
    tau_start = max(float(np.median(np.abs(sep - margin))), 1e-12)
    for step in range(1, steps + 1):
        if deadline is not None and time.perf_counter() > deadline:
            break
        progress = step / steps
        tau = tau_start * COOLING**-progress
        g = np.einsum("irp,p->ir", slopes, theta) + consts
        soft, weights = _softmin(g, tau)
        z = np.clip((soft - margin) / tau, -50, 50)
        sig = 1 / (1 + np.exp(-z))
        grad = np.einsum("i,ir,irp->p", sig * (1 - sig), weights, slopes)
        norm = float(np.linalg.norm(grad))
        if not np.isfinite(norm) or norm == 0:
            break
        length = scale * (step_size * (1 - progress) + 1e-3 * step_size)
        moved = project(theta + length * grad / norm, deadline)
        if moved is None:
            break
        theta = moved
        if step % REFRESH == 0 or step == steps:
            nearest = _nearest(za, zb, family, theta, neighbours, margins, deadline)
            if nearest is None:
                break
            sep, slopes, consts = nearest
            count = int((sep >= margin).sum())
            if count > best_count:
                best, best_count = theta.copy(), count
    return best, best_count
