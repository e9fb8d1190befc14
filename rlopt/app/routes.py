"""The pages of ``rlopt serve``: one module-level endpoint per address, reading what the
server shares from ``request.app.state`` (the workspace, the run queue, the templates,
the CSRF field and the upload limit), and the route table :data:`ROUTES`.

A form's endpoint is a handler behind :func:`~rlopt.app.security.posted_to`, which
checks its CSRF field and the upload limit first and says an error on the page. Files
and runs are addressed by the workspace's identifiers only; every user string reaches
the page through Jinja2's escaping."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

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

from rlopt.app.forms import asked_map, asked_risk, command_defaults, map_options, risk_families, risk_options
from rlopt.app.live import live_view
from rlopt.app.prepare import BUNDLED, make_original, make_pair, mask_cell, privacy_models
from rlopt.app.runs import ChoiceSpec, CompareSpec, MembershipSpec, RunSpec, UpdateSpec, run_state, spec_of
from rlopt.app.security import REPORT_POLICY, form, posted_to
from rlopt.app.stream import event_stream
from rlopt.app.views import (
    DOWNLOADS,
    choices,
    grid_view,
    listed_run,
    pair_view,
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


def front(
    request: Request,
    status_code: int = 200,
    error: str | None = None,
    *,
    asked: dict | None = None,
    kept: dict | None = None,
    error_form: str | None = None,
) -> HTMLResponse:
    """The front page: the forms and the runs so far, with ``error`` said (beside the
    form ``error_form`` refused, else at the top); a refused form drawn again with what
    was given (``asked``: its fields by form, ``kept``: the files it had loaded, by form
    and field)."""
    workspace = request.app.state.workspace
    runs = [listed_run(workspace, run_id) for run_id in workspace.run_ids()]
    defaults = {
        name: f"{value:g}" if isinstance(value, float) else value
        for name, value in command_defaults()["map"].items()
    }
    return page(
        request,
        "index.html",
        status_code,
        runs=runs,
        error=error,
        error_form=error_form,
        asked={"map": defaults, **(asked or {})},
        kept=kept or {},
        **choices(),
    )


posted = posted_to(front)
"""A form of the front page (a refused one is said there)."""


async def index(request: Request) -> Response:
    return front(request)


def pair_page(
    request: Request,
    original,
    masked,
    declared: dict,
    made: Sequence[str] = (),
    status_code: int = 200,
    *,
    asked: dict | None = None,
    refused: str | None = None,
    checked: bool = False,
) -> HTMLResponse:
    """The files as rlopt reads them with what the officer declared, and the assess
    form: its fields as ``asked`` (default: what ``rlopt risk`` takes on this pair), a
    ``refused`` submission said; ``checked``: say that the declared kinds hold."""
    error: str | None = refused
    try:
        pair = pair_view(original.path, masked.path, declared)
    except RloptError as exc:  # a declaration that does not fit: said, the form kept
        error = str(exc)
        checked = False
        try:
            pair = pair_view(original.path, masked.path, {})
        except RloptError:  # the files themselves do not pair
            return front(request, 400, error)
    defaults = command_defaults()["risk"]
    form = {
        "families": risk_families(len(pair["used"])),
        "time_limit": f"{defaults['time_limit']:g}",
        "folds": str(defaults["folds"]),
        "attack_method": "",
        "attack_parameters": "",
    } | (asked or {})
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
        asked=form,
        checked=checked and error is None,
        **choices(),
    )


@posted
async def load(request: Request, values) -> Response:
    """The two files, each uploaded or kept from a refused load; a file refused is said
    with its role, and the other one kept on the form."""
    workspace = request.app.state.workspace
    kept, errors = {}, []
    for role in ("original", "masked"):
        try:
            kept[role] = await _chosen(workspace, values, role, f"the {role} file")
        except InputError as exc:
            errors.append(str(exc))
    if errors:
        return front(request, 400, "; ".join(errors), kept={"load": kept})
    return pair_page(request, kept["original"], kept["masked"], {})


@posted
async def prepare(request: Request, values) -> Response:
    """A pair made in the page (``rlopt data`` and ``rlopt mask``), or the form again
    as given with what the commands refused."""
    asked = {
        name: str(values.get(name) or "").strip()
        for name in ("source", "records", "method", "parameters", "seed")
    }
    try:
        made = await run_in_threadpool(
            make_pair,
            request.app.state.workspace,
            asked["source"],
            method=asked["method"] or None,
            parameters=asked["parameters"],
            records=int(asked["records"]) if asked["records"] else None,
            seed=int(asked["seed"] or 0),
        )
    except (RloptError, ValueError) as exc:
        return front(request, 400, str(exc), asked={"prepare": asked})
    return pair_page(request, made.original, made.masked, {}, made.commands)


@posted
async def declare(request: Request, values) -> Response:
    """The pair page again, with the kinds, columns and id the officer declared (and
    the assess form as they left it)."""
    workspace = request.app.state.workspace
    original = workspace.file(str(values.get("original", "")))
    masked = workspace.file(str(values.get("masked", "")))
    return pair_page(request, original, masked, _declared(values), asked=asked_risk(values), checked=True)


@posted
async def start(request: Request, values) -> Response:
    """A risk run queued from the assess form, or the form again with what was wrong."""
    state = request.app.state
    declared = _declared(values)
    original = state.workspace.file(str(values["original"]))
    masked = state.workspace.file(str(values["masked"]))
    asked = asked_risk(values)
    try:  # the declarations checked as the command will check them, before it is queued
        pair = pair_view(original.path, masked.path, declared)
    except RloptError:
        return pair_page(request, original, masked, declared, asked=asked)
    try:
        options = risk_options(asked, pair["n_records"])
    except (RloptError, ValueError) as exc:
        return pair_page(request, original, masked, declared, asked=asked, refused=str(exc))
    spec = RunSpec(
        original=original.id,
        masked=masked.id,
        columns=declared.get("columns"),
        id_column=declared.get("id_column"),
        ordinal=declared.get("ordinal"),
        nominal=declared.get("nominal"),
        **options,
    )
    return RedirectResponse(f"/runs/{state.runner.submit(spec)}", status_code=303)


@posted
async def compare(request: Request, values) -> Response:
    """A risk-utility map of one file (uploaded, kept from a refused form, or bundled),
    queued as a run; or the form again with what was wrong."""
    from rlopt.data import load_table

    state = request.app.state
    asked = asked_map(values)
    kept: dict = {}
    try:
        original = await _map_file(state.workspace, values, asked["source"], kept)
        n_records = len(await run_in_threadpool(load_table, original.path))
        spec = CompareSpec(original=original.id, **map_options(asked, n_records))
    except (RloptError, ValueError) as exc:
        said = str(exc).replace("--methods ", "Methods ")  # the form's words, not the command line's
        return front(request, 400, said, asked={"map": asked}, kept={"map": kept}, error_form="map")
    return RedirectResponse(f"/runs/{state.runner.submit(spec)}", status_code=303)


@posted
async def cell(request: Request, values) -> Response:
    """One cell of a map as a pair (its masked file made by rlopt mask and named after
    the cell), on the assess form with the map's families and time limit."""
    workspace = request.app.state.workspace
    folder = workspace.run(request.path_params["run_id"])
    spec = spec_of(run_state(folder)["spec"])
    if not isinstance(spec, CompareSpec):
        raise InputError("this run is not a map; expected a map's cell")
    key = str(values.get("cell", ""))
    rows = [row for row in grid_view(folder, spec)["rows"] if str(row.get("key")) == key]
    if not rows:
        raise InputError(f"no cell {key!r} in this map")
    row = rows[0]
    if row.get("risk_kind") == "membership":
        raise InputError(
            f"{row['label']} is fully synthetic: its records are nobody's, so no linkage report applies; "
            "its membership advantage is on the map (rlopt membership measures it on its own)"
        )
    # a method without parameters: results.csv's empty cell reads back as NaN
    parameters = row["parameters"] if isinstance(row["parameters"], str) else ""
    made = await run_in_threadpool(
        mask_cell, workspace, spec.original, row["method"], parameters, int(row["seed"]), row["label"]
    )
    asked = {"families": list(spec.families), "time_limit": f"{spec.time_limit:g}"}
    return pair_page(request, made.original, made.masked, {}, made.commands, asked=asked)


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
        released = await _stored(request.app.state.workspace, values.get("released"), "the released file")
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


