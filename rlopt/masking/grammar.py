"""The text forms of masking parameters: one grammar for every command and config.

``rlopt mask``, ``attack``, ``risk``, ``tradeoff`` and ``compare`` read a method's
parameters as text; this module turns that text into the registry's typed spec
(:func:`spec_from_text`), so that a parameter is written and checked one way
everywhere:

- a list of names ``A,B,C``; attribute groups with their k ``A,B:3;C,D:8``;
- a domain per attribute ``A:0:100;B:-5:5``; thresholds ``income:100000;age:5``;
- merged categories ``edu=college|grad; race=asian|other``;
- a PRAM matrix ``COLUMN=PATH`` (a CSV, rows the true category, columns the released);
- a range of values ``3``, ``2..10``, ``2..20:2`` or ``0.05|0.5`` and a grid of methods
  ``mdav:k=3..7:2; rank_swap:p=5|15`` (:func:`parse_values`, :func:`parse_methods`).

Every malformed text is an :class:`InputError` naming the text and the form expected.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from rlopt.exceptions import InputError

__all__ = [
    "MAX_VALUES",
    "parse_names",
    "parse_groups",
    "parse_bounds",
    "parse_merges",
    "parse_thresholds",
    "read_matrices",
    "parse_values",
    "parse_methods",
    "spec_from_text",
]

MAX_VALUES = 1000
"""The most values one option takes."""

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def parse_names(text: str) -> list[str]:
    """``"A, B,C"`` into ``["A", "B", "C"]``; an empty name is an error."""
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise InputError(f"empty name in the list {text!r}; expected names separated by commas")
    return items


def parse_groups(text: str) -> list[tuple[list[str], int]]:
    """``"A,B:3;C,D:8"`` into ``[(["A", "B"], 3), (["C", "D"], 8)]``."""
    groups: list[tuple[list[str], int]] = []
    for part in text.split(";"):
        columns, sep, k = part.rpartition(":")
        if not sep or not columns.strip():
            raise InputError(
                f"attribute group {part!r} in --groups {text!r}; expected "
                "COLUMN,COLUMN:K groups separated by ';', e.g. 'A,B:3;C,D:8'"
            )
        try:
            k_value = int(k)
        except ValueError:
            raise InputError(f"group size {k!r} in --groups {text!r}; expected an integer") from None
        groups.append((parse_names(columns), k_value))
    return groups


def parse_bounds(text: str) -> dict[str, tuple[float, float]]:
    """``"A:0:100;B:-5:5"`` into ``{"A": (0.0, 100.0), "B": (-5.0, 5.0)}``."""
    bounds = {}
    for part in text.split(";"):
        column, _, rest = part.strip().partition(":")
        low, _, high = rest.partition(":")
        try:
            if not column or ":" in high:
                raise ValueError
            bounds[column] = (float(low), float(high))
        except ValueError:
            raise InputError(
                f"domain {part!r} in --bounds {text!r}; expected COLUMN:LOWER:UPPER parts separated by ';'"
            ) from None
    return bounds


def parse_merges(text: str) -> dict[str, list[list[str]]]:
    """``"edu=college|grad; race=asian|other"`` into ``{"edu": [["college", "grad"]], ...}``."""
    merges: dict[str, list[list[str]]] = {}
    for part in (p.strip() for p in text.split(";") if p.strip()):
        column, _, levels = part.partition("=")
        group = [level.strip() for level in levels.split("|") if level.strip()]
        if not column.strip() or len(group) < 2:
            raise InputError(
                f"merge {part!r} in --merge {text!r}; expected COLUMN=CATEGORY|CATEGORY[|...] parts separated by ';'"
            )
        merges.setdefault(column.strip(), []).append(group)
    return merges


def parse_thresholds(text: str, option: str) -> dict[str, float]:
    """``"income:100000;age:5"`` into ``{"income": 100000.0, "age": 5.0}``."""
    out = {}
    for part in (p.strip() for p in text.split(";") if p.strip()):
        column, _, value = part.partition(":")
        try:
            if not column.strip():
                raise ValueError
            out[column.strip()] = float(value)
        except ValueError:
            raise InputError(
                f"{part!r} in {option} {text!r}; expected COLUMN:NUMBER parts separated by ';'"
            ) from None
    return out


def read_matrices(items: list[str]) -> dict[str, dict[str, dict[str, float]]]:
    """``["COLUMN=PATH", ...]`` (each a CSV: first column the true category, header the
    released categories) into the PRAM spec's ``{column: {true: {released: p}}}``."""
    from rlopt.data import load_table

    out = {}
    for item in items:
        column, _, path = item.partition("=")
        if not column or not path:
            raise InputError(f"--matrix {item!r}; expected COLUMN=PATH of a CSV transition matrix")
        table = load_table(Path(path))
        table = table.set_index(table.columns[0])
        out[column] = {str(u): {str(v): float(p) for v, p in row.items()} for u, row in table.iterrows()}
    return out


