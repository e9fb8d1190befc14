"""CI_k: the Choquet integral of the squared differences w.r.t. a *k-additive* measure.

A lower end for ci. A k-additive measure is a fuzzy measure whose Möbius masses
vanish on every subset of more than ``k`` attributes, so ``ci_k`` is a subfamily of
``ci`` (the two coincide at ``k = n``): its optimum re-identifies no more records
than ci's, is a *lower end for ci* and is never reported as ci's worst case. It is
the family for files too wide for the full measure (``2^n - 2`` values): the
2-additive measure has ``n(n+1)/2`` Möbius masses.

In the Möbius representation ``m`` (``m(A)`` for ``1 <= |A| <= k``) the integral is

    d(x) = sum_A m(A) min_{i in A} x_i,     x = the squared differences (as ci),

linear in ``m``; ``mu(S) = sum_{A subset of S} m(A)`` is the measure, normalised by
``sum_A m(A) = 1`` and monotone exactly when, for every attribute ``i`` and every
``B`` not containing it,

    m({i}) + sum_{A subset of B, 1 <= |A| <= k - 1} m(A + i) >= 0.

These are ``n (2^(n-1) - 1)`` rows. For ``k = 2`` they read ``m_i + sum_{j in B}
m_ij >= 0``, and the most violated ``B`` is ``{j : m_ij < 0}``; instead of
enumerating the ``2^(n-1)`` sets ``B`` per attribute, or adding them as cutting
planes (which would switch off the warm start from the screening LPs and make the
records at risk inexact, see ``family.has_cuts``), ``k = 2`` uses an exact extended
formulation with one auxiliary value per pair, ``u_ij >= max(0, -m_ij)``:

    u_ij >= 0,   u_ij + m_ij >= 0,   m_i - sum_{j != i} u_ij >= 0.

Any feasible ``(m, u)`` gives ``m_i + sum_{j in B} m_ij >= m_i - sum_j u_ij >= 0``,
and a monotone ``m`` meets them with ``u_ij = max(0, -m_ij)``: the projection on
``m`` is the 2-additive monotone set, with ``n(n+1)/2 + 1`` rows and ``n(n-1)/2``
auxiliary columns (``theta = (m, u)``, ``n^2`` values; the distance ignores ``u``).
For ``k >= 3`` the rows are enumerated, within the size limit of the full measure
(:data:`rlopt.families.choquet.MAX_ROW_BYTES`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from itertools import combinations
from math import comb

import numpy as np

from rlopt.data._standardise import pairwise_deltas, squared_diffs
from rlopt.exceptions import InputError
from rlopt.families._base import Distance
from rlopt.families._learned import LearnedFamily
from rlopt.families._view import MAX_TABLE_ROWS, ParameterTable, ParameterView, bar, number
from rlopt.families.choquet import MAX_ROW_BYTES, ChoquetDistance, MatrixRows, measure_slack, size_text

__all__ = [
    "KAdditiveChoquet",
    "KAdditiveDistance",
    "LOWER_END",
    "MAX_MEASURE_ATTRIBUTES",
    "embed_mobius",
    "mobius_to_measure",
    "mobius_shapley",
    "measure_to_mobius",
    "subsets",
]

LOWER_END = (
    "a lower end for ci: k-additive measures are a subfamily of ci's, so this "
    "optimum re-identifies no more records than ci's and is never ci's worst case"
)
"""The sentence every ci_k result carries (its ``params['note']``)."""

_CHUNK_BYTES = 64 * 2**20
"""Working memory of one block of the reference evaluator."""

MAX_MEASURE_ATTRIBUTES = 20
"""Up to this width the reference evaluator is ci's, on the measure of the masses
(``2^n`` values); wider, it works on the ranks of each pair's differences."""


@functools.cache
def subsets(n_attributes: int, k: int) -> tuple[tuple[int, ...], ...]:
    """The subsets of ``range(n)`` of 1 to ``k`` attributes, by size, then in
    lexicographic order: the order of the Möbius masses in ``theta``."""
    return tuple(a for size in range(1, k + 1) for a in combinations(range(n_attributes), size))


