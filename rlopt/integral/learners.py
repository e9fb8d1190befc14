"""What a published model is, for integral privacy: a learning algorithm ``A`` that is
applied to a database (a frame of records) and a *key* of its result that two models
share exactly when they are published alike. Parameters are compared rounded to
``precision`` decimals: two models are equal when their rounded parameters are equal
(``precision=None``: exactly equal floats), so ``precision`` is the resolution at which
the intruder reads the published numbers.

Each learner is a small frozen dataclass (picklable: worker processes and Dask train
with it): :class:`Mean`, :class:`DecisionTree`, :class:`LinearRegression`,
:class:`LogisticRegression`, and :class:`Estimator` for any scikit-learn estimator with
a key function (both module-level functions, for the workers). A learner also gives
the model as published (``published``: its parameters rounded as its key reads them)
and a key in words (``describe``). A database is read by :func:`rows`, in the data's
order; :func:`named_learner` builds the learner a command names."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from rlopt.exceptions import InputError

__all__ = [
    "DecisionTree",
    "Estimator",
    "Learner",
    "LinearRegression",
    "LogisticRegression",
    "Masked",
    "Mean",
    "decision_tree",
    "estimator",
    "linear_regression",
    "logistic_regression",
    "masked",
    "mean",
    "MODELS",
    "named_learner",
    "check_records",
    "rows",
]


def rows(data: pd.DataFrame, database: Iterable[Hashable]) -> pd.DataFrame:
    """The records of ``data`` labelled in ``database``, in ``data``'s order: never in a
    set's iteration order, which changes between processes (string hashes are salted,
    and a pickled set may iterate otherwise), so that a learner that depends on the
    records' order (a masking method first) gives the same model in every worker."""
    return data[data.index.isin(list(database))]


MAX_PRECISION = 15
"""The most decimals a parameter is read to (a double holds about 16 significant digits)."""


def _check_precision(precision: int | None) -> None:
    if precision is None:
        return
    if isinstance(precision, bool) or not isinstance(precision, int) or not 0 <= precision <= MAX_PRECISION:
        raise InputError(
            f"precision={precision!r}; expected a number of decimals from 0 to {MAX_PRECISION} (or None: exact)"
        )


def _number(value: float, precision: int | None) -> str:
    """``value`` as the intruder reads it: to ``precision`` decimals, trailing zeros
    dropped (``None``: every digit of the float)."""
    if precision is None:
        return repr(float(value))
    text = f"{value:.{precision}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _rounded(values, precision: int | None) -> tuple:
    array = np.asarray(values, dtype=float).ravel()
    rounded = array if precision is None else np.round(array, precision)
    return tuple((rounded + 0.0).tolist())  # -0.0 reads as 0.0


def _right_child(left: Sequence[int], i: int) -> int:
    """The right child of node ``i`` in scikit-learn's depth-first numbering: the node
    after the left child's whole subtree."""

    def size(j: int) -> int:
        return 1 if left[j] == -1 else 1 + size(left[j]) + size(_right_child(left, j))

    return left[i] + size(left[i])


class Learner:
    """``fit(records) -> model`` and ``key(model) -> hashable``; called on a database, the
    key of its model (``None`` for a database without records)."""

    name: str = "a model"

    def fit(self, records: pd.DataFrame) -> Any:
        raise NotImplementedError

    def key(self, model: Any) -> Hashable:
        raise NotImplementedError

    def describe(self, key: Hashable) -> str:
        """The published model a key stands for, in words."""
        return str(key)

    def published(self, model: Any) -> Any:
        """``model`` as it is published: its parameters rounded as the key reads them,
        so that every database of one key publishes the same model (scored as such)."""
        return model

    def __call__(self, records: pd.DataFrame) -> Hashable:
        """The key of the model learned on ``records`` (an InputError when it fails)."""
        if records.empty:
            return None
        try:
            model = self.fit(records)
        except Exception as exc:  # the estimator's own failure on this database
            shown = list(records.index)[:10]
            raise InputError(
                f"{self.name} failed on a database of {len(records)} records "
                f"(records {shown}{'...' if len(records) > 10 else ''}): {exc}"
            ) from exc
        key = self.key(model)
        try:
            hash(key)
        except TypeError:
            raise InputError(
                f"the key of {self.name}'s model is a {type(key).__name__}, not hashable; expected a "
                "tuple, number or string (e.g. tuple(np.round(coef, 3)))"
            ) from None
        return key


