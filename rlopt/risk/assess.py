"""The worst-case re-identification risk of a user's own pair of files: validate the
pair, measure its worst case (:func:`rlopt.risk.pair.measure`, the routine every
command calls), then the generalisation, the utility measures and the report's typed
rows (:mod:`rlopt.risk.figures`)."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import platform
import warnings
from collections.abc import Callable, Sequence
from importlib.metadata import version
from numbers import Integral
from pathlib import Path

import numpy as np
import pandas as pd

from rlopt.attacks import attack_for
from rlopt.data import KindSpec, LinkageData, validate_pair
from rlopt.exceptions import InputError, Interrupted
from rlopt.families import family_of, get_learned_family, learned_families
from rlopt.masking import MaskingSpec, masking_spec
from rlopt.milp import SolverOptions
from rlopt.milp.ceilings.certificate import BlockOptions
from rlopt.risk.drivers import attribute_drivers, check_drivers, drivers_limit
from rlopt.risk.figures import BaselineRow, FamilyRow, Headline, RiskAssessment
from rlopt.risk.generalisation import k_fold_generalisation
from rlopt.risk.measures import information_loss, interval_disclosure
from rlopt.risk.pair import Measured, measure, worst_of
from rlopt.risk.threshold import Threshold, decide
from rlopt.status import Status
from rlopt.validation import (
    JOBS,
    MARGIN,
    PERCENTAGE,
    SEED,
    TIME_LIMIT,
    Interval,
    Options,
    check_params,
    validate_params,
)

__all__ = ["assess_risk", "default_families", "DEFAULT_FAMILIES"]

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


# (over 60 lines only by its 20 documented parameters: the body is the steps below)
@validate_params(
    {
        "margin": [MARGIN],
        "folds": [Options((0,)), Interval(Integral, 2, note="0: no generalisation")],
        "interval_p": [PERCENTAGE],
        "learn_sample": [Interval(Integral, 2, note="records; CLI --learn-sample"), None],
        "seed": [SEED],
        "drivers": [Options((True, False))],
        "drivers_time_limit": [TIME_LIMIT, None],
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
    n_jobs: int = 1,
    scheduler: str | None = None,
    drivers: bool = False,
    drivers_time_limit: float | None = None,
    threshold: str | float | Threshold | None = None,
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
        N", status ``sampled``) whose only ceiling is that of identical records
        (:mod:`rlopt.linkage.identical`, proven on the whole file without a solver),
        since a bound proven on a sample bounds nothing on the file. ``None``: the whole file up to
        :data:`LEARN_WHOLE_RECORDS` records, a sample of :data:`LEARN_SAMPLE_RECORDS`
        above. The generalisation folds then run on the sample.
    progress, intervals : callables, default=None
        ``progress(message)`` before each step; ``intervals(family, event)`` each time
        a family's interval narrows while it is learned (the events of
        :class:`rlopt.milp.ceilings.certificate.Certificate`, as ``rlopt learn --progress`` prints).
    blocks : BlockOptions or dict, default=None
        Block ceilings proven beside each family's solve on the whole file
        (:mod:`rlopt.milp.ceilings.blocks`; CLI ``--blocks SIZE``); each family's row holds their
        certificate. Not used on a learning sample (a ceiling there bounds nothing on
        the file; a note says so).
    n_jobs, scheduler : int, str, default=1, None
        Worker processes (CLI ``--jobs``), or a Dask scheduler's address, for the
        families: side by side, spare workers racing the open ones with other seeds
        (:mod:`rlopt.milp.racing.race`). A proven figure is the same for every ``n_jobs``; an
        interval at a time limit may narrow with it. With ``blocks`` the blocks have the
        workers and the families run one after another.
    drivers : bool, default=False
        Which attribute carries the risk (CLI ``--drivers``): the families measured again
        without each attribute, the attributes ranked by how far the worst case drops,
        what the parameters say of each attribute and which records every method
        re-identifies (:func:`rlopt.risk.drivers.attribute_drivers`; on
        :attr:`RiskAssessment.drivers`). A file of one attribute has none: an error
        before any solve.
    drivers_time_limit : float, default=None
        Each family's time limit without one attribute (CLI ``--drivers-limit``); ``None``: ``time_limit`` over the
        number of attributes, at least 1 s (:func:`rlopt.risk.drivers.drivers_limit`).
    threshold : str, float or Threshold, default=None
        The officer's threshold (CLI ``--threshold``): ``"5%"``, ``0.05`` or ``"20 records"``
        (:class:`rlopt.risk.threshold.Threshold`). Each family stops as soon as its interval
        answers it (a verified count reaches it, or a proven ceiling falls below it; status
        ``decided``), and :attr:`RiskAssessment.decision` says whether the file passes, fails
        or is undecided. On a learning sample the families run to their limit (a count on
        the sample answers nothing of the file).

    Raises
    ------
    Interrupted
        On Ctrl-C once the baselines are counted: its ``partial`` is the
        :class:`RiskAssessment` of what finished (each stopped family with the interval
        it had reached, the headline ``interrupted`` over them, :attr:`~RiskAssessment.stopped`
        naming what did not finish), written by ``rlopt risk`` as any run's figures.
    """
    explicit = families is not None
    families = _learned_names(
        DEFAULT_FAMILIES if families is None else families, "families (CLI: --families)"
    )
    generalisation_families = _learned_names(
        generalisation_families, "generalisation_families (CLI: --generalisation)"
    )
    options = SolverOptions(time_limit=time_limit, threads=threads)  # checked before any work
    threshold = None if threshold is None else Threshold.parse(threshold)
    check_params({"n_jobs": n_jobs}, {"n_jobs": [JOBS]})
    blocks = BlockOptions.coerce(blocks)
    published = None if attack is None else published_masking(attack)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = validate_pair(original, masked, columns=columns, id_column=id_column, kinds=kinds)
    notes = [str(w.message) for w in caught]
    say = progress or (lambda message: None)
    families = _suited(families, explicit, data, notes)  # every limit before the first solve
    if drivers:
        check_drivers(data, families)
        drivers_time_limit = drivers_time_limit or drivers_limit(time_limit, data.n_attributes)
    for name in generalisation_families if folds else ():
        get_learned_family(name).check_attributes(data.n_attributes)
    if folds and folds > data.n_records:
        raise InputError(f"folds={folds} for {data.n_records} records; expected at most {data.n_records}")
    sample = _learning_sample(data.n_records, learn_sample, seed)
    target = None if threshold is None else threshold.records(data.n_records)
    if sample is not None:
        notes.append(
            f"the families were learned on {sample.size} of {data.n_records} records (seed {seed}) and every "
            "admissible parameter met was recounted on the whole file: their figures are verified lower "
            "ends (at least X of N re-identified); a ceiling proven on the sample bounds nothing on the "
            "file, so their only ceiling is that of identical records, where there is one"
        )
        if blocks is not None:
            notes.append("no block ceilings: the families were learned on a sample")
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
        "n_jobs": n_jobs,
        "families": list(families),
        "params_files": [str(p) for p in params],
        "attack": None if published is None else published.model_dump(),
        "folds": folds,
        "seed": seed,
        "interval_p": interval_p,
        "learn_sample": None if sample is None else int(sample.size),
        "blocks": None if blocks is None or sample is not None else dataclasses.asdict(blocks),
        "drivers": drivers,
        "drivers_time_limit": drivers_time_limit if drivers else None,
        "threshold": None if threshold is None else threshold.text,
        "target": target,
    }
    deciding = (
        options if target is None or sample is not None else dataclasses.replace(options, target=target)
    )
    try:
        measured = measure(
            data, families, margin=margin, options=deciding, attack=published, params=params, sample=sample,
            blocks=blocks, seed=seed, jobs=n_jobs, scheduler=scheduler, notes=notes, progress=say,
            intervals=intervals,
        )  # fmt: skip
    except Interrupted as exc:  # the report of a stopped run: over what finished
        raise _stopped(exc, inputs, [], interval_p, threshold=threshold) from None
    generalisation: list[dict] = []
    for family in generalisation_families if folds else ():
        try:
            generalisation.append(
                _generalisation(
                    measured,
                    family,
                    folds=folds,
                    seed=seed,
                    margin=margin,
                    options=options,
                    sample=sample,
                    say=say,
                )  # fmt: skip
            )
        except KeyboardInterrupt:
            cut = "the generalisation folds"
            raise _stopped(
                measured.interrupted(), inputs, generalisation, interval_p, cut, threshold
            ) from None
    found = None
    if drivers:
        without = dataclasses.replace(options, time_limit=drivers_time_limit)
        try:
            found = attribute_drivers(
                measured, families, margin=margin, options=without, sample=sample, seed=seed, jobs=n_jobs,
                scheduler=scheduler, progress=say,
            )  # fmt: skip
        except KeyboardInterrupt:
            cut = "the attribute drivers"
            raise _stopped(
                measured.interrupted(), inputs, generalisation, interval_p, cut, threshold
            ) from None
    if callable(tradeoff):
        say("risk-utility trade-off")
    try:
        tradeoff_table = tradeoff(say, intervals) if callable(tradeoff) else tradeoff
    except KeyboardInterrupt:
        cut = "the risk-utility trade-off"
        raise _stopped(measured.interrupted(), inputs, generalisation, interval_p, cut, threshold) from None
    return _assessment(
        measured, inputs, generalisation, interval_p, tradeoff_table, drivers=found, threshold=threshold
    )


