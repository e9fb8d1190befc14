"""``rlopt membership``: the worst-case membership attack on a fully synthetic release."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from rlopt.cli._app import Command, commands, summary
from rlopt.cli._masking import masking_options
from rlopt.cli._options import (
    Columns,
    Jobs,
    JsonOut,
    Threads,
    check_outputs,
    emit_json,
    interrupted,
    split,
    write_table,
)
from rlopt.cli._options import summary as summary_to
from rlopt.exceptions import InputError

app = commands()


# (over 60 lines by its signature: typer declares the command's options as its parameters)
@app.command(
    cls=Command,
    short_help=summary("membership"),
    epilog="Example: rlopt membership data.csv --method synthetic_copula --holdout-share 0.3 "
    "--families wm,owa --time-limit 60; rlopt membership train.csv --holdout held_out.csv "
    "--synthetic release.csv",
)
@masking_options("Generator parameters", fields=("epsilon", "bins", "bounds", "n_records"))
def membership(
    original: Annotated[
        Path,
        typer.Argument(
            metavar="ORIGINAL",
            help="the file to split and synthesise (with --method), or the generator's training "
            "file (with --holdout and --synthetic); CSV, TSV or Parquet",
        ),
    ],
    method: Annotated[
        str | None,
        typer.Option(metavar="METHOD", help="a fully synthetic generator: synthetic_copula, dp_histogram"),
    ] = None,
    holdout_share: Annotated[
        float | None,
        typer.Option(
            metavar="SHARE", help="with --method: the share of records held out of the training (default 0.3)"
        ),
    ] = None,
    holdout: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="records not in the training file (the non-members)"),
    ] = None,
    synthetic: Annotated[
        Path | None, typer.Option(metavar="FILE", help="the synthetic release made from ORIGINAL")
    ] = None,
    families: Annotated[
        str, typer.Option(metavar="F,G,...", help="the distance families searched: wm, wm_m, owa")
    ] = "wm",
    columns: Columns = None,
    time_limit: Annotated[
        float,
        typer.Option(
            metavar="SECONDS",
            help="seconds per family (region search, then MILP), 0 for none; "
            "a family stopped by it reports an interval",
            min=0,
        ),
    ] = 60.0,
    threads: Threads = 1,
    jobs: Jobs = 1,
    seed: Annotated[
        int, typer.Option(metavar="SEED", help="seed of the split, the generator and the search")
    ] = 0,
    synthetic_out: Annotated[
        Path | None, typer.Option(metavar="FILE", help="with --method: write the synthetic file made")
    ] = None,
    folds: Annotated[
        int,
        typer.Option(
            metavar="K",
            help="the headline: the advantage out of sample, each of K folds of the records called by the "
            "attack learned on the others (the K fits share each family's time limit; 0: none)",
            min=0,
        ),
    ] = 5,
    permutations: Annotated[
        int,
        typer.Option(
            metavar="B",
            help="the in-sample figure's chance level: the whole search re-run on B relabelled splits "
            "(at least 19; costs B times the in-sample search, shared by --jobs; 0: none)",
            min=0,
        ),
    ] = 0,
    reserve: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="with --holdout: real records in neither file, measured as the ideal release (the 0 anchor)",
        ),
    ] = None,
    reserve_share: Annotated[
        float | None,
        typer.Option(
            metavar="SHARE",
            help="with --method: the share of records set aside, before the split, as the ideal release",
        ),
    ] = None,
    anchors: Annotated[
        bool,
        typer.Option(
            "--anchors/--no-anchors",
            help="measure a copy of the training file (the 1 anchor) and the reserve (the 0 anchor) too",
        ),
    ] = True,
    json_out: JsonOut = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress lines on stderr")] = False,
    *,
    masking: dict[str, Any],
) -> None:
    """How well an intruder holding records can tell the generator's training records
    from others, with the best distance of a family and the best threshold: the
    advantage TPR - FPR (0: nothing; 1: every member given away), proven or bracketed,
    beside the fixed Euclidean distance to the closest record (DCR) other tools use."""
    from rlopt.data import load_table
    from rlopt.masking.grammar import spec_from_text
    from rlopt.risk.membership import membership_risk, set_aside, split_release

    check_outputs(synthetic_out=synthetic_out, json=json_out)
    say = summary_to(json_out)
    if method is not None:
        if holdout is not None or synthetic is not None:
            raise InputError(
                "give --method (rlopt splits and synthesises) or --holdout with --synthetic, not both"
            )
        if reserve is not None:
            raise InputError(
                "--reserve: only with --holdout and --synthetic (with --method: --reserve-share)"
            )
        _check_fully_synthetic(method)  # before its parameters: the first thing wrong
        spec = spec_from_text(method, masking, seed=seed)
        frame, kept = set_aside(load_table(original), reserve_share, seed=seed)
        members, held_out, released = split_release(
            frame,
            spec,
            holdout_share=0.3 if holdout_share is None else holdout_share,
            seed=seed,
            columns=split(columns),
        )
        if synthetic_out is not None:
            write_table(released, synthetic_out)
            say(f"synthetic file ({len(released)} records) -> {synthetic_out}")
    elif holdout is not None and synthetic is not None:
        given = [flag for flag, value in (("--holdout-share", holdout_share), ("--synthetic-out", synthetic_out),
                                          ("--reserve-share", reserve_share)) if value is not None] + [f"--{k.replace('_', '-')}" for k, v in masking.items() if v is not None]  # fmt: skip
        if given:
            raise InputError(f"{', '.join(given)}: only with --method (rlopt then splits and synthesises)")
        members, held_out, released = load_table(original), load_table(holdout), load_table(synthetic)
        kept = None if reserve is None else load_table(reserve)
    else:
        raise InputError(
            "give --method GENERATOR (ORIGINAL is split and synthesised), or --holdout FILE and "
            "--synthetic FILE (ORIGINAL is the generator's training file)"
        )
    result = membership_risk(
        members,
        held_out,
        released,
        families=split(families) or ["wm"],
        columns=split(columns),
        time_limit=time_limit or None,
        threads=threads,
        seed=seed,
        jobs=jobs,
        folds=folds,
        permutations=permutations,
        reserve=kept,
        anchors=anchors,
        progress=None if quiet else (lambda line: typer.echo(line, err=True)),
    )
    for line in membership_lines(result):
        say(line)
    if json_out is not None:
        emit_json(json_out, result.to_dict())
    if result.interrupted:
        not_started = f"; not started: {', '.join(result.not_started)}" if result.not_started else ""
        raise interrupted(f"the figures above are what finished{not_started}")


def _check_fully_synthetic(name: str) -> None:
    from rlopt.masking.methods import fully_synthetic

    if not fully_synthetic(name):
        raise InputError(
            f"{name} releases one record per original record: measure it by record linkage "
            "(rlopt risk ORIGINAL --method ...); rlopt membership takes a fully synthetic generator"
        )


def membership_lines(result) -> list[str]:
    """The answer first (the out-of-sample advantage where it ran), then the in-sample
    worst case with its chance level and anchors, each family's figure, the fixed test."""
    lines = []
    crossed = result.out_of_sample
    if crossed is not None:
        lines.append(f"membership advantage (TPR - FPR) out of sample: {_out_of_sample(crossed)}")
    worst = result.worst
    if result.status == "interrupted":
        head = f"at least {worst.advantage:.3f} (stopped by Ctrl-C: the worst case may be up to {result.upper:.3f})"
    elif result.status == "proven":
        head = f"{worst.advantage:.3f}, proven"
    else:
        head = (
            f"between {worst.advantage:.3f} and {result.upper:.3f} "
            "(not proven: the worst case may be up to the upper end)"
        )
    lines.append(
        f"{'in sample' if crossed is not None else 'membership advantage (TPR - FPR)'} "
        f"(the distance and threshold chosen on the records they are counted on): {head}; "
        f"{worst.family}: TPR {worst.tpr:.3f}, FPR {worst.fpr:.3f} "
        f"({result.n_members} members, {result.n_holdout} held out, {result.n_synthetic} synthetic records; "
        f"attributes {', '.join(result.columns)})"
    )
    lines += _calibration_lines(result)
    for name, figure in result.families.items():
        interval = (
            f"{figure.lower.advantage:.3f}"
            if figure.status == "optimal"
            else f"[{figure.lower.advantage:.3f}, {figure.ceiling:.3f}]"
        )
        how = (
            f"{figure.source}, {figure.seconds:.1f} s"
            if figure.source != "none"
            else f"no ceiling: {figure.model.get('why', 'no search ran')}"
        )
        lines.append(f"  {name} in sample: {interval} {figure.status} ({how})")
    fixed = result.fixed
    expected = result.n_members / (result.n_members + result.n_holdout)
    lines.append(
        f"  fixed Euclidean DCR attack: {fixed.advantage:.3f} (TPR {fixed.tpr:.3f}, FPR {fixed.fpr:.3f}; "
        f"{result.chance:.3f} by chance on this split); "
        f"synthetic records nearest a member: {result.dcr_share:.3f} ({expected:.3f} if the release "
        "favoured no one)"
    )
    return lines


