"""What a notebook shows of rlopt's results: ``_repr_html_`` (the answer line and the
tables) and ``.plot()`` (a matplotlib figure) of a risk assessment, a learned estimator,
a membership result and a map. The results' own methods delegate here, so that the
computing packages import no rendering until a notebook asks.

Tables are pandas' ``DataFrame.to_html`` (every user string escaped); figures are
``matplotlib.figure.Figure`` objects made without pyplot's figure manager (so none is
left open), which Jupyter draws (importing pyplot, as :mod:`rlopt.report.plots` does,
registers its inline display) and which ``fig.savefig`` writes.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

import rlopt.report.plots  # noqa: F401 (pyplot imported: a notebook's inline display of a Figure)


def _shown(figure: Figure) -> Figure:
    """``figure``, once pyplot's backend module is loaded: in a notebook, loading the
    inline backend registers its display of a figure, which otherwise waits for pyplot's
    first figure (a bare ``Figure`` then shows as text). No figure is opened or closed."""
    import matplotlib.pyplot as plt

    plt._get_backend_mod()  # private, but the one call that loads it without closing figures
    return figure


__all__ = [
    "assessment_html",
    "assessment_figure",
    "estimator_figure",
    "estimator_html",
    "map_html",
    "map_figure",
    "membership_html",
    "membership_figure",
]


def _page(answer: str, tables: list[tuple[str, pd.DataFrame]], proven: bool = False) -> str:
    colour = "#1a7f37" if proven else "#b35900"
    parts = [
        f'<div class="rlopt"><p style="border-left: 6px solid {colour}; padding: 0.3em 0.6em; font-weight: bold">{html.escape(answer)}</p>'
    ]
    for title, frame in tables:
        if len(frame):
            parts.append(
                f"<p><b>{html.escape(title)}</b></p>{frame.to_html(index=False, na_rep='-', float_format=_figure)}"
            )
    return "\n".join(parts) + "</div>"


def _figure(value: float) -> str:
    return f"{value:.4g}"


def _percent(value) -> str:
    return "-" if value is None or value != value else f"{100 * value:.2f} %"


def _families(figures: dict) -> pd.DataFrame:
    rows = [
        {
            "family": f["family"],
            "re-identified": _percent(f.get("rate")),
            "up to": _percent(f.get("bound_rate")),
            "status": f["status"],
            "ceiling by": f.get("upper_source") or "-",
            "seconds": round(f.get("seconds") or 0.0, 1),
        }
        for f in figures.get("families", [])
    ]
    return pd.DataFrame(rows)


def assessment_html(assessment) -> str:
    """A risk assessment: its answer line, the families' intervals, the baselines."""
    from rlopt.report.answers import answer

    figures = assessment.figures
    baselines = pd.DataFrame(
        [
            {"baseline": name, "re-identified": _percent(row.get("rate")), "status": row.get("status")}
            for name, row in figures.get("baselines", {}).items()
        ]  # fmt: skip
    )
    return _page(
        answer(figures),
        [("Families (learned distances)", _families(figures)), ("Baselines", baselines)],
        proven=assessment.headline.proven,
    )


def _interval_axes(ax, names: list[str], lows: list[float], highs: list[float], *, xlabel: str) -> None:
    """One row per name: a bar from its lower to its upper end, a point at the lower end."""
    y = np.arange(len(names))[::-1]
    for yi, low, high in zip(y, lows, highs, strict=True):
        ax.plot([low, high], [yi, yi], color="C0", lw=6, alpha=0.35, solid_capstyle="butt")
        ax.plot([low], [yi], "o", color="C0")
    ax.set_yticks(y, names)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.3)


def assessment_figure(assessment):
    """Each family's interval (re-identified %, lower end to proven ceiling) and the
    baselines' counts as dashed lines."""

    figures = assessment.figures
    rows = [f for f in figures.get("families", []) if f.get("rate") is not None]
    figure = Figure(figsize=(6.5, 0.5 * len(rows) + 1.6), layout="constrained")
    ax = figure.subplots()
    _interval_axes(
        ax,
        [f["family"] for f in rows],
        [100 * f["rate"] for f in rows],
        [100 * (f["bound_rate"] if f.get("bound_rate") is not None else 1.0) for f in rows],
        xlabel="records re-identified (%)",
    )
    for i, (name, row) in enumerate(figures.get("baselines", {}).items()):
        if row.get("rate") is not None:
            ax.axvline(100 * row["rate"], ls="--", color=f"C{i + 1}", label=f"{name} {_percent(row['rate'])}")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="lower right")
    ax.set_title(
        f"Worst case: {_percent(assessment.headline.rate)} to {_percent(assessment.headline.upper_rate)}"
    )
    return _shown(figure)


def estimator_html(estimator) -> str:
    """A fitted :class:`~rlopt.learn.LearnedDistanceLinkage`: its interval and parameter."""
    result = estimator.result_
    n = result.n_records
    status = str(result.status)
    answer = f"{estimator.family}: {result.n_correct_verified} of {n} records re-identified" + (
        " (proven)" if status == "optimal" else f", up to {result.bound} ({status})"
    )
    params = pd.DataFrame([{"parameter": k, "value": v} for k, v in _flat(estimator.params_ or {}).items()])
    return _page(answer, [("The learned distance", params)], proven=status == "optimal")


