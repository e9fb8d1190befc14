"""Risk and utility measures that need no optimisation: interval disclosure
(docs/method.md §6) and the information loss of a masked file."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from rlopt.data import LinkageData, validate_pair
from rlopt.data._standardise import Standardisation, column_sd
from rlopt.data._validate import as_frame, validate_table
from rlopt.exceptions import InputError, NonFiniteError
from rlopt.validation import PERCENTAGE, validate_params

__all__ = [
    "interval_disclosure",
    "information_loss",
    "propensity_mse",
    "distribution_loss",
]


@validate_params({"p": [PERCENTAGE]})
def interval_disclosure(
    original, masked=None, *, p: float = 10.0, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """Share of values an intruder locates within a small interval, per attribute.

    Parameters
    ----------
    original, masked : DataFrame or array-like, aligned record by record (or validated
        :class:`~rlopt.data.LinkageData` alone)
    p : float, default=10
        Interval width in percent.

    Returns
    -------
    DataFrame
        One row per attribute: ``rank_based`` is the share of records whose
        original value lies in the interval of ranks of width ``p`` % of the
        records centred on the masked value's rank (ranks in the original
        column); ``sd_based`` the share with ``|V(x) - V'(x)| <= p * sd(V) / 100``.
    """
    data = validate_pair(original, masked, columns=columns)
    # on the numeric attributes: an interval around a category means nothing
    data = data.subset(data.numeric_columns) if data.mixed else data
    n_records = data.n_records
    half = p * n_records / 200  # half the window, in ranks
    rows = []
    for j, column in enumerate(data.columns):
        ordered = np.sort(data.original[:, j])
        # a value's rank range in the original column: ties share their ranks
        lo_m = np.searchsorted(ordered, data.masked[:, j], side="left")
        hi_m = np.searchsorted(ordered, data.masked[:, j], side="right") - 1
        lo_o = np.searchsorted(ordered, data.original[:, j], side="left")
        hi_o = np.searchsorted(ordered, data.original[:, j], side="right") - 1
        rank_hit = (lo_o <= hi_m + half) & (hi_o >= lo_m - half)
        sd = column_sd(data.original[:, [j]])[0]
        sd_hit = np.abs(data.original[:, j] - data.masked[:, j]) <= p * sd / 100
        rows.append(
            {"attribute": column, "rank_based": float(rank_hit.mean()), "sd_based": float(sd_hit.mean())}
        )
    return pd.DataFrame(rows)


def information_loss(original, masked=None, *, columns: Sequence[str] | None = None) -> dict:
    """How much a masked file departs from its original (0 = identical).

    Returns
    -------
    dict
        ``mean_change``: mean over attributes of ``|mean' - mean| / sd``;
        ``variance_change``: mean of ``|var' - var| / var``;
        ``correlation_change``: mean absolute change of the off-diagonal
        correlations; ``covariance_change``: mean absolute change of the
        covariances (diagonal included) in units of ``sd_j sd_k``; ``sse``: the
        sum of squared differences of the z-scores (standardised with the
        original's mean and sd) divided by the total sum of squares, ``SSE / SST``
        (the microaggregation literature's loss); ``il1s``: mean over records and
        attributes of ``|x - x'| / (sqrt(2) sd)`` (Yancey, Winkler and Creecy
        2002); ``pmse``: the propensity-score mean squared error (Woo, Reiter,
        Oganian and Karr 2009): original and masked records stacked, labelled 0/1,
        a logistic regression fitted, and
        ``mean (p_hat - 1/2)^2`` (:func:`propensity_mse`): 0 when the files cannot be
        told apart, at most 1/4.

    On a mixed file the measures above are taken on the numeric attributes (None
    when there is none), and two more on the categorical ones: ``categorical_changed``,
    the mean share of records whose value changed (a blank counts as a value; a value
    released in a merged category of a global recoding counts as changed), and
    ``categorical_tv``, the mean total-variation distance between the original's and
    the masked file's frequencies, in the released categories (0 when the frequencies
    are kept, as invariant PRAM does in expectation).
    """
    data = validate_pair(original, masked, columns=columns)
    if not data.mixed:
        return _numeric_loss(data)
    numeric = data.numeric_columns
    figures = _numeric_loss(data.subset(numeric)) if numeric else dict.fromkeys(_NUMERIC_LOSS)
    changed, distance = [], []
    for k, kind in enumerate(data.kinds):
        if not kind.categorical:
            continue
        a, b = np.nan_to_num(data.original[:, k], nan=-1), np.nan_to_num(data.masked[:, k], nan=-1)
        # a value released in a merged category (global recoding) lost its detail: changed
        merged = [i for i, level in enumerate(kind.levels) if level in set(kind.recoding.values())]
        changed.append(float(np.mean((a != b) | np.isin(a, merged))))
        levels = np.union1d(a, b)
        share_a = (a[:, None] == levels).mean(axis=0)
        share_b = (b[:, None] == levels).mean(axis=0)
        distance.append(float(np.abs(share_a - share_b).sum() / 2))
    return figures | {
        "categorical_changed": float(np.mean(changed)),
        "categorical_tv": float(np.mean(distance)),
    }


_NUMERIC_LOSS = (
    "mean_change",
    "variance_change",
    "correlation_change",
    "covariance_change",
    "sse",
    "il1s",
    "pmse",
)


def _numeric_loss(data: LinkageData) -> dict:
    moments, z_original, z_masked = _moment_loss(data.original, data.masked)
    return _in_order(
        moments
        | {
            "sse": float(((z_original - z_masked) ** 2).sum() / (z_original**2).sum()),
            "il1s": float(np.mean(np.abs(z_original - z_masked)) / np.sqrt(2)),
        }
    )


def _in_order(figures: dict) -> dict:
    """The numeric figures in the order :func:`information_loss` documents them."""
    return {key: figures[key] for key in _NUMERIC_LOSS}


def _moment_loss(original: np.ndarray, masked: np.ndarray) -> tuple[dict, np.ndarray, np.ndarray]:
    """The numeric measures that need no record alignment (every one but ``sse`` and
    ``il1s``), and both files in the original's z-scores; the files may differ in their
    number of records."""
    # both files in the original's z-scores (not each its own, unlike za/zb of linkage);
    # every moment in the original's unit (a power of two per column): no overflow
    unit = Standardisation.fit(original)
    with np.errstate(all="ignore"):
        masked_unit = masked / unit.scale
        z_original = (original / unit.scale - unit.mean) / unit.sd
        z_masked = (masked_unit - unit.mean) / unit.sd
        mean_masked, sd_masked = masked_unit.mean(axis=0), masked_unit.std(axis=0, ddof=1)
    if not (np.isfinite(z_masked).all() and np.isfinite(sd_masked).all()):
        raise NonFiniteError(
            "masked: its values are too large against the original's "
            "standard deviation to compare (non-finite z-scores)"
        )
    n_attributes = original.shape[1]
    if n_attributes > 1:
        off = ~np.eye(n_attributes, dtype=bool)
        with np.errstate(invalid="ignore", divide="ignore"):
            corr_original = np.corrcoef(z_original, rowvar=False)
            corr_masked = np.corrcoef(z_masked, rowvar=False)
        corr_change = float(np.nanmean(np.abs(corr_original - corr_masked)[off]))
    else:
        corr_change = 0.0
    cov_change = np.abs(np.atleast_2d(np.cov(z_masked, rowvar=False) - np.cov(z_original, rowvar=False)))
    moments = {
        "mean_change": float(np.mean(np.abs(mean_masked - unit.mean) / unit.sd)),
        "variance_change": float(np.mean(np.abs(sd_masked**2 - unit.sd**2) / unit.sd**2)),
        "correlation_change": corr_change,
        "covariance_change": float(np.mean(cov_change[np.triu_indices(n_attributes)])),
        "pmse": propensity_mse(z_original, z_masked),
    }
    return moments, z_original, z_masked


def distribution_loss(original, synthetic, *, columns: Sequence[str] | None = None) -> dict:
    """How far a file's distribution departs from the original's, records unaligned:
    the information loss of a fully synthetic file (0 = the same distribution).

    Parameters
    ----------
    original, synthetic : DataFrame or array-like
        The two files, with the same columns; their records need not correspond and
        their numbers may differ (each at least 2).
    columns : list of str, default=None
        Attributes to compare (default: every column of ``original``).

    Returns
    -------
    dict
        The keys of :func:`information_loss`. ``mean_change``, ``variance_change``,
        ``correlation_change``, ``covariance_change`` come from each file's moments,
        ``pmse`` from a propensity model on the stacked files (its baseline the
        synthetic file's share of the stacked records); ``sse`` and ``il1s``, which
        compare a record with its own masked version, are None. On a file with
        categorical (non-numeric) columns, ``categorical_tv`` is the mean
        total-variation distance of their frequencies (a blank is a value) and
        ``categorical_changed``, record by record, is None.
    """
    original = as_frame(original, name="original")
    synthetic = as_frame(synthetic, name="synthetic")
    cols = [str(c) for c in original.columns] if columns is None else list(columns)
    for frame, name in ((original, "original"), (synthetic, "synthetic")):
        missing = [c for c in cols if c not in frame.columns]
        if missing:
            raise InputError(
                f"{name}: unknown column(s) {missing}; available: {list(map(str, frame.columns))}"
            )
    numeric = [
        c
        for c in cols
        if pd.api.types.is_numeric_dtype(original[c]) and not pd.api.types.is_bool_dtype(original[c])
    ]
    categorical = [c for c in cols if c not in numeric]
    figures: dict = dict.fromkeys(_NUMERIC_LOSS)
    if numeric:
        a, _ = validate_table(original, columns=numeric, name="original", min_records=2)
        b, _ = validate_table(synthetic, columns=numeric, name="synthetic", min_records=2)
        figures = _in_order(_moment_loss(a, b)[0] | {"sse": None, "il1s": None})
    if not categorical:
        return figures
    distance = []
    for column in categorical:
        share_a = original[column].astype(str).value_counts(normalize=True, dropna=False)
        share_b = synthetic[column].astype(str).value_counts(normalize=True, dropna=False)
        distance.append(float(share_a.sub(share_b, fill_value=0).abs().sum() / 2))
    return figures | {"categorical_changed": None, "categorical_tv": float(np.mean(distance))}


def propensity_mse(z_original: np.ndarray, z_masked: np.ndarray) -> float:
    """The pMSE of two files in the same units: a logistic regression separating the
    stacked records, then the mean of ``(p_hat - c)^2``, ``c`` the masked file's share of
    the stacked records (1/2 when both have the same number of records). Its terms are the attributes, their squares and pairwise
    products (degree 2: main effects alone cannot tell a file from one with the same
    means, such as every microaggregated file), standardised, with scikit-learn's
    default L2 penalty."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    stacked = np.vstack([z_original, z_masked])
    labels = np.r_[np.zeros(len(z_original)), np.ones(len(z_masked))]
    if z_original.shape == z_masked.shape and np.allclose(z_original, z_masked):
        return 0.0  # the same records: nothing to tell apart (and no solver noise)
    model = make_pipeline(
        PolynomialFeatures(2, include_bias=False), StandardScaler(), LogisticRegression(max_iter=2000)
    ).fit(stacked, labels)
    p_hat = model.predict_proba(stacked)[:, 1]
    return float(np.mean((p_hat - len(z_masked) / len(stacked)) ** 2))
