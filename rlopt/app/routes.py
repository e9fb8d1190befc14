"""The pages of ``rlopt serve``: one module-level endpoint per address, reading what the
server shares from ``request.app.state`` (the workspace, the run queue, the templates,
the CSRF field and the upload limit), and the route table :data:`ROUTES`.

A form's endpoint is a handler behind :func:`~rlopt.app.security.posted_to`, which
checks its CSRF field and the upload limit first and says an error on the page. Files
and runs are addressed by the workspace's identifiers only; every user string reaches
the page through Jinja2's escaping."""

from __future__ import annotations

from collections.abc import Sequence

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from rlopt.app.prepare import BUNDLED, make_original, make_pair, mask_cell, parameter_flags, privacy_models
from rlopt.app.runs import ChoiceSpec, CompareSpec, RunSpec, UpdateSpec, run_state, spec_of
from rlopt.app.security import form, posted_to
from rlopt.app.stream import event_stream
from rlopt.app.views import (
    DOWNLOADS,
    choices,
    grid_view,
    listed_run,
    pair_view,
    panels,
    records_view,
    run_view,
)
from rlopt.app.workspace import Workspace
from rlopt.exceptions import InputError, RloptError

__all__ = ["ROUTES"]


def page(request: Request, name: str, status_code: int = 200, **values) -> HTMLResponse:
    """The template ``name`` rendered with ``values`` and the server's CSRF field."""
    state = request.app.state
    html = state.templates.get_template(name).render(csrf=state.csrf, **values)
    return HTMLResponse(html, status_code=status_code)


def front(request: Request, status_code: int = 200, error: str | None = None) -> HTMLResponse:
    """The front page: the forms and the runs so far, with ``error`` said."""
    workspace = request.app.state.workspace
    runs = [listed_run(workspace, run_id) for run_id in workspace.run_ids()]
    return page(request, "index.html", status_code, runs=runs, error=error, **choices())


posted = posted_to(front)
"""A form of the front page (a refused one is said there)."""


async def index(request: Request) -> Response:
    return front(request)


def pair_page(
    request: Request, original, masked, declared: dict, made: Sequence[str] = (), status_code: int = 200
) -> HTMLResponse:
    """The files as rlopt reads them with what the officer declared, and the form."""
    error: str | None = None
    try:
        pair = pair_view(original.path, masked.path, declared)
    except RloptError as exc:  # a declaration that does not fit: said, the form kept
        error = str(exc)
        try:
            pair = pair_view(original.path, masked.path, {})
        except RloptError:  # the files themselves do not pair
            return front(request, 400, error)
    return page(
        request,
        "pair.html",
        status_code if error is None else 400,
        original=original,
        masked=masked,
        pair=pair,
        declared=declared,
        made=list(made),
        error=error,
        **choices(),
    )


@posted
async def load(request: Request, values) -> Response:
    workspace = request.app.state.workspace
    original = await _stored(workspace, values.get("original"), "original")
    masked = await _stored(workspace, values.get("masked"), "masked")
    return pair_page(request, original, masked, {})


@posted
async def prepare(request: Request, values) -> Response:
    records = str(values.get("records") or "").strip()
    made = await run_in_threadpool(
        make_pair,
        request.app.state.workspace,
        str(values.get("source", "")),
        method=str(values.get("method") or "") or None,
        parameters=str(values.get("parameters") or ""),
        records=int(records) if records else None,
        seed=int(str(values.get("seed") or 0)),
    )
    return pair_page(request, made.original, made.masked, {}, made.commands)


@posted
async def declare(request: Request, values) -> Response:
    """The pair page again, with the kinds, columns and id the officer declared."""
    workspace = request.app.state.workspace
    original = workspace.file(str(values.get("original", "")))
    masked = workspace.file(str(values.get("masked", "")))
    return pair_page(request, original, masked, _declared(values))


@posted
async def start(request: Request, values) -> Response:
    state = request.app.state
    declared = _declared(values)
    original = state.workspace.file(str(values["original"]))
    masked = state.workspace.file(str(values["masked"]))
    try:  # the declarations checked as the command will check them, before it is queued
        pair_view(original.path, masked.path, declared)
    except RloptError:
        return pair_page(request, original, masked, declared)
    spec = RunSpec(
        original=original.id,
        masked=masked.id,
        families=[str(f) for f in values.getlist("families")] or ["wm"],
        time_limit=float(str(values.get("time_limit") or 60)),
        folds=int(str(values.get("folds") or 0)),
        columns=declared.get("columns"),
        id_column=declared.get("id_column"),
        ordinal=declared.get("ordinal"),
        nominal=declared.get("nominal"),
        attack_method=str(values.get("attack_method") or "") or None,
        attack_params=_pairs(str(values.get("attack_parameters") or "")),
    )
    return RedirectResponse(f"/runs/{state.runner.submit(spec)}", status_code=303)


