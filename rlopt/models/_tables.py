"""Equivalence classes and the per-class statistics of a confidential attribute.

Private: the inputs are validated by :mod:`rlopt.models.checks`. Every statistic
is computed from one sparse table of (class, value) counts, so the cost is
``O(n log n)`` in the number of records whatever the numbers of classes and of
distinct values; the distances are computed in integer arithmetic (exact up to
about ``10^6`` records) and divided once at the end, so that a file whose
classes match the whole file's distribution has distance exactly 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["Classes", "ValueTable", "Context"]


@dataclass(frozen=True)
class Classes:
    """The equivalence classes of a file: records with identical quasi-identifier values.

    Attributes
    ----------
    codes : ndarray of int, shape (n_records,)
        The class of each record, ``0 .. n_classes - 1``.
    sizes : ndarray of int, shape (n_classes,)
    nan_columns : tuple of str
        Quasi-identifiers holding NaN; NaN is one more value of them.
    n_nan_records : int
        Records with NaN in some quasi-identifier.
    """

    codes: np.ndarray
    sizes: np.ndarray
    nan_columns: tuple[str, ...] = ()
    n_nan_records: int = 0

    @property
    def n_records(self) -> int:
        return int(self.codes.size)

    @property
    def n_classes(self) -> int:
        return int(self.sizes.size)

    @property
    def all_singletons(self) -> bool:
        """Every class has one record (and there are at least two records)."""
        return self.n_records > 1 and self.n_classes == self.n_records

    @classmethod
    def of(cls, frame: pd.DataFrame, quasi_identifiers: list[str]) -> Classes:
        """The classes of ``frame`` on ``quasi_identifiers`` (NaN is a value of its own)."""
        grouped = frame.groupby(quasi_identifiers, dropna=False, sort=False, observed=True)
        codes = grouped.ngroup().to_numpy(dtype=np.int64)
        missing = frame[quasi_identifiers].isna()
        return cls(
            codes=codes,
            sizes=np.bincount(codes),
            nan_columns=tuple(c for c in quasi_identifiers if missing[c].any()),
            n_nan_records=int(missing.any(axis=1).sum()),
        )


def is_ordered(series: pd.Series) -> bool:
    """The values of ``series`` have an order: numbers (not booleans) or an ordered categorical."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return bool(dtype.ordered)
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


