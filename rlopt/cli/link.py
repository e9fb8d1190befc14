"""``rlopt link`` and ``rlopt attack``: how many records one given intruder re-identifies."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from rlopt.attacks import ATTACKS
from rlopt.cli._app import Command, commands, summary
from rlopt.cli._masking import ATTACKED, masking_options
from rlopt.cli._options import (
    Columns,
    DropNonfinite,
    IdColumn,
    JsonOut,
    Masked,
    Missing,
    MissingPolicy,
    Nominal,
    Ordinal,
    Original,
    Scheduler,
    check_attacked,
    check_outputs,
    emit_json,
    interrupted,
    kinds,
    progress_bar,
    say_kinds,
    split,
)
from rlopt.cli._options import (
    summary as summary_to,
)
from rlopt.exceptions import InputError
from rlopt.families import BASELINES, DEFAULT_BASELINE

app = commands()


LinkDistance = StrEnum("LinkDistance", {name: name for name in (*BASELINES, "pld")})  # type: ignore[misc]
"""A plain linkage's distance: a registered baseline, or probabilistic linkage."""

AttackDistance = StrEnum("AttackDistance", {name: name for name in BASELINES})  # type: ignore[misc]
"""The distance inside an attack's intersections: a baseline (PLD has no distance)."""

DEFAULT_LINK, DEFAULT_ATTACK_DISTANCE = LinkDistance(DEFAULT_BASELINE), AttackDistance(DEFAULT_BASELINE)


@app.command(
    cls=Command,
    short_help=summary("link"),
    epilog="Example: rlopt link data.csv masked.csv --distance md --json -",
)
def link(
    original: Original,
    masked: Masked,
    distance: Annotated[
        LinkDistance,
        typer.Option(
            metavar="|".join(LinkDistance), help="distance: arithmetic mean, Mahalanobis, or probabilistic"
        ),
    ] = DEFAULT_LINK,
    columns: Columns = None,
    id_column: IdColumn = None,
    drop_nonfinite: DropNonfinite = False,
    ordinal: Ordinal = None,
    nominal: Nominal = None,
    missing: Missing = MissingPolicy.category,
    json_out: JsonOut = None,
    jobs: Annotated[int, typer.Option(metavar="N", help="threads of the brute-force linkage", min=1)] = 1,
    scheduler: Scheduler = None,
    progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress",
            help="progress on stderr: a bar on a terminal (the default there), a line per tenth in a log",
        ),
    ] = None,
) -> None:
    """Link each masked record to its nearest original and count the correct links.

    am and md on numeric files use an exact nearest-neighbour search (from 2000
    records); other cases compare every pair, over --jobs threads or a Dask
    --scheduler; pld is probabilistic record linkage (EM, one-to-one assignment).
    """
    check_outputs(json=json_out)
    say = summary_to(json_out)
    if distance == "pld":
        if drop_nonfinite:
            raise InputError("--drop-nonfinite is not available with --distance pld")
        linked, line = _link_pld(original, masked, split(columns), id_column, (ordinal, nominal, missing))
    else:
        linked, line = _link_dbrl(
            original,
            masked,
            distance.value,
            split(columns),
            id_column,
            (ordinal, nominal, missing),
            drop_nonfinite=drop_nonfinite,
            jobs=jobs,
            scheduler=scheduler,
            progress=progress,
        )
    say_kinds(say, linked.kinds)
    say(line)
    if json_out is not None:
        emit_json(json_out, linked.to_dict())


def _link_dbrl(
    original,
    masked,
    distance: str,
    columns,
    id_column,
    declared: tuple,
    *,
    drop_nonfinite: bool,
    jobs: int,
    scheduler,
    progress,
) -> tuple[Any, str]:
    """``rlopt link`` with a distance (am, md): distance-based record linkage, with a
    progress bar, and its summary line; ``declared``: ordinal, nominal, missing."""
    from rlopt.data import load_table
    from rlopt.linkage import dbrl

    try:
        with progress_bar("linking records", progress) as advance:
            linked = dbrl(
                load_table(original),
                load_table(masked),
                distance=distance,
                columns=columns,
                id_column=id_column,
                drop_nonfinite=drop_nonfinite,
                kinds=kinds(*declared),
                jobs=jobs,
                scheduler=scheduler,
                progress=advance,
            )
    except KeyboardInterrupt:
        raise interrupted("the linkage was not finished; no figure") from None
    return linked, (
        f"{linked.distance}: {linked.n_correct} of {linked.n_records} records "
        f"re-identified ({100 * linked.rate:.2f}%), {linked.n_ties} tie(s) not counted"
    )


def _link_pld(original, masked, columns, id_column, declared: tuple) -> tuple[Any, str]:
    """``rlopt link --distance pld``: probabilistic record linkage (a warning above the
    records ``rlopt risk`` runs it on), and its summary line; ``declared``: ordinal,
    nominal, missing."""
    from rlopt.data import load_table
    from rlopt.linkage import pld
    from rlopt.linkage.probabilistic import PLD_MAX_RECORDS

    original_table, masked_table = load_table(original), load_table(masked)
    if len(original_table) > PLD_MAX_RECORDS:
        typer.echo(
            f"warning: pld on {len(original_table)} records: its one-to-one assignment is cubic in "
            f"the records (rlopt risk skips it above {PLD_MAX_RECORDS}); this may take hours, Ctrl-C "
            "stops it",
            err=True,
        )
    try:
        prob = pld(original_table, masked_table, columns=columns, id_column=id_column, kinds=kinds(*declared))
    except KeyboardInterrupt:
        raise interrupted("the linkage was not finished; no figure") from None
    return prob, (
        f"pld: {prob.n_correct} of {prob.n_records} records re-identified "
        f"({100 * prob.rate:.2f}%), EM {prob.em.n_iter} iterations"
    )


@app.command(
    cls=Command,
    short_help=summary("attack"),
    epilog="Example: rlopt attack original.csv swapped.csv --method rank_swap --p 10 --json attack.json",
)
@masking_options("The published masking parameters", ATTACKED)
def attack(
    original: Original,
    masked: Masked,
    method: Annotated[
        str,
        typer.Option(
            metavar="METHOD",
            callback=check_attacked,
            help=f"the published masking method: {', '.join(ATTACKS)}",
        ),
    ],
    distance: Annotated[
        AttackDistance,
        typer.Option(metavar="|".join(BASELINES), help="the distance inside the intersections"),
    ] = DEFAULT_ATTACK_DISTANCE,
    columns: Columns = None,
    id_column: IdColumn = None,
    ordinal: Ordinal = None,
    nominal: Nominal = None,
    missing: Missing = MissingPolicy.category,
    json_out: JsonOut = None,
    *,
    masking: dict[str, Any],
) -> None:
    """Transparency attack: narrow each record's candidates with the published masking
    parameters, then link inside the intersection (PRAM, fuzzy: rank by posterior)."""
    from rlopt.attacks import plan_attack
    from rlopt.data import load_table, validate_pair
    from rlopt.masking.grammar import spec_from_text

    check_outputs(json=json_out)
    say = summary_to(json_out)
    spec = spec_from_text(method, masking)  # the callback made it the attacked masking method
    data = validate_pair(
        load_table(original),
        load_table(masked),
        columns=split(columns),
        id_column=id_column,
        kinds=kinds(ordinal, nominal, missing),
    )
    say_kinds(say, data.kinds)
    result = plan_attack(data, spec)(distance.value)
    for line in result.summary():
        say(line)
    if json_out is not None:
        emit_json(json_out, result.to_dict())
