"""``rlopt learn``: the best distance of one family, its proof or its interval."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from rlopt.cli._app import Command, commands, summary
from rlopt.cli._options import (
    FAMILIES,
    OUTPUT,
    THREADS,
    TIME_LIMIT,
    Blocks,
    Columns,
    DropNonfinite,
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
    Threads,
    TimeLimit,
    block_options,
    check_family,
    check_outputs,
    emit_json,
    interrupted,
    interval_printer,
    kinds,
    say_kinds,
    seconds,
    split,
)
from rlopt.cli._options import (
    summary as summary_to,
)
from rlopt.exceptions import InputError
from rlopt.families import LEARNED
from rlopt.status import Status

app = commands()


# (over 60 lines by its signature: typer declares the command's options as its parameters)
@app.command(
    cls=Command,
    short_help=summary("learn"),
    epilog="Example: rlopt learn original.csv masked.csv --family wm --time-limit 60 --params-out wm.json",
)
def learn(
    original: Original,
    masked: Masked,
    family: Annotated[
        str,
        typer.Option(
            metavar="FAMILY",
            callback=check_family,
            help=f"one of {', '.join(LEARNED)}",
            rich_help_panel=FAMILIES,
        ),
    ] = "wm",
    margin: Margin = 1e-5,
    time_limit: TimeLimit = TIME_LIMIT,
    rel_gap: Annotated[
        float,
        typer.Option(
            metavar="GAP",
            help="relative MIP gap at which to stop (0: prove the optimum)",
            rich_help_panel=FAMILIES,
        ),
    ] = 0.0,
    threads: Threads = THREADS,
    delta: Annotated[
        float | None,
        typer.Option(
            metavar="DELTA",
            help="metric variants (wm_m, ci_m, sb_pd): lower bound delta",
            rich_help_panel=FAMILIES,
        ),
    ] = None,
    published_relaxation: Annotated[
        bool,
        typer.Option(
            "--published-relaxation",
            help="ci_m: submodularity on pairs of attributes only",
            rich_help_panel=FAMILIES,
        ),
    ] = False,
    k_additive: Annotated[
        int | None,
        typer.Option(
            "--k-additive",
            metavar="K",
            help="ci_k: the largest attribute set with a Möbius mass (default 2)",
            rich_help_panel=FAMILIES,
        ),
    ] = None,
    naive: Annotated[
        bool,
        typer.Option(
            "--naive",
            help="the MILP as written: every pair, one big-C, no reduction",
            rich_help_panel=FAMILIES,
        ),
    ] = False,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="re-prove a claimed optimum with the plain model, solved by SCIP where installed (else "
            "HiGHS): a second solve, same time limit",
            rich_help_panel=FAMILIES,
        ),
    ] = False,
    blocks: Blocks = None,
    jobs: SolveJobs = 1,
    scheduler: SolveScheduler = None,
    columns: Columns = None,
    id_column: IdColumn = None,
    drop_nonfinite: DropNonfinite = False,
    ordinal: Ordinal = None,
    nominal: Nominal = None,
    missing: Missing = MissingPolicy.category,
    params_out: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="write the learned parameters as JSON", rich_help_panel=OUTPUT),
    ] = None,
    export: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="write the MILP as .lp or .mps", rich_help_panel=OUTPUT),
    ] = None,
    json_out: JsonOut = None,
    log: Annotated[bool, typer.Option("--log", help="show HiGHS's log", rich_help_panel=OUTPUT)] = False,
    progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress",
            help="print the interval each time it narrows, on stderr (default: on a terminal)",
            rich_help_panel=OUTPUT,
        ),
    ] = None,
) -> None:
    """Learn the distance of FAMILY that re-identifies the most records (a MILP solved
    by HiGHS): the proven optimum, or an interval when the time limit stops it."""
    from rlopt.data import load_table
    from rlopt.learn import LearnedDistanceLinkage

    check_outputs(params_out=params_out, export=export, json=json_out)
    if scheduler is not None and blocks is None:
        raise InputError(
            f"--scheduler {scheduler} without --blocks: rlopt learn races one family on local "
            "workers (--jobs N); a Dask scheduler solves its blocks (add --blocks SIZE)"
        )
    naive_options: dict[str, Any] = {"big_c": "uniform", "reductions": "none"} if naive else {}
    learner = LearnedDistanceLinkage(
        family,
        margin=margin,
        time_limit=seconds(time_limit),
        rel_gap=rel_gap,
        threads=threads,
        log=log,
        family_options=_family_options(delta, k_additive, published_relaxation),
        verify=verify,
        blocks=block_options(blocks, jobs, scheduler),
        n_jobs=1 if blocks is not None else jobs,
        **naive_options,
    )
    result, stopped = _fitted(
        learner,
        family,
        lambda: learner.fit(
            load_table(original),
            load_table(masked),
            columns=split(columns),
            id_column=id_column,
            drop_nonfinite=drop_nonfinite,
            kinds=kinds(ordinal, nominal, missing),
            export=export,
            progress=interval_printer(progress),
        ),
    )
    if params_out is not None and not stopped and learner.distance_ is not None:
        learner.save_params(params_out)
    _say_learned(learner, result, json_out)
    if stopped:
        raise typer.Exit(130)


def _family_options(delta: float | None, k_additive: int | None, published_relaxation: bool) -> dict | None:
    """The family's own options as the learner takes them (``None``: none given)."""
    options: dict[str, Any] = {"delta": delta, "k": k_additive}
    options = {key: value for key, value in options.items() if value is not None}
    if published_relaxation:
        options["published_relaxation"] = True
    return options or None


