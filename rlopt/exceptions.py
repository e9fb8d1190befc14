"""Exception and warning types of rlopt.

Every error caused by what a user passed in is an :class:`InputError` (a
``ValueError``), whose message names the offending value and what was expected.
"""

from sklearn.exceptions import NotFittedError as _SklearnNotFitted

__all__ = ["InputError", "NonFiniteError", "NotFittedError", "SolverError", "DataWarning", "Interrupted"]


class InputError(ValueError):
    """Bad input: a file, a column, a parameter or a configuration value."""


class NonFiniteError(InputError):
    """A NaN or infinity appeared on the way to a figure: the figure is an error,
    never a result (it names where the value appeared)."""


class NotFittedError(InputError, _SklearnNotFitted):
    """An estimator used before ``fit`` (scikit-learn's ``NotFittedError`` too)."""


class SolverError(RuntimeError):
    """The solver failed or called a model infeasible that cannot be: no count is
    reported from such a solve."""


class DataWarning(UserWarning):
    """Something in the data limits what can be computed, but is not an error
    (duplicate original records, rows dropped on request, ...)."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped the work; ``partial`` holds what was finished before it (a
    ``LearnResult`` whose status is ``interrupted``, a ``GridRun``, ...)."""

    def __init__(self, message: str = "interrupted", partial=None):
        super().__init__(message)
        self.partial = partial