def default_families(n_attributes: int, notes: list[str] | None = None) -> list[str]:
    """The families ``rlopt risk`` learns on a file of ``n_attributes`` when none are
    named (what the app's form offers too): :data:`DEFAULT_FAMILIES`, ``ci_k`` in place
    of ``ci`` above :data:`DEFAULT_CI_ATTRIBUTES` attributes, less those the width does
    not suit; what was changed is said in ``notes``."""
    notes = [] if notes is None else notes
    families = list(DEFAULT_FAMILIES)
    if n_attributes > DEFAULT_CI_ATTRIBUTES:
        families = _learned_names([f for f in families if f != "ci"] + ["ci_k"], "families")
        notes.append(
            f"ci_k (2-additive measures: a lower end for ci) in place of ci in the default "
            f"families: ci's full measure on {n_attributes} attributes has "
            f"{2**n_attributes - 2} parameters; name ci in --families to learn it"
        )
    for name in list(families):
        try:
            get_learned_family(name).check_attributes(n_attributes)
        except InputError as exc:
            families.remove(name)
            notes.append(f"{name} left out of the default families: {exc}")
    return families


def _suited(families: list[str], explicit: bool, data: LinkageData, notes: list[str]) -> list[str]:
    """The families checked against the file's width before the first solve (no
    finished work is lost to a later one): an explicit one that does not suit is an
    error; the default ones are :func:`default_families`."""
    if not explicit:
        return default_families(data.n_attributes, notes)
    for name in families:
        get_learned_family(name).check_attributes(data.n_attributes)
    return families


