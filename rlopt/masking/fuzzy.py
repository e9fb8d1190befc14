"""Fuzzy microaggregation: fuzzy c-means centres, each record replaced by the centre of
a cluster drawn with its membership as probability (V. Torra, "Fuzzy microaggregation
for the transparency principle", Journal of Applied Logic 23, 2017, 70-80).

The fuzzy c-means is this module's own vectorised numpy code. The two maintained
packages were measured first (``python experiments/fuzzy_vs_mdav.py --bench-fcm``;
2-core AMD EPYC shared with other jobs, load about 2.8, one BLAS thread, m = 2,
300 iterations, the same initial memberships; figures in
``experiments/results/fuzzy_vs_mdav.md``) and not used:

- ``fuzzy-c-means`` 2.3.1 (``fcmeans``) is correct (its centres equal this code's
  at the same iteration to 3e-11; on EIA with c = 10 this code stops at iteration
  201 on its max-change rule, 1.7e-8 from theirs at 300) and as fast (Census 1080 x 13,
  c = 10 / 100 / 360: 0.10 / 0.35 / 1.14 s against this code's 0.10 / 0.31 /
  1.44 s; EIA 4092 x 10: 0.19 / 2.41 / 6.44 s against 0.20 / 2.23 / 6.77 s), but
  requires ``numpy<2`` and ``typer<0.10``: rlopt runs on numpy 2 (pandas 3 needs
  numpy >= 2.0.2) and ``typer>=0.12``, so it cannot be installed beside rlopt.
- ``scikit-fuzzy`` 0.5.0 (``skfuzzy.cluster.cmeans``) is correct (same centres)
  but 1.8-4.3 times slower (Census c = 360: 5.23 s, EIA c = 360: 20.14 s), seeds
  through the global ``np.random.seed`` unless given an initial matrix, and
  clips every distance to machine epsilon (a record on a centre gets a membership
  near, not equal to, 1).

Memberships are computed as ``w_ij / sum_r w_ir`` with weights that cannot overflow:
in log space (``log w_ij = -log d_ij^2 / (m - 1)`` minus its row maximum) for
:func:`memberships` and the attack, as ratios to the nearest centre
(``(min_r d_ir^2 / d_ij^2)^(1/(m-1))`` in [0, 1]) inside the FCM loop. Neither
``m`` near 1 (crisp: the nearest centre gets 1) nor a large ``m`` (near-uniform)
overflows, gives 0/0 or divides by zero; a record on a centre gets 1 there (split
equally over coincident centres) and 0 elsewhere.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real

import numpy as np
import pandas as pd

from rlopt.data._standardise import Standardisation, column_scale
from rlopt.data._validate import as_frame, validate_table
from rlopt.exceptions import InputError
from rlopt.masking._groups import attribute_groups
from rlopt.validation import Interval, validate_params

__all__ = [
    "fuzzy_c_means",
    "memberships",
    "fuzzy_microaggregate",
    "check_c",
    "FUZZINESS",
    "fit_scaling",
    "log_memberships",
    "squared_distances",
]

_CANCELLATION_RTOL = 1e-8
"""Below this share of ``|x_j|^2 + max_i |v_i|^2`` an expanded squared distance is
recomputed from the differences (cancellation could have eaten its digits)."""


def check_c(c, n_records: int) -> int:
    """``c`` as an int when it is a valid number of clusters for ``n_records``."""
    if isinstance(c, bool) or not isinstance(c, (int, np.integer)):
        raise InputError(f"fuzzy microaggregation c={c!r}; expected an integer with 1 <= c <= {n_records}")
    if not 1 <= c <= n_records:
        raise InputError(
            f"fuzzy microaggregation c={c} for {n_records} records; expected 1 <= c <= {n_records}"
        )
    return int(c)


FUZZINESS = Interval(Real, 1, closed="neither", note="a fuzziness exponent")


def _check_matrix(values, name: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise InputError(f"{name}: expected a 2-d array of numbers ({error})") from None
    if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 1:
        raise InputError(f"{name}: expected a non-empty 2-d array, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise InputError(f"{name}: expected finite numbers, got NaN or infinity")
    return array


def squared_distances(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``d[j, i] = ||x_j - v_i||^2`` for validated ``x`` (n, p) and ``v`` (c, p).

    Expanded as ``|x|^2 + |v|^2 - 2 x.v`` (one matrix product); entries small
    enough for that to lose precision to cancellation are recomputed from the
    differences, so a record equal to a centre gets exactly 0.
    """
    xx = np.einsum("ij,ij->i", x, x)[:, None]
    vv = np.einsum("ij,ij->i", v, v)[None, :]
    d2 = x @ v.T
    d2 *= -2.0
    d2 += xx
    d2 += vv
    np.maximum(d2, 0.0, out=d2)
    # a per-row bound (a superset of the entries at risk), compared in one pass
    suspect = d2 <= _CANCELLATION_RTOL * (xx + vv.max(initial=0.0))
    if suspect.any():
        rows, cols = np.nonzero(suspect)
        delta = x[rows] - v[cols]
        d2[rows, cols] = np.einsum("ij,ij->i", delta, delta)
    return d2