def _calibration_lines(result) -> list[str]:
    """The in-sample figure's chance level, the anchors and what was not measured."""
    lines: list[str] = []
    if result.null is not None:
        null = result.null
        lines.append(
            f"  chance level ({null.runs} relabelled splits searched alike): mean {null.mean:.3f}, "
            f"95 % quantile {null.q95:.3f}; p-value {null.p_value:.3f}; excess over chance "
            f"(advantage - mean) / (1 - mean) {null.excess:.3f} (relabelling alone: {null.band[0]:.3f} "
            f"to {null.band[1]:.3f})"
        )
    for kind, anchor in result.anchors.items():
        what = (
            f"ideal release ({anchor.n_synthetic} real records, none a member)"
            if kind == "ideal"
            else "copy of the training file"
        )
        figure = (
            "" if anchor.out_of_sample is None else f"out of sample {_out_of_sample(anchor.out_of_sample)}; "
        )
        lines.append(f"  anchor, {what}: {figure}in sample {anchor.in_sample:.3f}")
    for why in result.skipped:
        lines.append(f"  not measured: {why}")
    return lines


def _out_of_sample(crossed) -> str:
    """``0.126 (95 % interval -0.119 to 0.366; 5 folds): TPR .., FPR ..; AUC ..; ...``"""
    low, high = crossed.interval
    at = "; ".join(
        f"TPR at FPR <= {level}: {value:.3f}"
        if value is not None
        else f"no FPR of {level} with {crossed.n_holdout} held-out records"
        for level, value in crossed.tpr_at_fpr.items()
    )
    return (
        f"{crossed.advantage:.3f} (95 % interval {low:.3f} to {high:.3f}; {crossed.folds} folds): "
        f"TPR {crossed.tpr:.3f}, FPR {crossed.fpr:.3f}; AUC {crossed.auc:.3f}; {at}"
    )
