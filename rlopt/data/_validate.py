"""The one input validator of rlopt.

Every public entry point that takes user data goes through :func:`validate_table`
(one file, e.g. masking) or :func:`validate_pair` (an original and a masked file,
e.g. linkage and learning). Private functions downstream assume validated input.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rlopt.data._kinds import (
    ColumnKind,
    KindSpec,
    column_kinds,
    encode_codes,
    warn_dropped_blanks,
)
from rlopt.data._pair import LinkageData
from rlopt.exceptions import DataWarning, InputError

__all__ = ["validate_pair", "validate_table", "as_frame"]


def as_frame(data, *, name: str) -> pd.DataFrame:
    """A DataFrame view of ``data`` (DataFrame, 2-d array or list of rows)."""
    if isinstance(data, pd.DataFrame):
        if all(isinstance(c, str) for c in data.columns):
            return data
        return data.rename(columns=str)
    if isinstance(data, pd.Series):
        raise InputError(f"{name}: expected a table (DataFrame or 2-d array), got a Series")
    array = np.asarray(data)
    if array.ndim != 2:
        raise InputError(
            f"{name}: expected a 2-d table of shape (n_records, n_attributes), "
            f"got an array of shape {array.shape}"
        )
    return pd.DataFrame(array, columns=[f"x{k}" for k in range(array.shape[1])])


def _plain(value):
    """A numpy scalar as the Python value it holds, so that messages read ``0``, not ``np.int64(0)``."""
    return value.item() if isinstance(value, np.generic) else value


def _select_columns(
    frame: pd.DataFrame, columns: Sequence[str] | None, *, name: str, exclude: str | None = None
) -> list[str]:
    available = [str(c) for c in frame.columns]
    if len(set(available)) != len(available):
        dup = sorted({c for c in available if available.count(c) > 1})
        raise InputError(f"{name}: duplicate column name(s) {dup}")
    if columns is None:
        return [c for c in available if c != exclude]
    columns = list(columns)
    if not columns:
        raise InputError(f"{name}: the list of columns is empty; expected at least one")
    if len(set(columns)) != len(columns):
        dup = sorted({c for c in columns if columns.count(c) > 1})
        raise InputError(f"{name}: column(s) {dup} requested more than once")
    unknown = [c for c in columns if c not in available]
    if unknown:
        raise InputError(f"{name}: unknown column(s) {unknown}; available: {available}")
    if exclude is not None and exclude in columns:
        raise InputError(f"{name}: the id column {exclude!r} cannot also be an attribute")
    return columns


def _numeric_block(frame: pd.DataFrame, columns: list[str], *, name: str) -> np.ndarray:
    if not columns:
        raise InputError(f"{name}: no attribute columns; expected at least one numeric column")
    for column in columns:
        series = frame[column]
        if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
            parsed = pd.to_numeric(series, errors="coerce")
            garbled = np.flatnonzero((parsed.isna() & series.notna()).to_numpy())
            if pd.api.types.is_bool_dtype(series) or garbled.size in (0, len(series)):
                raise InputError(
                    f"{name}: column {column!r} is not numeric (dtype {series.dtype}, e.g. "
                    f"{_plain(series.iloc[0])!r}); expected numbers. Choose the numeric "
                    "columns with --columns (Python: columns=[...])"
                )
            row = int(garbled[0])
            raise InputError(
                f"{name}: column {column!r} has {garbled.size} value(s) that are not numbers "
                f"(first at row {row}: {_plain(series.iloc[row])!r}); expected numbers only, or "
                f"declare the column categorical with --nominal {column} (Python: kinds={{'nominal': [...]}})"
            )
    return frame[columns].to_numpy(dtype=np.float64, copy=True)


def _nonfinite_rows(block: np.ndarray) -> np.ndarray:
    return ~np.isfinite(block).all(axis=1)


def _raise_nonfinite(block: np.ndarray, columns: list[str], *, name: str) -> None:
    bad = ~np.isfinite(block)
    k = int(np.argmax(bad.any(axis=0)))
    rows = np.flatnonzero(bad[:, k])
    raise InputError(
        f"{name}: column {columns[k]!r} has {rows.size} NaN/inf value(s) (first at row "
        f"{int(rows[0])}: {_plain(block[rows[0], k])!r}); expected finite numbers. Clean the file, "
        "or drop such rows from both files with --drop-nonfinite (Python: drop_nonfinite=True)"
    )


def validate_table(
    data, *, columns: Sequence[str] | None = None, name: str = "input", min_records: int = 1
) -> tuple[np.ndarray, list[str]]:
    """Validate one numeric table; return its values (float64 copy) and column names.

    Raises
    ------
    InputError
        Unknown or non-numeric columns, NaN/inf values, fewer than ``min_records`` rows.
    """
    frame = as_frame(data, name=name)
    cols = _select_columns(frame, columns, name=name)
    block = _numeric_block(frame, cols, name=name)
    if block.shape[0] < min_records:
        raise InputError(f"{name}: {block.shape[0]} record(s); expected at least {min_records}")
    if _nonfinite_rows(block).any():
        _raise_nonfinite(block, cols, name=name)
    return block, cols


def _align_by_id(original: pd.DataFrame, masked: pd.DataFrame, id_column: str):
    for frame, name in ((original, "original"), (masked, "masked")):
        if id_column not in frame.columns:
            raise InputError(
                f"{name}: id column {id_column!r} not found; available: {list(map(str, frame.columns))}"
            )
        ids = frame[id_column]
        if ids.isna().any():
            row = int(np.flatnonzero(ids.isna().to_numpy())[0])
            raise InputError(
                f"{name}: id column {id_column!r} has {int(ids.isna().sum())} missing id(s) "
                f"(first at row {row}); expected an id on every record"
            )
        duplicated = ids[ids.duplicated(keep=False)]
        if len(duplicated):
            raise InputError(
                f"{name}: id column {id_column!r} has duplicate ids, e.g. "
                f"{_plain(duplicated.iloc[0])!r} ({len(duplicated)} rows share an id); expected unique ids"
            )
    left = set(original[id_column])
    right = set(masked[id_column])
    if left != right:
        only_o = [_plain(v) for v in sorted(left - right, key=str)[:5]]
        only_m = [_plain(v) for v in sorted(right - left, key=str)[:5]]
        raise InputError(
            f"the id sets differ: {len(left - right)} id(s) only in the original (e.g. "
            f"{only_o}), {len(right - left)} only in the masked file (e.g. {only_m}); "
            "expected the same ids in both files"
        )
    masked = masked.set_index(id_column).loc[original[id_column].to_numpy()].reset_index()
    return original, masked, original[id_column].to_numpy()


_ID_NAME = re.compile(
    r"^(id|ids|uid|uuid|key|index|identifier|record|row|rowid|recordid|"
    r"unnamed: ?\d+)$|(^|[_\s.-])(id|no|nr|num|number)$|^id[_\s.-]",
    re.IGNORECASE,
)
"""Column names that say "identifier": ``ID``, ``record_id``, ``row no``, pandas' ``Unnamed: 0``."""


