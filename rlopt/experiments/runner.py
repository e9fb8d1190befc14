"""The experiment runner: cells in parallel on this machine or on a Dask cluster,
one tidy row per cell, atomic writes, resumable.

Every finished cell is written to ``OUT/cells/<key>.json`` (write to a temporary
file, then rename) and ``OUT/results.csv`` is rewritten from them after each
cell, so a killed run loses at most the cells in flight; a re-run with the same
``OUT`` skips every cell whose file exists. A cell that raises is reported and
not written, so the next run retries exactly it.

A run holds a lock on ``OUT`` (a second run on it is refused, naming the first);
Ctrl-C ends the local workers at once and raises :class:`~rlopt.exceptions.Interrupted`
with the finished part; local workers die with their parent, even a parent killed
with SIGKILL; a folder the run created is removed again if no cell was finished in it.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import time
import traceback
import warnings
from collections.abc import Callable
from concurrent.futures import as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

import pandas as pd

from rlopt.exceptions import InputError, Interrupted
from rlopt.experiments.config import Cell, ExperimentConfig, expand
from rlopt.families import BASELINES
from rlopt.processes import dask_client, local_pool, oversubscription, stop_pool, with_progress
from rlopt.status import Status
from rlopt.validation import JOBS, validate_params

__all__ = ["run_cell", "run_grid", "run_tasks", "oversubscription", "GridRun", "COLUMNS"]

TIMING_COLUMNS = [
    "quick_seconds",
    "search_seconds",
    "reduce_seconds",
    "build_seconds",
    "solve_seconds",
    "total_seconds",
    "worker",
]
"""The columns that depend on the machine and its load, not on the figures."""

COLUMNS = [
    "dataset",
    "sample_seed",
    "family",
    "n_records",
    "n_correct",
    "rate",
    "status",
    "bound",
    "gap",
    "n_at_risk",
    *TIMING_COLUMNS[:-1],
    "margin",
    "time_limit",
    "threads",
    "rlopt_version",
    "highs_version",
    "pyomo_version",
    "key",
    "worker",
]
"""The columns of ``results.csv``, one row per cell."""


def _data(cell: Cell):
    from rlopt.data import load_table
    from rlopt.masking import Recipe, build

    if "recipe" in cell.file:
        return build(Recipe.model_validate(cell.file["recipe"]))
    return load_table(cell.file["original"]), load_table(cell.file["masked"])


def _row_header(cell: Cell, highs_version: Callable[[], str]) -> dict:
    """The fields of a cell's row that describe the cell and the software, not its outcome."""
    return {
        "dataset": cell.dataset,
        "sample_seed": cell.sample_seed,
        "family": cell.family,
        "margin": cell.solver.margin,
        "time_limit": cell.solver.time_limit,
        "threads": cell.solver.threads,
        "rlopt_version": version("rlopt"),
        "highs_version": highs_version(),
        "pyomo_version": version("pyomo"),
        "key": cell.key,
        "worker": f"{socket.gethostname()}:{os.getpid()}",
    }


def _baseline_outcome(linked, seconds: float) -> dict:
    """The outcome fields of a baseline (``am``, ``md``) cell from its linkage result."""
    return dict(
        n_records=linked.n_records,
        n_correct=linked.n_correct,
        rate=linked.rate,
        status=Status.BASELINE,
        bound=None,
        gap=None,
        n_at_risk=None,
        reduce_seconds=0.0,
        build_seconds=0.0,
        solve_seconds=seconds,
        total_seconds=seconds,
    )


def _learned_outcome(r, t0: float) -> dict:
    """The outcome fields of a learned-family cell from its learning result (``t0``: the start)."""
    return dict(
        n_records=r.n_records,
        n_correct=r.n_correct_verified,
        rate=r.rate,
        status=r.status,
        bound=r.bound,
        gap=r.gap,
        n_at_risk=r.n_at_risk,
        quick_seconds=r.seconds.get("quick", 0.0),
        search_seconds=r.seconds.get("search", 0.0),
        reduce_seconds=r.seconds.get("reduce", 0.0),
        build_seconds=r.seconds["build"],
        solve_seconds=r.seconds["solve"],
        total_seconds=time.perf_counter() - t0,
    )


