"""What the commands share: options (one name, one meaning, one default), output
helpers, Ctrl-C endings. Heavy packages are imported inside the helpers that need them."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from rlopt.exceptions import InputError
from rlopt.families import LEARNED
from rlopt.masking.grammar import parse_names

TIME_LIMIT = 60.0
"""Seconds per MILP unless --time-limit says otherwise, in every command."""
THREADS = 1
"""HiGHS threads per MILP unless --threads says otherwise: never the core count."""

FILES = "Files"
FAMILIES = "Families and solver"
DATA = "Columns and kinds"
OUTPUT = "Output"


def parsed(check: Callable[[str], Any]) -> Callable[[Any], Any]:
    """A click callback: ``check(value)`` (None passes), an InputError a usage error (exit 2)."""

    def callback(value):
        if value is None:
            return None
        try:
            return check(value)
        except InputError as exc:
            raise typer.BadParameter(str(exc)) from None

    return callback


def _family_names(text: str) -> str:
    from rlopt.families import get_learned_family

    for name in parse_names(text):
        get_learned_family(name)
    return text


def _family_name(text: str) -> str:
    from rlopt.families import get_learned_family

    return get_learned_family(text).name


def _method_name(text: str) -> str:
    from rlopt.masking import masking_method

    return masking_method(text).name


def _attacked_name(text: str) -> str:
    from rlopt.attacks import attack_for

    return attack_for(text).masking


check_families = parsed(_family_names)
check_family = parsed(_family_name)
check_method = parsed(_method_name)
"""A registered masking method (aliases accepted), checked while parsing (exit 2)."""
check_attacked = parsed(_attacked_name)
"""A masking method with a transparency attack, checked while parsing (exit 2)."""

LearnedFamilies = Annotated[
    str,
    typer.Option(
        metavar="F,G,...",
        callback=check_families,
        help=f"the learned families, of {', '.join(LEARNED)}",
        rich_help_panel=FAMILIES,
    ),
]
"""The learned families of a grid or a trade-off (``--families``)."""

Original = Annotated[
    Path,
    typer.Argument(metavar="ORIGINAL", help="the file before masking (the intruder's), CSV, TSV or Parquet"),
]
Masked = Annotated[Path, typer.Argument(metavar="MASKED", help="the masked file, CSV, TSV or Parquet")]
JsonOut = Annotated[
    Path | None,
    typer.Option(
        "--json",
        metavar="PATH",
        help="write the figures as one JSON object to PATH ('-': standard output, the summary then on stderr)",
        rich_help_panel=OUTPUT,
    ),
]
Columns = Annotated[
    str | None,
    typer.Option(metavar="A,B,...", help="the attributes to use (default: all shared)", rich_help_panel=DATA),
]
Ordinal = Annotated[
    str | None,
    typer.Option(
        metavar="LEVELS",
        help="ordered categorical attributes, levels low to high: 'edu:hs<college<grad; size' "
        "(no levels: the sorted values)",
        rich_help_panel=DATA,
    ),
]
Nominal = Annotated[
    str | None,
    typer.Option(
        metavar="A,B,...",
        help="attributes compared by category (0/1), even if they are numbers",
        rich_help_panel=DATA,
    ),
]


class MissingPolicy(StrEnum):
    category = "category"
    drop = "drop"


Missing = Annotated[
    MissingPolicy,
    typer.Option(
        metavar="category|drop",
        help="a blank in a categorical attribute: a category of its own, or drop its record",
        rich_help_panel=DATA,
    ),
]
IdColumn = Annotated[
    str | None,
    typer.Option(metavar="NAME", help="align the records by this identifier column", rich_help_panel=DATA),
]
DropNonfinite = Annotated[
    bool,
    typer.Option(
        "--drop-nonfinite", help="drop records with NaN/inf instead of failing", rich_help_panel=DATA
    ),
]
TimeLimit = Annotated[
    float,
    typer.Option(
        metavar="SECONDS",
        help="seconds per family (its MILP and the searches beside it), 0 for none; a family stopped by it reports an interval",
        min=0,
        rich_help_panel=FAMILIES,
    ),
]
Threads = Annotated[
    int, typer.Option(metavar="N", help="HiGHS threads per MILP", min=1, rich_help_panel=FAMILIES)
]
Margin = Annotated[
    float,
    typer.Option(
        metavar="EPS",
        help="margin of every learned re-identification (0: ties count)",
        rich_help_panel=FAMILIES,
    ),
]
Seed = Annotated[int, typer.Option(metavar="SEED", help="random seed of the masking")]
Jobs = Annotated[int, typer.Option(metavar="N", help="local worker processes")]
Scheduler = Annotated[
    str | None, typer.Option(metavar="ADDRESS", help="Dask scheduler address, e.g. tcp://host:8786")
]
Blocks = Annotated[
    int | None,
    typer.Option(
        "--blocks",
        metavar="SIZE",
        help="prove a ceiling from random blocks of SIZE records beside each solve (e.g. 30)",
        rich_help_panel=FAMILIES,
    ),
]
SolveJobs = Annotated[
    int,
    typer.Option(
        "--jobs",
        metavar="N",
        help="worker processes: the families side by side, spare ones racing the open "
        "families with other seeds (a proven figure is the same for every N); with "
        "--blocks, the blocks' workers",
        rich_help_panel=FAMILIES,
        min=1,
    ),
]
SolveScheduler = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        metavar="ADDRESS",
        help="solve on this Dask scheduler instead (workers of one thread): the families' "
        "runs, or with --blocks the blocks",
        rich_help_panel=FAMILIES,
    ),
]
ProgressBar = Annotated[bool, typer.Option("--progress/--no-progress", help="progress bar")]
OutDir = Annotated[Path | None, typer.Option(metavar="FOLDER", help="results folder")]


@dataclass(frozen=True)
class Solving:
    """The solving options every command shares, as the commands pass them on."""

    margin: float
    time_limit: float | None
    threads: int
    seed: int
    jobs: int = 1


def seconds(time_limit: float) -> float | None:
    """``--time-limit 0``: no limit."""
    return None if time_limit == 0 else time_limit


def block_options(size: int | None, jobs: int, scheduler: str | None) -> dict | None:
    """The block ceilings of --blocks/--jobs/--scheduler (``None``: none; --jobs and
    --scheduler then go to the families)."""
    if jobs != 1 and scheduler is not None:
        raise InputError(f"--jobs {jobs} with --scheduler {scheduler}: give one of the two")
    return None if size is None else {"size": size, "jobs": jobs, "scheduler": scheduler}


def split(text: str | None) -> list[str] | None:
    return None if text is None else parse_names(text)


def kinds(ordinal: str | None, nominal: str | None, missing: MissingPolicy):
    """The declared column kinds of --ordinal/--nominal/--missing."""
    from rlopt.data import KindSpec

    return KindSpec.parse(ordinal, nominal, missing.value)


def say_kinds(say: Callable[[str], None], column_kinds) -> None:
    """``kinds: numeric: a, b; edu: ordinal (...)`` when some attribute is categorical."""
    from rlopt.data import describe_kinds

    if any(k.categorical for k in column_kinds):
        say(f"kinds: {describe_kinds(column_kinds)}")


def check_outputs(**paths: Path | None) -> None:
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


def emit_json(target: Path, payload: dict) -> None:
    """``--json PATH``: the figures as one JSON object in PATH, or on stdout for ``-``."""
    from rlopt.risk.figures import plain  # numpy values as JSON's (numpy is loaded by now)

    if str(target) == "-":
        typer.echo(json.dumps(payload, default=plain))
    else:
        target.write_text(json.dumps(payload, indent=1, default=plain))
        typer.echo(f"figures -> {target}", err=True)


def summary(json_out: Path | None) -> Callable[[str], None]:
    """Where the human summary goes: stdout, or stderr when the JSON takes stdout."""
    to_stderr = json_out is not None and str(json_out) == "-"
    return lambda line: typer.echo(line, err=to_stderr)


def write_table(frame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() in (".parquet", ".pq"):
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)


def interrupted(message: str) -> typer.Exit:
    """Ctrl-C: one line saying what was kept; the caller raises the exit code 130."""
    typer.echo(f"interrupted: {message}", err=True)
    return typer.Exit(130)


def print_grid_summary(run, out: Path) -> None:
    frame = run.frame
    typer.echo(
        f"{len(run.computed)} cell(s) computed, {len(run.skipped)} already finished, "
        f"{len(run.failed)} failed; {len(frame)} row(s) in {out / 'results.csv'}"
    )
    for message in run.failed.values():
        typer.echo(f"failed: {message}", err=True)


def resumable(exc, out: Path) -> typer.Exit:
    """Ctrl-C during a grid: the summary of the finished cells (all kept in ``out``)."""
    print_grid_summary(exc.partial, out)
    return interrupted(f"{exc}; re-run the same command to resume")


@contextmanager
def progress_bar(label: str, show: bool | None):
    """A ``progress(done, total)`` callback drawing a bar on stderr (``show`` None: when
    stderr is a terminal), or None; asked for (``show`` true) where stderr is not a
    terminal (a log file), a line at the start and at each tenth done instead."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    if not (console.is_terminal if show is None else show):
        yield None
        return
    if not console.is_terminal:
        yield _progress_lines(label)
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


