"""Exception and warning types of rlopt.

Every error caused by what a user passed in is an :class:`InputError` (a
``ValueError``), whose message names the offending value and what was expected.
"""

__all__ = ["InputError", "NonFiniteError", "DataWarning"]


class InputError(ValueError):
    """Bad input: a file, a column, a parameter or a configuration value."""


class NonFiniteError(InputError):
    """A NaN or infinity appeared on the way to a figure: the figure is an error,
    never a result (it names where the value appeared)."""


class DataWarning(UserWarning):
    """Something in the data limits what can be computed, but is not an error
    (duplicate original records, rows dropped on request, ...)."""