def _identifier_reasons(name: str, original: np.ndarray, masked: np.ndarray, numeric: bool) -> list[str]:
    """Why a column looks like a record identifier rather than a quasi-identifier."""
    reasons = ["named like one"] if _ID_NAME.search(name) else []
    # unique integers left unmasked: a masked one (e.g. swapped ranks) is data, not an id
    unmasked_unique = (
        np.array_equal(original, masked, equal_nan=True) and np.unique(original).size == original.size
    )
    if numeric and unmasked_unique and np.all(original == np.round(original)):
        reasons.append("unique integers, equal in both files")
    if not numeric and unmasked_unique and not np.isnan(original).any():
        reasons.append("a category of its own on every record, equal in both files")
    return reasons


def _warn_identifiers(a: np.ndarray, b: np.ndarray, columns: list[str], numeric: list[int]) -> None:
    for k, column in enumerate(columns):
        reasons = _identifier_reasons(column, a[:, k], b[:, k], k in numeric)
        if reasons:
            warnings.warn(
                f"column {column!r} looks like a record identifier ({'; '.join(reasons)}), not a "
                "quasi-identifier: used as an attribute it can re-identify records by itself. "
                f"Align the files by it with --id-column {column} (Python: id_column=), or "
                "leave it out with --columns",
                DataWarning,
                stacklevel=3,
            )


def _count_duplicate_rows(block: np.ndarray) -> int:
    block = np.where(np.isnan(block), -1.0, block)  # a blank equals a blank
    _, inverse, counts = np.unique(block, axis=0, return_inverse=True, return_counts=True)
    return int((counts[inverse.ravel()] > 1).sum())


