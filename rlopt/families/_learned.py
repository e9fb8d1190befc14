"""The contract of a learned family, shared by every learned family module.

A learned family has a parameter vector ``theta`` (length ``n_params(n)``) in which
``d(a_i, b_j) = phi(a_i, b_j) . theta + offset(a_i, b_j)`` is linear. The MILP is
built from :meth:`LearnedFamily.features`, its admissible set from
:meth:`LearnedFamily.bounds` and :meth:`LearnedFamily.constraints`, its big-C from
:meth:`LearnedFamily.max_excess`. The learned parameter is evaluated by the
family's :class:`~rlopt.families.Distance`, written independently of ``features``
(its own sort) so that it can arbitrate the solver's count.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from rlopt.exceptions import InputError
from rlopt.families._base import Distance, Family

__all__ = ["LearnedFamily", "LinearRows", "default_delta"]


def default_delta(n_attributes: int) -> float:
    """The default lower bound of metric variants: ``1e-3 / n``."""
    return 1e-3 / n_attributes


@dataclass
class LinearRows:
    """Linear constraints ``lo <= A @ theta <= hi`` on the parameter (dense ``A``)."""

    n_params: int
    coefs: list[np.ndarray] = field(default_factory=list)
    lo: list[float] = field(default_factory=list)
    hi: list[float] = field(default_factory=list)
    names: list[str] = field(default_factory=list)

    def add(
        self,
        terms: dict[int, float],
        lo: float = -np.inf,
        hi: float = np.inf,
        *,
        constant: float = 0.0,
        name: str = "",
    ) -> None:
        """Add ``lo <= sum(coef * theta[index]) + constant <= hi``."""
        row = np.zeros(self.n_params)
        for index, coef in terms.items():
            row[index] += coef
        self.coefs.append(row)
        self.lo.append(lo - constant)
        self.hi.append(hi - constant)
        self.names.append(name)

    def __len__(self) -> int:
        return len(self.coefs)

    def matrix(self) -> np.ndarray:
        return np.array(self.coefs).reshape(len(self), self.n_params)

    def violation(self, theta: np.ndarray) -> float:
        """The largest violation of any row by ``theta`` (0 when all hold)."""
        if not len(self):
            return 0.0
        values = self.matrix() @ theta
        return float(max(0.0, np.max(np.array(self.lo) - values), np.max(values - np.array(self.hi))))


class LearnedFamily(Family):
    """A family whose parameter is learned by the MILP."""

    learned = True
    options: dict
    option_names: ClassVar[tuple[str, ...]] = ()
    """The options the family takes (e.g. ``delta`` of the metric variants)."""
    min_attributes: ClassVar[int] = 1
    max_attributes: ClassVar[int | None] = None

    def __init__(self, **options):
        unknown = sorted(set(options) - set(self.option_names))
        if unknown:
            raise InputError(
                f"family {self.name!r}: unknown option(s) {unknown}; expected "
                f"{list(self.option_names) or 'no options'}"
            )
        delta = options.get("delta")
        if delta is not None and (
            isinstance(delta, bool)
            or not isinstance(delta, (int, float))
            or not math.isfinite(delta)
            or not delta > 0
        ):
            raise InputError(
                f"{self.name} delta={delta!r}; expected a number > 0 (at most 1/n for n attributes)"
            )
        self.options = options

    def check_attributes(self, n_attributes: int) -> None:
        """Raise :class:`InputError`, before any work, when the family cannot be learned
        on ``n_attributes`` attributes (too few or too many, or an option that no parameter meets)."""
        if n_attributes < self.min_attributes:
            raise InputError(
                f"family {self.name!r} needs at least {self.min_attributes} attributes; "
                f"the file has {n_attributes}"
            )
        if self.max_attributes is not None and n_attributes > self.max_attributes:
            raise InputError(
                f"family {self.name!r} takes at most {self.max_attributes} "
                f"attributes (it has 2^n - 2 parameters); the file has {n_attributes}: "
                "choose fewer with --columns (Python: columns=[...])"
            )
        if "delta" in self.option_names:
            self.delta(n_attributes)

    def max_delta(self, n_attributes: int) -> float:
        """The largest ``delta`` some admissible parameter meets (metric variants)."""
        return 1.0 / n_attributes

    def delta(self, n_attributes: int) -> float:
        """The lower bound ``delta`` of a metric variant: the option, else ``1e-3 / n``."""
        delta = self.options.get("delta")
        if delta is None:
            return default_delta(n_attributes)
        if delta > self.max_delta(n_attributes):
            raise InputError(
                f"{self.name} delta={delta!r} for {n_attributes} attributes; expected "
                f"0 < delta <= {self.max_delta(n_attributes):g} (no parameter of the family "
                "meets a larger one)"
            )
        return float(delta)

    @abstractmethod
    def n_params(self, n_attributes: int) -> int:
        """Length of the parameter vector for ``n_attributes`` attributes."""

    @abstractmethod
    def bounds(self, n_attributes: int) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of each parameter."""

    @abstractmethod
    def constraints(self, n_attributes: int) -> LinearRows:
        """The family's linear constraints on the parameter (``docs/method.md``, section 5)."""

    @abstractmethod
    def features(self, za: np.ndarray, zb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``phi`` of shape (rows, N, n_params) and ``offset`` of shape (rows, N)
        with ``d(za[r], zb[j]) = phi[r, j] @ theta + offset[r, j]``."""

    @abstractmethod
    def max_excess(self, own: np.ndarray, other: np.ndarray) -> np.ndarray:
        """An upper bound, over every admissible parameter, of
        ``d(a_i, b_i) - d(a_i, b_j)``.

        Parameters
        ----------
        own : ndarray of shape (rows, 1, n)
            ``za_i - zb_i``.
        other : ndarray of shape (rows, N, n)
            ``za_i - zb_j``.
        """

    def simplex_vertices(self, n_attributes: int) -> np.ndarray | None:
        """The vertices (one per row) when the admissible set is a simplex given by
        them, else ``None`` (see :mod:`rlopt.milp.ceilings.regions`)."""
        return None

    @abstractmethod
    def neutral(self, n_attributes: int) -> np.ndarray:
        """The admissible parameter that treats all attributes alike (the ordering
        of AM): the first incumbent handed to the solver."""

    @abstractmethod
    def distance(self, theta: np.ndarray, columns: tuple[str, ...]) -> Distance:
        """The reference evaluator of the distance with parameter ``theta``."""

    @abstractmethod
    def theta_from_params(self, params: dict, columns: tuple[str, ...]) -> np.ndarray:
        """Inverse of ``distance(theta, columns).params()``."""

    @property
    def has_cuts(self) -> bool:
        """Whether the admissible set needs the cutting planes of :meth:`separate`."""
        return type(self).separate is not LearnedFamily.separate

    def separate(self, theta: np.ndarray, za: np.ndarray, zb: np.ndarray) -> list[tuple[np.ndarray, float]]:
        """Cutting planes ``coef @ theta >= rhs`` that ``theta`` violates (none by default).

        Families whose admissible set is not given by finitely many rows up front
        (non-negativity over all pairs, positive definiteness) return the violated
        ones; the solver adds them and solves again until none is returned.
        """
        return []

    def is_admissible(self, theta: np.ndarray, za: np.ndarray, zb: np.ndarray, *, tol: float = 1e-9) -> bool:
        """Whether ``theta`` meets the family's bounds, rows and cutting planes (on these
        standardised files, for the families whose conditions involve the records)."""
        n_attributes = za.shape[1]
        theta = np.asarray(theta, dtype=float)
        if theta.shape != (self.n_params(n_attributes),) or not np.isfinite(theta).all():
            return False
        lo, hi = self.bounds(n_attributes)
        if (theta < lo - tol).any() or (theta > hi + tol).any():
            return False
        return self.constraints(n_attributes).violation(theta) <= tol and not self.separate(theta, za, zb)

    def repair(self, theta: np.ndarray) -> np.ndarray | None:
        """An admissible parameter near ``theta`` when cutting planes stopped early."""
        return None