def run_cell(cell: Cell) -> dict:
    """Run one cell where this function is called (a local process or a Dask worker)."""
    from rlopt.learn import LearnedDistanceLinkage
    from rlopt.linkage import dbrl
    from rlopt.milp.solvers.runtime import highs_version

    t0 = time.perf_counter()
    original, masked = _data(cell)
    columns = cell.file.get("columns")
    id_column = cell.file.get("id_column")
    row = _row_header(cell, highs_version)
    if cell.family in BASELINES:
        linked = dbrl(original, masked, distance=cell.family, columns=columns, id_column=id_column)
        row.update(_baseline_outcome(linked, time.perf_counter() - t0))
        return row
    s = cell.solver
    learner = LearnedDistanceLinkage(
        cell.family,
        margin=s.margin,
        time_limit=s.time_limit,
        rel_gap=s.rel_gap,
        threads=s.threads,
        reductions=s.reductions,
    )
    r = learner.fit(original, masked, columns=columns, id_column=id_column).result_
    row.update(_learned_outcome(r, t0))
    return row


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


@dataclass
class GridRun:
    """What a run did: the rows of every cell of the config (finished now or before)."""

    out: Path
    rows: list[dict]
    computed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    columns: list[str] = field(default_factory=lambda: list(COLUMNS))

    @property
    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=self.columns)


def _executor(jobs: int, scheduler: str | None, work: Callable = run_cell):
    """``submit(cells) -> iterator of (cell, row or exception)`` and ``close(abort)``;
    each cell is computed by ``work(cell)`` (a module-level function, so that it
    pickles). ``close(True)`` (after Ctrl-C) drops the cells in flight at once."""
    if scheduler is not None:
        client = dask_client(scheduler)
        from distributed import as_completed as dask_completed

        def submit_dask(cells):
            futures = {
                client.submit(work, c, pure=False, key=f"rlopt-{c.key}-{time.time_ns()}"): c for c in cells
            }
            for future in dask_completed(futures):
                try:
                    yield futures[future], future.result()
                except Exception as exc:  # the cell's own error, raised on the worker
                    yield futures[future], exc

        return submit_dask, lambda abort: client.close()  # the scheduler drops a closed client's cells
    if jobs == 1:

        def submit_here(cells):
            for c in cells:
                try:
                    yield c, work(c)
                except Exception as exc:
                    traceback.print_exc()
                    yield c, exc

        return submit_here, lambda abort: None
    pool = local_pool(jobs)

    def submit_pool(cells):
        futures = {pool.submit(work, c): c for c in cells}
        for future in as_completed(futures):
            try:
                yield futures[future], future.result()
            except Exception as exc:
                yield futures[future], exc

    return submit_pool, lambda abort: stop_pool(pool) if abort else pool.shutdown(cancel_futures=True)


LOCK, OWNER = ".rlopt.lock", ".rlopt.owner"
"""The lock file of a results folder and, beside it, who holds it."""


@contextmanager
def _claim(out: Path):
    """Hold the results folder ``out`` for one run.

    A second run on the same folder is refused at once with an :class:`InputError`
    naming the first (its pid, host and start time). If this run created the
    folder (and maybe its parents) and no cell was finished in it (a failed
    start, Ctrl-C before the first cell), they are removed again.
    """
    from filelock import FileLock, Timeout

    created = next((p for p in reversed([out, *out.parents]) if not p.exists()), None)
    (out / "cells").mkdir(parents=True, exist_ok=True)
    lock = FileLock(out / LOCK)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        try:
            first = (out / OWNER).read_text().strip()
        except OSError:
            first = "another process"
        raise InputError(
            f"{str(out)!r} is in use by another run ({first}); wait for it to finish or give another --out"
        ) from None
    try:
        _atomic_write(
            out / OWNER,
            f"rlopt pid {os.getpid()} on {socket.gethostname()}, started "
            f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}\n",
        )
        yield
    finally:
        (out / OWNER).unlink(missing_ok=True)
        if created is not None and not any((out / "cells").glob("*.json")):
            shutil.rmtree(created, ignore_errors=True)  # the topmost folder this run made
        lock.release()


