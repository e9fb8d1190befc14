"""The verified incumbent portfolio: every admissible parameter a run can name,
each recounted by the family's reference evaluator, run before the MILP.

A learning run's lower end is the best *recounted* count of an admissible
parameter it has met. Before the solve these are

1. the starts: the neutral parameter (the AM ordering), every known distance the
   family contains (a smaller family's optimum, saved parameters;
   :func:`rlopt.families.containment.embed`), the screening LPs' best witness,
   and the quadratic forms of two classical metric learners projected into the
   family (:func:`quadratic_starts`): MD's matrix and the matrix scikit-learn's
   Neighbourhood Components Analysis learns on the pairs, each over its trace
   (sb, sb_nc; sb_pd when its smallest eigenvalue allows) and its diagonal
   normalised to weights (wm, wm_m, ci, ci_m; not OWA, whose weights follow
   the order of the differences, not the attributes);
2. a chain of searches from the best start (with a deadline and time left, from
   the next distinct starts too, :data:`MAX_CHAINS`), each from the chain's best so far:
   :func:`~rlopt.milp.incumbents.surrogate.surrogate_ascent` (a smooth surrogate of the
   count, the big step for sb), :func:`~rlopt.milp.incumbents.line_search.line_search_ascent`
   (exact line searches on the count, the fastest climb for wm) and
   :func:`~rlopt.milp.incumbents.greedy.greedy_add` (one LP per record that might join).

The searches ignore the cutting planes of sb_nc and sb_pd: their results are
repaired by the family (:meth:`~rlopt.families.LearnedFamily.repair`) and kept
only when admissible. Nothing here is a bound; the best item is the MIP start.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlopt.data._standardise import categorical_columns
from rlopt.exceptions import InputError
from rlopt.families import LearnedFamily
from rlopt.families.bilinear import BilinearDistance
from rlopt.families.containment import embed
from rlopt.families.md import Mahalanobis, MahalanobisDistance
from rlopt.families.wm import WeightedMeanDistance
from rlopt.linkage import LinkageResult
from rlopt.linkage.distance_based import recount
from rlopt.milp.ceilings.certificate import SEARCH_NAMES as _NAMES
from rlopt.milp.incumbents.greedy import greedy_add
from rlopt.milp.incumbents.line_search import line_search_ascent
from rlopt.milp.incumbents.surrogate import surrogate_ascent
from rlopt.milp.margins import PairMargins
from rlopt.processes import one_native_thread

__all__ = [
    "Incumbent",
    "recount_parameter",
    "search_incumbents",
    "quadratic_starts",
    "nca_matrix",
    "SEARCHES",
    "NCA_SHARE",
    "NCA_MAX_ITER",
]

NCA_SHARE = 0.15
"""Share of the time left for the searches that scikit-learn's NCA may use for its start."""

NCA_MAX_ITER = 50
"""Iterations of scikit-learn's NCA at most (each costs ``O(N^2 n)``; it also stops at its deadline)."""

NCA_MAX_RECORDS = 500
"""NCA is fitted on at most this many record pairs (drawn with a fixed seed): an iteration
costs ``O(N^2 n)`` and its deadline is checked only between iterations, so on 1918 mixed
records (acs12 doubled) its first iteration took 3.3 s of a 5 s limit; the start it gives
is recounted on every record like any other."""

SEARCHES = ("surrogate", "line_search", "greedy_add")
"""The searches, in the order they run (each a switch of :class:`~rlopt.milp.reductions.Reductions`)."""

SHARES = {"surrogate": 0.5, "line_search": 0.25, "greedy_add": 1.0}
"""With a deadline, each search may use this share of the time left when it starts
(the surrogate ascent half of it, the line search a quarter of the rest, the greedy
add the rest: on sb the line search rarely adds to the surrogate's result, the
greedy add does)."""

MAX_CHAINS = 3
"""With a deadline, the chain of searches runs from up to this many distinct starts,
best first, while time is left (without one, from the best start only)."""


