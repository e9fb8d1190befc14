"""The named files the benchmarks run on, built once per process through rlopt's public
API (the same call in every benchmark, so that "census-rs10" is one file everywhere).

Names:

- ``census-rs<p>``: the CASC Census file (1080 x 13) rank-swapped with ``p`` (seed 0);
- ``census-mdav<k>``: the Census file under MDAV with ``k`` on all 13 attributes;
- ``eia-mdav<k>``: EIA (4092 x 10 attributes RESREVENUE ... TOTSALES) under MDAV with ``k``;
- ``M4-33`` ... ``M6-853``: the published files (``rlopt.published_recipe``, 400 records,
  sample seed 0);
- ``diabetes-noise<k>``: scikit-learn's diabetes file (442 x 10, a file from outside the
  bundled data) with additive noise ``k`` (seed 0).

:func:`save` writes a pair to pickles that :func:`load` reads back unchanged: a benchmark
comparing two source trees builds each file once, here, and hands both trees the same
records (each tree's own masking code never enters the comparison).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pandas as pd

__all__ = ["NAMES", "pair", "save", "load"]

NAMES = (
    "census-rs10",
    "census-mdav3",
    "census-mdav8",
    "eia-mdav3",
    "M4-33",
    "M5-38",
    "diabetes-noise0.5",
)
"""The files the benchmarks use today (any ``census-rs<p>``, ``census-mdav<k>`` and
``eia-mdav<k>`` is built as well)."""


@functools.cache
def _census() -> pd.DataFrame:
    from rlopt.data import CENSUS_ATTRIBUTES, load_census

    return load_census()[list(CENSUS_ATTRIBUTES)]


@functools.cache
def _eia() -> pd.DataFrame:
    from rlopt.data import EIA_ATTRIBUTES, load_eia

    return load_eia()[list(EIA_ATTRIBUTES)]


@functools.cache
def pair(name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The original and the masked file called ``name`` (built on first use). The frames
    are shared between callers: copy them before changing them."""
    from rlopt.masking import (
        PUBLISHED_FILES,
        additive_noise,
        build,
        microaggregate,
        published_recipe,
        rank_swap,
    )

    if name.upper() in PUBLISHED_FILES:
        return build(published_recipe(name, sample_seed=0))
    match = re.fullmatch(r"(census|eia|diabetes)-(rs|mdav|noise)(\d+(?:\.\d+)?)", name)
    if match is None:
        raise SystemExit(f"unknown file {name!r}; expected one of {', '.join(NAMES)} (or another p, k)")
    data, method, value = match.groups()
    if data == "diabetes" and method == "noise":
        from sklearn.datasets import load_diabetes

        diabetes = load_diabetes(scaled=False, as_frame=True).frame.drop(columns=["target"])
        return diabetes, additive_noise(diabetes, float(value), seed=0)
    original = {"census": _census, "eia": _eia}.get(data, lambda: None)()
    if original is None or method == "noise":
        raise SystemExit(f"unknown file {name!r}")
    if method == "rs":
        return original, rank_swap(original, p=int(value), seed=0)
    return original, microaggregate(original, k=int(value))


def save(name: str, folder: Path) -> Path:
    """Write ``name``'s pair to ``folder/<name>.pkl`` (exact values); the path."""
    path = folder / f"{name}.pkl"
    if not path.is_file():
        pd.to_pickle(pair(name), path)  # type: ignore[attr-defined]
    return path


def load(path: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pair :func:`save` wrote."""
    original, masked = pd.read_pickle(path)
    return original, masked
