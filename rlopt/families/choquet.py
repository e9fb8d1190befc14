"""CI, CI_m, CI_super: the Choquet integral of the squared differences w.r.t. a fuzzy measure.

The measure ``mu`` is stored by subset bitmask (attribute ``k`` is bit ``1 << k``):
``mu(empty) = 0`` and ``mu(V) = 1`` are fixed, the ``2^n - 2`` other subsets are
the parameters, ``theta[mask - 1] = mu(mask)``.

How wide a file the full measure takes is set by size, not by a fixed count of
attributes: the admissible set has ``n 2^(n-1) - 2n`` monotonicity rows over
``2^n - 2`` parameters (plus ``C(n,2) 2^(n-2)`` modularity rows for ``ci_m`` and
``ci_super``), and the screening LPs copy them as one dense float64 matrix. A
family whose matrix would exceed :data:`MAX_ROW_BYTES` is refused before any work
(:meth:`Choquet.check_attributes`), naming the size and the way out: fewer
columns, or the k-additive subfamily ``ci_k`` (:mod:`rlopt.families.kadditive`),
whose optimum is a lower end for ci.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import comb, factorial

import numpy as np

from rlopt.data._standardise import squared_diffs
from rlopt.exceptions import InputError
from rlopt.families._base import Distance
from rlopt.families._learned import LearnedFamily, LinearRows
from rlopt.families._view import MAX_TABLE_ROWS, ParameterTable, ParameterView, bar, number

__all__ = [
    "Choquet",
    "ChoquetDistance",
    "MetricChoquet",
    "SupermodularChoquet",
    "MAX_ROW_BYTES",
    "MatrixRows",
    "measure_shapley",
    "measure_slack",
    "size_text",
]

MAX_ROW_BYTES = 4 * 2**30
"""The largest dense float64 matrix of a family's rows (``rows x (parameters + 1) x 8``
bytes, as each screening LP copies it) that a Choquet family accepts: 4 GiB. ``ci``
takes 13 attributes (3.5 GB), ``ci_m`` and ``ci_super`` 12 (13 for ``ci_m`` with
``published_relaxation``); one attribute more multiplies the size by about 4.3."""


def _subset(mask: int, columns) -> list[str]:
    return [c for k, c in enumerate(columns) if mask >> k & 1]


def _popcounts(n_attributes: int) -> np.ndarray:
    """How many attributes each subset bitmask ``0 .. 2^n - 1`` holds."""
    masks = np.arange(2**n_attributes)
    sizes = np.zeros(masks.size, dtype=np.int64)
    for k in range(n_attributes):
        sizes += masks >> k & 1
    return sizes


def measure_slack(measure: np.ndarray, n_attributes: int) -> float:
    """``n v``, ``v`` the largest fall ``mu(S) - mu(S + k)`` of a measure by bitmask (0 when
    it is monotone): the Choquet integral's :meth:`~rlopt.families.Distance.monotone_slack`.

    ``mu~(S) = max_{T in S} mu(T)`` is monotone and within ``n v`` above ``mu`` (a chain
    from ``T`` to ``S`` has at most ``n`` steps), so ``C_mu(x)`` lies within
    ``n v max(x)`` below ``C_mu~(x)`` and ``C_mu(x) <= C_mu~(y) <= C_mu(y) + n v max(y)``
    for ``x <= y``.
    """
    masks = np.arange(2**n_attributes)
    fall = 0.0
    for k in range(n_attributes):
        without = masks[(masks >> k & 1) == 0]
        fall = max(fall, float((measure[without] - measure[without | (1 << k)]).max()))
    return n_attributes * fall


def measure_shapley(measure: np.ndarray) -> np.ndarray:
    """The Shapley value of each attribute for a fuzzy measure given by bitmask (length
    ``2^n``, attribute ``k`` is bit ``1 << k``):

    ``phi_i = sum_{S not containing i} |S|! (n - |S| - 1)! / n! (mu(S + i) - mu(S))``,

    the attribute's average marginal contribution over the orders of the attributes;
    the values sum to ``mu(V) - mu(empty)``.
    """
    measure = np.asarray(measure, dtype=float)
    n_attributes = measure.size.bit_length() - 1
    if measure.ndim != 1 or measure.size != 2**n_attributes:
        raise ValueError(f"a measure by bitmask has 2^n values; got shape {measure.shape}")
    masks = np.arange(measure.size)
    sizes = _popcounts(n_attributes)
    weight = np.array(
        [
            factorial(s) * factorial(n_attributes - s - 1) / factorial(n_attributes)
            for s in range(n_attributes)
        ]
    )
    phi = np.zeros(n_attributes)
    for i in range(n_attributes):
        without = masks[(masks >> i & 1) == 0]
        phi[i] = weight[sizes[without]] @ (measure[without | 1 << i] - measure[without])
    return phi


def size_text(size: float) -> str:
    """A byte count for a message, e.g. ``'3.5 GB'``."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size / 1e3:.1f} kB"