def _progress_lines(label: str) -> Callable[[int, int], None]:
    """``progress(done, total)`` as plain lines on stderr: the first report, then each
    tenth of ``total`` passed."""
    said = -1

    def advance(done: int, total: int) -> None:
        nonlocal said
        tenth = 10 * done // total if total else 10
        if tenth > said:
            said = tenth
            typer.echo(f"{label}: {done} of {total}", err=True)

    return advance


Events = Annotated[
    Path | None,
    typer.Option(
        "--events",
        metavar="FILE",
        help="write each step and each narrowing of an interval as a JSON line (for other programs)",
        rich_help_panel=OUTPUT,
    ),
]


class EventLog:
    """``--events FILE``: one JSON object a line, written and flushed as it happens:
    ``{"event": "step", "seconds", "message"}`` before each step,
    ``{"event": "interval", "seconds", "family", "lower", "lower_source", "upper",
    "upper_source"}`` each time a family's interval narrows (its ``seconds`` from the
    family's start, ``elapsed`` from the command's), and ``{"event": "end", "status"}``
    (``complete``, ``incomplete`` or ``interrupted``) once the figures are written."""

    def __init__(self, path: Path):
        import time

        self._clock = time.perf_counter
        self._t0 = self._clock()
        self._file = path.open("w", encoding="utf-8")

    def _write(self, record: dict) -> None:
        self._file.write(json.dumps({**record, "elapsed": round(self._clock() - self._t0, 3)}) + "\n")
        self._file.flush()

    def step(self, message: str) -> None:
        self._write({"event": "step", "message": message})

    def interval(self, family: str, event: dict) -> None:
        self._write({"event": "interval", "family": family, **event})

    def end(self, status: str) -> None:
        self._write({"event": "end", "status": status})
        self._file.close()