@dataclass(frozen=True)
class Incumbent:
    """An admissible parameter with its reference recount, and where it came from."""

    label: str
    theta: np.ndarray
    linked: LinkageResult
    correct: np.ndarray  # at the margin up to the recount's tolerance
    seconds: float = 0.0  # what its recount took
    # the records it re-identifies at the exact margin (``None``: as ``correct``)
    exact: np.ndarray | None = field(default=None, repr=False)

    @property
    def count(self) -> int:
        """Its count up to the recount's tolerance (what the searches compare)."""
        return int(self.correct.sum())

    @property
    def exact_count(self) -> int:
        """Its count at the exact margin: what a run may report of it."""
        return self.count if self.exact is None else int(self.exact.sum())


def recount_parameter(
    label: str,
    theta: np.ndarray,
    za,
    zb,
    family: LearnedFamily,
    columns,
    *,
    margin: float,
    tol: float,
    candidates=None,
) -> Incumbent:
    t0 = time.perf_counter()
    linked, correct = recount(
        za, zb, family.distance(theta, columns), margin=margin, tol=tol, candidates=candidates
    )
    seconds = time.perf_counter() - t0
    return Incumbent(
        label, np.asarray(theta, dtype=float), linked, correct, seconds, linked.separation >= margin
    )


def search_incumbents(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    columns,
    named: Sequence[tuple[str, np.ndarray]],
    *,
    margin: float,
    tol: float,
    feasibility_tol: float,
    searches: Sequence[str] = SEARCHES,
    deadline: float | None = None,
    at_risk: np.ndarray | None = None,
    candidates: np.ndarray | None = None,
    quadratic: bool = False,
    nca: bool = True,
    found: Callable[[int, str], object] | None = None,
    met: Sequence[Incumbent] = (),
) -> list[Incumbent]:
    """Recount the admissible ones of the ``named`` parameters, then run the
    ``searches`` from the best so far (``met``: parameters recounted before, the first
    ones) until ``deadline`` (``time.perf_counter()``).

    Returns every admissible parameter met, recounted, best first (ties keep the
    order they were met in). ``found(count, label)`` is called for each.
    ``at_risk``: the records the screening did not prove unreachable (the greedy
    add tries only those). With ``candidates`` (a restricted linkage) only the
    named parameters are counted: the searches compare every pair. ``quadratic``:
    after the named ones, MD's and (with ``nca``) NCA's matrices projected into the
    family (:func:`quadratic_starts`; NCA may use :data:`NCA_SHARE` of the time left).
    """
    keep = _Keeper(za, zb, family, columns, margin, tol, feasibility_tol, candidates, found)
    keep.met.extend(met)
    for label, theta in named:
        keep(label, theta)
    if quadratic:
        now = time.perf_counter()
        until = None if deadline is None else now + NCA_SHARE * max(0.0, deadline - now)
        for label, theta in quadratic_starts(za, zb, family, columns, deadline=until, nca=nca):
            keep(label, theta)
    if not keep.met or candidates is not None or not searches:
        return _best_first(keep.met)
    unknown = sorted(set(searches) - set(SEARCHES))
    if unknown:
        raise ValueError(f"unknown searches {unknown}; expected some of {list(SEARCHES)}")
    margins = PairMargins.build(za, zb, family, deadline=deadline)
    # a chain of the searches from the best start; with time left, from the next distinct starts
    roots = _distinct(_best_first(keep.met))[: 1 if deadline is None else MAX_CHAINS]
    for root in roots:
        if deadline is not None and time.perf_counter() > deadline:
            break
        _chain(keep, root, searches, margins, deadline=deadline, at_risk=at_risk)
    return _best_first(keep.met)


