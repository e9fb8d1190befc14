"""Risk against utility: the worst-case re-identification rate and the information
loss of one masking method over a range of its parameter."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from rlopt.data import validate_pair
from rlopt.data._validate import as_frame, validate_table
from rlopt.exceptions import InputError
from rlopt.families import DEFAULT_BASELINE, get_learned_family
from rlopt.masking import masking_method
from rlopt.masking.methods import check_linkable
from rlopt.milp import SolverOptions
from rlopt.risk.measures import information_loss
from rlopt.risk.pair import Measured, measure
from rlopt.validation import JOBS, MARGIN, check_params, validate_params

__all__ = ["tradeoff", "tradeoff_plan", "BASELINE_RATE"]

BASELINE_RATE = f"{DEFAULT_BASELINE}_rate"
"""The column of the trade-off table holding the default baseline's rate at each value."""


@validate_params({"margin": [MARGIN]})
def tradeoff(
    original,
    *,
    method: str,
    values: Sequence[float],
    families: Sequence[str] = ("wm",),
    columns: Sequence[str] | None = None,
    margin: float = 1e-5,
    time_limit: float | None = 60.0,
    threads: int | None = 1,
    seed: int = 0,
    n_jobs: int = 1,
    progress: Callable[[str], None] | None = None,
    intervals: Callable[[str, dict], None] | None = None,
) -> pd.DataFrame:
    """Mask ``original`` with ``method`` at every parameter value; for each masked file,
    the information loss, the AM baseline and the worst case of each family.

    Parameters
    ----------
    original : DataFrame or array-like
    method : str
        A method of :data:`rlopt.masking.MASKING_METHODS` (or an alias); ``values``
        are its trade-off ``parameter``: MDAV's ``k`` (all columns in one group),
        rank swapping's ``p`` (%), additive noise's ``variance_ratio``.
    values : sequence of numbers
        The parameter values (e.g. ``range(2, 11)`` for MDAV).
    families : sequence of str, default=("wm",)
        Learned families; each cell is one MILP with ``time_limit`` seconds.
    n_jobs : int, default=1
        Worker processes for each masked file's families: side by side, spare workers
        racing the open ones (:mod:`rlopt.milp.racing.race`).
    progress, intervals : callables, default=None
        ``progress(message)`` before each masked file; ``intervals(label, event)`` each
        time a cell's interval narrows (label ``"family at parameter=value"``).

    Returns
    -------
    DataFrame
        One row per (value, family): ``parameter, value, family, rate, status,
        bound_rate, am_rate (the default baseline's rate), mean_change, variance_change,
        correlation_change, sse, seconds``, then the masked file's worst case over its
        families and baselines (:func:`rlopt.risk.pair.measure`): ``risk, risk_upper,
        risk_status``.
        A row whose status is not ``optimal`` gives the interval
        ``[rate, bound_rate]`` of the worst case; a row whose solve failed has the
        status ``failed``, no figures and the reason in ``note`` (the other rows are kept).
    """
    return tradeoff_plan(
        original,
        method=method,
        values=values,
        families=families,
        columns=columns,
        margin=margin,
        time_limit=time_limit,
        threads=threads,
        seed=seed,
        n_jobs=n_jobs,
    )(progress, intervals)


def tradeoff_plan(
    original,
    *,
    method: str,
    values: Sequence[float],
    families: Sequence[str] = ("wm",),
    columns: Sequence[str] | None = None,
    margin: float = 1e-5,
    time_limit: float | None = 60.0,
    threads: int | None = 1,
    seed: int = 0,
    n_jobs: int = 1,
) -> Callable[..., pd.DataFrame]:
    """Check every option of :func:`tradeoff` and mask the file at every value now
    (seconds); the returned call, given optional ``progress`` and ``intervals`` callbacks (see
    :func:`tradeoff`), solves the
    MILPs. A bad value or family is thus an error before any solving."""
    registered = masking_method(method)
    check_linkable(registered.name)  # a fully synthetic file has no records to link
    if not values:
        raise InputError("trade-off values: expected at least one parameter value")
    frame = as_frame(original, name="original")
    _, cols = validate_table(frame, columns=columns, name="original")
    frame = frame[list(cols)]
    for family in families:
        try:
            get_learned_family(family).check_attributes(len(cols))
        except InputError as exc:
            raise InputError(f"trade-off family {family!r}: {exc}") from None
    options = SolverOptions(time_limit=time_limit, threads=threads)
    check_params({"n_jobs": n_jobs}, {"n_jobs": [JOBS]})
    parameter = registered.parameter
    specs = [(value, registered.spec_at(value, seed)) for value in values]  # every value checked first
    # partial synthesis replaces the attributes it is given: all of them here, as other methods mask
    synthesized = cols if registered.synthetic == "partial" else None
    masked_files = [(value, validate_pair(frame, spec.apply(frame, synthesized))) for value, spec in specs]

    def run(
        progress: Callable[[str], None] | None = None, intervals: Callable[[str, dict], None] | None = None
    ) -> pd.DataFrame:
        rows = []
        for value, data in masked_files:
            if progress:
                progress(f"{registered.name} {parameter}={value:g}")
            at = f"{parameter}={value:g}"
            narrowed = None if intervals is None else (lambda f, e, at=at: intervals(f"{f} at {at}", e))
            measured = measure(
                data,
                families,
                margin=margin,
                options=options,
                with_pld=False,
                seed=seed,
                jobs=n_jobs,
                intervals=narrowed,
            )
            rows += _rows(measured, parameter, value, information_loss(data))
        return pd.DataFrame(rows)

    return run


def _rows(measured: Measured, parameter: str, value: float, loss: dict) -> list[dict]:
    """One row per family of the file masked at ``value``: its interval, the default
    baseline's rate, the information loss and the file's worst case (the same on each
    of its rows); a failed family's row says why, with no figures."""
    worst, n = measured.worst, measured.data.n_records
    baseline = {BASELINE_RATE: measured.baselines[DEFAULT_BASELINE].rate, **loss}
    risk = {"risk": worst.n_correct / n, "risk_upper": worst.upper / n, "risk_status": str(worst.status)}
    rows = []
    for row in measured.families:
        failed = row.family in measured.failures
        rows.append(
            {"parameter": parameter, "value": value, "family": row.family, "rate": row.rate}
            | {"status": row.status, "bound_rate": row.bound_rate, **baseline}
            | (
                {"seconds": None, "note": measured.failures[row.family]}
                if failed
                else {"seconds": row.seconds}
            )
            | risk
        )
    return rows
