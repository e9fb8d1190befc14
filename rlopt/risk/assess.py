"""The worst-case re-identification risk of a user's own pair of files: every
figure of the risk report, computed once (the typed rows are in :mod:`rlopt.risk.figures`)."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import platform
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from importlib.metadata import version
from numbers import Integral
from pathlib import Path

import numpy as np
import pandas as pd

from rlopt.attacks import AttackResult, FuzzyAttackResult, PramAttackResult, attack_for, plan_attack
from rlopt.attacks.registry import AttackRun
from rlopt.data import KindSpec, LinkageData, validate_pair
from rlopt.exceptions import InputError, Interrupted, SolverError
from rlopt.families import (
    BASELINES,
    DEFAULT_BASELINE,
    FAMILIES,
    BaselineFamily,
    family_of,
    get_learned_family,
    learned_families,
)
from rlopt.families.containment import embed
from rlopt.learn import LearnedDistanceLinkage, RecountMismatchError, learn, recount
from rlopt.linkage import link_records
from rlopt.linkage.distance_based import resolve_distance
from rlopt.linkage.probabilistic import (
    PLD_MAX_RECORDS,
    pld,
)
from rlopt.masking import MaskingSpec, masking_spec
from rlopt.milp import SolverOptions
from rlopt.milp.certificate import BlockOptions
from rlopt.milp.reductions import Reductions
from rlopt.risk.figures import BaselineRow, FamilyRow, Headline, RiskAssessment
from rlopt.risk.measures import information_loss, interval_disclosure
from rlopt.risk.worst_case import worst_case
from rlopt.status import Status
from rlopt.validation import MARGIN, PERCENTAGE, SEED, Interval, Options, validate_params

__all__ = ["assess_risk", "DEFAULT_FAMILIES"]

DEFAULT_FAMILIES = ("wm", "owa", "ci", "sb")

LEARN_WHOLE_RECORDS = 5000
"""Up to this many records the families are learned on the whole file; above, on a
sample of :data:`LEARN_SAMPLE_RECORDS` (unless ``learn_sample`` says otherwise)."""

LEARN_SAMPLE_RECORDS = 2000
"""The learning sample of a file above :data:`LEARN_WHOLE_RECORDS` records."""


DEFAULT_CI_ATTRIBUTES = 12
"""Above this many attributes the default families take ``ci_k`` (2-additive, a lower
end for ci) in place of ``ci``: on the 13-attribute Census file ci's full measure
needed 7.2 GB and reached nothing beyond the AM start in 600 s, ci_k reached 792
of 1080 in 60 s with 0.9 GB (docs/method.md)."""


def _generalisation(
    data: LinkageData, family: str, *, folds: int, seed: int, margin: float, options: SolverOptions
) -> dict:
    """k-fold: learn on the other folds' records, link each held-out masked record
    against the whole original file; both files standardised as a whole. A fold whose
    solve fails is said in its entry and its records are not assessed; the rate is over
    the assessed records."""
    za, zb = data.standardised()
    order = np.random.default_rng(seed).permutation(data.n_records)
    held = np.zeros(data.n_records, dtype=bool)
    assessed = np.zeros(data.n_records, dtype=bool)
    per_fold: list[dict] = []
    for k, test in enumerate(np.array_split(order, folds)):
        train = np.setdiff1d(order, test)
        part = LinkageData(zb[train], za[train], data.columns)
        fold = {"fold": k, "n_train": len(train), "n_test": len(test)}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)
            # a fold needs a verified parameter, not a proof: a recount that contradicts the
            # solver's bound is said in the fold's note instead of stopping the assessment
            try:
                result, distance = learn(
                    part,
                    get_learned_family(family),
                    margin=margin,
                    options=options,
                    reductions=Reductions(),
                    standardised=True,
                    on_mismatch="warn",
                )
            except SolverError as exc:  # the other folds' work stays
                failed = {"train_rate": None, "train_status": Status.FAILED, "test_rate": None}
                per_fold.append(fold | failed | {"note": str(exc)})
                continue
        mismatches = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        for w in caught:  # the others as they were
            if not issubclass(w.category, RuntimeWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        # the held-out originals first, so that row r's own original is column r
        correct = (
            np.zeros(len(test), dtype=bool)
            if distance is None
            else link_records(za[test], zb[np.concatenate([test, train])], distance).correct
        )
        held[test] = correct
        assessed[test] = True
        per_fold.append(
            fold
            | {
                "train_rate": result.rate,
                "train_status": result.status,
                "test_rate": float(correct.mean()),
                **({"note": "; ".join(mismatches)} if mismatches else {}),
            }
        )
    return {
        "family": family,
        "folds": folds,
        "seed": seed,
        "rate": float(held[assessed].mean()) if assessed.any() else None,
        "n_correct": int(held.sum()),
        "n_assessed": int(assessed.sum()),
        "per_fold": per_fold,
    }


def published_masking(attack: dict | MaskingSpec) -> MaskingSpec:
    """The published masking of a transparency attack as a validated spec: a spec, or a
    dict ``{"method": name or alias, **parameters}`` (groups as ``(columns, size)``
    pairs or dicts)."""
    if not isinstance(attack, dict):
        return attack
    fields = dict(attack)
    method = fields.pop("method", None)
    if method is None:
        raise InputError(f"attack={attack!r}; expected a 'method' (a masking method name)")
    return masking_spec(attack_for(method).masking, **fields)


@validate_params(
    {
        "margin": [MARGIN],
        "folds": [Options((0,)), Interval(Integral, 2, note="0: no generalisation")],
        "interval_p": [PERCENTAGE],
        "learn_sample": [Interval(Integral, 2, note="records; CLI --learn-sample"), None],
        "seed": [SEED],
    }
)
def assess_risk(
    original,
    masked,
    *,
    families: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    id_column: str | None = None,
    margin: float = 1e-5,
    time_limit: float | None = 60.0,
    threads: int | None = 1,
    params: Sequence[str | Path] = (),
    attack: dict | MaskingSpec | None = None,
    folds: int = 5,
    generalisation_families: Sequence[str] = ("wm",),
    seed: int = 0,
    interval_p: float = 10.0,
    tradeoff: pd.DataFrame | Callable | None = None,
    names: tuple[str, str] = ("original", "masked"),
    progress: Callable[[str], None] | None = None,
    kinds: KindSpec | dict | None = None,
    learn_sample: int | None = None,
    intervals: Callable[[str, dict], None] | None = None,
    blocks: BlockOptions | dict | None = None,
) -> RiskAssessment:
    """Everything a disclosure-control officer asks before publishing ``masked``.

    Parameters
    ----------
    original, masked : DataFrame or array-like, aligned record by record (or by ``id_column``)
    families : sequence of str, default=None
        Learned families (``docs/method.md``, section 5) whose worst case is computed by MILP,
        learned smallest first (wm before ci and sb, whose lower end starts from
        wm's optimum). ``None``: :data:`DEFAULT_FAMILIES`, leaving out (with a
        note) those the file does not suit, and ``ci_k`` (a lower end for ci) in
        place of ``ci`` above :data:`DEFAULT_CI_ATTRIBUTES` attributes; a family
        named explicitly that does not suit the file is an error before any solving.
    margin, time_limit, threads
        Per family; a family stopped by the time limit is reported as an interval.
    params : sequence of paths
        Previously learned parameter files (``rlopt learn --params-out``): evaluated
        on these files without solving.
    attack : dict or masking spec, default=None
        The published masking, for the transparency attack of
        :data:`rlopt.attacks.ATTACKS`: ``{"method": "rank_swap", "p": 10}`` (or
        ``"window"``), ``{"method": "mdav", "k": 3}`` (or ``"groups"``), or a spec of
        :func:`rlopt.masking.masking_spec`; method aliases are accepted.
    folds, generalisation_families, seed
        k-fold generalisation (0 folds: skipped).
    interval_p : float
        Width (%) of the interval disclosure measures.
    tradeoff : DataFrame or callable, default=None
        A :func:`rlopt.risk.risk_utility` table to include, or the call returned by
        :func:`rlopt.risk.tradeoff_plan` (run after every other figure, with
        ``progress``; its options were checked when it was planned).
    names : (str, str)
        The file names shown in the report.
    kinds : KindSpec or dict, default=None
        Declared ordinal and nominal attributes and the policy for categorical
        blanks (:func:`rlopt.data.validate_pair`); the kinds are stated in the report.
    learn_sample : int, default=None
        Learn the families on this many records drawn with ``seed`` (the whole file
        when it has no more), then recount every admissible parameter met on the
        whole file: each family's row is then a verified lower end ("at least X of
        N", status ``sampled``) with no ceiling, since a bound proven on a sample
        bounds nothing on the file. ``None``: the whole file up to
        :data:`LEARN_WHOLE_RECORDS` records, a sample of :data:`LEARN_SAMPLE_RECORDS`
        above. The generalisation folds then run on the sample.
    progress, intervals : callables, default=None
        ``progress(message)`` before each step; ``intervals(family, event)`` each time
        a family's interval narrows while it is learned (the events of
        :class:`rlopt.milp.certificate.Certificate`, as ``rlopt learn --progress`` prints).
    blocks : BlockOptions or dict, default=None
        Block ceilings proven beside each family's solve on the whole file
        (:mod:`rlopt.milp.beside`; CLI ``--blocks SIZE``); each family's row holds their
        certificate. Not used on a learning sample (a ceiling there bounds nothing on
        the file; a note says so).
    """
    # (over 60 lines only by its 18 documented parameters: the body is the steps below)
    explicit = families is not None
    families = _learned_names(
        DEFAULT_FAMILIES if families is None else families, "families (CLI: --families)"
    )
    generalisation_families = _learned_names(
        generalisation_families, "generalisation_families (CLI: --generalisation)"
    )
    options = SolverOptions(time_limit=time_limit, threads=threads)  # checked before any work
    blocks = BlockOptions.coerce(blocks)
    published = None if attack is None else published_masking(attack)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = validate_pair(original, masked, columns=columns, id_column=id_column, kinds=kinds)
    work = _Work.start(data, notes=[str(w.message) for w in caught], say=progress)
    work.intervals = intervals
    work.kind_spec = KindSpec.coerce(kinds)
    families = _suited(families, explicit, data, work.notes)  # every limit before the first solve
    for name in generalisation_families if folds else ():
        get_learned_family(name).check_attributes(data.n_attributes)
    if folds and folds > data.n_records:
        raise InputError(f"folds={folds} for {data.n_records} records; expected at most {data.n_records}")
    run_attack = None if published is None else plan_attack(data, published)
    sample = _learning_sample(data.n_records, learn_sample, seed)
    if sample is not None:
        work.notes.append(
            f"the families were learned on {sample.size} of {data.n_records} records (seed {seed}) and every "
            "admissible parameter met was recounted on the whole file: their figures are verified lower "
            "ends (at least X of N re-identified), with no ceiling"
        )
        if blocks is not None:
            work.notes.append("no block ceilings: the families were learned on a sample")

    _baselines(work, seed, margin=margin, options=options)
    _saved_parameters(work, params)
    _learned_families(work, families, margin=margin, options=options, sample=sample, blocks=blocks)
    attacked = None if run_attack is None else work.attack(run_attack)
    generalisation = [
        work.generalisation(
            family,
            folds=folds,
            seed=seed,
            margin=margin,
            options=options,
            n_families=len(families),
            sample=sample,
        )
        for family in (generalisation_families if folds else ())
    ]
    inputs = {
        "original": names[0],
        "masked": names[1],
        "columns": list(data.columns),
        "kinds": [kind.to_dict() for kind in data.kinds],
        "kinds_described": data.describe_kinds(),
        "n_records": data.n_records,
        "n_attributes": data.n_attributes,
        "margin": margin,
        "time_limit": time_limit,
        "threads": threads,
        "families": list(families),
        "params_files": [str(p) for p in params],
        "attack": None if published is None else published.model_dump(),
        "folds": folds,
        "seed": seed,
        "interval_p": interval_p,
        "learn_sample": None if sample is None else int(sample.size),
        "blocks": None if blocks is None or sample is not None else dataclasses.asdict(blocks),
    }
    if callable(tradeoff):
        work.say("risk-utility trade-off")
    tradeoff_table = tradeoff(work.say, work.intervals) if callable(tradeoff) else tradeoff
    return work.assessment(inputs, attacked, generalisation, interval_p, tradeoff_table)


def _suited(families: list[str], explicit: bool, data: LinkageData, notes: list[str]) -> list[str]:
    """The families checked against the file's width before the first solve (no
    finished work is lost to a later one): an explicit one that does not suit is an
    error, a default one is left out with a note; ci_k in place of a default ci on
    wide files."""
    if not explicit and "ci" in families and data.n_attributes > DEFAULT_CI_ATTRIBUTES:
        families = _learned_names([f for f in families if f != "ci"] + ["ci_k"], "families")
        notes.append(
            f"ci_k (2-additive measures: a lower end for ci) in place of ci in the default "
            f"families: ci's full measure on {data.n_attributes} attributes has "
            f"{2**data.n_attributes - 2} parameters; name ci in --families to learn it"
        )
    for name in list(families):
        try:
            get_learned_family(name).check_attributes(data.n_attributes)
        except InputError as exc:
            if explicit:
                raise
            families.remove(name)
            notes.append(f"{name} left out of the default families: {exc}")
    return families


@dataclass
class _Work:
    """What the steps of one assessment share and fill in: the files, the per-record
    table, the baselines, the families' rows and parameters, and every parameter met
    so far (a lower end of the families that contain it)."""

    data: LinkageData
    za: np.ndarray
    zb: np.ndarray
    records: pd.DataFrame
    notes: list[str]
    say: Callable[[str], None]
    baselines: dict[str, BaselineRow] = field(default_factory=dict)
    kind_spec: KindSpec = field(default_factory=KindSpec)
    rows: list[FamilyRow] = field(default_factory=list)
    learned_params: dict = field(default_factory=dict)
    known: list = field(default_factory=list)  # (label, distance)
    intervals: Callable[[str, dict], None] | None = None
    last_interval: dict[str, dict] = field(default_factory=dict)  # family: its latest event

    @classmethod
    def start(cls, data: LinkageData, *, notes: list[str], say: Callable[[str], None] | None) -> _Work:
        ids = data.ids if data.ids is not None else np.arange(data.n_records)
        return cls(
            data,
            *data.standardised(),
            pd.DataFrame({"record": ids}),
            notes,
            say or (lambda message: None),
        )

    def narrowed(self, family: str) -> Callable[[dict], None]:
        """The ``progress`` of a learner of ``family``: its events kept (the interval a
        Ctrl-C reports) and passed to ``intervals``."""

        def narrowed(event: dict) -> None:
            self.last_interval[family] = event
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

    def interrupted(self, exc: KeyboardInterrupt, n_families: int) -> Interrupted:
        """Ctrl-C: what is finished, and the interrupted family's interval if any."""
        done = sum(row.learned for row in self.rows)
        finished = {row.family for row in self.rows}
        reached = {
            f: e for f, e in self.last_interval.items() if f not in finished and e["lower"] is not None
        }
        return Interrupted(
            f"{done} of {n_families} families done",
            partial={
                "baselines": self.baselines,
                "families": self.rows,
                "interrupted": getattr(exc, "partial", None),
                # the interval each unfinished family had reached (its certificate's last
                # event: a verified lower end, a proven ceiling) when no result was made
                "reached": reached,
            },
        )

    def attack(self, run_attack: AttackRun) -> AttackResult | FuzzyAttackResult | PramAttackResult:
        self.say("transparency attack")
        attacked = run_attack(DEFAULT_BASELINE)
        self.records["reid_attack"] = attacked.correct
        if isinstance(attacked, AttackResult):  # the fuzzy attack ranks posteriors, no candidate sets
            self.records["attack_candidates"] = attacked.candidates
        return attacked

    def generalisation(
        self,
        family: str,
        *,
        folds: int,
        seed: int,
        margin: float,
        options: SolverOptions,
        n_families: int,
        sample: np.ndarray | None = None,
    ) -> dict:
        data = self.data if sample is None else self.data.records(sample)
        self.say(
            f"generalisation: {folds}-fold {family}"
            + ("" if sample is None else f" on the {sample.size}-record sample")
        )
        try:
            out = _generalisation(data, family, folds=folds, seed=seed, margin=margin, options=options)
            return out if sample is None else out | {"on_sample": int(sample.size)}
        except KeyboardInterrupt:
            raise self.interrupted(KeyboardInterrupt(), n_families) from None

    def assessment(
        self,
        inputs: dict,
        attacked: AttackResult | FuzzyAttackResult | PramAttackResult | None,
        generalisation: list,
        interval_p: float,
        tradeoff_table: pd.DataFrame | None,
    ) -> RiskAssessment:
        records, summary = _records_table(self.records, self.rows)
        attack_figures = None if attacked is None else attacked.to_dict()
        return RiskAssessment(
            inputs={
                **inputs,
                "notes": self.notes,
                "versions": _versions(),
                "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            },
            headline=_headline(
                self.baselines,
                self.rows,
                attack_figures,
                self.data.n_records,
                _failed_parts(generalisation, tradeoff_table),
            ),
            baselines=self.baselines,
            families=self.rows,
            params=self.learned_params,
            shapley=self.shapley(),
            attack=attack_figures,
            generalisation=generalisation,
            interval_disclosure=interval_disclosure(self.data, p=interval_p).to_dict(orient="records"),
            information_loss=information_loss(self.data),
            records_summary=summary,
            tradeoff=None if tradeoff_table is None else tradeoff_table.to_dict(orient="records"),
            records=records,
        )

    def shapley(self) -> dict[str, dict[str, float]]:
        """The Shapley values of each parameter that is a fuzzy measure (the Choquet
        families'), as its family computes them, by the parameter's label."""
        out = {}
        for label, params in self.learned_params.items():
            family = family_of(params, label) if params else None
            values = None if family is None else family.shapley_values(params, self.data.columns)
            if values is not None:
                out[label] = values
        return out


def _versions() -> dict:
    return {
        "rlopt": version("rlopt"),
        "highspy": version("highspy"),
        "pyomo": version("pyomo"),
        "python": platform.python_version(),
    }


def _baselines(work: _Work, seed: int, *, margin: float, options: SolverOptions) -> None:
    """AM, MD (undefined where the differences have no covariance) and PLD, counted exactly:
    AM and MD strictly and at ``margin`` (with the recount's tolerance of a family's
    parameter), the count a family's ceiling bounds."""
    with_pld = work.data.n_records <= PLD_MAX_RECORDS
    work.say(f"baselines ({', '.join(BASELINES)}{', pld' if with_pld else ''})")
    for name in BASELINES:
        try:
            baseline = resolve_distance(name, work.za, work.zb, work.data.columns)
        except InputError as exc:  # e.g. MD on a file whose differences have no covariance
            work.baselines[name] = BaselineRow(rate=None, n_correct=None, status=f"undefined: {exc}")
            continue
        linked, at_margin = recount(work.za, work.zb, baseline, margin=margin, tol=options.recount_tol)
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


def _learning_sample(n_records: int, learn_sample: int | None, seed: int) -> np.ndarray | None:
    """The records the families are learned on (sorted), or None for the whole file."""
    size = (
        (LEARN_SAMPLE_RECORDS if n_records > LEARN_WHOLE_RECORDS else n_records)
        if learn_sample is None
        else learn_sample
    )
    if size >= n_records:
        return None
    return np.sort(np.random.default_rng(seed).choice(n_records, size=size, replace=False))


def _learned_families(
    work: _Work,
    families: list[str],
    *,
    margin: float,
    options: SolverOptions,
    sample: np.ndarray | None,
    blocks: BlockOptions | None = None,
) -> None:
    """Each family learned, smallest first, from every parameter met so far (with block
    ceilings beside it on the whole file); a family whose solve fails is a ``failed``
    row and the others are kept."""
    if sample is not None:
        try:
            for family in families:
                _learned_on_sample(work, family, sample, margin=margin, options=options)
        except KeyboardInterrupt as exc:  # the baselines and the families finished stay
            raise work.interrupted(exc, len(families)) from None
        return
    n_records = work.data.n_records
    time_limit, threads = options.time_limit, options.threads
    for family in families:
        work.say(f"learning {family} (time limit {time_limit} s)")
        learner = LearnedDistanceLinkage(
            family, margin=margin, time_limit=time_limit, threads=threads, blocks=blocks
        )
        try:
            learner.fit(work.data, kinds=work.kind_spec, known=work.known, progress=work.narrowed(family))
        except KeyboardInterrupt as exc:  # with the interrupted family's interval, if any
            raise work.interrupted(exc, len(families)) from None
        except (SolverError, RecountMismatchError) as exc:  # the other families' work stays
            work.rows.append(FamilyRow(family=family, source="learned", status=Status.FAILED))
            work.notes.append(f"{family} failed: {exc}")
            continue
        result = learner.result_
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
            )
        )
        work.learned_params[family] = result.params
        if learner.distance_ is not None:
            work.known.append((f"{family}'s best parameter", learner.distance_))
        correct = result.correct if result.correct is not None else np.zeros(n_records, dtype=bool)
        work.records[f"reid_{family}"] = correct
        if result.at_risk is not None:
            work.records[f"at_risk_{family}"] = result.at_risk
    at_risk = [c for c in map(str, work.records.columns) if c.startswith("at_risk_")]
    if at_risk:
        work.records["at_risk_any"] = work.records[at_risk].any(axis=1)


