"""Experiment configs: which files, which families, which solver options, which
record samples -- validated on load (an unknown key or a bad value is an error
that names it) and expanded into independent cells.

A config in YAML::

    name: M4-33
    files:
      - recipe_file: published/M4-33.yaml   # a masking recipe (relative to this file)
      # or: preset: M4-33 | recipe: {...inline recipe...}
      # or: {name: mine, original: a.csv, masked: b.csv, columns: [x, y]}
    families: [am, md, wm, ci, sb]
    samples: [0, 1, 2]        # record-sample seeds of recipes that draw a sample
    solver: {margin: 1.0e-5, time_limit: 600, threads: 1, reductions: all}

A cell is one (file, sample seed, family) with the solver options; its key is a
hash of its resolved content (the recipe itself, or the bytes of the files), so
a changed config recomputes exactly the changed cells.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rlopt.exceptions import InputError
from rlopt.families import FAMILIES
from rlopt.masking import Recipe, load_recipe, published_recipe

__all__ = ["FileSpec", "SolverSpec", "ExperimentConfig", "Cell", "load_config", "load_any_config", "expand"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FileSpec(_Strict):
    """One protected file: a published preset, a recipe (inline or a YAML file), or
    a ready pair of CSV/Parquet files."""

    name: str | None = None
    preset: str | None = None
    recipe: Recipe | None = None
    recipe_file: str | None = None
    original: str | None = None
    masked: str | None = None
    columns: list[str] | None = None
    id_column: str | None = None

    @model_validator(mode="after")
    def _exactly_one_source(self):
        sources = [
            self.preset is not None,
            self.recipe is not None,
            self.recipe_file is not None,
            self.original is not None or self.masked is not None,
        ]
        if sum(sources) != 1:
            raise ValueError("give exactly one of: preset, recipe, recipe_file, or original + masked")
        if (self.original is None) != (self.masked is None):
            raise ValueError("a ready pair needs both 'original' and 'masked'")
        if self.original is not None and self.name is None:
            raise ValueError("a ready pair needs a 'name'")
        return self


class SolverSpec(_Strict):
    margin: float = Field(default=1e-5, ge=0)
    time_limit: float | None = Field(default=None, gt=0)
    rel_gap: float = Field(default=0.0, ge=0, lt=1)
    threads: int | None = Field(default=1, ge=1)
    reductions: Literal["all", "none"] | dict[str, bool | int] = "all"


class ExperimentConfig(_Strict):
    name: str
    files: list[FileSpec] = Field(min_length=1)
    families: list[str] = Field(min_length=1)
    samples: list[int] = Field(default=[0], min_length=1)
    solver: SolverSpec = SolverSpec()

    @field_validator("families")
    @classmethod
    def _known_families(cls, families):
        unknown = [f for f in families if f not in FAMILIES]
        if unknown:
            raise ValueError(
                f"unknown famil{'y' if len(unknown) == 1 else 'ies'} {unknown}; "
                f"expected some of {list(FAMILIES)}"
            )
        return families


def _read_yaml(path: Path):
    if not path.is_file():
        raise InputError(f"config file not found: {str(path)!r}")
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{str(path)!r} is not UTF-8 text ({exc.reason} at byte {exc.start}); expected a YAML config"
        ) from None
    except yaml.YAMLError as exc:  # one line: the error's own lines joined
        raise InputError(f"{str(path)!r} is not valid YAML: {' '.join(str(exc).split())}") from None


def _validation_message(path: Path, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "(top level)"
        problems.append(f"{where}: {error['msg']}")
    return f"invalid config {str(path)!r}: " + "; ".join(problems)


def load_config(path: str | Path) -> ExperimentConfig:
    """Read and validate an experiment config; its recipe files must validate too."""
    path = Path(path)
    try:
        config = ExperimentConfig.model_validate(_read_yaml(path))
    except ValidationError as exc:
        raise InputError(_validation_message(path, exc)) from None
    for spec in config.files:  # resolve now so that a bad recipe file fails at load time
        _resolve(spec, path.parent)
    return config


def load_any_config(path: str | Path) -> ExperimentConfig | Recipe:
    """An experiment config (it has ``files``) or a masking recipe (it has ``masking``)."""
    path = Path(path)
    raw = _read_yaml(path)
    if isinstance(raw, dict) and "masking" in raw and "files" not in raw:
        return load_recipe(path)
    return load_config(path)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _resolve(spec: FileSpec, base: Path) -> dict:
    """The file as plain data: ``{"name", "recipe"}`` or ``{"name", "original", ...}``."""
    if spec.preset is not None:
        recipe = published_recipe(spec.preset)
    elif spec.recipe is not None:
        recipe = spec.recipe
    elif spec.recipe_file is not None:
        recipe = load_recipe(base / spec.recipe_file)
    else:
        files = {}
        for role in ("original", "masked"):
            path = (base / getattr(spec, role)).resolve()
            if not path.is_file():
                raise InputError(f"{role} file of {spec.name!r} not found: {str(path)!r}")
            files[role] = str(path)
            files[f"{role}_sha256"] = _sha256(path)
        return {"name": spec.name, **files, "columns": spec.columns, "id_column": spec.id_column}
    return {"name": spec.name or recipe.name, "recipe": recipe.model_dump(mode="json")}


class Cell(_Strict):
    """One independent unit of work: a file (and record sample), a family, the options."""

    file: dict
    sample_seed: int | None
    family: str
    solver: SolverSpec

    @property
    def dataset(self) -> str:
        return self.file["name"]

    def describe(self) -> str:
        return f"{self.dataset} / seed {self.sample_seed} / {self.family}"

    @property
    def key(self) -> str:
        payload = self.model_dump(mode="json")
        payload["file"] = {k: v for k, v in payload["file"].items() if k not in ("original", "masked")}
        if not FAMILIES[self.family].learned:
            del payload["solver"]  # a baseline does not depend on the solver options
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def expand(config: ExperimentConfig, base: str | Path = ".") -> list[Cell]:
    """Every (file, sample seed, family) cell of the grid, in a stable order."""
    cells = []
    for spec in config.files:
        file = _resolve(spec, Path(base))
        draws_sample = "recipe" in file and file["recipe"]["n_records"] is not None
        for seed in config.samples if draws_sample else [None]:
            resolved = dict(file)
            if seed is not None:
                resolved["recipe"] = {**file["recipe"], "sample_seed": seed}
            for family in config.families:
                cells.append(Cell(file=resolved, sample_seed=seed, family=family, solver=config.solver))
    return cells
