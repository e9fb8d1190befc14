"""``rlopt compare``: every masking method and parameter on one risk-utility map whose
risk axis is the worst case rlopt can prove (or bracket).

Each cell masks the original with one method at one parameter setting, then computes
the worst case (the largest verified count of the learned families, the AM and MD
baselines and the method's transparency attack; the ceiling the families' MILPs
prove), the privacy models the released file satisfies, and its information loss.
A fully synthetic generator's cell has no record to link: its risk is the worst-case
membership advantage (``risk_kind`` ``membership``), placed on the same map, its Pareto
front drawn among cells of its kind. Cells run through the grid runner (local processes
or Dask, resumable).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import version
from numbers import Integral
from pathlib import Path

import numpy as np
import pandas as pd

from rlopt.attacks import ATTACKS
from rlopt.data import KindSpec, load_table, validate_pair
from rlopt.exceptions import DataWarning, InputError, SolverError
from rlopt.experiments.runner import GridRun
from rlopt.families import BASELINES, get_learned_family
from rlopt.masking import MASKING_METHODS, MaskingSpec, masking_spec
from rlopt.masking.grammar import MAX_VALUES, parse_methods, parse_values
from rlopt.masking.methods import PramSpec, fully_synthetic
from rlopt.milp import SolverOptions
from rlopt.risk.measures import distribution_loss, information_loss
from rlopt.risk.pair import measure
from rlopt.risk.permutation import permutation_analysis
from rlopt.status import Status
from rlopt.validation import JOBS, MARGIN, SEED, TIME_LIMIT, Interval, Options, validate_params

__all__ = [
    "CompareCell",
    "Comparison",
    "parse_methods",
    "compare_columns",
    "run_compare_cell",
    "run_compare",
    "pareto_front",
    "LOSSES",
    "MAX_CELLS",
    "MAX_VALUES",
    "parse_values",
]

MAX_CELLS = 2000
"""The most cells one comparison takes."""


@dataclass(frozen=True)
class CompareCell:
    """One masked file of the map: a method at one parameter setting."""

    data_path: str
    data_digest: str
    method: str
    parameters: tuple[tuple[str, float], ...]
    families: tuple[str, ...]
    confidential: tuple[str, ...]
    time_limit: float | None
    margin: float
    threads: int
    seed: int
    bounds: tuple[tuple[str, float, float], ...] = ()  # the published domain, for the DP methods
    kinds: str = ""  # the declared column kinds (KindSpec.to_dict as JSON), "" for none

    def kind_spec(self) -> KindSpec:
        return KindSpec.coerce(json.loads(self.kinds) if self.kinds else None)

    @property
    def label(self) -> str:
        return f"{self.method} " + ", ".join(f"{k}={v:g}" for k, v in self.parameters)

    @property
    def key(self) -> str:
        spec = "-".join(f"{k}{v:g}" for k, v in self.parameters)
        limit = "none" if self.time_limit is None else f"{self.time_limit:g}s"
        if self.kinds:  # declared kinds change every figure: their digest is in the key
            limit += "-k" + hashlib.sha256(self.kinds.encode()).hexdigest()[:8]
        return (
            f"compare-{self.method}-{spec}-seed{self.seed}-{'-'.join(self.families)}-{limit}-"
            f"m{self.margin:g}-{self.data_digest[:10]}"
        )

    def describe(self) -> str:
        return self.label

    def spec(self) -> MaskingSpec:
        fields: dict = dict(self.parameters)
        spec_fields = MASKING_METHODS[self.method].spec.model_fields
        if "seed" in spec_fields:
            fields["seed"] = self.seed
        if self.bounds and "bounds" in spec_fields:
            fields["bounds"] = {column: (low, high) for column, low, high in self.bounds}
        return masking_spec(self.method, **fields)


def _cells(
    data_path: str,
    digest: str,
    n_records: int,
    methods: Sequence[tuple[str, dict[str, list[float]]]],
    *,
    families: Sequence[str] = ("wm",),
    confidential: Sequence[str] = (),
    time_limit: float | None = 60.0,
    margin: float = 1e-5,
    threads: int = 1,
    seed: int = 0,
    bounds: dict[str, tuple[float, float]] | None = None,
    kinds: KindSpec | None = None,
) -> list[CompareCell]:
    """Every method at every combination of its parameter values for the records in
    ``data_path`` (``digest`` and ``n_records`` of that file), each checked now: a bad
    value is an error before any cell runs."""
    for family in families:
        get_learned_family(family)
    SolverOptions(time_limit=time_limit, threads=threads)  # raises on a bad limit
    cells = []
    for method, grid in methods:
        names = list(grid)
        for values in itertools.product(*(grid[n] for n in names)):
            cell = CompareCell(
                data_path, digest, method, tuple(zip(names, values)), tuple(families),
                tuple(confidential), time_limit, margin, threads, seed,
                tuple((c, float(lo), float(hi)) for c, (lo, hi) in (bounds or {}).items()),
                json.dumps(kinds.to_dict(), sort_keys=True) if kinds and kinds != KindSpec() else "",
            )  # fmt: skip
            cell.spec().check(n_records)  # raises on a bad parameter
            cells.append(cell)
    if len(cells) > MAX_CELLS:
        raise InputError(f"{len(cells)} cells; expected at most {MAX_CELLS}")
    return cells


def _masked_pair(cell: CompareCell, spec: MaskingSpec):
    """The original's quasi-identifiers (every column not confidential) and the
    released file: those masked, the confidential ones unchanged."""
    original = load_table(cell.data_path)
    unknown = [c for c in cell.confidential if c not in original.columns]
    if unknown:
        raise InputError(
            f"confidential column(s) {unknown} not in the file; available: {list(original.columns)}"
        )
    qis = [c for c in original.columns if c not in cell.confidential]
    masked = masked_columns(original[qis], cell.kind_spec(), spec)
    if not masked:
        raise InputError(
            f"{spec.method} masks {'categorical' if isinstance(spec, PramSpec) else 'numeric'} attributes "
            f"and the quasi-identifiers {qis} have none; declare categories stored as numbers with "
            "--ordinal or --nominal"
        )
    with warnings.catch_warnings(record=True) as caught:  # said once per run, not per cell
        warnings.simplefilter("always", DataWarning)
        masked_qis = spec.apply(original[masked], columns=masked)
    for warning in caught:
        if not issubclass(warning.category, DataWarning):
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    notes = sorted({str(w.message) for w in caught if issubclass(w.category, DataWarning)})
    released = original.assign(**{c: masked_qis[c] for c in masked})
    return original[qis], released, qis, notes


def masked_columns(frame: pd.DataFrame, kinds: KindSpec, spec: MaskingSpec) -> list[str]:
    """The quasi-identifiers a method masks, by the kinds its transparency attack reads
    too: PRAM and randomized response the categorical attributes (declared ordinal or
    nominal, or text), a numeric method the others, recoding and suppression all."""
    declared = set(kinds.ordinal) | set(kinds.nominal)
    numeric = [c for c in frame.columns if c not in declared and pd.api.types.is_numeric_dtype(frame[c])]
    if isinstance(spec, PramSpec):
        return [c for c in frame.columns if c not in numeric]
    if MASKING_METHODS[spec.method].categorical:
        return list(frame.columns)
    return numeric


def _worst_case(cell: CompareCell, data, spec: MaskingSpec) -> dict:
    """The cell's worst case (:func:`rlopt.risk.pair.measure`, without PLD: the map's
    risk axis is the distance-based worst case and the method's transparency attack),
    flattened into its row. A family whose solve fails fails the cell (the runner says
    why), so that no cell's risk silently omits a family."""
    options = SolverOptions(time_limit=cell.time_limit, threads=cell.threads)
    measured = measure(
        data,
        cell.families,
        margin=cell.margin,
        options=options,
        attack=spec if spec.method in ATTACKS else None,
        with_pld=False,
    )
    if measured.failures:
        raise SolverError("; ".join(f"{family}: {why}" for family, why in measured.failures.items()))
    row: dict = {f"{name}_rate": measured.baselines[name].rate for name in BASELINES}
    if measured.attack is not None:
        row["attack_rate"] = measured.attack.rate
    for family in cell.families:
        figures = measured.family(family)
        row[f"{family}_rate"] = figures.rate
        row[f"{family}_bound_rate"] = figures.bound_rate
        row[f"{family}_status"] = str(figures.status)
    worst = measured.worst
    return row | {
        "risk": worst.n_correct / data.n_records,
        "risk_upper": worst.upper / data.n_records,
        "risk_status": str(worst.status),
        "risk_source": worst.source,
    }


