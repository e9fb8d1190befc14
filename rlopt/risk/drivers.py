"""Which attribute carries the risk, and which records fall whatever the intruder does.

Three views of a measured pair (:class:`rlopt.risk.pair.Measured`), as one JSON-ready
dict (:func:`attribute_drivers`, on :attr:`rlopt.risk.RiskAssessment.drivers`):

- **without each attribute**: the pair measured again (:func:`rlopt.risk.pair.measure`,
  the one routine) with one attribute left out, the same families and margin, each
  family under its own time limit; the attributes ranked by how far the worst case
  drops without them. The worst case compared is that of the learned families and the
  baselines they contain (AM, MD), on both sides: PLD and the transparency attack are
  not measured again. For wm, ci and sb, which contain a zero weight on an attribute,
  a proven figure without an attribute never exceeds the whole file's (the intruder
  has less); a figure stopped by a time limit is an interval and is reported as one.
- **what the parameters say**: each learned family's share per attribute
  (:meth:`rlopt.families.Family.attribute_shares`: wm's weights, ci's Shapley values,
  sb's diagonal over its trace; OWA has none, its weights are on ranks).
- **per record**: which records every method re-identifies, which only a learned
  family reaches, which some fixed method but not every one, and which none.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from rlopt.data import LinkageData
from rlopt.exceptions import DataWarning, InputError, NonFiniteError
from rlopt.families import family_of, get_learned_family
from rlopt.milp import SolverOptions
from rlopt.risk.figures import FamilyRow
from rlopt.risk.pair import Measured, measure, worst_of
from rlopt.risk.worst_case import WorstCase
from rlopt.status import Status

__all__ = [
    "RECORD_GROUPS",
    "attribute_drivers",
    "check_drivers",
    "drivers_limit",
    "parameter_shares",
    "record_groups",
]

RECORD_GROUPS = {
    "exposed": "re-identified by every method measured (each learned family, baseline, saved "
    "parameter and attack): exposed whatever the intruder does",
    "learned_only": "re-identified by some learned family and by no fixed method (baseline, saved "
    "parameter, attack): only the learned worst case reaches them",
    "some_fixed": "re-identified by some fixed method (baseline, saved parameter, attack), but not by "
    "every method",
    "none": "re-identified by no method measured",
}
"""The four groups of :func:`record_groups`, in words; every record is in exactly one."""

INEXACT_DROP = (
    "a drop is exact only where the worst case is proven with and without the attribute "
    "(drop_exact); elsewhere it compares verified lower ends found within time limits (the "
    "whole file's and the shorter one without each attribute), so part of it can be the time "
    "and not the attribute"
)
"""The note of a ranking with a drop between intervals."""


def check_drivers(data: LinkageData, families: Sequence[str]) -> None:
    """Raise :class:`InputError`, before any solve, when ``data`` has no attribute drivers
    (one attribute: nothing to leave out) or no learned family is asked for."""
    if data.n_attributes < 2:
        raise InputError(
            f"drivers on a file of {data.n_attributes} attribute ({', '.join(data.columns)}); expected at "
            "least 2: the attribute drivers compare the worst case without each attribute"
        )
    if not families:
        raise InputError("drivers with no learned family; expected at least one (--families)")


def drivers_limit(time_limit: float | None, n_attributes: int) -> float | None:
    """Each family's time limit without one attribute when none is given: the run's
    ``time_limit`` over the number of attributes (the drivers then take about as long as
    the families did), at least 1 s; ``None`` (no limit) stays ``None``."""
    return None if time_limit is None else max(1.0, time_limit / n_attributes)


# (over 60 lines by its numpydoc docstring: the body is the three views above)
def attribute_drivers(
    measured: Measured,
    families: Sequence[str],
    *,
    margin: float,
    options: SolverOptions,
    sample: np.ndarray | None = None,
    seed: int = 0,
    jobs: int = 1,
    scheduler: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """The attribute drivers of a measured pair, JSON-ready.

    Parameters
    ----------
    measured : Measured
        The whole file's measurement (:func:`rlopt.risk.pair.measure`).
    families : sequence of str
        The learned families, as the measurement learned them (checked by the caller).
    margin, options
        The margin and each family's solver options without one attribute (its time
        limit: :func:`drivers_limit` by default in :func:`rlopt.risk.assess_risk`).
    sample, seed, jobs, scheduler
        As in :func:`rlopt.risk.pair.measure`.
    progress : callable, default=None
        ``progress(message)`` before each step.

    Returns
    -------
    dict
        ``time_limit``; ``compared`` (what the worst case is over, in words); ``full``
        (the whole file's worst case: ``lower``, ``upper``, ``status``, ``source``,
        ``upper_source``); ``ranking`` (one row per attribute, the attribute whose
        absence drops the worst case most first: ``rank``, ``attribute``, its worst case
        without it, ``drop`` and ``drop_exact``, each family's ``lower``, ``upper``,
        ``status``, ``drop`` and ``drop_exact``, ``notes``); ``notes`` (why a drop is not
        exact, where one is not);
        ``parameters`` (per learned family, ``meaning`` and ``shares`` by attribute or
        ``None``); ``records`` (:func:`record_groups`).

    Notes
    -----
    ``drop = full lower end - lower end without the attribute``; ties are ranked by the
    ceiling without the attribute (lower first), then by column order. Where either end
    is an interval the drop is a difference of verified lower ends, not of optima.
    """
    data, say = measured.data, progress or (lambda message: None)
    check_drivers(data, families)
    full = worst_of(
        {name: row for name, row in measured.baselines.items() if name != "pld"},
        [row for row in measured.families if row.learned],
        None,
        data.n_records,
        identical=measured.identical,
    )
    learned = {row.family: row for row in measured.families if row.learned}
    rows = []
    for k, attribute in enumerate(data.columns):
        say(f"drivers: without {attribute} ({k + 1} of {data.n_attributes})")
        kept = [j for j in range(data.n_attributes) if j != k]
        rows.append(
            _without(
                data.subset(kept), attribute, families, (full, learned), margin=margin, options=options,
                sample=sample, seed=seed, jobs=jobs, scheduler=scheduler,
                progress=_prefixed(say, f"  without {attribute}: "),
            )
        )  # fmt: skip
    rows.sort(key=lambda row: (-row["drop"], row["upper"]))  # stable: column order breaks ties
    return {
        "time_limit": options.time_limit,
        "compared": "the learned families and the baselines they contain (AM, MD), with and without "
        "each attribute; PLD and the transparency attack are not measured again; wm's, ci's and sb's "
        "ceilings without an attribute are at most the whole file's (the intruder has less)",
        "full": _worst_dict(full),
        "ranking": [{"rank": rank, **row} for rank, row in enumerate(rows, 1)],
        "notes": ([] if all(row["drop_exact"] for row in rows) else [INEXACT_DROP]) + correlated_notes(data),
        "parameters": parameter_shares(measured.params, measured.families, data.columns),
        "records": record_groups(measured.records, [r.family for r in measured.families if r.learned]),
    }


CORRELATED = 0.9
"""Attributes whose original values correlate at least this much (Pearson, in absolute
value) are said together: a distance moves its weight among them, and dropping one of
them costs little, so the drop ranking and the weights can rank them apart."""


def correlated_notes(data) -> list[str]:
    """One note per group of numeric attributes correlated at :data:`CORRELATED` or more
    in the original file (groups: linked by such pairs), with the largest ``|r|``."""
    from scipy.sparse.csgraph import connected_components

    numeric = data.numeric_columns
    if len(numeric) < 2:
        return []
    values = np.asarray(data.original[:, numeric], dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.corrcoef(values, rowvar=False)
    linked = np.nan_to_num(np.abs(r)) >= CORRELATED
    _, group = connected_components(linked, directed=False)  # linked by such pairs
    notes = []
    for head in np.unique(group):
        members = np.flatnonzero(group == head).tolist()
        if len(members) > 1:
            names = [data.columns[numeric[i]] for i in members]
            strongest = max(abs(r[i, j]) for i in members for j in members if i < j)
            listed = f"{', '.join(names[:-1])} and {names[-1]}"
            notes.append(
                f"{listed} correlate in the original file (|r| up to {strongest:.2f}): a distance moves its "
                "weight among them and dropping one costs little, so the drop ranking and the families' "
                "weights can rank them apart"
            )
    return notes


def _without(
    data: LinkageData,
    attribute: str,
    families: Sequence[str],
    whole: tuple[WorstCase, dict[str, FamilyRow]],
    *,
    margin: float,
    options: SolverOptions,
    sample: np.ndarray | None,
    seed: int,
    jobs: int,
    scheduler: str | None,
    progress: Callable[[str], None],
) -> dict:
    """The worst case of ``data`` (the pair less ``attribute``): each family's interval
    and the worst case over them, and their drops from the ``whole`` file's (its worst
    case and its learned families' rows)."""
    notes: list[str] = []
    suited = []
    for name in families:
        try:
            get_learned_family(name).check_attributes(data.n_attributes)
            suited.append(name)
        except InputError as exc:
            notes.append(f"{name} not learned without {attribute}: {exc}")
    with warnings.catch_warnings(record=True) as caught:  # e.g. MD's singular covariance: a note
        warnings.simplefilter("always", DataWarning)
        measured = measure(
            data, suited, margin=margin, options=options, sample=sample, with_pld=False, seed=seed,
            jobs=jobs, scheduler=scheduler, notes=notes, progress=progress,
        )  # fmt: skip
    for w in caught:  # the others as they came
        if issubclass(w.category, DataWarning):
            notes.append(str(w.message))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    full, full_rows = whole
    rows = [_capped(row, full_rows.get(row.family), data.n_records) for row in measured.families]
    worst = worst_of(measured.baselines, rows, None, data.n_records, identical=measured.identical)
    return {
        "attribute": attribute,
        **_worst_dict(worst),
        "drop": full.n_correct - worst.n_correct,
        "drop_exact": full.status == worst.status == Status.PROVEN,
        "families": [_family_dict(row, full_rows.get(row.family)) for row in rows],
        "notes": notes,
    }


