"""An independent check of every ``optimal`` claim on small generated files.

    python -m tests.e2e.audit_proofs --files 150 --seed 0

Each file (seeded, 20-40 records) is a numeric one masked by noise, MDAV or rank
swapping, or a mixed one (a nominal or ordinal attribute among 1-3 numeric ones)
masked by PRAM, recoding or local suppression. Each family is learned with rlopt's
defaults; every claim ``optimal`` is checked against

- the plain model of docs/method.md (uniform big-C, no reduction, no start, no search),
  which must also prove the same count, or stop with an interval that holds it;
- with ``--scip``, the plain model again solved by SCIP, the second solver
  (:func:`rlopt.milp.pipeline.verify`), under the same rule;
- brute force over the one free weight of wm, wm_m and owa on two attributes;
- the parameter-space branch and bound (``rlopt.milp.ceilings.regions``) for wm, wm_m and owa;
- the containments between families (e.g. ci >= wm, sb >= sb_nc >= wm) where both are optimal.

Prints one row per family (solves, claims optimal, claims checked by each method,
disagreements) and lists every disagreement; ``kill PID`` ends it after the file under
way, with the table so far. ``tests/e2e/test_proofs.py`` runs the same audit at a small
size (and at 200 files with ``-m slow``); this module holds no test itself.
"""

from __future__ import annotations

import argparse
import signal
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rlopt.data import validate_pair
from rlopt.data._standardise import squared_diffs
from rlopt.exceptions import DataWarning
from rlopt.families import get_learned_family, learned_families
from rlopt.learn import LearnedDistanceLinkage
from rlopt.masking import additive_noise, global_recode, local_suppression, microaggregate, pram, rank_swap
from rlopt.masking.categorical import pram_matrices
from rlopt.milp import SolverOptions
from rlopt.milp.ceilings.regions import branch_and_bound, supports
from rlopt.milp.margins import PairMargins
from rlopt.milp.pipeline import verify
from rlopt.status import Status

MARGIN = 1e-5
"""rlopt's default margin."""

RECIPES = ("noise", "mdav", "rank_swap", "pram", "recoding", "suppression")
"""The masking of file ``seed``: ``RECIPES[seed % 6]``; the first three numeric, the others mixed."""

SMALL_FAMILIES = ("wm", "owa", "ci", "sb_nc")
"""The families of the default test."""

CONTAINMENTS = (
    ("ci", "wm"),
    ("ci", "owa"),
    ("ci", "ci_m"),
    ("ci", "ci_super"),
    ("ci", "ci_k"),
    ("ci_k", "wm"),
    ("ci_m", "wm_m"),
    ("ci_super", "wm"),
    ("wm", "wm_m"),
    ("sb", "sb_nc"),
    ("sb_nc", "sb_pd"),
    ("sb_nc", "wm"),
)
"""``(larger, smaller)``: every parameter of the smaller family gives a distance of the larger."""

ROTATION = (("wm_m", "ci_m"), ("ci_k", "ci_super"), ("sb_pd", "sb"))
"""With ``families="rotate"``: file ``seed`` runs :data:`SMALL_FAMILIES` and ``ROTATION[seed % 3]``."""

ONE_WEIGHT = ("wm", "wm_m", "owa")
"""The families of one free weight on two attributes (brute force) and of a simplex (region search)."""

LEVELS = ("a", "b", "c", "d", "e")


@dataclass
class ProofFile:
    """One generated pair of files; ``kinds`` is what ``fit(..., kinds=)`` takes."""

    seed: int
    recipe: str
    original: pd.DataFrame
    masked: pd.DataFrame
    kinds: dict | None = None

    @property
    def label(self) -> str:
        shape = f"{len(self.original)}x{self.original.shape[1]}"
        return f"seed {self.seed} {self.recipe} {shape}"