SYNTHETIC_HOLDOUT = 0.3
"""The share of the records a fully synthetic cell keeps out of its generator's training:
the membership attack's non-members."""

SYNTHETIC_FOLDS = 5
"""The folds of a fully synthetic cell's out-of-sample advantage (its map figure)."""


def _synthetic_cell(cell: CompareCell, spec: MaskingSpec) -> dict:
    """A fully synthetic cell's row (Ctrl-C: ``KeyboardInterrupt``, as in a masked file's
    cell): its records are nobody's, so its risk is the
    membership attack's advantage ``TPR - FPR`` (:mod:`rlopt.risk.membership`, ``risk_kind``
    ``membership``): the original's records split with :data:`SYNTHETIC_HOLDOUT` held out
    (the cell's seed), the generator given the rest, the families among wm, wm_m and owa
    (wm when none is). ``risk`` is the calibrated figure, out of sample over
    :data:`SYNTHETIC_FOLDS` folds, fewer on a file too small for them, none below 2 records
    of each class per fold (then ``risk`` is the in-sample figure) (``risk_low``, ``risk_upper``: its 95 % interval;
    ``risk_status`` ``estimate``); the in-sample worst case, proven or bracketed, is beside
    it (``membership_in_sample``, ``_upper``, ``_status``). Its utility is the information
    loss that needs no record alignment (:func:`rlopt.risk.measures.distribution_loss`)
    of the synthetic file against its training records."""
    from rlopt.risk.membership import membership_risk, split_release
    from rlopt.risk.membership.calibration import most_folds
    from rlopt.risk.membership.milp import membership_families

    original = load_table(cell.data_path)
    qis = [c for c in original.columns if c not in cell.confidential]
    columns = masked_columns(original[qis], cell.kind_spec(), spec)
    with warnings.catch_warnings(record=True) as caught:  # said once per run, not per cell
        warnings.simplefilter("always", DataWarning)
        members, holdout, synthetic = split_release(
            original[columns], spec, holdout_share=SYNTHETIC_HOLDOUT, seed=cell.seed
        )
    notes = sorted({str(w.message) for w in caught if issubclass(w.category, DataWarning)})
    families = [f for f in cell.families if f in membership_families()] or ["wm"]
    # as many folds as each keeps 2 records of each class to learn from (0: too few records)
    folds = most_folds(len(members), len(holdout), SYNTHETIC_FOLDS)
    result = membership_risk(
        members, holdout, synthetic, families=families, time_limit=cell.time_limit,
        threads=cell.threads, seed=cell.seed, folds=folds, anchors=False,
    )  # fmt: skip
    if result.interrupted:  # Ctrl-C: the map stops here, as it does in a masked file's cell
        raise KeyboardInterrupt
    row = {"n_records": len(original), "n_attributes": len(columns)} | _membership_row(
        result, notes, cell.label
    )
    row |= distribution_loss(members, synthetic)
    row |= _model_columns(synthetic, list(synthetic.columns), [])
    notes.append(
        f"fully synthetic: membership advantage of {', '.join(families)} out of sample "
        f"({folds} folds), {len(holdout)} of {len(original)} records held out"
    )
    return row | {"notes": " | ".join(notes)}


