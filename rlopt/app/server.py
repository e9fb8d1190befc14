"""The pages and the event stream of ``rlopt serve`` (Starlette, Jinja2 templates, htmx
with server-sent events; every script and style sheet served from the package).

Every request carries the server's secret token, first in the address it printed
(``?token=``), then in a cookie it sets (``SameSite=Strict``, ``HttpOnly``); every form
also carries it in a hidden field (CSRF). Files and runs are addressed by the workspace's
identifiers only; every user string reaches the page through Jinja2's escaping."""

from __future__ import annotations

import asyncio
import hmac
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
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
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from rlopt.app.prepare import BUNDLED, make_original, make_pair, mask_cell, parameter_flags, privacy_models
from rlopt.app.runs import (
    FILE_ROLES,
    ChoiceSpec,
    CompareSpec,
    Runner,
    RunSpec,
    UpdateSpec,
    command_line,
    read_events,
    run_state,
    spec_of,
)
from rlopt.app.workspace import Workspace
from rlopt.exceptions import InputError, RloptError

__all__ = ["AppState", "create_app", "new_token"]

COOKIE = "rlopt_token"
DOWNLOADS = {
    "figures.json": "application/json",
    "report.html": "text/html",
    "records.csv": "text/csv",
    "compare.html": "text/html",
    "compare.csv": "text/csv",
    "results.csv": "text/csv",
}
"""The files of a run a request may fetch (by these names only)."""
POLL_SECONDS = 0.25
"""How often the event stream looks for a run's new events."""


@dataclass
class AppState:
    """What the pages share: the workspace, its runs, the token, the upload limit."""

    workspace: Workspace
    runner: Runner
    token: str
    max_upload_bytes: int


class TokenGate:
    """Every request needs the token (query ``token`` or the cookie); a right token in
    the query sets the cookie. Anything else: 403."""

    def __init__(self, app: ASGIApp, token: str):
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websocket here: refused
            await send({"type": "websocket.close", "code": 1008})
            return
        request = Request(scope)
        # one cookie per port: two servers on one machine do not overwrite each other's
        name = f"{COOKIE}_{(scope.get('server') or ('', 0))[1]}"
        given = request.query_params.get("token")
        if given is not None and hmac.compare_digest(given, self.token):
            response: Response = RedirectResponse(scope["path"], status_code=303)
            response.set_cookie(name, self.token, httponly=True, samesite="strict")
            await response(scope, receive, send)
            return
        cookie = request.cookies.get(name, "")
        if not hmac.compare_digest(cookie, self.token):
            forbidden = PlainTextResponse(
                "rlopt serve: this address needs the token the server printed when it started "
                "(open the address with ?token=... that it printed)",
                status_code=403,
            )
            await forbidden(scope, receive, send)
            return
        await self.app(scope, receive, send)


