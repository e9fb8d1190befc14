"""What a family shows of one of its parameters in the risk report.

A family turns its parameter (the JSON-ready ``Distance.params()``) into a
:class:`ParameterView`: a heading, a note, a table and a chart given as data (its
kind, labels and values). The report (:mod:`rlopt.report.html`) draws the chart
and renders the rest; nothing here imports a plotting or templating library.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Chart",
    "ParameterTable",
    "ParameterView",
    "MAX_TABLE_ROWS",
    "bar",
    "heatmap",
    "generic_view",
    "number",
]

MAX_TABLE_ROWS = 30
"""The most rows a view's table shows of a long parameter (the largest first)."""


def number(value: float) -> str:
    """A parameter's value as the report shows it (four decimals)."""
    return f"{value:.4f}"


@dataclass(frozen=True)
class Chart:
    """A chart given as data: ``kind`` ``"bar"`` (``values``, one per label) or
    ``"heatmap"`` (``matrix``, square, one row and one column per label)."""

    kind: Literal["bar", "heatmap"]
    title: str
    labels: tuple[str, ...]
    values: tuple[float, ...] = ()
    matrix: tuple[tuple[float, ...], ...] = ()
    ylabel: str = ""


@dataclass(frozen=True)
class ParameterTable:
    """A table of text cells, the first column naming the row."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class ParameterView:
    """One family's parameter as the report shows it: a heading (``label``), a
    ``note`` on how to read it, and a ``table`` and/or a ``chart``."""

    label: str
    note: str
    table: ParameterTable | None = None
    chart: Chart | None = None


def _flatten(prefix: str, value) -> list[tuple[str, str]]:
    if isinstance(value, Mapping):
        return [
            row
            for key, item in value.items()
            for row in _flatten(f"{prefix}.{key}" if prefix else str(key), item)
        ]
    if isinstance(value, (list, tuple)) and not all(isinstance(v, str) for v in value):
        return [row for k, item in enumerate(value) for row in _flatten(f"{prefix}[{k}]", item)]
    if isinstance(value, (list, tuple)):
        return [(prefix, ", ".join(value))]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return [(prefix, str(value))]
    return [(prefix, f"{value:.4g}")]


def generic_view(name: str, params: Mapping, *, limit: int = 200) -> ParameterView:
    """Every value of ``params`` (but its ``family`` and ``note``), one row each, nested
    keys and list positions spelled out (``weights.a``, ``Q[0][1]``): the view of a
    family that has none of its own."""
    rows = _flatten("", {k: v for k, v in params.items() if k not in ("family", "note")})
    note = "The parameter's values as the JSON figures hold them."
    if len(rows) > limit:
        note += f" The first {limit} of {len(rows)} values are shown."
    if isinstance(params.get("note"), str):
        note = f"{params['note'][0].upper()}{params['note'][1:]}. {note}"
    return ParameterView(
        label=f"{name}: parameters",
        note=note,
        table=ParameterTable(("parameter", "value"), tuple(rows[:limit])),
    )


def bar(labels: Sequence[str], values: Sequence[float], *, title: str, ylabel: str) -> Chart:
    """A bar chart of one value per label."""
    return Chart(
        "bar", title, tuple(str(x) for x in labels), values=tuple(float(v) for v in values), ylabel=ylabel
    )


def heatmap(matrix: Sequence[Sequence[float]], labels: Sequence[str], *, title: str) -> Chart:
    """A heatmap of a square matrix, one row and one column per label."""
    return Chart(
        "heatmap",
        title,
        tuple(str(x) for x in labels),
        matrix=tuple(tuple(float(v) for v in row) for row in matrix),
    )
