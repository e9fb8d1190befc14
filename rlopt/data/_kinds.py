"""Column kinds: numeric, ordinal (ordered categories) and nominal attributes.

A released file mixes numbers (income, age) with categories (sex, region,
education level). Each linkage attribute gets a *kind*, detected from the file
and overridable by the user:

- ``numeric``: a numeric dtype. Compared as today: z-scores of each file, and
  the squared difference of the z-scores.
- ``ordinal``: declared by the user with its order (``edu:hs<college<grad``),
  or a pandas ordered ``Categorical``. Compared by the squared difference of
  the normalised ranks ``rank / (levels - 1)`` (0 for equal levels, 1 for the
  two ends of the scale).
- ``nominal``: strings, booleans and unordered categoricals (or a numeric column
  declared nominal, e.g. region codes). Compared by a 0/1 mismatch.

Missing values in a categorical attribute follow ``missing``: ``"category"``
(the default) makes a blank a level of its own, equal only to another blank and
at difference 1 from every level; ``"drop"`` leaves out the records with a blank
in either file, with a warning that says how many. A blank is something the
intruder sees in both files, so treating it as a value imputes nothing; in a
locally suppressed file it is the same for every candidate and so cannot move a
link. Blanks in numeric attributes stay the validator's NaN rule.

Global recoding in the masked file is recognised: a masked category written
``a|b`` whose parts are levels of the original stands for their union. The
intruder knows the recoding (it is published), so the original is seen through
it: its values ``a`` and ``b`` become ``a|b`` before linking. An ordinal merge
must join adjacent levels and takes the place of its first one.

How the kinds reach the distances (one encoding, in :func:`encode_attributes`):
numeric attributes become z-scores, ordinal ones normalised ranks in
``[0, 1]``, and nominal levels (and categorical blanks) become multiples of
:data:`CATEGORY_UNIT` = ``2**600``, far outside any z-score. The one function
that forms per-attribute differences, :func:`rlopt.data.attribute_deltas`,
turns any pair involving such a value into a 0/1 mismatch; every family built
on the per-attribute differences then works unchanged. Plain arithmetic on an
encoded nominal value overflows to infinity (``2**1200``), so a code path that
bypasses the one function ends in a non-finite figure, which is an error, never
a silent count.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rlopt.exceptions import DataWarning, InputError
from rlopt.validation import Options, check

__all__ = [
    "NUMERIC",
    "ORDINAL",
    "NOMINAL",
    "MISSING_POLICIES",
    "CATEGORY_UNIT",
    "BLANK",
    "MERGE_SEPARATOR",
    "ColumnKind",
    "KindSpec",
    "parse_ordinal",
    "cell_label",
    "category_labels",
    "label_rows",
    "column_kinds",
    "encode_codes",
    "encode_attributes",
    "describe_kinds",
    "CATEGORY_THRESHOLD",
    "warn_dropped_blanks",
]

NUMERIC, ORDINAL, NOMINAL = "numeric", "ordinal", "nominal"
MISSING_POLICIES = ("category", "drop")
CATEGORY_UNIT = 2.0**600
"""Nominal levels and categorical blanks are encoded as multiples of this value."""
CATEGORY_THRESHOLD = 2.0**599
"""An encoded value at least this large (in magnitude) is categorical, not a z-score."""
MERGE_SEPARATOR = "|"
"""A masked category ``a|b`` is the union of the original's levels ``a`` and ``b``."""


@dataclass(frozen=True)
class ColumnKind:
    """One linkage attribute: its name, kind and, for categories, its levels.

    ``levels`` are the labels in order (ordinal) or sorted (nominal), as seen
    by the intruder (after a published global recoding). ``recoding`` maps an
    original label to the merged label it was released as.
    """

    name: str
    kind: str
    levels: tuple[str, ...] = ()
    recoding: Mapping[str, str] = field(default_factory=dict)

    @property
    def categorical(self) -> bool:
        return self.kind != NUMERIC

    def describe(self) -> str:
        """``edu: ordinal (hs < college < grad)``, ``sex: nominal (2 levels)``, ``age: numeric``."""
        if self.kind == ORDINAL:
            return f"{self.name}: ordinal ({' < '.join(self.levels)})"
        if self.kind == NOMINAL:
            return f"{self.name}: nominal ({len(self.levels)} levels)"
        return f"{self.name}: numeric"

    @classmethod
    def from_dict(cls, value: Mapping) -> ColumnKind:
        return cls(
            value["name"], value["kind"], tuple(value.get("levels", ())), dict(value.get("recoding", {}))
        )

    def to_dict(self) -> dict:
        out: dict = {"name": self.name, "kind": self.kind}
        if self.categorical:
            out["levels"] = list(self.levels)
        if self.recoding:
            out["recoding"] = dict(self.recoding)
        return out