def _membership_row(result, notes: list[str], label: str) -> dict:
    """A fully synthetic cell's risk columns: the out-of-sample advantage with its
    interval (the in-sample figure where no folds ran, said in ``notes``), the in-sample
    worst case and each family's figure beside it."""
    crossed = result.out_of_sample
    row: dict = {}
    for family, figure in result.families.items():
        row[f"{family}_rate"] = figure.lower.advantage
        row[f"{family}_bound_rate"] = figure.ceiling
        row[f"{family}_status"] = str(figure.status)
    if crossed is None:  # too few records for folds: the in-sample figure, as it is
        row |= {"risk": result.worst.advantage, "risk_upper": result.upper, "risk_status": str(result.status)}
        smallest = min(result.n_members, result.n_holdout)
        notes.append(f"{label}: {smallest} held-out or member records, too few for folds: in sample only")
    else:
        row |= {
            "risk": crossed.advantage,
            "risk_low": crossed.interval[0],
            "risk_upper": crossed.interval[1],
            "risk_status": str(Status.ESTIMATE),
            "membership_auc": crossed.auc,
        }
    row |= {
        "membership_in_sample": result.worst.advantage,
        "membership_in_sample_upper": result.upper,
        "membership_in_sample_status": str(result.status),
        "risk_source": result.worst.family,
        "risk_kind": "membership",
        "fixed_dcr": result.fixed.advantage,
        "dcr_share": result.dcr_share,
    }
    return row


