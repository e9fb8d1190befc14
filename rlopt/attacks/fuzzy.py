"""The transparency attack on fuzzy microaggregation: the intruder, who holds the
original file and knows the parameters, scores every masked record by the probability
that the masking drew its published centres for each original record.

The centres of attribute group ``g`` are the distinct masked value vectors of its
columns. They and the original records are put in the z-scores of the ORIGINAL file
(its mean and sd, ``ddof=1``): the masking standardised the original file, which the
intruder holds, so the intruder recomputes the very memberships the draws used. With
``u_g(x, v)`` the ``m2``-membership of ``x`` to centre ``v`` among the published
centres of group ``g``::

    score_ji = prod_g u_g(x_j, centre_g(i)),    P(i | j) = score_ji / sum_i' score_ji'

computed in log space (a product of many small memberships does not underflow) and
in blocks of original records (``N x N`` floats at most 64 MiB at a time). The
normalisation over the published centres only (clusters never drawn are not seen)
is a factor that depends on ``j`` and ``g`` alone, so it cancels in ``P(i | j)``. A
record whose every score is 0 (it lies on centres that no masked record combines)
gets the uniform posterior.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rlopt.attacks._common import PosteriorAttackResult
from rlopt.data import LinkageData, validate_pair
from rlopt.data._standardise import DEFAULT_CHUNK_BYTES
from rlopt.exceptions import DataWarning, InputError
from rlopt.masking.fuzzy import (
    FUZZINESS,
    check_c,
    fit_scaling,
    log_memberships,
    squared_distances,
)
from rlopt.validation import validate_params

__all__ = ["FuzzyAttackResult", "fuzzy_attack"]


@dataclass(frozen=True, kw_only=True)
class FuzzyAttackResult(PosteriorAttackResult):
    """The outcome of the transparency attack on a fuzzy-microaggregated file (method
    ``"fuzzy"``); ``parameters``: the attack's assumption (groups with their ``c``,
    ``m2``) and the number of published centres of each group; ``linked_to``: the
    masked record of highest posterior (the lowest index on a tie)."""

    def summary(self) -> list[str]:
        """The attack's figures in one line."""
        return [
            f"fuzzy attack (posterior of each masked record): {self.n_correct} of {self.n_records} "
            f"records re-identified ({100 * self.rate:.2f}%, the own record strictly most probable); "
            f"expected {self.expected_correct:.1f} ({100 * self.expected_rate:.2f}%)"
        ]


@validate_params({"m1": [FUZZINESS], "m2": [FUZZINESS]})
def fuzzy_attack(
    original,
    masked=None,
    *,
    c: int | None = None,
    m1: float = 2.0,
    m2: float = 2.0,
    groups: Sequence[tuple[Sequence[str], int]] | None = None,
    columns: Sequence[str] | None = None,
    id_column: str | None = None,
) -> FuzzyAttackResult:
    """The transparency attack on a fuzzy-microaggregated file.

    Parameters
    ----------
    original, masked : DataFrame or array-like of shape (n_records, n_attributes)
        The intruder's file and the masked file, aligned record by record.
    c : int, default=None
        Published number of clusters when all attributes were aggregated together.
    m1, m2 : float, default=2.0
        Published fuzziness of the clustering and of the draws. Only ``m2``
        enters the posterior (``m1`` shaped the centres, which are published);
        ``m1`` is only checked.
    groups : list of (columns, c), default=None
        Published attribute groups, each aggregated on its own (as in
        :func:`rlopt.masking.fuzzy.fuzzy_microaggregate`). Give ``c`` or ``groups``.
    columns, id_column
        Passed to :func:`rlopt.data.validate_pair`; the groups' columns must be
        among them.

    Returns
    -------
    FuzzyAttackResult

    Warns
    -----
    DataWarning
        When a group has more distinct masked value vectors than its ``c``: the
        file was not masked with that ``c``.

    Notes
    -----
    ``P(i | j) = score_ji / sum_i' score_ji'`` with ``score_ji = prod_g
    u_g(x_j, centre_g(i))``, in the z-scores of the ORIGINAL file (see the module
    docstring; V. Torra, J. Applied Logic 23, 2017, 70-80).
    """
    data = validate_pair(original, masked, columns=columns, id_column=id_column)
    if (c is None) == (groups is None):
        raise InputError(
            f"the fuzzy microaggregation attack needs the published masking: give exactly "
            f"one of c={c!r} (all attributes in one group) and groups={groups!r} "
            "(attribute groups with their c)"
        )
    if groups is None:
        assert c is not None  # exactly one of the two was given (checked above)
        return _fuzzy_attack(data, [(list(data.columns), c)], m2)
    return _fuzzy_attack(data, [(list(cols), g) for cols, g in groups], m2)