@dataclass
class _Keeper:
    """``keep(label, theta)``: recount ``theta`` when it is admissible (or, for a family
    with cuts, once repaired), add it to ``met`` and report it to ``found``; returns
    the recounted item, ``None`` for a parameter that is not admissible."""

    za: np.ndarray
    zb: np.ndarray
    family: LearnedFamily
    columns: Any
    margin: float
    tol: float
    feasibility_tol: float
    candidates: np.ndarray | None
    found: Callable[[int, str], object] | None
    met: list[Incumbent] = field(default_factory=list)

    def __call__(self, label: str, theta: np.ndarray | None) -> Incumbent | None:
        family, za, zb = self.family, self.za, self.zb
        if theta is None:
            return None
        if not family.is_admissible(theta, za, zb, tol=self.feasibility_tol):
            theta = family.repair(theta) if family.has_cuts else None
            if theta is None or not family.is_admissible(theta, za, zb, tol=self.feasibility_tol):
                return None
            label = f"{label} (repaired)"
        item = recount_parameter(
            label,
            theta,
            za,
            zb,
            family,
            self.columns,
            margin=self.margin,
            tol=self.tol,
            candidates=self.candidates,
        )
        self.met.append(item)
        if self.found is not None:
            self.found(item.exact_count, label)  # a count the parameter reaches at the margin
        return item


def _chain(
    keep: _Keeper,
    root: Incumbent,
    searches: Sequence[str],
    margins: PairMargins | None,
    *,
    deadline: float | None,
    at_risk: np.ndarray | None,
) -> None:
    """The ``searches`` in :data:`SEARCHES` order, each from the best the chain from
    ``root`` has reached, each within its :data:`SHARES` of the time left; every
    result goes through ``keep``."""
    best, steps = root, list[str]()  # the searches that led to ``best``, in order
    for name in SEARCHES:
        now = time.perf_counter()
        if name not in searches or (deadline is not None and now > deadline):
            continue
        until = None if deadline is None else now + SHARES[name] * (deadline - now)
        if name != "surrogate" and margins is None:
            continue  # the pairs' margins do not fit in memory
        theta = _run_search(name, keep, best.theta, margins, deadline=until, at_risk=at_risk)
        path = steps + [_NAMES[name]]
        item = keep(f"{' + '.join(path)} from the {root.label}", theta)
        if item is not None and item.count > best.count:
            best, steps = item, path


def _run_search(
    name: str,
    keep: _Keeper,
    theta: np.ndarray,
    margins: PairMargins | None,
    *,
    deadline: float | None,
    at_risk: np.ndarray | None,
) -> np.ndarray:
    """The parameter the search ``name`` reaches from ``theta`` by ``deadline`` (on
    ``keep``'s files and family; only the surrogate ascent runs without ``margins``)."""
    za, zb, family, margin = keep.za, keep.zb, keep.family, keep.margin
    if name == "surrogate":
        return surrogate_ascent(za, zb, family, theta, margin=margin, margins=margins, deadline=deadline)[0]
    assert margins is not None
    if name == "line_search":
        return line_search_ascent(za, zb, family, theta, margin=margin, margins=margins, deadline=deadline)
    return greedy_add(
        za, zb, family, theta, margin=margin, margins=margins, deadline=deadline, candidates=at_risk
    )[0]


class _OutOfTime(Exception):
    pass


_NCA_DONE: dict = {}
"""The last finished NCA fit (key: the files' bytes and shape, ``max_iter``)."""


