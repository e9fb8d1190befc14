"""The exact set of modifications consistent with two published models (Torra's talk,
"integral privacy"; Torra & Navarro-Arribas, CANS 2016), on a small population.

A database ``X`` is updated to ``X' = X + mu``: ``mu`` removes the records ``R`` of ``X``
and adds the records ``D`` of the population outside ``X``. An intruder knows part of
the data ``S`` (``known``, a subset of ``X``), the learning algorithm ``A`` and both
published models ``G = A(X)`` and ``G' = A(X')``. Every database of the population is a
candidate, so the intruder's set of consistent modifications is

    M = {mu : G = A(X), G' = A(X + mu), S in X, |mu| <= max_changes},

with ``mu`` written as signed records (``-r`` removed, ``+d`` added). The model is
*integrally private* when ``M`` is not empty and the intersection of its elements is
(no record is removed or added in every explanation); *integrally private a la
k-anonymity* when ``M`` has at least ``k`` elements; *k-anonymous integrally private*
when ``M`` has at least ``k`` minimal elements (modifications form a lattice under
inclusion). Records in every database ``X`` that explains ``G`` and some ``G'``, beyond
``S``, are inferred members (a membership attack).

Exact: every subset of the population is learned once (``2^n`` fits), so ``n`` is at
most :data:`MAX_POPULATION`.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

import pandas as pd

from rlopt.exceptions import InputError
from rlopt.integral.learners import Learner, rows

__all__ = ["MAX_POPULATION", "IntegralPrivacy", "Modification", "consistent_modifications", "published"]

MAX_POPULATION = 16
"""The largest population whose every subset is learned (65,536 fits)."""


@dataclass(frozen=True, order=True)
class Modification:
    """``mu``: the records removed from ``X`` and those added to it."""

    removed: frozenset = field(default_factory=frozenset)
    added: frozenset = field(default_factory=frozenset)

    @property
    def elements(self) -> frozenset:
        """``mu`` as signed records: ``("-", r)`` removed, ``("+", d)`` added."""
        return frozenset({("-", r) for r in self.removed} | {("+", d) for d in self.added})

    def __len__(self) -> int:
        return len(self.removed) + len(self.added)

    def within(self, other: Modification) -> bool:
        """Whether every change of this modification is one of ``other``'s."""
        return self.removed <= other.removed and self.added <= other.added

    def __str__(self) -> str:
        changes = [f"-{r}" for r in sorted(self.removed, key=str)] + [
            f"+{d}" for d in sorted(self.added, key=str)
        ]
        return "{" + ", ".join(changes) + "}"


@dataclass
class IntegralPrivacy:
    """The consistent modifications ``M`` and what they reveal."""

    modifications: list[Modification]
    databases: list[frozenset]  # every candidate X of some consistent modification
    known: frozenset

    @property
    def size(self) -> int:
        return len(self.modifications)

    @property
    def minimal(self) -> list[Modification]:
        """The elements of ``M`` that contain no other element of ``M``."""
        return [m for m in self.modifications if not any(o != m and o.within(m) for o in self.modifications)]

    @property
    def k(self) -> int:
        """The ``k`` of k-anonymous integral privacy: the number of minimal elements."""
        return len(self.minimal)

    @property
    def removed_surely(self) -> frozenset:
        """Records removed in every consistent modification (empty when ``M`` is)."""
        sets = [m.removed for m in self.modifications]
        return frozenset.intersection(*sets) if sets else frozenset()

    @property
    def added_surely(self) -> frozenset:
        """Records added in every consistent modification (empty when ``M`` is)."""
        sets = [m.added for m in self.modifications]
        return frozenset.intersection(*sets) if sets else frozenset()

    @property
    def members(self) -> frozenset:
        """Records in every candidate ``X``, beyond the known ones: inferred members."""
        return (frozenset.intersection(*self.databases) - self.known) if self.databases else frozenset()

    @property
    def integrally_private(self) -> bool:
        """``M`` not empty and no record in all its elements."""
        return bool(self.modifications) and not (self.removed_surely or self.added_surely)

    def k_anonymous(self, k: int) -> bool:
        """At least ``k`` minimal elements (k-anonymous integral privacy)."""
        _check_k(k)
        return self.k >= k

    def to_dict(self) -> dict:
        return {
            "size": self.size,
            "k": self.k,
            "minimal": [str(m) for m in self.minimal],
            "removed_surely": sorted(map(str, self.removed_surely)),
            "added_surely": sorted(map(str, self.added_surely)),
            "members": sorted(map(str, self.members)),
            "integrally_private": self.integrally_private,
            "modifications": [str(m) for m in self.modifications],
        }


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k={k!r}; expected an integer >= 1")


def published(population: pd.DataFrame, learner: Learner, records: Iterable[Hashable]) -> Hashable:
    """The key of the model ``learner`` makes from ``records`` (labels of ``population``)."""
    return learner(rows(population, records))


def consistent_modifications(
    population: pd.DataFrame,
    learner: Learner,
    before: Hashable,
    after: Hashable,
    *,
    known: Iterable[Hashable] = (),
    max_changes: int = 2,
) -> IntegralPrivacy:
    """``M`` for the published keys ``before`` (``G``) and ``after`` (``G'``): every pair of
    databases of ``population`` (its index labels are the records) with ``known`` in the
    first, the keys ``before`` and ``after``, and at most ``max_changes`` records apart."""
    records = list(population.index)
    n = len(records)
    if population.index.has_duplicates:
        raise InputError("the population's index has duplicate labels; expected one label per record")
    if n > MAX_POPULATION:
        raise InputError(
            f"a population of {n} records; the exact set learns every subset (2^n fits): expected at most "
            f"{MAX_POPULATION}"
        )
    known = frozenset(known)
    missing = sorted(map(str, known - set(records)))
    if missing:
        raise InputError(f"known records {missing} are not in the population")
    if isinstance(max_changes, bool) or not isinstance(max_changes, int) or not 0 <= max_changes <= n:
        raise InputError(
            f"max_changes={max_changes!r}; expected an integer from 0 to the population's {n} records"
        )
    keys = {
        frozenset(subset): learner(rows(population, subset))
        for size in range(n + 1)
        for subset in itertools.combinations(records, size)
    }
    before_sets = [d for d, key in keys.items() if key == before and known <= d]
    after_sets = [d for d, key in keys.items() if key == after]
    found: set[Modification] = set()
    databases: set[frozenset] = set()
    for x in before_sets:
        for x_after in after_sets:
            if len(x ^ x_after) <= max_changes:
                found.add(Modification(x - x_after, x_after - x))
                databases.add(x)
    ordered = sorted(found, key=lambda m: (len(m), str(m)))
    return IntegralPrivacy(ordered, sorted(databases, key=lambda d: (len(d), sorted(map(str, d)))), known)
