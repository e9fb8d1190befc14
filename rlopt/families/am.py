"""AM: the arithmetic mean of the per-attribute squared differences (Euclidean)."""

from __future__ import annotations

import numpy as np

from rlopt.families._base import BaselineFamily, Distance

__all__ = ["ArithmeticMean", "ArithmeticMeanDistance"]


class ArithmeticMeanDistance(Distance):
    """``d(a, b) = (1/n) sum_k (za_k - zb_k)^2``: squared Euclidean distance / n."""

    family = "am"

    def combine(self, delta):
        return (delta * delta).mean(axis=2)

    def linear_map(self, n_attributes):
        return np.eye(n_attributes) / np.sqrt(n_attributes)

    def monotone_slack(self):
        return 0.0


class ArithmeticMean(BaselineFamily):
    """AM: every learned family's neutral parameter orders pairs as AM does, so its
    distance is no start of its own (``start_label`` None)."""

    name = "am"
    title = "Euclidean (AM)"

    def from_data(self, za, zb, columns) -> Distance:
        return ArithmeticMeanDistance()
