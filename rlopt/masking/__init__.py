"""Masking methods, their registry and the recipes of the published protected files.

- :mod:`~rlopt.masking.methods`: the registry :data:`MASKING_METHODS`, one typed
  (pydantic) spec per method, :func:`masking_spec`, :func:`mask`;
- :mod:`~rlopt.masking.grammar`: the text forms of the parameters (one grammar for
  every command);
- the methods: :mod:`~rlopt.masking.mdav` (MDAV microaggregation by attribute groups),
  :mod:`~rlopt.masking.swapping` (rank swapping), :mod:`~rlopt.masking.noise`,
  :mod:`~rlopt.masking.fuzzy` (fuzzy microaggregation), :mod:`~rlopt.masking.dp`
  (DP microaggregation, Laplace noise), :mod:`~rlopt.masking.categorical` (PRAM,
  randomized response, global recoding, local suppression);
- the synthetic data generators, :mod:`~rlopt.masking.synthesis`: partial synthesis by
  CART (records kept, linkage applies), and fully synthetic files from a Gaussian
  copula or a DP histogram (records nobody's: a membership attack measures them);
- :mod:`~rlopt.masking._groups`: attribute groups, the rule MDAV and fuzzy
  microaggregation share (one size, or groups that partition the attributes);
- :mod:`~rlopt.masking.recipes`: the published files M4-33 ... M6-853 and recipe YAMLs.

:mod:`~rlopt.masking._swap_kernel` is rank swapping's walk compiled (numba), the same
file for the same seed as the Python walk.
"""

from rlopt.masking.categorical import global_recode, local_suppression, pram
from rlopt.masking.dp import dp_microaggregate, laplace_noise
from rlopt.masking.fuzzy import fuzzy_microaggregate
from rlopt.masking.mdav import microaggregate
from rlopt.masking.methods import MASKING_METHODS, MaskingSpec, mask, masking_method, masking_spec
from rlopt.masking.noise import additive_noise
from rlopt.masking.recipes import (
    PUBLISHED_FILES,
    Recipe,
    build,
    load_recipe,
    published_recipe,
    sample_records,
)
from rlopt.masking.swapping import rank_swap

__all__ = [
    "microaggregate",
    "additive_noise",
    "dp_microaggregate",
    "laplace_noise",
    "fuzzy_microaggregate",
    "pram",
    "global_recode",
    "local_suppression",
    "rank_swap",
    "MASKING_METHODS",
    "MaskingSpec",
    "masking_method",
    "masking_spec",
    "mask",
    "PUBLISHED_FILES",
    "Recipe",
    "build",
    "load_recipe",
    "published_recipe",
    "sample_records",
]
