"""The registry of masking methods: one typed parameter spec per method, one canonical
name with the aliases users type, and the parameter a trade-off varies.

The CLI (``rlopt mask``), the recipes of ``configs/``, the trade-off and the
transparency attacks all read a method's parameters from its spec, so a new method
is its module, its spec class here and one :data:`MASKING_METHODS` entry.

>>> masking_spec("rank-swapping", p=10).method
'rank_swap'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rlopt.exceptions import InputError
from rlopt.masking.categorical import (
    TransitionMatrix,
    global_recode,
    local_suppression,
    pram,
    pram_matrices,
)
from rlopt.masking.dp import dp_microaggregate, laplace_noise
from rlopt.masking.fuzzy import check_c, fuzzy_microaggregate
from rlopt.masking.mdav import check_k, microaggregate
from rlopt.masking.noise import additive_noise
from rlopt.masking.swapping import rank_swap
from rlopt.masking.synthesis import cart_synthesis, dp_histogram, gaussian_copula

__all__ = [
    "AttributeGroup",
    "MDAVSpec",
    "RankSwapSpec",
    "NoiseSpec",
    "DPMicroaggregationSpec",
    "LaplaceSpec",
    "FuzzySpec",
    "PramSpec",
    "RandomizedResponseSpec",
    "RecodingSpec",
    "SuppressionSpec",
    "CartSynthesisSpec",
    "GaussianCopulaSpec",
    "DPHistogramSpec",
    "MaskingSpec",
    "MaskingMethod",
    "MASKING_METHODS",
    "masking_method",
    "masking_spec",
    "mask",
    "fully_synthetic",
    "check_linkable",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def check(self, n_records: int) -> None:
        """Raise :class:`InputError` when a parameter cannot apply to ``n_records``
        records (before any masking: a grid of methods fails before its first cell)."""


class AttributeGroup(_Strict):
    columns: list[str] = Field(min_length=1)
    k: int = Field(ge=1)


class _Grouped(_Strict):
    """A method applied to attribute groups, each with its own size (``group_size``:
    the name of that field, ``k`` or ``c``), or to one group of all columns."""

    group_size: ClassVar[str]  # the size field of each group (in the CLI: 'A,B:3')
    one_of: ClassVar[str]  # what is said when both or neither of the size and groups are given

    @model_validator(mode="after")
    def _one_of_size_and_groups(self):
        """Exactly one of the size and ``groups`` (the rule of
        :func:`rlopt.masking._groups.attribute_groups`, in the command line's words; that
        the groups partition the attributes is checked there, when the file is read)."""
        if (getattr(self, "groups") is None) == (getattr(self, self.group_size) is None):  # noqa: B009
            raise ValueError(self.one_of)
        return self

    @field_validator("groups", mode="before", check_fields=False)
    @classmethod
    def _pairs_as_groups(cls, value):
        """``(columns, size)`` pairs are groups too (the CLI's and the Python API's form)."""
        if isinstance(value, (list, tuple)):
            return [
                {"columns": list(g[0]), cls.group_size: g[1]} if isinstance(g, (list, tuple)) else g
                for g in value
            ]
        return value

    def group_list(self, columns: Sequence[str]) -> list[tuple[list[str], int]]:
        """The attribute groups as ``(columns, size)`` pairs (one group of ``columns``
        when the method was given a single size)."""
        groups = getattr(self, "groups")  # noqa: B009 (each subclass types its own field)
        if groups is None:
            size = getattr(self, self.group_size)
            assert size is not None  # the spec's validator keeps exactly one
            return [(list(columns), size)]
        return [(g.columns, getattr(g, self.group_size)) for g in groups]


class MDAVSpec(_Grouped):
    """MDAV microaggregation: ``groups`` (attribute groups with their k), or ``k`` for
    one group of all the masked columns."""

    method: Literal["mdav"] = "mdav"
    group_size: ClassVar[str] = "k"
    one_of: ClassVar[str] = (
        "MDAV needs exactly one of k (CLI --k: one group of all attributes) and groups "
        "(CLI --groups 'A,B:3;C,D:8')"
    )
    groups: list[AttributeGroup] | None = Field(default=None, min_length=1)
    k: int | None = Field(default=None, ge=1)

    def check(self, n_records: int) -> None:
        for _, k in self.group_list(()):
            check_k(k, n_records)

    def apply(self, frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
        if self.groups is not None:
            return microaggregate(frame, groups=self.group_list(()))
        chosen = list(columns) if columns else list(frame.columns)
        unknown = [c for c in chosen if c not in frame.columns]
        if unknown:
            raise InputError(
                f"input: unknown column(s) {unknown}; available: {list(map(str, frame.columns))}"
            )
        masked = microaggregate(frame[chosen], k=self.k)
        return frame.assign(**{c: masked[c] for c in chosen})


class RankSwapSpec(_Strict):
    """Rank swapping: ``p`` (percent of the records) or ``window`` (ranks), a variant."""

    method: Literal["rank_swap"] = "rank_swap"
    p: float | None = Field(default=None, gt=0, le=100)
    window: int | None = Field(default=None, ge=0)
    variant: Literal["plain", "p-buckets", "p-distribution"] = "plain"
    seed: int = 0

    @model_validator(mode="after")
    def _one_of_p_and_window(self):
        if (self.p is None) == (self.window is None):
            raise ValueError(
                "rank swapping needs exactly one of p (CLI --p, percent of the records) and "
                "window (CLI --window, ranks)"
            )
        return self

    def apply(self, frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
        return rank_swap(
            frame, self.p, window=self.window, variant=self.variant, seed=self.seed, columns=columns
        )


class NoiseSpec(_Strict):
    """Additive noise ``X + e`` with ``Var(e) = k Var(X)`` per attribute, ``k =
    variance_ratio``."""

    method: Literal["noise"] = "noise"
    variance_ratio: float = Field(ge=0, allow_inf_nan=False)
    seed: int = 0

    def apply(self, frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
        return additive_noise(frame, self.variance_ratio, seed=self.seed, columns=columns)


Domain = dict[str, tuple[float, float]]


class DPMicroaggregationSpec(_Strict):
    """Differential privacy through microaggregation (Soria-Comas, Domingo-Ferrer,
    Sanchez and Martinez 2014): insensitive microaggregation with groups of ``k``,
    Laplace noise on the centroids for ``epsilon`` (:func:`rlopt.masking.dp.dp_microaggregate`).
    ``bounds`` is the published domain per column (default: the data's range, with a
    warning that it is not private)."""

    method: Literal["dp_microaggregation"] = "dp_microaggregation"
    k: int = Field(ge=2)
    epsilon: float = Field(gt=0, allow_inf_nan=False)
    bounds: Domain | None = None
    seed: int = 0

    def check(self, n_records: int) -> None:
        check_k(self.k, n_records)

    def apply(self, frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
        return dp_microaggregate(
            frame, self.k, self.epsilon, bounds=self.bounds, seed=self.seed, columns=columns
        )


class LaplaceSpec(_Strict):
    """Plain epsilon-DP Laplace noise on every record over a bounded domain
    (:func:`rlopt.masking.dp.laplace_noise`): the baseline of DP microaggregation."""

    method: Literal["laplace"] = "laplace"
    epsilon: float = Field(gt=0, allow_inf_nan=False)
    bounds: Domain | None = None
    seed: int = 0

    def apply(self, frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
        return laplace_noise(frame, self.epsilon, bounds=self.bounds, seed=self.seed, columns=columns)


class FuzzyGroup(_Strict):
    columns: list[str] = Field(min_length=1)
    c: int = Field(ge=1)


class FuzzySpec(_Grouped):
    """Fuzzy microaggregation (Torra 2017): fuzzy c-means with ``c`` clusters and
    fuzzifier ``m1``, memberships recomputed with ``m2``, each record replaced by a
    centre drawn with its membership (:func:`rlopt.masking.fuzzy.fuzzy_microaggregate`);
    ``groups`` of attributes with their own ``c``, or ``c`` for one group."""

    method: Literal["fuzzy"] = "fuzzy"
    group_size: ClassVar[str] = "c"
    one_of: ClassVar[str] = (
        "fuzzy microaggregation needs exactly one of c (one group of all attributes) and groups"
    )
    c: int | None = Field(default=None, ge=1)
    groups: list[FuzzyGroup] | None = Field(default=None, min_length=1)
    m1: float = Field(default=2.0, gt=1, allow_inf_nan=False)
    m2: float = Field(default=2.0, gt=1, allow_inf_nan=False)
    seed: int = 0

    def check(self, n_records: int) -> None:
        for _, c in self.group_list(()):
            check_c(c, n_records)

    def apply(self, frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
        groups = None if self.groups is None else self.group_list(())
        return fuzzy_microaggregate(
            frame,
            self.c,
            self.m1,
            self.m2,
            groups=groups,
            seed=self.seed,
            columns=None if groups else columns,
        )


def _categorical_columns(frame: pd.DataFrame, columns: Sequence[str] | None) -> list[str]:
    """The given columns, else every non-numeric column of ``frame``."""
    if columns:
        unknown = [c for c in columns if c not in frame.columns]
        if unknown:
            raise InputError(
                f"input: unknown column(s) {unknown}; available: {list(map(str, frame.columns))}"
            )
        return list(columns)
    chosen = [str(c) for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    if not chosen:
        raise InputError(
            "no categorical column to mask; name the columns with --columns (Python: columns=[...])"
        )
    return chosen


class PramSpec(_Strict):
    """PRAM (:func:`rlopt.masking.categorical.pram`): retention probability ``theta``
    (the rest spread evenly), or a ``matrices`` per column (``{column: {true: {released:
    p}}}``), made ``invariant`` (expected frequencies kept) when asked. Applied to the
    given columns, by default every non-numeric one."""

    method: Literal["pram"] = "pram"
    theta: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    matrices: dict[str, dict[str, dict[str, float]]] | None = None
    invariant: bool = False
    columns: list[str] | None = None
    seed: int = 0

    @model_validator(mode="after")
    def _theta_or_matrices(self):
        if self.theta is None and not self.matrices:
            raise ValueError(
                "PRAM needs theta (CLI --theta, a retention probability) or matrices (CLI --matrix)"
            )
        return self

    def published(
        self, frame: pd.DataFrame, columns: Sequence[str] | None = None
    ) -> dict[str, TransitionMatrix]:
        """The published matrix of each PRAM column (invariant ones from ``frame``'s frequencies)."""
        tables = {
            name: pd.DataFrame.from_dict(rows, orient="index") for name, rows in (self.matrices or {}).items()
        }
        chosen = self.columns or _categorical_columns(frame, columns)
        return pram_matrices(frame, chosen, theta=self.theta, matrices=tables, invariant=self.invariant)

    def apply(self, frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
        return pram(frame, self.published(frame, columns), seed=self.seed)


class RandomizedResponseSpec(PramSpec):
    """Randomized response: the PRAM matrix applied by each respondent; the data
    holder's estimate, deniability and epsilon come from
    :func:`rlopt.masking.categorical.randomized_response_report`."""

    method: Literal["randomized_response"] = "randomized_response"  # type: ignore[assignment]


class RecodingSpec(_Strict):
    """Global recoding (:func:`rlopt.masking.categorical.global_recode`): ``merge``
    categories per column, numeric ``top``/``bottom`` coding, rounding to a ``base``."""

    method: Literal["recoding"] = "recoding"
    merge: dict[str, list[list[str]]] = Field(default_factory=dict)
    top: dict[str, float] = Field(default_factory=dict)
    bottom: dict[str, float] = Field(default_factory=dict)
    base: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _something(self):
        if not (self.merge or self.top or self.bottom or self.base):
            raise ValueError("recoding needs merge, top, bottom or base (CLI --merge/--top/--bottom/--base)")
        return self

    def apply(self, frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
        return global_recode(frame, merge=self.merge, top=self.top, bottom=self.bottom, base=self.base)


class SuppressionSpec(_Strict):
    """Local suppression to k-anonymity on the quasi-identifiers (the given columns,
    by default every column): :func:`rlopt.masking.categorical.local_suppression`."""

    method: Literal["suppression"] = "suppression"
    k: int = Field(ge=1)

    def check(self, n_records: int) -> None:
        check_k(self.k, n_records)

    def apply(self, frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
        return local_suppression(frame, list(columns) if columns else list(map(str, frame.columns)), self.k)


class CartSynthesisSpec(_Strict):
    """Partial synthesis by CART (:func:`rlopt.masking.synthesis.cart_synthesis`): the
    given columns replaced by draws from the leaves of trees with at least
    ``min_leaf`` records; the other columns and the record order kept."""

    method: Literal["synthetic_cart"] = "synthetic_cart"
    min_leaf: int = Field(default=5, ge=1)
    seed: int = 0

    def apply(self, frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
        if not columns:
            raise InputError(
                "partial synthesis needs the attributes to replace: --columns A,B (Python: columns=[...])"
            )
        return cart_synthesis(frame, columns, min_leaf=self.min_leaf, seed=self.seed)


class GaussianCopulaSpec(_Strict):
    """A fully synthetic file of ``n_records`` records (default: as many as the
    original) from a Gaussian copula with the empirical marginals
    (:func:`rlopt.masking.synthesis.gaussian_copula`), of the given numeric columns."""

    method: Literal["synthetic_copula"] = "synthetic_copula"
    n_records: int | None = Field(default=None, ge=2)
    seed: int = 0

    def apply(self, frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
        return gaussian_copula(frame, n_records=self.n_records, columns=columns or None, seed=self.seed)


class DPHistogramSpec(_Strict):
    """A fully synthetic file drawn from an epsilon-DP histogram of ``bins`` equal-width
    bins per attribute over the published domain ``bounds`` (default: the data's range,
    with a warning that it is not private):
    :func:`rlopt.masking.synthesis.dp_histogram`."""

    method: Literal["dp_histogram"] = "dp_histogram"
    epsilon: float = Field(gt=0, allow_inf_nan=False)
    bins: int = Field(default=4, ge=2)
    bounds: Domain | None = None
    n_records: int | None = Field(default=None, ge=2)
    seed: int = 0

    def apply(self, frame: pd.DataFrame, columns: Sequence[str] | None = None) -> pd.DataFrame:
        return dp_histogram(
            frame,
            self.epsilon,
            bins=self.bins,
            bounds=self.bounds,
            n_records=self.n_records,
            columns=columns or None,
            seed=self.seed,
        )


MaskingSpec = Annotated[
    MDAVSpec
    | RankSwapSpec
    | NoiseSpec
    | DPMicroaggregationSpec
    | LaplaceSpec
    | FuzzySpec
    | PramSpec
    | RandomizedResponseSpec
    | RecodingSpec
    | SuppressionSpec
    | CartSynthesisSpec
    | GaussianCopulaSpec
    | DPHistogramSpec,
    Field(discriminator="method"),
]


@dataclass(frozen=True)
class MaskingMethod:
    """A registered masking method: ``name`` (canonical), ``aliases``, its ``spec``
    class, ``parameter``, the spec field a trade-off varies, whether it masks
    ``categorical`` attributes (else numeric ones), and whether it is a ``synthetic``
    data generator: ``""`` (it masks the records), ``"partial"`` (chosen attributes
    synthesized, the records and their order kept: record linkage applies) or
    ``"full"`` (new records, nobody's: record linkage does not apply, and the file's
    risk is that of a membership attack, ``rlopt membership``)."""

    name: str
    title: str
    spec: type[BaseModel]
    parameter: str
    aliases: tuple[str, ...] = ()
    categorical: bool = False
    synthetic: Literal["", "partial", "full"] = ""

    def spec_at(self, value: float, seed: int = 0) -> MaskingSpec:
        """The spec with ``parameter = value`` (a trade-off's point), seeded if seedable."""
        fields = {self.parameter: value}
        if "seed" in self.spec.model_fields:
            fields["seed"] = seed
        return _validated(self.spec, fields, self.name)  # type: ignore[return-value]


MASKING_METHODS: dict[str, MaskingMethod] = {
    m.name: m
    for m in (
        MaskingMethod("mdav", "MDAV microaggregation", MDAVSpec, "k", ("microaggregation",)),
        MaskingMethod(
            "rank_swap", "rank swapping", RankSwapSpec, "p", ("rank-swap", "rank-swapping", "rank_swapping")
        ),
        MaskingMethod(
            "noise", "additive noise", NoiseSpec, "variance_ratio", ("additive-noise", "additive_noise")
        ),
        MaskingMethod(
            "dp_microaggregation",
            "DP microaggregation",
            DPMicroaggregationSpec,
            "epsilon",
            ("dp-microaggregation", "dp_mdav", "dp-mdav"),
        ),
        MaskingMethod(
            "laplace", "Laplace noise (epsilon-DP)", LaplaceSpec, "epsilon", ("dp-laplace", "dp_laplace")
        ),
        MaskingMethod(
            "fuzzy",
            "fuzzy microaggregation",
            FuzzySpec,
            "c",
            ("fuzzy-microaggregation", "fuzzy_microaggregation"),
        ),
        MaskingMethod(
            "pram", "PRAM", PramSpec, "theta", ("post-randomisation", "post-randomization"), categorical=True
        ),
        MaskingMethod(
            "randomized_response",
            "randomized response",
            RandomizedResponseSpec,
            "theta",
            ("randomised_response", "randomized-response", "randomised-response", "rr"),
            categorical=True,
        ),
        MaskingMethod(
            "recoding",
            "global recoding",
            RecodingSpec,
            "base",
            ("global-recoding", "global_recoding"),
            categorical=True,
        ),
        MaskingMethod(
            "suppression",
            "local suppression",
            SuppressionSpec,
            "k",
            ("local-suppression", "local_suppression"),
            categorical=True,
        ),
        MaskingMethod(
            "synthetic_cart",
            "partially synthetic (CART)",
            CartSynthesisSpec,
            "min_leaf",
            ("cart", "partial-synthesis", "partially-synthetic"),
            synthetic="partial",
        ),
        MaskingMethod(
            "synthetic_copula",
            "fully synthetic (Gaussian copula)",
            GaussianCopulaSpec,
            "n_records",
            ("copula", "gaussian-copula", "gaussian_copula"),
            synthetic="full",
        ),
        MaskingMethod(
            "dp_histogram",
            "fully synthetic (DP histogram)",
            DPHistogramSpec,
            "epsilon",
            ("dp-histogram", "histogram"),
            synthetic="full",
        ),
    )
}


def masking_method(name: str) -> MaskingMethod:
    """The registered method called ``name`` or one of its aliases (any case)."""
    key = str(name).strip().lower()
    for method in MASKING_METHODS.values():
        if key == method.name or key in method.aliases:
            return method
    raise InputError(f"masking method {name!r}; expected one of {', '.join(MASKING_METHODS)}")


def fully_synthetic(spec_or_name: MaskingSpec | str) -> bool:
    """Whether a method (its spec, or a name or alias) makes a fully synthetic file."""
    name = spec_or_name if isinstance(spec_or_name, str) else spec_or_name.method
    return masking_method(name).synthetic == "full"


def check_linkable(spec_or_name: MaskingSpec | str) -> None:
    """Refuse a fully synthetic method where record linkage would measure its file
    (``risk``, ``tradeoff``, a pair of the app): its records are nobody's."""
    if fully_synthetic(spec_or_name):
        name = spec_or_name if isinstance(spec_or_name, str) else spec_or_name.method
        raise InputError(
            f"{masking_method(name).name} makes a fully synthetic file: its records are nobody's, so "
            "record linkage does not apply; measure it with `rlopt membership` (a membership attack "
            "with held-out records)"
        )


def _expected(message: str) -> str:
    """pydantic's "Input should be greater than 0" as rlopt says it: "expected a value
    greater than 0"."""
    for prefix in ("Input should be a valid ", "Input should be "):
        if message.startswith(prefix):
            rest = message.removeprefix(prefix)
            return f"expected a {rest}" if prefix.endswith("valid ") else f"expected a value {rest}"
    return message


def _validated(spec: type[BaseModel], fields: dict, name: str) -> BaseModel:
    try:
        return spec.model_validate({"method": name, **fields})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'parameters'}={e.get('input')!r}: {_expected(e['msg'])}"
            if e["loc"]
            else e["msg"].removeprefix("Value error, ")
            for e in exc.errors()
        )
        given = {key: value for key, value in fields.items() if key != "seed"}  # the seed always has a value
        named = all(e["loc"] for e in exc.errors())  # each problem names its parameter and value
        raise InputError(
            f"{name} parameters {given}: {problems}" if given and not named else f"{name} {problems}"
        ) from None


def masking_spec(method: str, **parameters) -> MaskingSpec:
    """The validated spec of ``method`` (a name or alias) with ``parameters``
    (``None`` values are left out): ``masking_spec("mdav", k=3)``."""
    registered = masking_method(method)
    fields = {key: value for key, value in parameters.items() if value is not None}
    return _validated(registered.spec, fields, registered.name)  # type: ignore[return-value]


def mask(frame: pd.DataFrame, spec: MaskingSpec, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """``frame`` masked by ``spec`` (only ``columns`` when given; MDAV groups name their own)."""
    return spec.apply(frame, columns)
