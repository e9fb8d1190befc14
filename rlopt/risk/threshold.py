"""The officer's threshold: does the worst case stay below ``T``? (``rlopt risk
--threshold``; the talks' Boolean measure of disclosure, "check whether the definition
holds or not".)

- :class:`Threshold`: ``5%``, ``0.05`` or ``20 records``, parsed once, exactly (a share
  is a :class:`~fractions.Fraction`); :meth:`Threshold.records` is the target on a file of
  ``n`` records, the least count that reaches the threshold;
- :func:`cell_verdict`: the same answer for one cell of ``rlopt compare``'s map, from its
  interval of shares;
- :func:`decide`: the answer of a run's figures: ``passes`` when every family and attack
  is proven below the target (nothing failed or stopped), ``fails`` when a verified count
  reaches it (the family or attack, and its recounted parameter, named), else
  ``undecided`` (which intervals straddle it, what failed or stopped).

A run told the target (:attr:`rlopt.milp.SolverOptions.target`) stops each family as soon
as its interval answers it; its figures are then intervals with status ``decided``.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from fractions import Fraction

from rlopt.exceptions import InputError
from rlopt.status import Status

__all__ = ["Threshold", "Decision", "decide", "cell_verdict", "PASSES", "FAILS", "UNDECIDED"]

PASSES, FAILS, UNDECIDED = "passes", "fails", "undecided"

_EXAMPLES = "a percentage (5%), a share in (0, 1] (0.05) or a count of records (20 records)"


@dataclass(frozen=True)
class Threshold:
    """A threshold as the officer wrote it: a ``share`` of the records (exact) or a
    number of ``records``; ``text`` is how it was written."""

    text: str
    share: Fraction | None = None
    count: int | None = None

    @classmethod
    def parse(cls, value: str | float | int | Threshold) -> Threshold:
        """``"5%"``, ``"0.05"`` (or ``0.05``), ``"20 records"``; anything else, or a value
        outside (0, 100 %], is an :class:`InputError` naming it."""
        if isinstance(value, Threshold):
            return value
        text = str(value).strip()
        if isinstance(value, bool):
            raise InputError(f"threshold {value!r}; expected {_EXAMPLES}")
        if (m := re.fullmatch(r"(\d+)\s*(records?)", text)) is not None:
            count = int(m.group(1))
            if count < 1:
                raise InputError(f"threshold {text!r}: no record; expected at least 1 record")
            return cls(text, count=count)
        percent = text.endswith("%")
        try:
            number = Fraction(text.removesuffix("%").strip())
        except (ValueError, ZeroDivisionError):
            raise InputError(f"threshold {text!r}; expected {_EXAMPLES}") from None
        share = number / 100 if percent else number
        if not 0 < share <= 1:
            hint = " (for a percentage, write 5%)" if not percent and number > 1 else ""
            raise InputError(f"threshold {text!r} is outside (0, 100 %]; expected {_EXAMPLES}{hint}")
        return cls(text, share=share)

    def records(self, n_records: int) -> int:
        """The target on a file of ``n_records``: the least count of re-identified records
        that reaches the threshold (a count above the file is an :class:`InputError`)."""
        if self.count is not None:
            if self.count > n_records:
                raise InputError(
                    f"threshold {self.text!r} is above the file's {n_records} records; "
                    f"expected at most {n_records} records"
                )
            return self.count
        assert self.share is not None
        return max(1, math.ceil(self.share * n_records))


@dataclass(frozen=True)
class Decision:
    """What a run says of its threshold: ``verdict`` (``passes``, ``fails``,
    ``undecided``), the ``target`` in records of ``n_records``, ``by`` who reaches it
    (fails) and ``lower_source`` the step whose recounted parameter does; ``below`` the
    families proven below it; ``open`` those whose interval straddles it; ``failed`` and
    ``stopped`` what did not finish; ``text`` the answer in one line."""

    verdict: str
    threshold: str
    target: int
    n_records: int
    text: str
    by: str | None = None
    lower_source: str | None = None
    below: tuple[str, ...] = ()
    open: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    stopped: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        """``rlopt risk --threshold``'s exit code: 0 passes, 3 fails, 4 undecided (1 where
        undecided because part of the run failed)."""
        if self.verdict == PASSES:
            return 0
        if self.verdict == FAILS:
            return 3
        return 1 if self.failed else 4

    def to_dict(self) -> dict:
        return asdict(self) | {k: list(getattr(self, k)) for k in ("below", "open", "failed", "stopped")}


def verdict(lower: int | None, upper: int | None, target: int, complete: bool = True) -> str:
    """The one rule: ``fails`` when a verified count ``lower`` reaches ``target``, ``passes``
    when the ceiling ``upper`` is below it over a ``complete`` run, else ``undecided``."""
    if lower is not None and lower >= target:
        return FAILS
    return PASSES if complete and upper is not None and upper < target else UNDECIDED


def decide(threshold: Threshold, headline, families, n_records: int) -> Decision:
    """The answer of a run to ``threshold``, from its headline (the worst case over every
    family, baseline and attack) and its family rows (:class:`~rlopt.risk.figures.FamilyRow`)."""
    target = threshold.records(n_records)
    said = f"{threshold.text} ({100 * target / n_records:.2f} %, {target} of {n_records} records)"
    learned = [r for r in families if r.learned]
    below = tuple(r.family for r in learned if r.bound is not None and r.bound < target)
    open_ = tuple(
        r.family
        for r in learned
        if r.family not in below and (r.n_correct or 0) < target and r.status != Status.FAILED
    )
    failed, stopped = tuple(headline.failed), tuple(headline.stopped)

    def decision(verdict: str, text: str, by: str | None = None, source: str | None = None) -> Decision:
        return Decision(
            verdict, threshold.text, target, n_records, text, by, source, below, open_, failed, stopped
        )

    complete = not headline.failed and not headline.stopped
    answer = verdict(headline.n_correct, headline.upper_n_correct, target, complete)
    if answer == FAILS:
        source = next((r.lower_source for r in learned if r.family == headline.source), None)
        how = f" (its parameter from {source}, recounted)" if source else ""
        text = (
            f"Fails the threshold {said}: {headline.source} re-identifies {headline.n_correct} "
            f"({100 * headline.n_correct / n_records:.2f} %){how}."
        )
        return decision(FAILS, text, headline.source, source)
    if answer == PASSES:
        names = ", ".join(below) if below else "every method assessed"
        text = (
            f"Passes the threshold {said}: no distance of {names} re-identifies more than "
            f"{headline.upper_n_correct} ({100 * headline.upper_n_correct / n_records:.2f} %), proven."
        )
        return decision(PASSES, text)
    why = []
    if open_:
        rows = {r.family: r for r in learned}
        why.append(
            "; ".join(
                f"{f} is between {rows[f].n_correct or 0} and "
                f"{n_records if rows[f].bound is None else rows[f].bound} records"
                for f in open_
            )
            + (
                " (its interval straddles the target)"
                if len(open_) == 1
                else " (their intervals straddle it)"
            )
        )
    if headline.failed:
        why.append(f"{', '.join(headline.failed)} failed")
    if headline.stopped:
        why.append(f"{', '.join(headline.stopped)} did not finish")
    if below:
        why.append(f"{', '.join(below)} proven below it")
    text = f"Undecided at the threshold {said}: {'; '.join(why) or 'no ceiling below it'}."
    return decision(UNDECIDED, text)


def cell_verdict(threshold: Threshold, row: dict) -> str:
    """The answer of one cell of ``rlopt compare``'s map (``risk``, ``risk_upper`` shares
    of ``n_records``, ``risk_status``, ``risk_kind``): ``fails`` when its verified lower
    end reaches the target, ``passes`` when its ceiling is below it, else ``undecided``;
    ``""`` for a fully synthetic cell (a membership advantage, not a share re-identified)
    and for a cell without a figure (failed)."""
    risk, upper = row.get("risk"), row.get("risk_upper")
    if row.get("risk_kind") == "membership" or risk is None or risk != risk or upper is None:
        return ""
    n = int(row["n_records"])
    return verdict(round(risk * n), round(upper * n), threshold.records(n))
