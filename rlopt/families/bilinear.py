"""SB, SB_NC, SB_PD: symmetric bilinear forms ``(za - zb)^T Q (za - zb)``.

Parameters: the upper triangle of ``Q`` (``k <= l``, row by row), with
``trace(Q) = 1`` and ``|Q_kl| <= 1`` (``docs/method.md``, section 5).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from rlopt.data._standardise import DEFAULT_CHUNK_BYTES, chunk_rows, pairwise_deltas
from rlopt.families._base import Distance
from rlopt.families._learned import LearnedFamily, LinearRows
from rlopt.families._view import ParameterTable, ParameterView, heatmap, number

__all__ = [
    "Bilinear",
    "BilinearDistance",
    "NonNegativeBilinear",
    "PositiveDefiniteBilinear",
    "psd_factor",
    "quadratic_form",
]

SEPARATION_TOL = 1e-9
"""A cutting plane is added when ``theta`` violates it by more than this."""


def _upper(n_attributes: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n_attributes)


def _pair_weights(n_attributes: int) -> np.ndarray:
    k, l = _upper(n_attributes)
    return np.where(k == l, 1.0, 2.0)


def _quadratic_features(delta: np.ndarray) -> np.ndarray:
    """``phi`` with ``delta^T Q delta = phi @ theta`` (last axis of ``delta`` = attributes)."""
    n_attributes = delta.shape[-1]
    k, l = _upper(n_attributes)
    return delta[..., k] * delta[..., l] * _pair_weights(n_attributes)


def quadratic_form(delta: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``delta^T matrix delta`` over the last axis of ``delta`` (rows, cols, n)."""
    return np.einsum("ijk,kl,ijl->ij", delta, matrix, delta, optimize=True)


PSD_RTOL = 1e-12
"""A symmetric matrix whose smallest eigenvalue is above ``-PSD_RTOL`` times its
largest is read as positive semi-definite (the rest is rounding)."""


def psd_factor(matrix: np.ndarray) -> np.ndarray | None:
    """``M`` with ``matrix = M M^T`` (only the positive eigen-directions kept) when
    ``matrix`` is positive semi-definite, else None."""
    eigenvalues, vectors = np.linalg.eigh(matrix)
    top = max(float(eigenvalues.max()), 0.0)
    if top == 0.0 or eigenvalues.min() < -PSD_RTOL * top:
        return None
    keep = eigenvalues > PSD_RTOL * top
    return vectors[:, keep] * np.sqrt(eigenvalues[keep])


class BilinearDistance(Distance):
    """``d(a, b) = (za - zb)^T Q (za - zb)`` with the full symmetric ``Q``."""

    def __init__(self, matrix: np.ndarray, columns: tuple[str, ...], family: str = "sb"):
        self.matrix = np.asarray(matrix, dtype=float)
        self.columns = tuple(columns)
        self.family = family

    def combine(self, delta):
        return quadratic_form(delta, self.matrix)

    def linear_map(self, n_attributes):
        return psd_factor(self.matrix)

    def params(self) -> dict:
        return {"family": self.family, "columns": list(self.columns), "Q": self.matrix.tolist()}


class Bilinear(LearnedFamily):
    """SB: a symmetric matrix with ``trace(Q) = 1`` and ``|Q_kl| <= 1``."""

    name = "sb"
    title = "symmetric bilinear form"

    @classmethod
    def report_view(
        cls, params: Mapping, columns: Sequence[str], *, name: str | None = None
    ) -> ParameterView:
        """The matrix ``Q``: a heatmap, or a table for 1 or 2 attributes."""
        name = name or cls.name
        q, names = [[float(v) for v in row] for row in params["Q"]], [str(c) for c in params["columns"]]
        view = ParameterView(
            label=f"{name}: matrix Q",
            note="d(a, b) = (a - b)' Q (a - b) on standardised records; "
            "the diagonal weights each attribute, off-diagonal "
            "entries couple attributes.",
        )
        if len(names) > 2:
            return replace(view, chart=heatmap(q, names, title=f"{name}: Q"))
        return replace(
            view,
            table=ParameterTable(
                ("", *names), tuple((n, *(number(v) for v in row)) for n, row in zip(names, q))
            ),
        )

    shares_meaning = (
        "the attribute's diagonal entry of Q divided by the trace (1 in these families), so "
        "that they sum to 1; an entry can be negative, and the off-diagonal couplings are not shown"
    )

    @classmethod
    def attribute_shares(cls, params: Mapping, columns: Sequence[str]) -> dict[str, float] | None:
        """The diagonal of ``Q`` over its trace (``None`` for a trace that is not > 0)."""
        diagonal = np.diagonal(np.asarray(params["Q"], dtype=float))
        trace = float(diagonal.sum())
        if not trace > 0:
            return None
        return {str(c): float(v) / trace for c, v in zip(params["columns"], diagonal)}

    def n_params(self, n_attributes):
        return n_attributes * (n_attributes + 1) // 2

    def bounds(self, n_attributes):
        return -np.ones(self.n_params(n_attributes)), np.ones(self.n_params(n_attributes))

    def constraints(self, n_attributes):
        rows = LinearRows(self.n_params(n_attributes))
        k, l = _upper(n_attributes)
        rows.add({int(t): 1.0 for t in np.flatnonzero(k == l)}, 1.0, 1.0, name="trace Q = 1")
        return rows

    def features(self, za, zb):
        phi = _quadratic_features(pairwise_deltas(za, zb))
        return phi, np.zeros(phi.shape[:2])

    def max_excess(self, own, other):
        """The exact maximum of ``d(a_i,b_i) - d(a_i,b_j) = <M, Q>``, ``M = dx dx^T - dy dy^T``,
        over the box ``|Q_kl| <= 1`` with ``trace(Q) = 1``.

        Off the diagonal each ``Q_kl = sign(M_kl)``. On it, ``Q_kk`` in ``[-1, 1]``
        summing to 1: with ``n + 1 = 2q + r``, the ``q`` largest ``M_kk`` get +1,
        then (if ``r = 1``) one gets 0, the rest -1.
        """
        n_attributes = own.shape[-1]
        own = np.broadcast_to(own, other.shape)
        m = own[..., :, None] * own[..., None, :] - other[..., :, None] * other[..., None, :]
        off = np.abs(m).sum(axis=(-2, -1)) - np.abs(np.diagonal(m, axis1=-2, axis2=-1)).sum(axis=-1)
        diag = -np.sort(-np.diagonal(m, axis1=-2, axis2=-1), axis=-1)
        q, r = divmod(n_attributes + 1, 2)
        return off + diag[..., :q].sum(axis=-1) - diag[..., q + r :].sum(axis=-1)

    def neutral(self, n_attributes):
        return (np.eye(n_attributes) / n_attributes)[_upper(n_attributes)]

    def matrix(self, theta, n_attributes):
        k, l = _upper(n_attributes)
        q = np.zeros((n_attributes, n_attributes))
        q[k, l] = theta
        q[l, k] = theta
        return q

    def distance(self, theta, columns):
        return BilinearDistance(self.matrix(np.asarray(theta, dtype=float), len(columns)), columns, self.name)

    def theta_from_params(self, params, columns):
        order = [params["columns"].index(c) for c in columns]
        q = np.asarray(params["Q"], dtype=float)[np.ix_(order, order)]
        return q[_upper(len(columns))]


