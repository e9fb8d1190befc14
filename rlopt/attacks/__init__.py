"""Transparency attacks: the intruder knows the masking method and its parameters
(docs/method.md §6) and narrows each record's candidates before linking (or, for
fuzzy microaggregation, ranks them by posterior probability).
:data:`ATTACKS` registers them by the masking method each one exploits.

Modules:

- :mod:`~rlopt.attacks.registry`: :data:`ATTACKS` and ``plan_attack``, an attack checked
  against the published masking's spec;
- :mod:`~rlopt.attacks._common`: what every attack shares (the result, linkage inside
  candidate sets);
- the attacks: :mod:`~rlopt.attacks.rank_swap` (rank windows, RSLD),
  :mod:`~rlopt.attacks.microaggregation` (the method re-run, groups intersected),
  :mod:`~rlopt.attacks.pram` and :mod:`~rlopt.attacks.fuzzy` (posterior probabilities),
  and :mod:`~rlopt.attacks.intersection` (several k-anonymous releases of shared subjects).
"""

from rlopt.attacks._common import AttackResult
from rlopt.attacks.fuzzy import FuzzyAttackResult, fuzzy_attack
from rlopt.attacks.intersection import IntersectionResult, intersection_attack
from rlopt.attacks.microaggregation import microaggregation_attack
from rlopt.attacks.pram import PramAttackResult
from rlopt.attacks.rank_swap import rank_swap_attack
from rlopt.attacks.registry import ATTACKS, attack_for, plan_attack

__all__ = [
    "AttackResult",
    "FuzzyAttackResult",
    "PramAttackResult",
    "IntersectionResult",
    "intersection_attack",
    "fuzzy_attack",
    "rank_swap_attack",
    "microaggregation_attack",
    "ATTACKS",
    "attack_for",
    "plan_attack",
]
