"""Masking methods: MDAV microaggregation (by attribute groups), rank swapping,
additive noise, fuzzy microaggregation, DP microaggregation and Laplace noise; their registry (:data:`MASKING_METHODS`, one typed spec each) and the
recipes of the published protected files."""

from rlopt.masking.dp import dp_microaggregate, laplace_noise
from rlopt.masking.fuzzy import fuzzy_c_means, fuzzy_microaggregate
from rlopt.masking.mdav import check_k, group_means, mdav_partition, microaggregate
from rlopt.masking.methods import (
    MASKING_METHODS,
    AttributeGroup,
    DPMicroaggregationSpec,
    FuzzySpec,
    LaplaceSpec,
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
    "dp_microaggregate",
    "laplace_noise",
    "fuzzy_microaggregate",
    "fuzzy_c_means",
    "DPMicroaggregationSpec",
    "LaplaceSpec",
    "FuzzySpec",
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