@dataclass(frozen=True)
class Mean(Learner):
    """The mean of ``columns``."""

    columns: tuple[str, ...]
    precision: int | None = None

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"the mean of {', '.join(self.columns)}"

    def fit(self, records: pd.DataFrame) -> Any:
        return records[list(self.columns)].to_numpy(float).mean(axis=0)

    def key(self, model: Any) -> Hashable:
        return _rounded(model, self.precision)

    def describe(self, key: Hashable) -> str:
        if key is None:
            return "no model (no records)"
        values = cast(tuple[float, ...], key)
        shown = (_number(v, self.precision) for v in values)
        return ", ".join(f"mean {c} = {v}" for c, v in zip(self.columns, shown, strict=True))


@dataclass(frozen=True)
class DecisionTree(Learner):
    """scikit-learn's decision tree classifier (fixed ``seed``); its key is its
    structure: each node's feature and threshold (rounded) and each leaf's class."""

    target: str
    features: tuple[str, ...]
    max_depth: int | None = 3
    seed: int = 0
    precision: int | None = 3

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"a decision tree of {self.target}"

    def fit(self, records: pd.DataFrame) -> Any:
        from sklearn.tree import DecisionTreeClassifier

        tree = DecisionTreeClassifier(max_depth=self.max_depth, random_state=self.seed)
        return tree.fit(records[list(self.features)].to_numpy(float), records[self.target].to_numpy())

    def key(self, model: Any) -> Hashable:
        t = model.tree_
        leaves = t.children_left == -1
        classes = model.classes_[np.argmax(t.value[:, 0, :], axis=1)]
        return (
            tuple(t.children_left.tolist()),
            tuple(np.where(leaves, -1, t.feature).tolist()),
            _rounded(np.where(leaves, 0.0, t.threshold), self.precision),
            tuple(str(c) if leaf else "" for c, leaf in zip(classes, leaves, strict=True)),
        )

    def describe(self, key: Hashable) -> str:
        """``if A <= 1.5 then (...) else (...)``, each leaf its class."""
        if key is None:
            return "no model (no records)"
        Parts = tuple[tuple[int, ...], tuple[int, ...], tuple[float, ...], tuple[str, ...]]
        left, feature, threshold, leaf_class = cast(Parts, key)

        def node(i: int) -> str:
            if left[i] == -1:
                return leaf_class[i]
            below, above = node(left[i]), node(_right_child(left, i))
            at = _number(threshold[i], self.precision)
            return f"(if {self.features[feature[i]]} <= {at} then {below} else {above})"

        return node(0)[1:-1] if left[0] != -1 else leaf_class[0]

    def published(self, model: Any) -> Any:
        if self.precision is None:
            return model
        import copy

        rounded = copy.deepcopy(model)
        thresholds = rounded.tree_.threshold  # a view of the tree's nodes
        thresholds[:] = np.round(thresholds, self.precision)
        if not np.array_equal(rounded.tree_.threshold, thresholds):  # not a view in this scikit-learn
            raise RuntimeError("this scikit-learn's trees do not take rounded thresholds")
        return rounded


