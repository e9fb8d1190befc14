"""Distance-based record linkage (DBRL) and its evaluation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from rlopt.data import DEFAULT_CHUNK_BYTES, ColumnKind, KindSpec, LinkageData, chunk_rows, validate_pair
from rlopt.exceptions import InputError, NonFiniteError
from rlopt.families import BaselineFamily, Distance, get_family

__all__ = ["LinkageResult", "link_records", "dbrl", "TIE_RTOL", "dbrl_validated"]

TIE_RTOL = 1e-12
"""Two distances closer than this (relative) count as a tie."""


@dataclass(frozen=True)
class LinkageResult:
    """The outcome of linking every masked record to its nearest original record.

    Attributes
    ----------
    n_records : int
    n_correct : int
        Records whose own original is strictly nearer than every other record.
    n_ties : int
        Records whose own original shares the smallest distance with another
        record; a tie is not a correct re-identification.
    rate : float
        ``n_correct / n_records``.
    correct, tied : ndarray of bool, shape (n_records,)
    linked_to : ndarray of int, shape (n_records,)
        Index of the nearest original record (the lowest index among ties).
    distance : str
        Name of the distance family.
    separation : ndarray of float, shape (n_records,)
        ``min_{j != i} d(a_i, b_j) - d(a_i, b_i)``: positive when record i is
        re-identified, and by how much (compared with the MILP's margin).
    """

    n_records: int
    n_correct: int
    n_ties: int
    rate: float
    distance: str
    correct: np.ndarray = field(repr=False)
    tied: np.ndarray = field(repr=False)
    linked_to: np.ndarray = field(repr=False)
    separation: np.ndarray = field(repr=False)
    kinds: tuple[ColumnKind, ...] = ()

    def to_dict(self) -> dict:
        """The summary figures (JSON keys ``n_records, n_correct, n_ties, rate, distance``,
        and ``kinds`` when the attributes' kinds are known)."""
        out: dict = {
            "distance": self.distance,
            "n_records": self.n_records,
            "n_correct": self.n_correct,
            "n_ties": self.n_ties,
            "rate": self.rate,
        }
        if self.kinds:
            out["kinds"] = [kind.to_dict() for kind in self.kinds]
        return out


def _finite(d: np.ndarray, start: int, family: str) -> np.ndarray:
    """``d`` (distances from masked records ``start...``) when all finite, else an error."""
    if not np.isfinite(d).all():
        i = start + int(np.argmax(~np.isfinite(d).all(axis=1)))
        raise NonFiniteError(
            f"{family}: a distance from masked record {i} is not finite; expected finite "
            "distances (no figure is computed from a NaN or an infinity)"
        )
    return d


def link_records(
    za: np.ndarray,
    zb: np.ndarray,
    distance: Distance,
    *,
    candidates: np.ndarray | None = None,
    max_bytes: int = DEFAULT_CHUNK_BYTES,
) -> LinkageResult:
    """Link each masked record ``za[i]`` to its nearest original ``zb[j]``.

    Record ``i`` is correct when ``d(a_i, b_i) < d(a_i, b_j)`` for every
    ``j != i``, tied when the smallest other distance equals ``d(a_i, b_i)``
    (within a relative :data:`TIE_RTOL`). Works on chunks of rows, so memory
    stays within about ``max_bytes`` times a small factor.

    ``candidates`` (bool, ``n x n``) restricts record ``i`` to the originals
    ``j`` with ``candidates[i, j]`` (a transparency attack's intersections): a
    record whose own original is not a candidate is never correct, one with no
    other candidate is correct (separation ``inf``), one with no candidate at
    all is linked to ``-1``.
    """
    n_records = za.shape[0]
    correct = np.zeros(n_records, dtype=bool)
    tied = np.zeros(n_records, dtype=bool)
    linked_to = np.zeros(n_records, dtype=np.int64)
    separation = np.zeros(n_records)
    step = chunk_rows(n_records, za.shape[1], max_bytes=max_bytes)
    for start in range(0, n_records, step):
        stop = min(n_records, start + step)
        d = _finite(distance.pairwise(za[start:stop], zb), start, distance.family)
        rows = np.arange(stop - start)
        if candidates is not None:
            allowed = candidates[start:stop]
            d = np.where(allowed, d, np.inf)
            linked_to[start:stop] = np.where(allowed.any(axis=1), d.argmin(axis=1), -1)
        else:
            linked_to[start:stop] = d.argmin(axis=1)
        own = d[rows, rows + start].copy()
        d[rows, rows + start] = np.inf
        nearest_other = d.min(axis=1)
        with np.errstate(invalid="ignore"):  # inf - inf: neither own nor any other candidate
            gap = nearest_other - own
        separation[start:stop] = np.where(np.isnan(gap), -np.inf, gap)
        scale = np.maximum(np.abs(own), np.abs(nearest_other))
        tol = TIE_RTOL * np.where(np.isfinite(scale), scale, 0.0)
        correct[start:stop] = own < nearest_other - tol
        tied[start:stop] = np.abs(gap) <= tol
    n_correct = int(correct.sum())
    return LinkageResult(
        n_records,
        n_correct,
        int(tied.sum()),
        n_correct / n_records,
        distance.family,
        correct,
        tied,
        linked_to,
        separation,
    )


def dbrl(
    original,
    masked,
    *,
    distance: str | Distance = "am",
    columns: Sequence[str] | None = None,
    id_column: str | None = None,
    drop_nonfinite: bool = False,
    kinds: KindSpec | dict | None = None,
) -> LinkageResult:
    """Distance-based record linkage of a masked file against its original.

    Parameters
    ----------
    original, masked : DataFrame or array-like of shape (n_records, n_attributes)
        The intruder's file and the protected file; see
        :func:`rlopt.data.validate_pair` for alignment and checks.
    distance : str or Distance, default="am"
        A baseline family name (``"am"``, ``"md"``) or a fitted distance.
    columns, id_column, drop_nonfinite, kinds
        Passed to :func:`rlopt.data.validate_pair` (``kinds``: declared ordinal
        and nominal attributes, the policy for categorical blanks).

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
    return dbrl_validated(data, distance)


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


def dbrl_validated(data: LinkageData, distance: str | Distance) -> LinkageResult:
    """:func:`dbrl` for a caller that already holds validated :class:`LinkageData`."""
    za, zb = data.standardised()
    linked = link_records(za, zb, resolve_distance(distance, za, zb, data.columns))
    return replace(linked, kinds=data.kinds)