@posted
async def compare(request: Request, values) -> Response:
    """A risk-utility map of one file (uploaded or bundled), queued as a run."""
    state = request.app.state
    upload = values.get("original")
    if isinstance(upload, UploadFile) and upload.filename:
        original = await _stored(state.workspace, upload, "original")
    else:
        original = await run_in_threadpool(make_original, state.workspace, str(values.get("source", "")))
    spec = CompareSpec(
        original=original.id,
        methods=str(values.get("methods") or ""),
        families=[str(f) for f in values.getlist("families")] or ["wm"],
        time_limit=float(str(values.get("time_limit") or 60)),
        loss=str(values.get("loss") or "il1s"),
        seed=int(str(values.get("seed") or 0)),
        jobs=int(str(values.get("jobs") or 1)),
    )
    return RedirectResponse(f"/runs/{state.runner.submit(spec)}", status_code=303)


@posted
async def cell(request: Request, values) -> Response:
    """One cell of a map as a pair (its masked file made by rlopt mask), to assess."""
    workspace = request.app.state.workspace
    folder = workspace.run(request.path_params["run_id"])
    spec = spec_of(run_state(folder)["spec"])
    if not isinstance(spec, CompareSpec):
        raise InputError("this run is not a map; expected a map's cell")
    row = grid_view(folder, spec)["rows"][int(str(values.get("row", "")))]
    made = await run_in_threadpool(
        mask_cell, workspace, spec.original, row["method"], row["parameters"], int(row["seed"])
    )
    return pair_page(request, made.original, made.masked, {}, made.commands)


async def models(request: Request) -> Response:
    """Privacy models of a released file (``rlopt models``), on one page."""
    if request.method == "GET":
        return page(request, "models.html")
    values, refused = await form(request)
    if refused is not None:
        return page(request, "models.html", 400, error=refused)
    fields = ("quasi_identifiers", "confidential", "k", "p", "l", "t", "epsilon")
    asked = {name: str(values.get(name) or "") for name in fields}
    try:
        released = await _stored(request.app.state.workspace, values.get("released"), "released")
        summary, command = await run_in_threadpool(privacy_models, released, asked)
    except RloptError as exc:
        return page(request, "models.html", 400, error=str(exc), asked=asked)
    return page(request, "models.html", summary=summary, command=command, asked=asked, released=released.name)


def published_page(request: Request, status_code: int = 200, error: str | None = None) -> HTMLResponse:
    """The published models' page, with ``error`` said."""
    return page(
        request,
        "published.html",
        status_code,
        error=error,
        bundled=list(BUNDLED),
        methods=choices()["methods"],
    )


async def published(request: Request) -> Response:
    """Integral privacy of published models: the update attack and the private model."""
    return published_page(request)


def model_fields(values) -> dict:
    """The learning algorithm as the form gives it (``rlopt integral``'s options)."""
    return {
        "model": str(values.get("model") or "tree"),
        "target": str(values.get("target") or "").strip() or None,
        "features": str(values.get("features") or "").strip() or None,
        "precision": int(str(values.get("precision") or 3)),
        "max_depth": int(str(values.get("max_depth") or 3)),
        "seed": int(str(values.get("seed") or 0)),
    }


@posted_to(published_page)
async def update(request: Request, values) -> Response:
    state = request.app.state
    changes = str(values.get("max_changes") or "").strip()
    options = {  # read first: a bad one is said before any file is kept
        "id_column": str(values.get("id_column") or "").strip() or None,
        "max_changes": int(changes) if changes else None,
        "samples": int(str(values.get("samples") or 2000)),
        **model_fields(values),
    }
    before = await _stored(state.workspace, values.get("before"), "the database before the update")
    after = await _stored(state.workspace, values.get("after"), "the database after it")
    spec = UpdateSpec(before=before.id, after=after.id, **options)
    return RedirectResponse(f"/runs/{state.runner.submit(spec)}", status_code=303)


@posted_to(published_page)
async def choose(request: Request, values) -> Response:
    state = request.app.state
    options = {
        "k": int(str(values.get("k") or 5)),
        "subsamples": int(str(values.get("subsamples") or 1000)),
        "holdout": float(str(values.get("holdout") or 0.3)),
        "mask": str(values.get("mask") or "").strip() or None,
        **model_fields(values),
    }
    upload = values.get("data")
    if isinstance(upload, UploadFile) and upload.filename:
        data = await _stored(state.workspace, upload, "the data")
    else:
        data = await run_in_threadpool(make_original, state.workspace, str(values.get("source", "")))
    return RedirectResponse(
        f"/runs/{state.runner.submit(ChoiceSpec(data=data.id, **options))}", status_code=303
    )