ZERO_WEIGHT_FAMILIES = ("wm", "ci", "sb")
"""The families whose every distance on the other attributes is one of theirs with a
zero weight on the attribute left out: without it their optimum is at most the whole
file's, so the whole file's ceiling bounds it too (OWA's weights are on ranks: not)."""


def _capped(row: FamilyRow, full: FamilyRow | None, n_records: int) -> FamilyRow:
    """``row`` (a family without an attribute) with the whole file's ceiling where it is
    lower and the family contains a zero weight (:data:`ZERO_WEIGHT_FAMILIES`): the
    intruder without the attribute has less. A count meeting it is then proven."""
    if row.family not in ZERO_WEIGHT_FAMILIES or full is None or full.bound is None or row.bound is None:
        return row
    if full.bound >= row.bound or (row.n_correct is not None and row.n_correct > full.bound):
        return row  # (a verified count above the whole file's ceiling is left for all to see)
    closed = row.n_correct == full.bound
    return replace(
        row,
        bound=full.bound,
        bound_rate=full.bound / n_records,
        upper_source="the whole file's ceiling (the intruder without the attribute has less)",
        status=Status.OPTIMAL if closed else row.status,
        gap=None if row.n_correct is None else (full.bound - row.n_correct) / max(full.bound, 1),
    )


