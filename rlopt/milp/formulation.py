"""The MILP of SPEC section 3, built with Pyomo. Pure: data and a family in, a
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

from dataclasses import dataclass, field

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from rlopt.data import DEFAULT_CHUNK_BYTES, chunk_rows
from rlopt.exceptions import InputError
from rlopt.families import LearnedFamily

__all__ = ["LinkageRows", "linkage_rows", "build_model", "ModelInfo"]


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


def linkage_rows(za: np.ndarray, zb: np.ndarray, family: LearnedFamily, *, margin: float,
                 big_c: str | float = "tight", drop_redundant: bool = True,
                 pairs: np.ndarray | None = None) -> LinkageRows:
    """The coefficients of every linkage row, computed in numpy chunk by chunk.

    Parameters
    ----------
    big_c : "tight" or float, default="tight"
        ``"tight"``: the per-row ``C_ij`` of the family. A number: that constant for
        every row, as a naive model writes it (no row is then left out); a constant
        that is too small cuts off parameters and under-reports the risk.
    drop_redundant : bool, default=True
        Leave out the rows with ``C_ij <= 0`` (they hold for every admissible theta).
    pairs : ndarray of bool, shape (n_records, n_records), default=None
        Only the rows ``(i, j)`` with ``pairs[i, j]`` (lazy constraint generation).
    """
    n_records, n = za.shape
    p = family.n_params(n)
    parts: list[tuple] = []
    step = max(1, chunk_rows(n_records, max(n, p), max_bytes=DEFAULT_CHUNK_BYTES) // 2)
    for start in range(0, n_records, step):
        stop = min(n_records, start + step)
        rows = np.arange(stop - start)
        phi, offset = family.features(za[start:stop], zb)
        own = rows + start
        coefs = phi - phi[rows, own][:, None, :]
        constants = offset - offset[rows, own][:, None]
        delta = za[start:stop, None, :] - zb[None, :, :]
        excess = family.max_excess(delta[rows, own][:, None, :], delta)
        if isinstance(big_c, str):
            c = excess + margin
        else:
            c = np.full(excess.shape, float(big_c))
        keep = np.ones(c.shape, dtype=bool)
        keep[rows, own] = False
        if drop_redundant and isinstance(big_c, str):
            keep &= c > 0
        if pairs is not None:
            keep &= pairs[start:stop]
        r, j = np.nonzero(keep)
        parts.append((r + start, j, coefs[r, j], constants[r, j], c[r, j]))
    record, other, coefs, constants, c = (np.concatenate(x) for x in zip(*parts))
    return LinkageRows(record, other, coefs.reshape(-1, p), constants, c, n_records * (n_records - 1))


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
    param_names: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"n_records": self.n_records, "n_params": self.n_params,
                "n_linkage_rows": self.n_linkage_rows, "n_pairs": self.n_pairs,
                "n_family_rows": self.n_family_rows, "big_c_max": self.big_c_max}


def build_model(za: np.ndarray, zb: np.ndarray, family: LearnedFamily, *, margin: float,
                columns: tuple[str, ...], big_c: str | float = "tight",
                drop_redundant: bool = True, pairs: np.ndarray | None = None
                ) -> tuple[pyo.ConcreteModel, ModelInfo]:
    """Build the MILP of SPEC section 3 for ``family`` on standardised files.

    Parameters
    ----------
    za, zb : ndarray of shape (n_records, n_attributes)
        Standardised masked and original files, aligned by row.
    family : LearnedFamily
    margin : float
        ``eps >= 0``; 0 counts ties as correct (the upper end of SPEC section 3's interval).
    columns : tuple of str
        Attribute names (for readable variable names).
    big_c, drop_redundant, pairs
        See :func:`linkage_rows`.

    Returns
    -------
    model : ConcreteModel
        Variables ``theta`` (the family's parameter) and ``K`` (binary, one per
        record); constraints ``family_rows``, ``link``; an empty ``cuts`` list for
        cutting planes; objective ``min sum K``.
    info : ModelInfo
    """
    if not margin >= 0:
        raise InputError(f"margin={margin!r}; expected a number >= 0")
    n_records, n = za.shape
    rows = linkage_rows(za, zb, family, margin=margin, big_c=big_c, drop_redundant=drop_redundant,
                        pairs=pairs)
    lower, upper = family.bounds(n)
    family_rows = family.constraints(n)

    model = pyo.ConcreteModel(name=f"rlopt_{family.name}")
    model.P = pyo.RangeSet(0, family.n_params(n) - 1)
    model.theta = pyo.Var(model.P, bounds=lambda m, t: (float(lower[t]), float(upper[t])))
    model.K = pyo.Var(pyo.RangeSet(0, n_records - 1), within=pyo.Binary)
    theta = [model.theta[t] for t in model.P]

    matrix = family_rows.matrix()

    @model.Constraint(pyo.RangeSet(0, len(family_rows) - 1) if len(family_rows) else [])
    def family_constraints(m, r):
        nz = np.flatnonzero(matrix[r])
        expr = LinearExpression(constant=0.0, linear_coefs=[float(v) for v in matrix[r, nz]],
                                linear_vars=[theta[t] for t in nz])
        lo, hi = family_rows.lo[r], family_rows.hi[r]
        return (None if np.isinf(lo) else float(lo), expr, None if np.isinf(hi) else float(hi))

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

    model.cuts = pyo.ConstraintList()
    model.objective = pyo.Objective(expr=pyo.quicksum(model.K[i] for i in model.K), sense=pyo.minimize)
    info = ModelInfo(n_records, family.n_params(n), len(rows), rows.n_pairs, len(family_rows),
                     float(big.max()) if len(rows) else 0.0, margin, family.param_names(columns))
    return model, info
