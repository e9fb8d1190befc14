"""The transparency attack on PRAM: the intruder, who holds the original file and
knows the published transition matrices, scores each masked record by the
probability that PRAM released it from each original record.

For the PRAM attributes ``k`` with matrix ``P_k`` (``P_k[u, v] = Pr(released v |
true u)``) and an original record ``j`` with values ``u_jk``, the likelihood of
masked record ``i`` with released values ``v_ik`` is ``L_ji = prod_k P_k[u_jk,
v_ik]``; an attribute left out of PRAM but released unchanged in every record adds
the factor ``[u_jk == v_ik]`` (a value that differs somewhere was masked otherwise,
and is not used). With every masked record equally likely a priori, the posterior
is ``P(i | j) = L_ji / sum_i' L_ji'``. Blanks stay blanks under PRAM: a blank
matches only a blank.

- ``n_correct``: records whose own masked record has the strictly highest posterior
  (a tie is not a re-identification);
- ``n_sure``: records whose own masked record is the only one of non-zero
  likelihood (zeros of ``P`` make such sure matches);
- ``expected_correct``: ``sum_j P(j | j)``, the expected number of correct links
  when each original record is linked to a masked record drawn from its posterior.

Computed in log space, in blocks of original records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rlopt.attacks._common import PosteriorAttackResult
from rlopt.data import LinkageData
from rlopt.data._standardise import DEFAULT_CHUNK_BYTES, chunk_rows
from rlopt.exceptions import InputError
from rlopt.masking.categorical import TransitionMatrix

__all__ = ["PramAttackResult", "pram_attack", "original_labels"]


def original_labels(data: LinkageData, columns) -> pd.DataFrame:
    """The original file's categorical ``columns`` as their labels (blanks as None)."""
    out = {}
    for name in columns:
        k = data.columns.index(name)
        levels = np.asarray(data.kinds[k].levels + (None,), dtype=object)
        codes = data.original[:, k]
        out[name] = levels[np.where(np.isnan(codes), len(levels) - 1, codes).astype(np.int64)]
    return pd.DataFrame(out)


@dataclass(frozen=True, kw_only=True)
class PramAttackResult(PosteriorAttackResult):
    """The outcome of the PRAM transparency attack (see the module); ``n_sure``: records
    whose own masked record is the only one of positive posterior."""

    n_sure: int

    def summary(self) -> list[str]:
        return [
            f"PRAM attack (posterior under the published matrices): {self.n_correct} of {self.n_records} "
            f"records re-identified ({100 * self.rate:.2f}%, own record strictly most probable), "
            f"{self.n_sure} sure; expected {self.expected_correct:.1f} ({100 * self.expected_rate:.2f}%)"
        ]

    def figures(self) -> dict:
        return super().figures() | {"n_sure": self.n_sure}


def _log_matrix(data: LinkageData, k: int, published: TransitionMatrix) -> np.ndarray:
    """``log P`` indexed by the column's level codes (rows true, columns released), with
    a last row and column for the blank (a blank is released as a blank)."""
    kind = data.kinds[k] if data.kinds else None
    if kind is None or not kind.categorical:
        raise InputError(f"PRAM attack: column {data.columns[k]!r} is not categorical")
    if kind.recoding:
        raise InputError(f"PRAM attack: column {data.columns[k]!r} was also recoded; expected PRAM alone")
    missing = sorted(set(kind.levels) - set(published.levels))
    if missing:
        raise InputError(
            f"PRAM attack: the matrix of {data.columns[k]!r} misses categor(ies) {missing} of the files"
        )
    order = [published.levels.index(level) for level in kind.levels]
    size = len(kind.levels)
    probabilities = np.zeros((size + 1, size + 1))
    probabilities[:size, :size] = published.matrix[np.ix_(order, order)]
    probabilities[size, size] = 1.0
    with np.errstate(divide="ignore"):
        return np.log(probabilities)


def _codes(values: np.ndarray, size: int) -> np.ndarray:
    return np.where(np.isnan(values), size, values).astype(np.int64)


def pram_attack(
    data: LinkageData, matrices: Mapping[str, TransitionMatrix], *, max_bytes: int = DEFAULT_CHUNK_BYTES
) -> PramAttackResult:
    """The attack on validated data with the published matrices of the PRAM columns."""
    unknown = sorted(set(matrices) - set(data.columns))
    if unknown:
        raise InputError(f"PRAM attack: columns {unknown} are not among the attributes {list(data.columns)}")
    pram_columns = [data.columns.index(name) for name in matrices]
    logs = {k: _log_matrix(data, k, matrices[data.columns[k]]) for k in pram_columns}
    same = [
        k
        for k in range(data.n_attributes)
        if k not in logs and np.array_equal(data.original[:, k], data.masked[:, k], equal_nan=True)
    ]
    n_records = data.n_records
    step = chunk_rows(n_records, 1, max_bytes=max_bytes)
    posterior_own = np.empty(n_records)
    linked_to = np.empty(n_records, dtype=np.int64)
    correct = np.empty(n_records, dtype=bool)
    sure = np.empty(n_records, dtype=bool)
    for start in range(0, n_records, step):
        rows = np.arange(start, min(n_records, start + step))
        score = np.zeros((rows.size, n_records))
        for k, log in logs.items():
            size = log.shape[0] - 1
            score += log[
                _codes(data.original[rows, k], size)[:, None], _codes(data.masked[:, k], size)[None, :]
            ]
        for k in same:
            score[~_equal(data.original[rows, k][:, None], data.masked[:, k][None, :])] = -np.inf
        top = score.max(axis=1, keepdims=True)
        weights = np.exp(score - np.where(np.isfinite(top), top, 0.0))
        total = weights.sum(axis=1, keepdims=True)
        # no masked record possible (the file was not made by these matrices): uniform
        posterior = np.where(total > 0, weights / np.where(total > 0, total, 1.0), 1.0 / n_records)
        own = posterior[np.arange(rows.size), rows]
        posterior_own[rows] = own
        best = posterior.argmax(axis=1)
        linked_to[rows] = best
        others = posterior.copy()
        others[np.arange(rows.size), rows] = -1.0
        correct[rows] = own > others.max(axis=1)
        sure[rows] = np.count_nonzero(posterior > 0, axis=1) == 1
    n_correct = int(correct.sum())
    expected = float(posterior_own.sum())
    return PramAttackResult(
        method="pram",
        n_records=n_records,
        n_correct=n_correct,
        n_sure=int((sure & correct).sum()),
        expected_correct=expected,
        parameters={
            "columns": list(matrices),
            "matched_unchanged": [data.columns[k] for k in same],
            "ignored": [data.columns[k] for k in range(data.n_attributes) if k not in logs and k not in same],
        },
        posterior_own=posterior_own,
        linked_to=linked_to,
        correct=correct,
    )


def _equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a == b) | (np.isnan(a) & np.isnan(b))
