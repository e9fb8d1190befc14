"""The update attack on two published models, from files: the database before and after
an update, the learning algorithm, what the intruder knows; the consistent modifications
exactly (at most 16 candidate records) or on drawn modifications and the update itself
(above: a sample of the set, so the records it names as surely changed are an upper
bound of what the intruder infers). What ``rlopt integral`` prints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rlopt.exceptions import InputError
from rlopt.integral.exact import MAX_POPULATION, IntegralPrivacy, Modification, consistent_modifications
from rlopt.integral.learners import named_learner, rows
from rlopt.integral.sampling import around, learn_all

__all__ = ["UpdateAttack", "update_attack"]


@dataclass
class UpdateAttack:
    """The consistent modifications of one update and how they were found."""

    privacy: IntegralPrivacy
    truth: Modification  # the update as it was made
    learner: str
    precision: int
    max_changes: int
    n_candidates: int  # records an update may remove or add
    exact: bool
    drawn: int = 0  # modifications drawn (not exact)

    def lines(self) -> list[str]:
        p = self.privacy

        def named(records) -> str:
            return ", ".join(sorted(map(str, records))) or "none"

        how = (
            f"exact: every database of the {self.n_candidates} candidate records"
            if self.exact
            else f"found among {self.drawn} modifications drawn at random, and the update itself (a sample of the set)"
        )
        lines = [
            f"integral privacy of {self.learner} (parameters to {self.precision} decimals) after an update "
            f"of {len(self.truth)} record(s) ({named(self.truth.removed)} removed; {named(self.truth.added)} added):",
            f"  consistent modifications of at most {self.max_changes} record(s): {p.size} ({how})",
            f"  minimal ones: {p.k} (k-anonymous integral privacy: k = {p.k})",
            f"  removed in every one: {named(p.removed_surely)}; added in every one: {named(p.added_surely)}",
            f"  members inferred beyond what the intruder knew: {named(p.members)}",
        ]
        if p.integrally_private:
            verdict = "yes (no record is changed in every consistent modification)"
        elif not p.modifications:
            verdict = "no modification of that size explains the two models"
        else:
            verdict = "no: " + named({f"-{r}" for r in p.removed_surely} | {f"+{a}" for a in p.added_surely})
            verdict += " in every consistent modification"
        lines.append(f"  integrally private: {verdict}")
        if not self.exact:
            lines.append(
                "  (drawn: more modifications may be consistent; the records named above may be fewer)"
            )
        return lines

    def to_dict(self) -> dict:
        return {
            **self.privacy.to_dict(),
            "update": str(self.truth),
            "learner": self.learner,
            "precision": self.precision,
            "max_changes": self.max_changes,
            "candidates": self.n_candidates,
            "exact": self.exact,
            "drawn": self.drawn,
        }


def _labelled(frame: pd.DataFrame, id_column: str | None, name: str) -> pd.DataFrame:
    if id_column is None:
        return frame
    if id_column not in frame.columns:
        raise InputError(
            f"--id-column {id_column!r} is not a column of {name}; its columns: {list(frame.columns)}"
        )
    if frame[id_column].duplicated().any():
        raise InputError(f"--id-column {id_column!r} repeats values in {name}; expected one per record")
    return frame.set_index(frame[id_column].astype(str)).drop(columns=[id_column])


def _records(before, after, known, population, id_column: str | None) -> tuple[pd.DataFrame, dict]:
    """Every candidate record once (the files read, with the same columns), and the
    identifiers of each file's records by its name (``BEFORE``, ``AFTER``, ``--known``,
    ``--population``): ``id_column``'s values, or ``rowN`` for a record's values."""
    from rlopt.data import load_table

    frames = {"BEFORE": load_table(before), "AFTER": load_table(after)}
    if known is not None:
        frames["--known"] = load_table(known)
    if population is not None:
        frames["--population"] = load_table(population)
    frames = {name: _labelled(frame, id_column, name) for name, frame in frames.items()}
    columns = list(frames["BEFORE"].columns)
    for name, frame in frames.items():
        if list(frame.columns) != columns:
            raise InputError(f"{name} has the columns {list(frame.columns)}; expected BEFORE's {columns}")
    if id_column is None:  # a record is its values
        every = pd.concat(frames.values()).drop_duplicates()
        every.index = [f"row{i}" for i in range(len(every))]
        label = {
            tuple(row): name for name, row in zip(every.index, every.itertuples(index=False), strict=True)
        }
        ids = {
            name: [label[tuple(row)] for row in frame.itertuples(index=False)]
            for name, frame in frames.items()
        }
    else:
        every = pd.concat(frames.values())
        every = every[~every.index.duplicated()]
        ids = {name: list(frame.index) for name, frame in frames.items()}
    return every, ids


def update_attack(
    before: str | Path,
    after: str | Path,
    *,
    model: str = "tree",
    target: str | None = None,
    features: Sequence[str] | None = None,
    precision: int = 3,
    max_depth: int = 3,
    id_column: str | None = None,
    known: str | Path | None = None,
    population: str | Path | None = None,
    max_changes: int | None = None,
    samples: int = 2000,
    seed: int = 0,
    jobs: int = 1,
    scheduler: str | None = None,
    progress: bool = False,
) -> UpdateAttack:
    """The update attack of ``rlopt integral`` (see there)."""
    every, ids = _records(before, after, known, population, id_column)
    learner = named_learner(
        model, every, target=target, features=features, precision=precision, max_depth=max_depth
    )
    x, x_after = frozenset(ids["BEFORE"]), frozenset(ids["AFTER"])
    knows = frozenset(ids.get("--known", ids["BEFORE"]))
    if not knows <= x:
        raise InputError("--known holds records that are not in BEFORE; expected part of BEFORE")
    truth = Modification(x - x_after, x_after - x)
    r = max_changes if max_changes is not None else max(1, len(truth))
    g, g_after = learner(rows(every, x)), learner(rows(every, x_after))
    if len(every) <= MAX_POPULATION:
        privacy = consistent_modifications(every, learner, g, g_after, known=knows, max_changes=r)
        return UpdateAttack(privacy, truth, learner.name, precision, r, len(every), exact=True)
    if knows != x:
        raise InputError(
            f"{len(every)} candidate records: above {MAX_POPULATION} the intruder must know all of BEFORE "
            "(leave out --known)"
        )
    drawn = around(list(every.index), x, samples, max_changes=min(r, len(every)), seed=seed)
    sampled = learn_all(every, learner, drawn, jobs=jobs, scheduler=scheduler, progress=progress)
    # the update itself explains the two models: it is in the set whether drawn or not
    consistent = {
        Modification(x - d, d - x) for d, key in zip(drawn, sampled.keys, strict=True) if key == g_after
    }
    found = sorted(consistent | ({truth} if len(truth) <= r else set()), key=lambda m: (len(m), str(m)))
    privacy = IntegralPrivacy(found, [x] if found else [], knows)
    return UpdateAttack(privacy, truth, learner.name, precision, r, len(every), exact=False, drawn=len(drawn))
