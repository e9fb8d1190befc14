"""``rlopt compare``, ``rlopt models`` and ``rlopt intersect``: choosing what to publish."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rlopt.cli._app import Command, commands, summary
from rlopt.cli._options import (
    THREADS,
    TIME_LIMIT,
    Columns,
    Jobs,
    JsonOut,
    LearnedFamilies,
    Margin,
    Missing,
    MissingPolicy,
    Nominal,
    Ordinal,
    Original,
    ProgressBar,
    Scheduler,
    Threads,
    TimeLimit,
    check_outputs,
    emit_json,
    kinds,
    print_grid_summary,
    resumable,
    seconds,
    split,
)
from rlopt.cli._options import (
    summary as summary_to,
)
from rlopt.exceptions import Interrupted
from rlopt.masking.grammar import parse_bounds, parse_names
from rlopt.report.answers import membership_cell
from rlopt.status import Status

app = commands()

LOSSES = (
    "il1s, sse, pmse, mean_change, variance_change, covariance_change, correlation_change (numeric "
    "attributes), categorical_changed, categorical_tv (categorical ones)"
)


# (over 60 lines by its signature: typer declares the command's options as its parameters)
@app.command(
    cls=Command,
    short_help=summary("compare"),
    epilog="Example: rlopt compare data.csv --methods 'mdav:k=3..7:2; rank_swap:p=5|15' "
    "--families wm --time-limit 30 --out-dir runs/compare --jobs 2",
)
def compare(
    original: Original,
    methods: Annotated[
        str,
        typer.Option(
            metavar="GRID",
            help="methods and parameter values, 'METHOD:PARAMETER=VALUES,...; ...' with VALUES a number, "
            "a range '2..10' or '2..20:2', or alternatives '0.05|0.5' (the parameters: those of rlopt "
            "mask, e.g. mdav:k=3, rank_swap:p=10, noise:variance_ratio=0.1)",
        ),
    ],
    out_dir: Annotated[
        Path, typer.Option(metavar="FOLDER", help="results folder (compare.html, compare.csv, results.csv)")
    ],
    families: LearnedFamilies = "wm",
    time_limit: TimeLimit = TIME_LIMIT,
    margin: Margin = 1e-5,
    threads: Threads = THREADS,
    columns: Columns = None,
    confidential: Annotated[
        str | None,
        typer.Option(
            metavar="A,B,...",
            help="confidential attributes: released unchanged, used by the privacy models",
        ),
    ] = None,
    loss: Annotated[
        str, typer.Option(metavar="LOSS", help=f"information loss across the map: {LOSSES}")
    ] = "il1s",
    seed: Annotated[int, typer.Option(metavar="SEED", help="masking seed")] = 0,
    bounds: Annotated[
        str | None,
        typer.Option(
            metavar="'A:0:100;B:-5:5'",
            help="the published domain of the DP methods (default: the data's range)",
        ),
    ] = None,
    jobs: Jobs = 1,
    scheduler: Scheduler = None,
    progress: ProgressBar = True,
    ordinal: Ordinal = None,
    nominal: Nominal = None,
    missing: Missing = MissingPolicy.category,
    threshold: Annotated[
        str | None,
        typer.Option(
            metavar="T",
            help="the officer's threshold (5%, 0.05 or '20 records'): each cell's decision, passes, "
            "fails or undecided, in the table and the summary",
        ),
    ] = None,
) -> None:
    """Every masking method and parameter on one risk-utility map: the worst case (learned
    families, baselines, the method's attack), privacy models, information loss."""
    from rlopt.experiments.compare import run_compare

    try:
        result = run_compare(
            original,
            methods,
            out_dir,
            families=parse_names(families),
            columns=split(columns),
            confidential=split(confidential) or (),
            time_limit=seconds(time_limit),
            margin=margin,
            threads=threads,
            seed=seed,
            loss=loss,
            bounds=None if bounds is None else parse_bounds(bounds),
            jobs=jobs,
            scheduler=scheduler,
            progress=progress,
            kinds=kinds(ordinal, nominal, missing),
            threshold=threshold,
        )
    except Interrupted as exc:
        raise resumable(exc, out_dir) from None
    _print_map(result, loss, out_dir)
    if result.run.failed:
        raise typer.Exit(1)


def _print_map(result, loss: str, out_dir: Path) -> None:
    """``rlopt compare``'s summary: the grid, each cell's risk and loss (the Pareto front
    marked), the notes, the kinds and where the map and its table are."""
    print_grid_summary(result.run, out_dir)
    for row, on_front in zip(result.frame.to_dict(orient="records"), result.front):
        mark = "  (Pareto front)" if on_front else ""
        decision = f", {row['decision']} the threshold" if row.get("decision") else ""
        if row.get("risk_kind") == "membership":
            figure = membership_cell(row)
        else:
            interval = "" if row["risk_status"] == Status.PROVEN else f"..{100 * row['risk_upper']:.2f}"
            figure = f"{100 * row['risk']:.2f}{interval}%"
        typer.echo(
            f"  {row['label']}: {figure} by {row['risk_source']}, {loss} {_figure(row[loss])}{mark}{decision}"
        )
    for note in result.notes:
        typer.echo(f"note: {note}", err=True)
    typer.echo(f"kinds: {result.kinds}")
    typer.echo(f"map -> {result.page}; table -> {result.csv}")


def _check_line(check) -> str:
    """One privacy model's line: its level, the level asked and whether it is met."""
    verdict = "" if check.satisfied is None else (" - satisfied" if check.satisfied else " - NOT satisfied")
    asked = ", ".join(f"{key}={value:g}" for key, value in check.parameter.items())
    return f"{check.model}: {check.value:.4g}{f' (asked {asked})' if asked else ''}{verdict}"


def _uniques_line(unique: dict) -> str:
    """The sample uniques' line (with P(PU|SU) when a population was given)."""
    line = f"sample uniques: {unique['n_sample_uniques']} of {unique['n_records']} records"
    if "p_pu_given_su" in unique:
        p_pu = unique["p_pu_given_su"]
        line += (
            f"; {unique['n_population_uniques']} of them unique in the population of {unique['n_population']}: "
            f"P(PU|SU) = {'undefined (no sample unique)' if p_pu is None else format(p_pu, '.4f')}"
        )
    return line


def _figure(value) -> str:
    """A loss figure, or "n/a" where the cell has none (e.g. a numeric loss of categories only)."""
    return "n/a" if value is None or (isinstance(value, float) and value != value) else f"{value:.4f}"


@app.command(
    cls=Command,
    short_help=summary("models"),
    epilog="Example: rlopt models released.csv --quasi-identifiers AGE,ZIP --confidential INCOME --k 3 --l 2",
)
def models(
    released: Annotated[
        Path, typer.Argument(metavar="RELEASED", help="the released file, CSV, TSV or Parquet")
    ],
    quasi_identifiers: Annotated[str, typer.Option(metavar="A,B,...", help="the quasi-identifiers")],
    confidential: Annotated[
        str | None, typer.Option(metavar="A,B,...", help="the confidential attributes")
    ] = None,
    k: Annotated[int | None, typer.Option(metavar="K", help="k-anonymity level to check")] = None,
    p: Annotated[
        int | None, typer.Option(metavar="P", help="p-sensitive k-anonymity level (with --k)")
    ] = None,
    l: Annotated[
        float | None, typer.Option("--l", metavar="L", help="l-diversity level (distinct and entropy)")
    ] = None,
    t: Annotated[
        float | None, typer.Option(metavar="T", help="t-closeness level (earth mover's distance)")
    ] = None,
    epsilon: Annotated[
        float | None, typer.Option(metavar="EPS", help="epsilon to check against the ratio-distance bound")
    ] = None,
    population: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="population file (e.g. the original of a sample): adds P(PU|SU) to the sample uniques",
        ),
    ] = None,
    json_out: JsonOut = None,
) -> None:
    """Privacy models of a released file: the level of each it reaches (k-anonymity,
    p-sensitive k-anonymity, l-diversity, t-closeness, the epsilon implied by
    t-closeness in the ratio distance) and whether it meets the levels asked; its
    sample uniques (and P(PU|SU) with --population)."""
    from rlopt.data import load_table
    from rlopt.models import check_models
    from rlopt.risk import uniqueness

    check_outputs(json=json_out)
    say = summary_to(json_out)
    frame = load_table(released)
    qis = parse_names(quasi_identifiers)
    unique = uniqueness(frame, qis, population=None if population is None else load_table(population))
    checks = check_models(frame, qis, split(confidential) or (), k=k, p=p, l=l, t=t, epsilon=epsilon)
    for check in checks:
        say(_check_line(check))
        if check.note:
            say(f"  note: {check.note}")
    say(_uniques_line(unique))
    if json_out is not None:
        emit_json(json_out, {"checks": [c.to_dict() for c in checks], "uniqueness": unique})