def both(*callbacks: Callable | None) -> Callable | None:
    """One callback that calls each of ``callbacks`` given (``None``: none given)."""
    given = [c for c in callbacks if c is not None]
    if not given:
        return None

    def call(*args) -> None:
        for callback in given:
            callback(*args)

    return call


def interval_printer(show: bool | None, *, labelled: bool = False) -> Callable | None:
    """The callback that prints each narrowing of an interval on stderr:
    ``  12.3 s  [741, 1032]  lower: <its step>  upper: <its step>``, led by the family
    when ``labelled`` (it is then called with the family and the event); bold on a
    terminal, plain lines elsewhere. ``show`` None: only on a terminal; False: None."""
    from rich.console import Console
    from rich.text import Text

    console = Console(stderr=True, soft_wrap=True, highlight=False)
    if not (console.is_terminal if show is None else show):
        return None

    def line(event: dict, label: str | None = None) -> None:
        lower = "-" if event["lower"] is None else event["lower"]
        console.print(
            Text.assemble(
                "" if label is None else f"  {label}: ",
                f"{event['seconds']:7.1f} s  ",
                (f"[{lower}, {event['upper']}]", "bold"),
                f"  lower: {event['lower_source'] or 'nothing verified yet'}  upper: {event['upper_source']}",
            )
        )

    if labelled:
        return lambda label, event: line(event, label)
    return line
