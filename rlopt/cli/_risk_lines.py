"""What ``rlopt risk`` prints: the headline, the baselines and each family (after a
Ctrl-C, the same over what finished)."""

from __future__ import annotations

from collections.abc import Callable

import typer

from rlopt.milp.ceilings.certificate import describe_blocks, describe_lower
from rlopt.report.answers import certified
from rlopt.risk.figures import BaselineRow, FamilyRow, Headline, RiskAssessment
from rlopt.status import Status


def print_risk(result: RiskAssessment, say: Callable[[str], None]) -> None:
    for note in result.inputs["notes"]:
        typer.echo(f"note: {note}", err=True)
    if result.decision is not None:  # the answer first
        say(result.decision.text)
    say(f"kinds: {result.inputs['kinds_described']}")
    h = result.headline
    if h.incomplete:
        say(h.incomplete)
    line = _worst_case_line(h)
    if line is not None:
        say(line)
        if h.note:
            say(f"  ({h.note})")
        part = certified(result.figures)
        if part is not None:
            say(f"  certified: {part}")
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
    if result.drivers is not None:
        print_drivers(result.drivers, say)


def print_drivers(drivers: dict, say: Callable[[str], None]) -> None:
    """The attributes ranked by how far the worst case drops without each, with what the
    parameters say of it, then the records every method re-identifies::

        drivers: the worst case without each attribute (3.3 s per family); whole file 39 (proven)
          rank  attribute  without it          drop  wm     ci     sb
          1     a          5 to 10 (interval)    34  1.000  1.000  1.000
    """
    full, limit = drivers["full"], drivers["time_limit"]
    per_family = "no time limit" if limit is None else f"{limit:g} s per family"
    say(f"drivers: the worst case without each attribute ({per_family}); whole file {_ends(full)}")
    shares = {name: p["shares"] for name, p in drivers["parameters"].items() if p["shares"] is not None}
    header = ["rank", "attribute", "without it", "drop", *shares]
    table = [
        [
            str(row["rank"]),
            row["attribute"],
            _ends(row),
            str(row["drop"]),
            *(f"{values[row['attribute']]:.3f}" for values in shares.values()),
        ]
        for row in drivers["ranking"]
    ]
    widths = [max(len(line[k]) for line in [header, *table]) for k in range(len(header))]
    for line in [header, *table]:
        say(
            "  "
            + "  ".join(
                cell.rjust(w) if k == 3 else cell.ljust(w) for k, (cell, w) in enumerate(zip(line, widths))
            ).rstrip()
        )
    say("  drop: the whole file's lower end less the lower end without the attribute (verified counts)")
    for note in drivers["notes"]:
        say(f"  ({note})")
    for name, p in drivers["parameters"].items():
        say(f"  {name}: {p['meaning']}")
    groups = drivers["records"]["groups"]
    say(
        f"  records: {groups['exposed']['n']} re-identified by every method, {groups['learned_only']['n']} "
        f"only by a learned family, {groups['some_fixed']['n']} by some baseline or attack but not every "
        f"method, {groups['none']['n']} by none"
    )


def _ends(worst: dict) -> str:
    """``39 (proven)`` or ``5 to 10 (interval)``."""
    if worst["status"] == Status.PROVEN:
        return f"{worst['lower']} (proven)"
    return f"{worst['lower']} to {worst['upper']} ({worst['status']})"


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
        why = (
            "stopped before it had a verified count"
            if row.history
            else "not started: the run was stopped before it"
        )
        say(f"  {row.family}: {why} (no figure)")
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