class MatrixRows(LinearRows):
    """:class:`LinearRows` given at once by one dense matrix (int8 when every
    coefficient is -1, 0 or 1): its rows are views, :meth:`matrix` does not copy,
    and :meth:`violation` multiplies only the non-zeros (``nonzeros``: the
    ``(rows, columns)`` of ``numpy.nonzero(matrix)``, found once when not given)."""

    def __init__(self, matrix: np.ndarray, lo, hi, names, nonzeros: tuple | None = None):
        super().__init__(
            matrix.shape[1], list(matrix), [float(v) for v in lo], [float(v) for v in hi], list(names)
        )
        self._matrix = matrix
        self._nonzeros = nonzeros

    def matrix(self) -> np.ndarray:
        if len(self.coefs) != self._matrix.shape[0]:  # rows were added with add()
            return super().matrix()
        return self._matrix

    def violation(self, theta: np.ndarray) -> float:
        if len(self.coefs) != self._matrix.shape[0]:
            return super().violation(theta)
        if not len(self):
            return 0.0
        if self._nonzeros is None:
            self._nonzeros = np.nonzero(self._matrix)
        rows, cols = self._nonzeros
        theta = np.asarray(theta, dtype=float)
        values = np.bincount(rows, weights=self._matrix[rows, cols] * theta[cols], minlength=len(self))
        return float(max(0.0, np.max(np.array(self.lo) - values), np.max(values - np.array(self.hi))))


class ChoquetDistance(Distance):
    """The Choquet integral of the squared differences with respect to ``mu``.

    Reference evaluator: sort each pair's differences in *decreasing* order,
    ``x_[1] >= ... >= x_[n]``, with ``T_t`` the attributes of the ``t`` largest,
    and sum ``x_[t] * (mu(T_t) - mu(T_{t-1}))`` -- the same integral as
    ``docs/method.md`` (section 5) writes, in its other classical form.
    """

    def __init__(self, measure: np.ndarray, columns: tuple[str, ...], family: str = "ci"):
        self.measure = np.asarray(measure, dtype=float)  # length 2^n, by bitmask
        self.columns = tuple(columns)
        self.family = family

    def combine(self, delta):
        diff = delta * delta
        order = np.argsort(-diff, axis=2, kind="stable")
        top = np.take_along_axis(diff, order, axis=2)
        sets = np.cumsum(np.left_shift(1, order), axis=2)  # bitmask of T_t
        before = np.concatenate([np.zeros_like(sets[..., :1]), sets[..., :-1]], axis=2)
        return (top * (self.measure[sets] - self.measure[before])).sum(axis=2)

    def monotone_slack(self):
        return measure_slack(self.measure, len(self.columns))

    def params(self) -> dict:
        return {
            "family": self.family,
            "columns": list(self.columns),
            "measure": [
                {"subset": _subset(mask, self.columns), "value": float(v)}
                for mask, v in enumerate(self.measure)
            ],
        }


