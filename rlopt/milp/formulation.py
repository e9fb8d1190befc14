"""The MILP of docs/method.md §3, built with Pyomo. Pure: data and a family in, a
``ConcreteModel`` out; no solving and no I/O.

    minimise    sum_i K_i
    subject to  d(a_i, b_j) - d(a_i, b_i) + C_ij K_i >= eps   for i != j
                K_i in {0, 1},  theta admissible for the family

``d(a_i, b_j) - d(a_i, b_i) = (phi_ij - phi_ii) . theta + (offset_ij - offset_ii)``
is linear in theta. ``C_ij = max_excess_ij + eps`` where ``max_excess_ij`` bounds
``d(a_i, b_i) - d(a_i, b_j)`` over every admissible theta, so ``K_i = 1`` switches
every row of record i off. A row whose ``C_ij <= 0`` holds for every admissible
theta and is left out (``drop_redundant``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from rlopt.data._standardise import DEFAULT_CHUNK_BYTES, attribute_deltas, chunk_rows, pairwise_deltas
from rlopt.families import LearnedFamily, LinearRows
from rlopt.validation import MARGIN, check

__all__ = [
    "LinkageRows",
    "linkage_rows",
    "largest_big_c",
    "dominated",
    "build_model",
    "ModelInfo",
    "add_family_rows",
]


@dataclass
class LinkageRows:
    """The linkage rows ``coefs[r] . theta + constants[r] + big_c[r] K[record[r]] >= margin``."""

    record: np.ndarray
    other: np.ndarray
    coefs: np.ndarray
    constants: np.ndarray
    big_c: np.ndarray
    n_pairs: int  # N (N - 1), before any row was left out

    def __len__(self) -> int:
        return self.record.size

    def subset(self, keep: np.ndarray) -> LinkageRows:
        return LinkageRows(
            self.record[keep],
            self.other[keep],
            self.coefs[keep],
            self.constants[keep],
            self.big_c[keep],
            self.n_pairs,
        )


def _record_chunks(za, records, width):
    step = max(1, chunk_rows(za.shape[0], width, max_bytes=DEFAULT_CHUNK_BYTES) // 2)
    for start in range(0, records.size, step):
        yield records[start : start + step]


def largest_big_c(za: np.ndarray, zb: np.ndarray, family: LearnedFamily, *, margin: float) -> float:
    """The largest valid ``C_ij`` over all pairs ``i != j``: the one constant of the naive model."""
    n_records, n_attributes = za.shape
    largest = -np.inf
    for chunk in _record_chunks(za, np.arange(n_records), n_attributes):
        delta = pairwise_deltas(za[chunk], zb)
        own = delta[np.arange(chunk.size), chunk][:, None, :]
        excess = family.max_excess(own, delta)
        excess[np.arange(chunk.size), chunk] = -np.inf
        largest = max(largest, float(excess.max()))
    return largest + margin


def linkage_rows(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    *,
    margin: float,
    big_c: str | float = "tight",
    drop_redundant: bool = True,
    pairs: np.ndarray | None = None,
    records: np.ndarray | None = None,
) -> LinkageRows:
    """The coefficients of the linkage rows, computed in numpy chunk by chunk.

    Parameters
    ----------
    big_c : "tight", "uniform" or float, default="tight"
        ``"tight"``: the per-row ``C_ij`` of the family. ``"uniform"``: one constant,
        the largest ``C_ij`` over all pairs (the naive model). A number: that
        constant for every row; a constant that is too small cuts off parameters
        and under-reports the risk.
    drop_redundant : bool, default=True
        Leave out the rows with tight ``C_ij <= 0`` (they hold for every admissible theta).
    pairs : ndarray of bool, shape (n_records, n_records), default=None
        Only the rows ``(i, j)`` with ``pairs[i, j]`` (lazy constraint generation).
    records : ndarray of int, default=None
        Only the rows of these records (default: every record).
    """
    n_records, n_attributes = za.shape
    p = family.n_params(n_attributes)
    if isinstance(big_c, str) and big_c == "uniform":
        big_c = largest_big_c(za, zb, family, margin=margin)
    records = np.arange(n_records) if records is None else np.asarray(records, dtype=int)
    parts: list[tuple] = [(np.zeros(0, int), np.zeros(0, int), np.zeros((0, p)), np.zeros(0), np.zeros(0))]
    if pairs is not None and _sparse(pairs, records):
        parts.extend(_paired_rows(za, zb, family, margin, big_c, drop_redundant, pairs, records))
        records = records[:0]  # every row is in the parts already
    for chunk in _record_chunks(za, records, max(n_attributes, p)):
        rows = np.arange(chunk.size)
        phi, offset = family.features(za[chunk], zb)
        coefs = phi - phi[rows, chunk][:, None, :]
        constants = offset - offset[rows, chunk][:, None]
        delta = pairwise_deltas(za[chunk], zb)
        tight = family.max_excess(delta[rows, chunk][:, None, :], delta) + margin
        c = tight if isinstance(big_c, str) else np.full(tight.shape, float(big_c))
        keep = np.ones(c.shape, dtype=bool)
        keep[rows, chunk] = False
        if drop_redundant:
            keep &= tight > 0
        if pairs is not None:
            keep &= pairs[chunk]
        r, j = np.nonzero(keep)
        parts.append((chunk[r], j, coefs[r, j], constants[r, j], c[r, j]))
    record, other, coefs, constants, c = (np.concatenate(x) for x in zip(*parts))
    return LinkageRows(record, other, coefs.reshape(-1, p), constants, c, n_records * (n_records - 1))


SPARSE_PAIRS_SHARE = 1 / 16
""":func:`linkage_rows` computes only the selected pairs, record by record, when
``pairs`` selects at most this share of the records' pairs (the lazy start and the
lazy rounds select a handful per record; the dense path computes all ``N`` pairs of
a record and then drops most of them)."""


def _sparse(pairs: np.ndarray, records: np.ndarray) -> bool:
    if not records.size:
        return False
    return int(np.count_nonzero(pairs[records])) <= SPARSE_PAIRS_SHARE * records.size * pairs.shape[1]


def _paired_rows(za, zb, family, margin, big_c, drop_redundant, pairs, records):
    """The rows of :func:`linkage_rows` for sparse ``pairs``: only the record's own
    pair and its selected ones go through ``features`` (record by record) and
    ``max_excess`` (all selected pairs at once). Both are computed pair by pair, so
    the values are the dense path's, bit for bit; the rows come in the same order
    (by record as given, then by original)."""
    for start in range(0, records.size, 64):
        chunk = records[start : start + 64]
        record, other, coefs, constants = [], [], [], []
        for i in chunk:
            others = np.flatnonzero(pairs[i])
            others = others[others != i]
            if not others.size:
                continue
            phi, offset = family.features(za[i : i + 1], zb[np.concatenate([[i], others])])
            record.append(np.full(others.size, i, dtype=int))
            other.append(others)
            coefs.append(phi[0, 1:] - phi[0, :1])  # the record's own original first
            constants.append(offset[0, 1:] - offset[0, :1])
        if not record:
            continue
        record, other = np.concatenate(record), np.concatenate(other)
        coefs, constants = np.concatenate(coefs), np.concatenate(constants)
        own = attribute_deltas(za[record], zb[record])[:, None, :]
        tight = family.max_excess(own, attribute_deltas(za[record], zb[other])[:, None, :])[:, 0] + margin
        c = tight if isinstance(big_c, str) else np.full(tight.shape, float(big_c))
        keep = tight > 0 if drop_redundant else np.ones(tight.shape, dtype=bool)
        yield record[keep], other[keep], coefs[keep], constants[keep], c[keep]


def dominated(rows: LinkageRows) -> np.ndarray:
    """Rows implied by another row of the same record, for a parameter ``theta >= 0``.

    Row ``r`` is implied by row ``s`` when ``coefs[s] <= coefs[r]`` and
    ``constants[s] <= constants[r]`` entrywise: then ``coefs[s] . theta + constants[s]
    <= coefs[r] . theta + constants[r]`` for every ``theta >= 0``, and ``K_i = 1``
    switches ``r`` off as well since its own ``C`` is valid. Of equal rows the first
    is kept. Only valid for families whose parameters are all ``>= 0``.
    """
    out = np.zeros(len(rows), dtype=bool)
    stacked = np.column_stack([rows.coefs, rows.constants])
    order = np.lexsort((stacked.sum(axis=1), rows.record))
    boundaries = np.flatnonzero(np.diff(rows.record[order])) + 1
    for group in np.split(order, boundaries):
        skyline = np.zeros((0, stacked.shape[1]))
        for r in group:  # a row can only be implied by one with a smaller or equal sum
            if skyline.shape[0] and (skyline <= stacked[r]).all(axis=1).any():
                out[r] = True
            else:
                skyline = np.vstack([skyline, stacked[r]])
    return out


@dataclass
class ModelInfo:
    """What the builder put in the model (for the result and for cutting planes)."""

    n_records: int
    n_params: int
    n_linkage_rows: int
    n_pairs: int
    n_family_rows: int
    big_c_max: float
    margin: float
    n_fixed: int = 0
    n_conflicts: int = 0
    n_cliques: int = 0

    def to_dict(self) -> dict:
        return {
            "n_records": self.n_records,
            "n_params": self.n_params,
            "n_linkage_rows": self.n_linkage_rows,
            "n_pairs": self.n_pairs,
            "n_family_rows": self.n_family_rows,
            "big_c_max": self.big_c_max,
            "n_fixed": self.n_fixed,
            "n_conflicts": self.n_conflicts,
            "n_cliques": self.n_cliques,
        }


# over 60 lines for its docstring only (every option of the public builder); the steps are below
# over 60 lines: its docstring documents every argument; the body builds the model in one pass
def build_model(
    za: np.ndarray,
    zb: np.ndarray,
    family: LearnedFamily,
    *,
    margin: float,
    columns: tuple[str, ...],
    big_c: str | float = "tight",
    drop_redundant: bool = True,
    drop_dominated: bool = False,
    pairs: np.ndarray | None = None,
    fixed: np.ndarray | None = None,
    conflicts: np.ndarray | None = None,
    cliques: list[np.ndarray] | None = None,
) -> tuple[pyo.ConcreteModel, ModelInfo]:
    """Build the MILP of docs/method.md §3 for ``family`` on standardised files.

    Parameters
    ----------
    za, zb : ndarray of shape (n_records, n_attributes)
        Standardised masked and original files, aligned by row.
    family : LearnedFamily
    margin : float
        ``eps >= 0``; 0 counts ties as correct (the upper end of the margin interval, docs/method.md §4).
    columns : tuple of str
        Attribute names (for readable variable names).
    big_c, drop_redundant, pairs
        See :func:`linkage_rows`.
    drop_dominated : bool, default=False
        Leave out rows implied by another row of the same record (:func:`dominated`;
        only for families whose parameters are all >= 0, ignored otherwise).
    fixed : ndarray of bool, shape (n_records,), default=None
        Records that no admissible parameter re-identifies: ``K_i`` is fixed to 1
        and their rows are left out.
    conflicts : ndarray of int, shape (m, 2), default=None
        Pairs of records no admissible parameter re-identifies together: the rows
        ``K_i + K_j >= 1`` (valid inequalities; the optimum is unchanged).
    cliques : list of ndarray of int, default=None
        Groups of records of which at most one can be re-identified (identical
        masked records, with ``margin > 0``): the rows ``sum_G K_i >= |G| - 1``.

    Returns
    -------
    model : ConcreteModel
        Variables ``theta`` (the family's parameter) and ``K`` (binary, one per
        record); constraints ``family_rows``, ``link``; an empty ``cuts`` list for
        cutting planes; objective ``min sum K``.
    info : ModelInfo
    """
    check("margin", margin, [MARGIN])
    n_records, n_attributes = za.shape
    fixed = np.zeros(n_records, dtype=bool) if fixed is None else np.asarray(fixed, dtype=bool)
    rows = linkage_rows(
        za,
        zb,
        family,
        margin=margin,
        big_c=big_c,
        drop_redundant=drop_redundant,
        pairs=pairs,
        records=np.flatnonzero(~fixed),
    )
    lower, upper = family.bounds(n_attributes)
    if drop_dominated and (lower >= 0).all():
        rows = rows.subset(~dominated(rows))
    family_rows = family.constraints(n_attributes)
    model, theta = _variables(family, n_attributes, n_records, lower, upper, fixed)
    add_family_rows(model, theta, family_rows)
    _add_linkage_rows(model, theta, rows, margin)
    conflicts = np.zeros((0, 2), dtype=int) if conflicts is None else np.asarray(conflicts, dtype=int)
    cliques = [] if cliques is None else [np.asarray(g, dtype=int) for g in cliques]
    _add_record_rows(model, conflicts, cliques)
    model.cuts = pyo.ConstraintList()
    model.objective = pyo.Objective(expr=pyo.quicksum(model.K[i] for i in model.K), sense=pyo.minimize)
    info = ModelInfo(
        n_records,
        family.n_params(n_attributes),
        len(rows),
        rows.n_pairs,
        len(family_rows),
        float(rows.big_c.max()) if len(rows) else 0.0,
        margin,
        n_fixed=int(fixed.sum()),
        n_conflicts=len(conflicts),
        n_cliques=len(cliques),
    )
    return model, info


def _variables(
    family: LearnedFamily,
    n_attributes: int,
    n_records: int,
    lower: np.ndarray,
    upper: np.ndarray,
    fixed: np.ndarray,
) -> tuple[pyo.ConcreteModel, list]:
    """The model with its variables: ``theta`` within ``[lower, upper]`` and one binary
    ``K`` per record, the ``fixed`` ones fixed to 1; also ``theta`` as a list."""
    model = pyo.ConcreteModel(name=f"rlopt_{family.name}")
    model.P = pyo.RangeSet(0, family.n_params(n_attributes) - 1)
    model.theta = pyo.Var(model.P, bounds=lambda m, t: (float(lower[t]), float(upper[t])))
    model.K = pyo.Var(pyo.RangeSet(0, n_records - 1), within=pyo.Binary)
    for i in np.flatnonzero(fixed):
        model.K[int(i)].fix(1)
    return model, [model.theta[t] for t in model.P]


def add_family_rows(model: pyo.ConcreteModel, theta: list, family_rows: LinearRows) -> None:
    """The family's admissible set ``lo <= A @ theta <= hi`` as the constraint ``family_constraints``."""
    matrix = family_rows.matrix()

    @model.Constraint(pyo.RangeSet(0, len(family_rows) - 1) if len(family_rows) else [])
    def family_constraints(m, r):
        nz = np.flatnonzero(matrix[r])
        expr = LinearExpression(
            constant=0.0, linear_coefs=[float(v) for v in matrix[r, nz]], linear_vars=[theta[t] for t in nz]
        )
        lo, hi = family_rows.lo[r], family_rows.hi[r]
        return (None if np.isinf(lo) else float(lo), expr, None if np.isinf(hi) else float(hi))


