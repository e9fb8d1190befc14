"""Privacy models of a released file: k-anonymity, p-sensitive k-anonymity,
l-diversity (distinct, entropy), t-closeness (earth mover's distance) and the
epsilon of differential privacy implied by t-closeness in the ratio distance.

Modules: :mod:`~rlopt.models.checks` (the checks, inputs validated there) and
:mod:`~rlopt.models._tables` (the equivalence classes' per-class statistics, from one
sparse table of counts).
"""

from rlopt.models.checks import (
    ModelCheck,
    check_models,
    dp_ratio,
    k_anonymity,
    l_diversity,
    p_sensitive_k_anonymity,
    t_closeness,
)

__all__ = [
    "ModelCheck",
    "check_models",
    "k_anonymity",
    "p_sensitive_k_anonymity",
    "l_diversity",
    "t_closeness",
    "dp_ratio",
]
