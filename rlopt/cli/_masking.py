"""The masking parameters as options, declared once: ``mask``, ``attack`` and ``risk``
take them by :func:`masking_options`, and :func:`rlopt.masking.grammar.spec_from_text`
turns what was given into the registry's typed spec, the same way for every command
(``compare`` and ``tradeoff`` write the same parameters as ``PARAMETER=VALUES``)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Annotated, Any, NamedTuple

import typer


class MaskingOption(NamedTuple):
    field: str  # the spec's field
    flag: str
    type: Any
    metavar: str | None
    help: str


MASKING_OPTIONS = (
    MaskingOption("k", "--k", int, "K", "MDAV, DP microaggregation, suppression: the group size k"),
    MaskingOption("groups", "--groups", str, "'A,B:3;C,D:8'", "MDAV, fuzzy: attribute groups and their k (or c)"),
    MaskingOption("p", "--p", float, "P", "rank swapping: range in percent of the records, in (0, 100]"),
    MaskingOption("window", "--window", int, "RANKS", "rank swapping: range in ranks (instead of --p)"),
    MaskingOption("variant", "--variant", str, "VARIANT", "rank swapping: plain, p-buckets or p-distribution"),
    MaskingOption("variance_ratio", "--variance-ratio", float, "RATIO", "noise: Var(noise) = RATIO x Var(attribute)"),
    MaskingOption("c", "--c", int, "C", "fuzzy microaggregation: the number of clusters"),
    MaskingOption("m1", "--m1", float, "M1", "fuzzy microaggregation: fuzzifier m1 > 1 (default 2)"),
    MaskingOption("m2", "--m2", float, "M2", "fuzzy microaggregation: fuzzifier m2 > 1 of the drawn memberships"),
    MaskingOption("epsilon", "--epsilon", float, "EPS", "DP methods: the privacy budget epsilon > 0"),
    MaskingOption("bounds", "--bounds", str, "'A:0:100;B:-5:5'", "DP methods: the published domain (default: the data's range)"),
    MaskingOption("theta", "--theta", float, "THETA", "PRAM, randomized response: probability of keeping a value"),
    MaskingOption("invariant", "--invariant", bool, None, "PRAM: invariant (expected frequencies kept)"),
    MaskingOption("matrices", "--matrix", list[str], "COLUMN=PATH", "PRAM: a CSV transition matrix (rows true, columns released); repeatable"),
    MaskingOption("merge", "--merge", str, "'edu=college|grad'", "recoding: merge categories, ';' between merges"),
    MaskingOption("top", "--top", str, "'income:100000'", "recoding: top-code, ';' between attributes"),
    MaskingOption("bottom", "--bottom", str, "'age:18'", "recoding: bottom-code, ';' between attributes"),
    MaskingOption("base", "--base", str, "'age:5'", "recoding: round to a base, ';' between attributes"),
    MaskingOption("min_leaf", "--min-leaf", int, "N", "partial synthesis (CART): the fewest records in a leaf (default 5)"),
    MaskingOption("n_records", "--n-records", int, "N", "fully synthetic: records to draw (default: the input's)"),
    MaskingOption("bins", "--bins", int, "BINS", "DP histogram: equal-width bins per attribute (default 4)"),
)  # fmt: skip
"""Every masking parameter the command line takes: its spec field, flag and help."""

ATTACKED = ("k", "groups", "p", "window", "c", "m2", "theta", "invariant", "matrices")
"""The parameters a transparency attack reads (the published ones)."""


def _parameter(option: MaskingOption, section: str) -> inspect.Parameter:
    declared = typer.Option(option.flag, metavar=option.metavar, help=option.help, rich_help_panel=section)
    return inspect.Parameter(
        option.field,
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[option.type | None, declared],
    )


def masking_options(section: str, fields: Sequence[str] | None = None) -> Callable:
    """Give a command the masking options ``fields`` (default: all), listed under
    ``section`` of its help; the command receives them as ``masking``, a dict from spec
    field to the value given (None: not given)."""
    chosen = [o for o in MASKING_OPTIONS if fields is None or o.field in fields]

    def decorate(command: Callable) -> Callable:
        own = inspect.signature(command, eval_str=True)
        kept = [p for p in own.parameters.values() if p.name != "masking"]
        added = [_parameter(o, section) for o in chosen]

        @functools.wraps(command)
        def wrapper(*args, **kwargs):
            given = {o.field: _given(kwargs.pop(o.field, None)) for o in chosen}
            return command(*args, masking=given, **kwargs)

        wrapper.__signature__ = own.replace(parameters=kept + added)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in kept + added}
        return wrapper

    return decorate


def _given(value: Any) -> Any:
    """An option's value; None when it was not given (a repeatable one: an empty list)."""
    return None if isinstance(value, list | tuple) and not value else value


def given_any(masking: dict[str, Any]) -> bool:
    return any(value is not None for value in masking.values())


def flags(masking: dict[str, Any]) -> str:
    """The flags of ``masking``'s options, e.g. ``--k/--groups/--p``."""
    names = {o.field: o.flag for o in MASKING_OPTIONS}
    return "/".join(names[field] for field in masking)
