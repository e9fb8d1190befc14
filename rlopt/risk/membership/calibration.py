"""The membership worst case, calibrated (docs/method.md §9): figures that read 0 for a
release that favours no one and 1 for a copy of the training file.

The in-sample worst case (:func:`rlopt.risk.membership.membership_risk`) chooses the
distance and the threshold on the records it counts them on, so it is inflated by the
choice itself: an ideal generator reads about 0.2 on 300 records. Three figures correct it:

- :func:`cross_fitted`, the headline: members and held-out records each split into
  ``K`` folds (seeded); each fold's records are called by the attack (family, parameter,
  threshold) learned on the other folds by the same search, and the pooled out-of-fold
  calls give TPR, FPR and the advantage with a 95 % interval (Clopper-Pearson, 97.5 % on
  TPR and on FPR), the AUC of the out-of-fold distances (each fold's on its own scale)
  and TPR at a low FPR (:class:`OutOfSample`);
- :func:`permutation_null`: the in-sample search re-run on ``B`` relabelled splits (the
  member labels permuted, the counts kept), its mean, 95 % quantile and the observed
  figure's p-value (:class:`PermutationNull`);
- :class:`Anchor`: the same figures for a release that is a reserve of real records
  (the ideal generator) or a copy of the training file, on the same split (measured by
  :func:`rlopt.risk.membership.membership_risk`).

It computes statistics of splits; the search it calls is passed in (``learn``), so
that it imports nothing of :mod:`rlopt.risk.membership.attack`.

The out-of-fold calls never read a fold's labels: the fold's records enter only the
pooled standardisation, which reads values, not labels.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Protocol

import numpy as np

from rlopt.exceptions import InputError
from rlopt.status import Status

__all__ = [
    "FPR_LEVELS",
    "Anchor",
    "Fit",
    "OutOfSample",
    "PermutationNull",
    "check_folds",
    "check_permutations",
    "clopper_pearson",
    "most_folds",
    "cross_fitted",
    "permutation_null",
]

FPR_LEVELS = (0.1, 0.01)
"""The false-positive rates at which the out-of-fold TPR is reported (Carlini et al.)."""

MIN_PERMUTATIONS = 19
"""Fewer relabelled runs cannot give a p-value of 0.05 ((1 + 0) / (19 + 1))."""


class Called(Protocol):
    """What the calibration reads of an attack (:class:`rlopt.risk.membership.Attack`)."""

    @property
    def threshold(self) -> float: ...

    @property
    def advantage(self) -> float: ...


@dataclass(frozen=True)
class Fit:
    """The in-sample search on one split: ``attack`` the best verified attack over the
    families (and the fixed Euclidean one), ``ceiling`` the largest proven ceiling over
    them (an advantage; 1 where a family is unbounded), ``status`` proven or not."""

    attack: Called
    ceiling: float
    status: Status

    @property
    def interrupted(self) -> bool:
        return self.status == Status.INTERRUPTED


@dataclass(frozen=True)
class OutOfSample:
    """The pooled out-of-fold calls of :func:`cross_fitted`."""

    folds: int
    tp: int
    fp: int
    n_members: int
    n_holdout: int
    tpr: float
    fpr: float
    advantage: float
    interval: tuple[float, float]  # 95 %: Clopper-Pearson 97.5 % on TPR and on FPR
    auc: float
    tpr_at_fpr: dict[str, float | None]  # None: too few held-out records for that FPR
    attacks: tuple  # each fold's attack, learned on the other folds
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self) | {"interval": list(self.interval)}


@dataclass(frozen=True)
class PermutationNull:
    """The in-sample search on ``runs`` relabelled splits. A run stopped by its limit
    enters the mean by its lower end and the p-value by its ceiling; the observed figure
    enters the p-value by its lower end (``observed``) and the excess by its ceiling
    (``observed_upper``): the p-value never overstates a leak, the excess never
    understates one. ``stopped``: Ctrl-C ended it, the runs that finished kept."""

    runs: int
    lower: tuple[float, ...]
    ceiling: tuple[float, ...]
    observed: float
    observed_upper: float
    seconds: float
    stopped: bool = False

    @property
    def mean(self) -> float:
        return float(np.mean(self.lower))

    @property
    def q95(self) -> float:
        return float(np.quantile(self.ceiling, 0.95))

    @property
    def p_value(self) -> float:
        """``(1 + #{runs whose ceiling reaches the observed figure}) / (1 + runs)``."""
        return (1 + sum(c >= self.observed for c in self.ceiling)) / (1 + self.runs)

    @property
    def excess(self) -> float:
        """``(observed - mean) / (1 - mean)``: 0 at the null's mean, 1 at a copy."""
        return self._excess(self.observed_upper)

    def _excess(self, value) -> float:
        return (value - self.mean) / (1 - self.mean) if self.mean < 1 else 0.0

    @property
    def band(self) -> tuple[float, float]:
        """What relabelling alone gives: the 2.5 % quantile of the relabelled runs' own
        excesses by their lower ends, the 97.5 % one by their ceilings (so that a stopped
        run widens it, never narrows it)."""
        if self.mean >= 1:
            return 0.0, 0.0
        low = self._excess(np.quantile(self.lower, 0.025))
        return float(low), float(self._excess(np.quantile(self.ceiling, 0.975)))

    def to_dict(self) -> dict:
        return asdict(self) | {
            "mean": self.mean,
            "q95": self.q95,
            "p_value": self.p_value,
            "excess": self.excess,
            "excess_band": list(self.band),
        }


@dataclass(frozen=True)
class Anchor:
    """What a release of ``kind`` (``ideal``: real records of the same population, none
    of them a member; ``copy``: the training file) gives on the same split."""

    kind: str
    n_synthetic: int
    in_sample: float
    ceiling: float
    out_of_sample: OutOfSample | None

    def to_dict(self) -> dict:
        figures = asdict(self)
        figures["out_of_sample"] = None if self.out_of_sample is None else self.out_of_sample.to_dict()
        return figures


def clopper_pearson(k: int, n: int, confidence: float) -> tuple[float, float]:
    """The exact (Clopper-Pearson) two-sided interval of a binomial share ``k / n``."""
    from scipy.stats import beta

    alpha = 1 - confidence
    low = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def _folds(n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Each of ``n`` records' fold, ``k`` folds of sizes differing by at most one."""
    fold = np.arange(n) % k
    return fold[rng.permutation(n)]


def _fits(folds: int, smallest: int) -> bool:
    """Every fold holds a record of the smallest class, and the other folds keep 2 of it."""
    return folds <= smallest and smallest - math.ceil(smallest / folds) >= 2


def most_folds(n_members: int, n_holdout: int, at_most: int) -> int:
    """The most folds, up to ``at_most``, that :func:`check_folds` accepts; 0 when none."""
    smallest = min(n_members, n_holdout)
    return max((k for k in range(2, at_most + 1) if _fits(k, smallest)), default=0)


def check_folds(folds: int, n_members: int, n_holdout: int) -> None:
    """One clear error for a fold count the split cannot carry."""
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise InputError(f"folds={folds!r}; expected a whole number of folds, at least 2 (0 to skip)")
    smallest = min(n_members, n_holdout)
    if folds > smallest:
        which = "members" if n_members <= n_holdout else "held-out records"
        raise InputError(
            f"folds={folds}: larger than the smallest class ({smallest} {which}); expected at most "
            f"{smallest}, so that every fold holds records of both"
        )
    if not _fits(folds, smallest):
        raise InputError(
            f"folds={folds}: the other folds keep fewer than 2 {'members' if n_members == smallest else 'held-out records'}"
            " to learn from; choose fewer folds"
        )


def cross_fitted(
    learn: Callable[[np.ndarray, np.ndarray], Fit],
    call: Callable[[object, np.ndarray], np.ndarray],
    zm: np.ndarray,
    zh: np.ndarray,
    *,
    folds: int,
    seed: int,
    jobs: int = 1,
) -> OutOfSample | None:
    """The out-of-fold advantage: each fold's records called by the attack that
    ``learn(members, held_out)`` finds on the other folds; ``call(attack, records)`` gives
    the records' distances to their nearest synthetic records under the attack's
    distance (a record is called a member within the attack's threshold). The AUC and
    the TPR at a low FPR rank the pooled out-of-fold distances, each divided by its
    fold's median (the folds' attacks measure on their own scales). Any verified attack is a
    fair out-of-sample attack, proven or not. The folds' fits run on ``jobs`` worker
    processes (``learn`` picklable), each the same whatever ``jobs``. ``None`` when
    Ctrl-C stopped a fit."""
    from sklearn.metrics import roc_auc_score, roc_curve

    check_folds(folds, len(zm), len(zh))
    t0 = time.perf_counter()
    rng = np.random.default_rng([seed, 51])
    fold_m, fold_h = _folds(len(zm), folds, rng), _folds(len(zh), folds, rng)
    d_m, d_h, called_m, called_h, attacks = (
        np.empty(len(zm)),
        np.empty(len(zh)),
        np.zeros(len(zm), bool),
        np.zeros(len(zh), bool),
        [],
    )
    tasks = [(learn, zm[fold_m != k], zh[fold_h != k]) for k in range(folds)]
    fits, stopped = _mapped(_fit_task, tasks, jobs, stopped=lambda fit: fit.interrupted)
    if stopped:  # every fold's calls are needed: no figure from some of them
        return None
    for k, learned in enumerate(fits):
        attacks.append(learned.attack)
        d_m[fold_m == k] = call(learned.attack, zm[fold_m == k])
        d_h[fold_h == k] = call(learned.attack, zh[fold_h == k])
        called_m[fold_m == k] = d_m[fold_m == k] <= learned.attack.threshold
        called_h[fold_h == k] = d_h[fold_h == k] <= learned.attack.threshold
    n_m, n_h = len(zm), len(zh)
    tp, fp = int(called_m.sum()), int(called_h.sum())
    tpr_low, tpr_high = clopper_pearson(tp, n_m, 0.975)
    fpr_low, fpr_high = clopper_pearson(fp, n_h, 0.975)
    labels = np.r_[np.ones(n_m), np.zeros(n_h)]
    scores = -np.r_[d_m / _scale(d_m, d_h, fold_m, fold_h), d_h / _scale(d_h, d_m, fold_h, fold_m)]
    fpr_curve, tpr_curve, _ = roc_curve(labels, scores)
    at_fpr: dict[str, float | None] = {}
    for level in FPR_LEVELS:  # an FPR below one held-out record's share does not exist
        at_fpr[f"{level:g}"] = float(tpr_curve[fpr_curve <= level].max()) if n_h * level >= 1 else None
    return OutOfSample(
        folds, tp, fp, n_m, n_h, tp / n_m, fp / n_h, tp / n_m - fp / n_h,
        (tpr_low - fpr_high, tpr_high - fpr_low), float(roc_auc_score(labels, scores)), at_fpr,
        tuple(attacks), time.perf_counter() - t0,
    )  # fmt: skip


def check_permutations(runs: int) -> None:
    """One clear error for a permutation count too small to give a p-value of 0.05."""
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < MIN_PERMUTATIONS:
        raise InputError(
            f"permutations={runs!r}; expected at least {MIN_PERMUTATIONS} relabelled runs (fewer cannot "
            "give a p-value of 0.05), or 0 for none"
        )


def _scale(d: np.ndarray, other: np.ndarray, fold: np.ndarray, other_fold: np.ndarray) -> np.ndarray:
    """Each record's fold's scale: the median distance of the fold's records, members and
    held out together (label-free), so that folds whose attacks measure on other scales
    rank on one (their maximum where the median is 0; 1 where every distance is)."""
    out = np.ones(len(d))
    for k in np.unique(fold):
        values = np.r_[d[fold == k], other[other_fold == k]]
        median, most = float(np.median(values)), float(values.max())
        out[fold == k] = median if median > 0 else (most if most > 0 else 1.0)
    return out


def _fit_task(task) -> Fit:
    learn, members, holdout = task
    return learn(members, holdout)


def _mapped(work: Callable, tasks: list, jobs: int, stopped: Callable) -> tuple[list, bool]:
    """``(results, stopped)``: ``work`` on each task, in this process (``jobs`` 1) or on
    ``jobs`` workers, in the tasks' order. Ctrl-C stops it with the results finished
    before it: in this process, the search a Ctrl-C reaches returns what ``stopped``
    tells apart (kept), and no task starts after it; on workers, those done in order."""
    done: list = []
    try:
        if jobs == 1:
            for task in tasks:
                done.append(work(task))
                if stopped(done[-1]):
                    return done, True
            return done, False
        from rlopt.processes import local_pool, stop_pool

        pool = local_pool(min(jobs, len(tasks)))
        try:
            for result in pool.map(work, tasks):
                done.append(result)
            return done, False
        finally:
            stop_pool(pool)
    except KeyboardInterrupt:
        return done, True


def _null_run(task) -> tuple[float, float, bool]:
    """One relabelled split's in-sample search (a worker's task)."""
    learn, pooled, n_m, seed, run = task
    order = np.random.default_rng([seed, 52, run]).permutation(len(pooled))
    found = learn(pooled[order[:n_m]], pooled[order[n_m:]])
    return found.attack.advantage, found.ceiling, found.interrupted


def permutation_null(
    learn: Callable[[np.ndarray, np.ndarray], Fit],
    zm: np.ndarray,
    zh: np.ndarray,
    *,
    runs: int,
    observed: float,
    observed_upper: float | None = None,
    seed: int,
    jobs: int = 1,
) -> PermutationNull | None:
    """``learn`` (picklable: it runs in worker processes when ``jobs > 1``) on ``runs``
    relabelled splits of the records (run ``r`` permuted by the seed ``[seed, 52, r]``,
    the same whatever ``jobs``); ``None`` when Ctrl-C stopped it."""
    check_permutations(runs)
    t0 = time.perf_counter()
    pooled = np.vstack([zm, zh])
    tasks = [(learn, pooled, len(zm), seed, r) for r in range(runs)]
    results, stopped = _mapped(_null_run, tasks, jobs, stopped=lambda result: result[2])
    finished = [r for r in results if not r[2]]  # a run Ctrl-C stopped bounds nothing
    if stopped and len(finished) < MIN_PERMUTATIONS:
        return None
    return PermutationNull(
        len(finished), tuple(r[0] for r in finished), tuple(r[1] for r in finished), observed,
        observed if observed_upper is None else observed_upper, time.perf_counter() - t0, stopped,
    )  # fmt: skip