def _generalisation(
    measured: Measured,
    family: str,
    *,
    folds: int,
    seed: int,
    margin: float,
    options: SolverOptions,
    sample: np.ndarray | None,
    say: Callable[[str], None],
) -> dict:
    """``family``'s k-fold generalisation, on the learning sample if there is one."""
    data = measured.data if sample is None else measured.data.records(sample)
    say(
        f"generalisation: {folds}-fold {family}"
        + ("" if sample is None else f" on the {sample.size}-record sample")
    )
    out = k_fold_generalisation(data, family, folds=folds, seed=seed, margin=margin, options=options)
    return out if sample is None else out | {"on_sample": int(sample.size)}


def _stopped(
    exc: Interrupted,
    inputs: dict,
    generalisation: list,
    interval_p: float,
    cut: str | None = None,
    threshold: Threshold | None = None,
) -> Interrupted:
    """Ctrl-C: an :class:`Interrupted` whose ``partial`` is the assessment of what
    finished (``exc.partial``, a :class:`Measured`, and the folds done), its headline
    over it; ``cut`` names the step after the families that the Ctrl-C stopped. The
    caller writes its report as a finished run's."""
    measured = exc.partial
    stopped = [] if cut is None else [cut]
    assessment = _assessment(
        measured, inputs, generalisation, interval_p, None, stopped=stopped, threshold=threshold
    )
    return Interrupted(str(exc), partial=assessment)


