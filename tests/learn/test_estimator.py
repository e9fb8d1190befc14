"""LearnedDistanceLinkage keeps scikit-learn's estimator contract."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError as SklearnNotFitted
from sklearn.utils import estimator_checks
from sklearn.utils.validation import check_is_fitted

from rlopt import LearnedDistanceLinkage
from rlopt.exceptions import InputError, NotFittedError
from tests._helpers import noisy_file

# the checks that apply to a learner whose fit takes two aligned files: the others
# call fit(X, y) with a label vector y, which is not this estimator's input
APPLICABLE = [
    "check_parameters_default_constructible",
    "check_no_attributes_set_in_init",
    "check_get_params_invariance",
    "check_set_params",
    "check_estimator_cloneable",
    "check_estimator_repr",
    "check_do_not_raise_errors_in_init_or_set_params",
    "check_estimator_tags_renamed",
    "check_valid_tag_types",
    "check_mixin_order",
]


@pytest.mark.parametrize("name", APPLICABLE)
def test_scikit_learn_estimator_checks(name):
    getattr(estimator_checks, name)("LearnedDistanceLinkage", LearnedDistanceLinkage("wm"))


def test_clone_get_and_set_params():
    learner = LearnedDistanceLinkage("owa", time_limit=5, searches={"parameter_bb": False})
    copy = clone(learner)
    assert copy is not learner and copy.get_params() == learner.get_params()
    assert copy.set_params(family="wm", margin=1e-4).get_params()["family"] == "wm"
    assert learner.family == "owa"


def test_unfitted_raises_not_fitted_error():
    learner = LearnedDistanceLinkage("wm")
    original, masked = noisy_file(1, 12, 2)
    with pytest.raises(SklearnNotFitted):
        check_is_fitted(learner)
    for call in (
        lambda: learner.link(original, masked),
        lambda: learner.score(original, masked),
        lambda: learner.distance(masked.to_numpy(), original.to_numpy()),
        lambda: learner.save_params("never.json"),
    ):
        with pytest.raises(NotFittedError) as caught:
            call()
        assert isinstance(caught.value, SklearnNotFitted) and isinstance(caught.value, InputError)


def test_loaded_parameters_give_a_fully_fitted_estimator(tmp_path):
    original, masked = noisy_file(2, 25, 3)
    learner = LearnedDistanceLinkage("wm").fit(original, masked)
    check_is_fitted(learner)
    loaded = LearnedDistanceLinkage.load_params(learner.save_params(tmp_path / "wm.json"))
    check_is_fitted(loaded)
    a, b = masked.to_numpy()[:5], original.to_numpy()
    assert np.allclose(loaded.distance(a, b), learner.distance(a, b))
    assert loaded.n_correct_ == learner.n_correct_
    assert loaded.score(original, masked) == learner.score(original, masked)
    assert pickle.loads(pickle.dumps(loaded)).params_ == learner.params_
