"""MD: the Mahalanobis distance with the covariance of the standardised differences."""

from __future__ import annotations

import warnings

import numpy as np

from rlopt.data._standardise import attribute_deltas
from rlopt.exceptions import DataWarning, InputError
from rlopt.families._base import BaselineFamily, Distance
from rlopt.families.bilinear import psd_factor, quadratic_form

__all__ = ["Mahalanobis", "MahalanobisDistance"]


class MahalanobisDistance(Distance):
    """``d(a, b) = (za - zb)^T P (za - zb)`` for a fixed symmetric matrix ``P``."""

    family = "md"

    def __init__(self, precision: np.ndarray, columns: tuple[str, ...], *, rank: int):
        self.precision = precision
        self.columns = columns
        self.rank = rank

    def combine(self, delta):
        return quadratic_form(delta, self.precision)

    def linear_map(self, n_attributes):
        return psd_factor(self.precision)

    def params(self) -> dict:
        return {"columns": list(self.columns), "precision": self.precision.tolist(), "rank": self.rank}


class Mahalanobis(BaselineFamily):
    """Mahalanobis distance, ``P = S^+`` with ``S = Cov(ZA - ZB)``.

    Notes
    -----
    ``S`` is the covariance of the record-by-record differences of the
    standardised files, which equals ``Var(ZA) + Var(ZB) - Cov(ZA, ZB) -
    Cov(ZA, ZB)^T`` (``docs/method.md``, section 5). When an attribute is left unmasked (or
    masked files are otherwise degenerate) ``S`` is singular; the Moore-Penrose
    pseudo-inverse is used and a :class:`DataWarning` says so. Directions with
    zero variance then get zero weight: MD ignores exactly what was not masked.
    If ``S = 0`` (the masked file is the original) MD is undefined and an
    :class:`InputError` is raised.
    """

    name = "md"
    title = "Mahalanobis (MD)"
    start_label = "MD's matrix over its trace"  # a start of the bilinear families

    def from_data(self, za, zb, columns) -> Distance:
        cov = np.atleast_2d(np.cov(attribute_deltas(za, zb), rowvar=False))
        scale = np.abs(cov).max()
        if not scale > 1e-12:
            raise InputError(
                "MD is undefined: the standardised masked file equals the original in every "
                "attribute, so the covariance of their differences is zero; use am instead"
            )
        eigenvalues = np.linalg.eigvalsh(cov)
        tol = eigenvalues.max() * cov.shape[0] * np.finfo(float).eps * 10
        rank = int((eigenvalues > tol).sum())
        if rank < cov.shape[0]:
            unmasked = [c for c, v in zip(columns, np.diag(cov)) if v <= tol]
            warnings.warn(
                f"MD: the covariance of the differences is singular (rank {rank} of "
                f"{cov.shape[0]}{'; unmasked attribute(s) ' + str(unmasked) if unmasked else ''}); "
                "using its pseudo-inverse, which gives zero weight to the directions "
                "without variance",
                DataWarning,
                stacklevel=2,
            )
        return MahalanobisDistance(
            np.linalg.pinv(cov, rcond=tol / eigenvalues.max(), hermitian=True), tuple(columns), rank=rank
        )
