"""Data: the bundled reference files, loaders, the one input validator,
standardisation and the per-attribute squared differences."""

from rlopt.data._bundled import CENSUS_ATTRIBUTES, EIA_ATTRIBUTES, load_census, load_eia, load_table
from rlopt.data._standardise import (
    DEFAULT_CHUNK_BYTES,
    Standardisation,
    chunk_rows,
    column_scale,
    column_sd,
    diff_chunks,
    squared_diffs,
    standardise,
)
from rlopt.data._validate import LinkageData, as_frame, validate_pair, validate_table

__all__ = [
    "CENSUS_ATTRIBUTES",
    "EIA_ATTRIBUTES",
    "load_census",
    "load_eia",
    "load_table",
    "LinkageData",
    "validate_pair",
    "validate_table",
    "as_frame",
    "Standardisation",
    "standardise",
    "column_scale",
    "column_sd",
    "squared_diffs",
    "diff_chunks",
    "chunk_rows",
    "DEFAULT_CHUNK_BYTES",
]
