"""WM and WM_m: the weighted mean of the per-attribute squared differences."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from rlopt.data._standardise import squared_diffs
from rlopt.families._base import Distance
from rlopt.families._learned import LearnedFamily, LinearRows
from rlopt.families._view import ParameterTable, ParameterView, bar, number

__all__ = ["WeightedMean", "MetricWeightedMean", "WeightedMeanDistance"]


class WeightedMeanDistance(Distance):
    """``d(a, b) = sum_k p_k (za_k - zb_k)^2``."""

    def __init__(self, weights: np.ndarray, columns: tuple[str, ...], family: str = "wm"):
        self.weights = np.asarray(weights, dtype=float)
        self.columns = tuple(columns)
        self.family = family

    def combine(self, delta):
        return (delta * delta) @ self.weights

    def linear_map(self, n_attributes):
        return np.diag(np.sqrt(np.clip(self.weights, 0.0, None))) if (self.weights >= 0).all() else None

    def monotone_slack(self):
        return float(np.clip(-self.weights, 0.0, None).sum())  # the negative weights' share

    def params(self) -> dict:
        return {"family": self.family, "weights": {c: float(w) for c, w in zip(self.columns, self.weights)}}


class WeightedMean(LearnedFamily):
    """``sum_k p_k diff_k`` with ``sum p = 1``, ``p >= 0`` (``docs/method.md``, section 5)."""

    name = "wm"
    title = "weighted mean"

    @classmethod
    def report_view(
        cls, params: Mapping, columns: Sequence[str], *, name: str | None = None
    ) -> ParameterView:
        """The attribute weights: a bar chart and a table."""
        name = name or cls.name
        names, values = list(params["weights"]), [float(v) for v in params["weights"].values()]
        return ParameterView(
            label=f"{name}: attribute weights",
            note="Which attributes carry the risk: the weight of each attribute's "
            "squared (standardised) difference.",
            table=ParameterTable(
                ("attribute", "weight"), tuple((n, number(v)) for n, v in zip(names, values))
            ),
            chart=bar(names, values, title=f"{name} weights", ylabel="weight"),
        )

    shares_meaning = "the attribute's weight (the weights sum to 1)"

    @classmethod
    def attribute_shares(cls, params: Mapping, columns: Sequence[str]) -> dict[str, float]:
        """The weights themselves: ``p >= 0`` and ``sum p = 1``."""
        return {str(c): float(w) for c, w in params["weights"].items()}

    def lower(self, n_attributes: int) -> float:
        return 0.0

    def n_params(self, n_attributes):
        return n_attributes

    def bounds(self, n_attributes):
        return np.full(n_attributes, self.lower(n_attributes)), np.ones(n_attributes)

    def constraints(self, n_attributes):
        rows = LinearRows(n_attributes)
        rows.add({k: 1.0 for k in range(n_attributes)}, 1.0, 1.0, name="sum p = 1")
        return rows

    def features(self, za, zb):
        phi = squared_diffs(za, zb)
        return phi, np.zeros(phi.shape[:2])

    def max_excess(self, own, other):
        # max over the simplex of sum p_k (x_k - y_k) is attained at a vertex (tight)
        return (own * own - other * other).max(axis=2)

    def simplex_vertices(self, n_attributes):
        # {p >= lower, sum p = 1}: the corners put all but n * lower of the mass on one weight
        low = self.lower(n_attributes)
        return np.full((n_attributes, n_attributes), low) + (1.0 - n_attributes * low) * np.eye(n_attributes)

    def neutral(self, n_attributes):
        return np.full(n_attributes, 1.0 / n_attributes)

    def distance(self, theta, columns):
        return WeightedMeanDistance(theta, columns, self.name)

    def theta_from_params(self, params, columns):
        return np.array([params["weights"][c] for c in columns], dtype=float)


class MetricWeightedMean(WeightedMean):
    """WM whose distance is a metric: every weight ``p_k >= delta > 0``.

    ``delta`` defaults to ``1e-3 / n`` (option ``delta``).
    """

    name = "wm_m"
    title = "weighted mean that is a metric"
    option_names = ("delta",)

    def lower(self, n_attributes):
        return self.delta(n_attributes)
