"""Integral privacy at real size: many candidate databases drawn from the data (random
subsamples, or ``X`` changed by random modifications of at most ``r`` records), a model
learned on each, the models grouped by their key (Senavirathne & Torra's integrally
private model selection). For each distinct model: how many databases generate it and
the records common to all of them (members an intruder infers from its publication);
it is *k-integrally private* when at least ``k`` databases generate it and no record is
common to them all."""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rlopt.exceptions import InputError
from rlopt.integral.learners import Learner, rows

__all__ = ["ModelGroup", "SampledModels", "Selection", "around", "learn_all", "select_private", "subsamples"]

CHUNKS_PER_WORKER = 4
"""Databases go to the workers in this many chunks per worker (fewer, larger messages)."""


def _draw_distinct(draw, n: int, ceiling: int, seed: int) -> list[frozenset]:
    """``n`` distinct databases from ``draw(rng)`` (all of them when there are at most
    ``n``: ``ceiling``), seeded."""
    rng = np.random.default_rng(seed)
    found: dict[frozenset, None] = {}
    attempts = 0
    while len(found) < min(n, ceiling) and attempts < 50 * max(n, 1) + 1000:
        found.setdefault(draw(rng), None)
        attempts += 1
    return list(found)


def subsamples(
    records: Sequence[Hashable], n: int, *, size: int | None = None, seed: int = 0
) -> list[frozenset]:
    """``n`` distinct random databases of ``records``: of ``size`` records each, or
    (``None``) each record in with probability 1/2, so that with ``n >= 2^N`` every subset
    is drawn."""
    records = list(records)
    total = len(records)
    _check_count(n)
    if size is not None and not 0 <= size <= total:
        raise InputError(f"size={size}; expected from 0 to the data's {total} records")
    labels = np.array(records, dtype=object)
    if size is None:
        return _draw_distinct(
            lambda rng: frozenset(labels[rng.random(total) < 0.5].tolist()), n, 2**total, seed
        )
    return _draw_distinct(
        lambda rng: frozenset(labels[rng.choice(total, size, replace=False)].tolist()),
        n,
        math.comb(total, size),
        seed,
    )


def around(
    records: Sequence[Hashable], database: Iterable[Hashable], n: int, *, max_changes: int, seed: int = 0
) -> list[frozenset]:
    """``n`` distinct databases ``X + mu``: ``database`` (``X``) with 1 to ``max_changes``
    random records removed from it or added from the other ``records``."""
    records, x = list(records), frozenset(database)
    _check_count(n)
    if not x <= set(records):
        raise InputError("the database holds records outside the data")
    if (
        isinstance(max_changes, bool)
        or not isinstance(max_changes, int)
        or not 1 <= max_changes <= len(records)
    ):
        raise InputError(
            f"max_changes={max_changes!r}; expected an integer from 1 to the data's {len(records)} records"
        )
    labels = np.array(records, dtype=object)

    def draw(rng) -> frozenset:  # the chosen records change sides: in X removed, outside added
        changed = labels[rng.choice(len(records), rng.integers(1, max_changes + 1), replace=False)]
        return x.symmetric_difference(changed.tolist())

    reachable = sum(math.comb(len(records), k) for k in range(1, max_changes + 1))
    return _draw_distinct(draw, n, reachable, seed)


def _check_count(n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"n={n!r} databases; expected an integer >= 1")


