"""``rlopt run``, ``rlopt reproduce`` and ``rlopt report``: grids of experiments."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from rlopt.cli._app import Command, commands, summary
from rlopt.cli._options import Jobs, OutDir, ProgressBar, Scheduler, print_grid_summary, resumable, split
from rlopt.exceptions import InputError, Interrupted
from rlopt.masking.swapping import VARIANTS

app = commands()


class Table(StrEnum):
    tables_1_2 = "1"
    table_2 = "2"
    table_5 = "5"


SwapVariant = StrEnum("SwapVariant", {name: name for name in VARIANTS})  # type: ignore[misc]
PLAIN = SwapVariant("plain")


@app.command(
    cls=Command,
    short_help=summary("run"),
    epilog="Example: rlopt run configs/M4-33.yaml --out-dir runs/M4-33-grid --jobs 2",
)
def run(
    config: Annotated[Path, typer.Argument(metavar="CONFIG", help="an experiment config (YAML)")],
    out_dir: OutDir = None,
    jobs: Jobs = 1,
    scheduler: Scheduler = None,
    progress: ProgressBar = True,
) -> None:
    """Run an experiment grid into --out-dir (default runs/<config name>); a re-run with
    the same --out-dir skips the finished cells."""
    from rlopt.experiments import load_config, run_grid

    spec = load_config(config)
    out = out_dir or Path("runs") / spec.name
    try:
        result = run_grid(spec, out, base=config.parent, jobs=jobs, scheduler=scheduler, progress=progress)
    except Interrupted as exc:
        raise resumable(exc, out) from None
    print_grid_summary(result, out)
    if result.failed:
        raise typer.Exit(1)


# (over 60 lines by its signature: typer declares the command's options as its parameters)
@app.command(
    cls=Command,
    short_help=summary("reproduce"),
    epilog="Example: rlopt reproduce --quick --jobs 2 --out-dir runs/paper-quick",
)
def reproduce(
    quick: Annotated[
        bool, typer.Option("--quick", help="the families of Tables 1-2, one record sample (minutes)")
    ] = False,
    table: Annotated[
        Table,
        typer.Option(
            metavar="1|2|5", help="1 or 2: Tables 1 and 2 (one grid gives both); 5: rank swapping attacks"
        ),
    ] = Table.tables_1_2,
    out_dir: OutDir = None,
    jobs: Jobs = 1,
    scheduler: Scheduler = None,
    seeds: Annotated[str, typer.Option(metavar="S,S,...", help="Table 5: masking seeds")] = "0,1,2",
    datasets: Annotated[str, typer.Option(metavar="NAMES", help="Table 5: census, eia")] = "census,eia",
    variant: Annotated[
        SwapVariant,
        typer.Option(
            metavar="VARIANT", help="Table 5: rank swapping variant (plain, p-buckets, p-distribution)"
        ),
    ] = PLAIN,
    learned: Annotated[
        str | None,
        typer.Option(metavar="F,G,...", help="Table 5: learned families as extra columns, e.g. wm"),
    ] = None,
    time_limit: Annotated[
        float | None,
        typer.Option(
            metavar="SECONDS",
            help="seconds per learned MILP (default: 60 with --quick and for Table 5, else 600)",
        ),
    ] = None,
    progress: ProgressBar = True,
) -> None:
    """Regenerate the published Tables 1 and 2 (table1.md, table2.md and CSVs in --out-dir),
    or with --table 5 the rank swapping table (table5.md, table5.csv)."""
    from rlopt.experiments import paper_config, run_grid, write_tables

    if table == Table.table_5:
        _reproduce_table5(
            out_dir,
            jobs,
            scheduler,
            split(seeds) or [],
            split(datasets) or [],
            variant.value,
            split(learned) or [],
            60.0 if time_limit is None else time_limit,
            progress,
        )
        return
    spec = paper_config(quick=quick, time_limit=time_limit)
    out = out_dir or Path("runs") / spec.name
    try:
        result = run_grid(spec, out, jobs=jobs, scheduler=scheduler, progress=progress)
    except Interrupted as exc:
        raise resumable(exc, out) from None
    print_grid_summary(result, out)
    if result.rows:
        table1, table2 = write_tables(result.frame, out)
        typer.echo(table1)
        typer.echo(table2)
    if result.failed:
        raise typer.Exit(1)


def _reproduce_table5(out, jobs, scheduler, seeds, datasets, variant, learned, time_limit, progress) -> None:
    from rlopt.experiments.runner import run_tasks
    from rlopt.experiments.transparency import run_attack_cell, table5_cells, table5_columns, write_table5

    try:
        seed_values = [int(s) for s in seeds]
    except ValueError:
        raise InputError(f"--seeds {','.join(seeds)!r}; expected integers separated by commas") from None
    cells = table5_cells(datasets, seeds=seed_values, variant=variant, learned=learned, time_limit=time_limit)
    out = out or Path("runs") / "table5"
    try:
        result = run_tasks(
            cells,
            out,
            work=run_attack_cell,
            columns=table5_columns(learned),
            label="table 5",
            jobs=jobs,
            scheduler=scheduler,
            progress=progress,
        )
    except Interrupted as exc:
        raise resumable(exc, out) from None
    print_grid_summary(result, out)
    if result.rows:
        typer.echo(write_table5(result.frame, out))
    if result.failed:
        raise typer.Exit(1)


@app.command(cls=Command, short_help=summary("report"), epilog="Example: rlopt report runs/paper-quick")
def report(
    results_dir: Annotated[
        Path, typer.Argument(metavar="RESULTS", help="the --out-dir folder of rlopt run or rlopt reproduce")
    ],
    out: Annotated[
        Path | None, typer.Option(metavar="FILE", help="the HTML file (default: RESULTS/report.html)")
    ] = None,
) -> None:
    """Render an HTML report of an experiment run's results."""
    from rlopt.report import render_results_report

    path = render_results_report(results_dir, out)
    typer.echo(f"report -> {path}")
