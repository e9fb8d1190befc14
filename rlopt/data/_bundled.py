"""The bundled files and a reader for users' own tables.

:data:`BUNDLED_FILES` is the one registry of the bundled files (the CASC Census and
EIA, the acs12 and CPS1985 survey extracts): each name with its loader, its default
columns and its description. ``rlopt data``, the web application's forms and the
transparency experiment read it; a new bundled file is its CSV under ``files/``, its
loader and one entry here."""

from __future__ import annotations

import csv
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pandas as pd

from rlopt.exceptions import InputError

__all__ = [
    "BUNDLED_FILES",
    "BundledFile",
    "load_census",
    "load_eia",
    "load_acs12",
    "load_cps1985",
    "load_table",
    "CENSUS_ATTRIBUTES",
    "EIA_ATTRIBUTES",
    "ACS12_ORDINAL",
    "CPS1985_ORDINAL",
]

CENSUS_ATTRIBUTES = (
    "AFNLWGT",
    "AGI",
    "EMCONTRB",
    "FEDTAX",
    "PTOTVAL",
    "STATETAX",
    "TAXINC",
    "POTHVAL",
    "INTVAL",
    "PEARNVAL",
    "FICA",
    "WSALVAL",
    "ERNVAL",
)
"""The 13 numerical attributes of the Census file, in file order."""