def run_compare_cell(cell: CompareCell) -> dict:
    """Mask, then the worst case, the privacy models and the information loss (a fully
    synthetic generator: :func:`_synthetic_cell`)."""
    started = time.perf_counter()
    spec = cell.spec()
    head = {
        "method": cell.method,
        "parameters": ", ".join(f"{k}={v:g}" for k, v in cell.parameters),
        "label": cell.label,
        "seed": cell.seed,
    }
    tail = {"rlopt_version": version("rlopt"), "key": cell.key}
    if fully_synthetic(spec):
        synthetic = head | {"epsilon": dict(cell.parameters).get("epsilon")} | _synthetic_cell(cell, spec)
        return synthetic | {"seconds": time.perf_counter() - started} | tail
    original, released, qis, notes = _masked_pair(cell, spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)  # e.g. MDAV's identical records, expected here
        data = validate_pair(original, released[qis], kinds=cell.kind_spec())
    row: dict = head | {
        "n_records": data.n_records,
        "n_attributes": data.n_attributes,
        "epsilon": dict(cell.parameters).get("epsilon"),
    }
    row |= _worst_case(cell, data, spec) | {"risk_kind": "re-identification"}
    row |= information_loss(data)
    if data.numeric_columns:  # the permutation paradigm ranks numbers
        permutation = permutation_analysis(data.subset(data.numeric_columns))
        row["mean_displacement"] = float(permutation["mean_displacement"].mean())
        row["residual_noise"] = float(permutation["residual_noise"].mean())
    row |= _model_columns(released, qis, list(cell.confidential))
    row["notes"] = " | ".join(notes)
    return row | {"seconds": time.perf_counter() - started} | tail


def _model_columns(released: pd.DataFrame, qis: list[str], confidential: list[str]) -> dict:
    """The level of each privacy model the released file reaches (k-anonymity on the
    quasi-identifiers; with confidential attributes, distinct l-diversity, t-closeness
    and the epsilon implied by the ratio distance), by :mod:`rlopt.models`."""
    from rlopt.models import check_models

    names = {
        "k-anonymity": "k_anonymity",
        "l-diversity (distinct)": "l_diversity",
        "t-closeness": "t_closeness",
        "dp-ratio": "dp_ratio_epsilon",
    }
    checks = check_models(released, qis, confidential)
    return {names[c.model]: c.value for c in checks if c.model in names}


def pareto_front(frame: pd.DataFrame, loss: str) -> np.ndarray:
    """Cells no other cell surely dominates: another cell of the same ``risk_kind``
    dominates when its risk's upper end is at most this cell's lower end and its
    ``loss`` at most this one's, one of the two strictly. A cell with an interval is
    dropped only when dominated for every value in its interval, never on its lower end
    alone. A cell without the loss (NaN: a fully synthetic file has no il1s) is not on
    the map, so not on its front, and dominates nothing."""
    low, high = frame["risk"].to_numpy(float), frame["risk_upper"].to_numpy(float)
    if "risk_low" in frame:  # a membership estimate's interval starts below it
        low = np.where(frame["risk_low"].notna(), frame["risk_low"].to_numpy(float), low)
    cost = frame[loss].to_numpy(float)
    kind = frame["risk_kind"].to_numpy(str) if "risk_kind" in frame else np.full(len(frame), "")
    keep = ~np.isnan(cost)
    for i in range(len(frame)):
        # a membership advantage and a re-identification share are not one scale
        better = (
            (kind == kind[i]) & (high <= low[i]) & (cost <= cost[i]) & ((high < low[i]) | (cost < cost[i]))
        )
        keep[i] = keep[i] and not better.any()
    return keep


