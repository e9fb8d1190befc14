"""Standardisation of each file on its own, and the per-attribute squared differences.

The full difference tensor has ``N * N * n`` entries (1.3 GB for EIA in float64);
it is only ever produced in chunks of rows.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

__all__ = ["standardise", "squared_diffs", "diff_chunks", "chunk_rows", "DEFAULT_CHUNK_BYTES"]

DEFAULT_CHUNK_BYTES = 64 * 2**20
"""Memory budget for one chunk of the difference tensor (64 MiB)."""


def standardise(values: np.ndarray) -> np.ndarray:
    """Z-scores of each column with the file's own mean and standard deviation.

    Notes
    -----
    ``z_ik = (x_ik - mean_k) / sd_k`` with the sample standard deviation
    (``ddof=1``). The original and the masked file are standardised separately
    (SPEC section 2). Columns must not be constant (the validator checks it).
    """
    values = np.asarray(values, dtype=np.float64)
    return (values - values.mean(axis=0)) / values.std(axis=0, ddof=1)


def squared_diffs(za: np.ndarray, zb: np.ndarray) -> np.ndarray:
    """``diff[i, j, k] = (za[i, k] - zb[j, k])**2`` for the given rows.

    Parameters
    ----------
    za : ndarray of shape (n_rows, n_attributes)
    zb : ndarray of shape (n_records, n_attributes)

    Returns
    -------
    ndarray of shape (n_rows, n_records, n_attributes)
    """
    delta = za[:, None, :] - zb[None, :, :]
    return delta * delta


def chunk_rows(n_records: int, n_attributes: int, *, max_bytes: int = DEFAULT_CHUNK_BYTES) -> int:
    """How many rows of the difference tensor fit in ``max_bytes`` (at least 1)."""
    per_row = max(1, n_records * n_attributes * 8)
    return max(1, min(n_records, max_bytes // per_row))


def diff_chunks(za: np.ndarray, zb: np.ndarray, *, max_bytes: int = DEFAULT_CHUNK_BYTES
                ) -> Iterator[tuple[int, int, np.ndarray]]:
    """Yield ``(start, stop, squared_diffs(za[start:stop], zb))`` chunk by chunk."""
    step = chunk_rows(zb.shape[0], zb.shape[1], max_bytes=max_bytes)
    for start in range(0, za.shape[0], step):
        stop = min(za.shape[0], start + step)
        yield start, stop, squared_diffs(za[start:stop], zb)