def estimator_figure(estimator):
    """A fitted estimator's interval over its run: the verified count and the proven
    ceiling at each event of its certificate (one bar when it has none)."""

    result = estimator.result_
    figure = Figure(figsize=(6.5, 3.2), layout="constrained")
    ax = figure.subplots()
    history = [e for e in (result.history or []) if e.get("seconds") is not None]
    if history:
        seconds = [e["seconds"] for e in history]
        ax.step(seconds, [e.get("lower") or 0 for e in history], where="post", label="verified count")
        ax.step(seconds, [e.get("upper") if e.get("upper") is not None else result.n_records for e in history],
                where="post", label="proven ceiling")  # fmt: skip
        ax.set_xlabel("seconds")
        ax.legend(fontsize=8)
    else:
        _interval_axes(ax, [estimator.family], [result.n_correct_verified or 0],
                       [result.bound if result.bound is not None else result.n_records], xlabel="records")  # fmt: skip
    ax.set_ylabel("records re-identified") if history else None
    ax.set_title(
        f"{estimator.family}: {result.n_correct_verified} to {result.bound} of {result.n_records} ({result.status})"
    )
    return _shown(figure)


def _flat(params: dict, prefix: str = "") -> dict:
    out: dict = {}
    for key, value in params.items():
        if isinstance(value, dict):
            out |= _flat(value, f"{prefix}{key}.")
        elif key != "family":
            out[f"{prefix}{key}"] = value
    return out


def membership_html(result) -> str:
    """A membership result: the out-of-sample advantage first, then the in-sample one
    per family, the anchors and the chance level."""
    from rlopt.report.answers import membership_answer

    answer = membership_answer(result.to_dict())
    families = pd.DataFrame(
        [
            {
                "family": name,
                "advantage": f.lower.advantage,
                "up to": f.ceiling,
                "status": str(f.status),
                "TPR": f.lower.tpr,
                "FPR": f.lower.fpr,
            }
            for name, f in result.families.items()
        ]  # fmt: skip
    )
    anchors = pd.DataFrame(
        [
            {
                "anchor": kind,
                "out of sample": None if a.out_of_sample is None else a.out_of_sample.advantage,
                "in sample": a.in_sample,
            }
            for kind, a in result.anchors.items()
        ]  # fmt: skip
    )
    tables = [("In sample, per family", families), ("Anchors on the same split", anchors)]
    if result.null is not None:
        null = result.null
        tables.append(("Chance level (relabelled splits)", pd.DataFrame(
            [{"runs": null.runs, "mean": null.mean, "95 % quantile": null.q95, "p-value": null.p_value,
              "excess": null.excess}]
        )))  # fmt: skip
    return _page(answer, tables)


def membership_figure(result):
    """The advantages as intervals: out of sample (its 95 % interval), in sample per
    family (lower end to ceiling), the anchors."""

    names, lows, highs = [], [], []
    if result.out_of_sample is not None:
        names.append("out of sample")
        lows.append(result.out_of_sample.interval[0])
        highs.append(result.out_of_sample.interval[1])
    for name, family in result.families.items():
        names.append(f"{name} in sample")
        lows.append(family.lower.advantage)
        highs.append(family.ceiling)
    for kind, anchor in result.anchors.items():
        if anchor.out_of_sample is not None:
            names.append(f"anchor: {kind}")
            lows.append(anchor.out_of_sample.interval[0])
            highs.append(anchor.out_of_sample.interval[1])
    figure = Figure(figsize=(6.5, 0.5 * len(names) + 1.6), layout="constrained")
    ax = figure.subplots()
    _interval_axes(ax, names, lows, highs, xlabel="membership advantage TPR - FPR")
    ax.axvline(0, color="grey", lw=1)
    return _shown(figure)


def map_html(comparison) -> str:
    """A map: its answer line and its cells (risk, interval, loss, Pareto front)."""
    from rlopt.report.answers import map_answer

    frame = comparison.frame.assign(pareto=comparison.front)
    shown = [c for c in ("label", "risk", "risk_low", "risk_upper", "risk_status", "risk_source", "risk_kind",
                         "pareto") if c in frame.columns]  # fmt: skip
    losses = [c for c in ("il1s", "pmse", "sse") if c in frame.columns and frame[c].notna().any()]
    return _page(map_answer(frame.to_dict(orient="records")), [("Cells", frame[shown + losses])])


def map_figure(comparison, loss: str = "il1s"):
    """The risk-utility map as a figure (:func:`rlopt.report.plots.risk_utility_axes`)."""

    from rlopt.report.plots import risk_utility_axes

    figure = Figure(figsize=(8, 5), layout="constrained")
    risk_utility_axes(figure.subplots(), comparison.frame.to_dict(orient="records"), loss=loss,
                      front=list(comparison.front))  # fmt: skip
    return _shown(figure)
