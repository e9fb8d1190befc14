"""Exception and warning types of rlopt: every error rlopt raises is an :class:`RloptError`.

- :class:`InputError` (also a ``ValueError``): what a user passed in is wrong: a file, a
  column, a parameter or a configuration value; the message names the value and what
  was expected. The command line ends with ``error: ...`` and exit code 2.
- :class:`SolverError` (also a ``RuntimeError``): the solver failed, or its word
  disagrees with a check; no figure is reported from such a solve. Exit code 1.
- :class:`Interrupted` (a ``KeyboardInterrupt``): Ctrl-C, carrying what was finished.

This module imports nothing heavy: the command line imports it before anything else.
"""

__all__ = [
    "RloptError",
    "InputError",
    "NonFiniteError",
    "NotFittedError",  # noqa: F822 - built on first use by __getattr__ below
    "SolverError",
    "SolverUnavailableError",
    "RecountMismatchError",
    "DataWarning",
    "Interrupted",
]


class RloptError(Exception):
    """The base of every error rlopt raises on purpose."""


class InputError(RloptError, ValueError):
    """Bad input: a file, a column, a parameter or a configuration value."""


class NonFiniteError(InputError):
    """A NaN or infinity appeared on the way to a figure: the figure is an error,
    never a result (it names where the value appeared)."""


class SolverError(RloptError, RuntimeError):
    """The solver failed or called a model infeasible that cannot be: no count is
    reported from such a solve."""


class SolverUnavailableError(SolverError):
    """HiGHS (the ``highspy`` package) cannot be loaded."""


class RecountMismatchError(SolverError):
    """The solver's count and the independent recount of its parameters disagree."""


class DataWarning(UserWarning):
    """Something in the data limits what can be computed, but is not an error
    (duplicate original records, rows dropped on request, ...)."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped the work; ``partial`` holds what was finished before it (a
    ``LearnResult`` whose status is ``interrupted``, a ``GridRun``, ...)."""

    def __init__(self, message: str = "interrupted", partial=None):
        super().__init__(message)
        self.partial = partial


_not_fitted: type | None = None


def __getattr__(name: str):
    """``NotFittedError`` is built on first use: it is also scikit-learn's
    ``NotFittedError``, and importing scikit-learn costs a second that commands which
    never fit an estimator should not pay."""
    global _not_fitted
    if name != "NotFittedError":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _not_fitted is None:
        from sklearn.exceptions import NotFittedError as SklearnNotFitted

        class NotFittedError(InputError, SklearnNotFitted):
            """An estimator used before ``fit`` (scikit-learn's ``NotFittedError`` too)."""

        NotFittedError.__module__ = __name__
        NotFittedError.__qualname__ = "NotFittedError"  # pickles (a worker's error comes back)
        _not_fitted = NotFittedError
    return _not_fitted
