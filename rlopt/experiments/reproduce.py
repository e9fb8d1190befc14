"""The published re-identification and timing tables (Tables 1 and 2), regenerated.

:func:`paper_config` is the grid (``configs/paper.yaml`` and
``configs/paper-quick.yaml`` are the same configs written out; a test keeps them
equal); :func:`write_tables` puts our figures next to the published ones.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from rlopt.experiments.config import ExperimentConfig, FileSpec, SolverSpec
from rlopt.families import BASELINES
from rlopt.masking import PUBLISHED_FILES
from rlopt.status import Status
from rlopt.validation import TIME_LIMIT, validate_params

__all__ = ["PUBLISHED_TABLE1", "PUBLISHED_TABLE2", "paper_config", "write_tables"]

_FILES = list(PUBLISHED_FILES)

# Transcribed from the published tables (shared/reference/published_tables.md);
# None where nothing was published.
PUBLISHED_TABLE1: dict[str, list[float | None]] = {  # correct re-identifications, % of N = 400
    "am": [84.00, 68.50, 71.00, 39.75, 78.00, 84.75],
    "md": [94.00, 90.00, 92.75, 88.25, 98.50, 98.00],
    "wm": [95.50, 93.00, 94.25, 90.50, 99.25, 98.75],
    "wm_m": [95.50, 93.00, 94.25, 90.50, 99.25, 98.75],
    "ci": [95.75, 93.75, 94.25, 91.25, 99.75, 99.25],
    "ci_m": [95.75, 93.75, 94.25, 90.50, 99.50, 98.75],
    "sb_nc": [96.75, 94.50, 95.25, 92.25, 99.75, 99.50],
    "sb": [96.75, 94.50, 95.25, 92.25, 99.75, 99.50],
    "sb_pd": [None, None, None, None, None, 99.25],
}
PUBLISHED_TABLE2: dict[str, list[float]] = {  # seconds
    "wm": [29.83, 41.37, 24.33, 718.43, 11.81, 17.77],
    "wm_m": [3.43, 6.26, 2.26, 190.75, 4.34, 6.72],
    "ci": [280.24, 427.75, 242.86, 42731.22, 24.17, 87.43],
    "ci_m": [155.07, 441.99, 294.98, 4017.16, 79.43, 829.81],
    "sb_nc": [32.04, 2793.81, 150.66, 10592.99, 13.65, 14.11],
    "sb": [13.67, 3479.06, 139.59, 169049.55, 13.93, 13.70],
}
QUICK_FAMILIES = ["am", "md", "wm", "wm_m", "ci", "ci_m", "sb_nc", "sb"]
FULL_FAMILIES = ["am", "md", "wm", "wm_m", "owa", "ci", "ci_m", "sb_nc", "sb", "sb_pd"]


@validate_params({"time_limit": [TIME_LIMIT, None]})
def paper_config(quick: bool = False, time_limit: float | None = None) -> ExperimentConfig:
    """The published grid: six files, N = 400. Quick: the families of Tables 1-2,
    one record sample, 60 s per cell (a cell it stops is reported as an interval);
    full: every family of the tables plus owa and sb_pd, five record samples,
    600 s per cell. ``time_limit`` replaces the seconds per cell."""
    if time_limit is None:
        time_limit = 60.0 if quick else 600.0
    return ExperimentConfig(
        name="paper-quick" if quick else "paper",
        files=[FileSpec(preset=name) for name in _FILES],
        families=QUICK_FAMILIES if quick else FULL_FAMILIES,
        samples=[0] if quick else [0, 1, 2, 3, 4],
        solver=SolverSpec(margin=1e-5, time_limit=time_limit, threads=1),
    )


def _fmt(value, digits=2) -> str:
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else f"{value:.{digits}f}"


def _cell_summary(rows: pd.DataFrame, column: str) -> tuple[float | None, str, str]:
    """Mean of ``column`` over the samples of one (family, file), its range and the statuses."""
    if rows.empty:
        return None, "", "not run"
    values = rows[column].astype(float)
    statuses = sorted(set(rows["status"]))
    spread = f"{values.min():.2f}-{values.max():.2f}" if len(values) > 1 else ""
    return float(values.mean()), spread, "/".join(statuses)


def write_tables(results: pd.DataFrame, out: str | Path, *, machine: str | None = None) -> tuple[str, str]:
    """Write ``table1.md``/``.csv`` (rates) and ``table2.md``/``.csv`` (seconds) to ``out``:
    our mean over record samples next to the published figure and the difference.
    Only ``optimal`` (learned) and ``baseline`` rows are proven figures; any other
    status is shown in the cell."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    machine = machine or f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}"
    results = results.assign(rate_pct=100 * results["rate"].astype(float))
    present = list(dict.fromkeys(results["family"]))  # any other family follows the published ones
    families = [f for f in FULL_FAMILIES if f in present] + [f for f in present if f not in FULL_FAMILIES]
    t1_rows: list[dict] = []
    t2_rows: list[dict] = []
    md1 = ["| family | " + " | ".join(_FILES) + " |", "|---|" + "---|" * len(_FILES)]
    md2 = list(md1)
    for family in families:
        cells1, cells2 = [], []
        for k, name in enumerate(_FILES):
            rows = results[(results["family"] == family) & (results["dataset"] == name)]
            text, row = _rate_cell(rows, family, k, name)
            cells1.append(text)
            t1_rows.append(row)
            if family not in BASELINES:
                text, row = _seconds_cell(rows, family, k, name, row["status"])
                cells2.append(text)
                t2_rows.append(row)
        md1.append(f"| {family} | " + " | ".join(cells1) + " |")
        if cells2:
            md2.append(f"| {family} | " + " | ".join(cells2) + " |")
    table1, table2 = _table_texts(results, families, md1, md2, t2_rows, machine)
    (out / "table1.md").write_text(table1)
    (out / "table2.md").write_text(table2)
    pd.DataFrame(t1_rows).to_csv(out / "table1.csv", index=False)
    pd.DataFrame(t2_rows).to_csv(out / "table2.csv", index=False)
    return table1, table2


