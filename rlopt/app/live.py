"""What a run's page shows while it runs, and keeps once it has ended: each family's
interval panel (its chart drawn to now while the family runs, to its end once it has
ended, and a tag saying how it ended: proven, or an interval at the time limit, ...)
and the step line with its running clocks. All of it is read from the run's event log
(``events.jsonl``) and, once the run has ended, its figures; the page and its event
stream draw it alike."""

from __future__ import annotations

import math
import time
from pathlib import Path

from rlopt.app.runs import EVENTS, read_events
from rlopt.app.views import chart, figures_of

__all__ = [
    "ENDED",
    "command_start",
    "duration",
    "family_views",
    "live_view",
    "running_since",
    "status_word",
    "step_view",
]

ENDED = {
    "optimal": "proven",
    "time_limit": "interval at the time limit",
    "gap_limit": "interval at the gap limit",
    "cut_limit": "interval at the cap on cutting rounds",
    "interrupted": "interval when stopped",
    "decided": "interval that answers the threshold",
    "failed": "failed",
    "sampled": "a lower end (learned on a sample)",
}
"""The tag of a family that has ended, by its status in the run's figures."""
AT_THE_LIMIT = 0.95
"""A family that ran this share of its time limit unproven was stopped by it."""


def command_start(folder: Path, events: list[dict]) -> float | None:
    """The wall time at which the run's command started the clock of its events: the
    log's last write less that event's ``elapsed`` (``None`` before its first event)."""
    if not events:
        return None
    return (folder / EVENTS).stat().st_mtime - events[-1]["elapsed"]


def running_since(folder: Path) -> float | None:
    """The wall time the run's process started (``None`` while it is queued)."""
    pid = folder / "pid"
    return pid.stat().st_mtime if pid.exists() else None


def family_views(
    events: list[dict], *, time_limit: float, now: float | None, figures: dict
) -> dict[str, dict]:
    """Each family's panel: its ``history``, its ``chart`` (to ``now``, the command's
    clock, while it runs; to its end once it has ended) and its ``tag`` (``None`` while
    it runs, or when how it ended is not known yet). A family has ended when a later
    step began (the families are learned one after another) or the run's figures name
    it; unproven, it was stopped by the time limit when it ran that long."""
    histories: dict[str, list[dict]] = {}
    marks = []  # when each step (or the end) began, on the command's clock
    for event in events:
        if event["event"] == "interval":
            histories.setdefault(event["family"], []).append(event)
        else:
            marks.append(event["elapsed"])
    rows = {row["family"]: row for row in figures.get("families", []) if isinstance(row, dict)}
    stopped = figures.get("interrupted_family") or {}
    if isinstance(stopped, dict) and stopped.get("family"):
        rows[stopped["family"]] = {**stopped, "status": "interrupted"}
    for family in figures.get("reached") or {}:
        rows.setdefault(family, {"status": "interrupted"})
    views = {}
    for family, history in histories.items():
        first, last = history[0], history[-1]
        start = first["elapsed"] - first["seconds"]
        ended = next((mark - start for mark in marks if mark > last["elapsed"]), None)
        row = rows.get(family, {})
        if isinstance(row.get("seconds"), int | float):
            ended = float(row["seconds"])
        if last["lower"] is not None and last["lower"] == last["upper"]:
            tag: str | None = "proven"
        elif row.get("status"):
            tag = ENDED.get(row["status"], str(row["status"]))
        elif ended is not None and ended >= AT_THE_LIMIT * time_limit:
            tag = ENDED["time_limit"]
        else:
            tag = None
        end = ended if ended is not None else (now - start if now is not None else None)
        views[family] = {
            "family": family,
            "history": history,
            "chart": chart(history, end=end),
            "tag": tag,
            "running": ended is None and now is not None,
        }
    return views


def step_view(folder: Path, events: list[dict], now: float | None) -> dict:
    """The step line: how long the run has been running, and its current step and for
    how long (``None`` where not known yet); ``now`` on the command's clock."""
    since = running_since(folder)
    steps = [e for e in events if e["event"] == "step"]
    step = steps[-1] if steps else None
    return {
        "running": None if since is None else max(time.time() - since, 0.0),
        "step": step,
        "in_step": None if step is None or now is None else max(now - step["elapsed"], 0.0),
    }


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min`` (as static/clock.js counts on)."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes = whole // 60
    if minutes < 60:
        return f"{minutes} min {whole % 60:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def live_view(folder: Path, status: str, time_limit: float | None) -> tuple[dict[str, dict], dict]:
    """A run's family panels (:func:`family_views`) and step line (:func:`step_view`)
    as its folder says now; ``time_limit`` per family (``None``: none)."""
    events = read_events(folder)[0]
    start = command_start(folder, events) if status == "running" else None
    now = None if start is None else time.time() - start
    figures = {} if status in ("queued", "running") else figures_of(folder)
    views = family_views(events, time_limit=time_limit or math.inf, now=now, figures=figures)
    return views, step_view(folder, events, now)


STATUS_WORDS = {"complete": "finished"}
"""A run's status as the pages say it: "complete" read as all-clear on an unproven
result, so a run that ended with every figure says it finished (its answer says whether
it is proven)."""


def status_word(status: str) -> str:
    return STATUS_WORDS.get(status, status)
