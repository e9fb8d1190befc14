"""Probabilistic record linkage (Fellegi–Sunter) for numerical attributes.

Each pair (masked record, original record) gets an agreement level per attribute
from the absolute difference of the standardised values; the m- and
u-probabilities of the levels are estimated by EM (a two-class latent model,
attributes independent given the class) on the counts of the agreement patterns
of all N^2 pairs; each pair's weight is ``sum_j log(m_j / u_j)`` of its levels;
and a one-to-one assignment maximising the total weight decides the links.

Written on numpy and scipy rather than taken from a record-linkage package: the
Python Record Linkage Toolkit's ECM classifier takes only binary agreement
vectors, and Splink targets string comparisons on SQL back ends; neither fits
multi-level numerical agreement on all N^2 pairs, which numpy counts by pattern
in a few seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from rlopt.data import KindSpec, validate_pair
from rlopt.data._standardise import DEFAULT_CHUNK_BYTES, category_pairs, chunk_rows, pairwise_deltas
from rlopt.exceptions import InputError
from rlopt.results import Reidentification

__all__ = [
    "EMResult",
    "PLDResult",
    "agreement_levels",
    "fit_em",
    "pld",
    "DEFAULT_THRESHOLDS",
    "check_thresholds",
    "PLD_MAX_RECORDS",
]

PLD_MAX_RECORDS = 5000
"""PLD's one-to-one assignment is cubic in the records: above this many ``rlopt risk``
does not compute it and ``rlopt link --distance pld`` warns before it starts."""

DEFAULT_THRESHOLDS = (0.01, 0.05, 0.25)
"""Cut points of the agreement levels, in standard deviations of the attribute:
level 0 when ``|a - b| <= 0.01 sd``, 1 up to 0.05 sd, 2 up to 0.25 sd, 3 beyond."""

PROB_FLOOR = 1e-12
"""m- and u-probabilities are kept above this so that every log weight is finite."""


@dataclass(frozen=True)
class EMResult:
    """m- and u-probabilities of the agreement levels, estimated by EM.

    Attributes
    ----------
    m, u : ndarray of shape (n_attributes, n_levels)
        ``m[j, l]`` = P(level l on attribute j | the pair is a match); ``u`` given a non-match.
    match_share : float
        Estimated share of matches among the pairs.
    n_iter : int
    converged : bool
    """

    m: np.ndarray
    u: np.ndarray
    match_share: float
    n_iter: int
    converged: bool

    def weights(self) -> np.ndarray:
        """``log(m / u)`` per attribute and level."""
        return np.log(self.m) - np.log(self.u)


def agreement_levels(
    za: np.ndarray, zb: np.ndarray, thresholds: Sequence[float] | np.ndarray = DEFAULT_THRESHOLDS
) -> np.ndarray:
    """Level of every pair and attribute: ``levels[i, j, k]`` for ``za[i]``, ``zb[j]``.

    ``za``, ``zb`` are standardised; level ``l`` counts the thresholds that
    ``|za[i, k] - zb[j, k]|`` exceeds (0 = closest agreement). A nominal
    attribute (and a categorical blank) is compared by agreement: level 0 when
    the categories are equal, the top level otherwise; an ordinal one by its
    normalised rank difference, like a number.
    """
    cuts = np.asarray(thresholds)
    diff = np.abs(pairwise_deltas(za, zb))
    levels = np.searchsorted(cuts, diff, side="left").astype(np.int8)
    categories = category_pairs(za[:, None, :], zb[None, :, :])
    if categories is not None:
        levels[categories] = np.where(diff[categories] > 0, cuts.size, 0)
    return levels


def check_thresholds(thresholds) -> np.ndarray:
    """The agreement thresholds as an array; an :class:`InputError` names a bad one."""
    cuts = np.asarray(thresholds, dtype=float)
    if (
        cuts.ndim != 1
        or cuts.size == 0
        or not np.all(np.isfinite(cuts))
        or np.any(cuts < 0)
        or np.any(np.diff(cuts) <= 0)
    ):
        raise InputError(
            f"agreement thresholds={list(thresholds)!r}; expected one or more "
            "increasing finite values >= 0 (in standard deviations)"
        )
    return cuts


def _pattern_counts(za, zb, cuts, max_bytes) -> tuple[np.ndarray, np.ndarray]:
    """Distinct agreement patterns of all pairs (as level arrays) and their counts."""
    n_levels = cuts.size + 1
    radix = n_levels ** np.arange(za.shape[1], dtype=np.int64)
    totals: dict[int, int] = {}
    step = chunk_rows(za.shape[0], za.shape[1], max_bytes=max_bytes)
    for start in range(0, za.shape[0], step):
        codes = agreement_levels(za[start : start + step], zb, cuts).astype(np.int64) @ radix
        keys, counts = np.unique(codes, return_counts=True)
        for key, count in zip(keys.tolist(), counts.tolist()):
            totals[key] = totals.get(key, 0) + count
    keys = np.fromiter(totals, dtype=np.int64)
    counts = np.fromiter(totals.values(), dtype=np.float64)
    patterns = (keys[:, None] // radix[None, :]) % n_levels
    return patterns, counts


def fit_em(
    patterns: np.ndarray,
    counts: np.ndarray,
    n_levels: int,
    *,
    match_share: float,
    max_iter: int = 2000,
    tol: float = 1e-8,
) -> EMResult:
    """EM for the two-class Fellegi–Sunter model on counted agreement patterns.

    Parameters
    ----------
    patterns : ndarray of int, shape (n_patterns, n_attributes)
        Distinct agreement patterns (levels ``0 .. n_levels-1``).
    counts : ndarray, shape (n_patterns,)
        How many pairs show each pattern.
    n_levels : int
    match_share : float
        Starting share of matches (``1 / N`` for a one-to-one file pair).
    max_iter, tol
        Stop when the largest change of any probability is below ``tol``.

    Notes
    -----
    Starts from m falling geometrically with the level (matches agree closely)
    and u equal to the overall level frequencies (almost all pairs are
    non-matches), the usual start that keeps the classes from swapping.
    """
    n_attr = patterns.shape[1]
    onehot = np.zeros((patterns.shape[0], n_attr, n_levels))
    np.put_along_axis(onehot, patterns[:, :, None], 1.0, axis=2)
    total = counts.sum()
    u = np.einsum("p,pal->al", counts, onehot) / total
    m = np.tile(0.5 ** np.arange(1, n_levels + 1), (n_attr, 1))
    m /= m.sum(axis=1, keepdims=True)
    share = match_share
    converged = False
    for n_iter in range(1, max_iter + 1):  # noqa: B007 (the count is returned)
        log_m = np.einsum("pal,al->p", onehot, np.log(np.maximum(m, PROB_FLOOR)))
        log_u = np.einsum("pal,al->p", onehot, np.log(np.maximum(u, PROB_FLOOR)))
        odds = np.log(share) - np.log1p(-share) + log_m - log_u
        g = 1.0 / (1.0 + np.exp(-np.clip(odds, -700, 700)))  # P(match | pattern)
        gm, gu = counts * g, counts * (1.0 - g)
        new_share = gm.sum() / total
        new_m = np.einsum("p,pal->al", gm, onehot) / max(gm.sum(), PROB_FLOOR)
        new_u = np.einsum("p,pal->al", gu, onehot) / max(gu.sum(), PROB_FLOOR)
        change = max(np.abs(new_m - m).max(), np.abs(new_u - u).max(), abs(new_share - share))
        m, u = new_m, new_u
        share = float(np.clip(new_share, PROB_FLOOR, 1 - PROB_FLOOR))
        if change < tol:
            converged = True
            break
    return EMResult(np.maximum(m, PROB_FLOOR), np.maximum(u, PROB_FLOOR), share, n_iter, converged)


@dataclass(frozen=True, kw_only=True)
class PLDResult(Reidentification):
    """The outcome of probabilistic record linkage (a
    :class:`~rlopt.results.Reidentification`): a masked record is correct when the
    one-to-one assignment links it to its own original (``linked_to``).

    Attributes
    ----------
    em : EMResult
    thresholds : tuple of float
    """

    em: EMResult
    thresholds: tuple

    @property
    def source(self) -> str:
        return "pld"

    def figures(self) -> dict:
        return {
            "distance": "pld",
            "thresholds": list(self.thresholds),
            "em_iterations": self.em.n_iter,
            "em_converged": self.em.converged,
            "match_share": self.em.match_share,
        }


def pld(
    original,
    masked=None,
    *,
    thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
    seed: int = 0,
    columns: Sequence[str] | None = None,
    id_column: str | None = None,
    max_bytes: int = DEFAULT_CHUNK_BYTES,
    kinds: KindSpec | dict | None = None,
) -> PLDResult:
    """Probabilistic (Fellegi–Sunter) record linkage of a masked file against its original.

    Parameters
    ----------
    original, masked : DataFrame or array-like of shape (n_records, n_attributes)
        Or validated :class:`~rlopt.data.LinkageData` alone.
    thresholds : sequence of float, default=DEFAULT_THRESHOLDS
        Cut points of the agreement levels, in standard deviations.
    seed : int, default=0
        Equal weights are common (levels are discrete); the assignment breaks
        such ties in a random order of the records drawn from this seed, so a
        tie is won by the true record only by chance.
    columns, id_column, kinds
        Passed to :func:`rlopt.data.validate_pair`.

    Returns
    -------
    PLDResult
    """
    data = validate_pair(original, masked, columns=columns, id_column=id_column, kinds=kinds)
    cuts = check_thresholds(thresholds)
    za, zb = data.encoded.za, data.encoded.zb
    n_records = data.n_records
    patterns, counts = _pattern_counts(za, zb, cuts, max_bytes)
    em = fit_em(patterns, counts, cuts.size + 1, match_share=1.0 / n_records)
    weights = em.weights()
    shuffle = np.random.default_rng(seed).permutation(n_records)  # random tie-break
    score = np.empty((n_records, n_records))
    attributes = np.arange(data.n_attributes)
    step = chunk_rows(n_records, data.n_attributes, max_bytes=max_bytes)
    for start in range(0, n_records, step):
        levels = agreement_levels(za[start : start + step], zb[shuffle], cuts)
        score[start : start + step] = weights[attributes, levels].sum(axis=2)
    rows, cols = linear_sum_assignment(score, maximize=True)
    linked_to = np.empty(n_records, dtype=np.int64)
    linked_to[rows] = shuffle[cols]
    correct = linked_to == np.arange(n_records)
    return PLDResult(
        n_records=n_records,
        n_correct=int(correct.sum()),
        em=em,
        thresholds=tuple(cuts.tolist()),
        correct=correct,
        linked_to=linked_to,
        kinds=data.kinds,
    )
