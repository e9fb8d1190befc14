"""The ``rlopt`` command line."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.console import Console
from rich.text import Text

from rlopt.attacks import ATTACKS, attack_for, plan_attack
from rlopt.data import load_table, validate_pair
from rlopt.exceptions import InputError, Interrupted, SolverError
from rlopt.families import LEARNED, get_learned_family
from rlopt.learn import LearnedDistanceLinkage, describe_lower
from rlopt.linkage import dbrl, pld
from rlopt.linkage.probabilistic import PLD_MAX_RECORDS
from rlopt.masking import (
    MASKING_METHODS,
    PUBLISHED_FILES,
    MaskingSpec,
    RandomizedResponseSpec,
    build,
    load_recipe,
    masking_method,
    masking_spec,
    published_recipe,
)
from rlopt.masking.swapping import VARIANTS
from rlopt.status import Status

app = typer.Typer(
    name="rlopt",
    no_args_is_help=True,
    add_completion=False,
    help="Worst-case re-identification risk of masked microdata.",
)


class SwapVariant(StrEnum):
    plain = "plain"
    p_buckets = "p-buckets"
    p_distribution = "p-distribution"


assert tuple(SwapVariant) == VARIANTS, "SwapVariant must list rlopt.masking.swapping.VARIANTS"


class BaselineDistance(StrEnum):
    am = "am"
    md = "md"
    pld = "pld"


class AttackDistance(StrEnum):  # inside the intersections: a distance, not PLD
    am = "am"
    md = "md"


class Table(StrEnum):
    tables_1_2 = "1"
    also_tables_1_2 = "2"  # one grid gives both tables
    table_5 = "5"


# -- choices read from the registries, checked while parsing (a usage error, exit 2) --
_LEARNED_LIST = ", ".join(LEARNED)  # the families registered when the CLI was built
_PARAMETERS = ", ".join(f"{m.name}: {m.parameter}" for m in MASKING_METHODS.values())
_ALIASES = "; ".join(f"{m.name}: {', '.join(m.aliases)}" for m in MASKING_METHODS.values() if m.aliases)


def _parsed(check: Callable[[str], Any]) -> Callable[[Any], Any]:
    """A click callback: ``check(value)`` (None passes), an InputError a usage error."""

    def callback(value):
        if value is None:
            return None
        try:
            return check(value)
        except InputError as exc:
            raise typer.BadParameter(str(exc)) from None

    return callback


def _family_names(text: str) -> str:
    for name in _names(text):
        get_learned_family(name)
    return text


_method = _parsed(lambda value: masking_method(value).name)
_attacked_method = _parsed(lambda value: attack_for(value).masking)
_families = _parsed(_family_names)
_family = _parsed(lambda value: get_learned_family(value).name)


def _method_option(help: str, *, attacked: bool = False) -> Any:
    """``--method``-like options: a registered masking method (``attacked``: one with a
    transparency attack), aliases accepted, choices listed and checked by the parser."""
    names = ATTACKS if attacked else MASKING_METHODS
    return typer.Option(
        metavar=f"[{'|'.join(names)}]", callback=_attacked_method if attacked else _method, help=help
    )


# -- options shared by commands: one name, one meaning, one default --
JsonOut = Annotated[
    Path | None,
    typer.Option(
        "--json",
        metavar="PATH|-",
        help="write the figures as one JSON object to PATH ('-': standard output, the summary then on stderr)",
    ),
]
Columns = Annotated[str | None, typer.Option(help="comma-separated attributes (default: all shared)")]
Ordinal = Annotated[
    str | None,
    typer.Option(
        help="ordered categorical attributes, levels low to high: 'edu:hs<college<grad; size' "
        "(no levels: the sorted values)"
    ),
]
Nominal = Annotated[
    str | None, typer.Option(help="comma-separated attributes compared by category (0/1), even if numbers")
]


class MissingPolicy(StrEnum):
    category = "category"
    drop = "drop"


Missing = Annotated[
    MissingPolicy,
    typer.Option(help="a blank in a categorical attribute: a category of its own, or drop its record"),
]
IdColumn = Annotated[str | None, typer.Option(help="align records by this identifier column")]
TimeLimit = Annotated[
    float,
    typer.Option(help="seconds per MILP, 0 for none; a MILP stopped by it reports an interval", min=0),
]
Threads = Annotated[int, typer.Option(help="HiGHS threads per MILP", min=1)]
Margin = Annotated[float, typer.Option(help="margin eps of every learned re-identification (0: ties count)")]
GroupSize = Annotated[int | None, typer.Option(help="MDAV group size k (all attributes in one group)", min=1)]
Groups = Annotated[str | None, typer.Option(help="MDAV attribute groups with their k, e.g. 'A,B:3;C,D:8'")]
SwapP = Annotated[
    float | None, typer.Option(help="rank swapping range in percent of the records, 0 < p <= 100")
]
SwapWindow = Annotated[int | None, typer.Option(help="rank swapping range in ranks (instead of --p)")]
VarianceRatio = Annotated[
    float | None, typer.Option(help="noise: Var(noise) = ratio x Var(attribute) (SPEC's k)")
]
OutDir = Annotated[Path | None, typer.Option(help="results folder")]
FuzzyC = Annotated[
    int | None, typer.Option("--c", help="fuzzy microaggregation: number of clusters c", min=1)
]
FuzzyM1 = Annotated[float | None, typer.Option(help="fuzzy microaggregation: fuzzifier m1 > 1 (default 2)")]
Theta = Annotated[
    float | None, typer.Option(help="PRAM, randomized response: probability of keeping a value")
]
Invariant = Annotated[
    bool | None, typer.Option("--invariant", help="PRAM: invariant (expected frequencies kept)")
]
Matrix = Annotated[
    list[str] | None,
    typer.Option(help="PRAM: COLUMN=PATH, a CSV transition matrix (rows true, columns released)"),
]
FuzzyM2 = Annotated[
    float | None,
    typer.Option(help="fuzzy microaggregation: fuzzifier m2 > 1 of the drawn memberships (default 2)"),
]


@dataclass(frozen=True)
class Solving:
    """The solving options every command shares, as the commands pass them on."""

    margin: float
    time_limit: float | None
    threads: int
    seed: int


TIME_LIMIT = 60.0
"""Seconds per MILP unless --time-limit says otherwise, in every command."""
THREADS = 1


def _seconds(time_limit: float) -> float | None:
    """``--time-limit 0``: no limit."""
    return None if time_limit == 0 else time_limit


def _masking(method: str, *, seed: int | None = None, **given) -> MaskingSpec:
    """The typed spec of ``--method`` from the masking options given (``None``: not
    given); an option the method does not take is an error naming its own."""
    fields = set(MASKING_METHODS[method].spec.model_fields)
    stray = [
        f"--{name.replace('_', '-')}"
        for name, value in given.items()
        if value is not None and name not in fields
    ]
    if stray:
        raise InputError(
            f"{', '.join(stray)}: not a parameter of {method}; its parameters: "
            + ", ".join(f"--{f.replace('_', '-')}" for f in sorted(fields - {"method", "seed"}))
        )
    if given.get("groups") is not None:
        given["groups"] = parse_groups(given["groups"])  # (columns, size) pairs: the spec names the size
    if given.get("bounds") is not None:
        given["bounds"] = parse_bounds(given["bounds"])
    if given.get("matrices") is not None:
        given["matrices"] = _read_matrices(given["matrices"])
    if given.get("merge") is not None:
        given["merge"] = parse_merges(given["merge"])
    for name in ("top", "bottom", "base"):
        if given.get(name) is not None:
            given[name] = parse_thresholds(given[name], f"--{name}")
    if "seed" in fields:
        given["seed"] = seed
    return masking_spec(method, **given)


def parse_bounds(text: str) -> dict[str, tuple[float, float]]:
    """``"A:0:100;B:-5:5"`` into ``{"A": (0.0, 100.0), "B": (-5.0, 5.0)}``."""
    bounds = {}
    for part in text.split(";"):
        column, _, rest = part.strip().partition(":")
        low, _, high = rest.partition(":")
        try:
            if not column or ":" in high:
                raise ValueError
            bounds[column] = (float(low), float(high))
        except ValueError:
            raise InputError(
                f"domain {part!r} in --bounds {text!r}; expected COLUMN:LOWER:UPPER parts separated by ';'"
            ) from None
    return bounds


def parse_merges(text: str) -> dict[str, list[list[str]]]:
    """``"edu=college|grad; race=asian|other"`` into ``{"edu": [["college", "grad"]], ...}``."""
    merges: dict[str, list[list[str]]] = {}
    for part in (p.strip() for p in text.split(";") if p.strip()):
        column, _, levels = part.partition("=")
        group = [level.strip() for level in levels.split("|") if level.strip()]
        if not column.strip() or len(group) < 2:
            raise InputError(
                f"merge {part!r} in --merge {text!r}; expected COLUMN=CATEGORY|CATEGORY[|...] parts separated by ';'"
            )
        merges.setdefault(column.strip(), []).append(group)
    return merges


def parse_thresholds(text: str, option: str) -> dict[str, float]:
    """``"income:100000;age:5"`` into ``{"income": 100000.0, "age": 5.0}``."""
    out = {}
    for part in (p.strip() for p in text.split(";") if p.strip()):
        column, _, value = part.partition(":")
        try:
            out[column.strip()] = float(value)
        except ValueError:
            raise InputError(
                f"{part!r} in {option} {text!r}; expected COLUMN:NUMBER parts separated by ';'"
            ) from None
        if not column.strip():
            raise InputError(f"{part!r} in {option} {text!r}; expected COLUMN:NUMBER parts separated by ';'")
    return out


def _read_matrices(items: list[str]) -> dict[str, dict[str, dict[str, float]]]:
    """``--matrix COLUMN=PATH`` (a CSV: first column the true category, header the
    released categories) into the spec's ``{column: {true: {released: p}}}``."""
    out = {}
    for item in items:
        column, _, path = item.partition("=")
        if not column or not path:
            raise InputError(f"--matrix {item!r}; expected COLUMN=PATH of a CSV transition matrix")
        table = load_table(Path(path))
        table = table.set_index(table.columns[0])
        out[column] = {str(u): {str(v): float(p) for v, p in row.items()} for u, row in table.iterrows()}
    return out


