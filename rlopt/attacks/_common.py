"""What every transparency attack shares: the result, and linkage inside candidate sets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from rlopt.data import DEFAULT_CHUNK_BYTES, LinkageData, chunk_rows, standardise
from rlopt.exceptions import InputError
from rlopt.families import BaselineFamily, Distance, get_family
from rlopt.linkage import TIE_RTOL

__all__ = ["AttackResult"]

CandidateChunk = Callable[[int, int], np.ndarray]
"""``(start, stop) -> bool array (stop - start, n_records)``: the masked records
that intruder records ``start .. stop-1`` may be."""


@dataclass(frozen=True)
class AttackResult:
    """The outcome of a transparency attack: candidate sets, then linkage inside them.

    For each intruder (original) record ``x`` the attack narrows the masked file
    to a candidate set; a singleton set is a *sure* match, an empty set means
    the assumed parameter is too small for ``x``; otherwise ``x`` is linked to
    the nearest candidate.

    Attributes
    ----------
    method : str
        ``"rank-swapping"`` or ``"microaggregation"``.
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

    method: str
    n_records: int
    n_correct: int
    rate: float
    n_sure: int
    n_sure_correct: int
    n_empty: int
    n_missed: int
    distance: str
    parameters: dict
    candidates: np.ndarray = field(repr=False)
    correct: np.ndarray = field(repr=False)
    contains_own: np.ndarray = field(repr=False)
    linked_to: np.ndarray = field(repr=False)

    @property
    def sure_rate(self) -> float:
        """Share of records re-identified with certainty (a correct singleton)."""
        return self.n_sure_correct / self.n_records

    def to_dict(self) -> dict:
        """The summary figures, JSON-ready."""
        return {
            "method": self.method, "distance": self.distance, "parameters": self.parameters,
            "n_records": self.n_records, "n_correct": self.n_correct, "rate": self.rate,
            "n_sure": self.n_sure, "n_sure_correct": self.n_sure_correct,
            "sure_rate": self.sure_rate, "n_empty": self.n_empty, "n_missed": self.n_missed,
            "mean_candidates": float(self.candidates.mean()),
        }


def resolve_distance(distance: str | Distance, zm: np.ndarray, zx: np.ndarray,
                     columns) -> Distance:
    """A baseline family name becomes its distance on these files; a Distance stays."""
    if isinstance(distance, Distance):
        return distance
    family = get_family(distance)
    if not isinstance(family, BaselineFamily):
        raise InputError(f"distance family {distance!r} must be learned first; "
                         "pass a fitted distance instead of its name")
    return family.from_data(zm, zx, columns)


def link_in_candidates(data: LinkageData, candidates_of: CandidateChunk, *, method: str,
                       distance: str | Distance, parameters: dict,
                       max_bytes: int = DEFAULT_CHUNK_BYTES) -> AttackResult:
    """Link every original record to its nearest masked record inside its candidate set."""
    zm, zx = standardise(data.masked), standardise(data.original)
    dist = resolve_distance(distance, zm, zx, data.columns)
    n = data.n_records
    sizes = np.zeros(n, dtype=np.int64)
    correct = np.zeros(n, dtype=bool)
    contains_own = np.zeros(n, dtype=bool)
    linked_to = np.full(n, -1, dtype=np.int64)
    step = chunk_rows(n, data.n_attributes, max_bytes=max_bytes)
    for start in range(0, n, step):
        stop = min(n, start + step)
        rows = np.arange(stop - start)
        allowed = candidates_of(start, stop)
        d = dist.pairwise(zm, zx[start:stop]).T  # d[x, j] = d(masked j, original x)
        d = np.where(allowed, d, np.inf)
        sizes[start:stop] = allowed.sum(axis=1)
        contains_own[start:stop] = allowed[rows, rows + start]
        nonempty = sizes[start:stop] > 0
        linked_to[start:stop] = np.where(nonempty, d.argmin(axis=1), -1)
        own = d[rows, rows + start].copy()
        d[rows, rows + start] = np.inf
        other = d.min(axis=1)
        finite_other = np.isfinite(other)
        own = np.where(contains_own[start:stop], own, 0.0)  # not a candidate: never correct
        other_or_own = np.where(finite_other, other, own)
        tol = TIE_RTOL * np.maximum(np.abs(own), np.abs(other_or_own))
        correct[start:stop] = contains_own[start:stop] & (
            ~finite_other | (own < other_or_own - tol))
    sure = sizes == 1
    return AttackResult(
        method=method, n_records=n, n_correct=int(correct.sum()), rate=float(correct.mean()),
        n_sure=int(sure.sum()), n_sure_correct=int((sure & contains_own).sum()),
        n_empty=int((sizes == 0).sum()), n_missed=int((~contains_own).sum()),
        distance=dist.family, parameters=parameters, candidates=sizes, correct=correct,
        contains_own=contains_own, linked_to=linked_to,
    )
