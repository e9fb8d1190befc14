"""The pair: an original file and its masked file, validated and aligned
(:class:`LinkageData`), and the pair as the distances read it (:class:`EncodedPair`),
encoded once per pair and cached.

Every consumer (linkage, PLD, the attacks, the MILP, the searches, the estimator, the
risk assessment) reads ``data.encoded`` instead of encoding the files again; a part of
the file that keeps the whole file's encoding (a learning sample, a fold's training
records) is ``data.part(rows)``, never a pair rebuilt by hand from z-scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from rlopt.data._kinds import ColumnKind, describe_kinds, encode_attributes
from rlopt.data._standardise import Standardisation, standardise
from rlopt.exceptions import InputError

__all__ = ["EncodedPair", "LinkageData"]


@dataclass(frozen=True)
class EncodedPair:
    """The two files as the distances read them (docs/method.md §2), each on its own:
    numeric attributes as z-scores, ordinal ones as normalised ranks, nominal ones
    encoded for a 0/1 mismatch (:func:`rlopt.data.attribute_deltas`).

    Attributes
    ----------
    za, zb : ndarray of shape (n_records, n_attributes)
        The masked and the original file, encoded.
    columns : tuple of str
    kinds : tuple of ColumnKind
        As in :class:`LinkageData` (empty: all numeric).
    maps : (Standardisation, Standardisation)
        The z-score maps of the masked and the original file on every column (what
        :meth:`rlopt.learn.LearnedDistanceLinkage.distance` applies to new raw records).
    """

    za: np.ndarray
    zb: np.ndarray
    columns: tuple[str, ...]
    kinds: tuple[ColumnKind, ...]
    maps: tuple[Standardisation, Standardisation]

    @classmethod
    def of(cls, data: LinkageData) -> EncodedPair:
        maps = (Standardisation.fit(data.masked), Standardisation.fit(data.original))
        if not data.mixed:  # z-scores with the maps themselves: the same numbers as standardise()
            za, zb = maps[0].apply(data.masked, name="masked"), maps[1].apply(data.original, name="original")
        else:
            za, zb = _encoded(data, data.masked, "masked"), _encoded(data, data.original, "original")
        return cls(za, zb, data.columns, data.kinds, maps)

    def records(self, rows: Sequence[int] | np.ndarray) -> EncodedPair:
        """The records of index ``rows``, encoded as in the whole file."""
        idx = np.asarray(rows, dtype=np.int64)
        return replace(self, za=self.za[idx], zb=self.zb[idx])

    @property
    def n_records(self) -> int:
        return self.za.shape[0]


def _encoded(data: LinkageData, values: np.ndarray, name: str) -> np.ndarray:
    numeric = data.numeric_columns
    z = standardise(values[:, numeric], name=name) if numeric else np.empty((len(values), 0))
    return encode_attributes(values, data.kinds, z)


@dataclass(frozen=True)
class LinkageData:
    """An original file and its masked file, validated and aligned record by record.

    Attributes
    ----------
    original, masked : ndarray of shape (n_records, n_attributes)
        Row ``i`` of ``masked`` is the protected version of row ``i`` of ``original``.
    columns : tuple of str
        Attribute names, in the order of the array columns.
    ids : ndarray of shape (n_records,) or None
        The identifier of each row when the files were aligned by an id column.
    n_dropped : int
        Rows dropped because of NaN/inf values (only with ``drop_nonfinite=True``).
    n_duplicate_original : int
        Original records whose attribute values equal those of another original
        record; no distance can re-identify them with certainty.
    kinds : tuple of ColumnKind
        The kind of each attribute (numeric, ordinal, nominal; all numeric when
        empty). A categorical attribute's column holds its level's index, NaN
        for a blank (see :mod:`rlopt.data._kinds`).
    """

    original: np.ndarray
    masked: np.ndarray
    columns: tuple[str, ...]
    ids: np.ndarray | None = None
    n_dropped: int = 0
    n_duplicate_original: int = 0
    kinds: tuple[ColumnKind, ...] = ()

    @property
    def mixed(self) -> bool:
        """Whether some attribute is categorical."""
        return any(kind.categorical for kind in self.kinds)

    @property
    def numeric_columns(self) -> list[int]:
        """Indices of the numeric attributes."""
        return [k for k in range(self.n_attributes) if not (self.kinds and self.kinds[k].categorical)]

    def kinds_text(self) -> str:
        """The attributes' kinds in words."""
        return describe_kinds(self.kinds) if self.kinds else f"numeric: {', '.join(self.columns)}"

    def describe_kinds(self) -> str:
        """The attributes' kinds in words, and those released unmasked (equal in both files)."""
        text = self.kinds_text()
        unmasked = [
            name
            for k, name in enumerate(self.columns)
            if np.array_equal(self.original[:, k], self.masked[:, k], equal_nan=True)
        ]
        return text + (f"; unmasked (equal in both files): {', '.join(unmasked)}" if unmasked else "")

    @cached_property
    def encoded(self) -> EncodedPair:
        """The pair as the distances read it, encoded once (:class:`EncodedPair`)."""
        return EncodedPair.of(self)

    def standardised(self) -> tuple[np.ndarray, np.ndarray]:
        """``(za, zb)``: the masked and the original file as the distances read them
        (:attr:`encoded`)."""
        return self.encoded.za, self.encoded.zb

    def part(self, rows: Sequence[int] | np.ndarray) -> LinkageData:
        """The records of index ``rows``, encoded as in the whole file (a learning
        sample, a fold's training records): what is learned on it reads the whole file's
        z-scores, so its parameter links the whole file as it linked the part."""
        part = self.records(rows)
        # the cached_property's own slot: the part's encoding is the whole file's rows
        part.__dict__["encoded"] = self.encoded.records(rows)
        return part

    def subset(self, attributes: Sequence[int]) -> LinkageData:
        """The same records on the attributes of index ``attributes``."""
        idx = list(attributes)
        return LinkageData(
            self.original[:, idx],
            self.masked[:, idx],
            tuple(self.columns[k] for k in idx),
            self.ids,
            self.n_dropped,
            self.n_duplicate_original,
            tuple(self.kinds[k] for k in idx) if self.kinds else (),
        )

    def records(self, rows: Sequence[int] | np.ndarray) -> LinkageData:
        """The records of index ``rows`` (in that order), on every attribute, a pair of
        its own (encoded on its own records; :meth:`part` keeps the whole file's)."""
        idx = np.asarray(rows, dtype=np.int64)
        return replace(
            self,
            original=self.original[idx],
            masked=self.masked[idx],
            ids=None if self.ids is None else self.ids[idx],
            n_dropped=0,
            n_duplicate_original=0,
        )

    def require_numeric(self, what: str) -> None:
        """Raise :class:`InputError` when ``what`` needs numbers and some attribute is categorical."""
        categorical = [k.name for k in self.kinds if k.categorical]
        if categorical:
            raise InputError(
                f"{what} needs numeric attributes; {categorical} are categorical. "
                "Choose the numeric attributes with --columns (Python: columns=[...])"
            )

    @property
    def n_records(self) -> int:
        return self.original.shape[0]

    @property
    def n_attributes(self) -> int:
        return self.original.shape[1]
