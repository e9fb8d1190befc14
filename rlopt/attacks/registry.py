"""The registry of transparency attacks, keyed by the masking method each one exploits.

An attack's assumption is the published masking's spec (:mod:`rlopt.masking.methods`):
``plan_attack(data, masking_spec("rank_swap", p=10))`` checks the parameters against
the file now and returns the call that runs the attack with a given distance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rlopt.attacks._common import AttackResult
from rlopt.attacks.fuzzy import FuzzyAttackResult, fuzzy_attack
from rlopt.attacks.microaggregation import microaggregation_attack
from rlopt.attacks.pram import PramAttackResult, original_labels, pram_attack
from rlopt.attacks.rank_swap import rank_swap_attack
from rlopt.data import LinkageData
from rlopt.exceptions import InputError
from rlopt.families import Distance
from rlopt.masking import MASKING_METHODS, MaskingSpec, masking_method
from rlopt.masking.methods import FuzzySpec, MDAVSpec, PramSpec, RankSwapSpec
from rlopt.masking.swapping import swap_window

__all__ = ["TransparencyAttack", "ATTACKS", "attack_for", "plan_attack", "AttackRun"]

AttackRun = Callable[[str | Distance], AttackResult | FuzzyAttackResult | PramAttackResult]
"""Runs a planned attack with a distance (a baseline name or a fitted distance; the
fuzzy attack ranks by posterior probability and takes none)."""


@dataclass(frozen=True)
class TransparencyAttack:
    """The attack on files masked by ``masking`` (a registered method's name)."""

    masking: str
    title: str
    plan: Callable[[LinkageData, MaskingSpec], AttackRun]


def _plan_rank_swap(data: LinkageData, spec: MaskingSpec) -> AttackRun:
    assert isinstance(spec, RankSwapSpec)
    swap_window(spec.p, spec.window, data.n_records)  # checked when the attack is planned
    return lambda distance: rank_swap_attack(data, p=spec.p, window=spec.window, distance=distance)


def _published_groups(data: LinkageData, spec: MDAVSpec | FuzzySpec) -> list[tuple[list[str], int]]:
    """The published attribute groups, each of the file's attributes and each size
    possible for its records (``spec.check``); one size alone is one group of the
    numeric attributes (microaggregation masks numbers)."""
    numeric = [data.columns[k] for k in data.numeric_columns]
    groups = spec.group_list(numeric)
    for columns, _ in groups:
        unknown = [c for c in columns if c not in data.columns]
        if unknown:
            raise InputError(
                f"attack group column(s) {unknown} are not among the attributes {list(data.columns)}"
            )
        categorical = [c for c in columns if c not in numeric]
        if categorical:
            raise InputError(
                f"attack group column(s) {categorical} are categorical; microaggregation masks numbers: "
                "give the numeric groups (--groups 'A,B:3')"
            )
    if not groups or not groups[0][0]:
        raise InputError("the microaggregation attack needs numeric attributes; the files have none")
    spec.check(data.n_records)
    return groups


def _plan_mdav(data: LinkageData, spec: MaskingSpec) -> AttackRun:
    assert isinstance(spec, MDAVSpec)
    groups = _published_groups(data, spec)
    return lambda distance: microaggregation_attack(data, groups=groups, distance=distance)


def _plan_pram(data: LinkageData, spec: MaskingSpec) -> AttackRun:
    assert isinstance(spec, PramSpec)
    categorical = [k.name for k in data.kinds if k.categorical]
    columns = spec.columns or categorical
    wrong = [c for c in columns if c not in categorical]
    if wrong or not columns:
        raise InputError(
            f"PRAM attack: column(s) {wrong or columns} are not categorical attributes of the files; "
            f"categorical: {categorical}"
        )
    matrices = spec.published(original_labels(data, columns), columns)
    return lambda distance: pram_attack(data, matrices)


def _plan_fuzzy(data: LinkageData, spec: MaskingSpec) -> AttackRun:
    assert isinstance(spec, FuzzySpec)
    groups = _published_groups(data, spec)
    return lambda distance: fuzzy_attack(data, groups=groups, m2=spec.m2)


ATTACKS: dict[str, TransparencyAttack] = {
    a.masking: a
    for a in (
        TransparencyAttack("rank_swap", "rank swapping intersection attack", _plan_rank_swap),
        TransparencyAttack("mdav", "microaggregation intersection attack", _plan_mdav),
        TransparencyAttack("fuzzy", "fuzzy microaggregation posterior attack", _plan_fuzzy),
        TransparencyAttack("pram", "PRAM posterior attack", _plan_pram),
        TransparencyAttack("randomized_response", "randomized response posterior attack", _plan_pram),
    )
}
assert set(ATTACKS) <= set(MASKING_METHODS), "an attack must name a registered masking method"


def attack_for(method: str) -> TransparencyAttack:
    """The transparency attack on files masked by ``method`` (a name or alias)."""
    try:
        name = masking_method(method).name
    except InputError:
        name = str(method)
    if name not in ATTACKS:
        raise InputError(f"no transparency attack on {name!r}; attacks exist for: {', '.join(ATTACKS)}")
    return ATTACKS[name]


def plan_attack(data: LinkageData, spec: MaskingSpec) -> AttackRun:
    """Check the published masking ``spec`` against ``data`` now; the returned call
    runs the attack (so a bad parameter is an error before any other work)."""
    return attack_for(spec.method).plan(data, spec)
