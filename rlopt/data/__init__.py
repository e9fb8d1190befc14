"""Data: the bundled reference files, loaders, the one input validator,
standardisation and the per-attribute squared differences."""

from rlopt.data._bundled import CENSUS_ATTRIBUTES, EIA_ATTRIBUTES, load_census, load_eia, load_table
from rlopt.data._kinds import (
    CATEGORY_UNIT,
    MISSING_POLICIES,
    NOMINAL,
    NUMERIC,
    ORDINAL,
    ColumnKind,
    KindSpec,
    parse_ordinal,
)
from rlopt.data._standardise import (
    DEFAULT_CHUNK_BYTES,
    Standardisation,
    attribute_deltas,
    categorical_columns,
    chunk_rows,
    column_scale,
    column_sd,
    diff_chunks,
    pairwise_deltas,
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
    "attribute_deltas",
    "pairwise_deltas",
    "categorical_columns",
    "ColumnKind",
    "KindSpec",
    "parse_ordinal",
    "NUMERIC",
    "ORDINAL",
    "NOMINAL",
    "MISSING_POLICIES",
    "CATEGORY_UNIT",
    "diff_chunks",
    "chunk_rows",
    "DEFAULT_CHUNK_BYTES",
]