@dataclass(frozen=True)
class LinearRegression(Learner):
    """Least squares; its key is its intercept and coefficients, rounded."""

    target: str
    features: tuple[str, ...]
    precision: int | None = 3

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"a linear regression of {self.target}"

    def _make(self) -> Any:
        from sklearn.linear_model import LinearRegression as Model

        return Model()

    def fit(self, records: pd.DataFrame) -> Any:
        return self._make().fit(records[list(self.features)].to_numpy(float), records[self.target].to_numpy())

    def key(self, model: Any) -> Hashable:
        return _rounded(np.concatenate([np.ravel(model.intercept_), np.ravel(model.coef_)]), self.precision)

    def describe(self, key: Hashable) -> str:
        """``Y = 1.2 + 0.5 A - 0.1 B``."""
        if key is None:
            return "no model (no records)"
        return self._equations(list(cast(tuple[float, ...], key)), [self.target])

    def _equations(self, values: list[float], left_sides: list[str]) -> str:
        """One equation per left side: the intercepts first, then each side's coefficients."""
        n, width = len(left_sides), len(self.features)
        intercepts, coefficients = values[:n], values[n:]
        equations = []
        for c, side in enumerate(left_sides):
            terms = [_number(intercepts[c], self.precision)] + [
                f"{'-' if b < 0 else '+'} {_number(abs(b), self.precision)} {name}"
                for name, b in zip(self.features, coefficients[c * width : (c + 1) * width], strict=True)
            ]
            equations.append(f"{side} = {' '.join(terms)}")
        return "; ".join(equations)

    def published(self, model: Any) -> Any:
        if self.precision is None:
            return model
        import copy

        rounded = copy.deepcopy(model)
        rounded.intercept_ = np.round(np.asarray(model.intercept_, dtype=float), self.precision)
        rounded.coef_ = np.round(np.asarray(model.coef_, dtype=float), self.precision)
        return rounded


@dataclass(frozen=True)
class LogisticRegression(LinearRegression):
    """Logistic regression (scikit-learn's default: L2, lbfgs); its key is its intercept
    and coefficients, rounded."""

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"a logistic regression of {self.target}"

    def _make(self) -> Any:
        from sklearn.linear_model import LogisticRegression as Model

        return Model()

    def key(self, model: Any) -> Hashable:
        """The classes, then the intercepts and coefficients rounded."""
        return (tuple(map(str, model.classes_)), super().key(model))

    def describe(self, key: Hashable) -> str:
        """``log-odds of Y being yes = 1.2 + 0.5 A``; beyond two classes, each class's score
        (scikit-learn's multinomial model: the class of the highest score is predicted)."""
        if key is None:
            return "no model (no records)"
        classes, values = cast(tuple[tuple[str, ...], tuple[float, ...]], key)
        if len(classes) == 2:
            return self._equations(list(values), [f"log-odds of {self.target} being {classes[1]}"])
        return self._equations(list(values), [f"score of {self.target} being {c}" for c in classes])

    def _left_side(self) -> str:
        return f"log-odds of {self.target}"


@dataclass(frozen=True)
class Estimator(Learner):
    """Any scikit-learn estimator: ``make()`` a fresh one (seeded), ``key_of(fitted)`` its
    key (module-level functions, so that worker processes can train it)."""

    make: Callable[[], Any]
    target: str
    features: tuple[str, ...]
    key_of: Callable[[Any], Hashable] = field(repr=False)

    @property
    def name(self) -> str:  # type: ignore[override]
        return type(self.make()).__name__

    def fit(self, records: pd.DataFrame) -> Any:
        return self.make().fit(records[list(self.features)].to_numpy(float), records[self.target])

    def key(self, model: Any) -> Hashable:
        return self.key_of(model)


@dataclass(frozen=True)
class Masked(Learner):
    """``A(rho(X))``: ``learner`` on each database masked first by a registered masking
    method (``method`` and its ``parameters``, seeded), on ``columns`` (default: the
    learner's features). A good masking makes more databases give the same model."""

    learner: Learner
    method: str
    parameters: tuple[tuple[str, Any], ...] = ()
    columns: tuple[str, ...] = ()

    @property
    def name(self) -> str:  # type: ignore[override]
        shown = ", ".join(f"{k}={v}" for k, v in self.parameters)
        return f"{self.learner.name} on data masked by {self.method}" + (f" ({shown})" if shown else "")

    def fit(self, records: pd.DataFrame) -> Any:
        from rlopt.masking import masking_spec

        spec = masking_spec(self.method, **dict(self.parameters))
        columns = list(self.columns or self.features)
        return self.learner.fit(spec.apply(records, columns or None))

    def key(self, model: Any) -> Hashable:
        return self.learner.key(model)

    def describe(self, key: Hashable) -> str:
        return self.learner.describe(key)

    def published(self, model: Any) -> Any:
        return self.learner.published(model)

    @property
    def target(self) -> str | None:
        return getattr(self.learner, "target", None)

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(getattr(self.learner, "features", ()))


