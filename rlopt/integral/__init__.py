"""Integral privacy: what models learned from a database reveal about its updates
(Torra's talk; docs/method.md).

- :mod:`rlopt.integral.learners`: a learning algorithm and the key two published models
  share when they are published alike (the mean, a decision tree, linear and logistic
  regression, any scikit-learn estimator with a key function);
- :mod:`rlopt.integral.exact`: the exact set ``M`` of modifications consistent with two
  published models on a small population, its minimal elements, its intersection, the
  records it reveals;
- :mod:`rlopt.integral.sampling`: at real size, many candidate databases (subsamples, or
  ``X`` changed by random modifications) learned and grouped by model, and the
  integrally private model selection;
- :mod:`rlopt.integral.update`: the update attack from files (``rlopt integral``);
- :mod:`rlopt.integral.choose`: the integrally private model of a file, plain and on
  masked data (``rlopt private-model``).
"""

from rlopt.integral.choose import PrivateModel, private_model
from rlopt.integral.exact import IntegralPrivacy, Modification, consistent_modifications, published
from rlopt.integral.learners import (
    Learner,
    decision_tree,
    estimator,
    linear_regression,
    logistic_regression,
    masked,
    mean,
)
from rlopt.integral.sampling import SampledModels, Selection, around, learn_all, select_private, subsamples

__all__ = [
    "PrivateModel",
    "private_model",
    "SampledModels",
    "Selection",
    "around",
    "learn_all",
    "select_private",
    "subsamples",
    "IntegralPrivacy",
    "Learner",
    "Modification",
    "consistent_modifications",
    "decision_tree",
    "estimator",
    "linear_regression",
    "logistic_regression",
    "masked",
    "mean",
    "published",
]