def _mask(subset) -> int:
    return sum(1 << i for i in subset)


def mobius_to_measure(mobius: dict[tuple[int, ...], float] | np.ndarray, n_attributes: int) -> np.ndarray:
    """The measure ``mu`` (length ``2^n``, by bitmask) of Möbius masses given by
    subset (a dict) or by bitmask (an array of length ``2^n``): ``mu(S) = sum_{A
    subset of S} m(A)`` (the zeta transform, ``n 2^n`` additions)."""
    if isinstance(mobius, dict):
        mu = np.zeros(2**n_attributes)
        for subset, value in mobius.items():
            mu[_mask(subset)] += value
    else:
        mu = np.array(mobius, dtype=float)
    masks = np.arange(2**n_attributes)
    for i in range(n_attributes):
        has = (masks >> i & 1) == 1
        mu[has] += mu[masks[has] ^ 1 << i]
    return mu


def mobius_shapley(mobius: Mapping[tuple[int, ...], float] | np.ndarray, n_attributes: int) -> np.ndarray:
    """The Shapley value of each attribute for the measure of Möbius masses given by
    subset (a dict) or by bitmask (an array of length ``2^n``): each mass is shared
    equally among its attributes, ``phi_i = sum_{A containing i} m(A) / |A|`` (the
    Shapley value of :func:`~rlopt.families.choquet.measure_shapley` on the measure
    the masses give, in ``sum_A |A|`` additions instead of ``n 2^n``)."""
    if isinstance(mobius, Mapping):
        masses = list(mobius.items())
    else:
        masses = [
            (tuple(i for i in range(n_attributes) if mask >> i & 1), float(v))
            for mask, v in enumerate(mobius)
        ]
    phi = np.zeros(n_attributes)
    for subset, value in masses:
        if subset:
            phi[list(subset)] += value / len(subset)
    return phi


def measure_to_mobius(measure: np.ndarray, n_attributes: int) -> np.ndarray:
    """The Möbius masses (length ``2^n``, by bitmask) of a measure given by bitmask:
    ``m(A) = sum_{B subset of A} (-1)^{|A - B|} mu(B)``."""
    m = np.array(measure, dtype=float)
    masks = np.arange(2**n_attributes)
    for i in range(n_attributes):
        has = (masks >> i & 1) == 1
        m[has] -= m[masks[has] ^ 1 << i]
    return m


