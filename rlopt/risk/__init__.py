"""Risk assessment of a user's own files. Computes figures; :mod:`rlopt.report` renders them.

Modules:

- ``pair``: :func:`~rlopt.risk.pair.measure`, the one measurement of a pair that every
  command calls (``risk``, each cell of ``compare``, each value of ``tradeoff``): the
  baselines, saved parameters, learned families and transparency attack, the
  per-record columns and the worst case over them;
- ``assess``: :func:`assess_risk` = validate -> measure -> generalisation, drivers, utility
  measures, the report's rows;
- ``drivers``: :func:`~rlopt.risk.drivers.attribute_drivers`, which attribute carries the
  risk: the worst case measured again without each attribute and ranked by its drop, each
  family's share per attribute, and the records every method re-identifies (``--drivers``);
- ``generalisation``: the k-fold check of a learned distance on held-out records;
- ``figures``: what it returns, :class:`RiskAssessment` with typed rows
  (:class:`Headline`, :class:`BaselineRow`, :class:`FamilyRow`) and their JSON form;
- ``worst_case``: the one rule for the lower end, ceiling and status (no solver: the
  report imports it);
- ``threshold``: the officer's threshold (``--threshold 5%``) and the run's answer to it,
  passes, fails or undecided (:func:`~rlopt.risk.threshold.decide`);
- ``membership``: the worst case of a fully synthetic release, a membership attack with
  held-out records (:func:`~rlopt.risk.membership.membership_risk`, ``rlopt membership``),
  a package with its own map: the attack, its region search and MILP, its calibration
  (the out-of-sample advantage, the permutation null, the anchors) and its nouns;
- ``measures``: interval disclosure and information loss (``distribution_loss`` for a
  file whose records are not aligned with the original's);
- ``risk_utility``: the risk-utility trade-off over a masking parameter;
- ``permutation``: the permutation paradigm's decomposition; ``uniques``: uniqueness."""

from rlopt.risk.assess import DEFAULT_FAMILIES, assess_risk
from rlopt.risk.figures import BaselineRow, FamilyRow, Headline, RiskAssessment
from rlopt.risk.measures import information_loss, interval_disclosure
from rlopt.risk.pair import measure
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
    "measure",
    "permutation_analysis",
    "tradeoff",
    "uniqueness",
]