def log_memberships(d2: np.ndarray, m: float) -> np.ndarray:
    """``log u`` of the fuzzy c-means memberships for squared distances ``d2`` (n, c).

    ``u_ij = w_ij / sum_r w_ir`` with ``w_ij = d2_ij^(-1/(m-1))``, which is the
    usual ``(sum_r (d2_ij / d2_ir)^(1/(m-1)))^-1``. A row with zero distances
    puts ``log(1/z)`` on its ``z`` zero entries and ``-inf`` elsewhere.
    """
    with np.errstate(divide="ignore"):
        logw = -np.log(d2) / (m - 1.0)
    zero = d2 == 0.0
    on_centre = zero.any(axis=1)
    if on_centre.any():
        logw[on_centre] = np.where(zero[on_centre], 0.0, -np.inf)
    logw -= logw.max(axis=1, keepdims=True)
    return logw - np.log(np.exp(logw).sum(axis=1, keepdims=True))


@validate_params({"m2": [FUZZINESS]})
def memberships(values, centres, m2: float) -> np.ndarray:
    """Fuzzy c-means memberships of records to given centres.

    Parameters
    ----------
    values : array-like of shape (n_records, n_attributes)
        Records, in the scale the centres were computed in.
    centres : array-like of shape (c, n_attributes)
    m2 : float
        Fuzziness exponent, finite and > 1 (near 1: crisp; large: uniform).

    Returns
    -------
    ndarray of shape (n_records, c)
        Rows sum to 1.

    Notes
    -----
    ``u_ij = (sum_r (||x_j - v_i||^2 / ||x_j - v_r||^2)^(1/(m2-1)))^-1``; a
    record that coincides with centre(s) gets membership 1 split equally over
    them and 0 elsewhere (no division by zero, no NaN).
    """
    x = _check_matrix(values, "values")
    v = _check_matrix(centres, "centres")
    if x.shape[1] != v.shape[1]:
        raise InputError(
            f"centres have {v.shape[1]} attribute(s) and values {x.shape[1]}; expected the same number"
        )
    return np.exp(log_memberships(squared_distances(x, v), m2))


