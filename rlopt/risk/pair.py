"""The one measurement of a pair: every figure of its worst case, by one routine.

:func:`measure` takes a validated pair and gives the baselines (AM, MD, PLD), the saved
parameters, each learned family's interval, the transparency attack, the per-record
columns and the :class:`~rlopt.risk.worst_case.WorstCase` over all of them. ``rlopt
risk`` (:func:`rlopt.risk.assess_risk`), each cell of ``rlopt compare``, each value of
``rlopt tradeoff`` and the app (which runs those commands) call it, so one pair cannot
get different figures from different commands. What a caller leaves out (PLD on a map,
the attack where the method has none) is an argument, not another copy of the loop.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from rlopt.attacks import AttackResult, FuzzyAttackResult, PramAttackResult, plan_attack
from rlopt.attacks.registry import AttackRun
from rlopt.data import LinkageData
from rlopt.exceptions import InputError, Interrupted, SolverError
from rlopt.families import (
    BASELINES,
    DEFAULT_BASELINE,
    FAMILIES,
    BaselineFamily,
    Distance,
    get_learned_family,
)
from rlopt.families.containment import embed
from rlopt.learn import LearnedDistanceLinkage, RecountMismatchError, learn, recount
from rlopt.linkage import LinkageResult, link_records
from rlopt.linkage.distance_based import resolve_distance
from rlopt.linkage.identical import IDENTICAL_RECORDS, identical_records
from rlopt.linkage.probabilistic import PLD_MAX_RECORDS, pld
from rlopt.masking import MaskingSpec
from rlopt.milp import SolverOptions
from rlopt.milp.ceilings.certificate import BlockOptions
from rlopt.results import LearnResult
from rlopt.risk.figures import BaselineRow, FamilyRow
from rlopt.risk.worst_case import WorstCase, worst_case
from rlopt.status import Status

__all__ = ["Measured", "measure", "stopped", "stopped_row", "worst_of"]

AnyAttack = AttackResult | FuzzyAttackResult | PramAttackResult


@dataclass
class Measured:
    """What :func:`measure` found for one pair.

    ``baselines`` by name; ``families`` one row per saved parameter file and learned
    family, in order; ``params`` each one's parameter by its label; ``records`` one row
    per record (``record``, then ``reid_<who>`` and ``at_risk_<family>`` columns);
    ``attack`` the transparency attack's result; ``worst`` the worst case over all of
    them (:func:`worst_of`); ``failures`` why each failed family failed."""

    data: LinkageData
    baselines: dict[str, BaselineRow]
    families: list[FamilyRow]
    params: dict[str, dict]
    records: pd.DataFrame
    attack: AnyAttack | None
    worst: WorstCase
    notes: list[str]
    failures: dict[str, str]
    identical: int | None = None  # the ceiling of identical records, where below the records

    @property
    def attack_figures(self) -> dict | None:
        return None if self.attack is None else self.attack.to_dict()

    def family(self, name: str) -> FamilyRow:
        """The row of family ``name``."""
        return next(row for row in self.families if row.family == name)

    def interrupted(self) -> Interrupted:
        """Ctrl-C after the measurement (e.g. in the generalisation folds): all it found."""
        return stopped(self)

    @property
    def stopped(self) -> list[str]:
        """The learned families a Ctrl-C stopped before they finished (their rows hold
        the interval reached, or nothing for one not started)."""
        return [row.family for row in self.families if row.learned and row.status == Status.INTERRUPTED]


def measure(
    data: LinkageData,
    families: Sequence[str],
    *,
    margin: float,
    options: SolverOptions,
    attack: MaskingSpec | None = None,
    params: Sequence[str | Path] = (),
    known: Sequence[tuple[str, Distance]] = (),
    sample: np.ndarray | None = None,
    blocks: BlockOptions | None = None,
    with_pld: bool = True,
    seed: int = 0,
    jobs: int = 1,
    scheduler: str | None = None,
    notes: list[str] | None = None,
    progress: Callable[[str], None] | None = None,
    intervals: Callable[[str, dict], None] | None = None,
) -> Measured:
    """The worst case of one validated pair.

    Parameters
    ----------
    data : LinkageData
        The pair, validated (:func:`rlopt.data.validate_pair`).
    families : sequence of str
        Learned families, learned in this order (smallest first: each family's
        optimum is a start of those that contain it); their names checked by the caller.
    margin, options
        The margin eps and the solver options of every family.
    attack : masking spec, default=None
        The published masking: its transparency attack runs (planned before any solve,
        so a parameter the file contradicts is an error first).
    params : sequence of paths
        Saved parameter files (``rlopt learn --params-out``), counted without solving.
    known : sequence of (label, Distance)
        Parameters the caller already has, offered to every family that contains them.
    sample : array of int, default=None
        Learn the families on these records and recount every admissible parameter met
        on the whole file: a verified lower end (status ``sampled``), whose only ceiling
        is that of identical records (:mod:`rlopt.linkage.identical`), where there is one.
    blocks : BlockOptions, default=None
        Block ceilings beside each family's solve (not on a sample).
    with_pld : bool, default=True
        Probabilistic linkage among the baselines (``rlopt compare``'s map leaves it out).
    seed : int
        PLD's seed.
    jobs, scheduler : int, str, default=1, None
        Worker processes (or a Dask scheduler's address) for the families: side by side,
        spare workers racing the open ones (:mod:`rlopt.milp.racing.race`). With ``blocks`` the
        workers solve the blocks and the families run one after another; on a ``sample``
        the families run one after another.
    notes : list of str, default=None
        The run's notes so far; the measurement appends its own.
    progress, intervals : callables, default=None
        ``progress(message)`` before each step; ``intervals(family, event)`` each time a
        family's interval narrows.

    A family whose solve fails is a ``failed`` row (the others are kept; its reason in
    ``failures``); Ctrl-C raises :class:`~rlopt.exceptions.Interrupted` holding the
    baselines, the finished families and the interval the running one had reached.
    """
    # (over 60 lines by its numpydoc parameters: the body is the five steps below)
    run_attack = None if attack is None else plan_attack(data, attack)
    work = _Work.start(data, notes=[] if notes is None else notes, say=progress)
    work.intervals, work.known = intervals, list(known)
    work.identical = _identical(work, margin)
    _baselines(work, seed, margin=margin, options=options, with_pld=with_pld)
    _saved_parameters(work, params)
    learning = _Learning(margin, options, sample, blocks, jobs, scheduler)
    _learned_families(work, list(families), learning)
    work.attack = None if run_attack is None else _attack(work, run_attack)
    return work.measured()


def worst_of(
    baselines: dict[str, BaselineRow],
    rows: Sequence[FamilyRow],
    attack: dict | None,
    n_records: int,
    *,
    identical: int | None = None,
) -> WorstCase:
    """The worst case over the rows of a measurement (:func:`worst_case`'s rule).

    A family's count is at margin eps; AM and MD, which the families contain, are
    counted strictly and at that margin; PLD and the attack, in no family, are what they
    are. The ceilings are the learned families' bounds (a failed family has none, so
    nothing is bounded); with no learned family there is no ceiling but the number of
    records. ``identical``: the ceiling of identical records, which bounds them all."""
    at_margin = [(r.n_correct, r.family) for r in rows if r.n_correct is not None]
    strict = []
    for name, b in baselines.items():
        if b.n_correct is None:
            continue
        if b.n_correct_margin is not None:
            at_margin.append((b.n_correct_margin, name))
            strict.append((b.n_correct, name))
        else:
            at_margin.append((b.n_correct, name))
    if attack is not None:
        at_margin.append((attack["n_correct"], f"transparency attack ({attack['method']})"))
    learned = [r for r in rows if r.learned]
    return worst_case(
        at_margin, strict, [(r.bound, r.family) for r in learned] if learned else None, n_records, identical
    )


def stopped_row(family: str, history: list[dict], n_records: int) -> FamilyRow:
    """A family stopped by Ctrl-C: the interval its runs had reached (over ``history``,
    their certificates' events: the best verified count, the lowest proven ceiling; a
    race's runs report in turn), or no figure when it had none (not started)."""
    counted = [e for e in history if e.get("lower") is not None]
    best = max(counted, key=lambda e: e["lower"], default={})
    lowest = min(history, key=lambda e: e["upper"], default={})
    lower, upper = best.get("lower"), lowest.get("upper")
    last = history[-1] if history else {}
    return FamilyRow(
        family=family,
        source="learned",
        status=Status.INTERRUPTED,
        rate=None if lower is None else lower / n_records,
        n_correct=lower,
        bound=upper,
        bound_rate=None if upper is None else upper / n_records,
        seconds=float(last.get("seconds", 0.0)),
        lower_source=best.get("lower_source"),
        upper_source=lowest.get("upper_source"),
        history=list(history) or None,
    )


def stopped(measured: Measured) -> Interrupted:
    """Ctrl-C during or after a measurement: an :class:`~rlopt.exceptions.Interrupted`
    whose ``partial`` is the :class:`Measured` so far, its worst case over what finished
    (a stopped family's row holds the interval it reached: a verified lower end, a
    proven ceiling; one not started, none, so nothing is bounded)."""
    learned = [row for row in measured.families if row.learned]
    done = len(learned) - len(measured.stopped)
    return Interrupted(f"{done} of {len(learned)} families done", partial=measured)


@dataclass
class _Work:
    """What the steps of one measurement share and fill in: the pair, the per-record
    table, the baselines, the families' rows and parameters, and every parameter met
    so far (a lower end of the families that contain it)."""

    data: LinkageData
    records: pd.DataFrame
    notes: list[str]
    say: Callable[[str], None]
    baselines: dict[str, BaselineRow] = field(default_factory=dict)
    rows: list[FamilyRow] = field(default_factory=list)
    learned_params: dict = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    known: list = field(default_factory=list)  # (label, distance)
    intervals: Callable[[str, dict], None] | None = None
    histories: dict[str, list[dict]] = field(default_factory=dict)  # family: its events so far
    identical: int | None = None  # the ceiling of identical records (rlopt.linkage.identical)
    attack: AnyAttack | None = None

    @classmethod
    def start(cls, data: LinkageData, *, notes: list[str], say: Callable[[str], None] | None) -> _Work:
        ids = data.ids if data.ids is not None else np.arange(data.n_records)
        return cls(data, pd.DataFrame({"record": ids}), notes, say or (lambda message: None))

    @property
    def za(self) -> np.ndarray:
        return self.data.encoded.za

    @property
    def zb(self) -> np.ndarray:
        return self.data.encoded.zb

    def narrowed(self, family: str) -> Callable[[dict], None]:
        """The ``progress`` of a learner of ``family``: its events kept (the interval a
        Ctrl-C reports) and passed to ``intervals``."""

        def narrowed(event: dict) -> None:
            self.histories.setdefault(family, []).append(event)
            if self.intervals is not None:
                self.intervals(family, event)

        return narrowed

    @cached_property
    def frames(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The two files as frames on their columns (what a learner's ``fit`` takes)."""
        self.data.require_numeric("a parameter file learned on other columns")
        columns = list(self.data.columns)
        return pd.DataFrame(self.data.original, columns=columns), pd.DataFrame(
            self.data.masked, columns=columns
        )

    def interrupted(self, families: Sequence[str]) -> Interrupted:
        """Ctrl-C while the families were learned: the finished rows, and for each other
        family of ``families`` the interval its run had reached (:func:`stopped_row`)."""
        finished = {row.family for row in self.rows}
        n_records = self.data.n_records
        self.rows += [
            stopped_row(family, self.histories.get(family, []), n_records)
            for family in families
            if family not in finished
        ]
        order = {family: i for i, family in enumerate(families)}
        self.rows.sort(key=lambda row: order.get(row.family, -1))  # saved parameters first
        return stopped(self.measured())

    def measured(self) -> Measured:
        """What the steps have filled in, with its worst case (and the records some
        admissible parameter of some family re-identifies: ``at_risk_any``)."""
        data = self.data
        at_risk = [
            c for c in map(str, self.records.columns) if c.startswith("at_risk_") and c != "at_risk_any"
        ]
        if at_risk:
            self.records["at_risk_any"] = self.records[at_risk].any(axis=1)
        figures = None if self.attack is None else self.attack.to_dict()
        return Measured(
            data=data,
            baselines=self.baselines,
            families=self.rows,
            params=self.learned_params,
            records=self.records,
            attack=self.attack,
            worst=worst_of(self.baselines, self.rows, figures, data.n_records, identical=self.identical),
            notes=self.notes,
            failures=self.failures,
            identical=self.identical,
        )

    def sampled_ceiling(self) -> dict:
        """A sampled row's ceiling: that of identical records, where there is one."""
        if self.identical is None:
            return {}
        n_records = self.data.n_records
        return {
            "bound": self.identical,
            "bound_rate": self.identical / n_records,
            "upper_source": IDENTICAL_RECORDS,
        }

    def failed(self, family: str, why: str, *, where: str = "") -> None:
        """A family whose solve failed: a ``failed`` row, its reason kept and noted."""
        self.rows.append(FamilyRow(family=family, source="learned", status=Status.FAILED))
        self.failures[family] = why
        self.notes.append(f"{family} failed{where}: {why}")


def _identical(work: _Work, margin: float) -> int | None:
    """The ceiling of identical records (:mod:`rlopt.linkage.identical`), noted, where it
    holds (a margin > 0) and is below the number of records; else ``None``."""
    found = identical_records(work.za, work.zb)
    if margin <= 0 or found.ceiling >= found.n_records:
        return None
    work.notes.append(found.describe())
    return found.ceiling


def _attack(work: _Work, run_attack: AttackRun) -> AnyAttack:
    """The transparency attack, linked with the default baseline inside its candidate sets."""
    work.say("transparency attack")
    attacked = run_attack(DEFAULT_BASELINE)
    work.records["reid_attack"] = attacked.correct
    if isinstance(attacked, AttackResult):  # the fuzzy attack ranks posteriors, no candidate sets
        work.records["attack_candidates"] = attacked.candidates
    return attacked


def _baselines(work: _Work, seed: int, *, margin: float, options: SolverOptions, with_pld: bool) -> None:
    """AM, MD (undefined where the differences have no covariance) and PLD, counted exactly:
    AM and MD strictly and at the exact ``margin`` (as a family's verified count is), the
    count a family's ceiling bounds."""
    pld_fits = work.data.n_records <= PLD_MAX_RECORDS
    work.say(f"baselines ({', '.join(BASELINES)}{', pld' if with_pld and pld_fits else ''})")
    for name in BASELINES:
        try:
            baseline = resolve_distance(name, work.za, work.zb, work.data.columns)
        except InputError as exc:  # e.g. MD on a file whose differences have no covariance
            work.baselines[name] = BaselineRow(rate=None, n_correct=None, status=f"undefined: {exc}")
            continue
        linked, at_margin = recount(work.za, work.zb, baseline, margin=margin, tol=0.0)
        work.baselines[name] = BaselineRow(
            rate=linked.rate,
            n_correct=linked.n_correct,
            n_correct_margin=int(at_margin.sum()),
            status=Status.EXACT,
        )
        work.records[f"reid_{name}"] = linked.correct
        family = FAMILIES[name]
        if issubclass(family, BaselineFamily) and family.start_label is not None:
            work.known.append((family.start_label, baseline))
    if not with_pld:
        return
    if not pld_fits:
        work.baselines["pld"] = BaselineRow(
            rate=None,
            n_correct=None,
            status=f"not computed: its one-to-one assignment is cubic in the records "
            f"({work.data.n_records} > {PLD_MAX_RECORDS})",
        )
        return
    prob = pld(work.data, seed=seed, max_bytes=64 * 2**20)
    work.baselines["pld"] = BaselineRow(rate=prob.rate, n_correct=prob.n_correct, status=Status.EXACT)
    work.records["reid_pld"] = prob.correct


def _saved_parameters(work: _Work, params: Sequence[str | Path]) -> None:
    """Saved parameter files, evaluated on these files without solving."""
    for path in params:
        learner = LearnedDistanceLinkage.load_params(path)
        saved = learner.distance_
        assert saved is not None  # load_params always sets the distance
        work.say(f"applying saved parameters {path}")
        same_columns = tuple(learner.columns_) == work.data.columns
        linked = link_records(work.za, work.zb, saved) if same_columns else learner.link(*work.frames)
        label = f"{learner.family} ({Path(path).name})"
        work.rows.append(
            FamilyRow(
                family=label,
                source="saved parameters",
                status=Status.APPLIED,
                rate=linked.rate,
                n_correct=linked.n_correct,
            )
        )
        work.learned_params[label] = learner.params_
        work.records[f"reid_{label}"] = linked.correct
        if same_columns:
            work.known.append((f"saved parameters {Path(path).name}", saved))


@dataclass(frozen=True)
class _Learning:
    """How the families are learned: margin and solver options, on a ``sample`` or the
    whole file, with ``blocks``, in ``jobs`` workers or on a Dask ``scheduler``."""

    margin: float
    options: SolverOptions
    sample: np.ndarray | None = None
    blocks: BlockOptions | None = None
    jobs: int = 1
    scheduler: str | None = None

    @property
    def raced(self) -> bool:
        """Families side by side in workers (:mod:`rlopt.milp.racing.race`)."""
        return (self.jobs > 1 or self.scheduler is not None) and self.sample is None and self.blocks is None


def _learned_families(work: _Work, families: list[str], how: _Learning) -> None:
    """Each family learned, in order, from every parameter met so far (with block
    ceilings beside it on the whole file), or side by side in workers; a family whose
    solve fails is a ``failed`` row and the others are kept."""
    margin, options = how.margin, how.options
    try:
        if how.raced:
            _raced(work, families, how)
        elif how.sample is None:
            for family in families:
                _learned(work, family, margin=margin, options=options, blocks=how.blocks)
        else:
            for family in families:
                _learned_on_sample(work, family, how.sample, margin=margin, options=options)
    except KeyboardInterrupt:  # the baselines and the families finished stay
        raise work.interrupted(families) from None


def _learned(
    work: _Work, family: str, *, margin: float, options: SolverOptions, blocks: BlockOptions | None
) -> None:
    """``family`` learned on the whole file: its interval, parameter and records."""
    work.say(f"learning {family} (time limit {options.time_limit} s)")
    try:
        result, distance = learn(
            work.data,
            get_learned_family(family),
            margin=margin,
            options=options,
            known=work.known,
            progress=work.narrowed(family),
            blocks=blocks,
        )
    except (SolverError, RecountMismatchError) as exc:  # the other families' work stays
        work.failed(family, str(exc))
        return
    _learned_row(work, family, result, distance)


def _raced(work: _Work, families: list[str], how: _Learning) -> None:
    """The families side by side in ``how.jobs`` workers, spare ones racing the open
    families (:func:`rlopt.milp.racing.race.race`); each row kept as its family ends (a Ctrl-C
    keeps them), then the rows in the order given."""
    from rlopt.milp.racing.race import Raced, race

    def finished(raced: Raced) -> None:
        if raced.result is None:
            work.failed(raced.family, raced.error or "no run finished")
        else:
            _learned_row(work, raced.family, raced.result, raced.distance)

    race(
        work.data,
        families,
        margin=how.margin,
        options=how.options,
        jobs=how.jobs,
        scheduler=how.scheduler,
        known=work.known,
        progress=work.say,
        intervals=lambda family, event: work.narrowed(family)(event),
        finished=finished,
    )
    order = {family: i for i, family in enumerate(families)}
    work.rows.sort(key=lambda row: order.get(row.family, -1))
    # the record columns as one family after another adds them (_learned_row)
    learned = [c for f in families for c in (f"reid_{f}", f"at_risk_{f}") if c in work.records.columns]
    work.records = work.records[[c for c in work.records.columns if c not in learned] + learned]


def _learned_row(work: _Work, family: str, result: LearnResult, distance: Distance | None) -> None:
    """A learned family's row, parameter and per-record columns."""
    n_records = work.data.n_records
    work.rows.append(
        FamilyRow(
            family=family,
            source="learned",
            status=result.status,
            rate=result.rate,
            n_correct=result.n_correct_verified,
            bound=result.bound,
            bound_rate=None if result.bound is None else result.bound / n_records,
            gap=result.gap,
            seconds=result.seconds["total"],
            n_at_risk=result.n_at_risk,
            at_risk_exact=result.at_risk_exact,
            lower_source=result.lower_source,
            history=result.history,
            blocks=result.blocks,
            upper_source=result.history[-1]["upper_source"] if result.history else None,
        )
    )
    work.learned_params[family] = result.params
    if distance is not None:
        work.known.append((f"{family}'s best parameter", distance))
    correct = result.correct if result.correct is not None else np.zeros(n_records, dtype=bool)
    work.records[f"reid_{family}"] = correct
    if result.at_risk is not None:
        work.records[f"at_risk_{family}"] = result.at_risk


def _learned_on_sample(
    work: _Work, name: str, sample: np.ndarray, *, margin: float, options: SolverOptions
) -> None:
    """Learn ``name`` on the sample's records (standardised as in the whole file), then
    recount on the whole file every parameter of the family met so far that is admissible
    there; the best is the family's verified lower end on the file."""
    family = get_learned_family(name)
    n_records, columns = work.data.n_records, work.data.columns
    work.say(f"learning {name} on {sample.size} of {n_records} records (time limit {options.time_limit} s)")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)  # a recount mismatch on the sample: a note
            result, _ = learn(
                work.data.part(sample),
                family,
                margin=margin,
                options=options,
                on_mismatch="warn",
                known=work.known,
            )
    except SolverError as exc:
        work.failed(name, str(exc), where=" on the learning sample")
        return
    work.notes += [
        f"{name} on the learning sample: {w.message}"
        for w in caught
        if issubclass(w.category, RuntimeWarning)
    ]
    met = (
        []
        if result.params is None
        else [(f"{name} learned on the sample", family.theta_from_params(result.params, columns))]
    )
    best = _best_on_file(work, name, met)
    if best is None:
        work.rows.append(FamilyRow(family=name, source="learned", status=Status.FAILED))
        work.failures[name] = "no parameter met is admissible on the whole file"
        return
    label, linked, distance = best
    work.rows.append(
        FamilyRow(
            family=name,
            source="learned",
            status=Status.SAMPLED,
            rate=linked.rate,
            n_correct=linked.n_correct,
            seconds=result.seconds["total"],
            lower_source=label,
            **work.sampled_ceiling(),
            sample={
                "n_records": int(sample.size),
                "status": result.status,
                "n_correct": result.n_correct_verified,
                "bound": result.bound,
            },
        )
    )
    work.learned_params[name] = distance.params()
    work.known.append((f"{name}'s best parameter", distance))
    work.records[f"reid_{name}"] = linked.correct


def _best_on_file(work: _Work, name: str, met: list) -> tuple[str, LinkageResult, Distance] | None:
    """The best of ``met`` (``(label, theta)`` of family ``name``), the neutral start and
    every parameter met so far that the family contains, each recounted on the whole
    file; ``None`` when none is admissible there."""
    family, columns = get_learned_family(name), work.data.columns
    met = [*met, ("neutral start (AM)", family.neutral(len(columns)))]
    met += [
        (label, theta) for label, d in work.known if (theta := embed(d, family, len(columns))) is not None
    ]
    work.say(f"recounting {len(met)} parameter(s) of {name} on all {work.data.n_records} records")
    best = None
    for label, theta in met:
        if not family.is_admissible(theta, work.za, work.zb):
            work.notes.append(f"{name}: {label} is not admissible on the whole file; not counted")
            continue
        distance = family.distance(theta, columns)
        linked = link_records(work.za, work.zb, distance)
        if best is None or linked.n_correct > best[1].n_correct:
            best = (label, linked, distance)
    return best
