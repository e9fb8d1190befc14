"""The officer's answer in one line, from a risk run's JSON figures: what the report
and the app's page say before anything else (:func:`answer`). Plain words over the
figures; no solver is loaded."""

from __future__ import annotations

from rlopt.status import Status

__all__ = [
    "answer",
    "certified",
    "integral_answer",
    "map_answer",
    "membership_answer",
    "membership_cell",
    "proven",
]


def answer(figures: dict) -> str:
    """The officer's answer in one line, from a risk run's JSON figures (what
    ``--json`` writes): the answer to the threshold, where one was given; then the worst
    case proven, or its interval, which family's time limit left it open and what is
    certified apart from what is open (:func:`certified`), or, for a stopped or partly
    failed run, at least its lower end. The report and the app's page put it before
    anything else."""
    decision = figures.get("decision")
    worst = _worst(figures)
    return worst if not decision else f"{decision['text']} {worst}"


def certified(figures: dict) -> str | None:
    """What a run proved apart from what it left open, in one sentence (``None`` when
    every learned family is proven, or none has a count): "no distance of wm, owa or ci
    re-identifies more than 3.50 % (proven); sb re-identifies at least 4.50 %, no ceiling
    below 55.75 % is proven". Never one figure when one family is open."""
    rows = [r for r in figures.get("families") or [] if r.get("source") == "learned"]
    n = figures["headline"].get("n_records")
    if not n or all(r.get("status") == Status.OPTIMAL for r in rows):
        return None
    parts = []
    proven = [r for r in rows if r.get("status") == Status.OPTIMAL and r.get("n_correct") is not None]
    if proven:
        top = max(r["n_correct"] for r in proven)
        names = _names([r["family"] for r in proven])
        parts.append(f"no distance of {names} re-identifies more than {_pct(top, n)} (proven)")
    for r in rows:
        if r.get("status") == Status.OPTIMAL or r.get("n_correct") is None:
            continue
        bound = r.get("bound")
        ceiling = (
            "no ceiling is proven"
            if bound is None or bound >= n
            else f"no ceiling below {_pct(bound, n)} is proven"
        )
        parts.append(f"{r['family']} re-identifies at least {_pct(r['n_correct'], n)}, {ceiling}")
    return "; ".join(parts) or None


def _worst(figures: dict) -> str:
    """:func:`answer` without the threshold's part."""
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
        said = (
            f"Worst case not proven: {ceiling}; {upper_family}'s time limit{limit_text} left it open{also}."
        )
    else:
        said = f"Worst case not proven: {ceiling}; the upper end is {h.get('upper_source')}."
    part = certified(figures)
    return said if part is None else f"{said} Certified: {part}."


def proven(figures: dict) -> bool:
    """Whether a risk run's answer is a proven worst case over everything asked for
    (a run stopped or partly failed never is): what colours the line green."""
    h = figures["headline"]
    return h.get("status") == Status.PROVEN and not h.get("stopped") and not h.get("failed")


def _pct(count: int, n: int) -> str:
    return f"{100 * count / n:.2f} %"


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def map_answer(rows: list[dict]) -> str:
    """The answer of a map of masked files (``rlopt compare``'s cells: ``label``,
    ``risk``, ``risk_upper``, ``risk_status``) in one line: the cell whose worst case can
    be highest and the one whose ceiling is lowest (ranked by the upper end, so that an
    open interval never passes for a low risk), and how many are proven. Fully synthetic
    cells (``risk_kind`` ``membership``: an advantage, not a share re-identified) are
    ranked among themselves, in a sentence of their own."""
    cells = [r for r in rows if r.get("risk") is not None and r["risk"] == r["risk"]]  # NaN: a failed cell
    if not cells:
        return "No cell of the map has a worst case yet."
    failed = len(rows) - len(cells)
    tail = f"; {failed} failed" if failed else ""
    linked = [r for r in cells if r.get("risk_kind") != "membership"]
    synthetic = [r for r in cells if r.get("risk_kind") == "membership"]
    parts = [
        _ranked(group, noun) for group, noun in ((linked, "masked"), (synthetic, "fully synthetic")) if group
    ]
    return " ".join(parts).removesuffix(".") + f"{tail}."


