"""AM: the arithmetic mean of the per-attribute squared differences (Euclidean)."""

from __future__ import annotations

import numpy as np

from rlopt.data import squared_diffs
from rlopt.families._base import BaselineFamily, Distance

__all__ = ["ArithmeticMean", "ArithmeticMeanDistance"]


class ArithmeticMeanDistance(Distance):
    """``d(a, b) = (1/n) sum_k (za_k - zb_k)^2``: squared Euclidean distance / n."""

    family = "am"

    def pairwise(self, za: np.ndarray, zb: np.ndarray) -> np.ndarray:
        return squared_diffs(za, zb).mean(axis=2)


class ArithmeticMean(BaselineFamily):
    name = "am"

    def from_data(self, za, zb, columns) -> Distance:
        return ArithmeticMeanDistance()
