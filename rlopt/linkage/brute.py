"""The brute-force reference evaluator: every pair, chunk by chunk of masked records,
in this process, on local threads, or on a Dask cluster.

Memory stays O(chunk x N): a chunk of rows of the ``rows x N x n`` difference
block at a time (:func:`rlopt.data._standardise.chunk_rows`). Local workers are threads:
numpy's array operations release the GIL, and the original file is shared
instead of copied into every process. With a Dask scheduler the original file
is scattered once to every worker and the chunks are tasks.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from rlopt.data._standardise import DEFAULT_CHUNK_BYTES, chunk_rows
from rlopt.exceptions import NonFiniteError
from rlopt.families import Distance

__all__ = ["brute_verdicts", "chunk_verdicts", "Progress", "non_finite"]

Progress = Callable[[int, int], None]
"""``progress(records_done, n_records)``, called as chunks finish."""


def non_finite(distance: Distance, record: int) -> NonFiniteError:
    """The error of a linkage whose distance from ``record`` is NaN or infinite."""
    return NonFiniteError(
        f"{distance.family}: a distance from record {record} is not finite; expected finite "
        "distances (no figure is computed from a NaN or an infinity)"
    )


def chunk_verdicts(
    za: np.ndarray, zb: np.ndarray, distance: Distance, start: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Own distance, nearest other distance and nearest record (lowest index among
    exact ties) of the masked records ``za`` (rows ``start...`` of the file)."""
    d = distance.pairwise(za, zb)
    if not np.isfinite(d).all():
        raise non_finite(distance, start + int(np.argmax(~np.isfinite(d).all(axis=1))))
    rows = np.arange(za.shape[0])
    linked_to = d.argmin(axis=1)
    own = d[rows, rows + start].copy()
    d[rows, rows + start] = np.inf
    return own, d.min(axis=1), linked_to


def block_verdicts(
    za: np.ndarray, zb: np.ndarray, distance: Distance, start: int, step: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`chunk_verdicts` of a block of masked records, ``step`` rows at a time (one
    Dask task: few tasks, each bounded in memory)."""
    parts = [chunk_verdicts(za[r : r + step], zb, distance, start + r) for r in range(0, za.shape[0], step)]
    return tuple(np.concatenate(column) for column in zip(*parts))  # type: ignore[return-value]


def brute_verdicts(
    za: np.ndarray,
    zb: np.ndarray,
    distance: Distance,
    *,
    max_bytes: int = DEFAULT_CHUNK_BYTES,
    jobs: int = 1,
    scheduler: str | None = None,
    progress: Progress | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`chunk_verdicts` of the whole file, over ``jobs`` local threads or the
    Dask ``scheduler`` (an address such as ``tcp://host:8786``)."""
    n_records = za.shape[0]
    step = chunk_rows(n_records, za.shape[1], max_bytes=max_bytes)
    starts = list(range(0, n_records, step))
    own, nearest_other = np.empty(n_records), np.empty(n_records)
    linked_to = np.empty(n_records, dtype=np.int64)
    done = 0

    def keep(start: int, stop: int, verdict) -> None:
        nonlocal done
        own[start:stop], nearest_other[start:stop], linked_to[start:stop] = verdict
        done += stop - start
        if progress is not None:
            progress(done, n_records)

    if scheduler is not None:
        for start, stop, verdict in _on_dask(scheduler, za, zb, distance, step):
            keep(start, stop, verdict)
    elif jobs > 1:
        with ThreadPoolExecutor(jobs) as pool:
            futures = [
                (start, pool.submit(chunk_verdicts, za[start : start + step], zb, distance, start))
                for start in starts
            ]
            try:
                for start, future in futures:
                    keep(start, min(n_records, start + step), future.result())
            except BaseException:  # Ctrl-C or a chunk's error: drop the chunks not started
                for _, future in futures:
                    future.cancel()
                raise
    else:
        for start in starts:
            keep(
                start,
                min(n_records, start + step),
                chunk_verdicts(za[start : start + step], zb, distance, start),
            )
    return own, nearest_other, linked_to


TASKS_PER_WORKER_THREAD = 4
"""A Dask run splits the masked file into this many blocks per worker thread (few
tasks, so that scheduling costs little; several each, so that the workers finish together)."""


def _on_dask(scheduler: str, za, zb, distance, step: int):
    """``(start, stop, verdict)`` of every block, computed on the Dask cluster at ``scheduler``."""
    from distributed import as_completed

    from rlopt.processes import dask_client

    client = dask_client(scheduler)
    try:
        threads = max(1, sum(client.nthreads().values()))
        n_records = za.shape[0]
        block = max(step, -(-n_records // (TASKS_PER_WORKER_THREAD * threads)))
        shared = client.scatter(zb, broadcast=True)
        futures = {
            client.submit(
                block_verdicts, za[start : start + block], shared, distance, start, step, pure=False
            ): (
                start,
                min(n_records, start + block),
            )
            for start in range(0, n_records, block)
        }
        for future in as_completed(futures):
            yield *futures[future], future.result()
    finally:
        client.close()  # the scheduler drops a closed client's tasks