def _add_linkage_rows(model: pyo.ConcreteModel, theta: list, rows: LinkageRows, margin: float) -> None:
    """The linkage rows (:class:`LinkageRows`) as the constraint ``link``."""
    coefs, constants, big = rows.coefs, rows.constants, rows.big_c
    record = rows.record

    @model.Constraint(pyo.RangeSet(0, len(rows) - 1) if len(rows) else [])
    def link(m, r):
        nz = np.flatnonzero(coefs[r])
        expr = LinearExpression(
            constant=float(constants[r]),
            linear_coefs=[float(v) for v in coefs[r, nz]] + [float(big[r])],
            linear_vars=[theta[t] for t in nz] + [m.K[int(record[r])]],
        )
        return expr >= margin


def _add_record_rows(model: pyo.ConcreteModel, conflicts: np.ndarray, cliques: list[np.ndarray]) -> None:
    """The valid inequalities on ``K``: ``K_i + K_j >= 1`` for each conflict (constraint
    ``conflict``) and ``sum_G K_i >= |G| - 1`` for each clique (constraint ``clique``)."""

    @model.Constraint(pyo.RangeSet(0, len(conflicts) - 1) if len(conflicts) else [])
    def conflict(m, r):
        return m.K[int(conflicts[r, 0])] + m.K[int(conflicts[r, 1])] >= 1

    @model.Constraint(pyo.RangeSet(0, len(cliques) - 1) if cliques else [])
    def clique(m, r):
        return pyo.quicksum(m.K[int(i)] for i in cliques[r]) >= len(cliques[r]) - 1