@dataclass(frozen=True)
class KindSpec:
    """What the user declares about the columns (everything else is detected).

    Parameters
    ----------
    ordinal : mapping of column -> levels in order (or None: the sorted values)
    nominal : columns to compare by category even if they hold numbers
    missing : "category" or "drop"
        A blank in a categorical attribute: a level of its own, or its record left out.
    """

    ordinal: Mapping[str, tuple[str, ...] | None] = field(default_factory=dict)
    nominal: tuple[str, ...] = ()
    missing: str = "category"

    def __post_init__(self) -> None:
        both = sorted(set(self.ordinal) & set(self.nominal))
        if both:
            raise InputError(f"column(s) {both} declared both ordinal and nominal; expected one kind each")
        check("missing", self.missing, [Options(tuple(MISSING_POLICIES))])
        for name, levels in self.ordinal.items():
            if levels is not None and len(set(levels)) != len(levels):
                dup = sorted({v for v in levels if list(levels).count(v) > 1})
                raise InputError(f"ordinal {name!r}: level(s) {dup} listed more than once")

    @classmethod
    def parse(
        cls, ordinal: str | None = None, nominal: str | None = None, missing: str = "category"
    ) -> KindSpec:
        """From the CLI's ``--ordinal "edu:hs<college<grad; size"`` and ``--nominal "region,sector"``."""
        names = tuple(n.strip() for n in (nominal or "").split(",") if n.strip())
        return cls(parse_ordinal(ordinal or ""), names, missing)

    @classmethod
    def coerce(cls, value) -> KindSpec:
        """A spec, None (detect everything) or a dict of the fields."""
        if value is None:
            return cls()
        if isinstance(value, KindSpec):
            return value
        if isinstance(value, Mapping):
            ordinal = {
                k: (None if v is None else tuple(map(str, v)))
                for k, v in dict(value.get("ordinal") or {}).items()
            }
            return cls(ordinal, tuple(value.get("nominal") or ()), value.get("missing", "category"))
        raise InputError(f"kinds={value!r}; expected a KindSpec, a dict or None")

    @property
    def declared(self) -> bool:
        return bool(self.ordinal or self.nominal)

    def to_dict(self) -> dict:
        """The form :meth:`coerce` reads back (JSON-ready)."""
        return {
            "ordinal": {k: None if v is None else list(v) for k, v in self.ordinal.items()},
            "nominal": list(self.nominal),
            "missing": self.missing,
        }


def parse_ordinal(text: str) -> dict[str, tuple[str, ...] | None]:
    """``"edu:hs<college<grad; size"`` -> ``{"edu": ("hs", "college", "grad"), "size": None}``.

    Each ``;``-separated item is a column, optionally followed by ``:`` and its
    levels from lowest to highest separated by ``<``; without levels, the
    column's values in sorted order (numerically when they are numbers).
    """
    out: dict[str, tuple[str, ...] | None] = {}
    for item in (part.strip() for part in text.split(";")):
        if not item:
            continue
        name, _, order = item.partition(":")
        name = name.strip()
        if not name:
            raise InputError(
                f"--ordinal item {item!r} has no column name; expected NAME or NAME:LOW<...<HIGH"
            )
        if name in out:
            raise InputError(f"--ordinal names column {name!r} twice")
        levels = tuple(level.strip() for level in order.split("<")) if order.strip() else None
        if levels is not None and (any(not level for level in levels) or len(levels) < 2):
            raise InputError(
                f"--ordinal {item!r}: expected at least two non-empty levels separated by '<', e.g. edu:hs<college<grad"
            )
        out[name] = levels
    return out


