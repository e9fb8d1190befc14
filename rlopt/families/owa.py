"""OWA: the ordered weighted average of the per-attribute squared differences."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from rlopt.data._standardise import squared_diffs
from rlopt.families._base import Distance
from rlopt.families._learned import LearnedFamily, LinearRows
from rlopt.families._view import ParameterView, bar

__all__ = ["OrderedWeightedAverage", "OWADistance"]


def _descending(values: np.ndarray) -> np.ndarray:
    return -np.sort(-values, axis=-1)


class OWADistance(Distance):
    """``d(a, b) = sum_m w_m diff_(m)`` with ``diff_(1) >= diff_(2) >= ...``.

    The reference evaluator: it sorts each pair's differences in decreasing
    order with ``numpy.sort`` on the full difference block.
    """

    family = "owa"

    def __init__(self, weights: np.ndarray):
        self.weights = np.asarray(weights, dtype=float)

    def combine(self, delta):
        diff = delta * delta
        return np.flip(np.sort(diff, axis=2), axis=2) @ self.weights

    def monotone_slack(self):
        return float(np.clip(-self.weights, 0.0, None).sum())  # the negative weights' share

    def params(self) -> dict:
        return {"family": "owa", "weights_by_rank": [float(w) for w in self.weights]}


class OrderedWeightedAverage(LearnedFamily):
    """OWA with weights on the simplex; ``w_1`` weights the largest difference."""

    name = "owa"
    title = "ordered weighted average"
    shares_meaning = (
        "none: OWA's weights are on ranks (the largest difference of a pair, the second "
        "largest, ...), not on attributes"
    )

    @classmethod
    def report_view(
        cls, params: Mapping, columns: Sequence[str], *, name: str | None = None
    ) -> ParameterView:
        """The weights by rank: a bar chart."""
        name = name or cls.name
        values = [float(v) for v in params["weights_by_rank"]]
        return ParameterView(
            label=f"{name}: OWA weights",
            note="Weight 1 applies to the largest squared difference of a pair, "
            "weight 2 to the second largest, and so on.",
            chart=bar(
                [f"{k + 1}" for k in range(len(values))],
                values,
                title=f"{name} weights by rank",
                ylabel="weight",
            ),
        )

    def n_params(self, n_attributes):
        return n_attributes

    def bounds(self, n_attributes):
        return np.zeros(n_attributes), np.ones(n_attributes)

    def constraints(self, n_attributes):
        rows = LinearRows(n_attributes)
        rows.add({m: 1.0 for m in range(n_attributes)}, 1.0, 1.0, name="sum w = 1")
        return rows

    def features(self, za, zb):
        phi = _descending(squared_diffs(za, zb))
        return phi, np.zeros(phi.shape[:2])

    def max_excess(self, own, other):
        return (_descending(own * own) - _descending(other * other)).max(axis=2)

    def simplex_vertices(self, n_attributes):
        return np.eye(n_attributes)

    def neutral(self, n_attributes):
        return np.full(n_attributes, 1.0 / n_attributes)

    def distance(self, theta, columns):
        return OWADistance(theta)

    def theta_from_params(self, params, columns):
        return np.array(params["weights_by_rank"], dtype=float)
