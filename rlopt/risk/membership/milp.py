"""The MILP of a membership attack on a fully synthetic release (docs/method.md §9),
built with Pyomo and solved by HiGHS through :func:`~rlopt.milp.solvers.mip.solve_model`.

An intruder holds records, some of them in the generator's training file (members),
some not (held out), and the synthetic file. A record is called a member when its
nearest synthetic record under ``d_theta`` is within ``tau``. With ``n_m`` members and
``n_h`` held-out records, the attack's advantage is ``TPR - FPR``, and

    minimise    n_h sum_{r member} K_r + n_m sum_{q held out} K_q     (= n_m n_h (1 - advantage))
    subject to  sum_j z_rj >= 1 - K_r                                for each member r
                d_theta(r, s_j) - tau <= M_rj (1 - z_rj)             member r, witness j
                tau - d_theta(q, s_j) <= M_qj K_q                    held-out q, synthetic j
                z, K binary, theta admissible for the family, 0 <= tau <= tau_max

``K_r = 1`` for a member missed, ``K_q = 1`` for a held-out record called a member.
``d_theta(a, s) = phi(a, s) . theta`` is linear in ``theta`` (the families whose
admissible set is a simplex: wm, wm_m, owa). The held-out rows allow ``d = tau``
without calling the record a member, where the attack (``d <= tau``) would: the model
is a relaxation, its bound a valid ceiling; every parameter it returns is recounted
(:mod:`rlopt.risk.membership`) before its advantage is believed.

Exact reductions, none changing the optimum:

- ``tau_max = max_r min_j max_theta d(r, s_j)``: a larger threshold calls no more
  members and no fewer held-out records;
- a witness (member) or a row (held-out record) whose features are entrywise at least
  another's is implied by it for every ``theta >= 0`` (the skyline of
  :func:`rlopt.milp.formulation.dominated`);
- a witness that no admissible ``theta`` brings within ``tau_max`` is left out, as is a
  held-out row that holds for every admissible ``theta``; a held-out record with no
  row left can never be called a member, and has no ``K``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from rlopt.exceptions import InputError
from rlopt.families import LearnedFamily
from rlopt.milp.formulation import LinkageRows, add_family_rows, dominated

__all__ = ["MembershipModel", "membership_families", "build_membership_model"]


def membership_families() -> tuple[str, ...]:
    """The learned families the membership MILP takes: those whose admissible set is a
    simplex with ``theta >= 0`` (the features' extremes are at its vertices)."""
    from rlopt.families import get_learned_family, learned_families

    return tuple(
        name for name in learned_families() if get_learned_family(name).simplex_vertices(2) is not None
    )


@dataclass
class MembershipModel:
    """The built model and what the builder kept: the witnesses and held-out rows, and
    ``tau_max``."""

    model: pyo.ConcreteModel
    n_members: int
    n_holdout: int
    tau_max: float
    n_witnesses: int  # the member witnesses kept (binaries z)
    n_rows: int  # the held-out rows kept
    separation: float = 0.0  # how far beyond tau an uncalled held-out record is kept (0: the relaxation)


def _skyline(phi: np.ndarray) -> np.ndarray:
    """The rows of one record's ``phi`` (synthetic records x parameters) no other row
    is entrywise below (of equal rows the first): :func:`dominated`'s rule."""
    n = phi.shape[0]
    rows = LinkageRows(
        record=np.zeros(n, dtype=int),
        other=np.arange(n),
        coefs=phi,
        constants=np.zeros(n),
        big_c=np.zeros(n),
        n_pairs=n,
    )
    return np.flatnonzero(~dominated(rows))


def _kept(phi_m, phi_h, at_m, at_h, tau_max: float, separation: float) -> tuple[list, list]:
    """``(witnesses, rows)``: per member, the synthetic records that may be its witness
    (within ``tau_max`` for some parameter, on the skyline); per held-out record with any,
    the synthetic records whose row some parameter violates (on the skyline)."""
    witness_rows, row_rows = [], []
    for r in range(phi_m.shape[0]):
        near = np.flatnonzero(at_m[r].min(axis=1) <= tau_max)
        witness_rows.append((r, near[_skyline(phi_m[r, near])]))
    for q in range(phi_h.shape[0]):
        binding = np.flatnonzero(at_h[q].min(axis=1) < tau_max + separation)
        if binding.size:
            row_rows.append((q, binding[_skyline(phi_h[q, binding])]))
    return witness_rows, row_rows


def _add_rows(
    model, theta: list, witness_rows: list, row_rows: list, arrays: tuple, tau_max: float, separation: float
) -> None:
    """The rows of the members (``witness``: some witness is near; ``near``: a witness
    chosen is within ``tau``) and of the held-out records (``far``: every synthetic record
    at least ``tau + separation`` away, or ``K = 1``)."""
    phi_m, phi_h, at_m, at_h = arrays
    model.witness = pyo.ConstraintList()
    model.near = pyo.ConstraintList()
    model.far = pyo.ConstraintList()
    for slot, (r, kept) in enumerate(witness_rows):
        model.witness.add(pyo.quicksum(model.z[r, int(j)] for j in kept) + model.K[slot] >= 1)
        for j in kept:
            big = float(at_m[r, j].max())
            # phi . theta - tau + M z <= M
            model.near.add(
                LinearExpression(
                    constant=0.0,
                    linear_coefs=[float(v) for v in phi_m[r, j]] + [-1.0, big],
                    linear_vars=theta + [model.tau, model.z[r, int(j)]],
                )
                <= big
            )
    for offset, (q, kept) in enumerate(row_rows):
        slot = len(witness_rows) + offset
        for j in kept:
            big = tau_max + separation - float(at_h[q, j].min())
            # phi . theta - tau + M K >= separation
            model.far.add(
                LinearExpression(
                    constant=0.0,
                    linear_coefs=[float(v) for v in phi_h[q, j]] + [-1.0, big],
                    linear_vars=theta + [model.tau, model.K[slot]],
                )
                >= separation
            )


def _features(family: LearnedFamily, members, holdout, synthetic) -> tuple:
    """``(phi_m, phi_h, at_m, at_h)``: the features of each (record, synthetic record)
    pair, and their distances at the simplex's vertices (``(records, synthetic,
    vertices)``), which bound the distance over every admissible ``theta`` (linear in it)."""
    vertices = family.simplex_vertices(members.shape[1])
    if vertices is None:
        raise InputError(
            f"family {family.name!r}: the membership MILP takes {', '.join(membership_families())}"
        )
    family.check_attributes(members.shape[1])
    phi_m, _ = family.features(members, synthetic)
    phi_h, _ = family.features(holdout, synthetic)
    return phi_m, phi_h, phi_m @ vertices.T, phi_h @ vertices.T


def _parameter(model, family: LearnedFamily, n_attributes: int) -> list:
    """``model.theta`` within the family's bounds and rows; its variables in order."""
    model.P = pyo.RangeSet(0, family.n_params(n_attributes) - 1)
    lower, upper = family.bounds(n_attributes)
    model.theta = pyo.Var(model.P, bounds=lambda m, t: (float(lower[t]), float(upper[t])))
    theta = [model.theta[t] for t in model.P]
    add_family_rows(model, theta, family.constraints(n_attributes))
    return theta


def build_membership_model(
    family: LearnedFamily,
    members: np.ndarray,
    holdout: np.ndarray,
    synthetic: np.ndarray,
    *,
    objective_at_most: int | None = None,
    separation: float = 0.0,
) -> MembershipModel:
    """The membership MILP of ``family`` on standardised records.

    Parameters
    ----------
    members, holdout, synthetic : ndarray of shape (n_records, n_attributes)
        z-scores of the three files, in one standardisation.
    objective_at_most : int, optional
        The objective of a parameter already verified (``n_m n_h`` less its advantage
        in units): a row ``objective <= objective_at_most``, exact since the recounted
        attack is feasible in the model.
    separation : float, default=0.0
        How much farther than ``tau`` a held-out record left uncalled must be, as a share
        of ``max(1, tau_max)``. At 0 the model is the relaxation whose bound is a ceiling;
        above 0 it is a restriction: every solution is an attack that leaves those records
        uncalled by that much (a lower end once recounted, never a ceiling).
    """
    phi_m, phi_h, at_m, at_h = _features(family, members, holdout, synthetic)
    tau_max = float(at_m.max(axis=2).min(axis=1).max())
    separation *= max(1.0, tau_max)
    n_m, n_h = members.shape[0], holdout.shape[0]
    model = pyo.ConcreteModel(name=f"rlopt_membership_{family.name}")
    theta = _parameter(model, family, members.shape[1])
    model.tau = pyo.Var(bounds=(0.0, tau_max))
    model.cuts = pyo.ConstraintList()

    witness_rows, row_rows = _kept(phi_m, phi_h, at_m, at_h, tau_max, separation)
    k_member = [r for r, _ in witness_rows]
    k_holdout = [q for q, _ in row_rows]
    n_k = len(k_member) + len(k_holdout)
    model.K = pyo.Var(pyo.RangeSet(0, n_k - 1), within=pyo.Binary)
    weights = [float(n_h)] * len(k_member) + [float(n_m)] * len(k_holdout)
    model.W = pyo.Set(initialize=[(r, int(j)) for r, kept in witness_rows for j in kept], dimen=2)
    model.z = pyo.Var(model.W, within=pyo.Binary)
    _add_rows(model, theta, witness_rows, row_rows, (phi_m, phi_h, at_m, at_h), tau_max, separation)
    objective = pyo.quicksum(w * model.K[i] for i, w in enumerate(weights))
    model.objective = pyo.Objective(expr=objective, sense=pyo.minimize)
    if objective_at_most is not None:
        model.cuts.add(objective <= objective_at_most)
    kept = {"n_witnesses": len(model.W), "n_rows": len(model.far)}
    return MembershipModel(model, n_m, n_h, tau_max, **kept, separation=separation)
