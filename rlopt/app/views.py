"""What the pages of ``rlopt serve`` draw, as plain values for their templates: the pair
as ``rlopt risk`` reads it, a run and its files, a map's cells, the per-record table,
and the SVG geometry of a family's interval chart and of a map. Nothing here answers a
request; :mod:`rlopt.app.routes` calls these and renders the templates."""

from __future__ import annotations

import json
from pathlib import Path

from rlopt.app.prepare import BUNDLED
from rlopt.app.runs import FILE_ROLES, CompareSpec, reproduction, run_state, spec_of
from rlopt.app.workspace import Workspace
from rlopt.exceptions import RloptError

__all__ = [
    "DOWNLOADS",
    "RECORDS_SHOWN",
    "chart",
    "choices",
    "figures_of",
    "file_names",
    "headline",
    "grid_view",
    "listed_run",
    "map_points",
    "pair_view",
    "records_view",
    "run_answer",
    "run_view",
]

DOWNLOADS = {
    "figures.json": "application/json",
    "report.html": "text/html",
    "records.csv": "text/csv",
    "compare.html": "text/html",
    "compare.csv": "text/csv",
    "results.csv": "text/csv",
}
"""The files of a run a request may fetch (by these names only)."""
RECORDS_SHOWN = 200
"""The most rows of the per-record table a page shows (the CSV has them all)."""


def pair_view(original: Path, masked: Path, declared: dict) -> dict:
    """The two files as ``rlopt risk`` sees them with ``declared`` (columns, id column,
    ordinal, nominal in the command line's words): records, columns and their kinds."""
    import warnings

    from rlopt.data import KindSpec, load_table, validate_pair

    kinds = KindSpec.parse(declared.get("ordinal"), declared.get("nominal"), "category")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = load_table(original)
        every = [str(c) for c in table.columns]
        data = validate_pair(
            table,
            load_table(masked),
            columns=declared.get("columns"),
            id_column=declared.get("id_column"),
            kinds=kinds,
        )
    return {
        "n_records": data.n_records,
        "all_columns": every,
        "columns": [kind.to_dict() | {"described": kind.describe()} for kind in data.kinds]
        or [{"name": c, "kind": "numeric", "described": f"{c}: numeric"} for c in data.columns],
        "used": list(data.columns),
        "notes": [str(w.message) for w in caught],
    }


def choices() -> dict:
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
        # a pair for linkage: no fully synthetic method, and no partial synthesis (the form
        # names no columns to synthesize)
        "methods": [name for name, method in MASKING_METHODS.items() if not method.synthetic],
        "attacks": list(ATTACKS),
        "losses": list(LOSSES),
    }


def grid_view(folder: Path, spec) -> dict:
    """A map's finished cells (``results.csv``), each with its risk interval, loss,
    privacy-model levels and whether it is on the Pareto front so far
    (:func:`rlopt.experiments.compare.pareto_front`), and the map's points."""
    import numpy as np
    import pandas as pd

    from rlopt.experiments.compare import pareto_front

    path = folder / "results.csv"
    if not isinstance(spec, CompareSpec) or not path.exists():
        return {"rows": [], "loss": getattr(spec, "loss", "il1s"), "points": [], "most": 0.0, "axis": ""}
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
    kinds = {r.get("risk_kind") == "membership" for r in rows}
    axis = {
        frozenset({True}): "membership advantage out of sample",
        frozenset({True, False}): "worst-case re-identification, or membership advantage (fully synthetic)",
    }.get(frozenset(kinds), "worst-case re-identification")
    return {
        "rows": rows, "loss": loss, "points": map_points(rows, loss), "most": max(finite, default=0.0), "axis": axis,
    }  # fmt: skip


def map_points(rows: list[dict], loss: str, width: int = 480, height: int = 240) -> list[dict]:
    """SVG coordinates of each cell: x its loss, a point at its risk and a bar from its
    risk's lower to upper end (a membership cell: its out-of-sample 95 % interval)."""
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

    def y(rate: float) -> float:  # an advantage below 0 is drawn at the axis
        return round(10 + (height - 40) * (1 - min(max(rate, 0.0), 1.0)), 1)

    return [
        {
            "x": x(r[loss]),
            "at": y(r["risk"]),
            # a membership cell's bar: its out-of-sample interval around the estimate (a row
            # of an older map has none)
            "low": y(r["risk_low"] if _finite(r.get("risk_low")) else r["risk"]),
            "high": y(r["risk_upper"]),
            "label": r["label"],
            "pareto": r["pareto"],
        }
        for r in placed
    ]


def _finite(value) -> bool:
    return isinstance(value, float | int) and value == value and abs(value) != float("inf")


def records_view(path: Path, sort: str | None, descending: bool, find: str) -> dict:
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


def listed_run(workspace: Workspace, run_id: str) -> dict:
    """A run's state for the list: with when it was made and the names of its files."""
    started = f"{run_id[:4]}-{run_id[4:6]}-{run_id[6:8]} {run_id[9:11]}:{run_id[11:13]}:{run_id[13:15]}"
    try:
        state = run_state(workspace.run(run_id))
        names = file_names(workspace, state["spec"])
    except (OSError, ValueError, KeyError, RloptError) as exc:  # a folder a user edited by hand
        return {
            "id": run_id,
            "started": started,
            "status": "unreadable",
            "figure": "",
            "error": str(exc),
            "spec": {},
            "files": [],
        }
    ended = state["status"] not in ("queued", "running")
    return {
        **state,
        "started": started,
        "files": names,
        "figure": headline(workspace.run(run_id)) if ended else "",
    }