LOSSES = (
    "il1s",
    "sse",
    "pmse",
    "mean_change",
    "variance_change",
    "covariance_change",
    "correlation_change",
    "categorical_changed",
    "categorical_tv",
)
"""The information-loss measures the map can put across."""


def compare_columns(families: Sequence[str]) -> list[str]:
    """The columns of ``results.csv``, one row per cell."""
    per_family = [f"{f}_{part}" for f in families for part in ("rate", "bound_rate", "status")]
    return [
        "method", "parameters", "label", "seed", "n_records", "n_attributes", "epsilon",
        "risk", "risk_low", "risk_upper", "risk_status", "risk_source", "risk_kind",
        "membership_in_sample", "membership_in_sample_upper", "membership_in_sample_status", "membership_auc",
        "fixed_dcr", "dcr_share",
        *(f"{b}_rate" for b in BASELINES), "attack_rate",
        *per_family, *LOSSES, "mean_displacement", "residual_noise",
        "k_anonymity", "l_diversity", "t_closeness", "dp_ratio_epsilon",
        "notes", "seconds", "rlopt_version", "key",
    ]  # fmt: skip


@dataclass
class Comparison:
    """A finished (or resumed) comparison: the cells' rows, its Pareto front, its files."""

    frame: pd.DataFrame
    front: np.ndarray
    run: GridRun  # the grid runner's record: computed, skipped and failed cells
    csv: Path
    page: Path
    notes: list[str]  # the masking's warnings, each once (e.g. DP domains taken from the data)
    kinds: str = ""  # the attribute kinds, as every output states them
    loss: str = "il1s"  # the map's information loss

    def _repr_html_(self) -> str:
        """A notebook's view: the map's answer and its cells (:mod:`rlopt.report.notebook`)."""
        from rlopt.report.notebook import map_html

        return map_html(self)

    def plot(self, loss: str | None = None):
        """The risk-utility map (``loss`` across, the map's own by default) as a figure."""
        from rlopt.report.notebook import map_figure

        return map_figure(self, loss or self.loss)


def _input_frame(
    original, columns: Sequence[str] | None, confidential: Sequence[str], kinds: KindSpec | None = None
) -> tuple[pd.DataFrame, str]:
    """The original's quasi-identifiers and confidential attributes, checked (cells read
    a copy of it in the results folder, so a resumed run and every worker see the same
    records), and the quasi-identifiers' kinds in words."""
    from rlopt.data._validate import as_frame

    frame = load_table(original) if isinstance(original, (str, Path)) else as_frame(original, name="original")
    both = sorted(set(columns or ()) & set(confidential))
    if both:
        raise InputError(
            f"column(s) {both} given as quasi-identifiers (--columns) and as confidential; "
            "expected each attribute in one role"
        )
    unknown = [c for c in confidential if c not in frame.columns]
    if unknown:
        raise InputError(
            f"confidential column(s) {unknown} not in the file; available: {list(frame.columns)}"
        )
    qis = list(columns) if columns else [str(c) for c in frame.columns if c not in confidential]
    if not qis:
        raise InputError("every column is confidential; expected at least one quasi-identifier to mask")
    with warnings.catch_warnings():  # the kinds and values checked now; warnings belong to the cells
        warnings.simplefilter("ignore")
        checked = validate_pair(frame[qis], frame[qis], kinds=kinds)
    # the kinds alone: the file checked against itself would call every column unmasked
    return frame[qis + list(confidential)], checked.kinds_text()


