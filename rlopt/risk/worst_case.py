"""The worst case over everything a run measured, by one rule (docs/method.md, "What is
counted, what is proven"): the one place ``risk``'s headline and each ``compare`` cell
decide their lower end, ceiling and status."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rlopt.linkage.identical import IDENTICAL_RECORDS
from rlopt.status import Status

__all__ = ["WorstCase", "worst_case"]


@dataclass(frozen=True)
class WorstCase:
    """``[n_correct, upper]`` records of ``n_records``; ``source`` names who reaches the
    lower end, ``upper_source`` what caps the upper end; ``note`` says why a strict
    count left no ceiling."""

    n_correct: int
    upper: int
    status: Status
    source: str | None
    n_records: int
    note: str | None = None
    upper_source: str | None = None


def worst_case(
    at_margin: Sequence[tuple[int, str]],
    strict: Sequence[tuple[int, str]],
    ceilings: Sequence[tuple[int | None, str]] | None,
    n_records: int,
    identical: int | None = None,
) -> WorstCase:
    """``at_margin``: ``(count, who)`` counted at margin eps (a family's verified count, a
    baseline's at that margin, a transparency attack's); ``strict``: counts whose own
    original is the unique nearest by any amount (a baseline's). ``ceilings``: ``(bound,
    family)`` for each learned family, its proven bound at margin eps (``None`` for a
    family with none, e.g. one that failed: then nothing is bounded); ``None`` when no
    family was learned.

    The lower end is the largest count of either kind (an intruder achieves each). The
    upper end is the largest ceiling, or the best count at margin if larger; it is proven
    when the lower end is reached at margin eps and meets it. A strict count above it is
    real but adds records nearer than the margin, which no family's ceiling bounds: the
    upper end is then the number of records.

    ``identical``: the ceiling of identical records (:mod:`rlopt.linkage.identical`; ``None``
    at margin 0, where it does not hold). It bounds every distance of every family, at
    margin eps and strictly, so it caps the families' ceilings and stands in for the number
    of records where they leave none (a failed family, a strict count above them)."""
    counts = [*at_margin, *strict]
    n_correct, source = max(counts, key=lambda item: item[0], default=(0, None))
    reached = max((count for count, _ in at_margin), default=0)
    ceiling, capped_by = _ceiling(ceilings, n_records, identical)
    upper, note = max(ceiling, reached), None
    if reached > ceiling:
        capped_by = f"the count at margin eps ({reached})"
    if n_correct > upper:
        note = (
            f"{source} re-identifies {n_correct} strictly, above the ceiling {upper} proven at margin "
            "eps: the records it adds are separated by less than the margin, which no family's ceiling bounds"
        )
        if identical is not None and n_correct <= identical:
            upper, capped_by = identical, f"{IDENTICAL_RECORDS} (which bound strict counts too)"
        else:
            upper, capped_by = n_records, "the number of records (a strict count above every ceiling)"
    status = Status.PROVEN if n_correct == upper == reached else Status.INTERVAL
    return WorstCase(n_correct, upper, status, source, n_records, note, capped_by)


def _ceiling(
    ceilings: Sequence[tuple[int | None, str]] | None, n_records: int, identical: int | None
) -> tuple[int, str | None]:
    """The largest ceiling of the families and what proves it, capped by the ceiling of
    identical records; the number of records where nothing bounds them."""
    if ceilings is None:
        return n_records, "no learned family: the number of records"
    unbounded = [who for c, who in ceilings if c is None]
    if unbounded:
        if identical is not None:
            return identical, f"{IDENTICAL_RECORDS} (no other ceiling from {', '.join(unbounded)})"
        return n_records, f"the number of records (no ceiling from {', '.join(unbounded)})"
    ceiling, who = max(
        ((c, w) for c, w in ceilings if c is not None), default=(0, None), key=lambda cw: cw[0]
    )
    if identical is not None and identical <= ceiling:
        return identical, IDENTICAL_RECORDS
    return ceiling, f"{who}'s proven bound" if who is not None else None