def _prefixed(say: Callable[[str], None], prefix: str) -> Callable[[str], None]:
    return lambda message: say(prefix + message)


def _worst_dict(worst: WorstCase) -> dict:
    return {
        "lower": int(worst.n_correct),
        "upper": int(worst.upper),
        "status": str(worst.status),
        "source": worst.source,
        "upper_source": worst.upper_source,
    }


def _family_dict(row: FamilyRow, full: FamilyRow | None) -> dict:
    """A family's interval without an attribute (its verified count, its ceiling, ``None``
    where none is proven, and its status) and its drop from the whole file's ``full``
    row (exact where both are optima)."""
    drop = None
    if full is not None and full.n_correct is not None and row.n_correct is not None:
        drop = full.n_correct - row.n_correct
    return {
        "family": row.family,
        "lower": row.n_correct,
        "upper": row.bound,
        "upper_source": row.upper_source,
        "status": str(row.status),
        "drop": drop,
        "drop_exact": drop is not None and full is not None and full.status == row.status == Status.OPTIMAL,
    }


def parameter_shares(params: dict[str, dict], rows: Sequence[FamilyRow], columns: Sequence[str]) -> dict:
    """Per learned family with a parameter, what it says of each attribute:
    ``{"meaning": words, "shares": {attribute: share} or None}``
    (:meth:`rlopt.families.Family.attribute_shares`); a non-finite share is an error."""
    out = {}
    for row in rows:
        values = params.get(row.family) if row.learned else None
        family = None if not values else family_of(values, row.family)
        if values is None or family is None:
            continue
        shares = family.attribute_shares(values, columns)
        out[row.family] = {
            "meaning": family.shares_meaning,
            "shares": None
            if shares is None
            else {a: _finite(v, f"{row.family}'s share of {a}") for a, v in shares.items()},
        }
    return out


def record_groups(records: pd.DataFrame, learned: Sequence[str]) -> dict:
    """Each record in one of :data:`RECORD_GROUPS` by the per-record table's ``reid_``
    columns (``learned``: the learned families, whose columns are ``reid_<family>``; the
    other ``reid_`` columns are the fixed methods: baselines, saved parameters, attack).

    Returns ``{"meaning": RECORD_GROUPS, "methods": {"learned": [...], "fixed": [...]},
    "groups": {group: {"n": count, "records": [record ids]}}}``."""
    reid = [str(c) for c in records.columns if str(c).startswith("reid_")]
    learned_columns = [f"reid_{name}" for name in learned if f"reid_{name}" in reid]
    fixed = [c for c in reid if c not in learned_columns]
    hits = records[reid].to_numpy(dtype=bool)
    every = hits.all(axis=1) if reid else np.zeros(len(records), dtype=bool)
    by_fixed = records[fixed].to_numpy(dtype=bool).any(axis=1)
    by_learned = records[learned_columns].to_numpy(dtype=bool).any(axis=1)
    masks = {
        "exposed": by_fixed & every,
        "learned_only": by_learned & ~by_fixed,
        "some_fixed": by_fixed & ~every,
        "none": ~by_fixed & ~by_learned,
    }
    ids = records["record"].to_numpy()
    return {
        "meaning": dict(RECORD_GROUPS),
        "methods": {"learned": learned_columns, "fixed": fixed},
        "groups": {
            name: {"n": int(mask.sum()), "records": [_plain(v) for v in ids[mask]]}
            for name, mask in masks.items()
        },
    }


def _plain(value):
    """A record id as JSON writes it."""
    return value.item() if isinstance(value, np.generic) else value


def _finite(value: float, what: str) -> float:
    value = float(value)
    if not math.isfinite(value):
        raise NonFiniteError(f"{what} is {value}; expected a finite number")
    return value
