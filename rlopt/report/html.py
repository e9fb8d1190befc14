"""Self-contained HTML reports: figures embedded, every user string escaped."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape

from rlopt.exceptions import InputError
from rlopt.families import BASELINES, FAMILIES, BaselineFamily, Chart, family_of, generic_view
from rlopt.milp.ceilings.certificate import describe_blocks, describe_lower
from rlopt.report import plots
from rlopt.report.answers import answer, integral_answer, map_answer, proven
from rlopt.status import Status

__all__ = ["render_risk_report", "render_results_report", "render_compare_report", "render_integral_report"]

MAX_RECORD_ROWS = 100


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("rlopt.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    env.globals["pct"] = lambda x: "" if x is None else f"{100 * x:.2f}%"
    env.filters["readable"] = _readable
    return env


def _readable(value) -> str:
    """An input as a reader writes it: a list as its items, a dict as ``key: value``
    pairs, None as "none" (not Python's reprs)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(_readable(v) for v in value) or "none"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_readable(v)}" for k, v in value.items()) or "none"
    return str(value)


def _table(frame: pd.DataFrame, limit: int | None = None) -> dict:
    shown = frame if limit is None else frame.head(limit)
    return {
        "columns": [str(c) for c in shown.columns],
        "rows": [[_cell(v) for v in row] for row in shown.itertuples(index=False)],
        "more": 0 if limit is None else max(0, len(frame) - limit),
    }


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else ""
    if isinstance(value, (float, np.floating)):
        return "" if np.isnan(value) else f"{value:.4g}"
    return value


def _chart_image(chart: Chart | None) -> str | None:
    """The PNG data URI of a family's chart (drawn here: the families only give its data)."""
    if chart is None:
        return None
    if chart.kind == "heatmap":
        return plots.heatmap(np.asarray(chart.matrix, dtype=float), chart.labels, title=chart.title)
    return plots.bar_chart(chart.labels, chart.values, title=chart.title, ylabel=chart.ylabel)


def _params_views(figures: dict) -> list[dict]:
    """A view (label, note, image, table) of each learned family's parameter: the family
    gives it (:meth:`rlopt.families.Family.report_view`); a parameter of a family not
    registered is shown as a table of its values."""
    views: list[dict[str, Any]] = []
    sources = {row["family"]: row.get("lower_source") for row in figures["families"]}
    columns = figures["inputs"].get("columns", [])
    for label, params in figures["params"].items():
        if not params:
            continue
        family = family_of(params, label)
        view = (
            generic_view(label, params) if family is None else family.report_view(params, columns, name=label)
        )
        note = view.note
        source = describe_lower(sources.get(label))
        if source is not None:
            # a start the solver did not improve on is not a learned parameter: say where it is from
            note = f"{source[0].upper()}{source[1:]}; shown is that parameter. " + note
        views.append(
            {
                "label": view.label,
                "note": note,
                "image": _chart_image(view.chart),
                "table": None
                if view.table is None
                else {"columns": list(view.table.columns), "rows": [list(row) for row in view.table.rows]},
            }
        )
    return views


def _baseline_titles() -> dict[str, str]:
    """The registered baselines, each with the name the report gives its distance."""
    return {name: cls.title for name in BASELINES if issubclass(cls := FAMILIES[name], BaselineFamily)}


def _interval_views(figures: dict) -> list[dict]:
    """Per learned family with a ``history``: the step plot of its interval and a caption
    naming the final interval and the steps behind each end."""
    views = []
    n = figures["inputs"]["n_records"]
    for row in figures["families"]:
        history = row.get("history")
        if not history:
            continue
        last = history[-1]
        end = max(row.get("seconds") or 0.0, last["seconds"])
        lower = "nothing verified" if last["lower"] is None else last["lower"]
        views.append(
            {
                "family": row["family"],
                "image": plots.interval_chart(
                    history, end=end, title=f"{row['family']}: the interval over the run"
                ),
                "caption": (
                    f"{row['family']}: final interval [{lower}, {last['upper']}] of {n} "
                    f"records after {end:.1f} s. Lower end: {_steps(history, 'lower')}. "
                    f"Upper end: {_steps(history, 'upper')}.{_blocks(row.get('blocks'))}"
                ),
            }
        )
    return views


def _blocks(certificate: dict | None) -> str:
    """A sentence on a family's block ceilings (empty without them)."""
    if not certificate:
        return ""
    longest = max((block["seconds"] for block in certificate["blocks"]), default=0.0)
    return (
        f" The {describe_blocks(certificate)}: the sum of the bounds of random blocks (seed "
        f"{certificate['seed']}; the longest solved in {longest:.1f} s; a block without a bound "
        "in time counts all its records)."
    )


def _steps(history: list[dict], end: str) -> str:
    """The values one end (``"lower"`` or ``"upper"``) took and the step behind each, a
    run of consecutive values from one step in one phrase."""
    runs: list[list] = []  # [source, first value, its seconds, last value, its seconds]
    previous = None
    for event in history:
        value, source = event[end], event[f"{end}_source"]
        if value is None or value == previous:
            continue
        previous = value
        if runs and runs[-1][0] == source:
            runs[-1][3:] = [value, event["seconds"]]
        else:
            runs.append([source, value, event["seconds"], value, event["seconds"]])
    return "; ".join(
        f"{first} at {t0:.1f} s by {source}"
        if first == last
        else f"{first} at {t0:.1f} s to {last} at {t1:.1f} s by {source}"
        for source, first, t0, last, t1 in runs
    )


def _drivers_view(drivers: dict | None) -> dict | None:
    """The drivers section's rows (``None`` without drivers): per attribute, the worst
    case without it in words, each family's interval and its share of each family's
    parameter; per record group, its count and up to :data:`MAX_RECORD_ROWS` record ids."""
    if not drivers:
        return None

    def ends(row: dict) -> str:
        if row["status"] in ("proven", "optimal"):
            return f"{row['lower']} ({row['status']})"
        upper = "no ceiling" if row["upper"] is None else row["upper"]
        return f"{row['lower']} to {upper} ({row['status']})"

    shares = {name: p["shares"] for name, p in drivers["parameters"].items() if p["shares"] is not None}
    rows = [
        {
            "rank": row["rank"],
            "attribute": row["attribute"],
            "without": ends(row),
            "drop": f"{row['drop']}{' exact' if row['drop_exact'] else ''}",
            "families": "; ".join(
                f"{fam['family']} {ends(fam)}"
                + ("" if fam["drop"] is None else f", drop {fam['drop']}")
                + (" exact" if fam["drop_exact"] else "")
                for fam in row["families"]
            ),  # fmt: skip
            "shares": [f"{values[row['attribute']]:.3f}" for values in shares.values()],
            "notes": " ".join(row["notes"]),
        }
        for row in drivers["ranking"]
    ]
    groups = [
        {
            "name": name,
            "meaning": drivers["records"]["meaning"][name],
            "n": group["n"],
            "records": ", ".join(map(str, group["records"][:MAX_RECORD_ROWS])),
            "more": max(0, group["n"] - MAX_RECORD_ROWS),
        }
        for name, group in drivers["records"]["groups"].items()
    ]
    return {"full": ends(drivers["full"]), "share_families": list(shares), "rows": rows, "groups": groups}


def render_risk_report(assessment, path: str | Path) -> Path:
    """Write the HTML risk report of a :class:`rlopt.risk.RiskAssessment`."""
    figures = assessment.figures
    # round-trip through JSON: the report shows exactly what the JSON file holds
    figures = json.loads(json.dumps(figures, default=lambda v: v.item() if hasattr(v, "item") else str(v)))
    records = assessment.records
    reid = [c for c in records if c.startswith("reid_")]
    # the records the methods disagree on, or that none re-identifies: the informative ones
    flagged = records[~records[reid].all(axis=1)].sort_values("n_families", ascending=False, kind="stable")
    csv = base64.b64encode(records.to_csv(index=False).encode()).decode("ascii")
    plot_uris = {"families": plots.family_chart([r for r in figures["families"]], figures["baselines"])}
    if figures.get("tradeoff"):
        plot_uris["tradeoff"] = plots.tradeoff_chart(figures["tradeoff"])
    worst = {r["family"]: r["rate"] for r in figures["families"]}
    html = (
        _environment()
        .get_template("risk.html")
        .render(
            title=f"rlopt risk report: {figures['inputs']['masked']}",
            f=figures,
            h=figures["headline"],
            answer=answer(figures),
            proven=proven(figures),
            plots=plot_uris,
            params_views=_params_views(figures),
            baseline_titles=_baseline_titles(),
            interval_views=_interval_views(figures),
            records=_table(flagged, MAX_RECORD_ROWS),
            records_csv=f"data:text/csv;base64,{csv}",
            tradeoff=_table(pd.DataFrame(figures["tradeoff"] or [])),
            worst=worst,
            drivers=_drivers_view(figures.get("drivers")),
        )
    )
    path = Path(path)
    path.write_text(html, encoding="utf-8")
    return path


def _markdown_blocks(text: str) -> list[dict]:
    """The pipe tables and paragraphs of a results markdown file (rendered, escaped,
    by the template; nothing of it is passed through as HTML)."""
    blocks: list[dict] = []
    table: list[str] = []
    para: list[str] = []

    def flush():
        if table:
            cells = [
                [c.strip().replace("**", "") for c in line.strip().strip("|").split("|")]
                for line in table
                if not set(line.strip()) <= set("|-: ")
            ]
            blocks.append({"kind": "table", "header": cells[0], "rows": cells[1:]})
            table.clear()
        if para:
            blocks.append({"kind": "text", "text": " ".join(para).lstrip("# ")})
            para.clear()

    for line in text.splitlines():
        if line.strip().startswith("|"):
            if para:
                flush()
            table.append(line)
        elif line.strip():
            if table:
                flush()
            para.append(line.strip())
        else:
            flush()
    flush()
    return blocks


def render_results_report(results_dir: str | Path, path: str | Path | None = None) -> Path:
    """An HTML report of an experiment run (``rlopt run`` / ``rlopt reproduce``): its
    results table, a chart per dataset, and any table*.md the run wrote."""
    results_dir = Path(results_dir)
    csv = results_dir / "results.csv"
    if not csv.is_file():
        raise InputError(
            f"no results.csv in {str(results_dir)!r}; expected the --out folder "
            "of rlopt run or rlopt reproduce"
        )
    frame = pd.read_csv(csv)
    charts = []
    if {"dataset", "family", "rate"} <= set(frame.columns):
        for dataset, rows in frame.groupby("dataset", sort=False):
            means = rows.groupby("family", sort=False)["rate"].mean() * 100
            charts.append(
                {
                    "dataset": dataset,
                    "image": plots.bar_chart(
                        list(means.index),
                        list(means.values),
                        title=f"{dataset}: mean rate by family",
                        ylabel="correct re-identifications (%)",
                    ),
                }
            )
    tables = [
        {"name": p.name, "blocks": _markdown_blocks(p.read_text())}
        for p in sorted(results_dir.glob("table*.md"))
    ]
    html = (
        _environment()
        .get_template("results.html")
        .render(
            title=f"rlopt results: {results_dir.name}",
            name=str(results_dir),
            charts=charts,
            tables=tables,
            results=_table(frame, 500),
        )
    )
    path = Path(path) if path is not None else results_dir / "report.html"
    path.write_text(html, encoding="utf-8")
    return path


COMPARE_SHOWN = [
    "label",
    "risk",
    "risk_low",  # a membership cell's out-of-sample interval
    "risk_upper",
    "risk_status",
    "membership_in_sample",
    "risk_source",
    "decision",  # with --threshold
    "risk_kind",
    "attack_rate",
    "k_anonymity",
]
"""The columns of the compare page's tables before the loss measures (all are in the CSV)."""


def render_compare_report(
    frame: pd.DataFrame, path: str | Path, *, loss: str, front: Sequence[bool], about: dict
) -> Path:
    """The page of ``rlopt compare``: the risk-utility map, its Pareto front and every
    cell (``about``: name, n_records, qis, confidential, families, time_limit, failed)."""
    rows = frame.to_dict(orient="records")
    shown = [c for c in COMPARE_SHOWN if c in frame.columns]
    candidates = (loss, "il1s", "sse", "pmse", "correlation_change", "categorical_changed", "categorical_tv")
    losses = [
        c for c in dict.fromkeys(candidates) if c in frame.columns and (c == loss or frame[c].notna().any())
    ]  # the map's own loss always, empty or not: the front is sorted by it
    models = [c for c in frame.columns if c in ("l_diversity", "t_closeness", "dp_ratio_epsilon", "epsilon")]
    table = frame[shown + losses + models]
    keep = np.asarray(front, dtype=bool)
    html = (
        _environment()
        .get_template("compare.html")
        .render(
            title=f"rlopt compare: {about['name']}",
            image=plots.risk_utility_map(rows, loss=loss, front=list(keep)) if rows else "",
            front=_table(table[keep].sort_values(loss)),
            cells=_table(table),
            n_cells=len(frame),
            n_front=int(keep.sum()),
            answer=map_answer(rows),
            all_proven=bool(rows) and all(r.get("risk_status") == Status.PROVEN for r in rows),
            synthetic=any(r.get("risk_kind") == "membership" for r in rows),
            loss=loss,
            **about,
        )
    )
    path = Path(path)
    path.write_text(html, encoding="utf-8")
    return path


def render_integral_report(figures: dict, path: str | Path, *, learner: str, precision: int) -> Path:
    """The page of ``rlopt integral``: the update, its consistent modifications, what they
    reveal (``figures``: :meth:`rlopt.integral.update.UpdateAttack.to_dict`)."""
    from importlib.metadata import version

    html = (
        _environment()
        .get_template("integral.html")
        .render(
            title=f"rlopt integral: {learner}",
            figures=figures,
            answer=integral_answer(figures),
            learner=learner,
            precision=precision,
            shown=MAX_RECORD_ROWS,
            version=version("rlopt"),
        )
    )
    path = Path(path)
    path.write_text(html, encoding="utf-8")
    return path
