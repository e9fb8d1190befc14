"""One result type for every count of re-identified records.

An intruder with one method (a baseline distance, probabilistic linkage, a
transparency attack) links each masked record to an original and re-identifies some
of them. :class:`Reidentification` holds what every such count has: how many records,
how many re-identified, which (``correct``), to what (``linked_to``), the interval
``[n_correct, upper]`` with its status and who counted (``source``). Each method
extends it with its own figures (:class:`rlopt.linkage.LinkageResult`'s ties,
:class:`rlopt.linkage.PLDResult`'s EM, the attacks' candidate sets) and names them in
:meth:`Reidentification.figures`; ``rate`` and ``to_dict`` are written once, here.

A learned family's result (:class:`LearnResult`, here too) is the other kind of count:
an optimum or an interval proven by a MILP, kept apart because it carries the solver's
*claim* (``claimed``; ``n_correct`` in its JSON, for compatibility) beside the
*verified* count ``n_correct_verified`` (its keys are ``rlopt learn --json``'s). An intersection attack (:mod:`rlopt.attacks.intersection`)
counts disclosed confidential values, not re-identified records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlopt.status import Status

__all__ = ["Reidentification", "LearnResult"]


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


@dataclass
class LearnResult:
    """The outcome of learning one family on one pair of files.

    ``claimed`` is the solver's incumbent count, unverified (the proven optimum when the
    status is ``optimal``: the solver may have been stopped by the parameter-space
    branch and bound's proof; the JSON key and the old attribute say ``n_correct``);
    ``n_correct_verified`` the count of the returned parameter at the exact margin;
    ``n_correct_strict`` its count with ``> 0`` (ties not counted). ``recount_tol`` is the
    tolerance the solver's claim was checked at. ``bound`` is a proven upper bound on the
    number of correct re-identifications for the family (at this margin); ``at_risk``
    marks the records some admissible parameter re-identifies (with
    ``fix_unreachable``), whichever optimum the solver returned; the truth lies in
    ``[n_correct_verified, bound]``, a single value only when ``status == "optimal"``.
    ``lower_source`` says where ``n_correct_verified`` comes from: ``"solver"`` when the
    MILP found a parameter better than every start, else the label of the start (e.g.
    ``"neutral start (AM)"``) that the solver did not improve on -- never a learned figure.
    """

    family: str
    n_records: int
    claimed: int | None
    n_correct_verified: int | None
    n_correct_strict: int | None
    status: str
    bound: int | None
    gap: float | None
    margin: float
    params: dict | None
    solver: dict
    seconds: dict
    model: dict
    recount_tol: float
    cut_rounds: int = 0
    correct: np.ndarray | None = field(default=None, repr=False)
    reductions: dict = field(default_factory=dict)
    at_risk: np.ndarray | None = field(default=None, repr=False)
    at_risk_exact: bool | None = None
    lower_source: str | None = None
    history: list[dict] = field(default_factory=list)
    verification: dict | None = None
    blocks: dict | None = None  # the block ceilings' certificate (BlockCeiling.to_dict())

    @property
    def n_correct(self) -> int | None:
        """The solver's claim (``claimed``) under its JSON name."""
        return self.claimed

    @property
    def n_at_risk(self) -> int | None:
        """Records that *some* admissible parameter re-identifies at the margin
        (``None`` without screening; an over-count where ``at_risk_exact`` is false)."""
        return None if self.at_risk is None else int(self.at_risk.sum())

    @property
    def rate(self) -> float | None:
        return None if self.n_correct_verified is None else self.n_correct_verified / self.n_records

    def to_dict(self) -> dict:
        """JSON-ready figures (the keys of ``rlopt learn --json``; the claim is ``n_correct``)."""
        return {
            "family": self.family,
            "n_records": self.n_records,
            "n_correct": self.claimed,
            "n_correct_verified": self.n_correct_verified,
            "n_correct_strict": self.n_correct_strict,
            "rate": self.rate,
            "status": self.status,
            "bound": self.bound,
            "gap": self.gap,
            "margin": self.margin,
            "params": self.params,
            "solver": self.solver,
            "seconds": self.seconds,
            "model": self.model,
            "recount_tol": self.recount_tol,
            "cut_rounds": self.cut_rounds,
            "reductions": self.reductions,
            "n_at_risk": self.n_at_risk,
            "at_risk_exact": self.at_risk_exact,
            "lower_source": self.lower_source,
            "history": self.history,
            "verification": self.verification,
            "blocks": self.blocks,
        }
