"""The officer's answer in one line, from a risk run's JSON figures: what the report
and the app's page say before anything else (:func:`answer`). Plain words over the
figures; no solver is loaded."""

from __future__ import annotations

from rlopt.status import Status

__all__ = ["answer"]


def answer(figures: dict) -> str:
    """The officer's answer in one line, from a risk run's JSON figures (what
    ``--json`` writes): the worst case proven, or its interval and which family's time
    limit left it open, or, for a stopped or partly failed run, at least its lower end.
    The report and the app's page put it before anything else."""
    h, rows = figures["headline"], figures.get("families") or []
    if h.get("rate") is None:
        return "No worst case: no learned family or transparency attack was assessed."
    n, lower, upper = h["n_records"], h["n_correct"], h["upper_n_correct"]
    reached = f"{_pct(lower, n)} of the records ({lower} of {n}) re-identified, by {h['source']}"
    if h.get("stopped") or h.get("failed"):
        why = [f"{', '.join(h['failed'])} failed"] if h.get("failed") else []
        families = [name for name in h.get("stopped") or () if any(r["family"] == name for r in rows)]
        steps = [name for name in h.get("stopped") or () if name not in families]
        why += [f"{_names(families)} did not finish"] if families else []
        why += [f"{_names(steps)} stopped"] if steps else []
        if h["status"] == Status.PROVEN:
            return f"Worst case: {reached}, proven; {'; '.join(why)}."
        return f"At least {reached}; the worst case may be higher: {'; '.join(why)}."
    if h["status"] == Status.PROVEN:
        return f"Worst case: {reached}, proven."
    limit = (figures.get("inputs") or {}).get("time_limit")
    open_ = [r["family"] for r in rows if r.get("source") == "learned" and Status(r["status"]).is_interval]
    upper_family = next(
        (name for name in open_ if str(h.get("upper_source") or "").startswith(f"{name}'s")), None
    )
    ceiling = f"between {_pct(lower, n)} and {_pct(upper, n)} ({lower} to {upper} of {n} records)"
    if upper_family is not None:
        others = [name for name in open_ if name != upper_family]
        limit_text = "" if limit is None else f" ({limit:g} s)"
        also = (
            f"; {_names(others)} also ended as {'an interval' if len(others) == 1 else 'intervals'}"
            if others
            else ""
        )
        return (
            f"Worst case not proven: {ceiling}; {upper_family}'s time limit{limit_text} left it open{also}."
        )
    return f"Worst case not proven: {ceiling}; the upper end is {h.get('upper_source')}."


def _pct(count: int, n: int) -> str:
    return f"{100 * count / n:.2f} %"


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
