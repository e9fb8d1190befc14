"""Small generated files and exact brute force shared by the MILP tests; the console
script run in this process."""

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import rlopt.cli
from rlopt.learn import LearnedDistanceLinkage

MARGIN = 1e-4

ROOT = Path(__file__).resolve().parents[1]
"""The repository's root folder."""
FILES = ROOT / "tests" / "files"
"""Files the tests read (solver models that once misled a solver, ...)."""


def noisy_file(seed, n_records=20, n_attributes=3, scale=(0.2, 0.5, 1.0)):
    rng = np.random.default_rng(seed)
    original = rng.normal(size=(n_records, n_attributes))
    masked = original + rng.normal(size=original.shape) * np.asarray(scale)[:n_attributes]
    columns = list("abcdef"[:n_attributes])
    return pd.DataFrame(original, columns=columns), pd.DataFrame(masked, columns=columns)


def fit(family, original, masked, **kwargs):
    return LearnedDistanceLinkage(family, margin=MARGIN, **kwargs).fit(original, masked).result_


def fit_with(family, original, masked, *, collaborators, progress=None, **kwargs):
    """:func:`fit` with the run's collaborators (fakes a test hands it: the MILP's solve,
    the screening, a block's solve), through :func:`rlopt.milp.pipeline.learn` with the
    estimator's own checked options."""
    from rlopt.data import validate_pair
    from rlopt.milp.pipeline import learn

    learner = LearnedDistanceLinkage(family, margin=kwargs.pop("margin", MARGIN), **kwargs)
    learned, (reductions, searches), options, blocks = learner._checked()
    result, _ = learn(
        validate_pair(original, masked),
        learned,
        margin=float(learner.margin),
        options=options,
        big_c=learner.big_c,
        reductions=reductions,
        searches=searches,
        progress=progress,
        blocks=blocks,
        collaborators=collaborators,
    )
    return result


def _deepest_overlap(intervals):
    points = [p for lo, hi in intervals if lo <= hi for p in (lo, hi)]
    return max((sum(lo - 1e-9 <= p <= hi + 1e-9 for lo, hi in intervals) for p in points), default=0)


def one_weight_intervals(diff_own, diff_other, margin):
    """Per record, the interval of p in [0, 1] on which every row p*u + (1-p)*v >= margin
    holds, with u = y_0 - x_0, v = y_1 - x_1 (WM on raw, OWA on sorted differences);
    empty when lo > hi."""
    intervals = []
    for i in range(diff_own.shape[0]):
        lo, hi = 0.0, 1.0
        for j in range(diff_other.shape[1]):
            if j == i:
                continue
            u, v = diff_other[i, j] - diff_own[i]
            # v + p (u - v) >= margin
            slope, const = u - v, v - margin
            if abs(slope) < 1e-15:
                if const < 0:
                    lo, hi = 1.0, 0.0
            elif slope > 0:
                lo = max(lo, -const / slope)
            else:
                hi = min(hi, -const / slope)
        intervals.append((lo, hi))
    return intervals


def brute_force_one_weight(diff_own, diff_other, margin):
    """Max over p in [0, 1] of #records re-identified (the deepest overlap of the intervals)."""
    return _deepest_overlap(one_weight_intervals(diff_own, diff_other, margin))


def brute_force_two_attributes(original, masked, margin):
    """``{"wm": optimum, "owa": optimum}`` of a two-attribute pair by brute force over the one free weight."""
    from rlopt.data import standardise

    za, zb = standardise(masked.to_numpy()), standardise(original.to_numpy())
    diff = (za[:, None, :] - zb[None, :, :]) ** 2
    own = np.arange(len(za))
    ordered = -np.sort(-diff, axis=2)
    return {
        "wm": brute_force_one_weight(diff[own, own], diff, margin),
        "owa": brute_force_one_weight(ordered[own, own], ordered, margin),
    }


def run_main(args: list[str]) -> int:
    """``rlopt ARGS`` in this process, through the console script's ``main``; its exit code."""
    argv, show = sys.argv, warnings.showwarning
    sys.argv = ["rlopt", *map(str, args)]
    try:
        rlopt.cli.main()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv, warnings.showwarning = argv, show
    return 0


def dump_dom(page, tmp_path) -> str:
    """The DOM of an HTML page after headless Chromium rendered it (its images
    loaded); skipped without Chromium unless ``RLOPT_REQUIRE_BROWSER`` is set."""
    import os
    import shutil
    import subprocess

    import pytest

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        if os.environ.get("RLOPT_REQUIRE_BROWSER"):
            pytest.fail("chromium is required (RLOPT_REQUIRE_BROWSER is set) but not installed")
        pytest.skip("chromium not installed (apt-get install chromium)")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"]
    flags += ["--disable-background-networking", "--disable-component-update", "--disable-sync"]
    return subprocess.run(
        [browser, *flags, f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000",
         "--dump-dom", page.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout  # fmt: skip


class UntilTheBlocksLowerTheCeiling:
    """A run's MILP solve (``solve``, a collaborator) that ends as its time limit would
    once the blocks beside it have lowered the run's ceiling: a test waits
    for that event, and the run's long time limit is only its outer timeout (the blocks'
    workers took most of 8 s to start on a loaded machine). A solve the run itself stops
    (a closed interval) keeps its word. Hears the blocks through
    :func:`rlopt.milp.beside._blocks_heard`, which ``monkeypatch`` wraps."""

    def __init__(self, monkeypatch):
        import rlopt.milp.beside as beside
        from rlopt.milp.ceilings.certificate import BLOCK_CEILINGS

        self.lowered = False
        heard = beside._blocks_heard

        def blocks_heard(run):
            closed = heard(run)
            if run.certificate.upper_source == BLOCK_CEILINGS:  # the blocks lowered the ceiling
                self.lowered = True
            return closed

        monkeypatch.setattr(beside, "_blocks_heard", blocks_heard)

    def solve(self, model, options, *, stop_when=None, **kwargs):
        import dataclasses

        from rlopt.milp.solvers import solve_model
        from rlopt.milp.solvers.options import Termination

        closed = []

        def stop() -> bool:
            closed.append(stop_when is not None and stop_when())
            return closed[-1] or self.lowered

        solved = solve_model(model, options, stop_when=stop, **kwargs)
        if solved.termination == Termination.STOPPED and not any(closed):  # stopped here, not by a proof
            solved = dataclasses.replace(solved, termination=Termination.TIME_LIMIT)
        return solved
