"""Data: the bundled reference files, loaders, the one input validator, standardisation.

- :mod:`rlopt.data._bundled`: the CASC Census and EIA files, the acs12 and CPS1985
  extracts, :func:`load_table` for a user's CSV, TSV or Parquet file;
- :mod:`rlopt.data._validate`: :func:`validate_pair` and :func:`validate_table`, the
  one input validator;
- :mod:`rlopt.data._pair`: :class:`LinkageData`, the two files checked and aligned
  record by record, and :class:`EncodedPair`, the pair as the distances read it,
  encoded once and cached (``data.encoded``; ``data.part(rows)`` keeps it);
- :mod:`rlopt.data._kinds`: column kinds (numeric, ordinal, nominal) and their declaration;
- :mod:`rlopt.data._standardise`: standardisation of each file on its own and the
  per-attribute differences, in chunks of bounded memory.

The names below are what a user calls; the rest of rlopt imports the others from
their module.
"""

from rlopt.data._bundled import (
    ACS12_ORDINAL,
    CENSUS_ATTRIBUTES,
    CPS1985_ORDINAL,
    EIA_ATTRIBUTES,
    load_acs12,
    load_census,
    load_cps1985,
    load_eia,
    load_table,
)
from rlopt.data._kinds import ColumnKind, KindSpec, describe_kinds
from rlopt.data._pair import LinkageData
from rlopt.data._standardise import standardise
from rlopt.data._validate import validate_pair

__all__ = [
    "CENSUS_ATTRIBUTES",
    "EIA_ATTRIBUTES",
    "load_census",
    "load_eia",
    "load_acs12",
    "load_cps1985",
    "ACS12_ORDINAL",
    "CPS1985_ORDINAL",
    "load_table",
    "LinkageData",
    "validate_pair",
    "standardise",
    "ColumnKind",
    "KindSpec",
    "describe_kinds",
]