def make_file(seed: int) -> ProofFile:
    """The file of ``seed`` (deterministic): numeric for noise, MDAV, rank swapping; one
    nominal or ordinal attribute among 1-3 numeric ones for PRAM, recoding, suppression."""
    rng = np.random.default_rng([seed, 20261201])
    recipe = RECIPES[seed % len(RECIPES)]
    n_records = int(rng.integers(20, 41))
    numeric = recipe in ("noise", "mdav", "rank_swap")
    n_numeric = int(rng.integers(2, 5)) if numeric else int(rng.integers(1, 4))
    columns = [f"x{k}" for k in range(n_numeric)]
    original = pd.DataFrame(
        rng.normal(size=(n_records, n_numeric)) * rng.uniform(0.5, 20, n_numeric), columns=columns
    )
    if recipe == "noise":
        masked = additive_noise(original, float(rng.choice([0.1, 0.3, 1.0])), seed=seed)
        return ProofFile(seed, recipe, original, masked)
    if recipe == "mdav":
        k = int(rng.integers(2, 4))
        if rng.random() < 0.5:  # one group: identical masked records
            masked = microaggregate(original, k)
        else:  # each attribute on its own
            masked = microaggregate(original, groups=[([c], k) for c in columns])
        return ProofFile(seed, recipe, original, masked)
    if recipe == "rank_swap":
        return ProofFile(
            seed, recipe, original, rank_swap(original, float(rng.choice([10, 25, 50])), seed=seed)
        )
    n_levels = int(rng.integers(3, 6))
    levels = list(LEVELS[:n_levels])
    weights = rng.dirichlet(np.full(n_levels, 1.5))
    original["c"] = rng.choice(levels, n_records, p=weights)
    original.loc[: n_levels - 1, "c"] = levels  # every level present
    ordinal = bool(rng.random() < 0.5)
    kinds = {"ordinal": {"c": levels}} if ordinal else None
    if recipe == "pram":
        masked = pram(
            original, pram_matrices(original, ["c"], theta=float(rng.uniform(0.5, 0.85))), seed=seed
        )
        masked = additive_noise(masked, float(rng.choice([0.1, 0.3])), seed=seed, columns=columns)
    elif recipe == "recoding":
        first = int(rng.integers(0, n_levels - 1))
        bases = {c: float(original[c].std() * rng.choice([0.5, 1.0])) for c in columns}
        masked = global_recode(original, merge={"c": [levels[first : first + 2]]}, base=bases)
    else:
        masked = local_suppression(original, ["c"], int(rng.integers(3, 7)))
        masked = additive_noise(masked, float(rng.choice([0.1, 0.3])), seed=seed, columns=columns)
    return ProofFile(seed, recipe, original, masked, kinds)


