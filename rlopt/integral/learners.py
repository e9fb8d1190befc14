"""What a published model is, for integral privacy: a learning algorithm ``A`` that is
applied to a database (a frame of records) and a *key* of its result that two models
share exactly when they are published alike. Parameters are compared rounded to
``precision`` decimals: two models are equal when their rounded parameters are equal
(``precision=None``: exactly equal floats), so ``precision`` is the resolution at which
the intruder reads the published numbers."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rlopt.exceptions import InputError

__all__ = ["Learner", "decision_tree", "estimator", "linear_regression", "logistic_regression", "mean"]


@dataclass(frozen=True)
class Learner:
    """``fit(records) -> model`` and ``key(model) -> hashable``; ``name`` for reports."""

    name: str
    fit: Callable[[pd.DataFrame], object]
    key: Callable[[object], Hashable]

    def __call__(self, records: pd.DataFrame) -> Hashable:
        """The key of the model learned on ``records`` (an InputError when it fails)."""
        try:
            model = self.fit(records)
        except Exception as exc:  # the estimator's own failure on this database
            raise InputError(
                f"{self.name} failed on a database of {len(records)} records "
                f"(records {list(records.index)[:10]}{'...' if len(records) > 10 else ''}): {exc}"
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


def _rounded(values, precision: int | None) -> tuple:
    array = np.asarray(values, dtype=float).ravel()
    return tuple((array if precision is None else np.round(array, precision)).tolist())


def mean(columns: Sequence[str], precision: int | None = None) -> Learner:
    """The mean of ``columns`` (a database without records has no mean: key ``None``)."""
    columns = list(columns)
    return Learner(
        f"the mean of {', '.join(columns)}",
        lambda records: None if records.empty else records[columns].to_numpy(float).mean(axis=0),
        lambda model: None if model is None else _rounded(model, precision),
    )


def decision_tree(
    target: str,
    features: Sequence[str],
    *,
    max_depth: int | None = 3,
    seed: int = 0,
    precision: int | None = 3,
) -> Learner:
    """scikit-learn's decision tree classifier (fixed ``seed``); its key is its
    structure: each node's feature and threshold (rounded) and each leaf's class."""
    from sklearn.tree import DecisionTreeClassifier

    features = list(features)

    def fit(records: pd.DataFrame):
        if records.empty:
            return None
        tree = DecisionTreeClassifier(max_depth=max_depth, random_state=seed)
        return tree.fit(records[features].to_numpy(float), records[target].to_numpy())

    def key(model) -> Hashable:
        if model is None:
            return None
        t = model.tree_
        leaves = t.children_left == -1
        classes = model.classes_[np.argmax(t.value[:, 0, :], axis=1)]
        return (
            tuple(t.children_left.tolist()),
            tuple(np.where(leaves, -1, t.feature).tolist()),
            _rounded(np.where(leaves, 0.0, t.threshold), precision),
            tuple(str(c) if leaf else "" for c, leaf in zip(classes, leaves, strict=True)),
        )

    return Learner(f"a decision tree of {target}", fit, key)


def _linear(name: str, make, target: str, features: Sequence[str], precision: int | None) -> Learner:
    features = list(features)

    def fit(records: pd.DataFrame):
        if records.empty:
            return None
        return make().fit(records[features].to_numpy(float), records[target].to_numpy())

    def key(model) -> Hashable:
        if model is None:
            return None
        return _rounded(np.concatenate([np.ravel(model.intercept_), np.ravel(model.coef_)]), precision)

    return Learner(f"{name} of {target}", fit, key)


def linear_regression(target: str, features: Sequence[str], precision: int | None = 3) -> Learner:
    """Least squares; its key is its intercept and coefficients, rounded."""
    from sklearn.linear_model import LinearRegression

    return _linear("a linear regression", LinearRegression, target, features, precision)


def logistic_regression(target: str, features: Sequence[str], precision: int | None = 3) -> Learner:
    """Logistic regression (scikit-learn's default, L2, lbfgs); its key is its intercept and
    coefficients, rounded."""
    from sklearn.linear_model import LogisticRegression

    return _linear("a logistic regression", LogisticRegression, target, features, precision)


def estimator(
    make: Callable[[], Any], target: str, features: Sequence[str], key: Callable[[Any], Hashable]
) -> Learner:
    """Any scikit-learn estimator (``make()`` a fresh one, seeded) with ``key(fitted)``."""
    features = list(features)
    return Learner(
        type(make()).__name__,
        lambda records: (
            None if records.empty else make().fit(records[features].to_numpy(float), records[target])
        ),
        lambda model: None if model is None else key(model),
    )