def _names(text: str) -> list[str]:
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise InputError(f"empty name in the list {text!r}; expected names separated by commas")
    return items


def _split(text: str | None) -> list[str] | None:
    return None if text is None else _names(text)


def parse_groups(text: str) -> list[tuple[list[str], int]]:
    """Parse ``"A,B:3;C,D:8"`` into ``[(["A", "B"], 3), (["C", "D"], 8)]``."""
    groups: list[tuple[list[str], int]] = []
    for part in text.split(";"):
        columns, sep, k = part.rpartition(":")
        if not sep or not columns.strip():
            raise InputError(
                f"attribute group {part!r} in --groups {text!r}; expected "
                "COLUMN,COLUMN:K groups separated by ';', e.g. 'A,B:3;C,D:8'"
            )
        try:
            k_value = int(k)
        except ValueError:
            raise InputError(f"group size {k!r} in --groups {text!r}; expected an integer") from None
        groups.append((_names(columns), k_value))
    return groups


def _check_outputs(**paths: Path | None) -> None:
    """Every output path names a file in an existing folder: checked before any work,
    so that no result is lost to a typo at the end (``option_name=path``)."""
    for option, path in paths.items():
        if path is None or str(path) == "-":
            continue
        flag = "--" + option.replace("_", "-")
        if path.is_dir():
            raise InputError(f"{flag} {str(path)!r} is a folder; expected a file name")
        if not path.parent.is_dir():
            raise InputError(
                f"{flag} {str(path)!r}: the folder {str(path.parent)!r} does not "
                "exist; expected a file in an existing folder"
            )


def _emit_json(target: Path, payload: dict) -> None:
    """``--json PATH``: the figures as one JSON object in PATH, or on stdout for ``-``."""
    if str(target) == "-":
        typer.echo(json.dumps(payload, default=_plain))
    else:
        target.write_text(json.dumps(payload, indent=1, default=_plain))
        typer.echo(f"figures -> {target}", err=True)


def _plain(value):
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


def _summary(json_out: Path | None) -> Callable[[str], None]:
    """Where the human summary goes: stdout, or stderr when the JSON takes stdout."""
    to_stderr = json_out is not None and str(json_out) == "-"
    return lambda line: typer.echo(line, err=to_stderr)


def _write(frame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() in (".parquet", ".pq"):
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)


