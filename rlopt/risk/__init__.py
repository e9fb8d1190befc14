"""Risk assessment of a user's own files: the worst case over distance families, the
baselines and attacks, records at risk, generalisation, interval disclosure and the
risk-utility trade-off, the permutation paradigm's decomposition, uniqueness. Computes figures; :mod:`rlopt.report` renders them."""

from rlopt.risk.assess import DEFAULT_FAMILIES, RiskAssessment, assess_risk
from rlopt.risk.measures import information_loss, interval_disclosure
from rlopt.risk.permutation import permutation_analysis
from rlopt.risk.risk_utility import tradeoff
from rlopt.risk.uniques import uniqueness

__all__ = [
    "DEFAULT_FAMILIES",
    "RiskAssessment",
    "assess_risk",
    "information_loss",
    "interval_disclosure",
    "permutation_analysis",
    "tradeoff",
    "uniqueness",
]
