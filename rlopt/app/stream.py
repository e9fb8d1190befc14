"""A run's page follows the run through server-sent events (htmx's SSE extension swaps
each event's HTML into the page): the run's status, each family's interval panel (as
:mod:`rlopt.app.live` draws it), the step line, a map's cells, and ``end`` once the
run's process has ended."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator
from pathlib import Path

from jinja2 import Environment
from starlette.requests import Request

from rlopt.app.live import command_start, family_views, status_word, step_view
from rlopt.app.runs import read_events, run_state, spec_of
from rlopt.app.views import figures_of, grid_view

__all__ = ["POLL_SECONDS", "TICK_SECONDS", "event_stream"]

POLL_SECONDS = 0.25
"""How often the event stream looks for a run's new events."""
TICK_SECONDS = 1.0
"""How often the running family's panel is drawn again, its time axis to now."""


async def event_stream(
    request: Request, folder: Path, templates: Environment, csrf: str
) -> AsyncIterator[str]:
    """The run's events as server-sent events: its status when it changes, each
    family's interval panel as it narrows (the running family's also each
    :data:`TICK_SECONDS`, its time axis drawn to now), the step line at each step, and
    ``end`` once the run's process has ended; for a map, its cells each time
    ``results.csv`` changes."""
    offset, status, grid_seen, ticked = 0, None, None, 0.0
    events: list[dict] = []
    spec = spec_of(run_state(folder)["spec"])
    limit = getattr(spec, "time_limit", None) or math.inf
    panel, step = templates.get_template("_family.html"), templates.get_template("_step.html")
    while not await request.is_disconnected():
        now = run_state(folder)["status"]  # read first, said last: the page shows the
        results = folder / "results.csv"  # map's last cells before it says "complete"
        changed = results.stat().st_mtime_ns if results.exists() else None
        if changed != grid_seen:
            grid_seen = changed
            grid = grid_view(folder, spec)
            yield _sse(
                "grid", templates.get_template("_grid.html").render(run_id=folder.name, csrf=csrf, **grid)
            )
        new, offset = read_events(folder, offset)
        events += new
        start = command_start(folder, events) if now == "running" else None
        clock = None if start is None else time.time() - start
        redrawn = {e["family"] for e in new if e["event"] == "interval"}
        if any(e["event"] != "interval" for e in new):  # a step: the family before it has ended
            redrawn |= {e["family"] for e in events if e["event"] == "interval"}
        figures = {} if now in ("queued", "running") else figures_of(folder)  # how each family ended
        views = family_views(events, time_limit=limit, now=clock, figures=figures)
        if time.monotonic() - ticked >= TICK_SECONDS:
            ticked = time.monotonic()
            redrawn |= {family for family, view in views.items() if view["running"]}
        for family in sorted(redrawn):
            yield _sse(f"family-{family}", panel.render(**views[family]))
        if now != status or any(e["event"] == "step" for e in new):
            yield _sse("step", step.render(step=step_view(folder, events, clock)))
        if now != status:
            status = now
            yield _sse("status", status_word(now))
        if (folder / "exit.json").exists():
            more, offset = read_events(folder, offset)
            events += more
            if not more:
                yield _sse("end", "ended")
                return
        await asyncio.sleep(POLL_SECONDS)


def _sse(name: str, html: str) -> str:
    """One server-sent event: its name, and its HTML one ``data:`` line per line."""
    data = "\n".join(f"data: {line}" for line in html.splitlines() or [""])
    return f"event: {name}\n{data}\n\n"
