"""CI, CI_m, CI_super: the Choquet integral of the squared differences w.r.t. a fuzzy measure.

The measure ``mu`` is stored by subset bitmask (attribute ``k`` is bit ``1 << k``):
``mu(empty) = 0`` and ``mu(V) = 1`` are fixed, the ``2^n - 2`` other subsets are
the parameters, ``theta[mask - 1] = mu(mask)``.
"""

from __future__ import annotations

import numpy as np

from rlopt.data import squared_diffs
from rlopt.families._base import Distance
from rlopt.families._learned import LearnedFamily, LinearRows

__all__ = ["Choquet", "ChoquetDistance", "MetricChoquet", "SupermodularChoquet"]

MAX_ATTRIBUTES = 12
"""Above this the 2^n measure values are too many for a readable (or solvable) model."""


def _subset(mask: int, columns) -> list[str]:
    return [c for k, c in enumerate(columns) if mask >> k & 1]


class ChoquetDistance(Distance):
    """The Choquet integral of the squared differences with respect to ``mu``.

    Reference evaluator: sort each pair's differences in *decreasing* order,
    ``x_[1] >= ... >= x_[n]``, with ``T_t`` the attributes of the ``t`` largest,
    and sum ``x_[t] * (mu(T_t) - mu(T_{t-1}))`` -- the same integral as SPEC
    section 4 writes, in its other classical form.
    """

    def __init__(self, measure: np.ndarray, columns: tuple[str, ...], family: str = "ci"):
        self.measure = np.asarray(measure, dtype=float)  # length 2^n, by bitmask
        self.columns = tuple(columns)
        self.family = family

    def pairwise(self, za, zb):
        diff = squared_diffs(za, zb)
        order = np.argsort(-diff, axis=2, kind="stable")
        top = np.take_along_axis(diff, order, axis=2)
        sets = np.cumsum(np.left_shift(1, order), axis=2)  # bitmask of T_t
        before = np.concatenate([np.zeros_like(sets[..., :1]), sets[..., :-1]], axis=2)
        return (top * (self.measure[sets] - self.measure[before])).sum(axis=2)

    def params(self) -> dict:
        return {"family": self.family, "columns": list(self.columns),
                "measure": [{"subset": _subset(mask, self.columns), "value": float(v)}
                            for mask, v in enumerate(self.measure)]}


class Choquet(LearnedFamily):
    """Choquet integral with a monotone fuzzy measure, ``mu(V) = 1`` (SPEC section 4)."""

    name = "ci"
    summary = "Choquet integral of squared differences, monotone fuzzy measure"
    min_attributes = 2  # with one attribute mu is fixed (mu(V) = 1): the distance is AM
    max_attributes = MAX_ATTRIBUTES

    def n_params(self, n):
        self.check_attributes(n)
        return 2**n - 2

    def param_names(self, columns):
        return [f"mu{{{','.join(_subset(mask, columns))}}}" for mask in range(1, 2 ** len(columns) - 1)]

    def singleton_lower(self, n) -> float:
        return 0.0

    def bounds(self, n):
        lo = np.zeros(self.n_params(n))
        for k in range(n):
            lo[(1 << k) - 1] = self.singleton_lower(n)
        return lo, np.ones(self.n_params(n))

    def constraints(self, n):
        full = 2**n - 1
        rows = LinearRows(self.n_params(n))
        for mask in range(1, full):
            for k in range(n):
                bigger = mask | 1 << k
                if bigger != mask and bigger != full:
                    rows.add({bigger - 1: 1.0, mask - 1: -1.0}, 0.0, name=f"monotone {mask}<{bigger}")
        self._modularity(n, rows)
        return rows

    def _modularity(self, n, rows: LinearRows) -> None:
        """Sub- or supermodularity rows; none for plain CI."""

    def _local_modularity(self, n, rows: LinearRows, sign: float, *, pairs_only: bool) -> None:
        # sign * (mu(S+i) + mu(S+j) - mu(S+i+j) - mu(S)) >= 0 for i < j not in S
        full = 2**n - 1
        for base in ([0] if pairs_only else range(full + 1)):
            for i in range(n):
                for j in range(i + 1, n):
                    if base >> i & 1 or base >> j & 1:
                        continue
                    terms: dict[int, float] = {}
                    constant = 0.0
                    for mask, coef in ((base | 1 << i, 1.0), (base | 1 << j, 1.0),
                                       (base | 1 << i | 1 << j, -1.0), (base, -1.0)):
                        if mask == full:
                            constant += sign * coef
                        elif mask:
                            terms[mask - 1] = terms.get(mask - 1, 0.0) + sign * coef
                    rows.add(terms, 0.0, constant=constant, name=f"modular {base}+{i}+{j}")

    def features(self, za, zb):
        diff = squared_diffs(za, zb)
        rows, records, n = diff.shape
        order = np.argsort(diff, axis=2, kind="stable")
        ascending = np.take_along_axis(diff, order, axis=2)
        steps = np.diff(ascending, axis=2, prepend=0.0)
        # A_(k): attributes at ascending positions k..n-1, as a bitmask
        masks = np.flip(np.cumsum(np.flip(np.left_shift(1, order), axis=2), axis=2), axis=2)
        phi = np.zeros((rows, records, 2**n - 2))
        r_idx, j_idx = np.indices((rows, records))
        for k in range(1, n):
            phi[r_idx, j_idx, masks[..., k] - 1] = steps[..., k]
        return phi, steps[..., 0]  # mu(V) = 1 multiplies the smallest difference

    def max_excess(self, own, other):
        # CI is monotone and translation-equivariant when mu(V) = 1 (SPEC section 3)
        return (own * own - other * other).max(axis=2)

    def neutral(self, n):
        return np.array([bin(mask).count("1") / n for mask in range(1, 2**n - 1)])

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
    summary = "Choquet integral with a submodular measure, mu({k}) >= delta"
    option_names = ("delta", "published_relaxation")

    def max_delta(self, n):
        return 1.0  # mu({k}) = 1 for every k is monotone and submodular

    def singleton_lower(self, n):
        return self.delta(n)

    def _modularity(self, n, rows):
        self._local_modularity(n, rows, 1.0, pairs_only=bool(self.options.get("published_relaxation")))


class SupermodularChoquet(Choquet):
    """CI_super: a supermodular measure (not a metric; an option for analysis)."""

    name = "ci_super"
    summary = "Choquet integral with a supermodular measure"

    def _modularity(self, n, rows):
        self._local_modularity(n, rows, -1.0, pairs_only=False)