# (over 60 lines by its 17 documented keyword options: the body is the steps below)
@validate_params(
    {
        "loss": [Options(LOSSES)],
        "jobs": [JOBS],
        "margin": [MARGIN],
        "time_limit": [TIME_LIMIT, None],
        "threads": [Interval(Integral, 1)],
        "seed": [SEED],
    }
)
def run_compare(
    original,
    methods: str | Sequence[tuple[str, dict[str, list[float]]]],
    out: str | Path,
    *,
    families: Sequence[str] = ("wm",),
    columns: Sequence[str] | None = None,
    confidential: Sequence[str] = (),
    time_limit: float | None = 60.0,
    margin: float = 1e-5,
    threads: int = 1,
    seed: int = 0,
    loss: str = "il1s",
    bounds: dict[str, tuple[float, float]] | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    progress: bool = True,
    kinds: KindSpec | dict | None = None,
    threshold: str | float | None = None,
) -> Comparison:
    """Mask ``original`` with every method and parameter of ``methods`` (text as in
    :func:`parse_methods`), assess each masked file (:func:`run_compare_cell`) and
    write ``results.csv``, ``compare.csv`` (with the ``pareto`` column) and
    ``compare.html`` into ``out``. A re-run with the same ``out`` skips finished cells.
    ``threshold`` (``"5%"``, ``0.05``, ``"20 records"``) adds each cell's ``decision``
    (:func:`rlopt.risk.threshold.cell_verdict`)."""
    from rlopt.experiments.runner import run_tasks
    from rlopt.report import render_compare_report
    from rlopt.risk.threshold import Threshold, cell_verdict

    decided = None if threshold is None else Threshold.parse(threshold)  # a clear error first
    out = Path(out)
    parsed = parse_methods(methods) if isinstance(methods, str) else list(methods)
    kind_spec = KindSpec.coerce(kinds)
    frame, kinds_described = _input_frame(original, columns, confidential, kind_spec)
    text = frame.to_csv(index=False)
    data_path = out / "original.csv"
    cells = _cells(
        str(data_path), hashlib.sha256(text.encode()).hexdigest(), len(frame), parsed, families=families,
        confidential=confidential, time_limit=time_limit, margin=margin, threads=threads, seed=seed,
        bounds=bounds, kinds=kind_spec,
    )  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)  # only now: a rejected option leaves nothing behind
    data_path.write_text(text)
    run = run_tasks(
        cells, out, work=run_compare_cell, columns=compare_columns(families), label="compare",
        jobs=jobs, threads=threads, scheduler=scheduler, progress=progress,
    )  # fmt: skip
    frame = run.frame
    if decided is not None:
        frame["decision"] = [cell_verdict(decided, row) for row in frame.to_dict(orient="records")]
    front = pareto_front(frame, loss) if len(frame) else np.zeros(0, dtype=bool)
    csv = out / "compare.csv"
    frame.assign(pareto=front, kinds=kinds_described).to_csv(csv, index=False)
    about = _about(original, frame, run, data_path, confidential, families, kinds_described, time_limit)
    if "risk_kind" in frame and frame[loss].isna().any():
        unplaced = frame.loc[frame[loss].isna() & (frame["risk_kind"] == "membership"), "label"].tolist()
        if unplaced:  # their records are nobody's: no record-aligned loss
            about["notes"].append(
                f"not on the map: {', '.join(unplaced)} (fully synthetic: no {loss}; choose --loss "
                "pmse, mean_change, variance_change, covariance_change or correlation_change)"
            )
    page = render_compare_report(frame, out / "compare.html", loss=loss, front=list(front), about=about)
    return Comparison(frame, front, run, csv, page, about["notes"], kinds_described, loss)


def _about(
    original,
    frame: pd.DataFrame,
    run: GridRun,
    data_path: Path,
    confidential: Sequence[str],
    families: Sequence[str],
    kinds: str,
    time_limit: float | None,
) -> dict:
    """What the map's page says of its input and run: the file, its roles and kinds,
    the families, the limit, the failed cells and the masking's notes (each once)."""
    qis = [c for c in pd.read_csv(data_path, nrows=0).columns if c not in confidential]
    about = {
        "name": Path(original).name if isinstance(original, (str, Path)) else "data frame",
        "n_records": int(frame["n_records"].iloc[0]) if len(frame) else 0,
        "qis": ", ".join(qis),
        "confidential": ", ".join(confidential),
        "families": ", ".join(families),
        "kinds": kinds,
        "time_limit": "no time limit" if time_limit is None else f"{time_limit:g} s",
        "failed": list(run.failed.values()),
    }
    texts: list = list(frame["notes"].dropna()) if "notes" in frame else []
    notes = sorted({note for text in texts for note in str(text).split(" | ") if note})
    about["notes"] = notes
    return about