def masked(learner: Learner, method: str, columns: Sequence[str] = (), **parameters) -> Masked:
    """``learner`` on data masked by ``method`` with ``parameters`` (e.g. ``k=3``, ``seed=0``)."""
    from rlopt.masking import masking_spec

    masking_spec(method, **parameters)  # checked now, with the registry's message
    return Masked(learner, method, tuple(sorted(parameters.items())), tuple(columns))


def mean(columns: Sequence[str], precision: int | None = None) -> Mean:
    _check_precision(precision)
    return Mean(tuple(columns), precision)


def decision_tree(
    target: str,
    features: Sequence[str],
    *,
    max_depth: int | None = 3,
    seed: int = 0,
    precision: int | None = 3,
) -> DecisionTree:
    _check_precision(precision)
    return DecisionTree(target, tuple(features), max_depth, seed, precision)


def linear_regression(target: str, features: Sequence[str], precision: int | None = 3) -> LinearRegression:
    _check_precision(precision)
    return LinearRegression(target, tuple(features), precision)


def logistic_regression(
    target: str, features: Sequence[str], precision: int | None = 3
) -> LogisticRegression:
    _check_precision(precision)
    return LogisticRegression(target, tuple(features), precision)


def estimator(
    make: Callable[[], Any], target: str, features: Sequence[str], key: Callable[[Any], Hashable]
) -> Estimator:
    return Estimator(make, target, tuple(features), key)


MODELS = ("mean", "tree", "linear", "logistic")
"""The learners the command line names (``--model``)."""


def named_learner(
    model: str,
    data: pd.DataFrame,
    *,
    target: str | None = None,
    features: Sequence[str] | None = None,
    precision: int = 3,
    max_depth: int = 3,
) -> Learner:
    """The learner ``--model`` names, on columns of ``data`` (features: every column but
    the target by default; the mean takes no target), checked on ``data`` by
    :func:`check_records`."""
    if model not in MODELS:
        raise InputError(f"--model {model!r}; expected one of {', '.join(MODELS)}")
    columns = list(data.columns)
    if model == "mean":
        target = None
    elif target is None:
        raise InputError(f"--model {model} needs --target COLUMN (the predicted column)")
    elif target not in columns:
        raise InputError(f"--target {target!r} is not a column; the columns: {columns}")
    used = list(features or [c for c in columns if c != target])
    if target in used:
        raise InputError(f"--features holds the target {target!r}; expected the columns that predict it")
    learner: Learner
    if model == "mean":
        learner = mean(used, precision)
    elif model == "tree":
        learner = decision_tree(target, used, max_depth=max_depth, precision=precision)  # type: ignore[arg-type]
    elif model == "linear":
        learner = linear_regression(target, used, precision)  # type: ignore[arg-type]
    else:
        learner = logistic_regression(target, used, precision)  # type: ignore[arg-type]
    check_records(learner, data, "the data")
    return learner


def check_records(learner: Learner, frame: pd.DataFrame, name: str) -> None:
    """The columns ``learner`` reads are in ``frame`` (called ``name``), its features
    numbers, and none of them, the target included, has a missing value."""
    features: list[str] = list(getattr(learner, "features", None) or getattr(learner, "columns", None) or ())
    target = getattr(learner, "target", None)
    used = [*features, *([target] if target is not None else [])]
    absent = [c for c in used if c not in frame.columns]
    if absent:
        raise InputError(f"{name} lacks the model's columns {absent}; its columns: {list(frame.columns)}")
    words = [c for c in features if not pd.api.types.is_numeric_dtype(frame[c])]
    if words:
        raise InputError(
            f"the model's columns {words} are not numeric in {name}; expected numbers "
            "(choose others with --features)"
        )
    blank = {c: int(n) for c, n in frame[used].isna().sum().items() if n}
    if blank:
        raise InputError(
            f"missing values in {name}: {blank} (column: count); expected none in the model's columns "
            "(drop or impute those records first)"
        )
