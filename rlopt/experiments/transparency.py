"""The published rank-swapping table (Table 5), regenerated: the transparency attack
(RSLD), distance-based (DLD) and probabilistic (PLD) linkage on the full Census and
EIA files rank-swapped with p = 2..20, over several masking seeds."""

from __future__ import annotations

import os
import platform
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import pandas as pd

from rlopt.attacks.rank_swap import RankWindows, rank_swap_attack
from rlopt.data import LinkageData, validate_pair
from rlopt.data._bundled import BUNDLED_FILES
from rlopt.exceptions import DataWarning, InputError
from rlopt.families import DEFAULT_BASELINE, get_learned_family, learned_families
from rlopt.linkage import dbrl
from rlopt.linkage.probabilistic import DEFAULT_THRESHOLDS, pld
from rlopt.masking import rank_swap
from rlopt.masking.swapping import VARIANTS, rank_window
from rlopt.milp import SolverOptions
from rlopt.milp.pipeline import learn
from rlopt.status import Status

__all__ = [
    "PUBLISHED_TABLE5",
    "P_VALUES",
    "TABLE5_COLUMNS",
    "table5_columns",
    "AttackCell",
    "run_attack_cell",
    "table5_cells",
    "write_table5",
]

P_VALUES = (2, 4, 6, 8, 10, 12, 14, 16, 18, 20)
MARGIN = 1e-5
# Transcribed from shared/reference/published_tables.md, Table 5 (%, p = 2..20).
PUBLISHED_TABLE5 = {
    "census": {
        "rsld": [77.73, 66.65, 54.65, 41.28, 29.21, 19.87, 16.14, 13.81, 12.21, 10.88],
        "dld": [73.52, 58.40, 43.76, 32.13, 23.64, 18.96, 15.63, 13.59, 11.50, 10.87],
        "pld": [71.28, 42.92, 22.49, 11.74, 6.03, 3.46, 2.06, 1.29, 0.83, 0.59],
    },
    "eia": {
        "rsld": [43.27, 12.54, 7.69, 6.12, 5.60, 5.39, 5.28, 5.19, 5.20, 5.15],
        "dld": [21.71, 10.61, 7.40, 5.98, 5.19, 4.87, 4.55, 4.54, 4.54, 4.36],
        "pld": [16.85, 4.79, 2.03, 1.12, 0.69, 0.51, 0.32, 0.23, 0.22, 0.18],
    },
}
DATASETS = ("census", "eia")
"""The bundled files (:data:`rlopt.data._bundled.BUNDLED_FILES`) of the published
Table 5, each on its numerical attributes."""
TABLE5_COLUMNS = [  # the attack columns; table5_columns adds the learned families''
    "dataset",
    "p",
    "seed",
    "variant",
    "n_records",
    "n_attributes",
    "window",
    "rsld",
    "rsld_sure",
    "rsld_empty",
    "rsld_missed",
    "rsld_mean_candidates",
    "dld",
    "pld",
    "pld_em_converged",
    "seconds_mask",
    "seconds_rsld",
    "seconds_dld",
    "seconds_pld",
    "rlopt_version",
    "key",
]


def table5_columns(learned: Sequence[str] = ()) -> list[str]:
    """The columns of Table 5's ``results.csv``: the attacks', then four per learned
    family (any registered one) and linkage (``_rsld``: inside the rank windows)."""
    return TABLE5_COLUMNS + [
        f"learned_{f}{suffix}{part}"
        for f in learned
        for suffix in ("", "_rsld")
        for part in ("", "_bound", "_status", "_seconds")
    ]


def _dataset(name: str) -> pd.DataFrame:
    if name not in DATASETS:
        raise InputError(f"dataset {name!r}; expected one of {list(DATASETS)}")
    return BUNDLED_FILES[name].load_attributes()


@dataclass(frozen=True)
class AttackCell:
    """One rank-swapped file (dataset, p, masking seed, variant) and its three attacks."""

    dataset: str
    p: float
    seed: int
    variant: str = "plain"
    thresholds: tuple = DEFAULT_THRESHOLDS
    learned: tuple = ()
    time_limit: float = 60.0

    @property
    def key(self) -> str:
        cuts = "-".join(f"{t:g}" for t in self.thresholds)
        key = f"table5-{self.dataset}-p{self.p:g}-seed{self.seed}-{self.variant}-pld{cuts}"
        if self.learned:
            key += f"-learned-{'-'.join(self.learned)}-{self.time_limit:g}s"
        return key

    def describe(self) -> str:
        return f"{self.dataset} / p {self.p:g} / seed {self.seed} / {self.variant}"


