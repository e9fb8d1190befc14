"""One result type for every count of re-identified records.

An intruder with one method (a baseline distance, probabilistic linkage, a
transparency attack) links each masked record to an original and re-identifies some
of them. :class:`Reidentification` holds what every such count has: how many records,
how many re-identified, which (``correct``), to what (``linked_to``), the interval
``[n_correct, upper]`` with its status and who counted (``source``). Each method
extends it with its own figures (:class:`rlopt.linkage.LinkageResult`'s ties,
:class:`rlopt.linkage.PLDResult`'s EM, the attacks' candidate sets) and names them in
:meth:`Reidentification.figures`; ``rate`` and ``to_dict`` are written once, here.

A learned family's result (:class:`rlopt.milp.pipeline.LearnResult`) is the other kind
of count: an optimum or an interval proven by a MILP, kept apart because its
``n_correct`` is the solver's claim and ``n_correct_verified`` the recount (its keys are
``rlopt learn --json``'s). An intersection attack (:mod:`rlopt.attacks.intersection`)
counts disclosed confidential values, not re-identified records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlopt.status import Status

__all__ = ["Reidentification"]


@dataclass(frozen=True, kw_only=True)
class Reidentification:
    """``n_correct`` of ``n_records`` records re-identified by ``source``.

    Attributes
    ----------
    n_records, n_correct : int
    correct : ndarray of bool, shape (n_records,)
        Which records are re-identified.
    linked_to : ndarray of int, shape (n_records,)
        The record each one is linked to (-1: none).
    status : Status
        ``exact`` for a method that counts (every method here); the interval
        ``[n_correct, upper]`` is then one number.
    upper : int or None
        The ceiling of the count when it is an interval (None: ``n_correct``).
    kinds : tuple of ColumnKind
        The attributes' kinds, when known.
    """

    n_records: int
    n_correct: int
    correct: np.ndarray = field(repr=False, compare=False)
    linked_to: np.ndarray = field(repr=False, compare=False)
    status: Status = Status.EXACT
    upper: int | None = None
    kinds: tuple = ()

    @property
    def source(self) -> str:
        """Who counted: the distance or the attack (each method names itself)."""
        raise NotImplementedError

    @property
    def rate(self) -> float:
        """``n_correct / n_records``."""
        return self.n_correct / self.n_records

    @property
    def upper_rate(self) -> float:
        """The ceiling as a rate (the rate itself for an exact count)."""
        return (self.n_correct if self.upper is None else self.upper) / self.n_records

    def figures(self) -> dict[str, Any]:
        """The method's own figures, in the JSON after the common ones."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """The JSON figures: the common ones (``n_records, n_correct, rate, status``), the
        method's own, and ``kinds`` when the attributes' kinds are known."""
        out: dict[str, Any] = {
            "n_records": self.n_records,
            "n_correct": self.n_correct,
            "rate": self.rate,
            "status": str(self.status),
            **({} if self.upper is None else {"upper": self.upper, "upper_rate": self.upper_rate}),
            **self.figures(),
        }
        if self.kinds:
            out["kinds"] = [kind.to_dict() for kind in self.kinds]
        return out