def _range(low: float, high: float, step: float) -> list[float]:
    if not (math.isfinite(low) and math.isfinite(high) and math.isfinite(step)):
        raise ValueError
    if not (high >= low and step > 0 and (high - low) / step < MAX_VALUES):
        raise ValueError
    count = int(math.floor((high - low) / step + 1e-9)) + 1
    return [round(low + i * step, 12) for i in range(count)]


def parse_values(text: str, where: str) -> list[float]:
    """The values of one parameter: ``3``, a rising range ``2..10`` (step 1) or
    ``2..20:2``, or alternatives ``0.05|0.1|0.5``; ``rlopt tradeoff`` also takes its
    earlier ``2-10``, ``2-20:2`` and ``2,3,5``."""
    text = text.strip()
    try:
        canonical = re.fullmatch(rf"({_NUMBER})\.\.({_NUMBER})(?::({_NUMBER}))?", text)
        legacy = re.fullmatch(rf"({_NUMBER})-({_NUMBER})(?::({_NUMBER}))?", text)
        match = canonical or legacy
        if match:
            return _range(float(match[1]), float(match[2]), float(match[3]) if match[3] else 1.0)
        values = [float(v) for v in re.split(r"[|,]", text)]
        if not all(math.isfinite(v) for v in values) or len(values) > MAX_VALUES:
            raise ValueError
        return values
    except ValueError:
        raise InputError(
            f"{where}: values {text!r}; expected finite numbers: one, a rising range like '2..10' "
            f"or '2..20:2', or alternatives like '0.05|0.1|0.5'; at most {MAX_VALUES} values"
        ) from None


def parse_methods(text: str) -> list[tuple[str, dict[str, list[float]]]]:
    """``"mdav:k=2..10; rank_swap:p=2..20:2; noise:variance_ratio=0.05|0.5"`` into
    ``[(method, {parameter: values})]`` (method aliases accepted, parameters checked
    against the method's spec)."""
    from rlopt.masking.methods import masking_method

    methods = []
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, sep, assignments = part.partition(":")
        method = masking_method(name.strip())
        fields = set(method.spec.model_fields) - {"method", "seed"}
        grid: dict[str, list[float]] = {}
        for assignment in filter(None, (a.strip() for a in assignments.split(",")) if sep else ()):
            key, eq, values = assignment.partition("=")
            key = key.strip()
            if not eq or key not in fields:
                raise InputError(
                    f"--methods {part!r}: {assignment!r}; expected PARAMETER=VALUES with a "
                    f"parameter of {method.name}: {', '.join(sorted(fields))}"
                )
            grid[key] = parse_values(values, f"--methods {part!r}")
        methods.append((method.name, grid))
    if not methods:
        raise InputError(f"--methods {text!r}; expected e.g. 'mdav:k=2..10; rank_swap:p=2..20:2'")
    return methods


_READERS: dict[str, Any] = {
    "groups": parse_groups,
    "bounds": parse_bounds,
    "matrices": read_matrices,
    "merge": parse_merges,
    "top": lambda text: parse_thresholds(text, "--top"),
    "bottom": lambda text: parse_thresholds(text, "--bottom"),
    "base": lambda text: parse_thresholds(text, "--base"),
}
"""The spec fields written in a grammar of their own; every other field is a number,
a word or a flag that the spec's own types check."""


def spec_from_text(method: str, given: dict[str, Any], *, seed: int | None = None):
    """The registry's typed spec of ``method`` from parameters as the command line gives
    them (``None``: not given; text in this module's grammar). A parameter the method
    does not take is an error naming the option and the method's own parameters."""
    from rlopt.masking.methods import masking_method, masking_spec

    registered = masking_method(method)
    fields = set(registered.spec.model_fields)
    stray = [
        f"--{name.replace('_', '-')}"
        for name, value in given.items()
        if value is not None and name not in fields
    ]
    if stray:
        raise InputError(
            f"{', '.join(stray)}: not a parameter of {registered.name}; its parameters: "
            + ", ".join(f"--{f.replace('_', '-')}" for f in sorted(fields - {"method", "seed"}))
        )
    values = {
        name: _READERS[name](value) if name in _READERS else value
        for name, value in given.items()
        if value is not None
    }
    if "seed" in fields and seed is not None:
        values["seed"] = seed
    return masking_spec(registered.name, **values)
