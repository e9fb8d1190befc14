"""Masking methods for categorical attributes: PRAM (and invariant PRAM), randomized
response, global recoding and local suppression.

PRAM (post-randomisation, Gouweleeuw, Kooiman, Willenborg and de Wolf 1998) changes
each value ``u`` of an attribute to ``v`` with probability ``P[u, v] = Pr(released v
| true u)``, independently per record. The default matrix keeps a value with
probability ``theta`` and spreads ``1 - theta`` evenly over the other categories.
*Invariant* PRAM uses ``R = P Q`` with the backward matrix ``Q[v, w] = Pr(true w |
released v) = P[w, v] pi_w / lambda_v`` (``pi``: the file's frequencies,
``lambda = pi P``): then ``pi R = pi``, so the expected released frequencies equal
the original ones.

Randomized response is the same matrix applied by each respondent before the data
holder sees the answer. :func:`randomized_response_report` gives the unbiased
estimate of the true proportions ``pi_hat = (P^T)^-1 lambda_hat``, the deniability
``H(X | Y = v)`` of each released value (bits, posterior from the estimate) and the
``epsilon`` for which the matrix is epsilon-differentially private:
``e^epsilon = max_v max_u P[u, v] / min_u P[u, v]`` (infinite when a column of
``P`` has a zero).

A blank stays a blank under PRAM (it is not a category the matrix covers).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rlopt.data._kinds import BLANK, MERGE_SEPARATOR, category_labels, cell_label
from rlopt.exceptions import DataWarning, InputError

__all__ = [
    "TransitionMatrix",
    "retention_matrix",
    "invariant_matrix",
    "pram_matrices",
    "pram",
    "randomized_response_report",
    "global_recode",
    "local_suppression",
]

ROW_SUM_TOL = 1e-9
"""A transition matrix's rows must sum to 1 within this tolerance."""


@dataclass(frozen=True)
class TransitionMatrix:
    """``P[u, v] = Pr(released levels[v] | true levels[u])`` for one attribute."""

    levels: tuple[str, ...]
    matrix: np.ndarray

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.matrix, index=list(self.levels), columns=list(self.levels))


def _levels(series: pd.Series) -> tuple[str, ...]:
    return tuple(sorted({v for v in category_labels(series) if v is not None}))


def retention_matrix(n_levels: int, theta: float) -> np.ndarray:
    """Keep a value with probability ``theta``; the rest spread evenly over the others."""
    if not 0 <= theta <= 1:
        raise InputError(f"PRAM theta={theta!r}; expected a retention probability in [0, 1]")
    if n_levels == 1:
        return np.ones((1, 1))
    matrix = np.full((n_levels, n_levels), (1.0 - theta) / (n_levels - 1))
    np.fill_diagonal(matrix, theta)
    return matrix


def invariant_matrix(matrix: np.ndarray, frequencies: np.ndarray) -> np.ndarray:
    """``R = P Q`` with ``Q`` the backward matrix of ``P`` under ``frequencies``:
    ``frequencies @ R == frequencies`` (see the module)."""
    pi = np.asarray(frequencies, dtype=float)
    pi = pi / pi.sum()
    released = pi @ matrix
    with np.errstate(divide="ignore", invalid="ignore"):
        backward = np.where(released[:, None] > 0, (matrix * pi[:, None]).T / released[:, None], 0.0)
    return matrix @ backward


def _checked(name: str, table, levels: tuple[str, ...]) -> TransitionMatrix:
    """A user's matrix (DataFrame labelled by categories, rows: true, columns: released)."""
    if not isinstance(table, pd.DataFrame):
        raise InputError(
            f"PRAM matrix of {name!r}: expected a table labelled by categories (rows: true "
            "value, columns: released value)"
        )
    rows = tuple(cell_label(v) or "" for v in table.index)
    cols = tuple(cell_label(v) or "" for v in table.columns)
    if set(rows) != set(cols) or len(rows) != len(cols):
        raise InputError(
            f"PRAM matrix of {name!r}: rows {list(rows)} and columns {list(cols)} must be the same categories"
        )
    missing = sorted(set(levels) - set(rows))
    if missing:
        raise InputError(f"PRAM matrix of {name!r} misses categor(ies) {missing} found in the file")
    matrix = table.set_axis(rows, axis=0).set_axis(cols, axis=1).loc[list(rows), list(rows)]
    values = matrix.to_numpy(dtype=float)
    if not np.isfinite(values).all() or (values < 0).any() or (values > 1).any():
        raise InputError(f"PRAM matrix of {name!r}: expected probabilities in [0, 1]")
    sums = values.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1) > ROW_SUM_TOL)
    if bad.size:
        r = int(bad[0])
        raise InputError(
            f"PRAM matrix of {name!r}: row {rows[r]!r} sums to {sums[r]:.6g}; expected each row "
            "(a true category's release probabilities) to sum to 1"
        )
    return TransitionMatrix(rows, values)


