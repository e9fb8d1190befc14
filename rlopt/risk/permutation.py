"""The permutation paradigm (Domingo-Ferrer and Muralidhar, "New directions in
anonymization: permutation paradigm, verifiability by subjects and intruders,
transparency to users", Information Sciences 2016): any masking of an attribute is a
permutation of the original values followed by rank-preserving noise.

Reverse mapping: the masked value ``y_i`` is replaced by the original value of the
same rank, ``z_i = x_(rank(y_i))``. ``Z`` is then a permutation of ``X`` (the
permutation the method made) and ``Y - Z`` the residual noise (which keeps ranks).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from rlopt.data import validate_pair
from rlopt.data._standardise import column_sd

__all__ = ["ranks", "reverse_mapping", "permutation_analysis"]


def ranks(values: np.ndarray, tie_break: np.ndarray) -> np.ndarray:
    """The rank (0 .. N-1) of each value; equal values ordered by ``tie_break``."""
    order = np.lexsort((tie_break, values))
    result = np.empty(len(values), dtype=np.int64)
    result[order] = np.arange(len(values))
    return result


def reverse_mapping(original: np.ndarray, masked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(z, displacement)`` per attribute: ``z[i, j]`` the original value of masked
    value ``y[i, j]``'s rank, ``displacement[i, j]`` how many ranks record ``i`` moved.

    Equal masked values (a microaggregated group) are ranked in the order of their
    original values: the permutation that moves records least, so the displacement
    is not inflated by ties the method created.
    """
    z = np.empty_like(original, dtype=float)
    displacement = np.empty(original.shape, dtype=np.int64)
    for j in range(original.shape[1]):
        x_rank = ranks(original[:, j], np.arange(len(original)))
        y_rank = ranks(masked[:, j], x_rank)
        z[:, j] = np.sort(original[:, j], kind="stable")[y_rank]
        displacement[:, j] = np.abs(y_rank - x_rank)
    return z, displacement


def permutation_analysis(
    original, masked=None, *, columns: Sequence[str] | None = None, id_column: str | None = None
) -> pd.DataFrame:
    """Per attribute, how much of the masking is permutation and how much noise.

    Returns
    -------
    DataFrame
        One row per attribute: ``mean_displacement`` (mean ``|rank(y_i) - rank(x_i)|``
        over records, divided by ``N - 1``: 0 when no record changed rank, about 1/3
        for a random permutation), ``max_displacement`` (in ranks), ``moved`` (share
        of records whose rank changed), ``residual_noise`` (sd of ``y - z`` over the
        original's sd: 0 when the masked values are a permutation of the original).
    """
    data = validate_pair(original, masked, columns=columns, id_column=id_column)
    z, displacement = reverse_mapping(data.original, data.masked)
    residual = (data.masked - z).std(axis=0, ddof=1) / column_sd(data.original)
    return pd.DataFrame(
        {
            "attribute": list(data.columns),
            "mean_displacement": displacement.mean(axis=0) / max(data.n_records - 1, 1),
            "max_displacement": displacement.max(axis=0),
            "moved": (displacement > 0).mean(axis=0),
            "residual_noise": residual,
        }
    )
