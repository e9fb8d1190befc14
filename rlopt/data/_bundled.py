"""The bundled CASC reference files and a reader for users' own tables."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pandas as pd

from rlopt.exceptions import InputError

__all__ = ["load_census", "load_eia", "load_table", "CENSUS_ATTRIBUTES", "EIA_ATTRIBUTES"]

CENSUS_ATTRIBUTES = (
    "AFNLWGT", "AGI", "EMCONTRB", "FEDTAX", "PTOTVAL", "STATETAX", "TAXINC",
    "POTHVAL", "INTVAL", "PEARNVAL", "FICA", "WSALVAL", "ERNVAL",
)
"""The 13 numerical attributes of the Census file, in file order."""

EIA_ATTRIBUTES = (
    "RESREVENUE", "RESSALES", "COMREVENUE", "COMSALES", "INDREVENUE",
    "INDSALES", "OTHREVENUE", "OTHRSALES", "TOTREVENUE", "TOTSALES",
)
"""The 10 numerical attributes of the EIA file used in the literature (its
identifier and categorical columns UTILITYID, UTILNAME, STATE, YEAR, MONTH are
left out; YEAR is constant)."""


def _read_bundled(name: str) -> pd.DataFrame:
    with resources.files("rlopt.data").joinpath("files", name).open("rb") as handle:
        return pd.read_csv(handle)


def load_census() -> pd.DataFrame:
    """The CASC "Census" reference file: 1080 records, 13 numerical attributes.

    Returns
    -------
    DataFrame of shape (1080, 13)
        Columns :data:`CENSUS_ATTRIBUTES`.

    References
    ----------
    R. Brand, J. Domingo-Ferrer, J. M. Mateo-Sanz, "Reference data sets to test
    and compare SDC methods for protection of numerical microdata", CASC (2002).
    """
    return _read_bundled("census.csv")


def load_eia() -> pd.DataFrame:
    """The CASC "EIA" reference file: 4092 records, 15 columns.

    Five identifier/categorical columns (UTILITYID, UTILNAME, STATE, YEAR,
    MONTH) and the ten numerical attributes :data:`EIA_ATTRIBUTES`; select
    those for linkage (``load_eia()[list(EIA_ATTRIBUTES)]``).
    """
    return _read_bundled("eia.csv")


def load_table(path: str | Path, columns: list[str] | None = None) -> pd.DataFrame:
    """Read a user's table from CSV or Parquet (chosen by the file suffix).

    Parameters
    ----------
    path : str or Path
        A ``.csv`` (optionally compressed, e.g. ``.csv.gz``) or ``.parquet`` file.
    columns : list of str, default=None
        Keep only these columns, in this order; every name must exist.

    Raises
    ------
    InputError
        If the file does not exist, its format is not recognised, or a requested
        column is missing.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"file not found: {str(path)!r}")
    suffixes = [s.lower() for s in path.suffixes]
    if ".parquet" in suffixes or ".pq" in suffixes:
        frame = pd.read_parquet(path)
    elif ".csv" in suffixes or ".txt" in suffixes:
        frame = pd.read_csv(path)
    else:
        raise InputError(
            f"cannot read {str(path)!r}: expected a .csv or .parquet file, got suffix "
            f"{path.suffix!r}"
        )
    if columns is not None:
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise InputError(
                f"column(s) {missing} not found in {str(path)!r}; available: "
                f"{list(map(str, frame.columns))}"
            )
        frame = frame[list(columns)]
    return frame