class Choquet(LearnedFamily):
    """Choquet integral with a monotone fuzzy measure, ``mu(V) = 1`` (``docs/method.md``,
    section 5).

    Takes as many attributes as :data:`MAX_ROW_BYTES` allows (13 for ``ci``): see
    :meth:`check_attributes`.
    """

    name = "ci"
    title = "Choquet integral"
    shares_meaning = "the attribute's Shapley value in the fuzzy measure (they sum to mu(all) = 1)"
    min_attributes = 2  # with one attribute mu is fixed (mu(V) = 1): the distance is AM

    @classmethod
    def shapley_values(cls, params: Mapping, columns: Sequence[str]) -> dict[str, float]:
        """The Shapley value of each attribute (:func:`measure_shapley`) of the measure
        ``params["measure"]`` (``[{subset, value}]``, subsets by attribute name)."""
        names = [str(c) for c in params.get("columns", columns)]
        index = {c: k for k, c in enumerate(names)}
        measure = np.zeros(2 ** len(names))
        for entry in params["measure"]:
            measure[sum(1 << index[c] for c in entry["subset"])] = entry["value"]
        return dict(zip(names, measure_shapley(measure).tolist()))

    @classmethod
    def report_view(
        cls, params: Mapping, columns: Sequence[str], *, name: str | None = None
    ) -> ParameterView:
        """The Shapley values (a bar chart) and the subsets of the largest measure (a table)."""
        name = name or cls.name
        shapley = cls.shapley_values(params, columns)
        measure = sorted(params["measure"], key=lambda m: -m["value"])
        shown = measure[:MAX_TABLE_ROWS]
        return ParameterView(
            label=f"{name}: fuzzy measure",
            note=f"Shapley value of each attribute (its share of the measure); "
            f"below, the {len(shown)} subsets with the largest measure of {len(measure)}.",
            table=ParameterTable(
                ("subset", "measure"),
                tuple((", ".join(m["subset"]) or "(empty)", number(m["value"])) for m in shown),
            ),
            chart=bar(
                list(shapley), list(shapley.values()), title=f"{name} Shapley values", ylabel="Shapley value"
            ),
        )

    def __init__(self, **options):
        super().__init__(**options)
        self._rows: dict[int, tuple] = {}

    def check_attributes(self, n_attributes):
        """Also refuse, before any work, a width whose rows would not fit in
        :data:`MAX_ROW_BYTES` (the message names the size and the way out)."""
        super().check_attributes(n_attributes)
        size = self.row_bytes(n_attributes)
        if size > MAX_ROW_BYTES:
            widest = max(
                (m for m in range(self.min_attributes, n_attributes) if self.row_bytes(m) <= MAX_ROW_BYTES),
                default=self.min_attributes,
            )
            raise InputError(
                f"family {self.name!r} takes at most {widest} attributes; the file has {n_attributes}: "
                f"{n_attributes} attributes give {2**n_attributes - 2:,} measure values (2^n - 2) and "
                f"{self.n_family_rows(n_attributes):,} rows of the admissible set, a {size_text(size)} "
                f"dense matrix in each screening LP (the limit is {MAX_ROW_BYTES / 2**30:g} GiB). "
                f"Choose at most {widest} attributes with --columns (Python: columns=[...]), or learn ci_k "
                "(k-additive measures, default k = 2: n(n+1)/2 values; a lower end for ci)"
            )

    def n_family_rows(self, n_attributes: int) -> int:
        """How many rows :meth:`constraints` has for ``n_attributes`` attributes."""
        return (
            n_attributes * 2 ** (n_attributes - 1) - 2 * n_attributes + self._n_modularity_rows(n_attributes)
        )

    def _n_modularity_rows(self, n_attributes: int) -> int:
        return 0

    def row_bytes(self, n_attributes: int) -> int:
        """The size of the family's rows as one dense float64 matrix with a column
        more (what each screening LP builds): the size :meth:`check_attributes` limits."""
        return self.n_family_rows(n_attributes) * (2**n_attributes - 1) * 8

    def n_params(self, n_attributes):
        self.check_attributes(n_attributes)
        return 2**n_attributes - 2

    def singleton_lower(self, n_attributes) -> float:
        return 0.0

    def bounds(self, n_attributes):
        lo = np.zeros(self.n_params(n_attributes))
        for k in range(n_attributes):
            lo[(1 << k) - 1] = self.singleton_lower(n_attributes)
        return lo, np.ones(self.n_params(n_attributes))

    def constraints(self, n_attributes):
        """``mu(S) <= mu(S + k)`` for every proper non-empty ``S`` and ``k`` not in it
        with ``S + k`` proper (the other cases are bounds), then the family's
        modularity rows; built at once as one int8 matrix and kept per width."""
        if n_attributes not in self._rows:
            parts = [self._monotone_rows(n_attributes), *self._modularity(n_attributes)]
            matrix = parts[0][0] if len(parts) == 1 else np.concatenate([p[0] for p in parts])
            matrix.flags.writeable = False  # shared by every call
            offsets = np.cumsum([0] + [p[0].shape[0] for p in parts])
            nonzeros = (
                np.concatenate([p[3] + at for p, at in zip(parts, offsets)]),
                np.concatenate([p[4] for p in parts]),
            )
            self._rows[n_attributes] = (
                matrix,
                np.concatenate([p[1] for p in parts]),
                [name for p in parts for name in p[2]],
                nonzeros,
            )
        matrix, lo, names, nonzeros = self._rows[n_attributes]
        return MatrixRows(matrix, lo, np.full(len(lo), np.inf), names, nonzeros)

    def _monotone_rows(self, n_attributes):
        full = 2**n_attributes - 1
        masks = np.arange(1, full)
        small, big = [], []
        for k in range(n_attributes):
            below = masks[(masks >> k & 1) == 0]
            keep = (below | 1 << k) != full
            small.append(below[keep])
            big.append(below[keep] | 1 << k)
        small, big = np.concatenate(small), np.concatenate(big)
        order = np.lexsort((big, small))  # by S, then by k: the order of the rows' names
        small, big = small[order], big[order]
        matrix = np.zeros((small.size, full - 1), dtype=np.int8)
        rows = np.arange(small.size)
        matrix[rows, big - 1] = 1
        matrix[rows, small - 1] = -1
        names = [f"monotone {a}<{b}" for a, b in zip(small.tolist(), big.tolist())]
        return (
            matrix,
            np.zeros(small.size),
            names,
            np.concatenate([rows, rows]),
            np.concatenate([big - 1, small - 1]),
        )

    def _modularity(self, n_attributes) -> list[tuple]:
        """Sub- or supermodularity rows ``(matrix, lo, names, rows, columns)`` (the last
        two: the non-zeros); none for plain CI."""
        return []

    def _local_modularity(self, n_attributes, sign: float, *, pairs_only: bool) -> list[tuple]:
        # sign * (mu(S+i) + mu(S+j) - mu(S+i+j) - mu(S)) >= 0 for i < j not in S
        full = 2**n_attributes - 1
        bases = np.zeros(1, dtype=np.int64) if pairs_only else np.arange(full + 1)
        blocks = []
        for i in range(n_attributes):
            for j in range(i + 1, n_attributes):
                free = bases[(bases >> i & 1) == 0]
                free = free[(free >> j & 1) == 0]
                blocks.append(np.column_stack([free, np.full(free.size, i), np.full(free.size, j)]))
        triples = np.concatenate(blocks)
        triples = triples[np.lexsort((triples[:, 2], triples[:, 1], triples[:, 0]))]
        base, i, j = triples.T
        rows = np.arange(base.size)
        matrix = np.zeros((base.size, full - 1), dtype=np.int8)
        constant = np.zeros(base.size)
        nz_rows, nz_cols = [], []
        for mask, coef in ((base | 1 << i, 1), (base | 1 << j, 1), (base | 1 << i | 1 << j, -1), (base, -1)):
            inner = (mask != 0) & (mask != full)
            matrix[rows[inner], mask[inner] - 1] = int(sign) * coef
            constant[mask == full] += sign * coef
            nz_rows.append(rows[inner])
            nz_cols.append(mask[inner] - 1)
        names = [f"modular {a}+{b}+{c}" for a, b, c in triples.tolist()]
        return [(matrix, -constant, names, np.concatenate(nz_rows), np.concatenate(nz_cols))]

    def features(self, za, zb):
        diff = squared_diffs(za, zb)
        rows, records, n_attributes = diff.shape
        order = np.argsort(diff, axis=2, kind="stable")
        ascending = np.take_along_axis(diff, order, axis=2)
        steps = np.diff(ascending, axis=2, prepend=0.0)
        # A_(k): attributes at ascending positions k..n-1, as a bitmask
        masks = np.flip(np.cumsum(np.flip(np.left_shift(1, order), axis=2), axis=2), axis=2)
        phi = np.zeros((rows, records, 2**n_attributes - 2))
        r_idx, j_idx = np.indices((rows, records))
        for k in range(1, n_attributes):
            phi[r_idx, j_idx, masks[..., k] - 1] = steps[..., k]
        return phi, steps[..., 0]  # mu(V) = 1 multiplies the smallest difference

    def max_excess(self, own, other):
        # CI is monotone and translation-equivariant when mu(V) = 1 (docs/method.md, section 3)
        return (own * own - other * other).max(axis=2)

    def neutral(self, n_attributes):
        return np.array([bin(mask).count("1") / n_attributes for mask in range(1, 2**n_attributes - 1)])

    def _measure(self, theta):
        return np.concatenate([[0.0], theta, [1.0]])

    def distance(self, theta, columns):
        return ChoquetDistance(self._measure(np.asarray(theta, dtype=float)), columns, self.name)

    def theta_from_params(self, params, columns):
        index = {c: k for k, c in enumerate(columns)}
        measure = np.zeros(2 ** len(columns))
        for entry in params["measure"]:
            measure[sum(1 << index[c] for c in entry["subset"])] = entry["value"]
        return measure[1:-1]


