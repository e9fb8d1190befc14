"""``rlopt integral``: the update attack of integral privacy on two published models."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from rlopt.cli._app import Command, commands, summary
from rlopt.cli._options import (
    Jobs,
    JsonOut,
    ProgressBar,
    Scheduler,
    check_outputs,
    emit_json,
    interrupted,
    split,
)
from rlopt.cli._options import summary as summary_to
from rlopt.exceptions import InputError

app = commands()

Target = Annotated[
    str | None, typer.Option(metavar="COLUMN", help="the predicted column (tree, linear, logistic)")
]
Features = Annotated[
    str | None,
    typer.Option(metavar="A,B,...", help="the model's columns (default: every column but the target)"),
]
Precision = Annotated[
    int,
    typer.Option(
        metavar="DIGITS",
        help="two models are equal when their parameters rounded to DIGITS decimals are",
        min=0,
        max=15,
    ),
]
MaxDepth = Annotated[int, typer.Option(metavar="D", help="the tree's depth", min=1)]
"""The learning algorithm's options, the same in both commands."""


class Model(StrEnum):
    mean = "mean"
    tree = "tree"
    linear = "linear"
    logistic = "logistic"


# (over 60 lines by its signature: typer declares the command's options as its parameters)
@app.command(
    cls=Command,
    short_help=summary("integral"),
    epilog="Example: rlopt integral before.csv after.csv --id-column ID --model tree --target Y --max-changes 2",
)
def integral(
    before: Annotated[
        Path, typer.Argument(metavar="BEFORE", help="the database X the first model was learned on")
    ],
    after: Annotated[
        Path, typer.Argument(metavar="AFTER", help="the updated database X' of the second model")
    ],
    model: Annotated[Model, typer.Option(help="the learning algorithm A")] = Model.tree,
    target: Target = None,
    features: Features = None,
    precision: Precision = 3,
    max_depth: MaxDepth = 3,
    id_column: Annotated[
        str | None, typer.Option(metavar="COLUMN", help="the records' identifier (default: the row's values)")
    ] = None,
    known: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="the records of X the intruder knows (default: all of X)"),
    ] = None,
    population: Annotated[
        Path | None, typer.Option(metavar="FILE", help="other candidate records an update may add")
    ] = None,
    max_changes: Annotated[
        int | None,
        typer.Option(
            metavar="R", help="the largest modification considered (default: the update's own size)", min=1
        ),
    ] = None,
    samples: Annotated[
        int,
        typer.Option(metavar="N", help="above 16 candidate records: modifications drawn at random", min=1),
    ] = 2000,
    seed: Annotated[int, typer.Option(metavar="SEED", help="seed of the drawn modifications")] = 0,
    jobs: Jobs = 1,
    scheduler: Scheduler = None,
    progress: ProgressBar = True,
    json_out: JsonOut = None,
    report: Annotated[
        Path | None, typer.Option(metavar="FILE", help="write the HTML page of the attack")
    ] = None,
) -> None:
    """The modifications consistent with the models learned on BEFORE and AFTER (the
    intruder knows the algorithm and both models): how many, the minimal ones, the records
    removed or added in every one, the members inferred. Exact on up to 16 candidate
    records; above, on randomly drawn modifications (a sample of the set: what it infers
    is an upper bound)."""
    from rlopt.integral.update import update_attack

    say = _started(jobs, scheduler, json=json_out, report=report)
    result = _learned(
        lambda: update_attack(
            before,
            after,
            model=model.value,
            target=target,
            features=split(features),
            precision=precision,
            max_depth=max_depth,
            id_column=id_column,
            known=known,
            population=population,
            max_changes=max_changes,
            samples=samples,
            seed=seed,
            jobs=jobs,
            scheduler=scheduler,
            progress=progress,
        ),
        "the modifications were not all learned; no figure",
        say,
        json_out,
    )
    if report is not None:
        from rlopt.report.html import render_integral_report

        render_integral_report(result.to_dict(), report, learner=result.learner, precision=result.precision)
        say(f"report -> {report}")


