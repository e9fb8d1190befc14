"""Distance families, registered by the names of SPEC section 4.

A family is one module plus one line in :data:`FAMILIES`.
"""

from __future__ import annotations

from rlopt.exceptions import InputError
from rlopt.families._base import BaselineFamily, Distance, Family
from rlopt.families._learned import LearnedFamily, LinearRows
from rlopt.families.am import ArithmeticMean
from rlopt.families.bilinear import Bilinear, NonNegativeBilinear, PositiveDefiniteBilinear
from rlopt.families.choquet import Choquet, MetricChoquet, SupermodularChoquet
from rlopt.families.kadditive import KAdditiveChoquet
from rlopt.families.md import Mahalanobis
from rlopt.families.owa import OrderedWeightedAverage
from rlopt.families.wm import MetricWeightedMean, WeightedMean

__all__ = [
    "FAMILIES",
    "LEARNED",
    "get_family",
    "get_learned_family",
    "Family",
    "BaselineFamily",
    "LearnedFamily",
    "LinearRows",
    "Distance",
]

FAMILIES: dict[str, type[Family]] = {
    "am": ArithmeticMean,
    "md": Mahalanobis,
    "wm": WeightedMean,
    "wm_m": MetricWeightedMean,
    "owa": OrderedWeightedAverage,
    "ci": Choquet,
    "ci_m": MetricChoquet,
    "ci_super": SupermodularChoquet,
    "ci_k": KAdditiveChoquet,  # a lower end for ci (a subfamily): never ci's worst case
    "sb": Bilinear,
    "sb_nc": NonNegativeBilinear,
    "sb_pd": PositiveDefiniteBilinear,
}

LEARNED = tuple(name for name, cls in FAMILIES.items() if cls.learned)
"""Names of the families learned by the MILP."""


def get_family(name: str, **options) -> Family:
    """A family by its SPEC name (``"am"``, ``"wm"``, ``"ci_m"``, ...), with its options
    (``delta`` for metric variants, ``published_relaxation`` for ``ci_m``, ``k`` for
    ``ci_k``, ...)."""
    if name not in FAMILIES:
        raise InputError(f"unknown distance family {name!r}; expected one of {list(FAMILIES)}")
    cls = FAMILIES[name]
    if not cls.learned:
        if options:
            raise InputError(f"family {name!r} takes no options, got {sorted(options)}")
        return cls()
    return cls(**options)


def get_learned_family(name: str, **options) -> LearnedFamily:
    """:func:`get_family` for a family learned by the MILP; a baseline (``am``,
    ``md``) is an :class:`InputError` that names the learned ones."""
    family = get_family(name, **options)
    if not isinstance(family, LearnedFamily):
        raise InputError(
            f"family {name!r} is a baseline without parameters to learn (link with "
            f"rlopt.dbrl(..., distance={name!r})); expected one of the learned "
            f"families {list(LEARNED)}"
        )
    return family
