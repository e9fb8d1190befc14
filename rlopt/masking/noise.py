"""Additive noise."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rlopt.data._standardise import column_sd
from rlopt.data._validate import as_frame, validate_table
from rlopt.exceptions import InputError

__all__ = ["additive_noise"]


def additive_noise(
    data, variance_ratio: float, *, seed: int | None = 0, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """Add normal noise ``e`` with ``E(e) = 0`` and ``Var(e) = k Var(X)`` per attribute,
    ``k = variance_ratio`` (the papers' ``k``; in the CLI ``--variance-ratio``).

    Parameters
    ----------
    data : DataFrame or array-like of shape (n_records, n_attributes)
    variance_ratio : float
        Noise variance as a fraction of each attribute's variance (sample
        variance, ``ddof=1``), ``k >= 0``.
    seed : int, default=0
        Seed of ``numpy.random.default_rng``.
    columns : list of str, default=None
        Attributes to perturb (default: all); the others are left unchanged.
    """
    k = variance_ratio
    if (
        isinstance(k, bool)
        or not isinstance(k, (int, float, np.integer, np.floating))
        or not math.isfinite(k)
        or k < 0
    ):
        raise InputError(f"noise variance_ratio={k!r}; expected a finite number >= 0")
    frame = as_frame(data, name="input")
    values, cols = validate_table(frame, columns=columns, name="input", min_records=2)
    sd = math.sqrt(k) * column_sd(values)
    rng = np.random.default_rng(seed)
    result = frame.copy()
    result[cols] = values + rng.normal(size=values.shape) * sd
    return result
