"""Attribute groups, the one rule MDAV and fuzzy microaggregation share: one size for
one group of the attributes, or groups with their own sizes that partition (some of)
the attributes, never both. (The specs of :mod:`rlopt.masking.methods` say the first
half in the command line's words, in ``_Grouped``, before any file is read.)"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from rlopt.exceptions import InputError

__all__ = ["attribute_groups"]


def attribute_groups(
    every: Iterable[Any],
    size_name: str,
    size: Any,
    groups: Sequence[tuple[Sequence[str], Any]] | None,
    columns: Sequence[str] | None = None,
) -> list[tuple[list[str], Any]]:
    """The groups as ``(columns, size)`` pairs: exactly one of ``size`` (named
    ``size_name`` in the message: ``k`` or ``c``; one group of ``columns``, default all
    of ``every``) and ``groups``, whose columns appear in one group at most."""
    if (size is None) == (groups is None):
        raise InputError(f"give exactly one of {size_name}={size!r} and groups={groups!r}")
    if groups is None:
        return [(list(columns) if columns is not None else [str(k) for k in every], size)]
    if columns is not None:
        raise InputError(f"columns={columns!r} with groups: give the columns inside groups instead")
    seen: set[str] = set()
    for group_columns, _ in groups:
        overlap = seen.intersection(group_columns)
        if overlap:
            raise InputError(
                f"attribute(s) {sorted(overlap)} appear in more than one group; "
                "expected a partition of the attributes"
            )
        seen.update(group_columns)
    return [(list(group_columns), group_size) for group_columns, group_size in groups]