def _direct_memberships(d2: np.ndarray, m: float) -> np.ndarray:
    """The memberships of :func:`log_memberships` without logarithms (the FCM loop's
    fast path): ``w_ij = (min_r d2_ir / d2_ij)^(1/(m-1))`` lies in [0, 1] and is 1
    at the nearest centre, so neither overflows nor sums to 0."""
    nearest = d2.min(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = nearest / d2
    if m != 2.0:
        w **= 1.0 / (m - 1.0)
    on_centre = nearest[:, 0] == 0.0
    if on_centre.any():
        w[on_centre] = d2[on_centre] == 0.0
    w /= w.sum(axis=1, keepdims=True)
    return w


def _weighted_centres(x: np.ndarray, u: np.ndarray, m: float) -> np.ndarray:
    """FCM centres ``v_i = sum_j u_ij^m x_j / sum_j u_ij^m``; each cluster's weights are
    divided by their largest first, so that they cannot all underflow to 0. A cluster
    every record has membership 0 in (all on other centres) gets the grand mean."""
    peak = u.max(axis=0)
    empty = peak == 0.0
    weights = u * (1.0 / np.where(empty, 1.0, peak))
    weights[:, empty] = 1.0
    if m == 2.0:
        weights *= weights
    else:
        weights **= m
    return (weights.T @ x) / weights.sum(axis=0)[:, None]


def _fcm(x: np.ndarray, c: int, m: float, seed, max_iter: int, tol: float) -> tuple:
    """FCM on validated input: centres, memberships, iterations run."""
    rng = np.random.default_rng(seed)
    u = rng.random((x.shape[0], c))
    u /= u.sum(axis=1, keepdims=True)
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        u_new = _direct_memberships(squared_distances(x, _weighted_centres(x, u, m)), m)
        change = float(np.abs(u_new - u).max())
        u = u_new
        if change < tol:
            break
    centres = _weighted_centres(x, u, m)
    return centres, _direct_memberships(squared_distances(x, centres), m), n_iter


@validate_params({"m": [FUZZINESS]})
def fuzzy_c_means(values, c: int, m: float, *, seed=0, max_iter: int = 300, tol: float = 1e-9):
    """Fuzzy c-means clustering (Bezdek) of an already scaled matrix.

    Parameters
    ----------
    values : array-like of shape (n_records, n_attributes)
        Finite values; distances are Euclidean on them as given.
    c : int
        Number of clusters, ``1 <= c <= n_records``.
    m : float
        Fuzziness exponent, finite and > 1.
    seed : int or numpy.random.SeedSequence, default=0
        Seeds ``numpy.random.default_rng``, which draws the initial memberships
        (uniform, each row normalised to sum 1): the result is a function of
        ``seed``.
    max_iter : int, default=300
    tol : float, default=1e-9
        Stop when no membership changed by ``tol`` or more in an iteration.

    Returns
    -------
    centres : ndarray of shape (c, n_attributes)
    memberships : ndarray of shape (n_records, c)
        The memberships of every record to the returned centres.

    Notes
    -----
    Alternates ``v_i = sum_j u_ij^m x_j / sum_j u_ij^m`` and
    ``u_ij = (sum_r (d_ij / d_ir)^(2/(m-1)))^-1``, which decreases the objective
    ``J = sum_ij u_ij^m ||x_j - v_i||^2``.

    References
    ----------
    J. C. Bezdek, "Pattern Recognition with Fuzzy Objective Function
    Algorithms", Plenum, 1981.
    """
    x = _check_matrix(values, "values")
    c = check_c(c, x.shape[0])
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise InputError(f"fuzzy c-means max_iter={max_iter!r}; expected an integer >= 1")
    if not (isinstance(tol, (int, float)) and math.isfinite(tol) and tol >= 0):
        raise InputError(f"fuzzy c-means tol={tol!r}; expected a finite number >= 0")
    centres, u, _ = _fcm(x, c, m, seed, int(max_iter), float(tol))
    return centres, u


def fit_scaling(values: np.ndarray) -> Standardisation:
    """The z-score map of one attribute group (``ddof=1``, as MDAV's scaling); a
    constant column (or a single record) keeps ``sd = 1`` so its z-score is 0."""
    if values.shape[0] < 2:
        scale = column_scale(values)
        return Standardisation(scale, values[0] / scale, np.ones(values.shape[1]))
    fitted = Standardisation.fit(values)
    return Standardisation(fitted.scale, fitted.mean, np.where(fitted.sd > 0, fitted.sd, 1.0))


def _draw(u: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One cluster per record (in record order), cluster ``i`` with probability ``u[j, i]``:
    the first cluster whose cumulative membership exceeds one uniform draw."""
    cumulative = np.cumsum(u, axis=1)
    cumulative /= cumulative[:, -1:]
    draws = np.asarray(rng.random(u.shape[0]))[:, None]
    return np.minimum((cumulative <= draws).sum(axis=1), u.shape[1] - 1)


def _mask_group(values: np.ndarray, c: int, m1: float, m2: float, init_seed, rng) -> np.ndarray:
    """The fuzzy-microaggregated values of one attribute group (original units)."""
    scaling = fit_scaling(values)
    z = scaling.apply(values, name="input")
    centres, _, _ = _fcm(z, c, m1, init_seed, 300, 1e-9)
    u = np.exp(log_memberships(squared_distances(z, centres), m2))
    chosen = _draw(u, rng)
    return (centres[chosen] * scaling.sd + scaling.mean) * scaling.scale


@validate_params({"m1": [FUZZINESS], "m2": [FUZZINESS]})
def fuzzy_microaggregate(
    data,
    c: int | None = None,
    m1: float = 2.0,
    m2: float = 2.0,
    *,
    groups: Sequence[tuple[Sequence[str], int]] | None = None,
    seed: int = 0,
    columns: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Fuzzy microaggregation, each group of attributes on its own.

    Parameters
    ----------
    data : DataFrame or array-like of shape (n_records, n_attributes)
        Numeric attributes (array columns are named ``x0, x1, ...``).
    c : int, default=None
        Number of clusters when (all or ``columns``) attributes form one group;
        ``N // k`` gives clusters of ``k`` records on average.
    m1 : float, default=2.0
        Fuzziness of the fuzzy c-means that builds the centres (> 1).
    m2 : float, default=2.0
        Fuzziness of the memberships used to draw each record's centre (> 1;
        near 1 the nearest centre is drawn, as in crisp microaggregation).
    groups : list of (columns, c), default=None
        A partition of (some of) the attributes, each aggregated on its own with
        its own ``c``. Give ``c`` or ``groups``. Attributes in no group are kept.
    seed : int, default=0
        ``numpy.random.SeedSequence(seed).spawn(2)`` gives the seed of the
        initial memberships of every group's fuzzy c-means and the one generator
        of the draws (one uniform per record, groups in order, records in order).
    columns : list of str, default=None
        With ``c``: the attributes to aggregate (default: all).

    Returns
    -------
    DataFrame
        Same shape, index and columns as ``data``. Per group: z-scores of its
        columns (``ddof=1``, as MDAV's); fuzzy c-means with ``m1`` (at most 300
        iterations, tolerance 1e-9) gives the centres; each record's values are
        replaced by the centre (in original units) of a cluster drawn with
        probability its ``m2``-membership (Torra 2017, see the module docstring).
    """
    frame = as_frame(data, name="input")
    plan = attribute_groups(frame.columns, "c", c, groups, columns)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"fuzzy microaggregation seed={seed!r}; expected an integer >= 0")
    checked = []
    for group_columns, group_c in plan:
        values, cols = validate_table(frame, columns=group_columns, name="input")
        checked.append((values, cols, check_c(group_c, values.shape[0])))
    init_seed, draw_seed = np.random.SeedSequence(seed).spawn(2)
    rng = np.random.default_rng(draw_seed)
    result = frame.copy()
    for values, cols, group_c in checked:
        result[cols] = _mask_group(values, group_c, m1, m2, init_seed, rng)
    return result
