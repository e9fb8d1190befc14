"""The intersection attack across several independently released k-anonymous files
of shared subjects (Domingo-Ferrer, "Données massives et modèles de vie privée",
2018): k-anonymity is not composable.

For each subject present in every release ``R_1, ..., R_n``: ``e_ij`` is the
equivalence class of ``R_j`` (its records sharing the subject's quasi-identifier
values) and ``s_ij`` the set of confidential values in ``e_ij``; the intruder learns
``S_i = s_i1 & s_i2 & ... & s_in``. A subject whose set shrinks to one value has its
confidential value disclosed, however large each class is.

Values are compared as labels (:func:`rlopt.data.cell_label`); a blank is a value of
its own; several confidential attributes are compared as one tuple.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from rlopt.data._kinds import label_rows
from rlopt.data._validate import as_frame
from rlopt.exceptions import InputError

__all__ = ["IntersectionResult", "intersection_attack"]


@dataclass(frozen=True)
class IntersectionResult:
    """Per shared subject, how many confidential values remain after the intersection."""

    n_releases: int
    n_subjects: int
    n_disclosed: int
    set_sizes: pd.Series = field(repr=False)  # index: subject id, value: |S_i|
    smallest_class: list[int] = field(default_factory=list)  # per release: k it reaches

    @property
    def disclosed_share(self) -> float:
        return self.n_disclosed / self.n_subjects if self.n_subjects else 0.0

    def summary(self) -> list[str]:
        sizes = self.set_sizes.value_counts().sort_index()
        spread = ", ".join(f"{size} value(s): {count}" for size, count in sizes.items())
        return [
            f"intersection attack on {self.n_releases} releases (smallest classes "
            f"{self.smallest_class}): {self.n_disclosed} of {self.n_subjects} shared subjects have "
            f"their confidential value disclosed ({100 * self.disclosed_share:.2f}%); subjects by "
            f"values left: {spread}"
        ]

    def to_dict(self) -> dict:
        return {
            "n_releases": self.n_releases,
            "n_subjects": self.n_subjects,
            "n_disclosed": self.n_disclosed,
            "disclosed_share": self.disclosed_share,
            "smallest_class": self.smallest_class,
            "set_sizes": {str(k): int(v) for k, v in self.set_sizes.value_counts().sort_index().items()},
        }


def _value_sets(
    release: pd.DataFrame, id_column: str, qis: Sequence[str], confidential: Sequence[str], j: int
):
    """Each subject's class's set of confidential values in one release, and the smallest class."""
    missing = [c for c in (id_column, *qis, *confidential) if c not in release.columns]
    if missing:
        raise InputError(
            f"release {j + 1}: column(s) {missing} not found; available: {list(release.columns)}"
        )
    ids = release[id_column]
    if ids.isna().any() or ids.duplicated().any():
        raise InputError(
            f"release {j + 1}: id column {id_column!r} has missing or repeated ids; expected unique ids"
        )
    classes = label_rows(release, qis)
    values = label_rows(release, confidential)
    sets = values.groupby(classes).agg(frozenset)
    return pd.Series(classes.map(sets).to_numpy(), index=ids.to_numpy()), int(classes.value_counts().min())


def intersection_attack(
    releases: Sequence,
    *,
    id_column: str,
    confidential: Sequence[str],
    quasi_identifiers: Sequence[Sequence[str]] | None = None,
) -> IntersectionResult:
    """The attack on ``releases`` (DataFrames with ``id_column``; quasi-identifiers per
    release, by default every column but the id and the confidential ones)."""
    frames = [as_frame(r, name=f"release {j + 1}") for j, r in enumerate(releases)]
    if len(frames) < 2:
        raise InputError(f"{len(frames)} release(s); the intersection attack needs at least 2")
    confidential = list(confidential)
    if not confidential:
        raise InputError("no confidential attribute; expected at least one (--confidential)")
    if quasi_identifiers is not None and len(quasi_identifiers) != len(frames):
        raise InputError(
            f"{len(quasi_identifiers)} quasi-identifier lists for {len(frames)} releases; expected one per release"
        )
    per_release, smallest = [], []
    for j, frame in enumerate(frames):
        qis = (
            list(quasi_identifiers[j])
            if quasi_identifiers is not None
            else [str(c) for c in frame.columns if c != id_column and c not in confidential]
        )
        if not qis:
            raise InputError(
                f"release {j + 1}: no quasi-identifier left besides the id and the confidential columns"
            )
        sets, k = _value_sets(frame, id_column, qis, confidential, j)
        per_release.append(sets)
        smallest.append(k)
    shared = per_release[0].index
    for sets in per_release[1:]:
        shared = shared.intersection(sets.index)
    if shared.empty:
        raise InputError(
            f"the releases share no subject by {id_column!r}; expected the same ids in several releases"
        )
    remaining = [frozenset.intersection(*(sets[i] for sets in per_release)) for i in shared]
    sizes = pd.Series([len(s) for s in remaining], index=shared, name="values_left")
    return IntersectionResult(
        n_releases=len(frames),
        n_subjects=len(shared),
        n_disclosed=int((sizes == 1).sum()),
        set_sizes=sizes,
        smallest_class=smallest,
    )
