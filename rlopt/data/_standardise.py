"""Standardisation of each file on its own, and the per-attribute squared differences.

The full difference tensor has ``N * N * n`` entries (1.3 GB for EIA in float64);
it is only ever produced in chunks of rows.

Moments are computed so that they can neither overflow nor underflow: each
column is first divided by a power of two near its largest magnitude (exact in
floating point), so its values lie in ``(-2, 2)``, and its mean and standard
deviation are taken there. A file and the same file times ``1e300`` (or
``1e-300``) get the same z-scores up to rounding, and a file times a power of
two gets exactly the same ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from rlopt.data._kinds import CATEGORY_THRESHOLD
from rlopt.exceptions import NonFiniteError

__all__ = [
    "Standardisation",
    "standardise",
    "column_scale",
    "column_sd",
    "squared_diffs",
    "attribute_deltas",
    "pairwise_deltas",
    "categorical_columns",
    "category_pairs",
    "diff_chunks",
    "chunk_rows",
    "DEFAULT_CHUNK_BYTES",
]

DEFAULT_CHUNK_BYTES = 64 * 2**20
"""Memory budget for one chunk of the difference tensor (64 MiB). Smaller chunks are
not faster: below glibc's mmap threshold's ceiling (32 MiB) a fresh process maps and
page-faults every chunk's temporaries anew; owa by brute force on 10^4 records took
16.4 s with 4 MiB chunks against 8.4 s with 64 MiB (``benchmarks/bench_scale.py``)."""


def column_scale(values: np.ndarray) -> np.ndarray:
    """Per column, the power of two ``2**e`` with ``max |x| / 2**e`` in ``[1, 2)`` (1 for
    an all-zero column): dividing by it is exact and brings every value into ``(-2, 2)``."""
    peak = np.abs(values).max(axis=0) if values.shape[0] else np.zeros(values.shape[1])
    _, exponent = np.frexp(peak)
    return np.ldexp(1.0, np.where(peak > 0, exponent - 1, 0))


@dataclass(frozen=True)
class Standardisation:
    """The z-score map of one file: ``z = (x / scale - mean) / sd``.

    ``scale`` is a power of two per column, ``mean`` and ``sd`` (sample standard
    deviation, ``ddof=1``) are the moments of ``x / scale``; keeping them in that
    unit is what keeps them finite for any finite input.
    """

    scale: np.ndarray
    mean: np.ndarray
    sd: np.ndarray

    @classmethod
    def fit(cls, values: np.ndarray) -> Standardisation:
        values = np.asarray(values, dtype=np.float64)
        scale = column_scale(values)
        unit = values / scale
        return cls(scale, unit.mean(axis=0), unit.std(axis=0, ddof=1))

    def apply(self, values: np.ndarray, *, name: str = "values") -> np.ndarray:
        """The z-scores of ``values``; a non-finite result is an error, never a figure."""
        with np.errstate(all="ignore"):
            z = (np.asarray(values, dtype=np.float64) / self.scale - self.mean) / self.sd
        bad = ~np.isfinite(z)
        if bad.any():
            k = int(np.argmax(bad.any(axis=0)))
            raise NonFiniteError(
                f"{name}: standardising column {k} gave a non-finite z-score (a constant "
                "column, or values far outside the file's own range); expected finite numbers "
                "with at least two distinct values per column"
            )
        return z


def standardise(values: np.ndarray, *, name: str = "values") -> np.ndarray:
    """Z-scores of each column with the file's own mean and standard deviation.

    Notes
    -----
    ``z_ik = (x_ik - mean_k) / sd_k`` with the sample standard deviation
    (``ddof=1``), computed by :class:`Standardisation` so that no moment
    overflows or underflows. The original and the masked file are standardised
    separately (docs/method.md §2). Columns must not be constant (the validator
    checks it).
    """
    return Standardisation.fit(values).apply(values, name=name)


def column_sd(values: np.ndarray) -> np.ndarray:
    """Sample standard deviation (``ddof=1``) of each column, without overflow or
    underflow in the squares (the result itself is finite for finite input)."""
    fitted = Standardisation.fit(values)
    return fitted.sd * fitted.scale


def _categorical(values: np.ndarray) -> np.ndarray | None:
    """Where ``values`` holds encoded categories (None when nowhere: the numeric fast path)."""
    if values.size == 0 or not np.abs(values).max() >= CATEGORY_THRESHOLD:
        return None
    return np.abs(values) >= CATEGORY_THRESHOLD


def categorical_columns(*encoded: np.ndarray) -> np.ndarray:
    """Which columns of the encoded files hold a category somewhere (nominal levels, blanks)."""
    return np.any([(np.abs(z) >= CATEGORY_THRESHOLD).any(axis=0) for z in encoded], axis=0)


def attribute_deltas(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The per-attribute differences ``a - b`` of encoded records (any broadcastable shapes).

    The one place where differences of records are formed: ``delta ** 2`` is the
    per-attribute difference every family reads. Numeric z-scores and ordinal
    normalised ranks give ``a - b``; where either side is an encoded category
    (nominal level or categorical blank, :data:`rlopt.data.CATEGORY_UNIT`) the
    delta is the 0/1 mismatch ``a != b``.
    """
    delta = a - b
    on = category_pairs(a, b)
    return delta if on is None else np.where(on, (a != b).astype(np.float64), delta)


def category_pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """Where (broadcast like ``a - b``) either side is an encoded category; None when nowhere."""
    on_a, on_b = _categorical(a), _categorical(b)
    if on_a is None and on_b is None:
        return None
    shape = np.broadcast_shapes(a.shape, b.shape)
    return np.broadcast_to(on_a if on_a is not None else False, shape) | (on_b if on_b is not None else False)


def squared_diffs(za: np.ndarray, zb: np.ndarray) -> np.ndarray:
    """``diff[i, j, k] = delta(za[i, k], zb[j, k])**2`` for the given rows.

    ``delta`` is :func:`attribute_deltas`: ``za - zb`` on numeric and ordinal
    attributes, the 0/1 mismatch on nominal ones.

    Parameters
    ----------
    za : ndarray of shape (n_rows, n_attributes)
    zb : ndarray of shape (n_records, n_attributes)

    Returns
    -------
    ndarray of shape (n_rows, n_records, n_attributes)
    """
    delta = pairwise_deltas(za, zb)
    return delta * delta


def pairwise_deltas(za: np.ndarray, zb: np.ndarray) -> np.ndarray:
    """``delta[i, j, k]`` of :func:`attribute_deltas` for every pair, shape (rows, N, n)."""
    return attribute_deltas(za[:, None, :], zb[None, :, :])


def chunk_rows(n_records: int, n_attributes: int, *, max_bytes: int = DEFAULT_CHUNK_BYTES) -> int:
    """How many rows of the difference tensor fit in ``max_bytes`` (at least 1)."""
    per_row = max(1, n_records * n_attributes * 8)
    return max(1, min(n_records, max_bytes // per_row))


def diff_chunks(
    za: np.ndarray, zb: np.ndarray, *, max_bytes: int = DEFAULT_CHUNK_BYTES
) -> Iterator[tuple[int, int, np.ndarray]]:
    """Yield ``(start, stop, squared_diffs(za[start:stop], zb))`` chunk by chunk."""
    step = chunk_rows(zb.shape[0], zb.shape[1], max_bytes=max_bytes)
    for start in range(0, za.shape[0], step):
        stop = min(za.shape[0], start + step)
        yield start, stop, squared_diffs(za[start:stop], zb)