_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def cell_label(value) -> str | None:
    """The category label of one cell: None for a blank, ``"3"`` for 3 and 3.0, else ``str``."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value)).lower()
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (np.integer, np.floating)):
        return str(value.item())
    text = str(value).strip()
    return text if text else None


def category_labels(series: pd.Series) -> pd.Series:
    """The column's cells as labels (:func:`cell_label`), None for a blank, dtype object."""
    return pd.Series([cell_label(v) for v in series], index=series.index, dtype=object)


def label_rows(frame: pd.DataFrame, columns: Sequence[str]) -> pd.Series:
    """Each record's values on ``columns`` as one tuple of labels (a blank is a value
    of its own), to count or group equal combinations."""
    table = pd.DataFrame({c: category_labels(frame[c]).fillna(BLANK) for c in columns})
    return table.apply(tuple, axis=1)


BLANK = "\0blank"
"""The label of a blank cell where blanks are counted as a value."""


def _sorted_levels(labels: Iterable[str]) -> tuple[str, ...]:
    unique = sorted(set(labels))
    if unique and all(_NUMBER.match(v) for v in unique):
        return tuple(sorted(unique, key=float))
    return tuple(unique)


def _detected_kind(series: pd.Series) -> str:
    if isinstance(series.dtype, pd.CategoricalDtype):
        return ORDINAL if series.dtype.ordered else NOMINAL
    if pd.api.types.is_bool_dtype(series):
        return NOMINAL
    if pd.api.types.is_numeric_dtype(series):
        return NUMERIC
    # numbers stored as text are numeric; a few garbled cells among numbers are the
    # validator's error (a typo must not turn a numeric column into categories)
    return NUMERIC if pd.to_numeric(series, errors="coerce").notna().any() else NOMINAL


def _split_merged(label: str, levels: Sequence[str]) -> list[str] | None:
    parts = [p.strip() for p in label.split(MERGE_SEPARATOR)]
    if len(parts) > 1 and all(p in levels for p in parts):
        return parts
    return None


def _recoding(name: str, kind: str, levels: tuple[str, ...], masked_labels: set[str]) -> dict[str, str]:
    """The published global recoding read off the masked file's merged labels ``a|b``."""
    recoding: dict[str, str] = {}
    unknown = []
    for label in sorted(masked_labels - set(levels)):
        parts = _split_merged(label, levels)
        if parts is None:
            unknown.append(label)
            continue
        for part in parts:
            if part in recoding:
                raise InputError(
                    f"masked: column {name!r} merges level {part!r} into both {recoding[part]!r} and "
                    f"{label!r}; expected a global recoding (each level in one merged category)"
                )
            recoding[part] = label
        if kind == ORDINAL:
            ranks = sorted(levels.index(p) for p in parts)
            if ranks != list(range(ranks[0], ranks[0] + len(ranks))):
                raise InputError(
                    f"masked: ordinal column {name!r} merges {label!r}, levels that are not adjacent in "
                    f"the order {' < '.join(levels)}; expected a merge of neighbouring levels"
                )
    if unknown:
        raise InputError(
            f"masked: column {name!r} has categor{'y' if len(unknown) == 1 else 'ies'} {unknown[:5]} not "
            f"in the original (levels {list(levels)[:12]}); expected the original's categories, or "
            f"merged ones written {MERGE_SEPARATOR.join(levels[:2])!r}"
        )
    still = sorted(set(recoding) & masked_labels)
    if still:
        raise InputError(
            f"masked: column {name!r} has level(s) {still} both on their own and merged into "
            f"{sorted({recoding[s] for s in still})}; expected a global recoding (a merged level "
            "appears only in its merged category)"
        )
    return recoding


def _recoded_levels(kind: str, levels: tuple[str, ...], recoding: Mapping[str, str]) -> tuple[str, ...]:
    out: list[str] = []
    for level in levels:
        label = recoding.get(level, level)
        if label not in out:
            out.append(label)
    return tuple(out) if kind == ORDINAL else tuple(sorted(out))


