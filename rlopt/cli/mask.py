"""``rlopt mask`` and ``rlopt data``: make the files the other commands read."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from rlopt.cli._app import Command, commands, summary
from rlopt.cli._masking import masking_options
from rlopt.cli._options import FILES, Seed, check_method, check_outputs, split, write_table
from rlopt.data._bundled import BUNDLED_FILES
from rlopt.exceptions import InputError
from rlopt.masking import MASKING_METHODS, PUBLISHED_FILES, build, load_recipe, published_recipe
from rlopt.masking.grammar import spec_from_text
from rlopt.masking.methods import RandomizedResponseSpec, fully_synthetic

app = commands()

_METHODS = ", ".join(
    f"{m.name} ({', '.join(m.aliases)})" if m.aliases else m.name for m in MASKING_METHODS.values()
)


# (over 60 lines by its signature: typer declares the command's options as its parameters)
@app.command(
    cls=Command,
    short_help=summary("mask"),
    epilog="Example: rlopt mask data.csv --method rank_swap --p 10 --seed 1 --out masked.csv; "
    "rlopt mask --preset M4-33 --out-dir m433",
)
@masking_options("Masking parameters")
def mask(
    input: Annotated[
        Path | None, typer.Argument(metavar="INPUT", help="the file to mask, CSV, TSV or Parquet")
    ] = None,
    method: Annotated[
        str | None,
        typer.Option(metavar="METHOD", callback=check_method, help=f"the masking method: {_METHODS}"),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="the masked file (with INPUT), CSV or Parquet by suffix"),
    ] = None,
    columns: Annotated[
        str | None,
        typer.Option(
            metavar="A,B,...",
            help="the columns to mask (default: all; PRAM: the categorical ones; suppression: "
            "the quasi-identifiers; partial synthesis: those to synthesize, required; fully "
            "synthetic: those to model and release)",
        ),
    ] = None,
    seed: Seed = 0,
    preset: Annotated[
        str | None,
        typer.Option(
            metavar="NAME", help=f"a published test file: {', '.join(PUBLISHED_FILES)}", rich_help_panel=FILES
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(metavar="YAML", help="a recipe file (see configs/)", rich_help_panel=FILES),
    ] = None,
    sample_seed: Annotated[
        int | None, typer.Option(metavar="SEED", help="record sample seed of --preset", rich_help_panel=FILES)
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            metavar="FOLDER",
            help="folder for original.csv, masked.csv, recipe.json (with --preset or --config)",
            rich_help_panel=FILES,
        ),
    ] = None,
    *,
    masking: dict[str, Any],
) -> None:
    """Mask INPUT with --method into --out, or build a published test file (--preset)
    or a recipe (--config) into --out-dir. MDAV on a large file is partitioned MDAV
    (linear in the records; a note says when)."""
    from rlopt.data import load_table
    from rlopt.masking.mdav import EXACT_MDAV_RECORDS, PART_RECORDS

    if preset is not None or config is not None:
        if input is not None or method is not None or preset is not None and config is not None:
            raise InputError("give either INPUT with --method, or one of --preset/--config")
        if out_dir is None or out is not None:
            raise InputError("--preset/--config write three files: give --out-dir FOLDER (not --out)")
        _build_recipe(preset, config, sample_seed, out_dir)
        return
    if input is None or method is None or out is None or out_dir is not None:
        raise InputError(
            f"give INPUT, --method ({', '.join(MASKING_METHODS)}) and --out FILE, or --preset/--config with --out-dir"
        )
    check_outputs(out=out)
    spec = spec_from_text(method, masking, seed=seed)
    frame = load_table(input)
    masked = spec.apply(frame, split(columns))
    lines = _randomized_response(spec, frame, masked, split(columns))  # a singular matrix: before writing
    write_table(masked, out)
    if fully_synthetic(spec):
        typer.echo(f"wrote {len(masked)} fully synthetic records with {spec.method} -> {out}")
    else:
        typer.echo(f"masked {len(masked)} records with {spec.method} -> {out}")
    if spec.method == "mdav" and len(frame) > EXACT_MDAV_RECORDS:
        typer.echo(
            f"note: {len(frame)} records > {EXACT_MDAV_RECORDS}: partitioned MDAV (exact MDAV inside "
            f"median-cut parts of at most {PART_RECORDS} records; every group has k to 2k-1 records)",
            err=True,
        )
    for line in lines:
        typer.echo(line)


def _randomized_response(spec, frame, masked, columns) -> list[str]:
    """The data holder's figures of each randomized-response column (none for other methods)."""
    from rlopt.masking.categorical import randomized_response_report

    if not isinstance(spec, RandomizedResponseSpec):
        return []
    lines = []
    for name, published in spec.published(frame, columns).items():
        report = randomized_response_report(masked[name], published)
        estimate = ", ".join(f"{level} {share:.3f}" for level, share in report["estimate"].items())
        deniability = ", ".join(f"{level} {bits:.2f}" for level, bits in report["deniability_bits"].items())
        lines.append(
            f"{name}: epsilon {report['epsilon']:.3f}; estimated true shares {estimate}; "
            f"deniability H(X|Y=v) in bits {deniability}"
        )
    return lines


