"""The brute-force reference evaluator: every pair, chunk by chunk of masked records,
in this process, on local threads, or on a Dask cluster. Identical masked records (an
MDAV group) are evaluated once: their distances to every original are the same numbers.

Memory stays O(chunk x N): a chunk of rows of the ``rows x N x n`` difference
block at a time (:func:`rlopt.data._standardise.chunk_rows`). Local workers are threads:
numpy's array operations release the GIL, and the original file is shared
instead of copied into every process. With a Dask scheduler the original file
is scattered once to every worker and the chunks are tasks.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from rlopt.data._standardise import DEFAULT_CHUNK_BYTES, chunk_rows
from rlopt.exceptions import NonFiniteError
from rlopt.families import Distance
from rlopt.linkage.identical import row_groups

__all__ = ["brute_verdicts", "block_verdicts", "group_verdicts", "Progress", "non_finite"]

Progress = Callable[[int, int], None]
"""``progress(records_done, n_records)``, called as chunks finish."""


def non_finite(distance: Distance, record: int) -> NonFiniteError:
    """The error of a linkage whose distance from ``record`` is NaN or infinite."""
    return NonFiniteError(
        f"{distance.family}: a distance from record {record} is not finite; expected finite "
        "distances (no figure is computed from a NaN or an infinity)"
    )


def group_verdicts(
    zu: np.ndarray, zb: np.ndarray, distance: Distance, records: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Own distance, nearest other distance and nearest record (lowest index among exact
    ties) of the masked records ``records``, record ``records[p]`` being ``zu[rows[p]]``:
    each distinct masked record ``zu`` is evaluated against every original once.

    The nearest other of a record is its masked record's nearest original unless that
    is its own, then the second nearest (the smallest distance with the nearest left
    out: equal to it where two originals tie).
    """
    d = distance.pairwise(zu, zb)
    if not np.isfinite(d).all():
        bad = int(np.argmax(~np.isfinite(d).all(axis=1)))
        raise non_finite(distance, int(records[np.argmax(rows == bad)]))
    local = np.arange(zu.shape[0])
    linked_to = d.argmin(axis=1)
    nearest = d[local, linked_to]
    own = d[rows, records]
    d[local, linked_to] = np.inf
    second = d.min(axis=1)
    linked = linked_to[rows]
    return own, np.where(linked == records, second[rows], nearest[rows]), linked


def block_verdicts(
    zu: np.ndarray, zb: np.ndarray, distance: Distance, records: np.ndarray, rows: np.ndarray, step: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`group_verdicts` of a block of distinct masked records, ``step`` of them at a
    time (one Dask task: few tasks, each bounded in memory); ``rows`` increasing."""
    cuts = np.searchsorted(rows, np.arange(0, zu.shape[0] + step, step))
    parts = [
        group_verdicts(zu[r : r + step], zb, distance, records[lo:hi], rows[lo:hi] - r)
        for r, lo, hi in zip(range(0, zu.shape[0], step), cuts[:-1], cuts[1:])
    ]
    return tuple(np.concatenate(column) for column in zip(*parts))  # type: ignore[return-value]


@dataclass(frozen=True)
class _Groups:
    """The masked records by group of identical ones (:func:`rlopt.linkage.identical.row_groups`):
    ``order`` the records sorted by group (the identity when none are alike), ``starts``
    where each group begins in it, ``first`` each group's first record."""

    group: np.ndarray
    first: np.ndarray
    order: np.ndarray
    starts: np.ndarray

    @classmethod
    def of(cls, za: np.ndarray) -> _Groups:
        group, first = row_groups(za)
        if first.size == group.size:  # none alike: each record its own group, in order
            return cls(group, first, group, np.arange(group.size + 1))
        order = np.argsort(group, kind="stable")
        return cls(group, first, order, np.searchsorted(group[order], np.arange(first.size + 1)))

    def part(self, za: np.ndarray, g0: int, g1: int) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray]:
        """Groups ``g0 .. g1 - 1``: where their records lie in ``order``, the distinct
        masked records, the records and each one's row among them."""
        p0, p1 = int(self.starts[g0]), int(self.starts[min(g1, self.first.size)])
        records = self.order[p0:p1]
        return p0, p1, za[self.first[g0:g1]], records, self.group[records] - g0


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
    """:func:`group_verdicts` of the whole file, each distinct masked record once, chunk by
    chunk, over ``jobs`` local threads or the Dask ``scheduler`` (an address such as
    ``tcp://host:8786``)."""
    n_records = za.shape[0]
    groups = _Groups.of(za)
    step = chunk_rows(n_records, za.shape[1], max_bytes=max_bytes)
    own, nearest_other = np.empty(n_records), np.empty(n_records)
    linked_to = np.empty(n_records, dtype=np.int64)
    done = 0

    def keep(p0: int, p1: int, verdict) -> None:
        nonlocal done
        where = groups.order[p0:p1]
        own[where], nearest_other[where], linked_to[where] = verdict
        done += p1 - p0
        if progress is not None:
            progress(done, n_records)

    parts = [groups.part(za, g, g + step) for g in range(0, groups.first.size, step)]
    if scheduler is not None:
        for p0, p1, verdict in _on_dask(scheduler, za, zb, distance, groups, step):
            keep(p0, p1, verdict)
    elif jobs > 1:
        with ThreadPoolExecutor(jobs) as pool:
            futures = [
                (p0, p1, pool.submit(group_verdicts, zu, zb, distance, r, w)) for p0, p1, zu, r, w in parts
            ]
            try:
                for p0, p1, future in futures:
                    keep(p0, p1, future.result())
            except BaseException:  # Ctrl-C or a chunk's error: drop the chunks not started
                for *_, future in futures:
                    future.cancel()
                raise
    else:
        for p0, p1, zu, records, rows in parts:
            keep(p0, p1, group_verdicts(zu, zb, distance, records, rows))
    return own, nearest_other, linked_to


TASKS_PER_WORKER_THREAD = 4
"""A Dask run splits the masked file into this many blocks per worker thread (few
tasks, so that scheduling costs little; several each, so that the workers finish together)."""


def _on_dask(scheduler: str, za, zb, distance, groups: _Groups, step: int):
    """``(p0, p1, verdict)`` of every block of groups, computed on the Dask cluster at ``scheduler``."""
    from distributed import as_completed

    from rlopt.processes import dask_client

    client = dask_client(scheduler)
    try:
        threads = max(1, sum(client.nthreads().values()))
        n_groups = groups.first.size
        block = max(step, -(-n_groups // (TASKS_PER_WORKER_THREAD * threads)))
        shared = client.scatter(zb, broadcast=True)
        futures = {}
        for g in range(0, n_groups, block):
            p0, p1, zu, records, rows = groups.part(za, g, g + block)
            future = client.submit(block_verdicts, zu, shared, distance, records, rows, step, pure=False)
            futures[future] = (p0, p1)
        for future in as_completed(futures):
            yield *futures[future], future.result()
    finally:
        client.close()  # the scheduler drops a closed client's tasks