@app.command(
    epilog="Example: rlopt mask data.csv --method rank_swap --p 10 --seed 1 --out masked-rs.csv; "
    "rlopt mask --preset M4-33 --out-dir m433"
)
def mask(
    input: Annotated[Path | None, typer.Argument(help="CSV or Parquet file to mask")] = None,
    out: Annotated[
        Path | None, typer.Option(help="the masked file (with INPUT), CSV or Parquet by suffix")
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(help="folder for original.csv, masked.csv, recipe.json (with --preset/--config)"),
    ] = None,
    method: Annotated[
        str | None,
        _method_option(f"masking method (aliases {_ALIASES})"),
    ] = None,
    groups: Groups = None,
    k: GroupSize = None,
    p: SwapP = None,
    window: SwapWindow = None,
    variant: Annotated[SwapVariant | None, typer.Option(help="rank swapping variant (default plain)")] = None,
    variance_ratio: VarianceRatio = None,
    c: FuzzyC = None,
    m1: FuzzyM1 = None,
    m2: FuzzyM2 = None,
    epsilon: Annotated[float | None, typer.Option(help="DP methods: the privacy budget epsilon > 0")] = None,
    bounds: Annotated[
        str | None,
        typer.Option(help="DP methods: the published domain, 'A:0:100;B:-5:5' (default: the data's range)"),
    ] = None,
    theta: Theta = None,
    invariant: Invariant = None,
    matrix: Matrix = None,
    merge: Annotated[
        str | None, typer.Option(help="recoding: merge categories, 'edu=college|grad; race=asian|other'")
    ] = None,
    top: Annotated[str | None, typer.Option(help="recoding: top-code, 'income:100000'")] = None,
    bottom: Annotated[str | None, typer.Option(help="recoding: bottom-code, 'age:18'")] = None,
    base: Annotated[str | None, typer.Option(help="recoding: round to a base, 'age:5;income:1000'")] = None,
    columns: Annotated[
        str | None,
        typer.Option(
            help="comma-separated columns to mask (default: all; PRAM: the categorical ones; "
            "suppression: the quasi-identifiers)"
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="random seed (rank swapping, noise, PRAM, ...)")] = 0,
    preset: Annotated[
        str | None, typer.Option(help=f"a published file: {', '.join(PUBLISHED_FILES)}")
    ] = None,
    config: Annotated[Path | None, typer.Option(help="a recipe YAML file (see configs/)")] = None,
    sample_seed: Annotated[int | None, typer.Option(help="record sample seed for --preset")] = None,
) -> None:
    """Mask a file (INPUT, --method, --out), or build a published test file (--preset) or
    a recipe (--config) into --out-dir."""
    # (over 60 lines only by its documented options: the body is short)
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
    _check_outputs(out=out)
    spec = _masking(
        method,
        k=k,
        groups=groups,
        p=p,
        window=window,
        variant=None if variant is None else variant.value,
        variance_ratio=variance_ratio,
        c=c,
        m1=m1,
        m2=m2,
        epsilon=epsilon,
        bounds=bounds,
        theta=theta,
        invariant=invariant,
        matrices=matrix or None,
        merge=merge,
        top=top,
        bottom=bottom,
        base=base,
        seed=seed,
    )
    frame = load_table(input)
    masked = spec.apply(frame, _split(columns))
    lines = _randomized_response(spec, frame, masked, _split(columns))  # a singular matrix: before writing
    _write(masked, out)
    typer.echo(f"masked {len(masked)} records with {spec.method} -> {out}")
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
    _write(original, out_dir / "original.csv")
    _write(masked, out_dir / "masked.csv")
    (out_dir / "recipe.json").write_text(recipe.model_dump_json(indent=2))
    typer.echo(
        f"{recipe.name}: {len(original)} records x {original.shape[1]} attributes "
        f"-> {out_dir / 'original.csv'}, {out_dir / 'masked.csv'}"
    )


class BundledData(StrEnum):
    census = "census"
    eia = "eia"
    acs12 = "acs12"
    cps1985 = "cps1985"


@app.command(name="data", epilog="Example: rlopt data census --out data.csv")
def data_command(
    name: Annotated[
        BundledData,
        typer.Argument(
            help="bundled file: census (1080 x 13), eia (4092 records), acs12 (2000 x 13, mixed, "
            "with blanks) or cps1985 (534 x 11, mixed)"
        ),
    ],
    out: Annotated[Path, typer.Option(help="output file, CSV (or Parquet by suffix)")],
    columns: Annotated[
        str | None,
        typer.Option(
            help="comma-separated columns (default: Census's 13 and EIA's 10 numerical attributes; "
            "every column of acs12 and cps1985)"
        ),
    ] = None,
    records: Annotated[
        int | None,
        typer.Option(help="draw this many records uniformly without replacement (kept in file order)"),
    ] = None,
    seed: Annotated[int, typer.Option(help="seed of the --records sample")] = 0,
) -> None:
    """Write a bundled file (the CASC Census and EIA, the acs12 and CPS1985 survey
    extracts), e.g. as input of the examples."""
    from rlopt.data import (
        ACS12_ORDINAL,
        CENSUS_ATTRIBUTES,
        EIA_ATTRIBUTES,
        load_acs12,
        load_census,
        load_cps1985,
        load_eia,
    )
    from rlopt.masking import sample_records

    _check_outputs(out=out)
    loaders = {
        BundledData.census: (load_census, CENSUS_ATTRIBUTES),
        BundledData.eia: (load_eia, EIA_ATTRIBUTES),
        BundledData.acs12: (load_acs12, None),
        BundledData.cps1985: (load_cps1985, None),
    }
    load, default = loaders[name]
    frame = load()
    cols = _split(columns) or list(default or frame.columns)
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise InputError(
            f"column(s) {missing} not in the {name.value} file; available: {list(map(str, frame.columns))}"
        )
    if records is not None and records < 2:
        raise InputError(f"--records {records}; expected at least 2")
    frame = sample_records(frame[cols], records, seed)
    _write(frame, out)
    typer.echo(f"{name.value}: {len(frame)} records x {frame.shape[1]} attributes -> {out}")
    ordered = {c: levels for c, levels in ACS12_ORDINAL.items() if name is BundledData.acs12 and c in cols}
    if ordered:  # a CSV keeps no order of categories
        spec = "; ".join(f"{c}:{'<'.join(levels)}" for c, levels in ordered.items())
        typer.echo(f"ordered categories: pass --ordinal {spec!r} to link, learn, risk and compare")