def _categorical_kind(
    name: str,
    kind: str,
    declared: tuple[str, ...] | None,
    original: pd.Series,
    masked: pd.Series,
) -> ColumnKind:
    seen = {v for v in category_labels(original) if v is not None}
    masked_seen = {v for v in category_labels(masked) if v is not None}
    if declared is None and isinstance(original.dtype, pd.CategoricalDtype) and original.dtype.ordered:
        declared = tuple(cell_label(c) or "" for c in original.dtype.categories)
    if kind == ORDINAL and declared is not None:
        absent = sorted(seen - set(declared))
        absent_masked = sorted(
            masked_seen - set(declared) - {m for m in masked_seen if _split_merged(m, declared)}
        )
        if absent or absent_masked:
            raise InputError(
                f"ordinal {name!r}: the order {' < '.join(declared)} misses level(s) "
                f"{(absent or absent_masked)[:5]} found in the {'original' if absent else 'masked'} file; "
                "expected every value of the column in the order"
            )
        levels = declared
    else:
        levels = _sorted_levels(seen)
    if not levels:
        raise InputError(f"original: column {name!r} has no value (every cell is blank)")
    recoding = _recoding(name, kind, levels, masked_seen)
    levels = _recoded_levels(kind, levels, recoding)
    return ColumnKind(name, kind, levels, recoding)


def column_kinds(
    original: pd.DataFrame, masked: pd.DataFrame, columns: Sequence[str], spec: KindSpec
) -> tuple[ColumnKind, ...]:
    """The kind of each linkage column: declared in ``spec``, else detected from the original."""
    unknown = sorted((set(spec.ordinal) | set(spec.nominal)) - set(columns))
    if unknown:
        raise InputError(
            f"column(s) {unknown} declared ordinal or nominal are not linkage attributes; "
            f"expected some of {list(columns)}"
        )
    kinds = []
    for name in columns:
        if name in spec.ordinal:
            kind = ORDINAL
        elif name in spec.nominal:
            kind = NOMINAL
        else:
            kind = _detected_kind(original[name])
        if kind == NUMERIC:
            kinds.append(ColumnKind(name, NUMERIC))
        else:
            kinds.append(_categorical_kind(name, kind, spec.ordinal.get(name), original[name], masked[name]))
    return tuple(kinds)


def encode_codes(frame: pd.DataFrame, kinds: Sequence[ColumnKind], *, name: str) -> np.ndarray:
    """The file as floats: numeric values as they are, a category as its level's index, a blank as NaN."""
    block = np.empty((len(frame), len(kinds)))
    for k, kind in enumerate(kinds):
        series = frame[kind.name]
        if not kind.categorical:
            block[:, k] = np.nan  # filled by the validator's numeric check
            continue
        labels = [None if v is None else kind.recoding.get(v, v) for v in category_labels(series)]
        index = {level: float(i) for i, level in enumerate(kind.levels)}
        bad = sorted({v for v in labels if v is not None and v not in index})
        if bad:
            raise InputError(
                f"{name}: column {kind.name!r} has categor{'y' if len(bad) == 1 else 'ies'} {bad[:5]} not in "
                f"its levels {list(kind.levels)[:12]}; expected the original's categories"
            )
        block[:, k] = [np.nan if v is None else index[v] for v in labels]
    return block


def encode_attributes(codes: np.ndarray, kinds: Sequence[ColumnKind], z_numeric: np.ndarray) -> np.ndarray:
    """The encoded file the distances read: z-scores (numeric, given), normalised ranks
    (ordinal), ``(index + 2) * CATEGORY_UNIT`` (nominal), ``CATEGORY_UNIT`` (a categorical blank)."""
    out = np.empty(codes.shape)
    numeric = [k for k, kind in enumerate(kinds) if not kind.categorical]
    out[:, numeric] = z_numeric
    for k, kind in enumerate(kinds):
        if not kind.categorical:
            continue
        column = codes[:, k]
        if kind.kind == ORDINAL:
            values = column / max(1, len(kind.levels) - 1)
        else:
            values = (column + 2.0) * CATEGORY_UNIT
        out[:, k] = np.where(np.isnan(column), CATEGORY_UNIT, values)
    return out


def describe_kinds(kinds: Sequence[ColumnKind]) -> str:
    """One line per categorical attribute and the numeric ones together."""
    numeric = [k.name for k in kinds if not k.categorical]
    lines = [k.describe() for k in kinds if k.categorical]
    if numeric:
        lines.insert(0, f"numeric: {', '.join(numeric)}")
    return "; ".join(lines)


def warn_dropped_blanks(n_dropped: int, n_records: int, columns: Sequence[str]) -> None:
    warnings.warn(
        f"missing='drop': left out {n_dropped} of {n_records} records with a blank in "
        f"categorical attribute(s) {list(columns)} of either file",
        DataWarning,
        stacklevel=4,
    )
