"""Distance families, registered by the names of ``docs/method.md`` (section 5).

A family is one module plus one line in :data:`FAMILIES`. What a family knows of
itself (its parameter, its admissible set, how the report shows its parameter, the
Shapley values of a measure) is said by its class; which names are families, which
of them are learned and which are baselines is said here.

Modules:

- the contracts: :mod:`~rlopt.families._base` (every family: a parametric distance on
  standardised records), :mod:`~rlopt.families._learned` (a learned family: its
  parameter, admissible set and linear margins), :mod:`~rlopt.families._view` (what the
  report shows of a parameter);
- the baselines: :mod:`~rlopt.families.am` (Euclidean), :mod:`~rlopt.families.md`
  (Mahalanobis);
- the learned families: :mod:`~rlopt.families.wm` (wm, wm_m), :mod:`~rlopt.families.owa`,
  :mod:`~rlopt.families.choquet` (ci, ci_m, ci_super), :mod:`~rlopt.families.kadditive`
  (ci_k), :mod:`~rlopt.families.bilinear` (sb, sb_nc, sb_pd);
- :mod:`~rlopt.families.containment`: a smaller family's parameter as one of a larger
  family (the containments CI >= WM, SB >= SB_NC >= WM).
"""

from __future__ import annotations

from collections.abc import Mapping

from rlopt.exceptions import InputError
from rlopt.families._base import BaselineFamily, Distance, Family
from rlopt.families._learned import LearnedFamily, LinearRows
from rlopt.families._view import Chart, ParameterTable, ParameterView, generic_view
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
    "BASELINES",
    "DEFAULT_BASELINE",
    "baseline_families",
    "family_of",
    "generic_view",
    "learned_families",
    "get_family",
    "get_learned_family",
    "Family",
    "BaselineFamily",
    "LearnedFamily",
    "LinearRows",
    "Distance",
    "ParameterView",
    "ParameterTable",
    "Chart",
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


def baseline_families() -> tuple[str, ...]:
    """The names of the baselines (families derived from the data, not learned), in the registry's order."""
    return tuple(name for name, cls in FAMILIES.items() if not cls.learned)


BASELINES = baseline_families()
"""The baselines registered when rlopt was imported: ``("am", "md")``."""

DEFAULT_BASELINE = ArithmeticMean.name
"""The baseline of a plain linkage: AM (Euclidean on standardised records), whose
ordering is every learned family's neutral parameter; the distance the transparency
attacks link with by default."""


def family_of(params: Mapping, name: str = "") -> type[Family] | None:
    """The registered class of a parameter's family: the one ``params["family"]`` names
    (every learned family's ``Distance.params()`` does), else the one named ``name``
    (e.g. a figure's key); ``None`` when neither is registered."""
    named = params.get("family")
    return FAMILIES.get(named if isinstance(named, str) and named in FAMILIES else name)


def get_family(name: str, **options) -> Family:
    """A family by its registered name (``"am"``, ``"wm"``, ``"ci_m"``, ...), with its options
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