def _fit(name: str, proof_file: ProofFile, margin: float, time_limit: float, **kwargs):
    learner = LearnedDistanceLinkage(name, margin=margin, time_limit=time_limit, threads=1, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        return learner.fit(proof_file.original, proof_file.masked, kinds=proof_file.kinds).result_


def _differences(proof_file: ProofFile) -> np.ndarray:
    """``diff[i, j, k]``: masked record ``i`` against original ``j``, attribute ``k``; on a
    numeric file from z-scores computed here, on a mixed one by rlopt's encoding."""
    if proof_file.kinds is None and all(
        pd.api.types.is_numeric_dtype(c) for _, c in proof_file.original.items()
    ):
        za, zb = (f.to_numpy(float) for f in (proof_file.masked, proof_file.original))
        za, zb = ((z - z.mean(axis=0)) / z.std(axis=0, ddof=1) for z in (za, zb))
        return (za[:, None, :] - zb[None, :, :]) ** 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        data = validate_pair(proof_file.original, proof_file.masked, kinds=proof_file.kinds)
    return squared_diffs(*data.standardised())


def one_weight_optimum(diff: np.ndarray, lower: float, margin: float, tol: float = 1e-9) -> int:
    """Most records re-identified by ``d = p x_0 + (1 - p) x_1``, ``p`` in ``[lower, 1 - lower]``
    (``diff``: ``N x N x 2``), by evaluating every candidate ``p``: the ends, and each ``p`` at
    which a pair's margin ``d(a_i, b_j) - d(a_i, b_i)`` equals ``margin``. Each record's set
    of ``p`` is a closed interval whose ends are among them, so the best is one of them."""
    n = diff.shape[0]
    own = diff[np.arange(n), np.arange(n)]
    g = diff - own[:, None, :]  # g_ij(p) = p g0 + (1 - p) g1
    g0, g1 = g[..., 0], g[..., 1]
    slope = g0 - g1
    off = ~np.eye(n, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        roots = (margin - g1) / slope
    roots = roots[off & (np.abs(slope) > 1e-15)]
    candidates = np.unique(
        np.concatenate([[lower, 1 - lower], roots[(roots >= lower) & (roots <= 1 - lower)]])
    )
    best = 0
    for start in range(0, candidates.size, 256):
        p = candidates[start : start + 256, None, None]
        values = p * g0[None] + (1 - p) * g1[None]
        holds = (values >= margin - tol) | ~off[None]
        best = max(best, int(holds.all(axis=2).sum(axis=1).max()))
    return best


def brute_force(name: str, diff: np.ndarray, margin: float) -> int:
    """The optimum of wm, wm_m or owa on a two-attribute file by :func:`one_weight_optimum`."""
    if name == "owa":
        diff = -np.sort(-diff, axis=2)  # w_1 weights the larger difference
    lower = get_learned_family("wm_m").lower(2) if name == "wm_m" else 0.0
    return one_weight_optimum(diff, lower, margin)


def region_search(
    name: str, proof_file: ProofFile, margin: float, tol: float, seconds: float, floor: int = 0
):
    """The parameter-space branch and bound on its own (one process) for ``seconds``;
    ``floor``: a count it need not beat (0: none, the search finds the optimum itself)."""
    family = get_learned_family(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        data = validate_pair(proof_file.original, proof_file.masked, kinds=proof_file.kinds)
    za, zb = data.standardised()
    margins = PairMargins.build(za, zb, family)
    vertices = family.simplex_vertices(za.shape[1])
    deadline = time.perf_counter() + seconds
    return branch_and_bound(margins, vertices, margin=margin, tol=tol, deadline=deadline, lower=lambda: floor)


@dataclass
class Audit:
    """Counts and disagreements of one audit."""

    files: int = 0
    containments: int = 0  # pairs of optimal claims of a family and one it contains
    counts: dict = field(default_factory=dict)  # family -> Counter
    disagreements: list = field(default_factory=list)
    seconds: float = 0.0
    interrupted: bool = False

    def add(self, name: str, key: str, n: int = 1) -> None:
        self.counts.setdefault(name, Counter())[key] += n

    def disagree(self, proof_file: ProofFile, name: str, claimed, reference: str) -> None:
        self.disagreements.append(
            f"{proof_file.label} (kinds {proof_file.kinds}): {name} claims {claimed}; {reference}"
        )
        self.add(name, "disagreements")


def check_file(
    proof_file: ProofFile,
    families,
    audit: Audit,
    *,
    margin: float = MARGIN,
    time_limit: float = 60.0,
    plain_time_limit: float | None = None,
    region_seconds: float = 10.0,
    scip: bool = False,
) -> dict:
    """Learn each family on ``proof_file`` and check its claim (see the module) into
    ``audit``; the optimal counts, by family (``None`` where not optimal). ``scip``: the
    plain model solved by SCIP too."""
    plain_time_limit = time_limit if plain_time_limit is None else plain_time_limit
    n_attributes = proof_file.original.shape[1]
    diff = _differences(proof_file) if n_attributes == 2 else None
    optimum: dict[str, int | None] = {}
    for name in families:
        optimum[name] = None
        audit.add(name, "solves")
        try:
            claim = _fit(name, proof_file, margin, time_limit)
        except Exception as exc:  # an error of rlopt is a finding, not the end of the audit
            audit.disagree(proof_file, name, "nothing", f"the fit raised {type(exc).__name__}: {exc}")
            continue
        low, high = claim.n_correct_verified, claim.bound
        if claim.status != Status.OPTIMAL:
            audit.add(name, "not optimal")
            claimed = f"[{low}, {high}] ({claim.status})"
        else:
            audit.add(name, "optimal")
            optimum[name] = low
            claimed = str(low)
            if not claim.n_correct == low == high:
                audit.disagree(
                    proof_file, name, claimed, f"its own n_correct {claim.n_correct}, bound {high}"
                )
            _check_by_plain_model(proof_file, name, low, audit, margin, plain_time_limit)
            if scip:
                _check_by_scip(proof_file, name, claim, audit, plain_time_limit)
        low = 0 if low is None else low
        high = proof_file.original.shape[0] if high is None else high
        if diff is not None and name in ONE_WEIGHT:
            audit.add(name, "brute force")
            exact = brute_force(name, diff, margin)
            if not low <= exact <= high:
                audit.disagree(proof_file, name, claimed, f"brute force over the weight gives {exact}")
        if name in ONE_WEIGHT and supports(get_learned_family(name), n_attributes):
            _check_by_regions(
                proof_file, name, (low, high), claimed, claim.recount_tol, audit, margin, region_seconds
            )
    for larger, smaller in CONTAINMENTS:
        big, small = optimum.get(larger), optimum.get(smaller)
        if big is not None and small is not None:
            audit.containments += 1
            if big < small:
                audit.disagree(proof_file, larger, big, f"{smaller}, which it contains, proves {small}")
    return optimum


def _check_by_plain_model(proof_file, name, count, audit, margin, time_limit) -> None:
    """The plain model must prove ``count`` too, or stop with an interval that holds it."""
    try:
        plain = _fit(name, proof_file, margin, time_limit, big_c="uniform", reductions="none")
    except Exception as exc:
        audit.disagree(proof_file, name, count, f"the plain model raised {type(exc).__name__}: {exc}")
        return
    low, high = plain.n_correct_verified, plain.bound
    if plain.status == Status.OPTIMAL:
        audit.add(name, "plain: proven")
        if low != count:
            audit.disagree(proof_file, name, count, f"the plain model proves {low}")
        return
    audit.add(name, "plain: interval")
    if (low is not None and low > count) or (high is not None and high < count):
        audit.disagree(
            proof_file, name, count, f"the plain model's interval [{low}, {high}] ({plain.status})"
        )


def _check_by_scip(proof_file, name, claim, audit, time_limit) -> None:
    """The plain model solved by SCIP (the other solver) must prove the claimed count too,
    or stop with an interval that holds it."""
    count = claim.n_correct_verified
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataWarning)
            data = validate_pair(proof_file.original, proof_file.masked, kinds=proof_file.kinds)
            options = SolverOptions(time_limit=time_limit, threads=1)
            v = verify(data, get_learned_family(name), claim, options=options, solver="scip")
    except Exception as exc:
        audit.disagree(proof_file, name, count, f"SCIP's plain model raised {type(exc).__name__}: {exc}")
        return
    low, high = v["n_correct"], v["bound"]
    if v["status"] == Status.OPTIMAL:
        audit.add(name, "scip: proven")
        if low != count:
            audit.disagree(proof_file, name, count, f"SCIP proves {low} on the plain model")
        return
    audit.add(name, "scip: interval")
    if v["agrees"] is False or (low is not None and low > count) or (high is not None and high < count):
        audit.disagree(proof_file, name, count, f"SCIP's interval [{low}, {high}] ({v['status']})")


def _check_by_regions(proof_file, name, interval, claimed, tol, audit, margin, seconds) -> None:
    """The region search alone for ``seconds``: its optimum must lie in the claimed
    interval. Where it does not prove in time, again with the claim's lower end as a count
    found elsewhere, which decides only that no parameter beats an optimal claim."""
    low, high = interval
    search = region_search(name, proof_file, margin, tol, seconds)
    if search.proven:
        audit.add(name, "regions: optimum")
        if not low <= search.lower <= high:
            audit.disagree(proof_file, name, claimed, f"the region search proves {search.lower}")
        return
    if search.upper < low or search.lower > high:
        audit.disagree(
            proof_file, name, claimed, f"the region search's interval [{search.lower}, {search.upper}]"
        )
    if low != high:
        audit.add(name, "regions: open")
        return
    helped = region_search(name, proof_file, margin, tol, seconds, floor=low)
    if helped.proven:
        audit.add(name, "regions: ceiling")
        if helped.upper != low:
            audit.disagree(
                proof_file, name, claimed, f"the region search finds {helped.lower} (a parameter beats it)"
            )
    else:
        audit.add(name, "regions: open")
        if helped.upper < low:
            audit.disagree(proof_file, name, claimed, f"the region search's ceiling {helped.upper}")


def families_of(seed: int, families) -> tuple[str, ...]:
    """The families learned on file ``seed``: ``families``, or with ``"rotate"`` the small
    ones and one pair of the others in turn (every learned family every third file)."""
    if families == "rotate":
        return SMALL_FAMILIES + ROTATION[seed % len(ROTATION)]
    return tuple(families)


def run_audit(
    seeds,
    families,
    *,
    margin: float = MARGIN,
    time_limit: float = 60.0,
    region_seconds: float = 10.0,
    scip: bool = False,
    progress=None,
    stop=lambda: False,
) -> Audit:
    """The audit of the files of ``seeds``; ``scip``: SCIP checks each claim too;
    ``progress(proof_file, optimum, seconds)`` after each file; ``stop()`` true ends it
    before the next file."""
    audit = Audit()
    t0 = time.perf_counter()
    try:
        for seed in seeds:
            if stop():
                audit.interrupted = True
                break
            t1 = time.perf_counter()
            proof_file = make_file(seed)
            audit.files += 1
            optimum = check_file(
                proof_file, families_of(seed, families), audit, margin=margin, time_limit=time_limit,
                region_seconds=region_seconds, scip=scip,
            )  # fmt: skip
            if progress is not None:
                progress(proof_file, optimum, time.perf_counter() - t1)
    except KeyboardInterrupt:  # the counts so far (the file under way in part)
        audit.interrupted = True
    audit.seconds = time.perf_counter() - t0
    return audit


COLUMNS = (
    "solves",
    "optimal",
    "not optimal",
    "plain: proven",
    "plain: interval",
    "scip: proven",
    "scip: interval",
    "brute force",
    "regions: optimum",
    "regions: ceiling",
    "regions: open",
    "disagreements",
)


def table(audit: Audit) -> str:
    """The counts as a markdown table, one row per family learned and a total."""
    families = [name for name in learned_families() if name in audit.counts]
    lines = ["| family | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    total = Counter()
    for name in families:
        counts = audit.counts.get(name, Counter())
        total.update({k: counts[k] for k in COLUMNS})
        lines.append(f"| {name} | " + " | ".join(str(counts[k]) for k in COLUMNS) + " |")
    lines.append("| all | " + " | ".join(str(total[k]) for k in COLUMNS) + " |")
    lines.append("")
    lines.append(
        f"files: {audit.files}; containment pairs checked (both optimal): {audit.containments}; "
        f"disagreements: {len(audit.disagreements)}; {audit.seconds:.0f} s"
        + (" (stopped early)" if audit.interrupted else "")
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=150, help="number of files (default 150)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first file (default 0)")
    parser.add_argument(
        "--families",
        default="all",
        help="comma-separated learned families, 'all' (the default) or 'rotate' (see ROTATION)",
    )
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per solve (default 60)")
    parser.add_argument(
        "--region-seconds", type=float, default=10.0, help="seconds per region search (default 10)"
    )
    parser.add_argument("--margin", type=float, default=MARGIN, help=f"margin (default {MARGIN})")
    parser.add_argument(
        "--scip", action="store_true", help='check each claim with SCIP too (pip install "rlopt[scip]")'
    )
    args = parser.parse_args()
    if args.families in ("all", "rotate"):
        families = learned_families() if args.families == "all" else "rotate"
    else:
        families = tuple(args.families.split(","))

    def progress(proof_file, optimum, seconds):
        figures = " ".join(f"{k}={'-' if v is None else v}" for k, v in optimum.items())
        print(f"{proof_file.label}: {figures} ({seconds:.1f} s)", flush=True)

    seeds = range(args.seed, args.seed + args.files)
    stopped = []
    signal.signal(signal.SIGTERM, lambda *_: stopped.append(True))  # kill PID: the table after this file
    audit = run_audit(
        seeds,
        families,
        margin=args.margin,
        time_limit=args.time_limit,
        region_seconds=args.region_seconds,
        scip=args.scip,
        progress=progress,
        stop=lambda: bool(stopped),
    )
    print()
    print(table(audit))
    for line in audit.disagreements:
        print(f"- {line}")


if __name__ == "__main__":
    main()
