"""The transparency attack on microaggregation: re-run the published method on the
intruder's file, infer each masked record's group in every attribute group, and
link inside the intersection of the groups."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence

import numpy as np
from scipy.sparse import csr_array

from rlopt.attacks._common import AttackResult, link_in_candidates
from rlopt.data import LinkageData, validate_pair
from rlopt.data._standardise import column_scale
from rlopt.exceptions import DataWarning, InputError
from rlopt.families import DEFAULT_BASELINE, Distance
from rlopt.masking.mdav import group_means, mdav_partition

__all__ = ["microaggregation_attack"]

MATCH_RTOL = 1e-9
"""A masked value vector equals a group mean when closer than this (relative to scale)."""


def _group_of_masked(original: np.ndarray, masked: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Each original record's MDAV group, the groups each masked record may come from,
    and the misfits.

    The masked record's values in the attribute group equal the mean of its MDAV
    group; the intruder, holding the original file and knowing ``k``, re-runs
    MDAV and matches each masked vector to the group means it equals -- every one
    of them: several groups can share a mean (e.g. top-coded values), and keeping
    only one would drop the record's own group and understate the attack. A masked
    vector equal to no group mean (the file was masked otherwise) goes to the
    nearest mean and counts as a misfit. The means are looked up in a KD-tree
    (Chebyshev distance on the scaled values), not compared with every record.

    Returns ``labels`` (n_records,) and ``matches`` (n_matches, 2), int: rows
    ``(i, g)`` when masked record ``i`` may come from group ``g``, sorted.
    """
    from scipy.spatial import cKDTree

    labels = mdav_partition(original, k)
    scale = column_scale(original)
    tree = cKDTree(group_means(original, labels) / scale)
    found = tree.query_ball_point(masked / scale, r=MATCH_RTOL, p=np.inf)
    misfit = np.flatnonzero([len(f) == 0 for f in found])
    if misfit.size:
        _, nearest = tree.query(masked[misfit] / scale, k=1, p=np.inf)
        for i, g in zip(misfit, np.atleast_1d(nearest)):
            found[i] = [int(g)]
    sizes = np.fromiter((len(f) for f in found), dtype=np.int64, count=len(found))
    matches = np.column_stack(
        [np.repeat(np.arange(len(found)), sizes), np.fromiter(itertools.chain.from_iterable(found), np.int64)]
    )
    return labels, matches[np.lexsort((matches[:, 1], matches[:, 0]))], int(misfit.size)


def _candidate_pairs(original_groups, masked_groups) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (original ``x``, masked ``i``) with ``i`` matched to ``x``'s group in every
    attribute group: listed from the first attribute group, filtered by the others."""
    labels, matches = original_groups[0], masked_groups[0]
    order = np.argsort(labels, kind="stable")  # the members of each group, contiguous
    first = np.searchsorted(labels[order], np.arange(labels.max() + 2))
    members = first[matches[:, 1] + 1] - first[matches[:, 1]]
    cols = np.repeat(matches[:, 0], members)
    starts = np.repeat(first[matches[:, 1]], members)
    offsets = np.arange(members.sum()) - np.repeat(np.cumsum(members) - members, members)
    rows = order[starts + offsets]
    for labels, matches in zip(original_groups[1:], masked_groups[1:]):
        n_groups = int(labels.max()) + 1
        keys = matches[:, 0] * n_groups + matches[:, 1]
        wanted = cols * n_groups + labels[rows]
        place = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
        keep = keys[place] == wanted
        rows, cols = rows[keep], cols[keep]
    return rows, cols


def microaggregation_attack(
    original,
    masked=None,
    *,
    k: int | None = None,
    groups: Sequence[tuple[Sequence[str], int]] | None = None,
    distance: str | Distance = DEFAULT_BASELINE,
    columns: Sequence[str] | None = None,
    id_column: str | None = None,
) -> AttackResult:
    """The intersection attack on an MDAV-microaggregated file.

    Parameters
    ----------
    original, masked : DataFrame or array-like of shape (n_records, n_attributes)
        The intruder's file and the microaggregated file, aligned record by record.
    k : int, default=None
        Published group size when all attributes were aggregated together.
    groups : list of (columns, k), default=None
        Published attribute groups, each aggregated on its own (as in
        :func:`rlopt.masking.microaggregate`). Give ``k`` or ``groups``.
    distance : str or Distance, default=DEFAULT_BASELINE (``"am"``)
        Distance used inside the intersections.
    columns, id_column
        Passed to :func:`rlopt.data.validate_pair`; the groups' columns must be
        among them.

    Returns
    -------
    AttackResult
        ``method="mdav"``. With one attribute group the candidate set
        is the record's MDAV group; with several, the intersection of its groups
        is often a single record: a sure match.

    Warns
    -----
    DataWarning
        When some masked values equal no group mean of the re-run partition
        (wrong ``k``, another method, or another record set): those records are
        put in the nearest group and the attack may miss them.
    """
    data = validate_pair(original, masked, columns=columns, id_column=id_column)
    if (k is None) == (groups is None):
        raise InputError(
            f"the microaggregation attack needs the published masking: give exactly "
            f"one of k={k!r} (all attributes in one group; CLI --k) and "
            f"groups={groups!r} (attribute groups with their k; CLI --groups)"
        )
    if groups is None:
        assert k is not None  # exactly one of the two was given (checked above)
        groups = [(list(data.columns), k)]
    return _microaggregation_attack(data, groups, distance)


def _microaggregation_attack(data: LinkageData, groups, distance) -> AttackResult:
    """:func:`microaggregation_attack` for a caller that already holds validated data."""
    index = {c: j for j, c in enumerate(data.columns)}
    original_groups, masked_groups, misfits = [], [], 0
    for group_columns, group_k in groups:
        unknown = [c for c in group_columns if c not in index]
        if unknown:
            raise InputError(f"group column(s) {unknown} are not among the attributes {list(data.columns)}")
        idx = [index[c] for c in group_columns]
        labels, matches, bad = _group_of_masked(data.original[:, idx], data.masked[:, idx], group_k)
        original_groups.append(labels)
        masked_groups.append(matches)
        misfits += bad
    if misfits:
        warnings.warn(
            f"{misfits} masked value vector(s) equal no group mean of MDAV re-run with the "
            "given k on the original file: the file was masked otherwise; those records "
            "were put in the nearest group",
            DataWarning,
            stacklevel=3,
        )

    rows, cols = _candidate_pairs(original_groups, masked_groups)
    candidates = csr_array((np.ones(rows.size, dtype=bool), (rows, cols)), shape=(data.n_records,) * 2)

    parameters = {"groups": [{"columns": list(c), "k": int(g)} for c, g in groups], "n_misfits": misfits}
    return link_in_candidates(data, candidates, method="mdav", distance=distance, parameters=parameters)
