"""Exact reductions of the MILP: each one switchable, none changes the optimum.

Modules: :mod:`~rlopt.milp.reductions.witnesses` (separations, witness hits),
:mod:`~rlopt.milp.reductions.screening` (records no parameter re-identifies, the MIP start
of the screening LPs), :mod:`~rlopt.milp.reductions.conflicts` (pairs no parameter
re-identifies together), :mod:`~rlopt.milp.reductions.lazy` (lazy linkage rows, cliques of
duplicates, a start from a parameter). The names below load when first used.


- ``tight big-C``: the per-row ``C_ij`` of the family (:func:`~rlopt.milp.linkage_rows`);
  the naive model uses one constant, the largest ``C_ij``.
- ``drop_redundant``: rows with ``C_ij <= 0`` hold for every admissible parameter.
- ``drop_dominated``: rows implied by another row of the same record
  (:func:`~rlopt.milp.formulation.dominated`, families with parameters >= 0).
- ``fix_unreachable``: :func:`screen_records` solves, for every record that a
  known parameter does not already re-identify, the LP ``max_theta min_j
  d(a_i,b_j) - d(a_i,b_i)``; a record whose best separation is below the margin
  cannot be re-identified by any admissible parameter and gets ``K_i = 1``.
  The same LPs tell which records are at risk at all, a bound on the optimum
  that does not depend on which optimum the solver returns.
- ``conflicts``: pairs of records that no admissible parameter re-identifies
  together (:func:`find_conflicts`) give ``K_i + K_j >= 1``, valid inequalities
  that raise the LP bound the solver has to close.
- ``lazy``: start from the ``lazy_start`` nearest originals of each record; after
  each solve, check every pair of every counted record and add the violated rows
  (:class:`LazyLinkageRows`); when none is violated the optimum is the full one's.
- ``warm_start``: a MIP start for HiGHS: at the first solve the best of the
  neutral parameter (all attributes alike, the AM ordering) and the screening's
  LP optima (:func:`best_start`), the previous parameter after.
- ``carry_rounds``: between lazy rounds, the proven optimum of a round is a lower
  bound of the next (rounds only add rows) and enters it as ``sum K >= bound``; the
  next start re-identifies the records the round counted against every original
  when some parameter does (:meth:`LazyLinkageRows.complete`), and is then proven
  optimal at once instead of the round being solved again from scratch.
The searches are not reductions (they change where the solver starts or when it stops,
never the model): their switches are :class:`Searches`, validated like these.

- ``nca_start``: the matrix scikit-learn's NCA learns, projected into the family, is
  one more start (:func:`rlopt.milp.incumbents.portfolio.quadratic_starts`; MD's always is).
- ``surrogate``, ``line_search``, ``greedy_add``: before the solve, searches for a
  better parameter from the best start (:mod:`rlopt.milp.incumbents.portfolio`, at most a
  share of the time limit); an admissible parameter that re-identifies more
  becomes the start and a lower end. They change where the solver starts, never
  the model.

Screening and conflict LPs may stop at a deadline (a share of the time limit):
stopping them early is exact, it only leaves records unscreened and pairs unchecked.

Speed without changing a result (issue 15): the witnesses of the conflict search and
of the best start are evaluated on all records by :func:`witness_hits` (one matrix
product per block for wm and sb instead of the reference evaluator per parameter,
with the reference deciding every record near the threshold), and the conflict LPs
of :func:`find_conflicts` go through :class:`_PairLP` (a pair that a known
admissible parameter re-identifies needs no LP; the others share one HiGHS LP). The
screening LPs generate their rows (:class:`_RecordLP`): each record's LP starts from its
rows tightest at the known parameter and adds the rows its optimum violates, in one
HiGHS LP re-used from record to record; a relaxation below the margin proves a record
unreachable, a parameter that meets every row at the margin proves it at risk, the same
decisions as the LP over all rows (10 times faster on the Census and EIA files).
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import asdict, dataclass, replace
from numbers import Integral
from typing import Any, ClassVar

from rlopt.exceptions import InputError
from rlopt.validation import Interval, Options, check_params

__all__ = [
    "Reductions",
    "Searches",
    "options_of",
    "Screening",
    "screen_records",
    "best_start",
    "find_conflicts",
    "LazyLinkageRows",
    "duplicate_groups",
    "nearest_pairs",
    "start_from",
    "separation",
    "witness_hits",
    "SCREEN_TOL",
]

_LAZY = {
    "Screening": "screening",
    "screen_records": "screening",
    "best_start": "screening",
    "find_conflicts": "conflicts",
    "LazyLinkageRows": "lazy",
    "duplicate_groups": "lazy",
    "nearest_pairs": "lazy",
    "start_from": "lazy",
    "separation": "witnesses",
    "witness_hits": "witnesses",
    "slack_blocks": "witnesses",
    "SCREEN_TOL": "witnesses",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"rlopt.milp.reductions.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SWITCH = Options((True, False))


@dataclass(frozen=True)
class Reductions:
    """Which exact reductions to apply (all on by default; :meth:`none` is the naive
    model). Each one leaves the optimum as it is; the switches that only change where
    the solver starts or when it stops are :class:`Searches`."""

    drop_redundant: bool = True
    drop_dominated: bool = True
    fix_unreachable: bool = True
    conflicts: bool = True
    max_conflict_lps: int = 20000
    duplicate_cliques: bool = True
    lazy: bool = True
    lazy_start: int = 1
    lazy_per_round: int = 2
    warm_start: bool = True
    carry_rounds: bool = True

    _parameter_constraints: ClassVar[dict] = {
        "drop_redundant": [SWITCH],
        "drop_dominated": [SWITCH],
        "fix_unreachable": [SWITCH],
        "conflicts": [SWITCH],
        "max_conflict_lps": [Interval(Integral, 1)],
        "duplicate_cliques": [SWITCH],
        "lazy": [SWITCH],
        "lazy_start": [Interval(Integral, 0)],
        "lazy_per_round": [Interval(Integral, 1)],
        "warm_start": [SWITCH],
        "carry_rounds": [SWITCH],
    }

    def __post_init__(self):
        check_params(vars(self), self._parameter_constraints)

    @classmethod
    def none(cls) -> Reductions:
        """No reduction (the integers at their defaults): with ``big_c="uniform"`` the naive model."""
        return cls(
            **{name: False for name, allowed in cls._parameter_constraints.items() if allowed == [SWITCH]}
        )

    @classmethod
    def coerce(cls, value) -> Reductions:
        """From ``None``/``"all"`` (every reduction), ``"none"``, a dict of switches, or an
        instance (a dict's switches of :class:`Searches`: see :func:`options_of`)."""
        return options_of(value)[0]

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Searches:
    """What a run does besides the exact model to find a better lower end, or to stop
    sooner; none changes the model or the optimum (all on by default).

    ``nca_start``: the matrix scikit-learn's NCA learns, projected into the family, is one
    more start; ``surrogate``, ``line_search``, ``greedy_add``: searches for a better
    parameter before the solve (:mod:`rlopt.milp.incumbents.portfolio`); ``parameter_bb``:
    the parameter-space branch and bound beside the solve (:mod:`rlopt.milp.ceilings.regions`);
    ``quick_solve``: a short solve from the known starts before the searches."""

    nca_start: bool = True
    surrogate: bool = True
    line_search: bool = True
    greedy_add: bool = True
    parameter_bb: bool = True
    quick_solve: bool = True

    _parameter_constraints: ClassVar[dict] = {
        "nca_start": [SWITCH],
        "surrogate": [SWITCH],
        "line_search": [SWITCH],
        "greedy_add": [SWITCH],
        "parameter_bb": [SWITCH],
        "quick_solve": [SWITCH],
    }

    def __post_init__(self):
        check_params(vars(self), self._parameter_constraints)

    @classmethod
    def none(cls) -> Searches:
        return cls(**dict.fromkeys(cls._parameter_constraints, False))

    @classmethod
    def coerce(cls, value) -> Searches:
        """From ``None``/``"all"``, ``"none"``, a dict of switches, or an instance."""
        if value is None or value == "all":
            return cls()
        if value == "none":
            return cls.none()
        if isinstance(value, cls):
            return value
        if isinstance(value, dict):
            unknown = sorted(set(value) - set(cls._parameter_constraints))
            if unknown:
                raise InputError(
                    f"unknown search(es) {unknown}; expected some of {list(cls._parameter_constraints)}"
                )
            return cls(**value)
        raise InputError(f"searches={value!r}; expected 'all', 'none' or a dict of switches")

    def to_dict(self) -> dict:
        return asdict(self)

    def quick(self) -> Searches:
        """The same with no incumbent search, no NCA start and no quick solve (a quick pass's)."""
        return replace(
            self, nca_start=False, surrogate=False, line_search=False, greedy_add=False, quick_solve=False
        )

    def names(self) -> tuple[str, ...]:
        """The incumbent searches switched on, in :data:`rlopt.milp.incumbents.portfolio.SEARCHES` order."""
        return tuple(name for name in ("surrogate", "line_search", "greedy_add") if getattr(self, name))


def options_of(reductions=None, searches=None) -> tuple[Reductions, Searches]:
    """``(Reductions, Searches)`` from what ``learn`` and the estimator take: each
    ``None``/``"all"``, ``"none"``, a dict of switches or an instance. ``reductions="none"``
    is the naive model: no search either, unless ``searches`` says otherwise. For one
    release a ``reductions`` dict may still hold the switches of :class:`Searches` (its
    keys before they were split off), with a FutureWarning."""
    old = {}
    if isinstance(reductions, dict):
        known = set(Reductions._parameter_constraints) | set(Searches._parameter_constraints)
        unknown = sorted(set(reductions) - known)
        if unknown:
            raise InputError(f"unknown reduction(s) {unknown}; expected some of {sorted(known)}")
        old = {k: v for k, v in reductions.items() if k in Searches._parameter_constraints}
        if old:
            warnings.warn(
                f"reductions={{{', '.join(map(repr, old))}: ...}}: these switches are searches, not "
                "reductions; pass them as searches= (reductions= takes them until the next release)",
                FutureWarning,
                stacklevel=3,
            )
        reductions = Reductions(**{k: v for k, v in reductions.items() if k not in old})
    if reductions is None or reductions == "all":
        reductions = Reductions()
    elif reductions == "none":
        reductions, searches = Reductions.none(), "none" if searches is None else searches
    elif not isinstance(reductions, Reductions):
        raise InputError(f"reductions={reductions!r}; expected 'all', 'none' or a dict of switches")
    chosen = Searches.coerce(searches)
    return reductions, replace(chosen, **old) if old else chosen
