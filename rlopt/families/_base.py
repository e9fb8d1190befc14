"""The shared protocol of distance families.

A *family* is a parametric distance ``d(a, b) = C_p(diff_1(a, b), ..., diff_n(a, b))``
on standardised records (``docs/method.md``, section 2). Fixing its parameter gives a
:class:`Distance`, which evaluates ``d(a_i, b_j)`` for blocks of records.
Non-learned baselines (AM, MD) derive their parameter from the data; learned
families get it from the MILP.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np

from rlopt.data._standardise import attribute_deltas, pairwise_deltas
from rlopt.families._view import ParameterView, generic_view

__all__ = ["Distance", "Family", "BaselineFamily"]


class Distance(ABC):
    """A distance with every parameter fixed, on standardised records.

    A family's distance is a function of the per-attribute differences
    ``delta = rlopt.data.attribute_deltas(a, b)`` only; :meth:`combine` is that
    function, and :meth:`pairwise` (every pair of two blocks) and :meth:`paired`
    (row ``r`` with row ``r``) both go through it, so a pair gets the same value
    on either path.
    """

    family: str  # the family's name (a class attribute, or set per instance by shared classes)

    @abstractmethod
    def combine(self, delta: np.ndarray) -> np.ndarray:
        """The distance from the differences ``delta`` of shape (rows, cols, n_attributes).

        Returns
        -------
        ndarray of shape (rows, cols)
        """

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
        return self.combine(pairwise_deltas(za, zb))

    def paired(self, za: np.ndarray, zb: np.ndarray) -> np.ndarray:
        """``d(za[r], zb[r])`` for every row ``r`` of two blocks of the same shape.

        Returns
        -------
        ndarray of shape (n_rows,)
        """
        return self.combine(attribute_deltas(za, zb)[:, None, :])[:, 0]

    def linear_map(self, n_attributes: int) -> np.ndarray | None:
        """A matrix ``M`` (``n_attributes`` rows) with ``d(a, b) = ||(za - zb) @ M||^2`` on numeric records, or None.

        Where one exists, linkage is a Euclidean nearest-neighbour search after
        the map (:mod:`rlopt.linkage.neighbours`); None (the default) leaves the
        distance to the brute-force evaluator.
        """
        return None

    def monotone_slack(self) -> float | None:
        """How far this distance can fall when differences grow, or ``None``.

        ``s`` such that ``d(x) <= d(y) + s * max(y)`` whenever ``x <= y`` attribute by
        attribute (``x, y`` the squared differences): ``0`` for a distance that never
        decreases when an attribute's difference grows (am, a wm or an owa with weights
        ``>= 0``, a Choquet integral of a monotone measure), the weight of its
        violations for a parameter that breaks that within a solver's tolerance. Where
        it is a number, linkage bounds each box of originals by its nearest corner
        (:mod:`rlopt.linkage.boxes`); ``None`` (the default, e.g. an indefinite bilinear
        form) leaves the distance to the brute-force evaluator.
        """
        return None

    def params(self) -> dict:
        """The parameters in a JSON-ready form, keyed by attribute name when known."""
        return {}


class Family(ABC):
    """A family of distances, registered under its name (``docs/method.md``, section 5)."""

    name: ClassVar[str]
    title: ClassVar[str]
    """The distance in words: ``"weighted mean"``; a baseline's as the reports name it,
    e.g. ``"Euclidean (AM)"``."""
    learned: ClassVar[bool]

    @classmethod
    def report_view(
        cls, params: Mapping, columns: Sequence[str], *, name: str | None = None
    ) -> ParameterView:
        """What the risk report shows of a parameter of the family.

        ``params`` is the parameter as :meth:`Distance.params` gives it (the JSON
        figures' form); ``columns`` the file's attribute names, for a parameter that
        does not name them; ``name`` the name in the heading (default: the family's).
        This default is a table of every value (:func:`~rlopt.families._view.generic_view`),
        so that a family without a view of its own still shows its parameter.
        """
        return generic_view(name or cls.name, params)

    @classmethod
    def shapley_values(cls, params: Mapping, columns: Sequence[str]) -> dict[str, float] | None:
        """The Shapley value of each attribute where the family's parameter is a fuzzy
        measure (the Choquet families), else ``None``."""
        return None

    shares_meaning: ClassVar[str] = "no weight per attribute"
    """What :meth:`attribute_shares` gives, in words (or why a parameter has none)."""

    @classmethod
    def attribute_shares(cls, params: Mapping, columns: Sequence[str]) -> dict[str, float] | None:
        """Each attribute's share of a parameter of the family, summing to 1, where the
        parameter has one per attribute (what it is: :attr:`shares_meaning`), else ``None``.
        This default: the Shapley values of a fuzzy measure (:meth:`shapley_values`)."""
        return cls.shapley_values(params, columns)


class BaselineFamily(Family):
    """A family without learning: its single distance is derived from the data."""

    learned = False
    start_label: ClassVar[str | None] = None
    """The label under which the baseline's distance is handed to the learned families
    as a known parameter (a start where a family contains it); ``None`` when it is no
    start beyond the families' own neutral one."""

    @abstractmethod
    def from_data(self, za: np.ndarray, zb: np.ndarray, columns: tuple[str, ...]) -> Distance:
        """The baseline distance for the standardised original ``zb`` and masked ``za``."""