def _pair_columns(
    original: pd.DataFrame, masked: pd.DataFrame, columns: Sequence[str] | None, id_column: str | None
) -> list[str]:
    """The attribute columns, checked in both files (the same set when not given)."""
    cols = _select_columns(original, columns, name="original", exclude=id_column)
    if columns is None:
        masked_cols = _select_columns(masked, None, name="masked", exclude=id_column)
        if set(masked_cols) != set(cols):
            raise InputError(
                "original and masked files have different columns: only in the original "
                f"{sorted(set(cols) - set(masked_cols))}, only in the masked file "
                f"{sorted(set(masked_cols) - set(cols))}; choose the shared attributes with --columns "
                "(Python: columns=[...])"
            )
    else:
        _select_columns(masked, cols, name="masked", exclude=id_column)
    return cols


def _align_rows(original: pd.DataFrame, masked: pd.DataFrame, id_column: str | None):
    """The two files aligned record by record (by ``id_column`` or by row order) and the ids."""
    if id_column is not None:
        return _align_by_id(original, masked, id_column)
    if len(original) != len(masked):
        raise InputError(
            f"the original file has {len(original)} records and the masked file "
            f"{len(masked)}; expected the same number (aligned by row order), or pass "
            "--id-column (Python: id_column=) to align them by an identifier"
        )
    return original, masked, None


def _handle_nonfinite(
    a: np.ndarray,
    b: np.ndarray,
    ids: np.ndarray | None,
    cols: list[str],
    drop_nonfinite: bool,
    numeric: list[int],
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int]:
    """Raise on NaN/inf in a numeric attribute, or drop those records from both files
    (and warn); the number dropped."""
    na, nb = a[:, numeric], b[:, numeric]
    bad = _nonfinite_rows(na) | _nonfinite_rows(nb)
    if not bad.any():
        return a, b, ids, 0
    if not drop_nonfinite:
        names = [cols[k] for k in numeric]
        _raise_nonfinite(
            na if _nonfinite_rows(na).any() else nb,
            names,
            name="original" if _nonfinite_rows(na).any() else "masked",
        )
    n_dropped = int(bad.sum())
    warnings.warn(
        f"dropped {n_dropped} of {len(bad)} records with NaN/inf values in either file",
        DataWarning,
        stacklevel=3,
    )
    a, b = a[~bad], b[~bad]
    if ids is not None:
        ids = ids[~bad]
    return a, b, ids, n_dropped


def _check_linkable(a: np.ndarray, b: np.ndarray, cols: list[str], numeric: list[int]) -> None:
    """At least 2 records, and no constant numeric column (standardisation divides by the sd)."""
    if a.shape[0] < 2:
        raise InputError(f"{a.shape[0]} record(s) to link; expected at least 2")
    for block, name in ((a, "original"), (b, "masked")):
        flat = [k for k in numeric if (block[:, k] == block[0, k]).all()]
        if flat:
            k = flat[0]
            raise InputError(
                f"{name}: column {cols[k]!r} is constant (every value is {_plain(block[0, k])!r}); "
                "standardisation divides by the standard deviation, so expected a column "
                "with at least two distinct values. Leave it out with --columns (Python: columns=[...])"
            )


