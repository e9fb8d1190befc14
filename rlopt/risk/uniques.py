"""Uniqueness on the quasi-identifiers: sample uniques, population uniques and the
file-level probability that a sample unique is a population unique,

    P(PU | SU) = sum_j I(F_j = 1, f_j = 1) / sum_j I(f_j = 1),

over the combinations ``j`` of quasi-identifier values, with ``f_j`` the count in the
sample (the released file) and ``F_j`` the count in the population (Torra, "Privacy
models and disclosure risk", 2020). Values are compared as labels
(:func:`rlopt.data.cell_label`, so 3 and 3.0 are one value); a blank is a value of
its own.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from rlopt.data._kinds import label_rows
from rlopt.data._validate import as_frame
from rlopt.exceptions import InputError

__all__ = ["uniqueness"]


def _keys(frame: pd.DataFrame, columns: Sequence[str], name: str) -> pd.Series:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"{name}: quasi-identifier(s) {missing} not found; available: {list(frame.columns)}")
    return label_rows(frame, columns)


def uniqueness(sample, quasi_identifiers: Sequence[str], *, population=None) -> dict:
    """Sample uniques of ``sample`` on ``quasi_identifiers`` and, with a ``population``
    file (which must contain the sample's combinations), ``P(PU | SU)``.

    Returns
    -------
    dict with ``n_records``, ``n_sample_uniques``, ``sample_unique_share`` and, with a
    population, ``n_population``, ``n_population_uniques`` (of the sample uniques) and
    ``p_pu_given_su`` (None when the sample has no unique).
    """
    sample = as_frame(sample, name="sample")
    columns = list(quasi_identifiers)
    if not columns:
        raise InputError("uniqueness: no quasi-identifier; expected at least one column")
    keys = _keys(sample, columns, "sample")
    counts = keys.map(keys.value_counts())
    unique = counts == 1
    out: dict = {
        "quasi_identifiers": columns,
        "n_records": len(sample),
        "n_sample_uniques": int(unique.sum()),
        "sample_unique_share": float(unique.mean()) if len(sample) else 0.0,
    }
    if population is None:
        return out
    population = as_frame(population, name="population")
    population_counts = _keys(population, columns, "population").value_counts()
    in_population = keys[unique].map(population_counts).fillna(0).astype(int)
    absent = int((in_population == 0).sum())
    if absent:
        raise InputError(
            f"population: {absent} sample unique(s) have a combination the population lacks; expected "
            "the sample to be drawn from the population (the same quasi-identifiers and coding)"
        )
    n_pu = int((in_population == 1).sum())
    return out | {
        "n_population": len(population),
        "n_population_uniques": n_pu,
        "p_pu_given_su": n_pu / int(unique.sum()) if unique.any() else None,
    }
