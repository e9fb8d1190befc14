"""Distance-based record linkage (DBRL) and its evaluation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
from scipy.sparse import issparse

from rlopt.data import KindSpec, validate_pair
from rlopt.data._standardise import DEFAULT_CHUNK_BYTES, categorical_columns
from rlopt.exceptions import InputError
from rlopt.families import DEFAULT_BASELINE, BaselineFamily, Distance, get_family
from rlopt.linkage.boxes import box_verdicts
from rlopt.linkage.brute import Progress, brute_verdicts
from rlopt.linkage.nearest import pair_distances, pair_verdicts, tree_pairs
from rlopt.results import Reidentification
from rlopt.validation import JOBS, Options, validate_params

__all__ = [
    "LinkageResult",
    "link_records",
    "recount",
    "dbrl",
    "TIE_RTOL",
    "verdict",
    "tree_map",
    "resolve_distance",
    "Method",
]

TIE_RTOL = 1e-12
"""Two distances closer than this (relative) count as a tie."""


@dataclass(frozen=True, kw_only=True)
class LinkageResult(Reidentification):
    """The outcome of linking every masked record to its nearest original record (a
    :class:`~rlopt.results.Reidentification`: ``n_records, n_correct, rate, correct,
    linked_to``, the exact count's status).

    ``n_correct`` counts the records whose own original is strictly nearer than every
    other record; ``linked_to`` is the nearest original (the lowest index among ties).

    Attributes
    ----------
    n_ties : int
        Records whose own original shares the smallest distance with another
        record; a tie is not a correct re-identification.
    tied : ndarray of bool, shape (n_records,)
    distance : str
        Name of the distance family.
    separation : ndarray of float, shape (n_records,)
        ``min_{j != i} d(a_i, b_j) - d(a_i, b_i)``: positive when record i is
        re-identified, and by how much (compared with the MILP's margin).
    """

    n_ties: int
    distance: str
    tied: np.ndarray = field(repr=False, compare=False)
    separation: np.ndarray = field(repr=False, compare=False)

    @property
    def source(self) -> str:
        return self.distance

    def figures(self) -> dict:
        return {"distance": self.distance, "n_ties": self.n_ties}


TREE_MIN_RECORDS = 2000
"""Below this many records ``method="auto"`` links by brute force (the tree's set-up costs more)."""

Method = Literal["auto", "tree", "box", "brute"]


def tree_map(distance: Distance, za: np.ndarray, zb: np.ndarray) -> np.ndarray | None:
    """The linear map of ``distance`` when the nearest-neighbour path is exact for these
    files: the distance has one and no attribute is an encoded category (a nominal
    level's mismatch is no linear function of the codes)."""
    if za.shape[0] < 2 or categorical_columns(za, zb).any():
        return None
    return distance.linear_map(za.shape[1])


@validate_params({"method": [Options(("auto", "tree", "box", "brute"))], "jobs": [JOBS]})
def link_records(
    za: np.ndarray,
    zb: np.ndarray,
    distance: Distance,
    *,
    candidates=None,
    max_bytes: int = DEFAULT_CHUNK_BYTES,
    method: Method = "auto",
    jobs: int = 1,
    scheduler: str | None = None,
    progress: Progress | None = None,
) -> LinkageResult:
    """Link each masked record ``za[i]`` to its nearest original ``zb[j]``.

    Record ``i`` is correct when ``d(a_i, b_i) < d(a_i, b_j)`` for every
    ``j != i``, tied when the smallest other distance equals ``d(a_i, b_i)``
    (within a relative :data:`TIE_RTOL`).

    Three exact paths give the same verdicts (``"auto"``: the first that fits, from
    :data:`TREE_MIN_RECORDS` records on): ``"tree"`` for a linear map (am, md, wm, a
    positive semi-definite sb) without nominal attributes (:mod:`rlopt.linkage.nearest`),
    ``"box"`` for a distance that never decreases when a difference grows (owa, the
    Choquet families; :mod:`rlopt.linkage.boxes`), ``"brute"``: every pair, chunk by
    chunk (memory about ``max_bytes`` times a small factor), over ``jobs`` local threads
    or a Dask ``scheduler``. The box and brute-force paths evaluate identical masked
    records once; ``progress(done, n_records)`` follows the run.

    ``candidates`` (bool, ``n x n``, dense or a ``scipy.sparse`` matrix) restricts
    record ``i`` to the originals ``j`` with ``candidates[i, j]`` (a transparency
    attack's intersections; only the listed pairs are evaluated): a record whose
    own original is not a candidate is never correct, one with no other candidate
    is correct (separation ``inf``), one with no candidate at all is linked to ``-1``.
    """
    n_records = za.shape[0]
    if candidates is not None:
        rows, cols = _candidate_pairs(candidates, n_records)
        values = pair_distances(za, zb, distance, rows, cols)
        own, nearest_other, linked_to = pair_verdicts(n_records, rows, cols, values)
    else:
        own, nearest_other, linked_to = _verdicts(
            za,
            zb,
            distance,
            method=method,
            max_bytes=max_bytes,
            jobs=jobs,
            scheduler=scheduler,
            progress=progress,
        )
    correct, tied, separation = verdict(own, nearest_other)
    return LinkageResult(
        n_records=n_records,
        n_correct=int(correct.sum()),
        n_ties=int(tied.sum()),
        distance=distance.family,
        correct=correct,
        tied=tied,
        linked_to=linked_to,
        separation=separation,
    )


def verdict(own: np.ndarray, nearest_other: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``correct, tied, separation`` from each record's own and nearest other distance.

    Correct: ``own < nearest_other`` by more than :data:`TIE_RTOL` of the larger;
    tied: within it. ``inf`` stands for "no such candidate": a record without its
    own original among its candidates is never correct, one without another is
    (separation ``inf``), one with neither has separation ``-inf``.
    """
    with np.errstate(invalid="ignore"):  # inf - inf: neither own nor any other candidate
        gap = nearest_other - own
    separation = np.where(np.isnan(gap), -np.inf, gap)
    scale = np.maximum(np.abs(own), np.abs(nearest_other))
    tol = TIE_RTOL * np.where(np.isfinite(scale), scale, 0.0)
    return own < nearest_other - tol, np.abs(gap) <= tol, separation


def _candidate_pairs(candidates, n_records: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``(row, col)`` pairs a candidate matrix (dense bool or scipy.sparse) allows."""
    shape = getattr(candidates, "shape", None)
    if shape != (n_records, n_records):
        raise InputError(f"candidates of shape {shape}; expected ({n_records}, {n_records})")
    if issparse(candidates):
        coo = candidates.tocoo()
        keep = coo.data.astype(bool)
        return coo.row[keep].astype(np.int64), coo.col[keep].astype(np.int64)
    rows, cols = np.nonzero(np.asarray(candidates, dtype=bool))
    return rows.astype(np.int64), cols.astype(np.int64)


def _verdicts(
    za: np.ndarray,
    zb: np.ndarray,
    distance: Distance,
    *,
    method: Method,
    max_bytes: int,
    jobs: int,
    scheduler: str | None,
    progress: Progress | None,
):
    """Each record's own distance, nearest other distance and linked original, over every
    original: by the KD-tree where the distance has a linear map and ``method`` allows
    (``"auto"``: from :data:`TREE_MIN_RECORDS` records on), by boxes where it is
    monotone, else pair by pair."""
    n_records = za.shape[0]
    small = method == "auto" and n_records < TREE_MIN_RECORDS
    matrix = None if method in ("brute", "box") or small else tree_map(distance, za, zb)
    skip_boxes = method in ("brute", "tree") or small or n_records < 2 or matrix is not None
    slack = None if skip_boxes else distance.monotone_slack()
    if method == "tree" and matrix is None:
        raise InputError(
            f"{distance.family}: no exact nearest-neighbour path for this distance on these files "
            "(it needs am, md, wm, wm_m or a positive semi-definite sb, and no nominal attribute); "
            "use method='brute'"
        )
    if method == "box" and slack is None:
        raise InputError(
            f"{distance.family}: no exact box path for this distance (it needs a distance that never "
            "decreases when a difference grows: am, wm, owa, the Choquet families); use method='brute'"
        )
    if slack is not None:
        return box_verdicts(za, zb, distance, slack, max_bytes=max_bytes, progress=progress)
    if matrix is None:
        return brute_verdicts(
            za, zb, distance, max_bytes=max_bytes, jobs=jobs, scheduler=scheduler, progress=progress
        )
    rows, cols = tree_pairs(za, zb, matrix, n_jobs=jobs)
    verdicts = pair_verdicts(n_records, rows, cols, pair_distances(za, zb, distance, rows, cols))
    if progress is not None:
        progress(n_records, n_records)
    return verdicts


def dbrl(
    original,
    masked=None,
    *,
    distance: str | Distance = DEFAULT_BASELINE,
    columns: Sequence[str] | None = None,
    id_column: str | None = None,
    drop_nonfinite: bool = False,
    kinds: KindSpec | dict | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    progress: Progress | None = None,
) -> LinkageResult:
    """Distance-based record linkage of a masked file against its original.

    Parameters
    ----------
    original, masked : DataFrame or array-like of shape (n_records, n_attributes)
        The intruder's file and the protected file; see
        :func:`rlopt.data.validate_pair` for alignment and checks (or validated
        :class:`~rlopt.data.LinkageData` alone).
    distance : str or Distance, default=DEFAULT_BASELINE (``"am"``)
        A baseline family name (one of ``rlopt.families.BASELINES``) or a fitted distance.
    columns, id_column, drop_nonfinite, kinds
        Passed to :func:`rlopt.data.validate_pair` (``kinds``: declared ordinal
        and nominal attributes, the policy for categorical blanks).
    jobs, scheduler, progress
        Local threads, or a Dask scheduler's address, and a ``progress(done, n)``
        callback (see :func:`link_records`; the verdicts never depend on them).

    Returns
    -------
    LinkageResult

    Examples
    --------
    >>> from rlopt import build, published_recipe, dbrl
    >>> original, masked = build(published_recipe("M4-33"))
    >>> dbrl(original, masked, distance="am").rate  # doctest: +SKIP
    """
    data = validate_pair(
        original, masked, columns=columns, id_column=id_column, drop_nonfinite=drop_nonfinite, kinds=kinds
    )
    za, zb = data.encoded.za, data.encoded.zb
    distance = resolve_distance(distance, za, zb, data.columns)
    linked = link_records(za, zb, distance, jobs=jobs, scheduler=scheduler, progress=progress)
    return replace(linked, kinds=data.kinds)


def resolve_distance(
    distance: str | Distance, za: np.ndarray, zb: np.ndarray, columns: Sequence[str]
) -> Distance:
    """A baseline family's name becomes its distance on these standardised files
    (masked ``za``, original ``zb``); a fitted distance is returned as it is."""
    if isinstance(distance, Distance):
        return distance
    family = get_family(distance)
    if not isinstance(family, BaselineFamily):
        raise InputError(
            f"distance family {distance!r} must be learned first; pass a fitted distance instead of its name"
        )
    return family.from_data(za, zb, tuple(columns))


def recount(
    za: np.ndarray,
    zb: np.ndarray,
    distance,
    *,
    margin: float,
    tol: float,
    candidates: np.ndarray | None = None,
    method: Method = "auto",
) -> tuple[LinkageResult, np.ndarray]:
    """Reference recount: records whose ``min_j d(a_i,b_j) - d(a_i,b_i) >= margin - tol``
    (``j`` among the record's candidates when ``candidates`` is given; ``method`` as in
    :func:`rlopt.linkage.link_records`)."""
    linked = link_records(za, zb, distance, candidates=candidates, method=method)
    return linked, linked.separation >= margin - tol