@app.command(epilog="Example: rlopt link data.csv masked-rs.csv --distance md --json -")
def link(
    original: Annotated[Path, typer.Argument(help="original file (the intruder's), CSV or Parquet")],
    masked: Annotated[Path, typer.Argument(help="masked file, CSV or Parquet")],
    distance: Annotated[BaselineDistance, typer.Option(help="distance")] = BaselineDistance.am,
    columns: Columns = None,
    id_column: IdColumn = None,
    drop_nonfinite: Annotated[
        bool, typer.Option(help="drop records with NaN/inf instead of failing")
    ] = False,
    ordinal: Ordinal = None,
    nominal: Nominal = None,
    missing: Missing = MissingPolicy.category,
    json_out: JsonOut = None,
    jobs: Annotated[int, typer.Option(help="local threads of the brute-force linkage", min=1)] = 1,
    scheduler: Annotated[
        str | None,
        typer.Option(help="Dask scheduler address for the brute-force linkage, e.g. tcp://host:8786"),
    ] = None,
    progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress", help="progress bar on stderr (default: when it is a terminal)"
        ),
    ] = None,
) -> None:
    """Record linkage (distance-based, or probabilistic with --distance pld): how many
    masked records link to their original. am and md on numeric files use an exact
    nearest-neighbour search (from 2000 records); other cases every pair, over --jobs
    threads or a Dask --scheduler."""
    _check_outputs(json=json_out)
    say = _summary(json_out)
    if distance is BaselineDistance.pld:
        if drop_nonfinite:
            raise InputError("--drop-nonfinite is not available with --distance pld")
        original_table, masked_table = load_table(original), load_table(masked)
        if len(original_table) > PLD_MAX_RECORDS:
            typer.echo(
                f"warning: pld on {len(original_table)} records: its one-to-one assignment is cubic in "
                f"the records (rlopt risk skips it above {PLD_MAX_RECORDS}); this may take hours, Ctrl-C "
                "stops it",
                err=True,
            )
        try:
            prob = pld(
                original_table,
                masked_table,
                columns=_split(columns),
                id_column=id_column,
                kinds=_kinds(ordinal, nominal, missing),
            )
        except KeyboardInterrupt:
            raise _interrupted("the linkage was not finished; no figure") from None
        _say_kinds(say, prob.kinds)
        say(
            f"pld: {prob.n_correct} of {prob.n_records} records re-identified "
            f"({100 * prob.rate:.2f}%), EM {prob.em.n_iter} iterations"
        )
        if json_out is not None:
            _emit_json(json_out, prob.to_dict())
        return
    try:
        with _progress_bar("linking records", progress) as advance:
            linked = dbrl(
                load_table(original),
                load_table(masked),
                distance=distance.value,
                columns=_split(columns),
                id_column=id_column,
                drop_nonfinite=drop_nonfinite,
                kinds=_kinds(ordinal, nominal, missing),
                jobs=jobs,
                scheduler=scheduler,
                progress=advance,
            )
    except KeyboardInterrupt:
        raise _interrupted("the linkage was not finished; no figure") from None
    _say_kinds(say, linked.kinds)
    say(
        f"{linked.distance}: {linked.n_correct} of {linked.n_records} records "
        f"re-identified ({100 * linked.rate:.2f}%), {linked.n_ties} tie(s) not counted"
    )
    if json_out is not None:
        _emit_json(json_out, linked.to_dict())


@contextmanager
def _progress_bar(label: str, show: bool | None):
    """A ``progress(done, total)`` callback drawing a bar on stderr (``show`` None: when
    stderr is a terminal), or None."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not (console.is_terminal if show is None else show):
        yield None
        return
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )
    task = bar.add_task(label, total=None)

    started = False

    def advance(done: int, total: int) -> None:
        nonlocal started
        if not started:  # at the first report, so that an input error comes without an empty bar
            bar.start()
            started = True
        bar.update(task, completed=done, total=total)

    try:
        yield advance
    finally:
        if started:
            bar.stop()


@app.command(
    epilog="Example: rlopt attack original.csv swapped.csv --method rank_swap --p 10 --json attack.json"
)
def attack(
    original: Annotated[Path, typer.Argument(help="original file (the intruder's), CSV or Parquet")],
    masked: Annotated[Path, typer.Argument(help="masked file, CSV or Parquet")],
    method: Annotated[
        str,
        _method_option(f"the published masking method (aliases {_ALIASES})", attacked=True),
    ],
    p: Annotated[
        float | None, typer.Option(help="rank swapping: published p in percent (or an upper bound)")
    ] = None,
    window: Annotated[
        int | None, typer.Option(help="rank swapping: published range in ranks (instead of --p)")
    ] = None,
    k: GroupSize = None,
    groups: Groups = None,
    c: FuzzyC = None,
    m2: FuzzyM2 = None,
    theta: Theta = None,
    invariant: Invariant = None,
    matrix: Matrix = None,
    distance: Annotated[
        AttackDistance, typer.Option(help="distance inside the intersections")
    ] = AttackDistance.am,
    columns: Columns = None,
    id_column: IdColumn = None,
    ordinal: Ordinal = None,
    nominal: Nominal = None,
    missing: Missing = MissingPolicy.category,
    json_out: JsonOut = None,
) -> None:
    """Transparency attack: narrow each record's candidates with the published masking
    parameters, then link inside the intersection (PRAM, fuzzy: rank by posterior)."""
    _check_outputs(json=json_out)
    say = _summary(json_out)
    spec = _masking(
        method,
        k=k,
        groups=groups,
        p=p,
        window=window,
        c=c,
        m2=m2,
        theta=theta,
        invariant=invariant,
        matrices=matrix,
    )
    data = validate_pair(
        load_table(original),
        load_table(masked),
        columns=_split(columns),
        id_column=id_column,
        kinds=_kinds(ordinal, nominal, missing),
    )
    _say_kinds(say, data.kinds)
    result = plan_attack(data, spec)(distance.value)
    for line in result.summary():
        say(line)
    if json_out is not None:
        _emit_json(json_out, result.to_dict())


@app.command(
    epilog="Example: rlopt learn original.csv masked.csv --family wm --time-limit 60 --params-out wm.json"
)
def learn(
    original: Annotated[Path, typer.Argument(help="original file (the intruder's), CSV or Parquet")],
    masked: Annotated[Path, typer.Argument(help="masked file, CSV or Parquet")],
    family: Annotated[str, typer.Option(callback=_family, help=f"distance family: {_LEARNED_LIST}")] = "wm",
    columns: Columns = None,
    id_column: IdColumn = None,
    margin: Margin = 1e-5,
    time_limit: TimeLimit = TIME_LIMIT,
    rel_gap: Annotated[
        float, typer.Option(help="relative MIP gap at which to stop (0: prove the optimum)")
    ] = 0.0,
    threads: Threads = THREADS,
    log: Annotated[bool, typer.Option(help="show HiGHS's log")] = False,
    delta: Annotated[
        float | None, typer.Option(help="lower bound delta of metric variants (wm_m, ci_m, sb_pd)")
    ] = None,
    published_relaxation: Annotated[
        bool, typer.Option(help="ci_m: submodularity on pairs of attributes only")
    ] = False,
    k_additive: Annotated[
        int | None,
        typer.Option("--k-additive", help="ci_k: the largest attribute set with a Möbius mass (default 2)"),
    ] = None,
    drop_nonfinite: Annotated[
        bool, typer.Option(help="drop records with NaN/inf instead of failing")
    ] = False,
    ordinal: Ordinal = None,
    nominal: Nominal = None,
    missing: Missing = MissingPolicy.category,
    params_out: Annotated[Path | None, typer.Option(help="write the learned parameters as JSON")] = None,
    export: Annotated[Path | None, typer.Option(help="write the MILP as .lp or .mps")] = None,
    naive: Annotated[bool, typer.Option(help="the naive model: every pair, one big-C, no reduction")] = False,
    verify: Annotated[
        bool,
        typer.Option(
            help="re-prove a claimed optimum with the plain model (a second solve, same time limit)"
        ),
    ] = False,
    json_out: JsonOut = None,
    progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress",
            help="print the interval on stderr each time it narrows (default: when stderr is a terminal)",
        ),
    ] = None,
) -> None:
    """Learn the family's distance that re-identifies the most records (MILP, HiGHS)."""
    # (over 60 lines only by its documented options: the body is the steps below)
    _check_outputs(params_out=params_out, export=export, json=json_out)
    options: dict[str, Any] = {"delta": delta, "k": k_additive}
    options = {key: value for key, value in options.items() if value is not None}
    if published_relaxation:
        options["published_relaxation"] = True
    naive_options: dict[str, Any] = {"big_c": "uniform", "reductions": "none"} if naive else {}
    learner = LearnedDistanceLinkage(
        family,
        margin=margin,
        time_limit=_seconds(time_limit),
        rel_gap=rel_gap,
        threads=threads,
        log=log,
        family_options=options or None,
        verify=verify,
        **naive_options,
    )
    console = Console(stderr=True, soft_wrap=True, highlight=False)
    show = console.is_terminal if progress is None else progress
    try:
        learner.fit(
            load_table(original),
            load_table(masked),
            columns=_split(columns),
            id_column=id_column,
            drop_nonfinite=drop_nonfinite,
            kinds=_kinds(ordinal, nominal, missing),
            export=export,
            progress=(lambda event: console.print(_interval_line(event))) if show else None,
        )
        result, interrupted = learner.result_, False
    except KeyboardInterrupt as exc:  # Ctrl-C: the interval so far (status interrupted), exit 130
        partial = getattr(exc, "partial", None)
        if partial is None or partial.n_correct_verified is None:
            raise _interrupted(f"{family}: nothing verified yet") from None
        result, interrupted = partial, True
    if params_out is not None and not interrupted and learner.distance_ is not None:
        learner.save_params(params_out)
    kinds = getattr(learner, "kinds_", ())
    if json_out is not None:
        _emit_json(
            json_out, {**result.to_dict(), **({"kinds": [k.to_dict() for k in kinds]} if kinds else {})}
        )
    _say_kinds(_summary(json_out), kinds)
    _summary(json_out)(_learned_line(result))
    if result.verification is not None:
        _summary(json_out)(_verification_line(result.verification))
    if interrupted:
        raise typer.Exit(130)