@app.command(
    cls=Command,
    short_help=summary("intersect"),
    epilog="Example: rlopt intersect release1.csv release2.csv --id-column id --confidential disease",
)
def intersect(
    releases: Annotated[
        list[Path],
        typer.Argument(metavar="RELEASE...", help="two or more k-anonymous releases, CSV, TSV or Parquet"),
    ],
    id_column: Annotated[
        str, typer.Option(metavar="NAME", help="the subject identifier shared by the releases")
    ],
    confidential: Annotated[str, typer.Option(metavar="A,B,...", help="the confidential attributes")],
    quasi_identifiers: Annotated[
        str | None,
        typer.Option(
            metavar="A,B,...", help="the quasi-identifiers (default: every other column of each release)"
        ),
    ] = None,
    json_out: JsonOut = None,
) -> None:
    """Intersection attack on independent k-anonymous releases of shared subjects: for
    each subject, the confidential values its classes have in common."""
    from rlopt.attacks import intersection_attack
    from rlopt.data import load_table

    check_outputs(json=json_out)
    qis = parse_names(quasi_identifiers) if quasi_identifiers else None
    result = intersection_attack(
        [load_table(path) for path in releases],
        id_column=id_column,
        confidential=parse_names(confidential),
        quasi_identifiers=None if qis is None else [qis] * len(releases),
    )
    say = summary_to(json_out)
    for line in result.summary():
        say(line)
    if json_out is not None:
        emit_json(json_out, result.to_dict())