def create_app(state: AppState) -> Starlette:
    """The application; the caller starts and closes ``state.runner``."""
    templates = Environment(loader=PackageLoader("rlopt.app", "templates"), autoescape=select_autoescape())
    csrf = hmac.new(state.token.encode(), b"forms", "sha256").hexdigest()

    def page(name: str, status_code: int = 200, **values) -> HTMLResponse:
        return HTMLResponse(templates.get_template(name).render(csrf=csrf, **values), status_code=status_code)

    async def form(request: Request):
        """The form's fields, checked against CSRF and the upload limit; ``None`` when refused."""
        length = int(request.headers.get("content-length") or 0)
        if length > state.max_upload_bytes:
            return (
                None,
                f"the upload is {length / 1e6:.1f} MB; expected at most {state.max_upload_bytes / 1e6:g} MB",
            )
        values = await request.form(max_part_size=state.max_upload_bytes)
        if not hmac.compare_digest(str(values.get("csrf", "")), csrf):
            return None, "this form is not from this server (reload the page)"
        return values, None

    def front(status_code: int = 200, error: str | None = None) -> HTMLResponse:
        runs = [_safe_state(state.workspace, run_id) for run_id in state.workspace.run_ids()]
        return page("index.html", status_code, runs=runs, error=error, **_choices())

    async def index(request: Request) -> Response:
        return front()

    FormHandler = Callable[[Request, Any], Awaitable[Response]]

    def posted_to(failed: Callable[..., HTMLResponse]) -> Callable[[FormHandler], Callable]:
        """A form's handler: CSRF and the upload limit checked first; the error a handler
        raises (an input the command line would refuse) said on the page ``failed`` draws
        (the front page, or the form's own)."""

        def decorate(handler: FormHandler) -> Callable[[Request], Awaitable[Response]]:
            async def endpoint(request: Request) -> Response:
                values, refused = await form(request)
                if refused is not None:
                    return failed(400, refused)
                try:
                    return await handler(request, values)
                except (RloptError, ValueError, KeyError, IndexError) as exc:
                    return failed(400, str(exc))

            return endpoint

        return decorate

    posted = posted_to(front)

    def pair_page(original, masked, declared: dict, made: Sequence[str] = (), status_code: int = 200):
        """The files as rlopt reads them with what the officer declared, and the form."""
        error: str | None = None
        try:
            pair = _pair(original.path, masked.path, declared)
        except RloptError as exc:  # a declaration that does not fit: said, the form kept
            error = str(exc)
            try:
                pair = _pair(original.path, masked.path, {})
            except RloptError:  # the files themselves do not pair
                return front(400, error)
        return page(
            "pair.html",
            status_code if error is None else 400,
            original=original,
            masked=masked,
            pair=pair,
            declared=declared,
            made=list(made),
            error=error,
            **_choices(),
        )

    @posted
    async def load(request: Request, values) -> Response:
        original = await _stored(state.workspace, values.get("original"), "original")
        masked = await _stored(state.workspace, values.get("masked"), "masked")
        return pair_page(original, masked, {})

    @posted
    async def prepare(request: Request, values) -> Response:
        records = str(values.get("records") or "").strip()
        made = await run_in_threadpool(
            make_pair,
            state.workspace,
            str(values.get("source", "")),
            method=str(values.get("method") or "") or None,
            parameters=str(values.get("parameters") or ""),
            records=int(records) if records else None,
            seed=int(str(values.get("seed") or 0)),
        )
        return pair_page(made.original, made.masked, {}, made.commands)

    @posted
    async def declare(request: Request, values) -> Response:
        """The pair page again, with the kinds, columns and id the officer declared."""
        original = state.workspace.file(str(values.get("original", "")))
        masked = state.workspace.file(str(values.get("masked", "")))
        return pair_page(original, masked, _declared(values))

    @posted
    async def start(request: Request, values) -> Response:
        declared = _declared(values)
        original = state.workspace.file(str(values["original"]))
        masked = state.workspace.file(str(values["masked"]))
        try:  # the declarations checked as the command will check them, before it is queued
            _pair(original.path, masked.path, declared)
        except RloptError:
            return pair_page(original, masked, declared)
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
        folder = state.workspace.run(request.path_params["run_id"])
        spec = spec_of(run_state(folder)["spec"])
        if not isinstance(spec, CompareSpec):
            raise InputError("this run is not a map; expected a map's cell")
        row = _grid(folder, spec)["rows"][int(str(values.get("row", "")))]
        made = await run_in_threadpool(
            mask_cell, state.workspace, spec.original, row["method"], row["parameters"], int(row["seed"])
        )
        return pair_page(made.original, made.masked, {}, made.commands)

    async def models(request: Request) -> Response:
        """Privacy models of a released file (``rlopt models``), on one page."""
        if request.method == "GET":
            return page("models.html")
        values, refused = await form(request)
        if refused is not None:
            return page("models.html", 400, error=refused)
        fields = ("quasi_identifiers", "confidential", "k", "p", "l", "t", "epsilon")
        asked = {name: str(values.get(name) or "") for name in fields}
        try:
            released = await _stored(state.workspace, values.get("released"), "released")
            summary, command = await run_in_threadpool(privacy_models, released, asked)
        except RloptError as exc:
            return page("models.html", 400, error=str(exc), asked=asked)
        return page("models.html", summary=summary, command=command, asked=asked, released=released.name)

    def published_page(status_code: int = 200, error: str | None = None) -> HTMLResponse:
        return page(
            "published.html", status_code, error=error, bundled=list(BUNDLED), methods=_choices()["methods"]
        )

    async def published(request: Request) -> Response:
        """Integral privacy of published models: the update attack and the private model."""
        return published_page()

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
        try:
            folder = state.workspace.run(request.path_params["run_id"])
        except RloptError as exc:
            return front(404, str(exc))
        panels = _panels(folder, templates.get_template("_family.html"))
        return page("run.html", panels=panels, **_run_view(state.workspace, folder))

    @posted
    async def stop(request: Request, values) -> Response:
        state.runner.stop(request.path_params["run_id"])
        return RedirectResponse(f"/runs/{request.path_params['run_id']}", status_code=303)

    async def events(request: Request) -> Response:
        try:
            folder = state.workspace.run(request.path_params["run_id"])
        except RloptError as exc:
            return PlainTextResponse(str(exc), status_code=404)
        return StreamingResponse(
            _event_stream(request, folder, templates, csrf),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store"},
        )

    async def download(request: Request) -> Response:
        name = request.path_params["name"]
        try:
            folder = state.workspace.run(request.path_params["run_id"])
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
            folder = state.workspace.run(request.path_params["run_id"])
        except RloptError as exc:
            return PlainTextResponse(str(exc), status_code=404)
        query = request.query_params
        view = _records_view(
            folder / "records.csv", query.get("sort"), query.get("desc") == "1", query.get("find", "")
        )
        return page("_records.html", run_id=folder.name, **view)

    routes = [
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
    app = Starlette(routes=routes)
    app.add_middleware(TokenGate, token=state.token)
    return app


def new_token() -> str:
    return secrets.token_urlsafe(24)


async def _stored(workspace: Workspace, upload, name: str):
    """An uploaded file kept in the workspace and read as ``rlopt risk`` would read it."""
    from rlopt.data import load_table
    from rlopt.exceptions import InputError

    if not isinstance(upload, UploadFile) or not upload.filename:
        raise InputError(f"no file chosen for {name}; choose one")
    stored = workspace.store(upload.filename, await upload.read())
    try:
        load_table(stored.path)  # the command line's checks and messages (0 bytes, no header, ...)
    except InputError as exc:  # named as the officer named the file
        raise InputError(str(exc).replace(str(stored.path), upload.filename)) from None
    return stored


def _pair(original: Path, masked: Path, declared: dict) -> dict:
    """The two files as ``rlopt risk`` sees them with ``declared`` (columns, id column,
    ordinal, nominal in the command line's words): records, columns and their kinds."""
    import warnings

    from rlopt.data import KindSpec, load_table, validate_pair

    kinds = KindSpec.parse(declared.get("ordinal"), declared.get("nominal"), "category")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = validate_pair(
            load_table(original),
            load_table(masked),
            columns=declared.get("columns"),
            id_column=declared.get("id_column"),
            kinds=kinds,
        )
    every = list(load_table(original).columns)
    return {
        "n_records": data.n_records,
        "all_columns": [str(c) for c in every],
        "columns": [kind.to_dict() | {"described": kind.describe()} for kind in data.kinds]
        or [{"name": c, "kind": "numeric", "described": f"{c}: numeric"} for c in data.columns],
        "used": list(data.columns),
        "notes": [str(w.message) for w in caught],
    }


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


def _choices() -> dict:
    """What the forms offer: families, bundled files, presets, masking methods, attacks."""
    from rlopt.attacks import ATTACKS
    from rlopt.experiments.compare import LOSSES
    from rlopt.families import FAMILIES, LEARNED
    from rlopt.masking import PUBLISHED_FILES
    from rlopt.masking.methods import MASKING_METHODS

    return {
        "families": [(name, FAMILIES[name].title) for name in LEARNED],
        "bundled": list(BUNDLED),
        "presets": list(PUBLISHED_FILES),
        "methods": list(MASKING_METHODS),
        "attacks": list(ATTACKS),
        "losses": list(LOSSES),
    }


def _grid(folder: Path, spec) -> dict:
    """A map's finished cells (``results.csv``), each with its risk interval, loss,
    privacy-model levels and whether it is on the Pareto front so far
    (:func:`rlopt.experiments.compare.pareto_front`), and the map's points."""
    import numpy as np
    import pandas as pd

    from rlopt.experiments.compare import pareto_front

    path = folder / "results.csv"
    if not isinstance(spec, CompareSpec) or not path.exists():
        return {"rows": [], "loss": getattr(spec, "loss", "il1s"), "points": [], "most": 0.0}
    frame = pd.read_csv(path)
    loss = spec.loss
    done = frame.dropna(subset=["risk", "risk_upper", loss]) if len(frame) else frame
    front = pareto_front(done, loss) if len(done) else np.zeros(0, dtype=bool)
    on_front = dict(zip(done.index, front, strict=True))
    rows = [
        {**row, "pareto": bool(on_front.get(i, False))}
        for i, row in zip(frame.index, frame.to_dict(orient="records"), strict=True)
    ]
    finite = [r[loss] for r in rows if isinstance(r.get(loss), float | int) and r[loss] == r[loss]]
    return {"rows": rows, "loss": loss, "points": _map_points(rows, loss), "most": max(finite, default=0.0)}


def _map_points(rows: list[dict], loss: str, width: int = 480, height: int = 240) -> list[dict]:
    """SVG coordinates of each cell: x its loss, a bar from its risk's lower to upper end."""
    import math

    placed = [
        r
        for r in rows
        if all(
            isinstance(r.get(k), float | int) and math.isfinite(r[k]) for k in ("risk", "risk_upper", loss)
        )
    ]
    if not placed:
        return []
    most = max(r[loss] for r in placed) or 1.0

    def x(value: float) -> float:
        return round(50 + (width - 70) * value / most, 1)

    def y(rate: float) -> float:
        return round(10 + (height - 40) * (1 - rate), 1)

    return [
        {
            "x": x(r[loss]),
            "low": y(r["risk"]),
            "high": y(r["risk_upper"]),
            "label": r["label"],
            "pareto": r["pareto"],
        }
        for r in placed
    ]


RECORDS_SHOWN = 200
"""The most rows of the per-record table a page shows (the CSV has them all)."""


def _records_view(path: Path, sort: str | None, descending: bool, find: str) -> dict:
    """The per-record table's rows with ``find`` in some cell, sorted by ``sort`` (a
    column of the table; anything else: file order), the first :data:`RECORDS_SHOWN`."""
    import pandas as pd

    frame = pd.read_csv(path) if path.is_file() else pd.DataFrame()
    if find:
        cells = frame.astype(str)
        frame = frame[
            cells.apply(lambda column: column.str.contains(find, case=False, regex=False)).any(axis=1)
        ]
    if sort is not None and sort in frame.columns:
        frame = frame.sort_values(by=str(sort), ascending=not descending, kind="stable")
    return {
        "columns": [str(c) for c in frame.columns],
        "rows": frame.head(RECORDS_SHOWN).astype(str).values.tolist(),
        "n_rows": len(frame),
        "sort": sort,
        "desc": descending,
        "find": find,
        "shown": RECORDS_SHOWN,
    }


def _panels(folder: Path, template) -> dict[str, str]:
    """Each family's interval panel as its events so far draw it (rendered by the
    autoescaping template): a page shows them at once, the event stream then goes on."""
    histories: dict[str, list[dict]] = {}
    for event in read_events(folder)[0]:
        if event["event"] == "interval":
            histories.setdefault(event["family"], []).append(event)
    return {
        family: template.render(family=family, history=history, chart=_chart(history))
        for family, history in histories.items()
    }


def _safe_state(workspace: Workspace, run_id: str) -> dict:
    """A run's state for the list: with when it was made and the names of its files."""
    started = f"{run_id[:4]}-{run_id[4:6]}-{run_id[6:8]} {run_id[9:11]}:{run_id[11:13]}:{run_id[13:15]}"
    try:
        state = run_state(workspace.run(run_id))
        names = _file_names(workspace, state["spec"])
    except (OSError, ValueError, KeyError, RloptError) as exc:  # a folder a user edited by hand
        return {
            "id": run_id,
            "started": started,
            "status": "unreadable",
            "error": str(exc),
            "spec": {},
            "files": [],
        }
    return {**state, "started": started, "files": names}


def _file_names(workspace: Workspace, spec: dict) -> list[str]:
    """The names the officer gave the run's files."""
    return [workspace.file(spec[role]).name for role in FILE_ROLES if role in spec]


def _run_view(workspace: Workspace, folder: Path) -> dict:
    state = run_state(folder)
    argv = json.loads((folder / "argv.json").read_text(encoding="utf-8"))
    spec = spec_of(state["spec"])
    ended = state["status"] not in ("queued", "running")
    log = folder / "output.log"
    return {
        "run": state,
        "files": _file_names(workspace, state["spec"]),
        "command": command_line(argv, folder),
        "python": spec.python(workspace),
        "ended": ended,
        "summary": log.read_text(encoding="utf-8", errors="replace") if ended and log.exists() else "",
        "downloads": [name for name in DOWNLOADS if (folder / name).is_file()],
    }


async def _event_stream(
    request: Request, folder: Path, templates: Environment, csrf: str
) -> AsyncIterator[str]:
    """The run's events as server-sent events: its status when it changes, each
    family's interval panel as it narrows, each step, and ``end`` once the run's process
    has ended; for a map, its cells each time ``results.csv`` changes."""
    offset, status, grid_seen = 0, None, None
    histories: dict[str, list[dict]] = {}
    panel = templates.get_template("_family.html")
    while not await request.is_disconnected():
        now = run_state(folder)["status"]
        if now != status:
            status = now
            yield _sse("status", now)
        results = folder / "results.csv"
        changed = results.stat().st_mtime_ns if results.exists() else None
        if changed != grid_seen:
            grid_seen = changed
            grid = _grid(folder, spec_of(run_state(folder)["spec"]))
            yield _sse(
                "grid", templates.get_template("_grid.html").render(run_id=folder.name, csrf=csrf, **grid)
            )
        new, offset = read_events(folder, offset)
        for event in new:
            if event["event"] == "interval":
                history = histories.setdefault(event["family"], [])
                history.append(event)
                html = panel.render(family=event["family"], history=history, chart=_chart(history))
                yield _sse(f"family-{event['family']}", html)
            elif event["event"] == "step":
                yield _sse("step", templates.get_template("_step.html").render(event=event))
        if (folder / "exit.json").exists():
            more, offset = read_events(folder, offset)
            if not more:
                yield _sse("end", "ended")
                return
        await asyncio.sleep(POLL_SECONDS)


def _sse(name: str, html: str) -> str:
    data = "\n".join(f"data: {line}" for line in html.splitlines() or [""])
    return f"event: {name}\n{data}\n\n"


def _chart(history: list[dict], width: int = 480, height: int = 160) -> dict:
    """The step lines of one family's interval over its run, in SVG coordinates (the
    vertical axis from the lowest end seen to the highest)."""
    values = [e[key] for e in history for key in ("lower", "upper") if e[key] is not None]
    top, bottom = max(values), min(values)
    span = max(top - bottom, 1)
    end = max(max(e["seconds"] for e in history), 1e-9)

    def x(seconds: float) -> float:
        return round(50 + (width - 60) * seconds / end, 1)

    def y(value: float) -> float:
        return round(10 + (height - 30) * (top - value) / span, 1)

    def steps(key: str) -> str:
        points, previous = [], None
        for e in history:
            if e[key] is None:
                continue
            if previous is not None:
                points.append(f"{x(e['seconds'])},{y(previous)}")
            points.append(f"{x(e['seconds'])},{y(e[key])}")
            previous = e[key]
        if previous is not None:
            points.append(f"{x(end)},{y(previous)}")
        return " ".join(points)

    return {
        "width": width,
        "height": height,
        "lower": steps("lower"),
        "upper": steps("upper"),
        "top": top,
        "bottom": bottom,
        "end": end,
    }