def figures_of(folder: Path) -> dict:
    """A run's figures (``figures.json``; empty where there are none)."""
    path = folder / "figures.json"
    try:
        figures = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError):
        return {}
    return figures if isinstance(figures, dict) else {}


def headline(folder: Path) -> str:
    """A finished run's figure for the list of runs: a risk run's worst case
    (``proven 38.75 %``, ``38.75 % – 94.25 %``), an update attack's verdict, a map's
    number of cells ("" where there is none)."""
    figures = figures_of(folder)
    worst = figures.get("headline") or {}
    rate, upper = worst.get("rate"), worst.get("upper_rate")
    if isinstance(rate, int | float):
        if worst.get("status") == "proven":
            return f"proven {100 * rate:.2f} %"
        return (
            f"{100 * rate:.2f} % – {100 * upper:.2f} %"
            if isinstance(upper, int | float)
            else f"at least {100 * rate:.2f} %"
        )
    crossed = figures.get("out_of_sample")
    if isinstance(crossed, dict) and isinstance(crossed.get("advantage"), int | float):
        return f"membership advantage {crossed['advantage']:.3f} out of sample"
    if "n_members" in figures and isinstance(figures.get("advantage"), int | float):  # no folds run
        return f"membership advantage {figures['advantage']:.3f} in sample"
    if "integrally_private" in figures:
        return "integrally private" if figures["integrally_private"] else "not integrally private"
    results = folder / "results.csv"
    if results.is_file():
        with results.open(encoding="utf-8") as lines:
            cells = sum(1 for _ in lines) - 1
        return f"{cells} cell{'' if cells == 1 else 's'}"
    return ""


def file_names(workspace: Workspace, spec: dict) -> list[str]:
    """The names the officer gave the run's files."""
    return [workspace.file(spec[role]).name for role in FILE_ROLES if spec.get(role)]


def run_view(workspace: Workspace, folder: Path) -> dict:
    """A run's page: its state, files, command, Python code, summary and downloads."""
    state = run_state(folder)
    spec = spec_of(state["spec"])
    ended = state["status"] not in ("queued", "running")
    log = folder / "output.log"
    return {
        "run": state,
        "files": file_names(workspace, state["spec"]),
        **reproduction(spec, workspace, folder.name),
        "ended": ended,
        "summary": log.read_text(encoding="utf-8", errors="replace") if ended and log.exists() else "",
        "downloads": [name for name in DOWNLOADS if (folder / name).is_file()],
        "answer": run_answer(folder) if ended else None,
    }


def run_answer(folder: Path) -> dict | None:
    """A finished run's answer in one line (:func:`rlopt.report.answers.answer`; a map's,
    :func:`rlopt.report.answers.map_answer`) from the figures it wrote, and whether it is proven
    (a run stopped or partly failed never is); ``None`` when it wrote none (an update
    attack's or private model's figures have no worst case of a pair)."""
    from rlopt.report.answers import answer, integral_answer, map_answer, membership_answer, proven

    if (folder / "compare.csv").is_file():
        import pandas as pd

        try:
            rows = pd.read_csv(folder / "compare.csv").to_dict(orient="records")
        except (OSError, ValueError):
            return None
        every = bool(rows) and all(r.get("risk_status") == "proven" for r in rows)
        return {"text": map_answer(rows), "proven": every}
    figures = figures_of(folder)
    if "n_members" in figures and isinstance(figures.get("advantage"), int | float):  # a membership run's
        return {"text": membership_answer(figures), "proven": False}
    if "integrally_private" in figures:  # an update attack's
        return {"text": integral_answer(figures), "proven": bool(figures["integrally_private"])}
    if not isinstance(figures.get("headline"), dict):
        return None
    try:
        return {"text": answer(figures), "proven": proven(figures)}
    except (KeyError, TypeError, ValueError, ZeroDivisionError):  # figures a user edited by hand
        return None


def chart(history: list[dict], width: int = 480, height: int = 160, end: float | None = None) -> dict:
    """The step lines of one family's interval over its run, in SVG coordinates: the
    time axis to ``end`` (seconds of the family: now while it runs, its end once it has
    ended; default its last change), the vertical one from the lowest end seen (its
    first verified count, the neutral start's) to the highest (its first ceiling)."""
    values = [e[key] for e in history for key in ("lower", "upper") if e[key] is not None]
    top, bottom = max(values), min(values)
    span = max(top - bottom, 1)
    end = max(end or 0.0, max(e["seconds"] for e in history), 1e-9)

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

    def source(key: str, value: int) -> str:
        return next((str(e.get(f"{key}_source") or "") for e in history if e[key] == value), "")

    return {
        "width": width,
        "height": height,
        "lower": steps("lower"),
        "upper": steps("upper"),
        "top": top,
        "bottom": bottom,
        "top_source": source("upper", top) or source("lower", top),
        "bottom_source": source("lower", bottom) or source("upper", bottom),
        "end": end,
    }
