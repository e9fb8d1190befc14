"""The named files the benchmarks run on, built once per process through rlopt's public
API (the same call in every benchmark, so that "census-rs10" is one file everywhere).

Names:

- ``census-rs<p>``: the CASC Census file (1080 x 13) rank-swapped with ``p`` (seed 0);
- ``readme-rs<p>``: README's first example: 400 Census records on AFNLWGT, AGI, EMCONTRB,
  FEDTAX (``rlopt data census --records 400``, seed 0) rank-swapped with ``p`` (seed 1),
  the values ``rlopt mask`` writes;
- ``census-mdav<k>``: the Census file under MDAV with ``k`` on all 13 attributes;
- ``eia-mdav<k>``: EIA (4092 x 10 attributes RESREVENUE ... TOTSALES) under MDAV with ``k``;
- ``M4-33`` ... ``M6-853``: the published files (``rlopt.published_recipe``, 400 records,
  sample seed 0);
- ``diabetes-noise<k>``: scikit-learn's diabetes file (442 x 10, a file from outside the
  bundled data) with additive noise ``k`` (seed 0).

Files of any size, for the benchmarks of scale: :func:`resampled_census` (the Census file
resampled to N records, jittered, with additive noise) and :func:`normal_records`.

:func:`save` writes a pair to pickles that :func:`load` reads back unchanged: a benchmark
comparing two source trees builds each file once, here, and hands both trees the same
records (each tree's own masking code never enters the comparison).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["NAMES", "pair", "save", "load", "resampled_census", "normal_records"]

NAMES = (
    "census-rs10",
    "readme-rs10",
    "census-mdav3",
    "census-mdav8",
    "eia-mdav3",
    "M4-33",
    "M5-38",
    "diabetes-noise0.5",
)
"""The files the benchmarks use today (any ``census-rs<p>``, ``census-mdav<k>`` and
``eia-mdav<k>`` is built as well)."""


README_ATTRIBUTES = ("AFNLWGT", "AGI", "EMCONTRB", "FEDTAX")
"""The four Census attributes of README's example (``census4-rs<p>``)."""


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
    readme = re.fullmatch(r"readme-rs(\d+)", name)
    if readme is not None:
        from rlopt.masking import sample_records

        sample = sample_records(_census()[["AFNLWGT", "AGI", "EMCONTRB", "FEDTAX"]], 400, 0)
        return sample, rank_swap(sample, p=int(readme.group(1)), seed=1)
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


def resampled_census(n_records: int, n_attributes: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The CASC Census file resampled with replacement to ``n_records`` records on its first
    ``n_attributes`` attributes, every value jittered by Normal(0, (0.05 sd)^2) of its
    attribute so that the records are distinct; masked by additive noise k = 0.1 (seed 1)."""
    from rlopt.data import load_census
    from rlopt.masking import additive_noise

    census = load_census().iloc[:, :n_attributes]
    rng = np.random.default_rng(seed)
    values = census.to_numpy(float)[rng.integers(0, len(census), n_records)]
    values = values + rng.normal(size=values.shape) * 0.05 * values.std(axis=0)
    original = pd.DataFrame(values, columns=census.columns)
    return original, additive_noise(original, 0.1, seed=1)


def normal_records(n_records: int, n_attributes: int = 4) -> pd.DataFrame:
    """``n_records`` standard normal records (columns ``a, b, ...``; the seed is
    ``n_records``, so each size is one file)."""
    values = np.random.default_rng(n_records).normal(size=(n_records, n_attributes))
    return pd.DataFrame(values, columns=[chr(ord("a") + i) for i in range(n_attributes)])


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