async def run_page(request: Request) -> Response:
    state = request.app.state
    try:
        folder = state.workspace.run(request.path_params["run_id"])
    except RloptError as exc:
        return front(request, 404, str(exc))
    shown = panels(folder, state.templates.get_template("_family.html"))
    return page(request, "run.html", panels=shown, **run_view(state.workspace, folder))


@posted
async def stop(request: Request, values) -> Response:
    request.app.state.runner.stop(request.path_params["run_id"])
    return RedirectResponse(f"/runs/{request.path_params['run_id']}", status_code=303)


async def events(request: Request) -> Response:
    state = request.app.state
    try:
        folder = state.workspace.run(request.path_params["run_id"])
    except RloptError as exc:
        return PlainTextResponse(str(exc), status_code=404)
    return StreamingResponse(
        event_stream(request, folder, state.templates, state.csrf),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store"},
    )


async def download(request: Request) -> Response:
    name = request.path_params["name"]
    try:
        folder = request.app.state.workspace.run(request.path_params["run_id"])
    except RloptError as exc:
        return PlainTextResponse(str(exc), status_code=404)
    if name not in DOWNLOADS or not (folder / name).is_file():
        return PlainTextResponse(f"no file {name!r} in this run", status_code=404)
    inline = request.query_params.get("view") == "1"
    return FileResponse(
        folder / name,
        media_type=DOWNLOADS[name],
        filename=None if inline else f"{folder.name}-{name}",
        content_disposition_type="inline" if inline else "attachment",
    )


async def records(request: Request) -> Response:
    """The run's per-record table, filtered and sorted as asked (a fragment)."""
    try:
        folder = request.app.state.workspace.run(request.path_params["run_id"])
    except RloptError as exc:
        return PlainTextResponse(str(exc), status_code=404)
    query = request.query_params
    view = records_view(
        folder / "records.csv", query.get("sort"), query.get("desc") == "1", query.get("find", "")
    )
    return page(request, "_records.html", run_id=folder.name, **view)


ROUTES: list[BaseRoute] = [
    Route("/", index),
    Route("/load", load, methods=["POST"]),
    Route("/prepare", prepare, methods=["POST"]),
    Route("/declare", declare, methods=["POST"]),
    Route("/runs", start, methods=["POST"]),
    Route("/compare", compare, methods=["POST"]),
    Route("/models", models, methods=["GET", "POST"]),
    Route("/published", published),
    Route("/published/update", update, methods=["POST"]),
    Route("/published/choose", choose, methods=["POST"]),
    Route("/runs/{run_id}/cell", cell, methods=["POST"]),
    Route("/runs/{run_id}", run_page),
    Route("/runs/{run_id}/stop", stop, methods=["POST"]),
    Route("/runs/{run_id}/events", events),
    Route("/runs/{run_id}/files/{name}", download),
    Route("/runs/{run_id}/records", records),
    Mount("/static", StaticFiles(packages=[("rlopt.app", "static")]), name="static"),
]
"""Every address the server answers (behind :class:`~rlopt.app.security.TokenGate`)."""


async def _stored(workspace: Workspace, upload, name: str):
    """An uploaded file kept in the workspace and read as ``rlopt risk`` would read it."""
    from rlopt.data import load_table

    if not isinstance(upload, UploadFile) or not upload.filename:
        raise InputError(f"no file chosen for {name}; choose one")
    stored = workspace.store(upload.filename, await upload.read())
    try:
        load_table(stored.path)  # the command line's checks and messages (0 bytes, no header, ...)
    except InputError as exc:  # named as the officer named the file
        raise InputError(str(exc).replace(str(stored.path), upload.filename)) from None
    return stored


def _declared(values) -> dict:
    """The declarations of the pair form, in the command line's words (empty: none)."""
    id_column = str(values.get("id_column") or "") or None
    chosen = [str(c) for c in values.getlist("columns") if c != id_column]  # the identifier is not linked on
    every = [str(c) for c in values.getlist("all_columns")]
    declared = {
        "columns": chosen if chosen and chosen != [c for c in every if c != id_column] else None,
        "id_column": id_column,
        "ordinal": str(values.get("ordinal") or "").strip() or None,
        "nominal": str(values.get("nominal") or "").strip() or None,
    }
    return {key: value for key, value in declared.items() if value is not None}


def _pairs(text: str) -> dict[str, str]:
    """``p=10 variant=plain`` as ``{"p": "10", "variant": "plain"}`` (checked)."""
    flags = parameter_flags(text)
    return {flags[i].removeprefix("--").replace("-", "_"): flags[i + 1] for i in range(0, len(flags), 2)}