def _attribute_blocks(
    original: pd.DataFrame, masked: pd.DataFrame, kinds: tuple[ColumnKind, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Both files as floats: numbers checked as numbers, categories as level indices."""
    a = encode_codes(original, kinds, name="original")
    b = encode_codes(masked, kinds, name="masked")
    numeric = [k for k, kind in enumerate(kinds) if not kind.categorical]
    if numeric:
        names = [kinds[k].name for k in numeric]
        a[:, numeric] = _numeric_block(original, names, name="original")
        b[:, numeric] = _numeric_block(masked, names, name="masked")
    return a, b


def _handle_blanks(
    a: np.ndarray, b: np.ndarray, ids: np.ndarray | None, kinds: tuple[ColumnKind, ...], spec: KindSpec
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int]:
    """``missing="drop"``: leave out the records with a categorical blank in either file."""
    categorical = [k for k, kind in enumerate(kinds) if kind.categorical]
    if spec.missing != "drop" or not categorical:
        return a, b, ids, 0
    bad = np.isnan(a[:, categorical]).any(axis=1) | np.isnan(b[:, categorical]).any(axis=1)
    if not bad.any():
        return a, b, ids, 0
    blank = [kinds[k].name for k in categorical if np.isnan(a[:, k]).any() or np.isnan(b[:, k]).any()]
    warn_dropped_blanks(int(bad.sum()), len(bad), blank)
    return a[~bad], b[~bad], None if ids is None else ids[~bad], int(bad.sum())


def _warn_duplicates(a: np.ndarray) -> int:
    """Warn when original records share their values; the number of such records."""
    n_dup = _count_duplicate_rows(a)
    if n_dup:
        warnings.warn(
            f"{n_dup} original records share their values with another original record; "
            "no distance can re-identify them with certainty",
            DataWarning,
            stacklevel=3,
        )
    return n_dup


def validate_pair(
    original,
    masked=None,
    *,
    columns: Sequence[str] | None = None,
    id_column: str | None = None,
    drop_nonfinite: bool = False,
    kinds: KindSpec | dict | None = None,
) -> LinkageData:
    """Validate an original file and its masked file and align them record by record.

    Every function of rlopt that takes the two files calls this first, so each of them
    also takes a :class:`LinkageData` in place of the two files (validated once, used
    many times): ``dbrl(data, distance="md")``.

    Parameters
    ----------
    original, masked : DataFrame or array-like of shape (n_records, n_attributes)
        The intruder's file (the original, worst case) and the protected file; or a
        :class:`LinkageData` alone (``masked`` None, no other option), returned as it is.
    columns : list of str, default=None
        Attributes to use; by default every column except ``id_column``, which
        must then be the same set in both files.
    id_column : str, default=None
        Align the files by this identifier instead of by row order (released
        files are often shuffled). Ids must be present, unique and the same set
        in both files.
    drop_nonfinite : bool, default=False
        Drop the records with NaN/inf in either file (from both files) instead of
        raising; a :class:`DataWarning` says how many.
    kinds : KindSpec or dict, default=None
        Declared ordinal and nominal columns and the policy for categorical
        blanks (``{"ordinal": {"edu": ["hs", "college", "grad"]}, "nominal":
        ["region"], "missing": "category"}``); every other column's kind is
        detected (numbers: numeric; text, booleans, categoricals: nominal).

    Returns
    -------
    LinkageData

    Raises
    ------
    InputError
        Non-numeric, unknown or mismatched columns; NaN/inf (unless dropped);
        zero-variance columns; different row counts; duplicate, missing or
        mismatched ids; fewer than 2 records.

    Warns
    -----
    DataWarning
        When original records are duplicated (they cannot all be re-identified).
    """
    # (over 60 lines by its numpydoc docstring: the body is the checks, one call each)
    if isinstance(original, LinkageData):
        given = {"masked": masked, "columns": columns, "id_column": id_column, "kinds": kinds}
        extra = [name for name, value in given.items() if value is not None] + (
            ["drop_nonfinite"] if drop_nonfinite else []
        )
        if extra:
            raise InputError(
                f"{', '.join(extra)} given with validated LinkageData; expected the data alone "
                "(its columns, alignment and kinds were fixed when it was validated)"
            )
        return original
    if masked is None:
        raise InputError(
            "masked: missing; expected the masked file beside the original (or a LinkageData alone)"
        )
    original = as_frame(original, name="original")
    masked = as_frame(masked, name="masked")
    cols = _pair_columns(original, masked, columns, id_column)
    original, masked, ids = _align_rows(original, masked, id_column)
    spec = KindSpec.coerce(kinds)
    if not cols:
        raise InputError("original: no attribute columns; expected at least one")
    column_kind = column_kinds(original, masked, cols, spec)
    a, b = _attribute_blocks(original, masked, column_kind)
    numeric = [k for k, kind in enumerate(column_kind) if not kind.categorical]
    a, b, ids, n_dropped = _handle_nonfinite(a, b, ids, cols, drop_nonfinite, numeric)
    a, b, ids, n_blank = _handle_blanks(a, b, ids, column_kind, spec)
    _check_linkable(a, b, cols, numeric)
    _warn_identifiers(a, b, cols, numeric)
    n_dup = _warn_duplicates(a)
    return LinkageData(a, b, tuple(cols), ids, n_dropped + n_blank, n_dup, column_kind)