def synthetic_page(request: Request, status_code: int = 200, error: str | None = None) -> HTMLResponse:
    """The synthetic release's page (``rlopt membership``), with ``error`` said."""
    from rlopt.masking.methods import MASKING_METHODS, fully_synthetic
    from rlopt.risk.membership.milp import membership_families

    generators = [name for name in MASKING_METHODS if fully_synthetic(name)]
    return page(
        request, "synthetic.html", status_code, error=error, bundled=list(BUNDLED), generators=generators,
        families=list(membership_families()),
    )  # fmt: skip


async def synthetic(request: Request) -> Response:
    """The membership worst case of a fully synthetic release."""
    return synthetic_page(request)


@posted_to(synthetic_page)
async def membership(request: Request, values) -> Response:
    """A membership run: one file split and given to a generator, or the three files."""
    from rlopt.risk.membership.calibration import check_permutations
    from rlopt.risk.membership.milp import membership_families

    state = request.app.state
    families = [str(f) for f in values.getlist("families")] or ["wm"]
    unknown = [f for f in families if f not in membership_families()]
    if unknown:
        raise InputError(f"families {unknown}; expected some of {', '.join(membership_families())}")
    reserve, epsilon = (
        str(values.get("reserve_share") or "").strip(),
        str(values.get("epsilon") or "").strip(),
    )
    options: dict[str, Any] = {  # read first: a bad one is said before any file is kept
        "attack_families": families,
        "time_limit": float(str(values.get("time_limit") or 60)),
        "folds": int(str(values.get("folds") or 0)),
        "permutations": int(str(values.get("permutations") or 0)),
        "seed": int(str(values.get("seed") or 0)),
    }
    if options["folds"] == 1 or options["folds"] < 0:
        raise InputError(f"folds {options['folds']}; expected 0 (none) or at least 2")
    if options["permutations"]:
        check_permutations(options["permutations"])
    three = [values.get(role) for role in ("training", "holdout", "synthetic")]
    if any(isinstance(u, UploadFile) and u.filename for u in three):
        stored = [
            await _stored(state.workspace, upload, role)
            for upload, role in zip(
                three, ("the training file", "the held-out records", "the synthetic release")
            )
        ]
        spec = MembershipSpec(training=stored[0].id, held_out=stored[1].id, synthetic=stored[2].id, **options)
    else:
        data = await _map_file(
            state.workspace, values, str(values.get("source") or ""), {}, "data", "the data"
        )
        spec = MembershipSpec(
            data=data.id, generator=str(values.get("generator") or "synthetic_copula"),
            epsilon=float(epsilon) if epsilon else None,
            holdout_share=float(str(values.get("holdout_share") or 0.3)),
            reserve_share=float(reserve) if reserve else None, **options,
        )  # fmt: skip
    return RedirectResponse(f"/runs/{state.runner.submit(spec)}", status_code=303)


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
    try:
        data = await _map_file(
            state.workspace, values, str(values.get("source") or ""), {}, "data", "the data"
        )
    except RloptError as exc:
        return published_page(request, 400, str(exc))
    return RedirectResponse(
        f"/runs/{state.runner.submit(ChoiceSpec(data=data.id, **options))}", status_code=303
    )


