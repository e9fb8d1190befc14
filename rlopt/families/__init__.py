"""Distance families, registered by the names of SPEC section 4."""

from __future__ import annotations

from rlopt.exceptions import InputError
from rlopt.families._base import BaselineFamily, Distance, Family
from rlopt.families.am import ArithmeticMean
from rlopt.families.md import Mahalanobis

__all__ = ["FAMILIES", "get_family", "Family", "BaselineFamily", "Distance"]

FAMILIES: dict[str, Family] = {
    family.name: family for family in (
        ArithmeticMean(),
        Mahalanobis(),
    )
}


def get_family(name: str) -> Family:
    """The family registered under ``name`` (``"am"``, ``"md"``, ...)."""
    try:
        return FAMILIES[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown distance family {name!r}; expected one of {list(FAMILIES)}") from None
