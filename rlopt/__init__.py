"""rlopt: worst-case re-identification risk by distance-based record linkage with
distances learned by mixed-integer programming."""

from importlib.metadata import PackageNotFoundError, version

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

try:
    __version__ = version("rlopt")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "CENSUS_ATTRIBUTES",
    "EIA_ATTRIBUTES",
    "LinkageData",
    "load_census",
    "load_eia",
    "load_table",
    "standardise",
    "validate_pair",
    "DataWarning",
    "InputError",
    "NonFiniteError",
    "SolverError",
    "Interrupted",
    "FAMILIES",
    "get_family",
    "LearnedDistanceLinkage",
    "LearnResult",
    "LinkageResult",
    "dbrl",
    "PUBLISHED_FILES",
    "Recipe",
    "additive_noise",
    "build",
    "load_recipe",
    "microaggregate",
    "published_recipe",
    "rank_swap",
    "pld",
    "AttackResult",
    "rank_swap_attack",
    "microaggregation_attack",
    "RiskAssessment",
    "assess_risk",
    "information_loss",
    "interval_disclosure",
    "tradeoff",
    "__version__",
]
