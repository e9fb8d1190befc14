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
    # the learned families in learning order: each after every family it contains, so
    # that a smaller family's optimum is a start (and a lower end) of the larger ones
    "wm_m": MetricWeightedMean,
    "wm": WeightedMean,
    "owa": OrderedWeightedAverage,
    "ci_k": KAdditiveChoquet,  # a lower end for ci (a subfamily): never ci's worst case
    "ci_m": MetricChoquet,
    "ci_super": SupermodularChoquet,
    "ci": Choquet,
    "sb_pd": PositiveDefiniteBilinear,
    "sb_nc": NonNegativeBilinear,
    "sb": Bilinear,
}
"""The registry: a new family is one module plus one entry here, placed after the
families it contains (``wm_m`` in ``wm`` and ``ci_m``; ``wm`` in ``ci_k``, ``ci``,
``ci_super`` and ``sb*``; ``ci_k``, ``owa``, ``ci_m`` and ``ci_super`` in ``ci``;
``sb_pd`` in ``sb_nc`` in ``sb``)."""


def learned_families() -> tuple[str, ...]:
    """The names of the families learned by the MILP, in learning order (the registry's)."""
    return tuple(name for name, cls in FAMILIES.items() if cls.learned)


LEARNED = learned_families()
"""The learned families registered when rlopt was imported (code that must see a family
registered later calls :func:`learned_families`)."""


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
    if name not in FAMILIES:
        raise InputError(f"unknown distance family {name!r}; expected one of {', '.join(learned_families())}")
    family = get_family(name, **options)
    if not isinstance(family, LearnedFamily):
        raise InputError(
            f"family {name!r} is a baseline without parameters to learn (link with "
            f"rlopt.dbrl(..., distance={name!r})); expected one of the learned "
            f"families {', '.join(learned_families())}"
        )
    return family