def _learned_line(result) -> str:
    """``rlopt learn``'s summary: the optimum or the interval, the recounts, the times."""
    if result.status == Status.OPTIMAL:
        figure = f"{result.n_correct_verified} of {result.n_records} (proven optimal)"
    else:
        figure = (
            f"between {result.n_correct_verified} and {result.bound} of {result.n_records} "
            f"({result.status}, gap {result.gap if result.gap is None else round(result.gap, 4)})"
        )
    at_risk = "" if result.n_at_risk is None else f"; {result.n_at_risk} records at risk under some parameter"
    if describe_lower(result.lower_source):
        at_risk += f"; {describe_lower(result.lower_source)}"
    return (
        f"{result.family}: {figure} records re-identified at margin {result.margin:g}; "
        f"strict count {result.n_correct_strict}{at_risk}; search {result.seconds['search']:.1f}s, "
        f"reduce {result.seconds['reduce']:.1f}s, "
        f"build {result.seconds['build']:.1f}s, solve {result.seconds['solve']:.1f}s"
    )


def _verification_line(v: dict) -> str:
    """``rlopt learn --verify``: what the plain model found."""
    plain = (
        f"optimal {v['n_correct']}"
        if v["status"] == Status.OPTIMAL
        else f"between {v['n_correct']} and {v['bound']} ({v['status']})"
    )
    verdict = {True: "the optimum is confirmed", None: "consistent, not decided within the limit"}[
        v["agrees"]
    ]
    return f"verified by the plain model: {plain} in {v['seconds']:.1f}s; {verdict}"


def _interval_line(event: dict) -> Text:
    """``  12.3 s  [741, 1032]  lower: <its step>  upper: <its step>``: one narrowing of
    the interval of ``rlopt learn`` (an event of :class:`rlopt.milp.certificate.Certificate`)."""
    lower = "-" if event["lower"] is None else event["lower"]
    return Text.assemble(
        f"{event['seconds']:7.1f} s  ",
        (f"[{lower}, {event['upper']}]", "bold"),
        f"  lower: {event['lower_source'] or 'nothing verified yet'}  upper: {event['upper_source']}",
    )


def _kinds(ordinal: str | None, nominal: str | None, missing: MissingPolicy):
    """The declared column kinds of --ordinal/--nominal/--missing."""
    from rlopt.data import KindSpec

    return KindSpec.parse(ordinal, nominal, missing.value)


def _say_kinds(say: Callable[[str], None], kinds) -> None:
    """``kinds: numeric: a, b; edu: ordinal (...)`` when some attribute is categorical."""
    from rlopt.data import describe_kinds

    if any(k.categorical for k in kinds):
        say(f"kinds: {describe_kinds(kinds)}")


def _figure(value) -> str:
    """A loss figure, or "n/a" where the cell has none (e.g. a numeric loss of categories only)."""
    return "n/a" if value is None or (isinstance(value, float) and np.isnan(value)) else f"{value:.4f}"


def _numbers(text: str, option: str) -> list[float]:
    from rlopt.experiments.compare import parse_values

    return parse_values(text, option)