def _learned_on_sample(
    work: _Work, name: str, sample: np.ndarray, *, margin: float, options: SolverOptions
) -> None:
    """Learn ``name`` on the sample's records (standardised as in the whole file), then
    recount on the whole file every parameter of the family met so far that is admissible
    there; the best is the family's verified lower end on the file."""
    family = get_learned_family(name)
    n_records, columns = work.data.n_records, work.data.columns
    work.say(f"learning {name} on {sample.size} of {n_records} records (time limit {options.time_limit} s)")
    part = LinkageData(work.zb[sample], work.za[sample], columns)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)  # a recount mismatch on the sample: a note
            result, _ = learn(
                part,
                family,
                margin=margin,
                options=options,
                standardised=True,
                on_mismatch="warn",
                known=work.known,
            )
    except SolverError as exc:
        work.rows.append(FamilyRow(family=name, source="learned", status=Status.FAILED))
        work.notes.append(f"{name} failed on the learning sample: {exc}")
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
    met.append(("neutral start (AM)", family.neutral(len(columns))))
    met += [
        (label, theta) for label, d in work.known if (theta := embed(d, family, len(columns))) is not None
    ]
    work.say(f"recounting {len(met)} parameter(s) of {name} on all {n_records} records")
    best = None
    for label, theta in met:
        if not family.is_admissible(theta, work.za, work.zb):
            work.notes.append(f"{name}: {label} is not admissible on the whole file; not counted")
            continue
        distance = family.distance(theta, columns)
        linked = link_records(work.za, work.zb, distance)
        if best is None or linked.n_correct > best[1].n_correct:
            best = (label, linked, distance, theta)
    if best is None:
        work.rows.append(FamilyRow(family=name, source="learned", status=Status.FAILED))
        return
    label, linked, distance, theta = best
    work.rows.append(
        FamilyRow(
            family=name,
            source="learned",
            status=Status.SAMPLED,
            rate=linked.rate,
            n_correct=linked.n_correct,
            seconds=result.seconds["total"],
            lower_source=label,
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


def _records_table(records: pd.DataFrame, rows: list[FamilyRow]) -> tuple[pd.DataFrame, dict]:
    """The per-record table in report order, and its column sums."""
    at_risk_columns = [
        c for c in map(str, records.columns) if c.startswith("at_risk_") and c != "at_risk_any"
    ]
    reid_columns = [c for c in map(str, records.columns) if c.startswith("reid_")]
    learned_reid = [f"reid_{r.family}" for r in rows if f"reid_{r.family}" in records]
    records["n_families"] = records[learned_reid].sum(axis=1) if learned_reid else 0
    first = ["record", "n_families"] + reid_columns
    records = records[first + [c for c in records if c not in first]]
    summed = reid_columns + at_risk_columns + (["at_risk_any"] if at_risk_columns else [])
    summary = {
        **{c: int(records[c].sum()) for c in summed},
        "by_every_method": int(records[reid_columns].all(axis=1).sum()),
        "by_no_method": int((~records[reid_columns].any(axis=1)).sum()),
        "at_risk_but_by_no_optimum": (
            int((records["at_risk_any"] & (records["n_families"] == 0)).sum()) if at_risk_columns else None
        ),
    }
    return records, summary


def _learned_names(names: Sequence[str], option: str) -> list[str]:
    """Learned family names, checked, without repeats, smallest family first
    (the registry's order: a family's optimum is a start of those containing it)."""
    if isinstance(names, str):
        names = [names]
    order = learned_families()
    unknown = [f for f in names if f not in order]
    if unknown:
        raise InputError(f"{option}: family name(s) {unknown}; expected learned families from {list(order)}")
    return sorted(set(names), key=order.index)


def _failed_parts(generalisation: list[dict], tradeoff_table: pd.DataFrame | None) -> list[str]:
    """The generalisation folds and trade-off cells that failed, named for a reader."""
    failed = [
        f"{g['family']} generalisation fold {fold['fold']}"
        for g in generalisation
        for fold in g["per_fold"]
        if fold.get("train_status") == Status.FAILED
    ]
    if tradeoff_table is not None and "status" in tradeoff_table:
        failed += [
            f"trade-off {row['family']} at {row['parameter']}={row['value']:g}"
            for row in tradeoff_table.to_dict(orient="records")
            if row["status"] == Status.FAILED
        ]
    return failed


def _incomplete_text(failed: Sequence[str], families_failed: bool) -> str | None:
    """The words a reader sees first when part of a run failed (``None`` when none did)."""
    if not failed:
        return None
    consequence = (
        "the worst case may be higher" if families_failed else "the figures shown are over what was assessed"
    )
    return f"incomplete: {', '.join(failed)} failed — {consequence}"


def _headline(
    baselines: dict[str, BaselineRow],
    rows: list[FamilyRow],
    attack: dict | None,
    n_records: int,
    failed_elsewhere: list[str],
) -> Headline:
    """The worst case over everything the run measured.

    Its lower end is the largest count of any baseline (AM, MD, PLD), family,
    saved parameter or transparency attack: each is achieved exactly by some
    intruder. Its upper end is the largest ceiling of the families, which bounds
    counts at margin eps; the worst case is proven when the lower end is a count at
    margin eps (a family's, a baseline's at that margin, or the attack's) equal to it:
    over the families assessed and the methods beside them, no intruder does better by
    that margin. A baseline's strict count above the ceiling leaves no ceiling (its
    extra records are nearer than the margin).
    A family that failed has no bound, so a headline with one is never proven; it
    and every failed fold or trade-off cell are named in ``failed`` and ``incomplete``.
    """
    families_failed = [r.family for r in rows if r.status == Status.FAILED]
    failed = (*families_failed, *failed_elsewhere)
    incomplete = _incomplete_text(failed, bool(families_failed))
    learned = [r for r in rows if r.learned]
    if not learned and attack is None:
        return Headline(rate=None, status=Status.NONE, source=None, failed=failed, incomplete=incomplete)
    # a family's count is at margin eps; AM and MD, which the families contain, are counted
    # strictly and at that margin; PLD and the attack, in no family, are what they are
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
    worst = worst_case(
        at_margin, strict, [(r.bound, r.family) for r in learned] if learned else None, n_records
    )
    return Headline.of(worst, failed=failed, incomplete=incomplete)