async def run_page(request: Request) -> Response:
    state = request.app.state
    try:
        folder = state.workspace.run(request.path_params["run_id"])
    except RloptError as exc:
        return front(request, 404, str(exc))
    view = run_view(state.workspace, folder)
    families, step = live_view(folder, view["run"]["status"], view["run"]["spec"].get("time_limit"))
    panel = state.templates.get_template("_family.html")
    shown = {family: panel.render(**values) for family, values in families.items()}
    return page(request, "run.html", panels=shown, step=step, **view)


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
        headers={"Content-Security-Policy": REPORT_POLICY} if DOWNLOADS[name] == "text/html" else None,
    )


async def favicon(request: Request) -> Response:
    """The icon a browser asks for (``static/favicon.svg``)."""
    return FileResponse(Path(__file__).parent / "static" / "favicon.svg", media_type="image/svg+xml")


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
    Route("/favicon.ico", favicon),
    Route("/load", load, methods=["POST"]),
    Route("/prepare", prepare, methods=["POST"]),
    Route("/declare", declare, methods=["POST"]),
    Route("/runs", start, methods=["POST"]),
    Route("/compare", compare, methods=["POST"]),
    Route("/models", models, methods=["GET", "POST"]),
    Route("/published", published),
    Route("/published/update", update, methods=["POST"]),
    Route("/published/choose", choose, methods=["POST"]),
    Route("/synthetic", synthetic),
    Route("/synthetic/membership", membership, methods=["POST"]),
    Route("/runs/{run_id}/cell", cell, methods=["POST"]),
    Route("/runs/{run_id}", run_page),
    Route("/runs/{run_id}/stop", stop, methods=["POST"]),
    Route("/runs/{run_id}/events", events),
    Route("/runs/{run_id}/files/{name}", download),
    Route("/runs/{run_id}/records", records),
    Mount("/static", StaticFiles(packages=[("rlopt.app", "static")]), name="static"),
]
"""Every address the server answers (behind :class:`~rlopt.app.security.TokenGate`)."""