def pram_matrices(
    frame: pd.DataFrame,
    columns: Sequence[str],
    *,
    theta: float | None = None,
    matrices: Mapping[str, pd.DataFrame] | None = None,
    invariant: bool = False,
) -> dict[str, TransitionMatrix]:
    """The published matrix of each column: the user's, else the retention matrix
    of ``theta``; made invariant under the column's frequencies when asked."""
    matrices = dict(matrices or {})
    unknown = sorted(set(matrices) - set(columns))
    if unknown:
        raise InputError(f"PRAM matrices given for {unknown}, which are not PRAM columns {list(columns)}")
    out = {}
    for name in columns:
        if name not in frame.columns:
            raise InputError(f"PRAM column {name!r} not found; available: {list(map(str, frame.columns))}")
        levels = _levels(frame[name])
        if name in matrices:
            published = _checked(name, matrices[name], levels)
        elif theta is None:
            raise InputError(f"PRAM of {name!r}: expected theta (retention probability) or a matrix")
        else:
            published = TransitionMatrix(levels, retention_matrix(len(levels), theta))
        if invariant:
            labels = category_labels(frame[name])
            counts = np.array([(labels == level).sum() for level in published.levels], dtype=float)
            published = TransitionMatrix(published.levels, invariant_matrix(published.matrix, counts))
        out[name] = published
    return out


def pram(frame: pd.DataFrame, matrices: Mapping[str, TransitionMatrix], *, seed: int = 0) -> pd.DataFrame:
    """``frame`` with each column of ``matrices`` post-randomised (seeded; blanks kept)."""
    rng = np.random.default_rng(seed)
    out = frame.copy()
    for name, published in matrices.items():
        labels = category_labels(frame[name])
        index = {level: i for i, level in enumerate(published.levels)}
        codes = np.array([index.get(v, -1) if v is not None else -1 for v in labels])
        cumulative = np.cumsum(published.matrix, axis=1)
        draws = rng.random(len(codes))
        present = codes >= 0
        chosen = (draws[present, None] > cumulative[codes[present]]).sum(axis=1)
        chosen = np.minimum(chosen, len(published.levels) - 1)  # rounding of the last cumulative sum
        released = np.array(labels.to_numpy(), dtype=object)
        released[present] = np.asarray(published.levels, dtype=object)[chosen]
        out[name] = pd.Series(released, index=frame.index).where(pd.notna(released), None)
    return out


def randomized_response_report(released: pd.Series, published: TransitionMatrix) -> dict:
    """The data holder's figures from randomized-response answers ``released``:
    ``estimate`` (unbiased ``pi_hat``), ``deniability`` (bits per released value),
    ``epsilon`` (see the module)."""
    labels = category_labels(released)
    counts = np.array([(labels == level).sum() for level in published.levels], dtype=float)
    if counts.sum() == 0:
        raise InputError("randomized response: no answer to estimate from")
    observed = counts / counts.sum()
    matrix = published.matrix
    if abs(np.linalg.det(matrix)) < 1e-12 or np.linalg.cond(matrix) > 1e12:
        raise InputError(
            "randomized response: the matrix is singular (e.g. theta = 1/number of categories), "
            "so the true proportions cannot be estimated; expected an invertible matrix"
        )
    estimate = np.linalg.solve(matrix.T, observed)
    prior = np.clip(estimate, 0, None)
    prior = prior / prior.sum() if prior.sum() > 0 else np.full(prior.size, 1 / prior.size)
    joint = prior[:, None] * matrix  # Pr(true u, released v)
    deniability = {}
    for v, level in enumerate(published.levels):
        column = joint[:, v]
        posterior = column / column.sum() if column.sum() > 0 else np.zeros_like(column)
        nonzero = posterior[posterior > 0]
        # an entropy: never below 0 (a sure posterior sums to -0.0, which prints as "-0.00")
        deniability[level] = max(0.0, float(-(nonzero * np.log2(nonzero)).sum()))
    with np.errstate(divide="ignore"):
        ratios = matrix.max(axis=0) / matrix.min(axis=0)
    epsilon = float(np.log(ratios.max()))
    return {
        "levels": list(published.levels),
        "released_share": dict(zip(published.levels, observed.tolist())),
        "estimate": dict(zip(published.levels, estimate.tolist())),
        "deniability_bits": deniability,
        "epsilon": epsilon,
    }


