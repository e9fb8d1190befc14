"""Masking recipes: a sample of a data set plus a masking method, and the six
protected files of the published experiments (M4-33 ... M6-853).

A recipe is plain data (a pydantic model, so a YAML file with a typo'd key or a
bad value is rejected with a message naming it); :func:`build` turns it into
the pair (original sample, masked file).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rlopt.data import load_census, load_eia, load_table
from rlopt.exceptions import InputError
from rlopt.masking.methods import AttributeGroup, MaskingSpec, MDAVSpec, masking_method

__all__ = [
    "Recipe",
    "PUBLISHED_FILES",
    "published_recipe",
    "build",
    "load_recipe",
    "sample_records",
]


class Recipe(BaseModel):
    """A protected file: which data, which records and attributes, which masking
    (``masking.method`` a registered name or alias, :data:`rlopt.masking.MASKING_METHODS`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    data: str = Field(description="'census', 'eia', or a path to a CSV/Parquet file")
    columns: list[str] = Field(min_length=1)
    n_records: int | None = Field(default=None, ge=2, description="sample size; None: all")
    sample_seed: int = 0
    masking: MaskingSpec

    @field_validator("masking", mode="before")
    @classmethod
    def _canonical_method(cls, value):
        if isinstance(value, dict) and isinstance(value.get("method"), str):
            try:
                return {**value, "method": masking_method(value["method"]).name}
            except InputError as exc:
                raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _groups_use_known_columns(self):
        if isinstance(self.masking, MDAVSpec) and self.masking.groups is not None:
            grouped = [c for g in self.masking.groups for c in g.columns]
            unknown = sorted(set(grouped) - set(self.columns))
            if unknown:
                raise ValueError(f"MDAV group column(s) {unknown} are not in columns {self.columns}")
            if len(set(grouped)) != len(grouped):
                raise ValueError(f"an attribute appears in more than one MDAV group: {grouped}")
        return self


def _recipe(name: str, groups: list[tuple[list[str], int]]) -> Recipe:
    columns = [c for cols, _ in groups for c in cols]
    return Recipe(
        name=name,
        data="census",
        columns=columns,
        n_records=400,
        sample_seed=0,
        masking=MDAVSpec(groups=[AttributeGroup(columns=c, k=k) for c, k in groups]),
    )


# The published files (Tables 1-2 of the papers). Which 400 records and which attributes were
# used was never published. Our choice: the first attributes of the Census file in
# file order (the first seven have 1080 distinct values each, so no ties blur the
# linkage), grouped in that order with the published k, and 400 records drawn
# uniformly without replacement with a seed. The sample seed is a parameter.
_A = ["AFNLWGT", "AGI", "EMCONTRB", "FEDTAX", "PTOTVAL", "STATETAX"]
PUBLISHED_FILES: dict[str, Recipe] = {
    r.name: r
    for r in (
        _recipe("M4-33", [(_A[0:2], 3), (_A[2:4], 3)]),
        _recipe("M4-28", [(_A[0:2], 2), (_A[2:4], 8)]),
        _recipe("M4-82", [(_A[0:2], 8), (_A[2:4], 2)]),
        _recipe("M5-38", [(_A[0:3], 3), (_A[3:5], 8)]),
        _recipe("M6-385", [(_A[0:2], 3), (_A[2:4], 8), (_A[4:6], 5)]),
        _recipe("M6-853", [(_A[0:2], 8), (_A[2:4], 5), (_A[4:6], 3)]),
    )
}


def published_recipe(name: str, *, sample_seed: int = 0) -> Recipe:
    """The recipe of a published file (``"M4-33"`` ...), with the given sample seed."""
    key = name.upper()
    if key not in PUBLISHED_FILES:
        raise InputError(f"unknown published file {name!r}; expected one of {list(PUBLISHED_FILES)}")
    return PUBLISHED_FILES[key].model_copy(update={"sample_seed": sample_seed})


def load_recipe(path: str | Path) -> Recipe:
    """Read and validate a recipe from a YAML file."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"recipe file not found: {str(path)!r}")
    try:
        return Recipe.model_validate(yaml.safe_load(path.read_text()))
    except ValidationError as exc:
        raise InputError(f"invalid recipe {str(path)!r}:\n{exc}") from None


def _dataset(name: str) -> pd.DataFrame:
    if name == "census":
        return load_census()
    if name == "eia":
        return load_eia()
    return load_table(name)


def sample_records(frame: pd.DataFrame, n_records: int | None, seed: int) -> pd.DataFrame:
    """``n_records`` rows drawn uniformly without replacement (kept in file order)."""
    if n_records is None or n_records == len(frame):
        return frame.reset_index(drop=True)
    if n_records > len(frame):
        raise InputError(
            f"sample of n_records={n_records} from a file of {len(frame)} records; "
            f"expected at most {len(frame)}"
        )
    rows = np.sort(np.random.default_rng(seed).choice(len(frame), n_records, replace=False))
    return frame.iloc[rows].reset_index(drop=True)


def build(recipe: Recipe) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The original sample and its masked file, both with the recipe's columns."""
    frame = _dataset(recipe.data)
    missing = [c for c in recipe.columns if c not in frame.columns]
    if missing:
        raise InputError(
            f"recipe {recipe.name!r}: column(s) {missing} not in data "
            f"{recipe.data!r}; available: {list(map(str, frame.columns))}"
        )
    original = sample_records(frame[recipe.columns], recipe.n_records, recipe.sample_seed)
    return original, recipe.masking.apply(original)
