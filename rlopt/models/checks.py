"""Privacy-model checks of a released file (docs/method.md §6): k-anonymity,
p-sensitive k-anonymity, l-diversity, t-closeness and the differential-privacy
reading of t-closeness in the ratio distance.

An *equivalence class* is a group of records with identical quasi-identifier
values; NaN in a quasi-identifier is one more value (the check says so in its
note). Every check returns one :class:`ModelCheck`: the level the file achieves
(``value``) and, when a level is requested, whether it is satisfied.

The figures agree with pycanon 1.3.6 on the same definitions; it differs in
that it drops the records with NaN in a quasi-identifier, truncates entropy l
to an integer, ignores absent values in ``delta_disclosure``, uses the equal
distance for ordered categoricals, and reads the wrong rows of a frame whose
index is not ``0 .. n - 1`` in order. It is not used here: it loops over the
classes and values in Python (about 3 minutes for one numeric t-closeness on
``10^5`` records in ``10^4`` classes, against 0.02 s here) and pins exact
versions of numpy, pandas and scipy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from numbers import Integral, Real

import numpy as np

from rlopt.data._validate import as_frame
from rlopt.exceptions import InputError
from rlopt.models._tables import Classes, Context, ValueTable
from rlopt.validation import Interval, Options, validate_params

__all__ = [
    "ModelCheck",
    "k_anonymity",
    "p_sensitive_k_anonymity",
    "l_diversity",
    "t_closeness",
    "dp_ratio",
    "check_models",
]

_SINGLETONS = "every equivalence class has one record: a perturbative method without generalisation"
_CONSEQUENCE = {
    "k": "cannot be k-anonymous for k > 1",
    "l": "leaves one value per class and cannot be l-diverse (or p-sensitive) for l, p > 1",
    "t": "leaves one value per class: t-closeness compares single records with the whole file",
    "dp": "leaves classes that lack all but one value: the implied epsilon is infinite",
}
_TOLERANCE = 1e-12  # entropy l-diversity: entropy >= log(l) up to rounding


@dataclass(frozen=True)
class ModelCheck:
    """The outcome of one privacy-model check on a released file.

    Attributes
    ----------
    model : str
        ``"k-anonymity"``, ``"p-sensitive k-anonymity"``, ``"l-diversity (distinct)"``,
        ``"l-diversity (entropy)"``, ``"t-closeness"`` or ``"dp-ratio"``.
    parameter : dict
        The requested level, e.g. ``{"k": 3}``; ``{}`` when none was requested.
    satisfied : bool or None
        Whether the file satisfies the requested level; None when no level was
        requested (the check only measures). A model that the file cannot
        satisfy by construction (every class one record) is False with a note.
    value : float
        The level the file achieves: the largest k, the smallest l (or p), the
        largest t, the implied epsilon (``inf`` when unbounded).
    detail : dict
        Counts behind the value (classes, records failing the level, per-attribute values).
    note : str
        What limits the reading of the value (NaN in quasi-identifiers,
        one-record classes), or ``""``.
    """

    model: str
    parameter: dict
    satisfied: bool | None
    value: float
    detail: dict
    note: str = ""

    def to_dict(self) -> dict:
        """The check as plain Python values (keys ``model, parameter, satisfied, value, detail, note``)."""
        return asdict(self)


# ----------------------------------------------------------------------------- validation


def _columns(frame, columns, *, what: str, allow_empty: bool) -> list[str]:
    names = [columns] if isinstance(columns, str) else list(columns)
    available = [str(c) for c in frame.columns]
    if not names and not allow_empty:
        raise InputError(f"{what}: the list of columns is empty; expected at least one column")
    repeated = sorted({c for c in names if names.count(c) > 1})
    if repeated:
        raise InputError(f"{what}: column(s) {repeated} given more than once; expected each once")
    unknown = [c for c in names if c not in available]
    if unknown:
        raise InputError(f"{what}: unknown column(s) {unknown}; available: {available}")
    return names


def _context(frame, quasi_identifiers, confidential=(), *, need_confidential: bool) -> Context:
    """Validate the file and the two lists of columns; group the records into classes."""
    frame = as_frame(frame, name="frame")
    if len(frame) == 0:
        raise InputError("frame: 0 records; expected at least one record")
    qis = _columns(frame, quasi_identifiers, what="quasi_identifiers", allow_empty=False)
    conf = _columns(frame, confidential, what="confidential", allow_empty=not need_confidential)
    both = [c for c in conf if c in qis]
    if both:
        raise InputError(
            f"confidential attribute(s) {both} also among the quasi-identifiers {qis}; "
            "expected an attribute to be one or the other"
        )
    return Context(frame, qis, conf, Classes.of(frame, qis))


LEVELS = {
    "k": [Interval(Integral, 1, note="the smallest class size"), None],
    "p": [Interval(Integral, 1, note="distinct confidential values per class"), None],
    "l": [Interval(Real, 1, note="values per class"), None],
    "t": [Interval(Real, 0, 1, note="an earth mover's distance"), None],
    "epsilon": [Interval(Real, 0), None],
}
"""The levels a check takes, each optional (``None`` measures without checking)."""


def _levels(*names: str, required: bool = False) -> dict:
    """The constraints of ``names``; ``required``: without ``None``."""
    return {name: [c for c in LEVELS[name] if c is not None or not required] for name in names}


def _check_p(p: int, k: int | None) -> int:
    """``p`` beside ``k``: p-sensitivity needs both, and ``p <= k``."""
    if k is None:
        raise InputError(f"p={p!r} without k; expected k too (p-sensitive k-anonymity needs both)")
    if p > k:
        raise InputError(f"p={p!r} > k={k!r}; expected p <= k (a class of k records holds at most k values)")
    return int(p)


# ----------------------------------------------------------------------------- notes and counts


def _note(classes: Classes, consequence: str | None) -> str:
    parts = []
    if classes.nan_columns:
        parts.append(
            f"NaN in quasi-identifier(s) {list(classes.nan_columns)} ({classes.n_nan_records} "
            "record(s)) is treated as one more value"
        )
    if consequence is not None and classes.all_singletons:
        parts.append(f"{_SINGLETONS} {_CONSEQUENCE[consequence]}")
    return "; ".join(parts)


def _failing(classes: Classes, fails: np.ndarray | None, label: str) -> dict:
    """``{"classes_<label>": ..., "records_<label>": ...}`` for the classes in ``fails``."""
    if fails is None:
        return {}
    return {f"classes_{label}": int(fails.sum()), f"records_{label}": int(classes.sizes[fails].sum())}


def _base_detail(classes: Classes) -> dict:
    return {
        "n_records": classes.n_records,
        "n_classes": classes.n_classes,
        "smallest_class": int(classes.sizes.min()),
        "one_record_classes": int((classes.sizes == 1).sum()),
    }


# ----------------------------------------------------------------------------- the checks on a context


def _k_anonymity(ctx: Context, k: int | None) -> ModelCheck:
    classes = ctx.classes
    smallest = int(classes.sizes.min())
    fails = None if k is None else classes.sizes < k
    return ModelCheck(
        model="k-anonymity",
        parameter={} if k is None else {"k": k},
        satisfied=None if k is None else smallest >= k,
        value=smallest,
        detail=_base_detail(classes) | _failing(classes, fails, "below_k"),
        note=_note(classes, "k" if k is None or k > 1 else None),
    )


def _distinct(ctx: Context) -> tuple[np.ndarray, dict]:
    """Smallest number of distinct values over the confidential attributes, per class."""
    per_attribute = {c: ctx.table(c).distinct() for c in ctx.confidential}
    fewest = np.min(np.vstack(list(per_attribute.values())), axis=0)
    return fewest, {c: int(v.min()) for c, v in per_attribute.items()}


def _p_sensitive(ctx: Context, k: int, p: int) -> ModelCheck:
    classes = ctx.classes
    fewest, per_attribute = _distinct(ctx)
    value = int(fewest.min())
    smallest = int(classes.sizes.min())
    return ModelCheck(
        model="p-sensitive k-anonymity",
        parameter={"k": k, "p": p},
        satisfied=smallest >= k and value >= p,
        value=value,
        detail=_base_detail(classes)
        | _failing(classes, classes.sizes < k, "below_k")
        | _failing(classes, fewest < p, "below_p")
        | {"per_attribute": per_attribute},
        note=_note(classes, "k" if k > 1 else None),  # p <= k: k binds first
    )


def _l_diversity(ctx: Context, l: float | None, kind: str) -> ModelCheck:
    classes = ctx.classes
    if kind == "distinct":
        level, per_attribute = _distinct(ctx)
        value: float = int(level.min())
        fails = None if l is None else level < l
    else:
        entropies = {c: ctx.table(c).entropy() for c in ctx.confidential}
        level = np.min(np.vstack(list(entropies.values())), axis=0)
        per_attribute = {c: float(np.exp(h.min())) for c, h in entropies.items()}
        value = float(np.exp(level.min()))
        fails = None if l is None else level + _TOLERANCE < math.log(l)
    return ModelCheck(
        model=f"l-diversity ({kind})",
        parameter={} if l is None else {"l": l},
        satisfied=None if fails is None else not fails.any(),
        value=value,
        detail=_base_detail(classes) | _failing(classes, fails, "below_l") | {"per_attribute": per_attribute},
        note=_note(classes, "l" if l is None or l > 1 else None),
    )


def _emd(table: ValueTable, distance: str, column: str) -> np.ndarray:
    ordered = table.ordered if distance == "auto" else distance == "ordered"
    if not ordered:
        return table.equal_emd()
    if table.n_nan:
        raise InputError(
            f"t-closeness: confidential attribute {column!r} has {table.n_nan} NaN value(s); the "
            "ordered distance needs values that can be sorted. Drop them, or use distance='equal'"
        )
    return table.ordered_emd()


def _t_closeness(ctx: Context, t: float | None, distance: str) -> ModelCheck:
    classes = ctx.classes
    per_attribute, worst = {}, np.zeros(classes.n_classes)
    for column in ctx.confidential:
        table = ctx.table(column)
        emd = _emd(table, distance, column)
        ordered = table.ordered if distance == "auto" else distance == "ordered"
        per_attribute[column] = {
            "emd": float(emd.max()),
            "distance": "ordered" if ordered else "equal",
            "n_values": table.n_values,
        }
        worst = np.maximum(worst, emd)
    fails = None if t is None else worst > t
    return ModelCheck(
        model="t-closeness",
        parameter={} if t is None else {"t": t},
        satisfied=None if fails is None else not fails.any(),
        value=float(worst.max()),
        detail=_base_detail(classes) | _failing(classes, fails, "above_t") | {"per_attribute": per_attribute},
        note=_note(classes, "t"),
    )


def _dp_ratio(ctx: Context, epsilon: float | None) -> ModelCheck:
    classes = ctx.classes
    per_attribute, worst = {}, np.ones(classes.n_classes)
    for column in ctx.confidential:
        table = ctx.table(column)
        ratio = table.ratio()
        per_attribute[column] = {
            "ratio": float(ratio.max()),
            "epsilon": 2.0 * math.log(ratio.max()),
            "classes_missing_a_value": int((table.distinct() < table.n_values).sum()),
        }
        worst = np.maximum(worst, ratio)
    implied = 2.0 * np.log(worst)  # per class
    fails = None if epsilon is None else implied > epsilon * (1 + _TOLERANCE)
    return ModelCheck(
        model="dp-ratio",
        parameter={} if epsilon is None else {"epsilon": epsilon},
        satisfied=None if fails is None else not fails.any(),
        value=float(implied.max()),
        detail=_base_detail(classes)
        | {"ratio": float(worst.max())}
        | _failing(classes, fails, "above_epsilon")
        | {"per_attribute": per_attribute},
        note=_note(classes, "dp" if any(ctx.table(c).n_values > 1 for c in ctx.confidential) else None),
    )


# ----------------------------------------------------------------------------- public functions


@validate_params(_levels("k"))
def k_anonymity(frame, quasi_identifiers: str | Sequence[str], k: int | None = None) -> ModelCheck:
    """k-anonymity (Samarati and Sweeney 1998): every class has at least ``k`` records.

    Parameters
    ----------
    frame : DataFrame or array-like of shape (n_records, n_attributes)
        The released file (numeric, string or pandas categorical columns).
    quasi_identifiers : str or sequence of str
        The columns an intruder can link on; NaN in them is one more value.
    k : int, default=None
        The level to check (``k >= 1``); None measures only.

    Returns
    -------
    ModelCheck
        ``value`` is the smallest class size (the largest k the file satisfies);
        ``detail`` holds ``n_records, n_classes, smallest_class,
        one_record_classes`` and, with ``k``, ``classes_below_k, records_below_k``.

    Raises
    ------
    InputError
        An unknown column, an empty list of quasi-identifiers, ``k < 1``.
    """
    return _k_anonymity(_context(frame, quasi_identifiers, need_confidential=False), k)


@validate_params(_levels("k", "p", required=True))
def p_sensitive_k_anonymity(
    frame, quasi_identifiers: str | Sequence[str], confidential: str | Sequence[str], k: int, p: int
) -> ModelCheck:
    """p-sensitive k-anonymity (Truta and Vinterbo 2006).

    The file is k-anonymous and every class holds at least ``p`` distinct
    values of each confidential attribute.

    Parameters
    ----------
    frame : DataFrame or array-like of shape (n_records, n_attributes)
        The released file (numeric, string or pandas categorical columns).
    quasi_identifiers : str or sequence of str
        The columns an intruder can link on; NaN in them is one more value.
    confidential : str or sequence of str
        The confidential attributes (none of them a quasi-identifier).
    k, p : int
        The levels, ``1 <= p <= k``.

    Returns
    -------
    ModelCheck
        ``value`` is the smallest number of distinct values of a confidential
        attribute in a class; ``detail`` adds ``classes_below_k, records_below_k,
        classes_below_p, records_below_p`` and ``per_attribute``.
    """
    p = _check_p(p, k)
    ctx = _context(frame, quasi_identifiers, confidential, need_confidential=True)
    return _p_sensitive(ctx, k, p)


@validate_params(_levels("l") | {"kind": [Options(("distinct", "entropy"))]})
def l_diversity(
    frame,
    quasi_identifiers: str | Sequence[str],
    confidential: str | Sequence[str],
    l: float | None = None,
    kind: str = "distinct",
) -> ModelCheck:
    """l-diversity (Machanavajjhala et al. 2007), distinct or entropy.

    Parameters
    ----------
    frame : DataFrame or array-like of shape (n_records, n_attributes)
        The released file (numeric, string or pandas categorical columns).
    quasi_identifiers : str or sequence of str
        The columns an intruder can link on; NaN in them is one more value.
    confidential : str or sequence of str
        The confidential attributes (none of them a quasi-identifier); each is
        checked on the classes of the quasi-identifiers, the value is the worst.
    l : float, default=None
        The level to check (``l >= 1``); None measures only.
    kind : {"distinct", "entropy"}, default="distinct"
        ``"distinct"``: at least ``l`` distinct values in every class.
        ``"entropy"``: ``H(class) >= log(l)`` in every class, with ``H`` the
        entropy (natural logarithm) of the class's distribution of the values.

    Returns
    -------
    ModelCheck
        ``value``: the smallest number of distinct values in a class, or the
        smallest ``exp(H)`` over the classes (a real number: pycanon's
        ``entropy_l_diversity`` returns its integer part).
    """
    return _l_diversity(_context(frame, quasi_identifiers, confidential, need_confidential=True), l, kind)


@validate_params(_levels("t") | {"distance": [Options(("auto", "ordered", "equal"))]})
def t_closeness(
    frame,
    quasi_identifiers: str | Sequence[str],
    confidential: str | Sequence[str],
    t: float | None = None,
    *,
    distance: str = "auto",
) -> ModelCheck:
    """t-closeness (Li, Li and Venkatasubramanian 2007) with the earth mover's distance.

    Parameters
    ----------
    frame : DataFrame or array-like of shape (n_records, n_attributes)
        The released file (numeric, string or pandas categorical columns).
    quasi_identifiers : str or sequence of str
        The columns an intruder can link on; NaN in them is one more value.
    confidential : str or sequence of str
        The confidential attributes (none of them a quasi-identifier).
    t : float, default=None
        The level to check (``0 <= t <= 1``); None measures only.
    distance : {"auto", "ordered", "equal"}, default="auto"
        The ground distance. ``"auto"``: ordered for numbers and ordered
        categoricals, equal for the other columns.

    Returns
    -------
    ModelCheck
        ``value`` is the largest EMD between a class's distribution of a
        confidential attribute and the whole file's (the smallest t the file
        satisfies); ``detail["per_attribute"]`` gives each attribute's largest
        EMD, its distance and its number of distinct values.

    Notes
    -----
    Ordered distance, over the ``m`` distinct values of the file sorted, ground
    distance ``|i - j| / (m - 1)``:
    ``EMD(P, Q) = (1 / (m - 1)) * sum_i |sum_{j <= i} (p_j - q_j)|``.
    Values are ranked, not measured: two files with the same ranks have the
    same EMD whatever the gaps between the values. Equal distance (every two
    values at distance 1): ``EMD = 0.5 * sum_i |p_i - q_i|``, the total
    variation distance; for two values both distances give ``|p_1 - q_1|``.
    pycanon 1.3.6 (``t_closeness``) uses the same two formulas but chooses by
    dtype alone: ordered for every numeric dtype (booleans included), equal
    for strings and string categoricals (ordered ones too: here they are
    ordered), an error for other categoricals and for a constant attribute
    (``m = 1``, here 0).
    """
    ctx = _context(frame, quasi_identifiers, confidential, need_confidential=True)
    return _t_closeness(ctx, t, distance)


@validate_params(_levels("epsilon"))
def dp_ratio(
    frame,
    quasi_identifiers: str | Sequence[str],
    confidential: str | Sequence[str],
    *,
    epsilon: float | None = None,
) -> ModelCheck:
    """The epsilon of differential privacy that t-closeness in the ratio distance implies.

    The ratio distance between two distributions ``F1, F2`` of a confidential
    attribute is ``d(F1, F2) = max_i max(F1(x_i) / F2(x_i), F2(x_i) / F1(x_i))``
    over its values ``x_i``. If every class is within ``t = exp(epsilon / 2)``
    of the whole file in this distance, the view of a subject's confidential
    values that the file gives is epsilon-differentially private
    (Domingo-Ferrer and Soria-Comas 2015, stated in J. Domingo-Ferrer's talk
    "Données massives et modèles de vie privée", Paris 2018, slide
    "Differential privacy and t-closeness": transcript
    ``reference/talks/001_8820624d2c84e51d.txt`` of the shared folder). The file
    achieves ``t = max over classes and attributes of d(class, file)``, hence
    ``epsilon = 2 ln t``.

    Parameters
    ----------
    frame : DataFrame or array-like of shape (n_records, n_attributes)
        The released file (numeric, string or pandas categorical columns).
    quasi_identifiers : str or sequence of str
        The columns an intruder can link on; NaN in them is one more value.
    confidential : str or sequence of str
        The confidential attributes (none of them a quasi-identifier).
    epsilon : float, default=None
        The level to check (``epsilon >= 0``); None measures only.

    Returns
    -------
    ModelCheck
        ``value`` is the implied epsilon: 0 when every class has the file's
        distribution, ``inf`` when a class lacks a value that occurs in the file
        (the ratio ``F_file(x) / F_class(x)`` is unbounded). ``detail`` holds
        ``ratio`` (the t) and, per attribute, ``ratio, epsilon,
        classes_missing_a_value``.

    Notes
    -----
    pycanon's ``delta_disclosure`` is ``max |ln(q_x / p_x)|`` over the values
    *present* in each class: where no class lacks a value, ``epsilon = 2 delta``;
    where one does, delta stays finite and epsilon is infinite.
    """
    ctx = _context(frame, quasi_identifiers, confidential, need_confidential=True)
    return _dp_ratio(ctx, epsilon)


@validate_params(_levels("k", "p", "l", "t", "epsilon"))
def check_models(
    frame,
    quasi_identifiers: str | Sequence[str],
    confidential: str | Sequence[str] = (),
    *,
    k: int | None = None,
    p: int | None = None,
    l: float | None = None,
    t: float | None = None,
    epsilon: float | None = None,
) -> list[ModelCheck]:
    """Every applicable privacy-model check of a released file, in one pass.

    Parameters
    ----------
    frame : DataFrame or array-like of shape (n_records, n_attributes)
        The released file (numeric, string or pandas categorical columns).
    quasi_identifiers : str or sequence of str
        The columns an intruder can link on; NaN in them is one more value.
    confidential : str or sequence of str, default=()
        The confidential attributes; without them only k-anonymity applies.
    k, p, l, t, epsilon : default=None
        The levels to check (see the single checks); a level left None is
        measured, not checked. ``p`` needs ``k`` and ``confidential``.

    Returns
    -------
    list of ModelCheck
        k-anonymity; with ``p``, p-sensitive k-anonymity; with confidential
        attributes, l-diversity (distinct), l-diversity (entropy), t-closeness
        (automatic distance) and dp-ratio. The classes and the per-attribute
        counts are computed once.
    """
    p = None if p is None else _check_p(p, k)
    ctx = _context(frame, quasi_identifiers, confidential, need_confidential=p is not None)
    checks = [_k_anonymity(ctx, k)]
    if p is not None and k is not None:
        checks.append(_p_sensitive(ctx, k, p))
    if ctx.confidential:
        checks.append(_l_diversity(ctx, l, "distinct"))
        checks.append(_l_diversity(ctx, l, "entropy"))
        checks.append(_t_closeness(ctx, t, "auto"))
        checks.append(_dp_ratio(ctx, epsilon))
    return checks