def _fitted(learner, family: str, fit: Callable[[], Any]) -> tuple[Any, bool]:
    """The learner's result after ``fit()``, and whether a Ctrl-C stopped it (then the
    interval so far, status interrupted; nothing verified yet: exit 130 said)."""
    try:
        fit()
    except KeyboardInterrupt as exc:
        partial = getattr(exc, "partial", None)
        if partial is None or partial.n_correct_verified is None:
            raise interrupted(f"{family}: nothing verified yet") from None
        return partial, True
    return learner.result_, False


def _say_learned(learner, result, json_out: Path | None) -> None:
    """``rlopt learn``'s summary: the columns' kinds, the figure, the verification (and
    the JSON, with the kinds)."""
    column_kinds = getattr(learner, "kinds_", ())
    say = summary_to(json_out)
    if json_out is not None:
        extra = {"kinds": [k.to_dict() for k in column_kinds]} if column_kinds else {}
        emit_json(json_out, {**result.to_dict(), **extra})
    say_kinds(say, column_kinds)
    say(learned_line(result))
    if result.verification is not None:
        say(_verification_line(result.verification))


def learned_line(result) -> str:
    """``rlopt learn``'s summary: the optimum or the interval, the recounts, the times."""
    from rlopt.milp.ceilings.certificate import describe_blocks, describe_lower

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
    if result.blocks is not None:
        at_risk += f"; {describe_blocks(result.blocks)}"
    return (
        f"{result.family}: {figure} records re-identified at margin {result.margin:g}; "
        f"strict count {result.n_correct_strict}{at_risk}; search {result.seconds['search']:.1f}s, "
        f"reduce {result.seconds['reduce']:.1f}s, "
        f"build {result.seconds['build']:.1f}s, solve {result.seconds['solve']:.1f}s"
    )


def _verification_line(v: dict) -> str:
    """``rlopt learn --verify``: what the plain model found, by which solver (and why not
    SCIP, where it is not installed)."""
    from rlopt.milp.solvers.options import SOLVER_NAMES

    solver = SOLVER_NAMES[v["solver"]] + ("" if v["version"] is None else f" {v['version']}")
    if v["status"] == Status.OPTIMAL:
        plain = f"optimal {v['n_correct']}"
    elif v["n_correct"] is None and v["bound"] is None:
        plain = f"nothing yet ({v['status']})"
    else:
        plain = f"between {v['n_correct']} and {v['bound']} ({v['status']})"
    undecided = "before Ctrl-C" if v["status"] == Status.INTERRUPTED else "within the limit"
    verdict = "the optimum is confirmed" if v["agrees"] else f"consistent, not decided {undecided}"
    note = "" if v["note"] is None else f"\nnote: {v['note']}"
    return f"verified by the plain model solved by {solver}: {plain} in {v['seconds']:.1f}s; {verdict}{note}"