@dataclass(frozen=True)
class ModelGroup:
    """One distinct model: its key, how many databases generate it, the records in all,
    and one of those databases (the model learned on it is the published one)."""

    key: Hashable
    generators: int
    common: frozenset
    example: frozenset

    def private(self, k: int) -> bool:
        """At least ``k`` generators and no record common to them all."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"k={k!r}; expected an integer >= 1")
        return self.generators >= k and not self.common


@dataclass
class SampledModels:
    """The distinct models of the databases learned, most generated first."""

    groups: list[ModelGroup]
    databases: list[frozenset]
    keys: list[Hashable]  # the key of each database's model

    def private(self, k: int) -> list[ModelGroup]:
        """The k-integrally private models."""
        return [group for group in self.groups if group.private(k)]

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "model": [str(g.key) for g in self.groups],
                "generators": [g.generators for g in self.groups],
                "common_records": [len(g.common) for g in self.groups],
            }
        )


def _keys(data: pd.DataFrame, learner: Learner, databases: list[frozenset]) -> list[Hashable]:
    return [learner(rows(data, database)) for database in databases]


def learn_all(
    data: pd.DataFrame,
    learner: Learner,
    databases: Sequence[frozenset],
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    progress: bool = False,
) -> SampledModels:
    """``learner`` on every database (labels of ``data``), in ``jobs`` worker processes or
    on a Dask ``scheduler`` (never by the machine's core count), grouped by key."""
    databases = list(databases)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InputError(f"jobs={jobs!r}; expected an integer >= 1 (worker processes)")
    from rlopt.processes import with_progress

    if jobs == 1 and scheduler is None:
        keys = [learner(rows(data, d)) for d in with_progress(databases, len(databases), "models", progress)]
    else:
        keys = _in_workers(data, learner, databases, jobs, scheduler, progress)
    members: dict[Hashable, list[frozenset]] = {}
    for database, key in zip(databases, keys, strict=True):
        members.setdefault(key, []).append(database)
    groups = [
        ModelGroup(key, len(made), frozenset.intersection(*made), made[0]) for key, made in members.items()
    ]
    groups.sort(key=lambda g: -g.generators)
    return SampledModels(groups, databases, keys)


def _in_workers(data, learner, databases, jobs, scheduler, progress) -> list[Hashable]:
    import concurrent.futures

    from rlopt.processes import dask_client, local_pool, stop_pool, with_progress

    pieces = max(1, min(len(databases), CHUNKS_PER_WORKER * jobs))
    chunks = [
        list(chunk) for chunk in np.array_split(np.array(databases, dtype=object), pieces) if len(chunk)
    ]
    client = dask_client(scheduler) if scheduler is not None else None
    executor = client.get_executor() if client is not None else local_pool(jobs)
    try:
        futures = {executor.submit(_keys, data, learner, chunk): i for i, chunk in enumerate(chunks)}
        done: dict[int, list] = {}
        for future in with_progress(
            concurrent.futures.as_completed(futures), len(futures), "models", progress
        ):
            done[futures[future]] = future.result()
    finally:
        if client is not None:
            client.close()
        else:
            stop_pool(executor)
    return [key for i in range(len(chunks)) for key in done[i]]


@dataclass
class Selection:
    """The integrally private choice: among the k-integrally private models, the best on
    the validation records, and its ``score`` on the test records (accuracy or R²),
    beside the model of the whole training data on the same test records. Every model
    is scored as it is published: its parameters rounded as its key reads them."""

    k: int
    chosen: ModelGroup | None
    score: float | None
    non_private_score: float
    candidates: list[tuple[ModelGroup, float]]  # each private model and its validation score
    validated: bool = True  # chosen on other records than those it is scored on

    @property
    def utility_lost(self) -> float | None:
        return None if self.score is None else self.non_private_score - self.score

    def to_dict(self) -> dict:
        return {
            "k": self.k,
            "chosen": None if self.chosen is None else str(self.chosen.key),
            "generators": None if self.chosen is None else self.chosen.generators,
            "score": self.score,
            "non_private_score": self.non_private_score,
            "utility_lost": self.utility_lost,
            "n_private_models": len(self.candidates),
            "chosen_on_other_records": self.validated,
        }


def select_private(
    train: pd.DataFrame,
    test: pd.DataFrame,
    learner: Learner,
    sampled: SampledModels,
    k: int,
    *,
    validation: pd.DataFrame | None = None,
) -> Selection:
    """Integrally private model selection: the k-integrally private model of ``sampled``
    (databases of ``train``) that scores best on ``validation``, scored on ``test``;
    ``chosen`` is ``None`` when none is private. Without ``validation`` the model is
    chosen on ``test`` itself, and its score there overstates it (the best of several on
    those records). The learner must make scikit-learn models (their ``score``)."""
    target = getattr(learner, "target", None)
    features = list(getattr(learner, "features", ()))
    if target is None or not features:
        raise InputError(f"{learner.name}: model selection needs a learner with a target and features")

    def score(model, records: pd.DataFrame) -> float:
        published = learner.published(model)
        return float(published.score(records[features].to_numpy(float), records[target].to_numpy()))

    choosing = test if validation is None else validation
    fitted = {group: learner.fit(rows(train, group.example)) for group in sampled.private(k)}
    candidates = sorted(
        ((group, score(model, choosing)) for group, model in fitted.items()), key=lambda item: -item[1]
    )
    best = candidates[0][0] if candidates else None
    return Selection(
        k,
        best,
        None if best is None else score(fitted[best], test),
        score(learner.fit(train), test),
        candidates,
        validation is not None,
    )