def nca_matrix(
    za: np.ndarray, zb: np.ndarray, *, deadline: float | None = None, max_iter: int = NCA_MAX_ITER
) -> np.ndarray | None:
    """``L^T L`` of scikit-learn's :class:`~sklearn.neighbors.NeighborhoodComponentsAnalysis`
    fitted on the ``2N`` records with the pair ``(a_i, b_i)`` as class ``i`` (the
    map that makes each masked record's own original its likeliest neighbour; at most
    :data:`NCA_MAX_RECORDS` pairs);
    the last iterate when ``deadline`` (``time.perf_counter()``) passes first,
    ``None`` when not even one iteration fits or the result is not finite.

    NCA's map is linear in the records, which a 0/1 mismatch is not: on a mixed
    file it is fitted on the numeric and ordinal attributes, and the categorical
    ones get zero rows and columns."""
    categorical = categorical_columns(za, zb)
    if categorical.any():
        kept = np.flatnonzero(~categorical)
        inner = (
            nca_matrix(za[:, kept], zb[:, kept], deadline=deadline, max_iter=max_iter) if kept.size else None
        )
        if inner is None:
            return None
        full = np.zeros((za.shape[1], za.shape[1]))
        full[np.ix_(kept, kept)] = inner
        return full
    from sklearn.neighbors import NeighborhoodComponentsAnalysis

    n_records, n_attributes = za.shape
    if n_records < 2 or (deadline is not None and time.perf_counter() > deadline):
        return None
    if n_records > NCA_MAX_RECORDS:
        drawn = np.sort(np.random.default_rng(0).choice(n_records, NCA_MAX_RECORDS, replace=False))
        za, zb, n_records = za[drawn], zb[drawn], NCA_MAX_RECORDS
    key = (hashlib.sha1(za.tobytes() + zb.tobytes()).hexdigest(), za.shape, max_iter)
    if key in _NCA_DONE:  # e.g. rlopt risk learns several families on the same files
        return _NCA_DONE[key]
    latest: list[np.ndarray] = []

    def watch(transformation, n_iter):  # NCA's callback: keep the iterate, stop at the deadline
        latest[:] = [np.asarray(transformation).reshape(-1, n_attributes)]
        if deadline is not None and time.perf_counter() > deadline:
            raise _OutOfTime

    nca = NeighborhoodComponentsAnalysis(init="identity", max_iter=max_iter, random_state=0, callback=watch)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a ConvergenceWarning at max_iter is expected
            with one_native_thread():
                nca.fit(np.vstack([za, zb]), np.tile(np.arange(n_records), 2))
        components, finished = nca.components_, True
    except _OutOfTime:
        components, finished = latest[0], False
    matrix = components.T @ components
    matrix = matrix if np.isfinite(matrix).all() and np.trace(matrix) > 0 else None
    if finished:  # a fit stopped by its deadline is not what a longer one would give
        _NCA_DONE.clear()
        _NCA_DONE[key] = matrix
    return matrix


def quadratic_starts(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    columns,
    *,
    deadline: float | None = None,
    nca: bool = True,
) -> list[tuple[str, np.ndarray]]:
    """The family's parameters for MD's matrix and NCA's (see the module), where the
    family contains them; admissibility is checked by the caller."""
    n_attributes = za.shape[1]
    probe = np.eye(n_attributes) / n_attributes  # does the family contain quadratic forms or weights at all?
    if (
        embed(BilinearDistance(probe, columns), family, n_attributes) is None
        and embed(WeightedMeanDistance(np.diag(probe), columns), family, n_attributes) is None
    ):
        return []  # e.g. OWA: no start from MD or NCA (nor their cost)
    matrices = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # MD's own warnings belong to an MD run, not to this start
            md = Mahalanobis().from_data(za, zb, columns)
            assert isinstance(md, MahalanobisDistance)
            matrices.append(("MD", md.precision))
    except InputError:
        pass  # MD is undefined here (the files are equal): no start from it
    if nca:
        matrix = nca_matrix(za, zb, deadline=deadline)
        if matrix is not None:
            matrices.append(("NCA", matrix))
    named = []
    for source, matrix in matrices:
        trace = float(np.trace(matrix))
        if not trace > 0:
            continue
        for label, distance in (
            (f"{source}'s matrix over its trace", BilinearDistance(matrix / trace, columns)),
            (f"{source}'s diagonal as weights", WeightedMeanDistance(np.diag(matrix) / trace, columns)),
        ):
            theta = embed(distance, family, n_attributes)
            if theta is not None:
                named.append((label, theta))
    return named


def _best_first(items: list[Incumbent]) -> list[Incumbent]:
    return sorted(items, key=lambda item: -item.count)


def _distinct(items: list[Incumbent]) -> list[Incumbent]:
    """The items without repeats of an earlier item's parameter."""
    kept: list[Incumbent] = []
    for item in items:
        if not any(np.allclose(item.theta, other.theta, rtol=0, atol=1e-12) for other in kept):
            kept.append(item)
    return kept
