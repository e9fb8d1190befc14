"""Figures of the reports, drawn with matplotlib and embedded as PNG data URIs
(a report never loads anything from elsewhere)."""

from __future__ import annotations

import base64
import io
import sys
from collections.abc import Sequence

import matplotlib

if "ipykernel" not in sys.modules:  # a notebook keeps its inline backend, which draws .plot()'s figures
    matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from rlopt.families import DEFAULT_BASELINE  # noqa: E402
from rlopt.status import Status  # noqa: E402

__all__ = [
    "bar_chart",
    "heatmap",
    "family_chart",
    "interval_chart",
    "tradeoff_chart",
    "risk_utility_axes",
    "risk_utility_map",
    "png_data_uri",
]


def png_data_uri(figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _width(n_bars: int) -> float:
    return min(12.0, max(4.5, 0.55 * n_bars + 2))


def bar_chart(labels: Sequence[str], values: Sequence[float], *, title: str, ylabel: str) -> str:
    figure, ax = plt.subplots(figsize=(_width(len(labels)), 3.2))
    ax.bar(range(len(values)), values, color="#3b6ea5")
    ax.set_xticks(
        range(len(labels)),
        [str(x) for x in labels],
        rotation=45 if len(labels) > 6 else 0,
        ha="right" if len(labels) > 6 else "center",
    )
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    return png_data_uri(figure)


def family_chart(rows: list[dict], baselines: dict) -> str:
    """Rates of the families (bar: verified; whisker up to the proven bound) and baselines."""
    baselines = {k: b for k, b in baselines.items() if b["rate"] is not None}
    rows = [r for r in rows if r["rate"] is not None]  # a failed family, one stopped before a count
    labels = [r["family"] for r in rows] + list(baselines)
    low = [100 * (r["rate"] or 0) for r in rows] + [100 * b["rate"] for b in baselines.values()]
    high = [100 * (r["bound_rate"] if r["bound_rate"] is not None else (r["rate"] or 0)) for r in rows] + low[
        len(rows) :
    ]
    colours = ["#3b6ea5" if r["status"] in (Status.OPTIMAL, Status.APPLIED) else "#d08c2b" for r in rows]
    colours += ["#8a8a8a"] * len(baselines)
    figure, ax = plt.subplots(figsize=(_width(len(labels)), 3.4))
    x = np.arange(len(labels))
    ax.bar(x, low, color=colours)
    ax.errorbar(
        x, low, yerr=[np.zeros(len(low)), np.subtract(high, low)], fmt="none", ecolor="black", capsize=4
    )
    ax.set_xticks(x, labels, rotation=30 if len(labels) > 6 else 0)
    ax.set_ylabel("correct re-identifications (%)")
    ax.set_ylim(0, 100)  # bars from zero: a cut axis made small differences look large
    ax.set_title("Families (blue: proven; orange: interval up to the bound) and baselines (grey)")
    ax.grid(axis="y", alpha=0.3)
    return png_data_uri(figure)


def interval_chart(history: list[dict], *, end: float, title: str) -> str:
    """Step plot of a learning run's interval (its ``history`` events) from the first
    event to ``end`` seconds: the verified lower end and the proven upper end."""
    seconds = [e["seconds"] for e in history] + [max(end, history[-1]["seconds"])]
    lower = [np.nan if e["lower"] is None else e["lower"] for e in history]
    upper = [e["upper"] for e in history]
    lower, upper = lower + lower[-1:], upper + upper[-1:]
    figure, ax = plt.subplots(figsize=(6.5, 3.2))
    ax.fill_between(seconds, lower, upper, step="post", color="#d08c2b", alpha=0.15)
    ax.step(seconds, upper, where="post", color="#d08c2b", label="upper end (proven)")
    ax.step(seconds, lower, where="post", color="#3b6ea5", label="lower end (verified)")
    ax.set_xlabel("seconds since the start of the run")
    ax.set_ylabel("records re-identified")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    _legend(ax, loc="best", fontsize=8)
    return png_data_uri(figure)


def heatmap(matrix: np.ndarray, labels: Sequence[str], *, title: str) -> str:
    matrix = np.asarray(matrix, dtype=float)
    size = min(10.0, max(4.0, 0.5 * len(labels) + 2))
    figure, ax = plt.subplots(figsize=(size + 1, size))
    limit = float(np.abs(matrix).max()) or 1.0
    image = ax.imshow(matrix, cmap="RdBu_r", vmin=-limit, vmax=limit)
    ax.set_xticks(range(len(labels)), labels, rotation=90)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_title(title)
    figure.colorbar(image, ax=ax, shrink=0.8)
    return png_data_uri(figure)


def tradeoff_chart(rows: list[dict]) -> str:
    """Worst-case rate against information loss (SSE / SST), one line per family."""
    baseline_rate = f"{DEFAULT_BASELINE}_rate"  # the key rlopt.risk.risk_utility writes (its BASELINE_RATE)

    figure, ax = plt.subplots(figsize=(6.5, 4))
    for family in sorted({r["family"] for r in rows}):
        own = sorted((r for r in rows if r["family"] == family), key=lambda r: r["sse"])
        x = [r["sse"] for r in own]
        low = [100 * (r["rate"] or 0) for r in own]
        high = [100 * (r["bound_rate"] if r["bound_rate"] is not None else (r["rate"] or 0)) for r in own]
        line = ax.plot(x, low, marker="o", label=f"{family} (worst case; bar: up to the bound)")
        ax.errorbar(
            x,
            low,
            yerr=[np.zeros(len(low)), np.subtract(high, low)],
            fmt="none",
            ecolor=line[0].get_color(),
            capsize=3,
        )
        for r in own:
            ax.annotate(
                f"{r['parameter']}={r['value']:g}",
                (r["sse"], 100 * (r["rate"] or 0)),
                fontsize=7,
                textcoords="offset points",
                xytext=(3, 3),
            )
    own = sorted(rows, key=lambda r: r["sse"])
    ax.plot(
        [r["sse"] for r in own],
        [100 * r[baseline_rate] for r in own],
        ls="--",
        color="grey",
        label=f"{DEFAULT_BASELINE} (baseline)",
    )
    ax.set_xlabel("information loss, SSE / SST")
    ax.set_ylabel("correct re-identifications (%)")
    ax.grid(alpha=0.3)
    _legend(
        ax,
    )
    return png_data_uri(figure)


def _legend(ax, **options) -> None:
    """The axes' legend, where something on them has a label (matplotlib warns "No
    artists with labels found" otherwise, e.g. a map whose cells none could place)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**options)


def risk_utility_map(rows: list[dict], *, loss: str, front: Sequence[bool]) -> str:
    """The map of :func:`risk_utility_axes`, as a PNG data URI (the compare page's)."""
    figure, ax = plt.subplots(figsize=(8, 5))
    risk_utility_axes(ax, rows, loss=loss, front=front)
    return png_data_uri(figure)


def risk_utility_axes(ax, rows: list[dict], *, loss: str, front: Sequence[bool]) -> None:
    """Every compared cell on ``ax``: ``loss`` across, the worst case up (its interval as
    an error bar, never a point at its lower end alone), one colour per method; the
    Pareto front's cells ringed, joined and labelled."""
    # a cell without the loss (a fully synthetic file has no il1s) is named in the notes, not placed
    placed = [i for i, r in enumerate(rows) if r.get(loss) is not None and r[loss] == r[loss]]
    rows, front = [rows[i] for i in placed], [front[i] for i in placed]
    for i, method in enumerate(sorted({r["method"] for r in rows})):
        own = [r for r in rows if r["method"] == method]
        x = [r[loss] for r in own]
        y = [100 * r["risk"] for r in own]
        high = [100 * r["risk_upper"] for r in own]
        membership = own[0].get("risk_kind") == "membership"
        # a re-identification worst case: its interval from the verified lower end up;
        # a membership advantage out of sample: its 95 % interval around the estimate
        low = [100 * r.get("risk_low", r["risk"]) if membership else 100 * r["risk"] for r in own]
        low = [v if v == v else y_ for v, y_ in zip(low, y)]  # an older map's row: no interval below
        label = f"{method} (membership advantage out of sample)" if membership else method
        ax.scatter(x, y, s=28, color=f"C{i}", marker="^" if membership else "o", label=label, zorder=3)
        ax.errorbar(
            x, y, yerr=[np.subtract(y, low), np.subtract(high, y)], fmt="none",
            ecolor=f"C{i}", capsize=3, zorder=2,
        )  # fmt: skip
    best = sorted((r for r, keep in zip(rows, front) if keep), key=lambda r: r[loss])
    if best:
        ax.plot([r[loss] for r in best], [100 * r["risk"] for r in best], color="black", lw=1, zorder=1)
        ax.scatter(
            [r[loss] for r in best], [100 * r["risk"] for r in best], s=90,
            facecolors="none", edgecolors="black", label="Pareto front", zorder=4,
        )  # fmt: skip
        for r in best:
            ax.annotate(
                r["label"], (r[loss], 100 * r["risk"]), fontsize=7, textcoords="offset points", xytext=(4, 4)
            )
    ax.set_xlabel(f"information loss ({loss})")
    kinds = {r.get("risk_kind") == "membership" for r in rows}
    ax.set_ylabel(
        {
            frozenset({True}): "membership advantage TPR - FPR, out of sample (%)",
            frozenset({True, False}): "worst-case re-identification (%), or membership advantage (triangles)",
        }.get(frozenset(kinds), "worst-case re-identification (%)")
    )
    ax.grid(alpha=0.3)
    _legend(ax, fontsize=8)