@dataclass(frozen=True)
class ValueTable:
    """Sparse counts of one confidential attribute per class.

    ``(pair_class[r], pair_value[r])`` are the (class, value) pairs that occur,
    sorted by class then value, and ``pair_count[r]`` their numbers of records.
    Values are coded ``0 .. n_values - 1``, in increasing order when ``ordered``;
    NaN is one more value (the last one).
    """

    classes: Classes
    pair_class: np.ndarray
    pair_value: np.ndarray
    pair_count: np.ndarray
    value_count: np.ndarray
    ordered: bool
    n_nan: int

    @property
    def n_values(self) -> int:
        return int(self.value_count.size)

    @property
    def starts(self) -> np.ndarray:
        """The first pair of each class (every class has at least one)."""
        return np.flatnonzero(np.r_[True, self.pair_class[1:] != self.pair_class[:-1]])

    @classmethod
    def of(cls, series: pd.Series, classes: Classes) -> ValueTable:
        ordered = is_ordered(series)
        codes, _ = pd.factorize(series, sort=ordered, use_na_sentinel=False)
        m = int(codes.max()) + 1
        keys, counts = np.unique(classes.codes * m + codes.astype(np.int64), return_counts=True)
        return cls(
            classes=classes,
            pair_class=keys // m,
            pair_value=keys % m,
            pair_count=counts,
            value_count=np.bincount(codes, minlength=m),
            ordered=ordered,
            n_nan=int(series.isna().sum()),
        )

    def distinct(self) -> np.ndarray:
        """Number of distinct values in each class."""
        return np.bincount(self.pair_class, minlength=self.classes.n_classes)

    def entropy(self) -> np.ndarray:
        """Entropy (natural logarithm) of each class's distribution of the values."""
        q = self.pair_count / self.classes.sizes[self.pair_class]
        return np.bincount(self.pair_class, weights=-q * np.log(q), minlength=self.classes.n_classes)

    def _integer_dtype(self) -> np.dtype:
        """int64 while the sums of the distances cannot overflow, else float64."""
        n = self.classes.n_records
        return np.dtype(np.int64 if n * n * max(self.n_values, 2) < 2**62 else np.float64)

    def equal_emd(self) -> np.ndarray:
        """Equal-distance EMD of each class to the file: ``0.5 * sum_v |q_v - p_v|``."""
        dtype = self._integer_dtype()
        n = self.classes.n_records
        n_g = self.classes.sizes.astype(dtype)
        c = self.pair_count.astype(dtype)
        big_n = self.value_count.astype(dtype)[self.pair_value]
        gap = np.abs(c * n - big_n * n_g[self.pair_class])
        present = np.add.reduceat(gap, self.starts)
        absent = n_g * (n - np.add.reduceat(big_n, self.starts))
        return (present + absent) / (2.0 * n * n_g.astype(np.float64))

    def ordered_emd(self) -> np.ndarray:
        """Ordered EMD of each class to the file (Li, Li, Venkatasubramanian 2007).

        ``(1 / (m - 1)) * sum_i |C_g(i) / n_g - N(i) / n|`` over the ``m`` values in
        order, with ``C_g``, ``N`` the cumulative counts of the class and the file.
        The class's cumulative count is a step function: on each run of values
        between two of the class's values it is a constant ``x`` while the file's
        is non-decreasing, so the sum over the run splits where the file's
        passes ``x`` and is read from prefix sums.
        """
        m, n = self.n_values, self.classes.n_records
        if m == 1:
            return np.zeros(self.classes.n_classes)
        dtype = self._integer_dtype()
        n_g = self.classes.sizes.astype(dtype)
        cum_file = np.cumsum(self.value_count).astype(dtype)
        prefix = np.r_[0, np.cumsum(cum_file)].astype(dtype)
        starts = self.starts
        cum_class = np.cumsum(self.pair_count).astype(dtype)
        cum_class -= np.repeat(np.r_[0, cum_class[starts[1:] - 1]], np.diff(np.r_[starts, cum_class.size]))
        ends = np.r_[self.pair_value[1:], m]
        ends[np.r_[starts[1:] - 1, ends.size - 1]] = m
        head = n_g * prefix[self.pair_value[starts]]  # before the class's first value: C_g = 0
        runs = _run_sums(cum_class * n, n_g[self.pair_class], self.pair_value, ends, cum_file, prefix)
        total = head + np.add.reduceat(runs, starts)
        return total / (float(n) * (m - 1) * n_g.astype(np.float64))

    def ratio(self) -> np.ndarray:
        """Largest ratio, both ways, between a value's frequency in a class and in
        the file; ``inf`` for a class that lacks a value of the file."""
        n = float(self.classes.n_records)
        in_class = self.pair_count * n
        in_file = self.value_count[self.pair_value] * self.classes.sizes[self.pair_class].astype(np.float64)
        worst = np.maximum.reduceat(
            np.maximum(in_class, in_file) / np.minimum(in_class, in_file), self.starts
        )
        return np.where(self.distinct() < self.n_values, np.inf, worst)


def _run_sums(x, n_g, start, end, cum_file, prefix) -> np.ndarray:
    """``sum_{i in [start, end)} |x - n_g * cum_file[i]|`` for each run, ``cum_file`` non-decreasing."""
    threshold = -(-x // n_g) if np.issubdtype(x.dtype, np.integer) else x / n_g
    split = np.clip(np.searchsorted(cum_file, threshold, side="left"), start, end)
    below = x * (split - start) - n_g * (prefix[split] - prefix[start])
    above = n_g * (prefix[end] - prefix[split]) - x * (end - split)
    return below + above


@dataclass
class Context:
    """A validated file, its classes, and the value tables computed so far."""

    frame: pd.DataFrame
    quasi_identifiers: list[str]
    confidential: list[str]
    classes: Classes
    _tables: dict[str, ValueTable] = field(default_factory=dict)

    def table(self, column: str) -> ValueTable:
        if column not in self._tables:
            self._tables[column] = ValueTable.of(self.frame[column], self.classes)
        return self._tables[column]
