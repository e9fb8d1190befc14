"""Risk assessment of a user's own files. Computes figures; :mod:`rlopt.report` renders them.

Modules:

- ``assess``: :func:`assess_risk`, the worst case over distance families, the
  baselines and a transparency attack, records at risk, generalisation;
- ``figures``: what it returns, :class:`RiskAssessment` with typed rows
  (:class:`Headline`, :class:`BaselineRow`, :class:`FamilyRow`) and their JSON form;
- ``worst_case``: the one rule for the lower end, ceiling and status;
- ``measures``: interval disclosure and information loss;
- ``risk_utility``: the risk-utility trade-off over a masking parameter;
- ``permutation``: the permutation paradigm's decomposition; ``uniques``: uniqueness."""

from rlopt.risk.assess import DEFAULT_FAMILIES, assess_risk
from rlopt.risk.figures import BaselineRow, FamilyRow, Headline, RiskAssessment
from rlopt.risk.measures import information_loss, interval_disclosure
from rlopt.risk.permutation import permutation_analysis
from rlopt.risk.risk_utility import tradeoff
from rlopt.risk.uniques import uniqueness

__all__ = [
    "DEFAULT_FAMILIES",
    "BaselineRow",
    "FamilyRow",
    "Headline",
    "RiskAssessment",
    "assess_risk",
    "information_loss",
    "interval_disclosure",
    "permutation_analysis",
    "tradeoff",
    "uniqueness",
]