def _proven(status) -> bool:
    return status in (Status.OPTIMAL, Status.BASELINE)


def _rate_cell(rows: pd.DataFrame, family: str, k: int, name: str) -> tuple[str, dict]:
    """Table 1's cell of ``family`` on published file ``name`` (the ``k``-th): its
    markdown text and its CSV row; a stopped cell is the interval verified..bound."""
    rate, spread, status = _cell_summary(rows, "rate_pct")
    published = PUBLISHED_TABLE1.get(family, [None] * 6)[k]
    diff = None if rate is None or published is None else rate - published
    text = _fmt(rate) + (f" ({spread})" if spread else "")
    upper = None
    if not _proven(status) and not rows.empty and "bound" in rows and rows["bound"].notna().all():
        # a stopped cell is an interval: the verified count up to the proven bound
        upper = float((100 * rows["bound"].astype(float) / rows["n_records"].astype(float)).mean())
        text = f"{_fmt(rate)}..{_fmt(upper)}" + (f" ({spread})" if spread else "")
    if published and rate is not None and upper is not None:  # the difference is an interval too
        text += f" [{_fmt(published)}, {rate - published:+.2f}..{upper - published:+.2f}]"
    elif published:
        text += f" [{_fmt(published)}, {'+' if diff and diff > 0 else ''}{_fmt(diff)}]"
    row = {
        "family": family,
        "file": name,
        "rate": rate,
        "spread": spread,
        "status": status,
        "bound": upper,
        "published": published,
        "difference": diff,
    }
    return text + ("" if _proven(status) else f" **{status}**"), row


def _seconds_cell(rows: pd.DataFrame, family: str, k: int, name: str, status) -> tuple[str, dict]:
    """Table 2's cell: our mean seconds beside the published ones (a ratio only for a
    proven cell: a stopped one is not comparable)."""
    seconds, _, _ = _cell_summary(rows, "total_seconds")
    published = PUBLISHED_TABLE2.get(family, [None] * 6)[k]
    text = _fmt(seconds, 1)
    if published:
        text += (
            f" [{_fmt(published, 1)}, {published / seconds:.1f}x]"
            if _proven(status) and seconds
            else f" [{_fmt(published, 1)}, not comparable]"
        )
    row = {"family": family, "file": name, "seconds": seconds, "status": status, "published": published}
    return text + ("" if _proven(status) else f" **{status}**"), row


def _table_texts(
    results: pd.DataFrame,
    families: list[str],
    md1: list[str],
    md2: list[str],
    t2_rows: list[dict],
    machine: str,
) -> tuple[str, str]:
    """The two markdown files: a shared head (samples, margin, proven cells, machine)."""
    learned = results[~results["family"].isin(BASELINES)]
    n_optimal = int((learned["status"] == Status.OPTIMAL).sum())
    total = sum(r["seconds"] for r in t2_rows if r["seconds"] is not None)
    published_total = sum(v for f in PUBLISHED_TABLE2 if f in families for v in PUBLISHED_TABLE2[f])
    samples = sorted(set(results["sample_seed"].dropna().astype(int)))
    head = (
        f"Record samples (seeds) {samples}; margin {results['margin'].iloc[0]:g}; "
        f"{n_optimal}/{len(learned)} learned cells proven optimal. Machine: {machine}.\n"
    )
    table1 = (
        "# Table 1: correct re-identifications (%), N = 400\n\n"
        + head
        + "Each cell: our mean (min-max over samples) [published, difference]; a cell "
        "stopped by a limit gives the interval verified..bound and its status.\n\n" + "\n".join(md1) + "\n"
    )
    table2 = (
        "# Table 2: seconds per cell (reduce + build + solve; mean over samples)\n\n"
        + head
        + "Each cell: ours [published, published / ours; no ratio for a cell stopped by a limit].\n\n"
        + "\n".join(md2)
        + f"\n\nSum of our per-cell means: {total:.1f} s; "
        f"sum of the published times of the same families: {published_total:.1f} s.\n"
    )
    return table1, table2