class KAdditiveDistance(Distance):
    """``d(x) = sum_A m(A) min_{i in A} x_i`` for the Möbius masses ``m`` of a
    k-additive measure (a lower end for ci).

    Reference evaluator, independent of :meth:`KAdditiveChoquet.features` (which
    takes minima subset by subset): up to :data:`MAX_MEASURE_ATTRIBUTES` it is ci's
    integral (:class:`~rlopt.families.choquet.ChoquetDistance`, its own sort) with
    the measure ``mu(S) = sum_{A in S} m(A)`` of the masses; wider, it sorts each
    pair's differences in decreasing order and gives each mass to the *position* of
    the last of its attributes in that order, ``d = sum_A m(A) x_(max rank(A))``.
    """

    def __init__(self, mobius: np.ndarray, columns: tuple[str, ...], k: int, family: str = "ci_k"):
        self.columns = tuple(columns)
        self.k = int(k)
        self.family = family
        self.subsets = subsets(len(self.columns), self.k)
        self.mobius = np.asarray(mobius, dtype=float)
        if self.mobius.shape != (len(self.subsets),):
            raise InputError(
                f"{family}: {self.mobius.size} Möbius masses for {len(self.columns)} "
                f"attributes and k={self.k}; expected {len(self.subsets)}"
            )
        self._choquet = None

    def combine(self, delta):
        if len(self.columns) <= MAX_MEASURE_ATTRIBUTES:
            if self._choquet is None:
                self._choquet = ChoquetDistance(self.measure(), self.columns, self.family)
            return self._choquet.combine(delta)
        return self.combine_by_ranks(delta)

    def monotone_slack(self):
        if len(self.columns) > MAX_MEASURE_ATTRIBUTES:
            return None  # no measure formed: every pair is evaluated
        return measure_slack(self.measure(), len(self.columns))

    def pairwise_by_ranks(self, za, zb):
        """The evaluator of files wider than :data:`MAX_MEASURE_ATTRIBUTES` (any width), pairwise."""
        return self.combine_by_ranks(pairwise_deltas(za, zb))

    def combine_by_ranks(self, delta):
        """:meth:`combine` by the masses' ranks (any width), block by block of rows."""
        n_attributes = len(self.columns)
        groups = []  # per subset size: the subsets' attributes and their masses
        for size in range(1, self.k + 1):
            chosen = [p for p, a in enumerate(self.subsets) if len(a) == size]
            if chosen:
                groups.append((np.array([self.subsets[p] for p in chosen]), self.mobius[chosen]))
        widest = max(members.size for members, _ in groups)
        per_row = delta.shape[1] * (widest * 2 + max(m.size for _, m in groups) * 16 + n_attributes * 32)
        step = max(1, int(_CHUNK_BYTES // max(1, per_row)))
        out = np.empty(delta.shape[:2])
        for start in range(0, delta.shape[0], step):
            block = delta[start : start + step]
            diff = block * block
            order = np.argsort(-diff, axis=2, kind="stable")  # decreasing
            ranks = np.empty(order.shape, dtype=np.int16)
            np.put_along_axis(ranks, order, np.arange(n_attributes, dtype=np.int16), axis=2)
            top = np.take_along_axis(diff, order, axis=2).ravel()
            first = np.arange(diff.shape[0] * diff.shape[1]).reshape(diff.shape[:2])[..., None] * n_attributes
            total = np.zeros(diff.shape[:2])
            for members, masses in groups:
                # the position, in decreasing order, of the last attribute of each subset
                last = ranks[..., members].max(axis=3)
                total += top[first + last] @ masses
            out[start : start + step] = total
        return out

    def measure(self) -> np.ndarray:
        """The fuzzy measure (length ``2^n``, by bitmask) of these masses."""
        return mobius_to_measure(dict(zip(self.subsets, self.mobius)), len(self.columns))

    def params(self) -> dict:
        return {
            "family": self.family,
            "k": self.k,
            "columns": list(self.columns),
            "mobius": [
                {"subset": [self.columns[i] for i in subset], "value": float(v)}
                for subset, v in zip(self.subsets, self.mobius)
            ],
            "note": LOWER_END,
        }


class KAdditiveChoquet(LearnedFamily):
    """CI_k: Choquet integral with a monotone k-additive measure (option ``k``,
    default 2), ``mu(V) = 1``, in the Möbius representation: **a lower end for ci**,
    never ci's worst case (see the module docstring for its rows).

    ``theta``: the Möbius masses of the subsets of 1 to ``k`` attributes
    (:func:`subsets`), then for ``k = 2`` the ``n(n-1)/2`` auxiliary values ``u_ij``
    of the extended monotonicity rows.
    """

    name = "ci_k"
    title = "k-additive Choquet integral (a lower end for ci)"
    shares_meaning = "the attribute's Shapley value in the fuzzy measure (they sum to mu(all) = 1)"
    option_names = ("k",)
    min_attributes = 2  # with one attribute the measure is fixed: the distance is AM

    @staticmethod
    def _masses(params: Mapping, columns: Sequence[str]) -> tuple[list[str], dict[tuple[int, ...], float]]:
        """The attribute names and the Möbius masses of ``params["mobius"]`` by subset of positions."""
        names = [str(c) for c in params.get("columns", columns)]
        position = {c: i for i, c in enumerate(names)}
        masses = {
            tuple(sorted(position[c] for c in entry["subset"])): float(entry["value"])
            for entry in params["mobius"]
        }
        return names, masses

    @classmethod
    def shapley_values(cls, params: Mapping, columns: Sequence[str]) -> dict[str, float]:
        """The Shapley value of each attribute (:func:`mobius_shapley`) of the masses
        ``params["mobius"]`` (``[{subset, value}]``, subsets by attribute name)."""
        names, masses = cls._masses(params, columns)
        return dict(zip(names, mobius_shapley(masses, len(names)).tolist()))

    @classmethod
    def report_view(
        cls, params: Mapping, columns: Sequence[str], *, name: str | None = None
    ) -> ParameterView:
        """The Shapley values (a bar chart) and the Möbius masses of the largest size,
        each with the measure of its subset (a table)."""
        name = name or cls.name
        names, masses = cls._masses(params, columns)
        shapley = cls.shapley_values(params, columns)
        ordered = sorted(masses, key=lambda a: -abs(masses[a]))
        shown = ordered[:MAX_TABLE_ROWS]
        # every subset of a subset A with a mass has a mass too (|B| <= |A| <= k): mu(A) is exact
        rows = tuple(
            (
                ", ".join(names[i] for i in subset),
                number(masses[subset]),
                number(sum(v for b, v in masses.items() if set(b) <= set(subset))),
            )
            for subset in shown
        )
        lower = str(params.get("note", LOWER_END))
        k = params.get("k") or max((len(a) for a in masses), default=1)
        return ParameterView(
            label=f"{name}: {k}-additive measure (Möbius masses)",
            note=f"{lower[0].upper()}{lower[1:]}. Shapley value of each attribute (the Möbius "
            "masses of the subsets holding it, each shared equally among its attributes); "
            f"below, the Möbius masses m(A), largest in absolute value first ({len(shown)} of "
            f"{len(ordered)}), each with the measure mu(A), the sum of m(B) over the subsets B of A.",
            table=ParameterTable(("subset", "Möbius mass", "measure"), rows),
            chart=bar(
                list(shapley), list(shapley.values()), title=f"{name} Shapley values", ylabel="Shapley value"
            ),
        )

    def __init__(self, **options):
        super().__init__(**options)
        k = options.get("k", 2)
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InputError(
                f"ci_k k={k!r}; expected an integer >= 1 (the largest subset "
                "with a Möbius mass; 2: pairs of attributes)"
            )
        self.k = int(k)
        self._rows: dict[int, MatrixRows] = {}

    # ---- sizes ------------------------------------------------------------------------

    @property
    def extended(self) -> bool:
        """Whether the monotonicity rows are the extended ones (``k = 2``)."""
        return self.k == 2

    def n_mobius(self, n_attributes: int) -> int:
        """How many Möbius masses: ``sum_{s <= k} C(n, s)`` (``n(n+1)/2`` for ``k = 2``)."""
        return sum(comb(n_attributes, s) for s in range(1, self.k + 1))

    def n_family_rows(self, n_attributes: int) -> int:
        if self.k == 1:
            return 1
        if self.extended:
            return 1 + comb(n_attributes, 2) + n_attributes
        return 1 + n_attributes * (2 ** (n_attributes - 1) - 1)

    def row_bytes(self, n_attributes: int) -> int:
        """The rows as one dense float64 matrix with a column more (a screening LP)."""
        return self.n_family_rows(n_attributes) * (self.n_params(n_attributes) + 1) * 8

    def check_attributes(self, n_attributes):
        super().check_attributes(n_attributes)
        if self.k > n_attributes:
            raise InputError(
                f"ci_k k={self.k} for {n_attributes} attributes; expected 1 <= k <= {n_attributes} "
                "(k = n is the full measure, family ci)"
            )
        if not self.extended and self.row_bytes(n_attributes) > MAX_ROW_BYTES:
            raise InputError(
                f"family 'ci_k' with k={self.k} on {n_attributes} attributes has "
                f"{self.n_family_rows(n_attributes):,} "
                f"monotonicity rows over {self.n_mobius(n_attributes):,} Möbius masses, a "
                f"{size_text(self.row_bytes(n_attributes))} dense matrix in each screening LP (the limit is "
                f"{MAX_ROW_BYTES / 2**30:g} GiB): use k=2 (n(n+1)/2 masses, "
                f"{comb(n_attributes, 2) + n_attributes + 1} rows) "
                "or fewer attributes with --columns (Python: columns=[...])"
            )

    def n_params(self, n_attributes):
        return self.n_mobius(n_attributes) + (comb(n_attributes, 2) if self.extended else 0)

    def bounds(self, n_attributes):
        # valid for every measure with values in [0, 1]: |m(A)| <= 2^(|A|-1); m({i}) in [0, 1];
        # a feasible u_ij is at most m_i <= 1
        sizes = np.array([len(a) for a in subsets(n_attributes, self.k)])
        width = np.where(sizes == 1, 1.0, 2.0 ** (sizes - 1))
        lo, hi = np.where(sizes == 1, 0.0, -width), width
        if self.extended:
            lo = np.concatenate([lo, np.zeros(comb(n_attributes, 2))])
            hi = np.concatenate([hi, np.ones(comb(n_attributes, 2))])
        return lo, hi

    def constraints(self, n_attributes):
        if n_attributes not in self._rows:
            self._rows[n_attributes] = self._build_rows(n_attributes)
        rows = self._rows[n_attributes]
        return MatrixRows(rows.matrix(), rows.lo, rows.hi, rows.names, rows._nonzeros)

    def _build_rows(self, n_attributes) -> MatrixRows:
        size = self.n_params(n_attributes)
        mobius = self.n_mobius(n_attributes)
        # sum m = 1, then the monotonicity rows; the non-zeros as (rows, columns)
        parts_rows, parts_cols = [np.zeros(mobius, dtype=np.int64)], [np.arange(mobius)]
        lo, hi, names = [1.0], [1.0], ["sum m = 1"]
        count = 1
        if self.extended:
            pairs = list(combinations(range(n_attributes), 2))
            u0 = n_attributes + len(pairs)  # the first u
            # u_ij + m_ij >= 0
            r = count + np.arange(len(pairs))
            parts_rows += [r, r]
            parts_cols += [n_attributes + np.arange(len(pairs)), u0 + np.arange(len(pairs))]
            names += [f"u{{{i},{j}}} >= -m{{{i},{j}}}" for i, j in pairs]
            count += len(pairs)
            # m_i - sum_{j != i} u_ij >= 0
            for i in range(n_attributes):
                mine = [u0 + p for p, pair in enumerate(pairs) if i in pair]
                parts_rows.append(np.full(len(mine) + 1, count))
                parts_cols.append(np.array([i] + mine))
                names.append(f"m{{{i}}} >= sum of u{{{i},.}}")
                count += 1
            lo += [0.0] * (len(pairs) + n_attributes)
            hi += [np.inf] * (len(pairs) + n_attributes)
        elif self.k > 1:
            masks = np.array([_mask(a) for a in subsets(n_attributes, self.k)], dtype=np.int64)
            for i in range(n_attributes):
                bit = 1 << i
                params = np.flatnonzero(masks & bit)
                rest = masks[params] ^ bit  # A for the mass m(A + i)
                others = np.array([1 << j for j in range(n_attributes) if j != i], dtype=np.int64)
                # every B not containing i, B not empty (B empty is the bound m({i}) >= 0)
                b = (
                    np.arange(1, 2 ** (n_attributes - 1))[:, None] >> np.arange(n_attributes - 1) & 1
                ) @ others
                inside = (rest[None, :] & ~b[:, None]) == 0  # A subset of B
                r, p = np.nonzero(inside)
                parts_rows.append(count + r)
                parts_cols.append(params[p])
                names += [f"monotone {i} over {int(v)}" for v in b]
                count += b.size
                lo += [0.0] * b.size
                hi += [np.inf] * b.size
        rows = np.concatenate(parts_rows)
        cols = np.concatenate(parts_cols)
        matrix = np.zeros((count, size), dtype=np.int8)
        sign = np.ones(rows.size, dtype=np.int8)
        if self.extended:  # the u in "m_i - sum u_ij" rows enter with -1
            first_i_row = 1 + comb(n_attributes, 2)
            sign[(rows >= first_i_row) & (cols >= n_attributes + comb(n_attributes, 2))] = -1
        matrix[rows, cols] = sign
        matrix.flags.writeable = False
        return MatrixRows(matrix, lo, hi, names, (rows, cols))

    # ---- the distance -------------------------------------------------------------------

    def features(self, za, zb):
        diff = squared_diffs(za, zb)
        n_attributes = diff.shape[2]
        phi = np.zeros(diff.shape[:2] + (self.n_params(n_attributes),))
        index = {}
        for p, subset in enumerate(subsets(n_attributes, self.k)):
            if len(subset) == 1:
                phi[..., p] = diff[..., subset[0]]
            else:  # min over A = min(min over A minus its last attribute, that attribute)
                phi[..., p] = np.minimum(phi[..., index[subset[:-1]]], diff[..., subset[-1]])
            index[subset] = p
        return phi, np.zeros(diff.shape[:2])

    def max_excess(self, own, other):
        # a k-additive measure is a fuzzy measure: CI's bound holds (monotone and
        # translation-equivariant when mu(V) = 1)
        return (own * own - other * other).max(axis=2)

    def neutral(self, n_attributes):
        theta = np.zeros(self.n_params(n_attributes))
        theta[:n_attributes] = 1.0 / n_attributes
        return theta

    def mobius(self, theta: np.ndarray, n_attributes: int) -> np.ndarray:
        """The Möbius masses of ``theta`` (without the auxiliary ``u``)."""
        return np.asarray(theta, dtype=float)[: self.n_mobius(n_attributes)]

    def theta_from_mobius(self, mobius: np.ndarray, n_attributes: int) -> np.ndarray:
        """``theta`` of the masses (in :func:`subsets` order), with ``u_ij = max(0, -m_ij)``."""
        mobius = np.asarray(mobius, dtype=float)
        if not self.extended:
            return mobius.copy()
        return np.concatenate(
            [mobius, np.maximum(0.0, -mobius[n_attributes : n_attributes + comb(n_attributes, 2)])]
        )

    def distance(self, theta, columns):
        return KAdditiveDistance(self.mobius(theta, len(columns)), columns, self.k, self.name)

    def theta_from_params(self, params, columns):
        n_attributes = len(columns)
        if int(params.get("k", self.k)) > self.k:
            raise InputError(f"ci_k parameters with k={params['k']}; this family has k={self.k}")
        index = {a: p for p, a in enumerate(subsets(n_attributes, self.k))}
        position = {c: i for i, c in enumerate(columns)}
        mobius = np.zeros(len(index))
        for entry in params["mobius"]:
            mobius[index[tuple(sorted(position[c] for c in entry["subset"]))]] = entry["value"]
        return self.theta_from_mobius(mobius, n_attributes)


def embed_mobius(
    mobius: np.ndarray, n_attributes: int, family: KAdditiveChoquet, *, tol: float = 1e-12
) -> np.ndarray | None:
    """``theta`` of ``family`` for Möbius masses given by bitmask (length ``2^n``), or
    ``None`` when a subset of more than ``family.k`` attributes has a mass above ``tol``."""
    sizes = np.array([int(m).bit_count() for m in range(2**n_attributes)])
    if np.abs(mobius[sizes > family.k]).max(initial=0.0) > tol:
        return None
    masses = np.array([mobius[_mask(a)] for a in subsets(n_attributes, family.k)])
    return family.theta_from_mobius(masses, n_attributes)
