"""Transparency attacks: the intruder knows the masking method and its parameters
(SPEC sections 6-7) and narrows each record's candidates before linking."""

from rlopt.attacks._common import AttackResult
from rlopt.attacks.microaggregation import microaggregation_attack
from rlopt.attacks.rank_swap import RankWindows, rank_swap_attack, rank_windows

__all__ = ["AttackResult", "RankWindows", "rank_swap_attack", "rank_windows", "microaggregation_attack"]