@app.command(epilog="Example: rlopt risk original.csv masked.csv --report report.html --json figures.json")
def risk(
    original: Annotated[Path, typer.Argument(help="original file (the intruder's), CSV or Parquet")],
    masked: Annotated[Path, typer.Argument(help="masked file, CSV or Parquet")],
    families: Annotated[
        str | None,
        typer.Option(
            callback=_families,
            help=f"learned families to assess, comma-separated, of {_LEARNED_LIST} (default: wm,owa,"
            "ci,sb, leaving out those the file does not suit, with ci_k, a lower end for ci, in "
            "place of ci above 12 attributes)",
        ),
    ] = None,
    columns: Columns = None,
    id_column: IdColumn = None,
    ordinal: Ordinal = None,
    nominal: Nominal = None,
    missing: Missing = MissingPolicy.category,
    report: Annotated[Path | None, typer.Option(help="write the HTML report to this file")] = None,
    json_out: JsonOut = None,
    records_csv: Annotated[
        Path | None, typer.Option(help="write the per-record table to this CSV file")
    ] = None,
    time_limit: TimeLimit = TIME_LIMIT,
    margin: Margin = 1e-5,
    threads: Threads = THREADS,
    params: Annotated[
        list[Path] | None, typer.Option(help="saved parameters to evaluate without solving (repeatable)")
    ] = None,
    attack_method: Annotated[
        str | None,
        _method_option("published masking method, for its transparency attack", attacked=True),
    ] = None,
    p: Annotated[float | None, typer.Option(help="attack: published rank swapping p (%)")] = None,
    window: Annotated[int | None, typer.Option(help="attack: published rank swapping range in ranks")] = None,
    k: Annotated[int | None, typer.Option(help="attack: published MDAV k (one group)", min=1)] = None,
    groups: Annotated[
        str | None, typer.Option(help="attack: published MDAV (or fuzzy) groups 'A,B:3;C,D:8'")
    ] = None,
    c: FuzzyC = None,
    m2: FuzzyM2 = None,
    theta: Theta = None,
    invariant: Invariant = None,
    matrix: Matrix = None,
    folds: Annotated[int, typer.Option(help="k-fold generalisation (0: skip)")] = 5,
    generalisation: Annotated[
        str,
        typer.Option(
            callback=_families,
            help=f"families of the generalisation check, comma-separated, of {_LEARNED_LIST}",
        ),
    ] = "wm",
    interval_p: Annotated[float, typer.Option(help="interval disclosure width (%)")] = 10.0,
    tradeoff_method: Annotated[
        str | None,
        _method_option("add a risk-utility trade-off of this masking method"),
    ] = None,
    tradeoff_values: Annotated[
        str | None, typer.Option(help="its parameter values, e.g. '2..10', '2..20:2' or '3|5|8'")
    ] = None,
    seed: Annotated[
        int, typer.Option(help="seed of folds, PLD tie-breaks, the learning sample and the trade-off masking")
    ] = 0,
    learn_sample: Annotated[
        int | None,
        typer.Option(
            help="learn the families on this many records, recount on all (default: all up to 5000 "
            "records, 2000 above)",
            min=2,
        ),
    ] = None,
) -> None:
    """Worst-case re-identification risk of MASKED against ORIGINAL: every family's
    proven optimum (or interval), baselines, attack, records at risk, report."""
    # (over 60 lines only by its documented options: the body is the steps below)
    from rlopt.report import render_risk_report
    from rlopt.risk import assess_risk

    _check_outputs(report=report, json=json_out, records_csv=records_csv)
    say = _summary(json_out)
    if attack_method is None and any(
        v is not None for v in (p, window, k, groups, c, m2, theta, invariant, matrix)
    ):
        raise InputError(
            "--p/--window/--k/--groups/--c/--m2/--theta/--invariant/--matrix describe the published "
            "masking: give --attack-method too"
        )
    published = (
        None
        if attack_method is None
        else _masking(
            attack_method,
            k=k,
            groups=groups,
            p=p,
            window=window,
            c=c,
            m2=m2,
            theta=theta,
            invariant=invariant,
            matrices=matrix,
        )
    )
    a, b = load_table(original), load_table(masked)
    solving = Solving(margin=margin, time_limit=_seconds(time_limit), threads=threads, seed=seed)
    table = _tradeoff_plan(a, tradeoff_method, tradeoff_values, generalisation, columns, solving)
    try:
        result = assess_risk(
            a,
            b,
            families=_split(families),
            columns=_split(columns),
            id_column=id_column,
            params=params or (),
            attack=published,
            folds=folds,
            generalisation_families=_names(generalisation) if folds else (),
            interval_p=interval_p,
            tradeoff=table,
            names=(original.name, masked.name),
            kinds=_kinds(ordinal, nominal, missing),
            progress=lambda m: typer.echo(m, err=True),
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
        _emit_json(json_out, result.figures)
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
    from rlopt.risk import tradeoff_plan

    if method is None:
        if values is not None:
            raise InputError("--tradeoff-values needs --tradeoff-method")
        return None
    if values is None:
        raise InputError("--tradeoff-method needs --tradeoff-values, e.g. '2..10'")
    return tradeoff_plan(
        frame,
        method=method,
        values=_numbers(values, "--tradeoff-values"),
        families=_names(families),
        columns=_split(columns),
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
        say(text)
        if h.get("note"):
            say(f"  ({h['note']})")
    for row in result.figures["families"]:
        _print_family(row, say)


def _print_family(row: dict, say: Callable[[str], None]) -> None:
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
        else f" (bound {row['bound']})"
    )
    rate = "" if row["rate"] is None else f"{100 * row['rate']:.2f}%"
    source = describe_lower(row.get("lower_source"))
    start = "" if source is None else f"; {source}"
    subfamily = " (a lower end for ci)" if row["family"] == "ci_k" else ""
    say(f"  {row['family']}{subfamily}: {rate} {row['status']}{bound}{start}")


def _risk_interrupted(
    exc: KeyboardInterrupt, json_out: Path | None, say: Callable[[str], None]
) -> typer.Exit:
    """Ctrl-C during ``rlopt risk``: print (and with --json write) the finished families
    and the interrupted one's interval."""
    partial = getattr(exc, "partial", None)
    if not isinstance(partial, dict):
        return _interrupted("no family finished")
    for row in partial["families"]:
        _print_family(row, say)
    current = partial["interrupted"]
    if current is not None and current.n_correct_verified is not None:
        say(
            f"  {current.family}: between {current.n_correct_verified} and {current.bound} "
            f"of {current.n_records} (interrupted)"
        )
    if json_out is not None:
        figures = {
            "interrupted": True,
            "baselines": partial["baselines"],
            "families": partial["families"],
            "interrupted_family": None if current is None else current.to_dict(),
        }
        _emit_json(json_out, figures)
    return _interrupted(f"{exc}; the other figures were not computed")


@app.command(
    name="tradeoff", epilog="Example: rlopt tradeoff data.csv --method mdav --values 2..10 --out tradeoff.csv"
)
def tradeoff_command(
    original: Annotated[Path, typer.Argument(help="original file, CSV or Parquet")],
    method: Annotated[
        str,
        _method_option(f"masking method (aliases {_ALIASES})"),
    ],
    values: Annotated[
        str,
        typer.Option(
            help=f"values of the method's parameter ({_PARAMETERS}), e.g. '2..10', '2..20:2' or '3|5|8'"
        ),
    ],
    families: Annotated[
        str, typer.Option(callback=_families, help=f"learned families, comma-separated, of {_LEARNED_LIST}")
    ] = "wm",
    columns: Columns = None,
    time_limit: TimeLimit = TIME_LIMIT,
    margin: Margin = 1e-5,
    threads: Threads = THREADS,
    seed: Annotated[int, typer.Option(help="masking seed")] = 0,
    out: Annotated[Path | None, typer.Option(help="write the table to this CSV file")] = None,
    json_out: JsonOut = None,
) -> None:
    """Risk against utility: worst-case rate and information loss of one masking method
    over a range of its parameter."""
    from rlopt.risk import tradeoff

    _check_outputs(out=out, json=json_out)
    table = tradeoff(
        load_table(original),
        method=method,
        values=_numbers(values, "--values"),
        families=_names(families),
        columns=_split(columns),
        margin=margin,
        time_limit=_seconds(time_limit),
        threads=threads,
        seed=seed,
        progress=lambda m: typer.echo(m, err=True),
    )
    _summary(json_out)(table.to_string(index=False))
    if out is not None:
        table.to_csv(out, index=False)
    if json_out is not None:
        _emit_json(json_out, {"rows": table.to_dict(orient="records")})


@app.command(
    epilog="Example: rlopt compare data.csv --methods 'mdav:k=3..7:2; rank_swap:p=5|15' "
    "--families wm --time-limit 30 --out-dir runs/compare --jobs 2"
)
def compare(
    original: Annotated[Path, typer.Argument(help="original file, CSV or Parquet")],
    methods: Annotated[
        str,
        typer.Option(
            help="methods and parameter values: 'METHOD:PARAM=VALUES,PARAM=VALUES; ...', VALUES a "
            "number, a range '2..10' or '2..20:2', or alternatives '0.05|0.5'; methods: "
            f"{', '.join(MASKING_METHODS)} (their parameters: {_PARAMETERS}, ...)"
        ),
    ],
    out_dir: Annotated[Path, typer.Option(help="results folder (compare.html, compare.csv, results.csv)")],
    families: Annotated[
        str, typer.Option(callback=_families, help=f"learned families, comma-separated, of {_LEARNED_LIST}")
    ] = "wm",
    columns: Columns = None,
    confidential: Annotated[
        str | None,
        typer.Option(
            help="comma-separated confidential attributes: released unchanged, used by the privacy models"
        ),
    ] = None,
    loss: Annotated[
        str,
        typer.Option(
            help="information loss across the map: il1s, sse, pmse, mean_change, variance_change, "
            "covariance_change, correlation_change (numeric attributes), categorical_changed, "
            "categorical_tv (categorical ones)"
        ),
    ] = "il1s",
    time_limit: TimeLimit = TIME_LIMIT,
    margin: Margin = 1e-5,
    threads: Threads = THREADS,
    seed: Annotated[int, typer.Option(help="masking seed")] = 0,
    bounds: Annotated[
        str | None,
        typer.Option(
            help="the published domain for the DP methods, 'A:0:100;B:-5:5' (default: the data's range)"
        ),
    ] = None,
    jobs: Annotated[int, typer.Option(help="local worker processes")] = 1,
    scheduler: Annotated[str | None, typer.Option(help="Dask scheduler address")] = None,
    progress: Annotated[bool, typer.Option(help="progress bar")] = True,
    ordinal: Ordinal = None,
    nominal: Nominal = None,
    missing: Missing = MissingPolicy.category,
) -> None:
    """Every masking method and parameter on one risk-utility map: the worst case (learned
    families, baselines, the method's attack), privacy models, information loss."""
    # (over 60 lines only by its documented options: the body is short)
    from rlopt.experiments.compare import run_compare

    try:
        result = run_compare(
            original,
            methods,
            out_dir,
            families=_names(families),
            columns=_split(columns),
            confidential=_split(confidential) or (),
            time_limit=_seconds(time_limit),
            margin=margin,
            threads=threads,
            seed=seed,
            loss=loss,
            bounds=None if bounds is None else parse_bounds(bounds),
            jobs=jobs,
            scheduler=scheduler,
            progress=progress,
            kinds=_kinds(ordinal, nominal, missing),
        )
    except Interrupted as exc:
        raise _resumable(exc, out_dir) from None
    _print_summary(result.run, out_dir)
    for row, on_front in zip(result.frame.to_dict(orient="records"), result.front):
        interval = "" if row["risk_status"] == Status.PROVEN else f"..{100 * row['risk_upper']:.2f}"
        mark = "  (Pareto front)" if on_front else ""
        typer.echo(
            f"  {row['label']}: {100 * row['risk']:.2f}{interval}% by {row['risk_source']}, "
            f"{loss} {_figure(row[loss])}{mark}"
        )
    for note in result.notes:
        typer.echo(f"note: {note}", err=True)
    typer.echo(f"kinds: {result.kinds}")
    typer.echo(f"map -> {result.page}; table -> {result.csv}")
    if result.run.failed:
        raise typer.Exit(1)


@app.command(
    epilog="Example: rlopt models released.csv --quasi-identifiers AGE,ZIP --confidential INCOME --k 3 --l 2"
)
def models(
    released: Annotated[Path, typer.Argument(help="the released file, CSV or Parquet")],
    quasi_identifiers: Annotated[str, typer.Option(help="comma-separated quasi-identifiers")],
    confidential: Annotated[str | None, typer.Option(help="comma-separated confidential attributes")] = None,
    k: Annotated[int | None, typer.Option(help="k-anonymity level to check")] = None,
    p: Annotated[int | None, typer.Option(help="p-sensitive k-anonymity level (with --k)")] = None,
    l: Annotated[float | None, typer.Option("--l", help="l-diversity level (distinct and entropy)")] = None,
    t: Annotated[float | None, typer.Option(help="t-closeness level (earth mover's distance)")] = None,
    epsilon: Annotated[
        float | None, typer.Option(help="epsilon to check against the ratio-distance bound")
    ] = None,
    population: Annotated[
        Path | None,
        typer.Option(
            help="population file (e.g. the original of a sample): adds P(PU|SU) to the sample uniques"
        ),
    ] = None,
    json_out: JsonOut = None,
) -> None:
    """Privacy models of a released file: the level of each it reaches (k-anonymity,
    p-sensitive k-anonymity, l-diversity, t-closeness, the epsilon implied by
    t-closeness in the ratio distance) and whether it meets the levels asked; its
    sample uniques (and P(PU|SU) with --population)."""
    from rlopt.models import check_models
    from rlopt.risk import uniqueness

    _check_outputs(json=json_out)
    say = _summary(json_out)
    frame = load_table(released)
    unique = uniqueness(
        frame, _names(quasi_identifiers), population=None if population is None else load_table(population)
    )
    checks = check_models(
        frame,
        _names(quasi_identifiers),
        _split(confidential) or (),
        k=k,
        p=p,
        l=l,
        t=t,
        epsilon=epsilon,
    )
    for check in checks:
        verdict = (
            "" if check.satisfied is None else (" - satisfied" if check.satisfied else " - NOT satisfied")
        )
        asked = ", ".join(f"{key}={value:g}" for key, value in check.parameter.items())
        say(f"{check.model}: {check.value:.4g}{f' (asked {asked})' if asked else ''}{verdict}")
        if check.note:
            say(f"  note: {check.note}")
    line = f"sample uniques: {unique['n_sample_uniques']} of {unique['n_records']} records"
    if "p_pu_given_su" in unique:
        p_pu = unique["p_pu_given_su"]
        line += (
            f"; {unique['n_population_uniques']} of them unique in the population of {unique['n_population']}: "
            f"P(PU|SU) = {'undefined (no sample unique)' if p_pu is None else format(p_pu, '.4f')}"
        )
    say(line)
    if json_out is not None:
        _emit_json(json_out, {"checks": [c.to_dict() for c in checks], "uniqueness": unique})


@app.command(
    epilog="Example: rlopt intersect release1.csv release2.csv --id-column id --confidential disease"
)
def intersect(
    releases: Annotated[list[Path], typer.Argument(help="two or more k-anonymous releases, CSV or Parquet")],
    id_column: Annotated[str, typer.Option(help="the subject identifier shared by the releases")],
    confidential: Annotated[str, typer.Option(help="comma-separated confidential attributes")],
    quasi_identifiers: Annotated[
        str | None,
        typer.Option(help="comma-separated quasi-identifiers (default: every other column of each release)"),
    ] = None,
    json_out: JsonOut = None,
) -> None:
    """Intersection attack on independent k-anonymous releases of shared subjects: for
    each subject, the confidential values its classes have in common."""
    from rlopt.attacks import intersection_attack

    _check_outputs(json=json_out)
    qis = _names(quasi_identifiers) if quasi_identifiers else None
    result = intersection_attack(
        [load_table(path) for path in releases],
        id_column=id_column,
        confidential=_names(confidential),
        quasi_identifiers=None if qis is None else [qis] * len(releases),
    )
    say = _summary(json_out)
    for line in result.summary():
        say(line)
    if json_out is not None:
        _emit_json(json_out, result.to_dict())


@app.command(epilog="Example: rlopt report runs/paper-quick")
def report(
    results_dir: Annotated[Path, typer.Argument(help="the --out-dir folder of rlopt run / rlopt reproduce")],
    out: Annotated[Path | None, typer.Option(help="HTML file (default: RESULTS_DIR/report.html)")] = None,
) -> None:
    """Render an HTML report of an experiment run's results."""
    from rlopt.report import render_results_report

    path = render_results_report(results_dir, out)
    typer.echo(f"report -> {path}")


def _interrupted(message: str) -> typer.Exit:
    """Ctrl-C: one line saying what was kept; the caller raises the exit code 130."""
    typer.echo(f"interrupted: {message}", err=True)
    return typer.Exit(130)


def _resumable(exc: Interrupted, out: Path) -> typer.Exit:
    """Ctrl-C during a grid: the summary of the finished cells (all kept in ``out``)."""
    _print_summary(exc.partial, out)
    return _interrupted(f"{exc}; re-run the same command to resume")


def _print_summary(run, out: Path) -> None:
    frame = run.frame
    typer.echo(
        f"{len(run.computed)} cell(s) computed, {len(run.skipped)} already finished, "
        f"{len(run.failed)} failed; {len(frame)} row(s) in {out / 'results.csv'}"
    )
    for message in run.failed.values():
        typer.echo(f"failed: {message}", err=True)


@app.command(epilog="Example: rlopt run configs/M4-33.yaml --out-dir runs/M4-33-grid --jobs 2")
def run(
    config: Annotated[Path, typer.Argument(help="experiment config (YAML)")],
    out_dir: Annotated[Path | None, typer.Option(help="results folder (default: runs/<config name>)")] = None,
    jobs: Annotated[int, typer.Option(help="local worker processes")] = 1,
    scheduler: Annotated[
        str | None, typer.Option(help="Dask scheduler address, e.g. tcp://host:8786")
    ] = None,
    progress: Annotated[bool, typer.Option(help="progress bar")] = True,
) -> None:
    """Run an experiment grid; a re-run with the same --out-dir skips finished cells."""
    from rlopt.experiments import load_config, run_grid

    spec = load_config(config)
    out = out_dir or Path("runs") / spec.name
    try:
        result = run_grid(spec, out, base=config.parent, jobs=jobs, scheduler=scheduler, progress=progress)
    except Interrupted as exc:
        raise _resumable(exc, out) from None
    _print_summary(result, out)
    if result.failed:
        raise typer.Exit(1)


@app.command(epilog="Example: rlopt reproduce --quick --jobs 2 --out-dir runs/paper-quick")
def reproduce(
    quick: Annotated[
        bool, typer.Option(help="Tables 1-2 families, one record sample (a few minutes)")
    ] = False,
    table: Annotated[
        Table, typer.Option(help="1 or 2: Tables 1 and 2 (one grid gives both); 5: rank swapping attacks")
    ] = Table.tables_1_2,
    out_dir: Annotated[Path | None, typer.Option(help="results folder (default: runs/<grid name>)")] = None,
    jobs: Annotated[int, typer.Option(help="local worker processes")] = 1,
    scheduler: Annotated[str | None, typer.Option(help="Dask scheduler address")] = None,
    seeds: Annotated[str, typer.Option(help="Table 5: masking seeds")] = "0,1,2",
    datasets: Annotated[str, typer.Option(help="Table 5: census, eia")] = "census,eia",
    variant: Annotated[SwapVariant, typer.Option(help="Table 5: rank swapping variant")] = SwapVariant.plain,
    learned: Annotated[
        str | None, typer.Option(help="Table 5: learned families as extra columns, e.g. wm")
    ] = None,
    time_limit: Annotated[
        float | None,
        typer.Option(help="seconds per learned MILP (default: 60 with --quick and for Table 5, else 600)"),
    ] = None,
    progress: Annotated[bool, typer.Option(help="progress bar")] = True,
) -> None:
    """Regenerate the published Tables 1 and 2 (table1.md, table2.md and CSVs in --out-dir),
    or with --table 5 the rank swapping table (table5.md, table5.csv)."""
    from rlopt.experiments import paper_config, run_grid, write_tables

    if table == Table.table_5:
        _reproduce_table5(
            out_dir,
            jobs,
            scheduler,
            _split(seeds),
            _split(datasets),
            variant.value,
            _split(learned) or [],
            60.0 if time_limit is None else time_limit,
            progress,
        )
        return
    spec = paper_config(quick=quick, time_limit=time_limit)
    out = out_dir or Path("runs") / spec.name
    try:
        result = run_grid(spec, out, jobs=jobs, scheduler=scheduler, progress=progress)
    except Interrupted as exc:
        raise _resumable(exc, out) from None
    _print_summary(result, out)
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
        raise _resumable(exc, out) from None
    _print_summary(result, out)
    if result.rows:
        typer.echo(write_table5(result.frame, out))
    if result.failed:
        raise typer.Exit(1)


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"warning: {message}", file=sys.stderr)


def main() -> None:
    """Entry point of the console script: bad input ends with one line and exit code 2."""
    warnings.showwarning = _show_warning
    try:
        app()
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except SolverError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