def _assessment(
    measured: Measured,
    inputs: dict,
    generalisation: list,
    interval_p: float,
    tradeoff_table: pd.DataFrame | None,
    *,
    stopped: Sequence[str] = (),
    drivers: dict | None = None,
    threshold: Threshold | None = None,
) -> RiskAssessment:
    """The measurement and the figures around it, as the report's typed rows;
    ``stopped`` names the steps after the families that a Ctrl-C cut; the answer to
    ``threshold``, where one is given."""
    data = measured.data
    records, summary = _records_table(measured.records, measured.families)
    attack = measured.attack_figures
    headline = _headline(
        measured.baselines,
        measured.families,
        attack,
        data.n_records,
        _failed_parts(generalisation, tradeoff_table),
        measured.identical,
        stopped=(*measured.stopped, *stopped),
    )
    decision = None if threshold is None else decide(threshold, headline, measured.families, data.n_records)
    return RiskAssessment(
        inputs={
            **inputs,
            "notes": measured.notes,
            "versions": _versions(),
            "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        },
        headline=headline,
        baselines=measured.baselines,
        families=measured.families,
        params=measured.params,
        shapley=_shapley(measured.params, data.columns),
        attack=attack,
        generalisation=generalisation,
        interval_disclosure=interval_disclosure(data, p=interval_p).to_dict(orient="records"),
        information_loss=information_loss(data),
        records_summary=summary,
        tradeoff=None if tradeoff_table is None else tradeoff_table.to_dict(orient="records"),
        records=records,
        drivers=drivers,
        decision=decision,
    )


def _shapley(params: dict[str, dict], columns: Sequence[str]) -> dict[str, dict[str, float]]:
    """The Shapley values of each parameter that is a fuzzy measure (the Choquet
    families'), as its family computes them, by the parameter's label."""
    out = {}
    for label, values in params.items():
        family = family_of(values, label) if values else None
        shapley = None if family is None else family.shapley_values(values, columns)
        if shapley is not None:
            out[label] = shapley
    return out


def _versions() -> dict:
    return {
        "rlopt": version("rlopt"),
        "highspy": version("highspy"),
        "pyomo": version("pyomo"),
        "python": platform.python_version(),
    }


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


def _incomplete_text(failed: Sequence[str], families_open: bool, stopped: Sequence[str] = ()) -> str | None:
    """The words a reader sees first when part of a run failed or was stopped (``None``
    when neither); the worst case may be higher when a family did not finish."""
    parts = []
    if failed:
        parts.append(f"{', '.join(failed)} failed")
    if stopped:
        parts.append(f"stopped before {', '.join(stopped)} finished")
    if not parts:
        return None
    consequence = (
        "the worst case may be higher" if families_open else "the figures shown are over what was assessed"
    )
    return f"incomplete: {'; '.join(parts)} — {consequence}"


def _headline(
    baselines: dict[str, BaselineRow],
    rows: list[FamilyRow],
    attack: dict | None,
    n_records: int,
    failed_elsewhere: list[str],
    identical: int | None = None,
    *,
    stopped: Sequence[str] = (),
) -> Headline:
    """The worst case over everything the run measured.

    Its lower end is the largest count of any baseline (AM, MD, PLD), family,
    saved parameter or transparency attack: each is achieved exactly by some
    intruder. Its upper end is the largest ceiling of the families, which bounds
    counts at margin eps; the worst case is proven when the lower end is a count at
    margin eps (a family's, a baseline's at that margin, or the attack's) equal to it:
    over the families assessed and the methods beside them, no intruder does better by
    that margin. A baseline's strict count above the ceiling leaves no ceiling (its
    extra records are nearer than the margin) but that of identical records, which
    (``identical``, where there is one) also caps the families' ceilings.
    A family that failed has no bound, so a headline with one is never proven; it
    and every failed fold or trade-off cell are named in ``failed`` and ``incomplete``.
    ``stopped`` names what a Ctrl-C stopped (families, whose rows hold the interval
    reached, and later steps): a headline short of proof is then ``interrupted``, at
    least its lower end.
    """
    families_failed = [r.family for r in rows if r.status == Status.FAILED]
    failed = (*families_failed, *failed_elsewhere)
    families_open = any(r.status in (Status.FAILED, Status.INTERRUPTED) for r in rows if r.learned)
    incomplete = _incomplete_text(failed, families_open, stopped)
    learned = [r for r in rows if r.learned]
    if not learned and attack is None:
        return Headline(
            rate=None,
            status=Status.NONE,
            source=None,
            failed=failed,
            incomplete=incomplete,
            stopped=tuple(stopped),
        )
    worst = worst_of(baselines, rows, attack, n_records, identical=identical)
    return Headline.of(worst, failed=failed, incomplete=incomplete, stopped=tuple(stopped))
