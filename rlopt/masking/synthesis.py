"""Synthetic data generators, as masking methods: partial synthesis by CART, and two
fully synthetic generators, a Gaussian copula and a differentially private histogram.

- :func:`cart_synthesis` replaces chosen attributes of every record by values drawn
  from the leaves of classification and regression trees (synthpop's ``cart``
  method). The other attributes and the record order are kept: record ``i`` of the
  output is record ``i``'s released version, so record linkage applies to it as to
  any masked file.
- :func:`gaussian_copula` and :func:`dp_histogram` draw new records from a model of
  the file. Their records are nobody's: record linkage does not apply to a fully
  synthetic file, whose risk is that of a membership attack.

Library choices. SDV's ``copulas`` package (0.14.1) fits Gaussian copulas, but it
requires plotly and pins ``pandas<3`` while rlopt runs pandas 3; the copula here is
written with numpy and :data:`scipy.stats.norm`. diffprivlib (0.6.6) was weighed for
the histogram's Laplace mechanism: it does not import with scikit-learn 1.9 (its
``models`` import ``sklearn.tree._tree.DOUBLE``, which is gone), and its
``tools.histogramdd`` draws the noise cell by cell in a Python loop (with the import
patched, 0.9 s for the 4**8 = 65536 cells of 8 attributes in 4 bins, about a minute
at the 2**22 cells allowed here, against 2 ms for numpy's vectorised
``Generator.laplace``); the noise here is numpy's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Integral

import numpy as np
import pandas as pd

from rlopt.data._validate import as_frame, validate_table
from rlopt.exceptions import InputError
from rlopt.masking.dp import EPSILON, Bounds, prepare_domain
from rlopt.validation import SEED, Interval, validate_params

__all__ = ["cart_synthesis", "gaussian_copula", "dp_histogram", "MAX_CELLS"]

MAX_CELLS = 2**22
"""The most cells of a DP histogram (``bins ** n_attributes``): 32 MiB of counts."""

MIN_LEAF = Interval(Integral, 1, note="records per leaf")
N_RECORDS = Interval(Integral, 2, note="records to draw")
BINS = Interval(Integral, 2, note="bins per attribute")


# ---- columns ----------------------------------------------------------------------


def _chosen(frame: pd.DataFrame, columns: Sequence[str] | None) -> list[str]:
    """``columns`` (default: every column), each a column of ``frame``, none twice."""
    chosen = [str(c) for c in frame.columns] if columns is None else [str(c) for c in columns]
    unknown = [c for c in chosen if c not in frame.columns]
    if unknown:
        raise InputError(f"input: unknown column(s) {unknown}; available: {list(map(str, frame.columns))}")
    repeated = sorted({c for c in chosen if chosen.count(c) > 1})
    if repeated:
        raise InputError(f"input: column(s) {repeated} given more than once; expected each once")
    return chosen


def _numeric(frame: pd.DataFrame, columns: list[str], method: str) -> None:
    """Refuse a categorical column among ``columns`` (``method`` models numbers only)."""
    for column in columns:
        series = frame[column]
        if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
            raise InputError(
                f"input: column {column!r} is categorical (dtype {series.dtype}); {method} takes "
                "numeric attributes: choose numeric columns with --columns (Python: columns=[...])"
            )


def _whole(frame: pd.DataFrame, columns: list[str]) -> list[bool]:
    """Whether each column holds whole numbers only (its draws are rounded)."""
    return [
        pd.api.types.is_integer_dtype(frame[c])
        or bool(np.all(np.mod(frame[c].to_numpy(dtype=np.float64), 1) == 0))
        for c in columns
    ]


def _as_columns(frame: pd.DataFrame, columns: list[str], values: np.ndarray) -> pd.DataFrame:
    """``values`` as a new frame of ``columns``, rounded (and of the same integer dtype)
    where ``frame``'s column holds whole numbers."""
    out = {}
    for j, (column, whole) in enumerate(zip(columns, _whole(frame, columns), strict=True)):
        series = pd.Series(np.round(values[:, j]) if whole else values[:, j])
        dtype = frame[column].dtype
        out[column] = series.astype(dtype) if pd.api.types.is_integer_dtype(dtype) else series
    return pd.DataFrame(out)


# ---- partial synthesis by CART ------------------------------------------------------


