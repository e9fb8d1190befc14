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
from rlopt.learn import describe_lower
from rlopt.report import plots

__all__ = ["render_risk_report", "render_results_report", "render_compare_report"]

MAX_RECORD_ROWS = 100
MAX_SUBSET_ROWS = 30


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("rlopt.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
    )
    env.globals["pct"] = lambda x: "" if x is None else f"{100 * x:.2f}%"
    return env


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


def _weights_view(family: str, params: dict) -> dict:
    """The view of attribute weights (``wm``, ``wm_m``): a bar chart and a table."""
    names, values = list(params["weights"]), list(params["weights"].values())
    return {
        "label": f"{family}: attribute weights",
        "note": "Which attributes carry the risk: the weight of each attribute's "
        "squared (standardised) difference.",
        "image": plots.bar_chart(names, values, title=f"{family} weights", ylabel="weight"),
        "table": {
            "columns": ["attribute", "weight"],
            "rows": [[n, f"{v:.4f}"] for n, v in zip(names, values)],
        },
    }


def _owa_view(family: str, params: dict) -> dict:
    """The view of OWA weights by rank: a bar chart."""
    values = params["weights_by_rank"]
    ranks = [f"{k + 1}" for k in range(len(values))]
    return {
        "label": f"{family}: OWA weights",
        "note": "Weight 1 applies to the largest squared difference of a pair, "
        "weight 2 to the second largest, and so on.",
        "image": plots.bar_chart(ranks, values, title=f"{family} weights by rank", ylabel="weight"),
        "table": None,
    }


def _measure_view(family: str, params: dict, shapley: dict) -> dict:
    """The view of a fuzzy measure (``choquet``): Shapley values and the largest subsets."""
    measure = sorted(params["measure"], key=lambda m: -m["value"])
    rows = [[", ".join(m["subset"]) or "(empty)", f"{m['value']:.4f}"] for m in measure[:MAX_SUBSET_ROWS]]
    return {
        "label": f"{family}: fuzzy measure",
        "note": f"Shapley value of each attribute (its share of the measure); "
        f"below, the {min(len(measure), MAX_SUBSET_ROWS)} subsets with "
        f"the largest measure of {len(measure)}.",
        "image": plots.bar_chart(
            list(shapley),
            list(shapley.values()),
            title=f"{family} Shapley values",
            ylabel="Shapley value",
        ),
        "table": {"columns": ["subset", "measure"], "rows": rows},
    }


def _matrix_view(family: str, params: dict) -> dict:
    """The view of a bilinear matrix ``Q``: a heatmap, or a table for 1 or 2 attributes."""
    q, names = np.asarray(params["Q"]), params["columns"]
    view: dict[str, Any] = {
        "label": f"{family}: matrix Q",
        "note": "d(a, b) = (a - b)' Q (a - b) on standardised records; "
        "the diagonal weights each attribute, off-diagonal "
        "entries couple attributes.",
        "image": None,
        "table": None,
    }
    if len(names) > 2:
        view["image"] = plots.heatmap(q, names, title=f"{family}: Q")
    else:
        view["table"] = {
            "columns": [""] + list(names),
            "rows": [[n] + [f"{v:.4f}" for v in row] for n, row in zip(names, q)],
        }
    return view


def _params_views(figures: dict) -> list[dict]:
    """A view (label, note, image, table) of each learned family's parameter."""
    views: list[dict[str, Any]] = []
    sources = {row["family"]: row.get("lower_source") for row in figures["families"]}
    for family, params in figures["params"].items():
        if not params:
            continue
        first_view = len(views)
        if "weights" in params:  # wm, wm_m
            views.append(_weights_view(family, params))
        elif "weights_by_rank" in params:  # owa
            views.append(_owa_view(family, params))
        elif "measure" in params:  # choquet
            views.append(_measure_view(family, params, figures["shapley"].get(family, {})))
        elif "Q" in params:  # bilinear
            views.append(_matrix_view(family, params))
        source = describe_lower(sources.get(family))
        if source is not None and len(views) > first_view:
            # a start the solver did not improve on is not a learned parameter: say where it is from
            views[first_view]["note"] = (
                f"{source[0].upper()}{source[1:]}; shown is that parameter. " + views[first_view]["note"]
            )
    return views


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
                    f"Upper end: {_steps(history, 'upper')}."
                ),
            }
        )
    return views


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
            plots=plot_uris,
            params_views=_params_views(figures),
            interval_views=_interval_views(figures),
            records=_table(flagged, MAX_RECORD_ROWS),
            records_csv=f"data:text/csv;base64,{csv}",
            tradeoff=_table(pd.DataFrame(figures["tradeoff"] or [])),
            worst=worst,
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


COMPARE_SHOWN = ["label", "risk", "risk_upper", "risk_status", "risk_source", "attack_rate", "k_anonymity"]
"""The columns of the compare page's tables before the loss measures (all are in the CSV)."""


def render_compare_report(
    frame: pd.DataFrame, path: str | Path, *, loss: str, front: Sequence[bool], about: dict
) -> Path:
    """The page of ``rlopt compare``: the risk-utility map, its Pareto front and every
    cell (``about``: name, n_records, qis, confidential, families, time_limit, failed)."""
    rows = frame.to_dict(orient="records")
    shown = [c for c in COMPARE_SHOWN if c in frame.columns]
    candidates = (loss, "il1s", "sse", "pmse", "correlation_change", "categorical_changed", "categorical_tv")
    losses = [c for c in dict.fromkeys(candidates) if c in frame.columns and frame[c].notna().any()]
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
            loss=loss,
            **about,
        )
    )
    path = Path(path)
    path.write_text(html, encoding="utf-8")
    return path
