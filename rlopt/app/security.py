"""The guards of ``rlopt serve``: the token on every request, the CSRF field and the
upload limit on every form, and a Content-Security-Policy on every response.

Every request carries the server's secret token, first in the address it printed
(``?token=``), then in a cookie it sets (``SameSite=Strict``, ``HttpOnly``); every form
also carries a field derived from the token (:func:`csrf_token`), checked with the
upload limit before its handler reads anything (:func:`posted_to`)."""

from __future__ import annotations

import functools
import hmac
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from rlopt.exceptions import RloptError

__all__ = [
    "COOKIE",
    "PAGE_POLICY",
    "REPORT_POLICY",
    "Headers",
    "TokenGate",
    "csrf_token",
    "form",
    "new_token",
    "posted_to",
]

COOKIE = "rlopt_token"
"""The cookie's name, followed by the server's port."""

PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'self'"
)
"""The Content-Security-Policy of the application's pages: scripts, styles and frames
from the server itself, none inline."""
REPORT_POLICY = (
    "sandbox allow-scripts allow-downloads allow-popups; default-src 'none'; img-src data:; "
    "style-src 'unsafe-inline'; script-src 'unsafe-inline'; frame-ancestors 'self'"
)
"""The policy of a report a run wrote (self-contained: its figures as data: images, its
style and its one script inline, as its own meta tag says), sandboxed: its script runs
apart from the application's pages."""

FormHandler = Callable[[Request, Any], Awaitable[Response]]
"""A form's handler: the request and its checked fields."""
FailedPage = Callable[[Request, int, str], Response]
"""The page that says a refused form: the request, the status code, the error."""


def new_token() -> str:
    """A fresh secret token for one server."""
    return secrets.token_urlsafe(24)


def csrf_token(token: str) -> str:
    """The hidden field every form of a server carries, derived from its token."""
    return hmac.new(token.encode(), b"forms", "sha256").hexdigest()


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


class Headers:
    """Every response with a Content-Security-Policy (:data:`PAGE_POLICY` unless the
    endpoint set its own) and ``X-Content-Type-Options: nosniff``."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {name.lower() for name, _ in headers}
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", PAGE_POLICY.encode()))
                headers.append((b"x-content-type-options", b"nosniff"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def form(request: Request) -> tuple[Any, str | None]:
    """The form's fields, checked against CSRF and the upload limit
    (``request.app.state``'s ``csrf`` and ``max_upload_bytes``); ``(None, why)`` when
    refused."""
    state = request.app.state
    length = int(request.headers.get("content-length") or 0)
    if length > state.max_upload_bytes:
        return (
            None,
            f"the upload is {length / 1e6:.1f} MB; expected at most {state.max_upload_bytes / 1e6:g} MB",
        )
    values = await request.form(max_part_size=state.max_upload_bytes)
    if not hmac.compare_digest(str(values.get("csrf", "")), state.csrf):
        return None, "this form is not from this server (reload the page)"
    return values, None


def posted_to(failed: FailedPage) -> Callable[[FormHandler], Callable[[Request], Awaitable[Response]]]:
    """A form's handler: CSRF and the upload limit checked first; the error a handler
    raises (an input the command line would refuse) said on the page ``failed`` draws
    (the front page, or the form's own)."""

    def decorate(handler: FormHandler) -> Callable[[Request], Awaitable[Response]]:
        @functools.wraps(handler)
        async def endpoint(request: Request) -> Response:
            values, refused = await form(request)
            if refused is not None:
                return failed(request, 400, refused)
            try:
                return await handler(request, values)
            except (RloptError, ValueError, KeyError, IndexError) as exc:
                return failed(request, 400, str(exc))

        return endpoint

    return decorate