class Trained(StrEnum):
    tree = "tree"
    linear = "linear"
    logistic = "logistic"


# (over 60 lines by its signature: typer declares the command's options as its parameters)
@app.command(
    "private-model",
    cls=Command,
    short_help=summary("private-model"),
    epilog="Example: rlopt private-model data.csv --model tree --target Y --precision 1 --k 5 --mask 'mdav:k=5'",
)
def private_model(
    data: Annotated[Path, typer.Argument(metavar="DATA", help="the records the model is learned on")],
    model: Annotated[Trained, typer.Option(help="the learning algorithm A")] = Trained.tree,
    target: Target = None,
    features: Features = None,
    precision: Precision = 3,
    max_depth: MaxDepth = 3,
    k: Annotated[
        int,
        typer.Option(
            metavar="K",
            help="a private model is generated by at least K subsamples with no record common",
            min=1,
        ),
    ] = 5,
    subsamples: Annotated[
        int, typer.Option(metavar="N", help="random subsamples of the training records learned", min=1)
    ] = 1000,
    share: Annotated[
        float, typer.Option(metavar="SHARE", help="of the training records in each subsample, in (0, 1)")
    ] = 0.5,
    test: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="held-out records, not in DATA (default: --holdout of DATA)"),
    ] = None,
    holdout: Annotated[
        float,
        typer.Option(
            metavar="SHARE",
            help="of DATA held out, in (0, 1), drawn with --seed: half to choose, half to score",
        ),
    ] = 0.3,
    mask: Annotated[
        str | None,
        typer.Option(metavar="'METHOD:P=V'", help="also on data masked first, e.g. 'mdav:k=5' (A(rho(X)))"),
    ] = None,
    seed: Annotated[
        int, typer.Option(metavar="SEED", help="seed of the split, the subsamples, the masking")
    ] = 0,
    jobs: Jobs = 1,
    scheduler: Scheduler = None,
    progress: ProgressBar = True,
    json_out: JsonOut = None,
) -> None:
    """Integrally private model selection (Senavirathne & Torra): learn the model on N
    random subsamples of the training records, keep the models generated by at least K
    subsamples with no record common to them all (publishing one, its parameters to
    --precision decimals, names no member those subsamples share), choose the one that
    scores best on half of the held-out records and score it on the other half
    (accuracy, or R² for linear), beside the model of all the training records; with
    --mask, the same on masked data."""

    from rlopt.integral.choose import private_model as choose

    say = _started(jobs, scheduler, json=json_out)
    _learned(
        lambda: choose(
            data,
            model=model.value,
            target=target,
            features=split(features),
            precision=precision,
            max_depth=max_depth,
            k=k,
            databases=subsamples,
            share=share,
            test=test,
            holdout=holdout,
            mask=mask,
            seed=seed,
            jobs=jobs,
            scheduler=scheduler,
            progress=progress,
        ),
        "the models were not all learned; no figure",
        say,
        json_out,
    )


def _started(jobs: int, scheduler: str | None, **outputs: Path | None) -> Callable[[str], None]:
    """What both commands check before learning (one of --jobs and --scheduler, the
    outputs writable); the function that says their summary lines."""
    if jobs != 1 and scheduler is not None:
        raise InputError("--jobs and --scheduler: give one of the two")
    check_outputs(**outputs)
    return summary_to(outputs["json"])


def _learned(
    learn: Callable[[], Any], unfinished: str, say: Callable[[str], None], json_out: Path | None
) -> Any:
    """The result of ``learn()``, its lines said and its JSON written; a Ctrl-C said as
    ``unfinished``."""
    try:
        result = learn()
    except KeyboardInterrupt:
        raise interrupted(unfinished) from None
    for line in result.lines():
        say(line)
    if json_out is not None:
        emit_json(json_out, result.to_dict())
    return result
