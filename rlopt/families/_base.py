"""The shared protocol of distance families.

A *family* is a parametric distance ``d(a, b) = C_p(diff_1(a, b), ..., diff_n(a, b))``
on standardised records (SPEC section 2). Fixing its parameter gives a
:class:`Distance`, which evaluates ``d(a_i, b_j)`` for blocks of records.
Non-learned baselines (AM, MD) derive their parameter from the data; learned
families get it from the MILP.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

__all__ = ["Distance", "Family", "BaselineFamily"]


class Distance(ABC):
    """A distance with every parameter fixed, on standardised records."""

    family: str  # the family's name (a class attribute, or set per instance by shared classes)

    @abstractmethod
    def pairwise(self, za: np.ndarray, zb: np.ndarray) -> np.ndarray:
        """``d(za[i], zb[j])`` for every pair.

        Parameters
        ----------
        za : ndarray of shape (n_rows, n_attributes)
        zb : ndarray of shape (n_records, n_attributes)

        Returns
        -------
        ndarray of shape (n_rows, n_records)
        """

    def params(self) -> dict:
        """The parameters in a JSON-ready form, keyed by attribute name when known."""
        return {}


class Family(ABC):
    """A family of distances, registered under the SPEC's name."""

    name: ClassVar[str]
    learned: ClassVar[bool]


class BaselineFamily(Family):
    """A family without learning: its single distance is derived from the data."""

    learned = False

    @abstractmethod
    def from_data(self, za: np.ndarray, zb: np.ndarray, columns: tuple[str, ...]) -> Distance:
        """The baseline distance for the standardised original ``zb`` and masked ``za``."""
