"""A run's page follows the run through server-sent events (htmx's SSE extension swaps
each event's HTML into the page): the run's status, each family's interval panel, each
step, a map's cells, and ``end`` once the run's process has ended."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from jinja2 import Environment
from starlette.requests import Request

from rlopt.app.runs import read_events, run_state, spec_of
from rlopt.app.views import chart, grid_view

__all__ = ["POLL_SECONDS", "event_stream"]

POLL_SECONDS = 0.25
"""How often the event stream looks for a run's new events."""


async def event_stream(
    request: Request, folder: Path, templates: Environment, csrf: str
) -> AsyncIterator[str]:
    """The run's events as server-sent events: its status when it changes, each
    family's interval panel as it narrows, each step, and ``end`` once the run's process
    has ended; for a map, its cells each time ``results.csv`` changes."""
    offset, status, grid_seen = 0, None, None
    histories: dict[str, list[dict]] = {}
    panel = templates.get_template("_family.html")
    while not await request.is_disconnected():
        now = run_state(folder)["status"]  # read first, said last: the page shows the
        results = folder / "results.csv"  # map's last cells before it says "complete"
        changed = results.stat().st_mtime_ns if results.exists() else None
        if changed != grid_seen:
            grid_seen = changed
            grid = grid_view(folder, spec_of(run_state(folder)["spec"]))
            yield _sse(
                "grid", templates.get_template("_grid.html").render(run_id=folder.name, csrf=csrf, **grid)
            )
        if now != status:
            status = now
            yield _sse("status", now)
        new, offset = read_events(folder, offset)
        for event in new:
            if event["event"] == "interval":
                history = histories.setdefault(event["family"], [])
                history.append(event)
                html = panel.render(family=event["family"], history=history, chart=chart(history))
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
    """One server-sent event: its name, and its HTML one ``data:`` line per line."""
    data = "\n".join(f"data: {line}" for line in html.splitlines() or [""])
    return f"event: {name}\n{data}\n\n"
