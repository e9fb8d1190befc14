"""``rlopt risk`` and ``rlopt tradeoff``: the worst case over every family, baseline and
attack, with the report; and the same against utility over a masking parameter."""

from __future__ import annotations

from collections.abc import Callable
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
    Columns,
    IdColumn,
    JsonOut,
    Margin,
    Masked,
    Missing,
    MissingPolicy,
    Nominal,
    Ordinal,
    Original,
    Solving,
    Threads,
    TimeLimit,
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
from rlopt.exceptions import InputError
from rlopt.families import LEARNED
from rlopt.masking.grammar import parse_names, parse_values, spec_from_text
from rlopt.status import Status

app = commands()

ATTACK = "Transparency attack (the published masking)"
CHECKS = "Generalisation and utility"


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
    margin: Margin = 1e-5,
    threads: Threads = THREADS,
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
    *,
    masking: dict[str, Any],
) -> None:
    """Worst-case re-identification risk of MASKED against ORIGINAL: each family's
    proven optimum (or interval), the baselines, the attack, the records at risk."""
    from rlopt.data import load_table
    from rlopt.report import render_risk_report
    from rlopt.risk import assess_risk

    check_outputs(report=report, json=json_out, records_csv=records_csv)
    say = summary_to(json_out)
    if attack_method is None and given_any(masking):
        raise InputError(f"{flags(masking)} describe the published masking: give --attack-method too")
    published = None if attack_method is None else spec_from_text(attack_method, masking)
    a, b = load_table(original), load_table(masked)
    solving = Solving(margin=margin, time_limit=seconds(time_limit), threads=threads, seed=seed)
    table = _tradeoff_plan(a, tradeoff_method, tradeoff_values, generalisation, columns, solving)
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
            progress=None if quiet else (lambda m: typer.echo(m, err=True)),
            intervals=None if quiet else interval_printer(True, labelled=True),
            margin=solving.margin,
            time_limit=solving.time_limit,
            threads=solving.threads,
            seed=solving.seed,
            learn_sample=learn_sample,
        )
    except KeyboardInterrupt as exc:  # Ctrl-C: the families finished so far, then exit 130
        raise _risk_interrupted(exc, json_out, say) from None
    _print_risk(result, say)
    if json_out is not None:
        emit_json(json_out, result.figures)
    if records_csv is not None:
        result.records.to_csv(records_csv, index=False)
        say(f"records -> {records_csv}")
    if report is not None:
        render_risk_report(result, report)
        say(f"report -> {report}")
    if not result.complete:  # the figures are written; the exit code says they are partial
        raise typer.Exit(1)


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
    )


def _print_risk(result, say: Callable[[str], None]) -> None:
    for note in result.figures["inputs"]["notes"]:
        typer.echo(f"note: {note}", err=True)
    say(f"kinds: {result.figures['inputs']['kinds_described']}")
    h = result.headline
    if h.get("incomplete"):
        say(h["incomplete"])
    if h["rate"] is not None:
        text = (
            f"worst case {100 * h['rate']:.2f}% ({h['n_correct']} of {h['n_records']}) by "
            f"{h['source']}, {h['status']}"
        )
        if h["status"] != Status.PROVEN and h["upper_n_correct"] >= h["n_records"]:
            text += f": at least {h['n_correct']} of {h['n_records']} re-identified, no ceiling proven"
        elif h["status"] != Status.PROVEN:
            text += f": between {100 * h['rate']:.2f}% and {100 * h['upper_rate']:.2f}%"
        if h["status"] != Status.PROVEN and h.get("upper_source"):
            text += f" (upper end: {h['upper_source']})"
        say(text)
        if h.get("note"):
            say(f"  ({h['note']})")
    _print_baselines(result.figures["baselines"], say)
    attack = result.figures.get("attack")
    if attack:
        say(f"  {attack['method']} attack: {_count(attack['n_correct'], attack['n_records'])}")
    for row in result.figures["families"]:
        _print_family(row, say)
    for check in result.figures.get("generalisation") or ():
        if check.get("rate") is not None:
            say(
                f"  generalisation ({check['folds']}-fold {check['family']}, learned on the other folds): "
                f"{_count(check['n_correct'], check['n_assessed'])} of the held-out records"
            )


def _count(n_correct: int, n_records: int) -> str:
    return f"{100 * n_correct / n_records:.2f}% ({n_correct} of {n_records})"


def _print_baselines(baselines: dict, say: Callable[[str], None]) -> None:
    """``  baselines: am 95.00%, md 95.00%, pld 83.50%`` (the counts of fixed distances)."""
    shown = [
        f"{name} {100 * b['rate']:.2f}%" if b.get("rate") is not None else f"{name} {b['status']}"
        for name, b in baselines.items()
    ]
    if shown:
        say(f"  baselines: {', '.join(shown)}")


