"""What every transparency attack shares: the result, and linkage inside candidate sets."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rlopt.data import LinkageData
from rlopt.families import Distance
from rlopt.linkage import link_records
from rlopt.linkage.distance_based import resolve_distance
from rlopt.results import Reidentification

__all__ = ["AttackResult", "PosteriorAttackResult", "link_in_candidates"]


@dataclass(frozen=True, kw_only=True)
class Attacked(Reidentification):
    """A re-identification by a transparency attack: the masking ``method`` it exploits
    (a name of :data:`rlopt.attacks.ATTACKS`) and the ``parameters`` it assumed."""

    method: str
    parameters: dict

    @property
    def source(self) -> str:
        return f"{self.method} attack"

    def figures(self) -> dict:
        return {"method": self.method, "parameters": self.parameters}


@dataclass(frozen=True, kw_only=True)
class PosteriorAttackResult(Attacked):
    """An attack that ranks each record's candidates by a posterior (fuzzy, PRAM): a
    record is correct when its own masked record is strictly the most probable.

    Attributes
    ----------
    expected_correct : float
        ``sum_j P(j | j)``: the expected number of correct links when each original
        record is linked to a masked record drawn from its posterior.
    posterior_own : ndarray of shape (n_records,)
        ``P(j | j)``, the posterior of each record's own masked record.
    """

    expected_correct: float
    posterior_own: np.ndarray = field(repr=False, compare=False)

    @property
    def expected_rate(self) -> float:
        """``expected_correct / n_records``."""
        return self.expected_correct / self.n_records

    def figures(self) -> dict:
        return super().figures() | {
            "expected_correct": self.expected_correct,
            "expected_rate": self.expected_rate,
        }


@dataclass(frozen=True, kw_only=True)
class AttackResult(Attacked):
    """The outcome of a transparency attack: candidate sets, then linkage inside them.

    For each intruder (original) record ``x`` the attack narrows the masked file
    to a candidate set; a singleton set is a *sure* match, an empty set means
    the assumed parameter is too small for ``x``; otherwise ``x`` is linked to
    the nearest candidate.

    Attributes
    ----------
    method : str
        the masking method attacked, a name of :data:`rlopt.attacks.ATTACKS` (``"rank_swap"``, ``"mdav"``).
    n_records, n_correct : int
        A record is correct when its own masked record is in its candidate set
        and strictly nearer than every other candidate (a tie is not correct).
    rate : float
        ``n_correct / n_records``.
    n_sure : int
        Candidate sets with exactly one record.
    n_sure_correct : int
        Of those, the ones that are the record's own masked record (all of them
        when the assumed parameter is at least the true one of a bounded method).
    n_empty : int
        Empty candidate sets.
    n_missed : int
        Records whose own masked record is not in their candidate set (empty
        sets included): what the attack misses when its assumption is wrong.
    distance : str
        The distance used inside the candidate sets.
    parameters : dict
        The attack's assumption (window in ranks, p, groups and k).
    candidates : ndarray of int, shape (n_records,)
        Size of each record's candidate set.
    correct, contains_own : ndarray of bool, shape (n_records,)
    linked_to : ndarray of int, shape (n_records,)
        The masked record each original record is linked to; -1 for an empty set.
    """

    n_sure: int
    n_sure_correct: int
    n_empty: int
    n_missed: int
    distance: str
    candidates: np.ndarray = field(repr=False, compare=False)
    contains_own: np.ndarray = field(repr=False, compare=False)

    def summary(self) -> list[str]:
        """The attack's figures in one line (and a second when intersections were empty)."""
        lines = [
            f"{self.method} attack ({self.distance} inside the intersections): "
            f"{self.n_correct} of {self.n_records} records re-identified "
            f"({100 * self.rate:.2f}%); {self.n_sure_correct} sure matches "
            f"({100 * self.sure_rate:.2f}%), {self.n_empty} empty intersection(s), "
            f"mean intersection size {self.candidates.mean():.2f}"
        ]
        if self.n_empty:
            lines.append(
                "empty intersections: the assumed parameter is smaller than the one used "
                "for masking (or the file was masked otherwise)"
            )
        return lines

    @property
    def sure_rate(self) -> float:
        """Share of records re-identified with certainty (a correct singleton)."""
        return self.n_sure_correct / self.n_records

    def figures(self) -> dict:
        return super().figures() | {
            "distance": self.distance,
            "n_sure": self.n_sure,
            "n_sure_correct": self.n_sure_correct,
            "sure_rate": self.sure_rate,
            "n_empty": self.n_empty,
            "n_missed": self.n_missed,
            "mean_candidates": float(self.candidates.mean()),
        }


def link_in_candidates(
    data: LinkageData, candidates: np.ndarray, *, method: str, distance: str | Distance, parameters: dict
) -> AttackResult:
    """Link every original record to its nearest masked record inside its candidate set
    (``candidates[x, j]``: masked record ``j`` may be original record ``x``'s; a dense bool
    array, or a ``scipy.sparse`` one for files too large for ``N^2`` entries)."""
    za, zb = data.encoded.za, data.encoded.zb
    dist = resolve_distance(distance, za, zb, data.columns)
    # the intruder's side: original records are linked to masked ones (the families'
    # distances depend on the differences only, so d(x, m) = d(m, x))
    linked = link_records(zb, za, dist, candidates=candidates)
    sizes = np.asarray(candidates.sum(axis=1)).ravel().astype(np.int64)
    contains_own = np.asarray(candidates.diagonal(), dtype=bool).copy()
    sure = sizes == 1
    return AttackResult(
        method=method,
        n_records=linked.n_records,
        n_correct=linked.n_correct,
        n_sure=int(sure.sum()),
        n_sure_correct=int((sure & contains_own).sum()),
        n_empty=int((sizes == 0).sum()),
        n_missed=int((~contains_own).sum()),
        distance=dist.family,
        parameters=parameters,
        candidates=sizes,
        correct=linked.correct,
        contains_own=contains_own,
        linked_to=linked.linked_to,
    )