def _build_recipe(preset: str | None, config: Path | None, sample_seed: int | None, out_dir: Path) -> None:
    if preset is not None:
        recipe = published_recipe(preset, sample_seed=sample_seed or 0)
    else:
        assert config is not None  # called with --preset or --config
        recipe = load_recipe(config)
        if sample_seed is not None:
            recipe = recipe.model_copy(update={"sample_seed": sample_seed})
    original, masked = build(recipe)
    write_table(original, out_dir / "original.csv")
    write_table(masked, out_dir / "masked.csv")
    (out_dir / "recipe.json").write_text(recipe.model_dump_json(indent=2))
    typer.echo(
        f"{recipe.name}: {len(original)} records x {original.shape[1]} attributes "
        f"-> {out_dir / 'original.csv'}, {out_dir / 'masked.csv'}"
    )


BundledData = StrEnum("BundledData", [(name, name) for name in BUNDLED_FILES])  # type: ignore[misc]
"""The names of the bundled files, as the argument's choices."""
_DESCRIBED = [f"{name} ({bundled.description})" for name, bundled in BUNDLED_FILES.items()]
_BUNDLED_HELP = f"{', '.join(_DESCRIBED[:-1])} or {_DESCRIBED[-1]}"


@app.command(
    name="data", cls=Command, short_help=summary("data"), epilog="Example: rlopt data census --out data.csv"
)
def data_command(
    name: Annotated[
        BundledData,
        typer.Argument(
            metavar="NAME",
            help=_BUNDLED_HELP,
        ),
    ],
    out: Annotated[Path, typer.Option(metavar="FILE", help="output file, CSV (or Parquet by suffix)")],
    columns: Annotated[
        str | None,
        typer.Option(
            metavar="A,B,...",
            help="the columns (default: Census's 13 and EIA's 10 numerical attributes; every column "
            "of acs12 and cps1985)",
        ),
    ] = None,
    records: Annotated[
        int | None,
        typer.Option(metavar="N", help="draw N records uniformly without replacement (kept in file order)"),
    ] = None,
    seed: Annotated[int, typer.Option(metavar="SEED", help="seed of the --records sample")] = 0,
) -> None:
    """Write a bundled file (the CASC Census and EIA, the acs12 and CPS1985 survey
    extracts), e.g. as input of the examples."""
    from rlopt.masking import sample_records

    check_outputs(out=out)
    bundled = BUNDLED_FILES[name.value]
    frame = bundled.load()
    default = bundled.attributes
    cols = split(columns) or list(default or frame.columns)
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise InputError(
            f"column(s) {missing} not in the {name.value} file; available: {list(map(str, frame.columns))}"
        )
    if records is not None and records < 2:
        raise InputError(f"--records {records}; expected at least 2")
    frame = sample_records(frame[cols], records, seed)
    write_table(frame, out)
    typer.echo(f"{name.value}: {len(frame)} records x {frame.shape[1]} attributes -> {out}")
    ordered = {c: levels for c, levels in bundled.ordinal.items() if c in cols}
    if ordered:  # a CSV keeps no order of categories
        spec = "; ".join(f"{c}:{'<'.join(levels)}" for c, levels in ordered.items())
        typer.echo(f"ordered categories: pass --ordinal {spec!r} to link, learn, risk and compare")