def _ranked(cells: list[dict], noun: str) -> str:
    proven = sum(r["risk_status"] == Status.PROVEN for r in cells)
    low = min(cells, key=lambda r: (r["risk_upper"], r["risk"]))
    high = max(cells, key=lambda r: (r["risk_upper"], r["risk"]))
    estimates = all(r["risk_status"] == Status.ESTIMATE for r in cells)  # fully synthetic, calibrated
    figure = "membership advantage" if estimates else "worst case"
    if len(cells) == 1:
        return f"{figure.capitalize()} of {low['label']}: {_cell(low)}."
    tail = "each out of sample, with its 95 % interval" if estimates else f"{proven} of {len(cells)} proven"
    return (
        f"Of {len(cells)} {noun} files, the lowest {figure} is {low['label']}'s: {_cell(low)}; "
        f"the highest is {high['label']}'s: {_cell(high)}. {tail.capitalize()}."
    )


def _cell(row: dict) -> str:
    if row.get("risk_kind") == "membership":  # a fully synthetic file: no record to re-identify
        return membership_cell(row)
    if row["risk_status"] == Status.PROVEN:
        return f"{100 * row['risk']:.2f} % re-identified (proven)"
    return f"between {100 * row['risk']:.2f} % and {100 * row['risk_upper']:.2f} % re-identified (not proven)"


def membership_answer(figures: dict) -> str:
    """A membership run's answer (``rlopt membership``'s JSON figures: ``advantage``,
    ``status``, ``out_of_sample``): out of sample with its interval, then in sample."""
    crossed = figures.get("out_of_sample")
    inside = f"in sample {figures['advantage']:.3f} ({figures['status']})"
    if not isinstance(crossed, dict):  # no folds asked, or Ctrl-C before them
        return f"Membership advantage (TPR - FPR) {inside}; no out-of-sample figure."
    low, high = crossed["interval"]
    return (
        f"Membership advantage (TPR - FPR) {crossed['advantage']:.3f} out of sample (95 % interval "
        f"{low:.3f} to {high:.3f}, {crossed['folds']} folds); {inside}."
    )


def membership_cell(row: dict) -> str:
    """A fully synthetic cell's figure: the out-of-sample advantage with its interval,
    the in-sample worst case beside it."""
    if row["risk_status"] != Status.ESTIMATE:  # a row of an older map: the in-sample figure alone
        if row["risk_status"] == Status.PROVEN:
            return f"membership advantage {row['risk']:.3f} (proven)"
        return f"membership advantage between {row['risk']:.3f} and {row['risk_upper']:.3f} (not proven)"
    inside = row.get("membership_in_sample")
    beside = ""
    if inside is not None and inside == inside:
        proven = row.get("membership_in_sample_status") == Status.PROVEN
        upper = row.get("membership_in_sample_upper")
        beside = f"; in sample {inside:.3f}" + (" (proven)" if proven else f" to {upper:.3f} (not proven)")
    return (
        f"membership advantage {row['risk']:.3f} out of sample (95 % interval {row['risk_low']:.3f} "
        f"to {row['risk_upper']:.3f}{beside})"
    )


def integral_answer(figures: dict) -> str:
    """The answer of an update attack on two published models (``rlopt integral``'s
    figures) in one line: integrally private, or the records every explanation of the
    update removes or adds."""
    if figures.get("integrally_private"):
        return (
            f"Integrally private: no record is removed or added in every one of the {figures['size']} "
            f"modifications of at most {figures['max_changes']} record(s) that explain the two models."
        )
    if not figures.get("size"):
        return f"No modification of at most {figures['max_changes']} record(s) explains the two models."
    surely = " and ".join(
        f"{verb} record{'s' if len(figures[key]) > 1 else ''} {', '.join(map(str, figures[key]))}"
        for verb, key in (("removes", "removed_surely"), ("adds", "added_surely"))
        if figures[key]
    )
    return f"Not integrally private: every modification that explains the two models {surely}."