async def _stored(workspace: Workspace, upload, role: str):
    """An uploaded file kept in the workspace and read as ``rlopt risk`` would read it;
    a file it refuses is said with its ``role`` (the original file, ...)."""
    from rlopt.data import load_table

    if not isinstance(upload, UploadFile) or not upload.filename:
        raise InputError(f"no file chosen for {role}; choose one")
    stored = workspace.store(upload.filename, await upload.read())
    try:
        await run_in_threadpool(load_table, stored.path)  # the command line's checks and messages
    except InputError as exc:  # named as the officer named the file
        raise InputError(f"{role}: {str(exc).replace(str(stored.path), upload.filename)}") from None
    return stored


async def _chosen(workspace: Workspace, values, field: str, role: str):
    """The file of ``field``: uploaded now, or kept from a refused form (``kept_FIELD``,
    a loaded file's identifier)."""
    upload = values.get(field)
    if isinstance(upload, UploadFile) and upload.filename:
        return await _stored(workspace, upload, role)
    kept = str(values.get(f"kept_{field}") or "")
    if kept:
        return workspace.file(kept)
    raise InputError(f"no file chosen for {role}; choose one")


async def _map_file(
    workspace: Workspace,
    values,
    source: str,
    kept: dict,
    field: str = "original",
    role: str = "the file to mask",
):
    """The one file of a map (or of a private model): uploaded, kept, or bundled, and
    only one of them (none is an error, never a bundled file in its place); a file
    loaded here is put in ``kept`` for a refused form."""
    upload = values.get(field)
    given = isinstance(upload, UploadFile) and bool(upload.filename)
    if not given and not values.get(f"kept_{field}") and not source:
        raise InputError(
            f"no file chosen; choose the file to mask or one of the bundled files ({', '.join(BUNDLED)})"
        )
    if source:
        if given or values.get(f"kept_{field}"):
            name = upload.filename if given else workspace.file(str(values.get(f"kept_{field}"))).name
            raise InputError(f"both {name!r} and the bundled file {source!r} chosen; expected one of them")
        return await run_in_threadpool(make_original, workspace, source)
    chosen = await _chosen(workspace, values, field, role)
    kept[field] = chosen
    return chosen


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
