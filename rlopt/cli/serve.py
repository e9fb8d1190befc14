"""``rlopt serve``: the local web application (:mod:`rlopt.app`), on 127.0.0.1 with a
secret token, its runs in a workspace folder."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Annotated

import typer

from rlopt.cli._app import Command, commands, summary
from rlopt.exceptions import InputError

app = commands()

MISSING_EXTRA = (
    'rlopt serve needs the web application\'s packages: pip install "rlopt[app]" (missing: {name})'
)


@app.command(cls=Command, short_help=summary("serve"), epilog="Example: rlopt serve --workspace ~/rlopt-runs")
def serve(
    port: Annotated[
        int, typer.Option(metavar="PORT", help="the port (default: a free one)", min=0, max=65535)
    ] = 0,
    host: Annotated[
        str,
        typer.Option(
            metavar="HOST", help="the address to listen on; anything but 127.0.0.1 is reachable by others"
        ),
    ] = "127.0.0.1",
    workspace: Annotated[
        Path | None,
        typer.Option(
            metavar="FOLDER", help="the folder of loaded files and runs (default: rlopt's user data folder)"
        ),
    ] = None,
    browser: Annotated[
        bool, typer.Option("--browser/--no-browser", help="open the page in a browser")
    ] = True,
    slots: Annotated[int, typer.Option(metavar="N", help="runs at a time (the others queue)", min=1)] = 1,
    max_upload: Annotated[float, typer.Option(metavar="MB", help="the largest upload", min=0.001)] = 200.0,
) -> None:
    """Start the web application: load an original and a masked file (or make them),
    run the assessment, watch each family's interval close, stop it, read the report and
    the command that reproduces it; map masking methods on risk and utility; check a
    released file's privacy models. Ctrl-C stops the server (its runs keep what they
    reached; a map resumes at the next start)."""
    try:
        import uvicorn

        from rlopt.app.runs import Runner
        from rlopt.app.server import AppState, create_app, new_token
        from rlopt.app.workspace import Workspace, default_workspace
    except ModuleNotFoundError as exc:
        raise InputError(MISSING_EXTRA.format(name=exc.name)) from None
    _warn_if_reachable(host)
    folder = Workspace(workspace if workspace is not None else default_workspace())
    folder.lock()
    listener = _listen(host, port)
    token = new_token()
    runner = Runner(folder, slots=slots)
    application = create_app(AppState(folder, runner, token, int(max_upload * 1e6)))
    bound = listener.getsockname()[1]
    address = f"http://{'[' + host + ']' if ':' in host else host}:{bound}/?token={token}"
    typer.echo(f"rlopt serve: {address}\n  workspace: {folder.root}\n  Ctrl-C stops the server", err=True)
    if browser:
        _open(address)
    folder.announce(address)
    _served(
        uvicorn.Server(uvicorn.Config(application, log_level="warning", lifespan="off")),
        listener,
        runner,
        folder,
    )


def _open(address: str) -> None:
    """The page in the user's browser; where there is no display (Linux or BSD with
    neither DISPLAY nor WAYLAND_DISPLAY, and no $BROWSER), or no browser opens, a line
    saying to open the address by hand (a console browser is never started)."""
    import os
    import sys
    import webbrowser

    shown = sys.platform in ("win32", "darwin") or any(
        os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")
    )
    opened = False
    if shown:
        try:
            opened = webbrowser.open(address)
        except webbrowser.Error:
            opened = False
    if not opened:
        why = "no browser could be opened" if shown else "no display found"
        typer.echo(f"rlopt serve: {why}: open {address} in a browser", err=True)


def _warn_if_reachable(host: str) -> None:
    """A warning when ``host`` is not this machine's loopback address alone."""
    if host not in ("127.0.0.1", "localhost", "::1"):
        typer.echo(
            f"warning: --host {host}: anyone who can reach this machine and learns the token can open your "
            "files and runs; keep 127.0.0.1 unless you know why",
            err=True,
        )


def _served(server, listener: socket.socket, runner, folder) -> None:
    """``server`` on ``listener`` until Ctrl-C; then the runs stopped (each keeps what it
    reached) and the workspace released."""
    try:
        server.run(sockets=[listener])
    finally:
        if runner.running:
            typer.echo(f"rlopt serve: stopping {runner.running} run(s); each keeps what it reached", err=True)
        runner.close()
        folder.release()
        typer.echo("rlopt serve: stopped", err=True)


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free one, with no race)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise InputError(f"--host {host} --port {port}: cannot listen there ({exc.strerror})") from None
    listener.listen(64)
    listener.setblocking(False)
    return listener
