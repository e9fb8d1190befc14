"""Parameter constraints, declared once per function or estimator (scikit-learn's
pattern: a table of constraints beside the code, checked on entry; scikit-learn keeps
its own implementation private, so this is rlopt's).

A function declares ``@validate_params({"margin": [Interval(Real, 0, None)]})``; an
estimator declares ``_parameter_constraints`` and calls :func:`check_params` in
``fit``. A value that meets none of its constraints is an
:class:`~rlopt.exceptions.InputError` worded as every bad input is:
``margin=-1; expected a number >= 0``. Checks across parameters (``p <= k``,
``folds`` at most the records) stay beside the code that knows both."""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Literal

from rlopt.exceptions import InputError

__all__ = [
    "JOBS",
    "MARGIN",
    "PERCENTAGE",
    "SEED",
    "TIME_LIMIT",
    "Interval",
    "Options",
    "check",
    "check_params",
    "validate_params",
]


@dataclass(frozen=True)
class Interval:
    """A number of ``kind`` (:class:`numbers.Integral` or :class:`numbers.Real`; never a
    bool, never NaN or infinite) between ``low`` and ``high`` (``None``: unbounded),
    each end included as ``closed`` says; ``note`` adds what the number means."""

    kind: type
    low: float | None = None
    high: float | None = None
    closed: Literal["both", "left", "right", "neither"] = "both"
    note: str | None = None

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, self.kind):
            return False
        number = float(value)  # type: ignore[arg-type]  # a Real, checked above
        if not math.isfinite(number):
            return False
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        above = self.low is None or (number >= self.low if left else number > self.low)
        below = self.high is None or (number <= self.high if right else number < self.high)
        return above and below

    def describe(self, name: str = "x") -> str:
        noun = "an integer" if self.kind is Integral else "a number"
        left = ">=" if self.closed in ("both", "left") else ">"
        right = "<=" if self.closed in ("both", "right") else "<"
        if self.low is not None and self.high is not None:
            text = f"{noun} {self.low:g} {left.replace('>', '<')} {name} {right} {self.high:g}"
        elif self.low is not None:
            text = f"{noun} >= {self.low:g}" if left == ">=" else f"{noun} > {self.low:g}"
        elif self.high is not None:
            text = f"{noun} {right} {self.high:g}"
        else:
            text = f"a finite {noun.removeprefix('a ').removeprefix('an ')}"
        return text if self.note is None else f"{text} ({self.note})"


@dataclass(frozen=True)
class Options:
    """One of ``values`` (compared with ``==``)."""

    values: tuple

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str | int | float | type(None)) and value in self.values

    def describe(self, name: str = "x") -> str:
        quoted = [repr(v) for v in self.values]
        return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


Constraint = Interval | Options | None
"""``None`` accepts ``None`` (an optional parameter)."""

MARGIN = Interval(Real, 0)
"""The separation margin eps of a correct link (docs/method.md): a number >= 0."""

PERCENTAGE = Interval(Real, 0, 100, closed="right", note="a percentage")

SEED = Interval(Integral, 0)
"""A random seed (numpy's generators take integers >= 0)."""

JOBS = Interval(Integral, 1, note="workers")

TIME_LIMIT = Interval(Real, 0, closed="neither", note="seconds")
"""A solve's time limit (``None`` beside it: no limit)."""


def _accepts(constraint: Constraint, value: Any) -> bool:
    return value is None if constraint is None else constraint.accepts(value)


def _describe(constraints: Sequence[Constraint], name: str) -> str:
    parts: list[str] = []
    for c in constraints:
        parts += (
            ["None"]
            if c is None
            else [repr(v) for v in c.values]
            if isinstance(c, Options)
            else [c.describe(name)]
        )
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} or {parts[-1]}"


def check(name: str, value: Any, constraints: Sequence[Constraint]) -> Any:
    """``value`` when it meets one of ``constraints``, else the one-line InputError."""
    if not any(_accepts(c, value) for c in constraints):
        raise InputError(f"{name}={value!r}; expected {_describe(constraints, name)}")
    return value


def check_params(values: Mapping[str, Any], constraints: Mapping[str, Sequence[Constraint]]) -> None:
    """Check each declared parameter of ``values`` (an estimator's attributes, a call's
    arguments)."""
    for name, allowed in constraints.items():
        if name in values:
            check(name, values[name], allowed)


def validate_params(constraints: Mapping[str, Sequence[Constraint]]) -> Callable:
    """Decorator: the function's arguments checked against ``constraints`` on each call."""

    def decorate(function: Callable) -> Callable:
        signature = inspect.signature(function)
        unknown = set(constraints) - set(signature.parameters)
        if unknown:
            raise TypeError(f"{function.__qualname__}: constraints for no parameter {sorted(unknown)}")

        @functools.wraps(function)
        def checked(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            check_params(bound.arguments, constraints)
            return function(*args, **kwargs)

        checked.parameter_constraints = dict(constraints)  # type: ignore[attr-defined]
        return checked

    return decorate
