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
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from rlopt.exceptions import InputError

__all__ = [
    "Reductions",
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


@dataclass(frozen=True)
class Reductions:
    """Which exact reductions to apply (all on by default; :meth:`none` is the naive model)."""

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
    nca_start: bool = True
    surrogate: bool = True
    line_search: bool = True
    greedy_add: bool = True
    parameter_bb: bool = True
    quick_solve: bool = True

    def __post_init__(self):
        minimum = {"lazy_start": 0, "lazy_per_round": 1, "max_conflict_lps": 1}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in minimum:
                if isinstance(value, bool) or not isinstance(value, int) or value < minimum[f.name]:
                    raise InputError(f"{f.name}={value!r}; expected an integer >= {minimum[f.name]}")
            elif not isinstance(value, bool):
                raise InputError(f"reduction {f.name}={value!r}; expected true or false")

    @classmethod
    def none(cls) -> Reductions:
        return cls(
            drop_redundant=False,
            drop_dominated=False,
            fix_unreachable=False,
            conflicts=False,
            duplicate_cliques=False,
            lazy=False,
            warm_start=False,
            carry_rounds=False,
            nca_start=False,
            surrogate=False,
            line_search=False,
            greedy_add=False,
            parameter_bb=False,
            quick_solve=False,
        )

    @classmethod
    def coerce(cls, value) -> Reductions:
        """From ``None``/``"all"`` (every reduction), ``"none"``, a dict of switches, or an instance."""
        if value is None or value == "all":
            return cls()
        if value == "none":
            return cls.none()
        if isinstance(value, cls):
            return value
        if isinstance(value, dict):
            unknown = sorted(set(value) - {f.name for f in fields(cls)})
            if unknown:
                raise InputError(
                    f"unknown reduction(s) {unknown}; expected some of {[f.name for f in fields(cls)]}"
                )
            return cls(**value)
        raise InputError(f"reductions={value!r}; expected 'all', 'none' or a dict of switches")

    def to_dict(self) -> dict:
        return asdict(self)

    def without_searches(self) -> Reductions:
        """The same reductions with no incumbent search and no NCA start (a quick solve)."""
        return replace(
            self, nca_start=False, surrogate=False, line_search=False, greedy_add=False, quick_solve=False
        )

    def searches(self) -> tuple[str, ...]:
        """The incumbent searches switched on, in :data:`rlopt.milp.incumbents.portfolio.SEARCHES` order."""
        return tuple(name for name in ("surrogate", "line_search", "greedy_add") if getattr(self, name))
