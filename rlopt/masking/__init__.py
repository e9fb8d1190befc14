"""Masking methods: MDAV microaggregation (by attribute groups), rank swapping,
additive noise; their registry (:data:`MASKING_METHODS`, one typed spec each) and the
recipes of the published protected files."""

from rlopt.masking.mdav import check_k, group_means, mdav_partition, microaggregate
from rlopt.masking.methods import (
    MASKING_METHODS,
    AttributeGroup,
    MaskingMethod,
    MaskingSpec,
    MDAVSpec,
    NoiseSpec,
    RankSwapSpec,
    mask,
    masking_method,
    masking_spec,
)
from rlopt.masking.noise import additive_noise
from rlopt.masking.recipes import (
    PUBLISHED_FILES,
    Recipe,
    build,
    load_recipe,
    published_recipe,
    sample_records,
)
from rlopt.masking.swapping import rank_swap, rank_window

__all__ = [
    "mdav_partition",
    "group_means",
    "microaggregate",
    "check_k",
    "additive_noise",
    "rank_swap",
    "rank_window",
    "MASKING_METHODS",
    "MaskingMethod",
    "MaskingSpec",
    "masking_method",
    "masking_spec",
    "mask",
    "PUBLISHED_FILES",
    "AttributeGroup",
    "MDAVSpec",
    "NoiseSpec",
    "RankSwapSpec",
    "Recipe",
    "build",
    "load_recipe",
    "published_recipe",
    "sample_records",
]