EIA_ATTRIBUTES = (
    "RESREVENUE",
    "RESSALES",
    "COMREVENUE",
    "COMSALES",
    "INDREVENUE",
    "INDSALES",
    "OTHREVENUE",
    "OTHRSALES",
    "TOTREVENUE",
    "TOTSALES",
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


ACS12_ORDINAL: dict[str, tuple[str, ...]] = {"edu": ("hs or lower", "college", "grad")}
"""The ordered attribute of acs12 and its levels from lowest to highest (``--ordinal``)."""

CPS1985_ORDINAL: dict[str, tuple[str, ...]] = {}
"""CPS1985 has no ordered category (its education is a number of years)."""


def _with_order(frame: pd.DataFrame, ordinal: dict[str, tuple[str, ...]]) -> pd.DataFrame:
    for name, levels in ordinal.items():
        frame[name] = pd.Categorical(frame[name], categories=list(levels), ordered=True)
    return frame


def load_acs12() -> pd.DataFrame:
    """The American Community Survey 2012 extract: 2000 records, 13 attributes.

    Numeric: income, hrs_work, age, time_to_work; ordinal: edu (an ordered
    ``Categorical``, :data:`ACS12_ORDINAL`); nominal: employment, race, gender,
    citizen, lang, married, disability, birth_qrtr. Missing values (NaN) in
    income, employment, hrs_work, time_to_work, lang and edu, as in the survey.

    Source: R package ``openintro`` (GPL-2 | GPL-3), from the US Census Bureau's
    ACS; see ``rlopt/data/files/SOURCES.md``.
    """
    return _with_order(_read_bundled("acs12.csv"), ACS12_ORDINAL)


def load_cps1985() -> pd.DataFrame:
    """The Current Population Survey 1985 extract: 534 records, 11 attributes.

    Numeric: wage, education (years), experience, age; nominal: ethnicity,
    region, gender, occupation, sector, union, married. No missing values.

    Source: R package ``AER`` (GPL-2 | GPL-3), a random sample of the May 1985
    CPS drawn for Berndt (1991); see ``rlopt/data/files/SOURCES.md``.
    """
    return _read_bundled("cps1985.csv")


@dataclass(frozen=True)
class BundledFile:
    """One bundled file: its loader, the columns linked by default (``None``: every
    column), its ordered categories and its description (``rlopt data --help``)."""

    load: Callable[[], pd.DataFrame]
    description: str
    attributes: tuple[str, ...] | None = None
    ordinal: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def load_attributes(self) -> pd.DataFrame:
        """The file's default columns (:attr:`attributes`; all when ``None``)."""
        frame = self.load()
        return frame if self.attributes is None else frame[list(self.attributes)]


BUNDLED_FILES: dict[str, BundledFile] = {
    "census": BundledFile(load_census, "1080 x 13", CENSUS_ATTRIBUTES),
    "eia": BundledFile(load_eia, "4092 x 10", EIA_ATTRIBUTES),
    "acs12": BundledFile(load_acs12, "2000 x 13, mixed, with blanks", ordinal=ACS12_ORDINAL),
    "cps1985": BundledFile(load_cps1985, "534 x 11, mixed", ordinal=CPS1985_ORDINAL),
}
"""The bundled files by name, in the order ``rlopt data`` lists them."""


_SEPARATORS = {";": "semicolon", "\t": "tab", "|": "vertical bar"}


def _header_names(path: Path, sep: str) -> list[str]:
    """The header row as written (pandas renames a repeated name ``A`` to ``A.1``)."""
    with path.open(newline="", encoding="utf-8-sig", errors="replace") as handle:
        return next(csv.reader(handle, delimiter=sep), [])


def _read_csv(path: Path, sep: str) -> pd.DataFrame:
    if path.stat().st_size == 0:
        raise InputError(f"{str(path)!r} is empty (0 bytes); expected a header row and records")
    try:
        with warnings.catch_warnings():
            # index_col=False: a line with more fields than the header is an error, not an index
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(path, sep=sep, index_col=False)
    except pd.errors.EmptyDataError:
        raise InputError(f"{str(path)!r} has no columns; expected a header row and records") from None
    except (
        pd.errors.ParserError,
        pd.errors.ParserWarning,
        UnicodeDecodeError,
        OSError,
        EOFError,
        zipfile.BadZipFile,
    ) as exc:
        detail = " ".join(str(exc).split())
        raise InputError(
            f"cannot read {str(path)!r} as {'tab' if sep == chr(9) else 'comma'}-"
            f"separated values ({detail}); expected a readable table with the "
            "same number of fields on every line"
        ) from None
    plain = [s.lower() for s in path.suffixes][-1:] in ([".csv"], [".tsv"], [".txt"])
    header = _header_names(path, sep) if plain else []  # compressed files: pandas's names
    repeated = sorted({c for c in header if header.count(c) > 1})
    if repeated:
        raise InputError(
            f"{str(path)!r}: column name(s) {repeated} appear more than once in the "
            "header; expected unique names"
        )
    if frame.shape[1] == 1:
        name = str(frame.columns[0])
        found = [label for mark, label in _SEPARATORS.items() if mark in name and mark != sep]
        if found:
            raise InputError(
                f"{str(path)!r} reads as one column named {name[:60]!r}: it looks "
                f"{found[0]}-separated; expected comma-separated values (.csv) "
                "or tab-separated (.tsv)"
            )
    return frame


def load_table(path: str | Path, columns: list[str] | None = None) -> pd.DataFrame:
    """Read a user's table from CSV, TSV or Parquet (chosen by the file suffix).

    Parameters
    ----------
    path : str or Path
        A ``.csv`` or ``.txt`` (comma-separated), ``.tsv`` (tab-separated), each
        optionally compressed (e.g. ``.csv.gz``), or a ``.parquet`` file.
    columns : list of str, default=None
        Keep only these columns, in this order; every name must exist.

    Raises
    ------
    InputError
        If the file does not exist or is a folder, is empty or has a header only,
        cannot be parsed (ragged lines, not Parquet), repeats a column name, looks
        separated by something else than its suffix says, or a requested column is
        missing.
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{str(path)!r} is a folder; expected a .csv, .tsv or .parquet file")
    if not path.is_file():
        raise InputError(f"file not found: {str(path)!r}")
    suffixes = [s.lower() for s in path.suffixes]
    if ".parquet" in suffixes or ".pq" in suffixes:
        try:
            frame = pd.read_parquet(path)
        except ImportError:
            raise InputError("reading Parquet needs pyarrow: pip install 'rlopt[parquet]'") from None
        except Exception as exc:  # pyarrow's errors have no common public base class
            raise InputError(
                f"cannot read {str(path)!r} as Parquet ({type(exc).__name__}: "
                f"{' '.join(str(exc).split())[:200]}); expected a Parquet file"
            ) from None
    elif ".tsv" in suffixes:
        frame = _read_csv(path, "\t")
    elif ".csv" in suffixes or ".txt" in suffixes:
        frame = _read_csv(path, ",")
    else:
        raise InputError(
            f"cannot read {str(path)!r}: expected a .csv, .tsv or .parquet file, got suffix {path.suffix!r}"
        )
    if len(frame) == 0:
        raise InputError(
            f"{str(path)!r} has a header ({len(frame.columns)} columns) but no "
            "records; expected at least two records"
        )
    if columns is not None:
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise InputError(
                f"column(s) {missing} not found in {str(path)!r}; available: {list(map(str, frame.columns))}"
            )
        frame = frame[list(columns)]
    return frame
