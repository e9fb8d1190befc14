"""The ceiling of identical records: how many records any distance can re-identify,
read from the encoded pair alone, without a solver (docs/method.md, section 6).

Every distance rlopt links with is a function of the two records as the distances read
them (the encoded pair: z-scores, ranks, category codes; :class:`rlopt.data.EncodedPair`).
At a margin ``eps > 0`` record ``i`` is re-identified only when its own original is
nearer than every other original by at least ``eps``. Hence, for every distance of
every family:

(a) two identical masked records are at the same distance from every original, so at
    most one of them is re-identified (their nearest original is one record);
(b) a record whose original is identical to another original is tied with it by every
    distance, so it is never re-identified.

No distance re-identifies more than the number of groups of identical masked records
holding at least one record whose original is unique: :attr:`IdenticalRecords.ceiling`.
Both hold for the strict count too (the verdict's tie tolerance plays the margin's
part); neither holds at margin 0, where a tie counts. "Identical" is equality of the
encoded values, byte for byte: what the distance reads, so that equal inputs give the
same distances.

- :func:`identical_records`: the groups and the ceiling of a pair;
- :data:`IDENTICAL_RECORDS`: the name the certificate and the reports give the ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["IDENTICAL_RECORDS", "IdenticalRecords", "identical_records", "row_groups"]

IDENTICAL_RECORDS = "identical records"
"""The source a ceiling of identical records is named by (certificate, rows, headline)."""


def row_groups(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(group, first)``: each row's group of byte-identical rows, the groups numbered in
    the order of their first row, and each group's first row (so that a file without
    identical rows has ``group = first = arange(n)``).

    Parameters
    ----------
    z : ndarray of shape (n_records, n_attributes)
        Encoded records (float).

    Returns
    -------
    group : ndarray of int, shape (n_records,)
    first : ndarray of int, shape (n_groups,), increasing
    """
    rows = np.ascontiguousarray(z)
    if rows.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    by_first = np.argsort(first, kind="stable")
    number = np.empty(first.size, dtype=np.int64)
    number[by_first] = np.arange(first.size)
    return number[inverse.ravel()], first[by_first].astype(np.int64)


@dataclass(frozen=True)
class IdenticalRecords:
    """The groups of identical records of a pair and the ceiling they prove.

    Attributes
    ----------
    masked_group : ndarray of int, shape (n_records,)
        Record ``i``'s group of identical masked records.
    shared_original : ndarray of bool, shape (n_records,)
        Whether record ``i``'s original is identical to another original record.
    """

    masked_group: np.ndarray = field(repr=False)
    shared_original: np.ndarray = field(repr=False)

    @property
    def n_records(self) -> int:
        return int(self.masked_group.size)

    @property
    def n_masked_groups(self) -> int:
        """Groups of identical masked records (a record alone is a group of one)."""
        return int(np.unique(self.masked_group).size)

    @property
    def n_shared_original(self) -> int:
        """Records whose original is identical to another original (never re-identified)."""
        return int(self.shared_original.sum())

    @property
    def ceiling(self) -> int:
        """The groups of identical masked records holding a record whose original is
        unique: no distance re-identifies more records at a margin > 0, or strictly."""
        return int(np.unique(self.masked_group[~self.shared_original]).size)

    def describe(self) -> str:
        """``identical records: at most 5901 of 29501 re-identified (5901 groups of
        identical masked records; 0 records share their original's values)``."""
        return (
            f"{IDENTICAL_RECORDS}: at most {self.ceiling} of {self.n_records} re-identified by any distance "
            f"({self.n_masked_groups} groups of identical masked records, at most one re-identified in "
            f"each; {self.n_shared_original} records whose original equals another original, never "
            "re-identified)"
        )

    def to_dict(self) -> dict:
        return {
            "ceiling": self.ceiling,
            "n_records": self.n_records,
            "n_masked_groups": self.n_masked_groups,
            "n_shared_original": self.n_shared_original,
        }


def identical_records(za: np.ndarray, zb: np.ndarray) -> IdenticalRecords:
    """The groups of identical records of an encoded pair (masked ``za``, original ``zb``,
    as :class:`rlopt.data.EncodedPair` holds them) and their ceiling.

    Examples
    --------
    >>> import numpy as np
    >>> za = np.array([[0.0], [0.0], [1.0], [2.0]])  # records 0 and 1 masked alike
    >>> zb = np.array([[0.0], [5.0], [3.0], [3.0]])  # records 2 and 3 share an original
    >>> identical_records(za, zb).ceiling
    1
    """
    masked_group, _ = row_groups(za)
    original_group, _ = row_groups(zb)
    shared = np.bincount(original_group)[original_group] > 1
    return IdenticalRecords(masked_group=masked_group, shared_original=shared)
