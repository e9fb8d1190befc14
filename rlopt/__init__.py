"""rlopt: worst-case re-identification risk by distance-based record linkage with
distances learned by mixed-integer programming.

The names below are the ones a user calls; each is imported from its package on first
use, so that ``import rlopt`` (and the command line) does not load scikit-learn, Pyomo
or HiGHS before they are needed. The packages, in the order data flows through them:

- :mod:`rlopt.data`: reading, checking and standardising the two files;
- :mod:`rlopt.masking`: the masking methods and the published test files;
- :mod:`rlopt.families`: the distances (baselines and learned families);
- :mod:`rlopt.linkage`: record linkage with a given distance (DBRL, PLD);
- :mod:`rlopt.learn` and :mod:`rlopt.milp`: the best distance of a family, proven;
- :mod:`rlopt.attacks`: transparency attacks on a published masking method;
- :mod:`rlopt.models`: privacy models of a released file (k-anonymity, ...);
- :mod:`rlopt.integral`: integral privacy of published models (what two models learned
  before and after an update reveal of it);
- :mod:`rlopt.risk`: the worst case over all of them, measured by one routine
  (:func:`rlopt.risk.measure`) that every command calls, with utility;
- :mod:`rlopt.report`: the HTML reports; :mod:`rlopt.experiments`: grids of runs;
- :mod:`rlopt.cli`: the ``rlopt`` command line; :mod:`rlopt.app`: ``rlopt serve``, the
  local web application over it.

Beside them, used by all: :mod:`rlopt.exceptions` (the errors ``rlopt`` reports in one
line), :mod:`rlopt.validation` (parameter constraints, declared once per function),
:mod:`rlopt.results` (the count of re-identified records, a learning run's
:class:`~rlopt.results.LearnResult`), :mod:`rlopt.status`. The words they use (lower and
upper end, claim and verified count, reduction and search, termination and status) are
the glossary at the top of docs/method.md.

Modules of the package itself: :mod:`rlopt.learn` (the estimator), :mod:`rlopt.processes`
(child processes that never outlive their parent, and the one way to join a Dask
cluster), :mod:`rlopt.__main__` (``python -m rlopt``) and :mod:`rlopt._docs` (the
generated pages ``docs/cli.md`` and ``docs/api.md``).
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

try:
    __version__ = version("rlopt")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

_HOMES = {
    "rlopt.data": [
        "CENSUS_ATTRIBUTES",
        "EIA_ATTRIBUTES",
        "LinkageData",
        "load_census",
        "load_eia",
        "load_table",
        "standardise",
        "validate_pair",
    ],
    "rlopt.exceptions": ["DataWarning", "InputError", "Interrupted", "NonFiniteError", "SolverError"],
    "rlopt.families": ["FAMILIES", "get_family"],
    "rlopt.learn": ["LearnedDistanceLinkage", "LearnResult"],
    "rlopt.linkage": ["LinkageResult", "dbrl", "pld"],
    "rlopt.masking": [
        "PUBLISHED_FILES",
        "Recipe",
        "additive_noise",
        "build",
        "load_recipe",
        "microaggregate",
        "published_recipe",
        "rank_swap",
    ],
    "rlopt.attacks": ["AttackResult", "rank_swap_attack", "microaggregation_attack"],
    "rlopt.risk": ["RiskAssessment", "assess_risk", "information_loss", "interval_disclosure", "tradeoff"],
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [*_HOME_OF, "__version__"]


def __getattr__(name: str):
    module = _HOME_OF.get(name)
    if module is None and name.startswith("_"):  # never a private module, nor __main__
        raise AttributeError(f"module 'rlopt' has no attribute {name!r}")
    if module is None:
        try:  # a subpackage or module: ``rlopt.risk.assess_risk`` after ``import rlopt``
            return import_module(f"rlopt.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"rlopt.{name}":
                raise
            raise AttributeError(f"module 'rlopt' has no attribute {name!r}") from None
    value = getattr(import_module(module), name)
    globals()[name] = value  # the next use is a plain lookup
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME_OF])


if TYPE_CHECKING:  # what the names are, for type checkers and editors
    from rlopt.attacks import AttackResult, microaggregation_attack, rank_swap_attack
    from rlopt.data import (
        CENSUS_ATTRIBUTES,
        EIA_ATTRIBUTES,
        LinkageData,
        load_census,
        load_eia,
        load_table,
        standardise,
        validate_pair,
    )
    from rlopt.exceptions import DataWarning, InputError, Interrupted, NonFiniteError, SolverError
    from rlopt.families import FAMILIES, get_family
    from rlopt.learn import LearnedDistanceLinkage, LearnResult
    from rlopt.linkage import LinkageResult, dbrl, pld
    from rlopt.masking import (
        PUBLISHED_FILES,
        Recipe,
        additive_noise,
        build,
        load_recipe,
        microaggregate,
        published_recipe,
        rank_swap,
    )
    from rlopt.risk import RiskAssessment, assess_risk, information_loss, interval_disclosure, tradeoff