def run_attack_cell(cell: AttackCell) -> dict:
    """Mask the whole file with rank swapping, then run RSLD, DLD and PLD on it (%).

    The attack assumes the published ``p`` (the true one). The records are the
    whole file, all its attributes, each standardised on its own file.
    """
    original = _dataset(cell.dataset)
    started = time.perf_counter()
    masked = rank_swap(original, cell.p, variant=cell.variant, seed=cell.seed)
    seconds = {"mask": time.perf_counter() - started}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)  # EIA's duplicate records, said once below
        data = validate_pair(original, masked)
    window = rank_window(cell.p, data.n_records)
    started = time.perf_counter()
    attack = rank_swap_attack(data, p=cell.p, distance=DEFAULT_BASELINE)  # the same window
    seconds["rsld"] = time.perf_counter() - started
    started = time.perf_counter()
    dld = dbrl(data, distance=DEFAULT_BASELINE)
    seconds["dld"] = time.perf_counter() - started
    started = time.perf_counter()
    prob = pld(data, thresholds=cell.thresholds, seed=cell.seed, max_bytes=64 * 2**20)
    seconds["pld"] = time.perf_counter() - started
    learned = {}
    for name in cell.learned:
        learned.update(_learned_columns(data, name, window, cell.time_limit))
    return {
        "dataset": cell.dataset,
        "p": cell.p,
        "seed": cell.seed,
        "variant": cell.variant,
        "n_records": data.n_records,
        "n_attributes": data.n_attributes,
        "window": window,
        "rsld": 100 * attack.rate,
        "rsld_sure": 100 * attack.sure_rate,
        "rsld_empty": attack.n_empty,
        "rsld_missed": attack.n_missed,
        "rsld_mean_candidates": float(attack.candidates.mean()),
        "dld": 100 * dld.rate,
        "pld": 100 * prob.rate,
        "pld_em_converged": prob.em.converged,
        **{f"seconds_{k}": v for k, v in seconds.items()},
        **learned,
        "rlopt_version": version("rlopt"),
        "key": cell.key,
    }


def _learned_columns(data, name: str, window: int, time_limit: float) -> dict:
    """The worst case of family ``name`` without the attack (DBRL with the best
    distance of the family) and with it (the best distance inside the intersections,
    the intruder's records linked to the masked file as in RSLD)."""
    family = get_learned_family(name)
    options = SolverOptions(time_limit=time_limit, threads=1)
    plain, _ = learn(data, family, margin=MARGIN, options=options)
    swapped = LinkageData(original=data.masked, masked=data.original, columns=data.columns)
    candidates = RankWindows(data.original, data.masked, window).intersection(0, data.n_records)
    inside, _ = learn(swapped, family, margin=MARGIN, options=options, candidates=candidates)
    out: dict[str, float | str | None] = {}
    for suffix, result in (("", plain), ("_rsld", inside)):
        column = f"learned_{name}{suffix}"
        out[column] = None if result.rate is None else 100 * result.rate
        out[f"{column}_bound"] = None if result.bound is None else 100 * result.bound / result.n_records
        out[f"{column}_status"] = result.status
        out[f"{column}_seconds"] = result.seconds["total"]
    return out


def table5_cells(
    datasets: Sequence[str] = DATASETS,
    p_values: Sequence[float] = P_VALUES,
    seeds: Sequence[int] = (0, 1, 2),
    variant: str = "plain",
    learned: Sequence[str] = (),
    time_limit: float = 60.0,
) -> list[AttackCell]:
    """The grid of Table 5: every dataset x p x masking seed; ``learned`` families add
    the worst case with and without the intersection (``time_limit`` s per MILP)."""
    unknown = [f for f in learned if f not in learned_families()]
    if unknown:
        raise InputError(f"learned family name(s) {unknown}; expected some of {list(learned_families())}")
    for name in datasets:
        if name not in DATASETS:
            raise InputError(f"dataset {name!r}; expected one of {list(DATASETS)}")
    if variant not in VARIANTS:
        raise InputError(f"rank swapping variant={variant!r}; expected one of {list(VARIANTS)}")
    for p in p_values:
        rank_window(p, 100)  # raises on a bad p
    return [
        AttackCell(d, float(p), int(s), variant, learned=tuple(learned), time_limit=float(time_limit))
        for d in datasets
        for p in p_values
        for s in seeds
    ]