def _print_family(row: dict, say: Callable[[str], None]) -> None:
    from rlopt.milp.search.portfolio import describe_lower

    if row["status"] == Status.SAMPLED:
        sample = row["sample"]
        say(
            f"  {row['family']}: at least {row['n_correct']} re-identified ({100 * row['rate']:.2f}%), "
            f"by {row['lower_source']}; learned on {sample['n_records']} records "
            f"({sample['status']}: {sample['n_correct']}, bound {sample['bound']}), recounted on the whole file"
        )
        return
    bound = (
        ""
        if row["status"] in (Status.OPTIMAL, Status.APPLIED) or row["bound"] is None
        else f" (bound {100 * row['bound_rate']:.2f}%, {row['bound']} records)"
    )
    rate = "" if row["rate"] is None else f"{100 * row['rate']:.2f}%"
    source = describe_lower(row.get("lower_source"))
    start = "" if source is None else f"; {source}"
    subfamily = " (a lower end for ci)" if row["family"] == "ci_k" else ""
    say(f"  {row['family']}{subfamily}: {rate} {row['status']}{bound}{start}")


def _risk_interrupted(
    exc: KeyboardInterrupt, json_out: Path | None, say: Callable[[str], None]
) -> typer.Exit:
    """Ctrl-C during ``rlopt risk``: print (and with --json write) what was finished: the
    baselines, the finished families and the interval each unfinished one had reached."""
    partial = getattr(exc, "partial", None)
    if not isinstance(partial, dict):
        return interrupted("nothing was finished")
    _print_baselines(partial["baselines"], say)
    for row in partial["families"]:
        _print_family(row, say)
    current = partial["interrupted"]
    reached = dict(partial.get("reached") or {})
    if current is not None and current.n_correct_verified is not None:
        reached.pop(current.family, None)
        say(
            f"  {current.family}: between {current.n_correct_verified} and {current.bound} "
            f"of {current.n_records} (interrupted)"
        )
    for family, event in reached.items():
        say(
            f"  {family}: between {event['lower']} and {event['upper']} records (interrupted at "
            f"{event['seconds']:.1f} s; lower: {event['lower_source']})"
        )
    if json_out is not None:
        figures = {
            "interrupted": True,
            "baselines": partial["baselines"],
            "families": partial["families"],
            "interrupted_family": None if current is None else current.to_dict(),
            "reached": reached,
        }
        emit_json(json_out, figures)
    return interrupted(f"{exc}; the other figures were not computed")


@app.command(
    name="tradeoff",
    cls=Command,
    short_help=summary("tradeoff"),
    epilog="Example: rlopt tradeoff data.csv --method mdav --values 2..10 --out tradeoff.csv",
)
def tradeoff_command(
    original: Original,
    method: Annotated[str, typer.Option(metavar="METHOD", callback=check_method, help="the masking method")],
    values: Annotated[
        str,
        typer.Option(
            metavar="VALUES", help="values of the method's parameter: '2..10', '2..20:2' or '3|5|8'"
        ),
    ],
    families: Annotated[
        str,
        typer.Option(
            metavar="F,G,...",
            callback=check_families,
            help=f"the learned families, of {', '.join(LEARNED)}",
            rich_help_panel=FAMILIES,
        ),
    ] = "wm",
    time_limit: TimeLimit = TIME_LIMIT,
    margin: Margin = 1e-5,
    threads: Threads = THREADS,
    columns: Columns = None,
    seed: Annotated[int, typer.Option(metavar="SEED", help="masking seed")] = 0,
    out: Annotated[
        Path | None, typer.Option(metavar="FILE", help="write the table as CSV", rich_help_panel=OUTPUT)
    ] = None,
    json_out: JsonOut = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", help="no progress lines on stderr", rich_help_panel=OUTPUT)
    ] = False,
) -> None:
    """Risk against utility: the worst-case rate and information loss of one masking
    method over a range of its parameter."""
    from rlopt.data import load_table
    from rlopt.risk import tradeoff

    check_outputs(out=out, json=json_out)
    table = tradeoff(
        load_table(original),
        method=method,
        values=parse_values(values, "--values"),
        families=parse_names(families),
        columns=split(columns),
        margin=margin,
        time_limit=seconds(time_limit),
        threads=threads,
        seed=seed,
        progress=None if quiet else (lambda m: typer.echo(m, err=True)),
        intervals=None if quiet else interval_printer(True, labelled=True),
    )
    summary_to(json_out)(table.to_string(index=False))
    if out is not None:
        table.to_csv(out, index=False)
    if json_out is not None:
        emit_json(json_out, {"rows": table.to_dict(orient="records")})
