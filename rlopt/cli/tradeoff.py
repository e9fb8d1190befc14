"""``rlopt tradeoff``: the worst case against utility over one masking parameter."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rlopt.cli._app import Command, commands, summary
from rlopt.cli._options import (
    OUTPUT,
    THREADS,
    TIME_LIMIT,
    Columns,
    JsonOut,
    LearnedFamilies,
    Margin,
    Original,
    Threads,
    TimeLimit,
    check_method,
    check_outputs,
    emit_json,
    interval_printer,
    seconds,
    split,
)
from rlopt.cli._options import (
    summary as summary_to,
)
from rlopt.masking.grammar import parse_names, parse_values

app = commands()


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
    families: LearnedFamilies = "wm",
    time_limit: TimeLimit = TIME_LIMIT,
    margin: Margin = 1e-5,
    threads: Threads = THREADS,
    columns: Columns = None,
    seed: Annotated[int, typer.Option(metavar="SEED", help="masking seed")] = 0,
    jobs: Annotated[
        int,
        typer.Option(
            metavar="N",
            min=1,
            help="worker processes: each masked file's families side by side, spare ones racing "
            "the open families with other seeds (a proven figure is the same for every N)",
        ),
    ] = 1,
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
        n_jobs=jobs,
        progress=None if quiet else (lambda m: typer.echo(m, err=True)),
        intervals=None if quiet else interval_printer(True, labelled=True),
    )
    summary_to(json_out)(table.to_string(index=False))
    if out is not None:
        table.to_csv(out, index=False)
    if json_out is not None:
        emit_json(json_out, {"rows": table.to_dict(orient="records")})