def global_recode(
    frame: pd.DataFrame,
    *,
    merge: Mapping[str, Sequence[Sequence[str]]] | None = None,
    top: Mapping[str, float] | None = None,
    bottom: Mapping[str, float] | None = None,
    base: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """Global recoding: ``merge`` categories (each set released as ``a|b``, the form
    rlopt's linkage reads as the published recoding), numeric ``top`` and ``bottom``
    coding (values beyond the threshold become the threshold) and rounding to a
    ``base`` (``base * round(x / base)``)."""
    out = frame.copy()
    for name, sets in (merge or {}).items():
        _column(frame, name)
        labels = category_labels(frame[name])
        seen = {v for v in labels if v is not None}
        mapping: dict[str, str] = {}
        for group in sets:
            group = [str(g) for g in group]
            absent = sorted(set(group) - seen)
            if absent or len(group) < 2:
                raise InputError(
                    f"recoding {name!r}: merge {group} needs at least two categories of the column "
                    f"({'not found: ' + str(absent) if absent else 'one given'}); categories: {sorted(seen)}"
                )
            label = MERGE_SEPARATOR.join(group)
            for g in group:
                if g in mapping:
                    raise InputError(f"recoding {name!r}: category {g!r} is in two merges")
                mapping[g] = label
        out[name] = pd.Series(
            [None if v is None else mapping.get(v, v) for v in labels], index=frame.index, dtype=object
        )
    for name, threshold in (top or {}).items():
        out[name] = np.minimum(_numeric(frame, name), threshold)
    for name, threshold in (bottom or {}).items():
        out[name] = np.maximum(_numeric(out, name), threshold)
    for name, step in (base or {}).items():
        if not step > 0:
            raise InputError(f"recoding {name!r}: rounding base {step!r}; expected a number > 0")
        out[name] = step * np.round(_numeric(out, name) / step)
    return out


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    if name not in frame.columns:
        raise InputError(f"recoding: column {name!r} not found; available: {list(map(str, frame.columns))}")
    return frame[name]


def _numeric(frame: pd.DataFrame, name: str) -> pd.Series:
    column = _column(frame, name)
    if not pd.api.types.is_numeric_dtype(column):
        raise InputError(
            f"recoding {name!r}: top/bottom coding and rounding need numbers, got {column.dtype}"
        )
    return column


def local_suppression(frame: pd.DataFrame, quasi_identifiers: Sequence[str], k: int) -> pd.DataFrame:
    """Blank values of the quasi-identifiers until every combination (a blank counting
    as a value of its own) is shared by at least ``k`` records, or the record's values
    are all blank.

    Heuristic (greedy, few suppressions first): each round, every record in a class
    smaller than ``k`` loses one value, the one of its quasi-identifiers whose value is
    rarest in the file (the value that most sets it apart); classes are recomputed
    and the rounds repeat. Records blanked entirely form a class of their own: while it
    has fewer than ``k`` members, one more record, from the largest class, is blanked
    entirely. Each round blanks at least one value, so it ends, with every class of at
    least ``k`` records (a file of fewer than ``k`` records ends all blank, with a warning).
    """
    for name in quasi_identifiers:
        _column(frame, name)
    if k < 1:
        raise InputError(f"local suppression k={k}; expected an integer >= 1")
    out = frame.copy()
    labels = pd.DataFrame({c: category_labels(frame[c]).fillna(BLANK) for c in quasi_identifiers})
    while True:
        sizes = labels.groupby(list(quasi_identifiers), sort=False)[quasi_identifiers[0]].transform("size")
        some_value = (labels != BLANK).any(axis=1).to_numpy()
        unsafe = np.flatnonzero((sizes < k).to_numpy() & some_value)
        if unsafe.size == 0:
            n_blank = int((~some_value).sum())
            if not 0 < n_blank < k:
                break
            if not some_value.any():  # every record blank: the file has fewer than k records
                warnings.warn(
                    f"local suppression: {n_blank} record(s) in all, fewer than k={k}: every value is "
                    "blanked and the release is still below k",
                    DataWarning,
                    stacklevel=2,
                )
                break
            # the records blanked entirely are a class below k: one more joins it
            unsafe = np.flatnonzero(some_value)
            labels.iloc[int(unsafe[np.argmax(sizes.to_numpy()[unsafe])]), :] = BLANK
            continue
        frequency = {c: labels[c].map(labels[c].value_counts()) for c in quasi_identifiers}
        rarity = pd.DataFrame(frequency).where(labels != BLANK, np.inf)
        chosen = rarity.iloc[unsafe].to_numpy().argmin(axis=1)
        for row, column in zip(unsafe, chosen):
            labels.iat[int(row), int(column)] = BLANK
    for column in quasi_identifiers:
        blank = (labels[column] == BLANK).to_numpy()
        out[column] = out[column].astype(object).where(~blank, None)
    return out