class MetricChoquet(Choquet):
    """CI_m: ``mu({k}) >= delta`` and submodularity (its square root is a distance).

    Options: ``delta`` (default ``1e-3 / n``); ``published_relaxation=True``
    imposes submodularity only on pairs of single attributes,
    ``mu({i}) + mu({j}) >= mu({i, j})``, as the published constraint count does.
    """

    name = "ci_m"
    title = "Choquet integral whose square root is a metric"
    option_names = ("delta", "published_relaxation")

    def max_delta(self, n_attributes):
        return 1.0  # mu({k}) = 1 for every k is monotone and submodular

    def singleton_lower(self, n_attributes):
        return self.delta(n_attributes)

    def _n_modularity_rows(self, n_attributes):
        return (
            comb(n_attributes, 2)
            if self.options.get("published_relaxation")
            else comb(n_attributes, 2) * 2 ** (n_attributes - 2)
        )

    def _modularity(self, n_attributes):
        return self._local_modularity(
            n_attributes, 1.0, pairs_only=bool(self.options.get("published_relaxation"))
        )


class SupermodularChoquet(Choquet):
    """CI_super: a supermodular measure (not a metric; an option for analysis)."""

    name = "ci_super"
    title = "Choquet integral, supermodular (analysis only)"

    def _n_modularity_rows(self, n_attributes):
        return comb(n_attributes, 2) * 2 ** (n_attributes - 2)

    def _modularity(self, n_attributes):
        return self._local_modularity(n_attributes, -1.0, pairs_only=False)