class NonNegativeBilinear(Bilinear):
    """SB_NC: SB with ``d(a_i, b_j) >= 0`` for all ``N^2`` pairs (``i = j`` included).

    The pair rows are generated as cutting planes: after each solve every pair is
    checked (in chunks) and the most violated ones (option ``cuts_per_round``,
    default 200) are added, until none is violated.
    """

    name = "sb_nc"
    title = "bilinear form that is never negative"
    option_names = ("cuts_per_round",)

    def separate(self, theta, za, zb):
        q = self.matrix(theta, za.shape[1])
        if psd_factor(q) is not None:  # positive semi-definite: non-negative on every pair, no scan
            return []
        found: list[tuple[float, np.ndarray]] = []
        step = chunk_rows(zb.shape[0], zb.shape[1], max_bytes=DEFAULT_CHUNK_BYTES)
        for start in range(0, za.shape[0], step):
            delta = pairwise_deltas(za[start : start + step], zb)
            values = quadratic_form(delta, q)
            for r, j in zip(*np.nonzero(values < -SEPARATION_TOL)):
                found.append((values[r, j], _quadratic_features(delta[r, j])))
        found.sort(key=lambda item: item[0])
        limit = int(self.options.get("cuts_per_round") or 200)
        return [(coef, 0.0) for _, coef in found[:limit]]

    def repair(self, theta):
        """The positive semi-definite part of ``Q`` (eigenvalues clipped at 0) over its
        trace: non-negative on every pair, and ``|Q_kl| <= sqrt(Q_kk Q_ll) <= 1``;
        ``None`` when ``Q`` has no positive eigenvalue."""
        n_attributes = int(round((np.sqrt(8 * len(theta) + 1) - 1) / 2))
        values, vectors = np.linalg.eigh(self.matrix(theta, n_attributes))
        if not values.max() > 0:
            return None
        q = vectors @ np.diag(np.maximum(values, 0.0)) @ vectors.T
        return (q / np.trace(q))[_upper(n_attributes)]


class PositiveDefiniteBilinear(Bilinear):
    """SB_PD: SB with ``Q >= delta I`` (a Mahalanobis-type metric).

    Cutting planes ``v^T Q v >= delta`` for the unit eigenvectors ``v`` of every
    eigenvalue below ``delta``; ``delta`` defaults to ``1e-3 / n`` and must be at
    most ``1 / n`` (``trace(Q) = 1``).
    """

    name = "sb_pd"
    title = "positive-definite bilinear form (a metric)"
    option_names = ("delta",)

    def separate(self, theta, za, zb):
        n_attributes = za.shape[1]
        delta = self.delta(n_attributes)
        values, vectors = np.linalg.eigh(self.matrix(theta, n_attributes))
        return [
            (_quadratic_features(vectors[:, t]), delta)
            for t in np.flatnonzero(values < delta - SEPARATION_TOL)
        ]

    def repair(self, theta):
        """Clip the eigenvalues at ``delta``, rescale to trace 1, and mix with ``I / n``
        until the smallest eigenvalue is ``delta`` (entries stay within [-1, 1])."""
        n_attributes = int(round((np.sqrt(8 * len(theta) + 1) - 1) / 2))
        delta = self.delta(n_attributes)
        values, vectors = np.linalg.eigh(self.matrix(theta, n_attributes))
        q = vectors @ np.diag(np.maximum(values, delta)) @ vectors.T
        q /= np.trace(q)
        low = np.linalg.eigvalsh(q)[0]
        if low < delta:
            t = (delta - low) / (1 / n_attributes - low)
            q = (1 - t) * q + t * np.eye(n_attributes) / n_attributes
        return q[_upper(n_attributes)]
