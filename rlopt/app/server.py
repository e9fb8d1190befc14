"""The application of ``rlopt serve`` (Starlette, Jinja2 templates, htmx with
server-sent events; every script and style sheet served from the package):
:func:`create_app` puts what the pages share on ``app.state`` and builds the
application from the route table (:mod:`rlopt.app.routes`) behind the token gate
(:mod:`rlopt.app.security`)."""

from __future__ import annotations

from dataclasses import dataclass

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.middleware import Middleware

from rlopt.app.live import duration, status_word
from rlopt.app.routes import ROUTES
from rlopt.app.runs import Runner
from rlopt.app.security import Headers, TokenGate, csrf_token, new_token
from rlopt.app.workspace import Workspace

__all__ = ["AppState", "create_app", "new_token"]


@dataclass
class AppState:
    """What the pages share: the workspace, its runs, the token, the upload limit."""

    workspace: Workspace
    runner: Runner
    token: str
    max_upload_bytes: int


def create_app(state: AppState) -> Starlette:
    """The application; the caller starts and closes ``state.runner`` (``rlopt serve``
    runs it with uvicorn's lifespan off, so the application has no lifespan of its own).

    ``app.state`` holds ``workspace``, ``runner``, ``max_upload_bytes``, ``templates``
    (the package's autoescaping Jinja2 environment) and ``csrf`` (the forms' field);
    the token itself stays with the gate."""
    app = Starlette(routes=ROUTES, middleware=[Middleware(Headers), Middleware(TokenGate, token=state.token)])
    app.state.workspace = state.workspace
    app.state.runner = state.runner
    app.state.max_upload_bytes = state.max_upload_bytes
    app.state.templates = Environment(
        loader=PackageLoader("rlopt.app", "templates"), autoescape=select_autoescape()
    )
    app.state.templates.filters["duration"] = duration
    app.state.templates.filters["status_word"] = status_word
    app.state.csrf = csrf_token(state.token)
    return app