def _learned_lines(results: pd.DataFrame) -> list[str]:
    """Per p, each learned family's worst case without and with the intersection:
    ``rate`` when proven, ``[rate, bound]`` with the status otherwise (per seed)."""
    names = sorted(
        {
            c[len("learned_") : -len("_status")]
            for c in map(str, results.columns)
            if c.startswith("learned_") and c.endswith("_status") and results[c].notna().any()
        }
    )
    if not names:
        return []
    lines = [
        "",
        "Learned families (worst case over the family's distances; a stopped MILP "
        "gives [verified, bound] and its status):",
        "",
        "| p | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for p in sorted(set(results["p"])):
        rows = results[results["p"] == p]
        texts = []
        for name in names:
            parts = []
            for _, row in rows.iterrows():
                rate, bound, status = (
                    row[f"learned_{name}"],
                    row[f"learned_{name}_bound"],
                    row[f"learned_{name}_status"],
                )
                if pd.isna(status):
                    continue
                parts.append(
                    f"{rate:.2f}" if status == Status.OPTIMAL else f"[{rate:.2f}, {bound:.2f}] {status}"
                )
            texts.append("; ".join(parts))
        lines.append(f"| {p:g} | " + " | ".join(texts) + " |")
    return lines


def _published5(dataset: str, measure: str, p: float) -> float | None:
    """The published Table 5 figure (%), ``None`` for a p the publication did not run."""
    if float(p).is_integer() and int(p) in P_VALUES:
        return PUBLISHED_TABLE5[dataset][measure][P_VALUES.index(int(p))]
    return None


def write_table5(results: pd.DataFrame, out: str | Path, *, machine: str | None = None) -> str:
    """``table5.md``/``table5.csv``: per dataset and p, our mean (min-max over seeds) of
    RSLD, DLD and PLD next to the published figure and the difference."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    machine = machine or f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}"
    rows, lines = [], []
    for dataset in [d for d in DATASETS if d in set(results["dataset"])]:
        lines += [
            f"\n## {dataset}\n",
            "| p | RSLD | sure | DLD | PLD | empty / missed |",
            "|---|---|---|---|---|---|",
        ]
        for p in sorted(set(results.loc[results["dataset"] == dataset, "p"])):
            cell = results[(results["dataset"] == dataset) & (results["p"] == p)]
            texts = []
            for measure in ("rsld", "dld", "pld"):
                values = cell[measure].astype(float)
                published = _published5(dataset, measure, p)
                mean = float(values.mean())
                diff = None if published is None else mean - published
                text = f"{mean:.2f} ({values.min():.2f}-{values.max():.2f})"
                if published is not None:
                    text += f" [{published:.2f}, {diff:+.2f}]"
                texts.append(text)
                rows.append(
                    {
                        "dataset": dataset,
                        "p": p,
                        "measure": measure,
                        "mean": mean,
                        "min": float(values.min()),
                        "max": float(values.max()),
                        "n_seeds": len(values),
                        "published": published,
                        "difference": diff,
                    }
                )
            sure = cell["rsld_sure"].astype(float).mean()
            lines.append(
                f"| {p:g} | {texts[0]} | {sure:.2f} | {texts[1]} | {texts[2]} | "
                f"{int(cell['rsld_empty'].sum())} / {int(cell['rsld_missed'].sum())} |"
            )
        lines += _learned_lines(results[results["dataset"] == dataset])
    seeds = sorted(set(results["seed"].astype(int)))
    variants = sorted(set(results["variant"]))
    text = (
        "# Table 5: rank swapping, % correct re-identifications\n\n"
        f"Masking seeds {seeds}, variant {'/'.join(variants)}; whole files, all attributes. "
        "Each cell: our mean (min-max over seeds) [published, difference]; 'sure' is the "
        "share of records whose intersection is their own record alone; 'empty / missed' "
        "counts, summed over seeds, the empty intersections and the records whose own "
        f"masked record is not in their intersection. Machine: {machine}.\n" + "\n".join(lines) + "\n"
    )
    (out / "table5.md").write_text(text)
    pd.DataFrame(rows).to_csv(out / "table5.csv", index=False)
    return text
