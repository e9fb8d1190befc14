"""``rlopt risk`` and ``rlopt tradeoff``: the worst case over every family, baseline and
attack, with the report; and the same against utility over a masking parameter."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from rlopt.cli._app import Command, commands, summary
from rlopt.cli._masking import ATTACKED, flags, given_any, masking_options
from rlopt.cli._options import (
    FAMILIES,
    OUTPUT,
    THREADS,
    TIME_LIMIT,
    Blocks,
    Columns,
    EventLog,
    Events,
    IdColumn,
    JsonOut,
    Margin,
    Masked,
    Missing,
    MissingPolicy,
    Nominal,
    Ordinal,
    Original,
    SolveJobs,
    SolveScheduler,
    Solving,
    Threads,
    TimeLimit,
    block_options,
    both,
    check_attacked,
    check_families,
    check_method,
    check_outputs,
    emit_json,
    interrupted,
    interval_printer,
    kinds,
    seconds,
    split,
)
from rlopt.cli._options import (
    summary as summary_to,
)
from rlopt.cli._risk_lines import print_risk
from rlopt.exceptions import InputError, Interrupted
from rlopt.families import LEARNED
from rlopt.masking.grammar import parse_names, parse_values, spec_from_text

app = commands()

ATTACK = "Transparency attack (the published masking)"
CHECKS = "Generalisation and utility"


# (over 60 lines by its signature: typer declares the command's options as its parameters)
@app.command(
    cls=Command,
    short_help=summary("risk"),
    epilog="Example: rlopt risk original.csv masked.csv --report report.html --json figures.json",
)
@masking_options(ATTACK, ATTACKED)
def risk(
    original: Original,
    masked: Masked,
    report: Annotated[
        Path | None, typer.Option(metavar="FILE", help="write the HTML report", rich_help_panel=OUTPUT)
    ] = None,
    json_out: JsonOut = None,
    records_csv: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="write the per-record table as CSV", rich_help_panel=OUTPUT),
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", help="no progress lines on stderr", rich_help_panel=OUTPUT)
    ] = False,
    events: Events = None,
    families: Annotated[
        str | None,
        typer.Option(
            metavar="F,G,...",
            callback=check_families,
            help=f"the learned families, of {', '.join(LEARNED)} (default: wm,owa,ci,sb, less those "
            "the file does not suit; ci_k, a lower end for ci, in place of ci above 12 attributes)",
            rich_help_panel=FAMILIES,
        ),
    ] = None,
    time_limit: TimeLimit = TIME_LIMIT,
    threshold: Annotated[
        str | None,
        typer.Option(
            metavar="T",
            help="the officer's threshold: 5%, 0.05 or '20 records'. Each family stops as soon as its "
            "interval answers it; the run says passes (every family proven below T), fails (a recounted "
            "parameter reaches T) or undecided; exit code 0 passes, 3 fails, 4 undecided",
            rich_help_panel=FAMILIES,
        ),
    ] = None,
    margin: Margin = 1e-5,
    threads: Threads = THREADS,
    blocks: Blocks = None,
    jobs: SolveJobs = 1,
    scheduler: SolveScheduler = None,
    params: Annotated[
        list[Path] | None,
        typer.Option(
            metavar="FILE",
            help="saved parameters (rlopt learn --params-out) to evaluate without solving; repeatable",
            rich_help_panel=FAMILIES,
        ),
    ] = None,
    learn_sample: Annotated[
        int | None,
        typer.Option(
            metavar="N",
            help="learn the families on N records, recount on all (default: all up to 5000 records, "
            "2000 above)",
            min=2,
            rich_help_panel=FAMILIES,
        ),
    ] = None,
    columns: Columns = None,
    id_column: IdColumn = None,
    ordinal: Ordinal = None,
    nominal: Nominal = None,
    missing: Missing = MissingPolicy.category,
    attack_method: Annotated[
        str | None,
        typer.Option(
            metavar="METHOD",
            callback=check_attacked,
            help="the published masking method, for its transparency attack (with its parameters below)",
            rich_help_panel=ATTACK,
        ),
    ] = None,
    folds: Annotated[
        int, typer.Option(metavar="K", help="k-fold generalisation (0: skip)", rich_help_panel=CHECKS)
    ] = 5,
    generalisation: Annotated[
        str,
        typer.Option(
            metavar="F,G,...",
            callback=check_families,
            help="the families of the generalisation check",
            rich_help_panel=CHECKS,
        ),
    ] = "wm",
    interval_p: Annotated[
        float, typer.Option(metavar="P", help="interval disclosure width (%)", rich_help_panel=CHECKS)
    ] = 10.0,
    tradeoff_method: Annotated[
        str | None,
        typer.Option(
            metavar="METHOD",
            callback=check_method,
            help="add a risk-utility trade-off of this masking method",
            rich_help_panel=CHECKS,
        ),
    ] = None,
    tradeoff_values: Annotated[
        str | None,
        typer.Option(
            metavar="VALUES",
            help="its parameter values: '2..10', '2..20:2' or '3|5|8'",
            rich_help_panel=CHECKS,
        ),
    ] = None,
    seed: Annotated[
        int,
        typer.Option(
            metavar="SEED",
            help="seed of the folds, PLD tie-breaks, the learning sample and the trade-off masking",
            rich_help_panel=CHECKS,
        ),
    ] = 0,
    drivers: Annotated[
        bool,
        typer.Option(
            "--drivers",
            help="which attribute carries the risk: the families again without each attribute, "
            "ranked by how far the worst case drops",
            rich_help_panel=CHECKS,
        ),
    ] = False,
    drivers_time_limit: Annotated[
        float | None,
        typer.Option(
            "--drivers-limit",
            metavar="SECONDS",
            help="--drivers: seconds per family without one attribute (default: --time-limit "
            "over the number of attributes, at least 1)",
            rich_help_panel=CHECKS,
        ),
    ] = None,
    *,
    masking: dict[str, Any],
) -> None:
    """Worst-case re-identification risk of MASKED against ORIGINAL: each family's
    proven optimum (or interval), the baselines, the attack, the records at risk."""
    from rlopt.data import load_table
    from rlopt.risk import assess_risk
    from rlopt.risk.threshold import Threshold

    check_outputs(report=report, json=json_out, records_csv=records_csv, events=events)
    decided_by = None if threshold is None else Threshold.parse(threshold)  # a clear error first
    say = summary_to(json_out)
    published = _published(attack_method, masking)
    drivers_limit = _drivers_limit(drivers, drivers_time_limit)
    block_ceilings = block_options(blocks, jobs, scheduler)
    a, b = load_table(original), load_table(masked)
    solving = Solving(
        margin=margin,
        time_limit=seconds(time_limit),
        threads=threads,
        seed=seed,
        jobs=1 if block_ceilings is not None else jobs,
    )
    table = _tradeoff_plan(a, tradeoff_method, tradeoff_values, generalisation, columns, solving)
    log = None if events is None else EventLog(events)
    progress, intervals = _watchers(quiet, log)
    try:
        result = assess_risk(
            a,
            b,
            families=split(families),
            columns=split(columns),
            id_column=id_column,
            params=params or (),
            attack=published,
            folds=folds,
            generalisation_families=parse_names(generalisation) if folds else (),
            interval_p=interval_p,
            tradeoff=table,
            names=(original.name, masked.name),
            kinds=kinds(ordinal, nominal, missing),
            progress=progress,
            intervals=intervals,
            margin=solving.margin,
            time_limit=solving.time_limit,
            threads=solving.threads,
            seed=solving.seed,
            learn_sample=learn_sample,
            blocks=block_ceilings,
            n_jobs=1 if block_ceilings is not None else jobs,
            scheduler=None if block_ceilings is not None else scheduler,
            drivers=drivers,
            drivers_time_limit=drivers_limit,
            threshold=decided_by,
        )
    except Interrupted as exc:  # Ctrl-C: the figures and report of what finished, then exit 130
        _written(exc.partial, say, json_out=json_out, records_csv=records_csv, report=report, log=log)
        raise interrupted(f"{exc}; what finished is written, as a stopped run") from None
    except KeyboardInterrupt:  # before any figure (while the file or the baselines were read)
        if log is not None:
            log.end("interrupted")
        raise interrupted("nothing was finished") from None
    _written(result, say, json_out=json_out, records_csv=records_csv, report=report, log=log)
    if result.decision is not None:  # the answer to the threshold: 0 passes, 3 fails, 4 undecided
        raise typer.Exit(result.decision.exit_code)
    if not result.complete:  # the figures are written; the exit code says they are partial
        raise typer.Exit(1)


def _drivers_limit(drivers: bool, limit: float | None) -> float | None:
    """--drivers-limit, checked: seconds > 0 with --drivers (``None``: the default)."""
    if limit is None:
        return None
    if not drivers:
        raise InputError(f"--drivers-limit {limit:g} needs --drivers")
    if limit <= 0:
        raise InputError(
            f"--drivers-limit {limit:g}; expected seconds > 0 (for no limit, give --time-limit 0 "
            "and no --drivers-limit)"
        )
    return limit


def _published(attack_method: str | None, masking: dict[str, Any]):
    """The published masking the attack assumes (``None``: no attack); its parameters
    without ``--attack-method`` are refused."""
    if attack_method is None and given_any(masking):
        raise InputError(f"{flags(masking)} describe the published masking: give --attack-method too")
    return None if attack_method is None else spec_from_text(attack_method, masking)


def _watchers(quiet: bool, log: EventLog | None):
    """What follows the run: its steps and each family's interval, on stderr (unless
    ``quiet``) and in the event log (``--events``)."""
    progress = both(None if quiet else (lambda m: typer.echo(m, err=True)), None if log is None else log.step)
    intervals = both(
        None if quiet else interval_printer(True, labelled=True),
        None if log is None else log.interval,
    )
    return progress, intervals


def _written(
    result, say, *, json_out: Path | None, records_csv: Path | None, report: Path | None, log
) -> None:
    """The summary said, then the figures, the per-record table and the report written,
    and the event log ended."""
    from rlopt.report import render_risk_report

    print_risk(result, say)
    if json_out is not None:
        emit_json(json_out, result.figures)
    if records_csv is not None:
        result.records.to_csv(records_csv, index=False)
        say(f"records -> {records_csv}")
    if report is not None:
        render_risk_report(result, report)
        say(f"report -> {report}")
    if log is not None:
        log.end("interrupted" if result.stopped else "complete" if result.complete else "incomplete")


def _tradeoff_plan(frame, method: str | None, values: str | None, families: str, columns, solving: Solving):
    """``risk --tradeoff-method``: every masked file made and checked before any solving."""
    from rlopt.risk.risk_utility import tradeoff_plan

    if method is None:
        if values is not None:
            raise InputError("--tradeoff-values needs --tradeoff-method")
        return None
    if values is None:
        raise InputError("--tradeoff-method needs --tradeoff-values, e.g. '2..10'")
    return tradeoff_plan(
        frame,
        method=method,
        values=parse_values(values, "--tradeoff-values"),
        families=parse_names(families),
        columns=split(columns),
        margin=solving.margin,
        time_limit=solving.time_limit,
        threads=solving.threads,
        seed=solving.seed,
        n_jobs=solving.jobs,
    )
