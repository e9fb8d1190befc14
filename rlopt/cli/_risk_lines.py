"""What ``rlopt risk`` prints: the headline, the baselines and each family (after a
Ctrl-C, the same over what finished)."""

from __future__ import annotations

from collections.abc import Callable

import typer

from rlopt.milp.certificate import describe_blocks, describe_lower
from rlopt.risk.figures import BaselineRow, FamilyRow, Headline, RiskAssessment
from rlopt.status import Status


def print_risk(result: RiskAssessment, say: Callable[[str], None]) -> None:
    for note in result.inputs["notes"]:
        typer.echo(f"note: {note}", err=True)
    say(f"kinds: {result.inputs['kinds_described']}")
    h = result.headline
    if h.incomplete:
        say(h.incomplete)
    line = _worst_case_line(h)
    if line is not None:
        say(line)
        if h.note:
            say(f"  ({h.note})")
    _print_baselines(result.baselines, say)
    if result.attack:
        attack = result.attack
        say(f"  {attack['method']} attack: {_count(attack['n_correct'], attack['n_records'])}")
    for row in result.families:
        _print_family(row, say)
    for check in result.generalisation:
        if check.get("rate") is not None:
            say(
                f"  generalisation ({check['folds']}-fold {check['family']}, learned on the other folds): "
                f"{_count(check['n_correct'], check['n_assessed'])} of the held-out records"
            )


def _worst_case_line(h: Headline) -> str | None:
    """``worst case 95.00% (380 of 400) by ci, proven`` (an interval says its two ends);
    ``None`` when nothing was assessed."""
    lower, upper, n = h.n_correct, h.upper_n_correct, h.n_records
    if lower is None or upper is None or not n:
        return None
    text = f"worst case {_count(lower, n)} by {h.source}, {h.status}"
    if not h.proven and upper >= n:
        text += f": at least {lower} of {n} re-identified, no ceiling proven"
    elif not h.proven:
        text += f": between {100 * lower / n:.2f}% and {100 * upper / n:.2f}%"
    if not h.proven and h.upper_source:
        text += f" (upper end: {h.upper_source})"
    return text


def _count(n_correct: int, n_records: int) -> str:
    return f"{100 * n_correct / n_records:.2f}% ({n_correct} of {n_records})"


def _print_baselines(baselines: dict[str, BaselineRow], say: Callable[[str], None]) -> None:
    """``  baselines: am 95.00%, md 95.00%, pld 83.50%`` (the counts of fixed distances)."""
    shown = [
        f"{name} {100 * b.rate:.2f}%" if b.rate is not None else f"{name} {b.status}"
        for name, b in baselines.items()
    ]
    if shown:
        say(f"  baselines: {', '.join(shown)}")


def _print_family(row: FamilyRow, say: Callable[[str], None]) -> None:
    if row.status == Status.SAMPLED:
        sample = row.sample or {}
        ceiling = "" if row.bound is None else f", at most {row.bound} ({row.upper_source})"
        say(
            f"  {row.family}: at least {row.n_correct} re-identified ({100 * (row.rate or 0):.2f}%){ceiling}, "
            f"by {row.lower_source}; learned on {sample['n_records']} records "
            f"({sample['status']}: {sample['n_correct']}, bound {sample['bound']}), recounted on the whole file"
        )
        return
    if row.status == Status.INTERRUPTED and row.n_correct is None:
        say(f"  {row.family}: stopped before it had a verified count (no figure)")
        return
    bound = (
        ""
        if row.status in (Status.OPTIMAL, Status.APPLIED) or row.bound is None
        else f" (bound {100 * (row.bound_rate or 0):.2f}%, {row.bound} records)"
    )
    rate = "" if row.rate is None else f"{100 * row.rate:.2f}%"
    source = describe_lower(row.lower_source)
    start = "" if source is None else f"; {source}"
    subfamily = " (a lower end for ci)" if row.family == "ci_k" else ""
    blocks = "" if row.blocks is None else f"; {describe_blocks(row.blocks)}"
    say(f"  {row.family}{subfamily}: {rate} {row.status}{bound}{start}{blocks}")