@validate_params({"jobs": [JOBS]})
def run_grid(
    config: ExperimentConfig,
    out: str | Path,
    *,
    base: str | Path = ".",
    jobs: int = 1,
    scheduler: str | None = None,
    progress: bool = True,
    on_row: Callable[[dict], None] | None = None,
) -> GridRun:
    """Run every cell of ``config`` not already finished in ``out``.

    Parameters
    ----------
    config : ExperimentConfig
    out : path
        Results folder: ``cells/<key>.json`` per finished cell, ``results.csv``, ``run.json``.
    base : path
        Folder that relative paths of the config are resolved against.
    jobs : int
        Local worker processes (1: run in this process).
    scheduler : str, optional
        Address of a running Dask distributed scheduler (``tcp://host:port``); the
        cells then run on its workers.
    """
    out = Path(out)
    cells = expand(config, base)
    manifest = {
        "config": config.model_dump(mode="json"),
        "n_cells": len(cells),
        "machine": {
            "platform": platform.platform(),
            "processor": platform.machine(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
        },
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "jobs": jobs,
        "scheduler": scheduler,
    }
    with _claim(out):
        return _run_tasks(
            cells,
            out,
            work=run_cell,
            columns=COLUMNS,
            label=config.name,
            jobs=jobs,
            threads=max((c.solver.threads or 1 for c in cells), default=1),
            scheduler=scheduler,
            progress=progress,
            on_row=on_row,
            manifest=manifest,
        )


@validate_params({"jobs": [JOBS]})
def run_tasks(
    cells: list,
    out: Path,
    *,
    work: Callable,
    columns: list[str],
    label: str,
    jobs: int = 1,
    threads: int = 1,
    scheduler: str | None = None,
    progress: bool = True,
    on_row: Callable[[dict], None] | None = None,
) -> GridRun:
    """Compute the cells not yet in ``out/cells`` with ``work`` and write ``results.csv``.

    ``threads``: the HiGHS threads of one cell; ``jobs`` local processes of that many
    threads on fewer cores are warned of (:func:`oversubscription`).

    Each cell has a ``key`` (its file name) and a ``describe()`` for error
    messages; a finished cell is written atomically at once, so a killed run
    loses at most the cells in flight, and a re-run skips the finished ones.
    Ctrl-C raises :class:`~rlopt.exceptions.Interrupted` whose ``partial`` is the
    :class:`GridRun` so far (``results.csv`` holds every finished cell).
    """
    out = Path(out)
    with _claim(out):
        return _run_tasks(
            cells,
            out,
            work=work,
            columns=columns,
            label=label,
            jobs=jobs,
            threads=threads,
            scheduler=scheduler,
            progress=progress,
            on_row=on_row,
        )


def _run_tasks(
    cells: list,
    out: Path,
    *,
    work: Callable,
    columns: list[str],
    label: str,
    jobs: int,
    threads: int,
    scheduler: str | None,
    progress: bool,
    on_row: Callable[[dict], None] | None,
    manifest: dict | None = None,
) -> GridRun:
    """The cells not yet in ``out/cells``; ``manifest`` is written as ``out/run.json``
    first. Ctrl-C at any point of it (the manifest, the pool's start, a cell) raises
    :class:`~rlopt.exceptions.Interrupted` with the finished part."""
    run = GridRun(out=out, rows=[], columns=columns)
    keys = [c.key for c in cells]
    close: Callable[[bool], object] | None = None
    aborted = True
    try:
        if jobs > 1 and scheduler is None and (message := oversubscription(jobs, threads)):
            warnings.warn(message, stacklevel=3)
        todo = []
        for cell in cells:
            if (out / "cells" / f"{cell.key}.json").is_file():
                run.skipped.append(cell.key)
            else:
                todo.append(cell)
        if manifest is not None:
            _atomic_write(out / "run.json", json.dumps(manifest, indent=2))
        if todo:
            submit, close = _executor(jobs, scheduler, work)
            for cell, outcome in with_progress(submit(todo), len(todo), f"{label}: cells", progress):
                if isinstance(outcome, Exception):
                    run.failed[cell.key] = f"{cell.describe()}: {type(outcome).__name__}: {outcome}"
                    continue
                _atomic_write(out / "cells" / f"{cell.key}.json", json.dumps(outcome, indent=1))
                run.computed.append(cell.key)
                if on_row is not None:
                    on_row(outcome)
                _write_results(out, keys, columns)
        aborted = False
    except KeyboardInterrupt as exc:  # every finished cell is kept; the workers end below
        run.skipped = [  # Ctrl-C may have come while the finished cells were being listed
            k for k in keys if k not in run.computed and (out / "cells" / f"{k}.json").is_file()
        ]
        run.rows = _write_results(out, keys, columns)
        raise Interrupted(f"{len(run.rows)} of {len(keys)} cells done", partial=run) from exc
    finally:
        if close is not None:
            close(aborted)
    run.rows = _write_results(out, keys, columns)
    return run


def _write_results(out: Path, keys: list[str], columns: list[str]) -> list[dict]:
    """``results.csv`` from the finished cells of this config, in grid order."""
    rows = []
    for key in keys:
        path = out / "cells" / f"{key}.json"
        if path.is_file():
            rows.append(json.loads(path.read_text()))
    frame = pd.DataFrame(rows, columns=columns)
    _atomic_write(out / "results.csv", frame.to_csv(index=False))
    return rows