def _encoded(series: pd.Series, levels: pd.Index | None) -> np.ndarray:
    """A predictor as the trees read it: numbers as they are (NaN allowed), categories
    by their code among the original's sorted ``levels`` (a blank: -1)."""
    if levels is None:
        return series.to_numpy(dtype=np.float64)
    return pd.Categorical(series, categories=levels).codes.astype(np.float64)


def _levels(series: pd.Series) -> pd.Index | None:
    """The sorted categories of a categorical column (None: a numeric column)."""
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        return None
    return pd.Index(sorted(series.dropna().unique(), key=str))


def _leaf_draws(
    original_leaves: np.ndarray, released_leaves: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """For each released record, the row of an original record drawn uniformly among
    those in the same leaf."""
    order = np.argsort(original_leaves, kind="stable")
    leaves, starts, counts = np.unique(original_leaves[order], return_index=True, return_counts=True)
    where = np.searchsorted(leaves, released_leaves)
    return order[starts[where] + rng.integers(0, counts[where])]


# (over 60 lines by its docstring: the method, its encoding choices and its references)
@validate_params({"min_leaf": [MIN_LEAF], "seed": [SEED]})
def cart_synthesis(
    frame: pd.DataFrame, columns: Sequence[str], *, min_leaf: int = 5, seed: int = 0
) -> pd.DataFrame:
    """Partially synthetic file: ``columns`` replaced, one after another, by draws from
    the leaves of a CART tree (synthpop's ``cart`` method).

    Parameters
    ----------
    frame : DataFrame of shape (n_records, n_attributes)
        The original file; numeric and categorical (text) columns.
    columns : list of str
        The attributes to synthesize, in the order they are visited (at least one).
    min_leaf : int, default=5
        The fewest original records in a leaf (scikit-learn's ``min_samples_leaf``):
        the larger, the coarser the trees and the further a record's synthetic value
        from its own; ``n_records`` gives one leaf, i.e. draws from the marginal.
    seed : int, default=0
        Seed of ``numpy.random.default_rng`` (the draws) and of the trees.

    Returns
    -------
    DataFrame
        ``frame`` with the synthesized columns replaced; every other column, the index
        and the record order kept.

    Notes
    -----
    For the ``j``-th attribute visited, a ``DecisionTreeRegressor`` (numeric column) or
    ``DecisionTreeClassifier`` (categorical column) with ``min_samples_leaf=min_leaf``
    is fitted on the original file, its predictors the attributes kept plus the
    attributes synthesized before ``j``. Each record's predictors (the synthesized
    values of the attributes visited before, the original values of the kept ones)
    are dropped down the tree, and its new value is one of the original values of
    attribute ``j`` in that leaf, drawn uniformly. The first attribute, when every
    column is synthesized, has no predictor: it is drawn from its marginal (a
    bootstrap). Categorical predictors are ordinal-encoded (their sorted categories'
    codes, a blank its own code), which keeps one feature per attribute; the
    splits are then on ranges of codes rather than any subset of categories as in
    rpart, synthpop's trees. A numeric target's blanks are left out of the fit but
    can be drawn. Every drawn value is a value of the original column.

    References
    ----------
    J. P. Reiter, "Using CART to generate partially synthetic public use microdata",
    Journal of Official Statistics 21(3):441-462, 2005. B. Nowok, G. M. Raab, C.
    Dibben, "synthpop: Bespoke creation of synthetic data in R", Journal of
    Statistical Software 74(11), 2016.
    """
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    frame = as_frame(frame, name="input")
    if not columns:
        raise InputError(
            "partial synthesis needs the attributes to replace: --columns A,B (Python: columns=[...])"
        )
    chosen = _chosen(frame, columns)
    if len(frame) == 0:
        raise InputError("input: 0 records; expected at least 1")
    rng = np.random.default_rng(seed)
    levels = {str(c): _levels(frame[c]) for c in frame.columns}
    predictors = [str(c) for c in frame.columns if c not in chosen]
    released = frame.copy()
    for column in chosen:
        if not predictors:
            rows = rng.integers(0, len(frame), size=len(frame))  # no predictor: the marginal
        else:
            x_original = np.column_stack([_encoded(frame[c], levels[c]) for c in predictors])
            x_released = np.column_stack([_encoded(released[c], levels[c]) for c in predictors])
            target = frame[column]
            if levels[column] is None:
                fitted = target.notna().to_numpy()
                tree = DecisionTreeRegressor(min_samples_leaf=min_leaf, random_state=seed)
                y = target.to_numpy(dtype=np.float64)
            else:
                fitted = np.ones(len(frame), dtype=bool)
                tree = DecisionTreeClassifier(min_samples_leaf=min_leaf, random_state=seed)
                y = pd.factorize(target, use_na_sentinel=False)[0]
            if not fitted.any():  # every value blank: nothing else to draw
                predictors.append(column)
                continue
            tree.fit(x_original[fitted], y[fitted])
            rows = _leaf_draws(tree.apply(x_original), tree.apply(x_released), rng)
        released[column] = frame[column].iloc[rows].set_axis(frame.index)
        predictors.append(column)
    return released


# ---- fully synthetic: a Gaussian copula ---------------------------------------------


def _normal_scores(values: np.ndarray) -> np.ndarray:
    """Each column's ranks (ties averaged) as normal scores ``Phi^-1(rank / (n + 1))``."""
    from scipy.stats import norm, rankdata

    return norm.ppf(rankdata(values, axis=0) / (values.shape[0] + 1))


def _correlation(scores: np.ndarray) -> np.ndarray:
    """The normal scores' correlation matrix, made positive semi-definite (negative
    eigenvalues set to 0, the diagonal rescaled to 1); a constant column is
    uncorrelated with the others."""
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.atleast_2d(np.corrcoef(scores, rowvar=False))
    corr = np.nan_to_num(corr, nan=0.0)
    np.fill_diagonal(corr, 1.0)
    eigenvalues, vectors = np.linalg.eigh(corr)
    if eigenvalues.min() < 0:
        corr = (vectors * np.clip(eigenvalues, 0, None)) @ vectors.T
        scale = np.sqrt(np.diag(corr))
        corr = corr / np.outer(scale, scale)
    return corr


@validate_params({"n_records": [N_RECORDS, None], "seed": [SEED]})
def gaussian_copula(
    frame: pd.DataFrame,
    *,
    n_records: int | None = None,
    columns: Sequence[str] | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Fully synthetic file drawn from a Gaussian copula with the empirical marginals.

    Parameters
    ----------
    frame : DataFrame of shape (n, n_attributes)
        The original file (the chosen columns numeric, finite, at least 2 records).
    n_records : int, default=None
        Records to draw (at least 2); default: as many as ``frame`` has.
    columns : list of str, default=None
        The attributes to model and release (default: all).
    seed : int, default=0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    DataFrame of shape (n_records, len(columns))
        New records (index ``0 .. n_records - 1``), none of them anybody's. A column of
        whole numbers (an integer dtype, or floats that are all whole) is rounded.

    Notes
    -----
    Each attribute's ranks become normal scores ``z = Phi^-1(rank / (n + 1))``
    (:data:`scipy.stats.norm`); their correlation matrix ``R`` (made positive
    semi-definite if needed) is the copula. A draw ``z ~ N(0, R)`` is mapped back
    through each attribute's empirical quantile function at ``Phi(z)``, the sorted
    values interpolated linearly (:func:`numpy.quantile`'s default), so every value
    lies within its column's range and the ranks' dependence is kept.
    """
    from scipy.stats import norm

    frame = as_frame(frame, name="input")
    chosen = _chosen(frame, columns)
    _numeric(frame, chosen, "the Gaussian copula")
    values, _ = validate_table(frame, columns=chosen, name="input", min_records=2)
    n_out = len(frame) if n_records is None else int(n_records)
    corr = _correlation(_normal_scores(values))
    eigenvalues, vectors = np.linalg.eigh(corr)
    root = vectors * np.sqrt(np.clip(eigenvalues, 0, None))
    rng = np.random.default_rng(seed)
    u = norm.cdf(rng.standard_normal((n_out, len(chosen))) @ root.T)
    drawn = np.column_stack([np.quantile(values[:, j], u[:, j]) for j in range(len(chosen))])
    return _as_columns(frame, chosen, drawn)


# ---- fully synthetic: a differentially private histogram ----------------------------


# (over 60 lines by its docstring: the mechanism, its sensitivity and the cap on cells)
@validate_params({"epsilon": [EPSILON], "bins": [BINS], "n_records": [N_RECORDS, None], "seed": [SEED]})
def dp_histogram(
    frame: pd.DataFrame,
    epsilon: float,
    *,
    bins: int = 4,
    bounds: Bounds | None = None,
    n_records: int | None = None,
    columns: Sequence[str] | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Fully synthetic file drawn from an ε-differentially private histogram.

    Parameters
    ----------
    frame : DataFrame of shape (n, n_attributes)
        The original file (the chosen columns numeric and finite).
    epsilon : float
        Privacy budget, finite and > 0.
    bins : int, default=4
        Equal-width bins per attribute (at least 2); the histogram has
        ``bins ** n_attributes`` cells, at most :data:`MAX_CELLS`.
    bounds : dict {column: (lower, upper)}, default=None
        The published domain of each attribute. None takes the data's min and max,
        with a :class:`~rlopt.exceptions.DataWarning`: such bounds are not private.
    n_records : int, default=None
        Records to draw (at least 2); default: as many as ``frame`` has.
    columns : list of str, default=None
        The attributes to model and release (default: all).
    seed : int, default=0
        Seed of ``numpy.random.default_rng``. The guarantee holds only if the noise is
        unknown to the attacker: a real release needs a secret seed.

    Returns
    -------
    DataFrame of shape (n_records, len(columns))
        New records (index ``0 .. n_records - 1``), each inside ``bounds``. A column
        of whole numbers is rounded.

    Notes
    -----
    Each attribute's domain is cut into ``bins`` equal-width bins (the upper bound in
    the last one) and every record counted in its cell of the cross product. Adding
    or removing one record changes one count by 1 (L1 sensitivity 1), so Laplace
    noise of scale ``1 / epsilon`` on every cell, empty ones included, makes the
    counts ε-DP. Negative noisy counts are set to 0; then ``n_records`` cells are
    drawn with probabilities proportional to the noisy counts, and a point uniformly
    inside each: post-processing, which keeps ε-DP. The default ``n_records`` is the
    file's own count, which is published with it; give another number (e.g. the
    noisy total) where that count is itself secret.
    """
    frame = as_frame(frame, name="input")
    chosen = _chosen(frame, columns)
    _numeric(frame, chosen, "the DP histogram")
    cells = int(bins) ** len(chosen)
    if cells > MAX_CELLS:
        raise InputError(
            f"bins={bins} with {len(chosen)} attributes make {cells} cells; expected at most "
            f"{MAX_CELLS} (2**22): give fewer --bins or --columns (Python: bins=, columns=)"
        )
    _, values, _, lower, upper = prepare_domain(frame, chosen, bounds, min_records=1)
    width = upper - lower
    with np.errstate(invalid="ignore", divide="ignore"):
        position = np.where(width > 0, (values - lower) / np.where(width > 0, width, 1.0), 0.0)
    index = np.clip(np.floor(position * bins).astype(np.int64), 0, bins - 1)
    shape = (int(bins),) * len(chosen)
    counts = np.bincount(np.ravel_multi_index(index.T, shape), minlength=cells)
    rng = np.random.default_rng(seed)
    noisy = np.clip(counts + rng.laplace(scale=1 / epsilon, size=cells), 0, None)
    total = noisy.sum()
    if not total > 0:
        raise InputError(
            f"every noisy count of the {cells} cells is 0 after clipping (epsilon={epsilon:g}): "
            "nothing to draw from; give a larger --epsilon or fewer --bins or --columns"
        )
    n_out = len(frame) if n_records is None else int(n_records)
    drawn = np.unravel_index(rng.choice(cells, size=n_out, p=noisy / total), shape)
    points = lower + (np.column_stack(drawn) + rng.random((n_out, len(chosen)))) * width / bins
    synthetic = _as_columns(frame, chosen, np.clip(points, lower, upper))
    for j, (column, whole) in enumerate(zip(chosen, _whole(frame, chosen), strict=True)):
        low, high = math.ceil(lower[j]), math.floor(upper[j])
        if whole and low <= high:  # rounding stays inside the domain's whole numbers
            synthetic[column] = synthetic[column].clip(low, high)
    return synthetic
