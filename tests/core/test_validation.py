"""Parameter constraints: worked cases of what each constraint accepts and says."""

from numbers import Integral, Real

import numpy as np
import pytest

from rlopt.exceptions import InputError
from rlopt.validation import MARGIN, Interval, Options, check, validate_params


@pytest.mark.parametrize("value", [1, np.int64(3), 10**12])
def test_an_integer_interval_takes_numpy_integers(value):
    assert check("k", value, [Interval(Integral, 1)]) == value


@pytest.mark.parametrize("value", [0, True, 2.0, "3", float("nan"), None])
def test_an_integer_interval_refuses_bools_floats_text_and_none(value):
    with pytest.raises(InputError, match=r"^k=.*; expected an integer >= 1$"):
        check("k", value, [Interval(Integral, 1)])


@pytest.mark.parametrize(
    "constraint, inside, outside, words",
    [
        (Interval(Real, 0, 1, closed="left"), [0, 0.5, np.float64(0.99)], [1, -1e-9], "a number 0 <= g < 1"),
        (Interval(Real, 0, 100, closed="right"), [100, 1e-9], [0, 101], "a number 0 < g <= 100"),
        (Interval(Real, 0, closed="neither"), [1e-12, 5], [0, float("inf")], "a number > 0"),
        (MARGIN, [0, 1e-5], [-1e-9, float("nan"), float("inf")], "a number >= 0"),
    ],
)
def test_interval_ends_as_declared(constraint, inside, outside, words):
    for value in inside:
        check("g", value, [constraint])
    for value in outside:
        with pytest.raises(InputError, match=f"; expected {words}$"):
            check("g", value, [constraint])


def test_alternatives_are_listed_in_one_phrase():
    allowed = [Options(("tight", "uniform")), Interval(Real, 0, closed="neither"), None]
    for value in ("tight", 2.5, None):
        check("big_c", value, allowed)
    with pytest.raises(InputError) as caught:
        check("big_c", "loose", allowed)
    assert str(caught.value) == "big_c='loose'; expected 'tight', 'uniform', a number > 0 or None"


def test_a_decorated_function_checks_positional_keyword_and_default_arguments():
    @validate_params({"k": [Interval(Integral, 1, note="group size")], "seed": [Interval(Integral, 0)]})
    def mask(values, k, *, seed=-1):
        return k

    assert mask([], 3, seed=0) == 3
    with pytest.raises(InputError, match=r"^k=0; expected an integer >= 1 \(group size\)$"):
        mask([], 0, seed=0)
    with pytest.raises(InputError, match=r"^seed=-1"):  # a bad default is caught too
        mask([], 3)
    assert mask.parameter_constraints["k"][0].note == "group size"


def test_a_constraint_for_no_parameter_is_a_programming_error():
    with pytest.raises(TypeError, match="constraints for no parameter"):

        @validate_params({"kk": [MARGIN]})
        def f(k):
            return k
