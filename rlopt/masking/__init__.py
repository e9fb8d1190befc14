"""Masking methods: MDAV microaggregation (by attribute groups), rank swapping,
additive noise, and the recipes of the published protected files."""

from rlopt.masking.mdav import check_k, group_means, mdav_partition, microaggregate
from rlopt.masking.noise import additive_noise
from rlopt.masking.recipes import (
    PUBLISHED_FILES,
    AttributeGroup,
    MDAVSpec,
    NoiseSpec,
    RankSwapSpec,
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