def _group_log_memberships(data: LinkageData, columns: Sequence[str], m2: float):
    """Per original record, ``log u`` to each published centre of one attribute group,
    each masked record's centre index, and the number of published centres."""
    index = {name: k for k, name in enumerate(data.columns)}
    unknown = [name for name in columns if name not in index]
    if unknown:
        raise InputError(f"group column(s) {unknown} are not among the attributes {list(data.columns)}")
    idx = [index[name] for name in columns]
    centres, centre_of = np.unique(data.masked[:, idx], axis=0, return_inverse=True)
    scaling = fit_scaling(data.original[:, idx])
    z_original = scaling.apply(data.original[:, idx], name="original")
    z_centres = scaling.apply(centres, name="masked")
    logu = log_memberships(squared_distances(z_original, z_centres), m2)
    return logu, centre_of.ravel(), centres.shape[0]


def _normalise(log_scores: np.ndarray) -> np.ndarray:
    """Each row of ``exp(log_scores)`` divided by its sum (in place on ``log_scores``,
    whose rows of all ``-inf`` -- every score 0 -- become 0: the uniform posterior)."""
    peak = log_scores.max(axis=1, keepdims=True)
    dead = ~np.isfinite(peak[:, 0])
    log_scores[dead] = 0.0
    peak[dead] = 0.0
    weights = np.exp(log_scores - peak)
    weights /= weights.sum(axis=1, keepdims=True)
    return weights


def _posterior_block(log_scores: np.ndarray, own: np.ndarray) -> tuple:
    """For a block of original records (rows) and their own masked records: the
    posterior of the own record, the link of highest posterior and correctness
    (the own record's score strictly above every other's)."""
    rows = np.arange(log_scores.shape[0])
    posterior_own = _normalise(log_scores)[rows, own]
    own_score = log_scores[rows, own].copy()
    log_scores[rows, own] = -np.inf
    correct = own_score > log_scores.max(axis=1)
    log_scores[rows, own] = own_score
    return posterior_own, log_scores.argmax(axis=1), correct


def _log_score_blocks(parts: list, n: int):
    """Yield ``(start, stop, log_scores)``: ``sum_g log u_g(x_j, centre_g(i))`` for the
    original records ``j`` in ``start:stop`` (rows) and every masked record ``i``."""
    step = max(1, min(n, DEFAULT_CHUNK_BYTES // (8 * n)))
    for start in range(0, n, step):
        stop = min(n, start + step)
        log_scores = np.zeros((stop - start, n))
        for logu, centre_of, _ in parts:
            log_scores += logu[start:stop][:, centre_of]
        yield start, stop, log_scores


def _group_parts(data: LinkageData, groups: list[tuple[list[str], int]], m2) -> tuple[list, float]:
    """``float(m2)`` (checked by :func:`fuzzy_attack`) and, per group,
    :func:`_group_log_memberships`; warns (at the caller of the public function) when a
    group has more published centres than its c."""
    m2 = float(m2)
    parts = []
    for columns, c in groups:
        c = check_c(c, data.n_records)
        parts.append(_group_log_memberships(data, columns, m2))
        if parts[-1][2] > c:
            warnings.warn(
                f"the masked file has {parts[-1][2]} distinct value vectors in attributes "
                f"{list(columns)}, more than c={c}: it was not fuzzy-microaggregated with that c",
                DataWarning,
                stacklevel=4,
            )
    return parts, m2


def _fuzzy_posteriors(data: LinkageData, groups: list[tuple[list[str], int]], m2: float) -> np.ndarray:
    """The full posterior matrix ``P[j, i] = P(i | j)`` of the fuzzy attack (see
    :func:`fuzzy_attack`), of shape (n_records, n_records); rows sum to 1."""
    parts, _ = _group_parts(data, groups, m2)
    n = data.n_records
    posterior = np.empty((n, n))
    for start, stop, log_scores in _log_score_blocks(parts, n):
        posterior[start:stop] = _normalise(log_scores)
    return posterior


def _fuzzy_attack(data: LinkageData, groups: list[tuple[list[str], int]], m2: float) -> FuzzyAttackResult:
    """:func:`fuzzy_attack` for a caller that already holds validated data."""
    parts, m2 = _group_parts(data, groups, m2)
    n = data.n_records
    posterior_own, linked_to = np.empty(n), np.empty(n, dtype=np.int64)
    correct = np.empty(n, dtype=bool)
    for start, stop, log_scores in _log_score_blocks(parts, n):
        block = _posterior_block(log_scores, np.arange(start, stop))
        posterior_own[start:stop], linked_to[start:stop], correct[start:stop] = block
    n_correct = int(correct.sum())
    expected = float(posterior_own.sum())
    parameters = {
        "groups": [{"columns": list(cols), "c": int(c)} for cols, c in groups],
        "m2": m2,
        "n_centres": [int(part[2]) for part in parts],
    }
    return FuzzyAttackResult(
        method="fuzzy",
        n_records=n,
        n_correct=n_correct,
        expected_correct=expected,
        parameters=parameters,
        posterior_own=posterior_own,
        linked_to=linked_to,
        correct=correct,
    )
