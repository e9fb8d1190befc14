"""Parameter-space branch and bound: an exact ceiling for low-dimensional simplex families.

For wm, wm_m and owa the admissible set is a simplex and every pair's margin
``g_ij(theta) = d(a_i, b_j) - d(a_i, b_i)`` is linear in ``theta``
(:class:`~rlopt.milp.margins.PairMargins`). On a region ``R``, itself a simplex
with vertices ``V``, two tests need no LP:

- record ``i`` is correct everywhere on ``R`` if ``g_ij(v) >= margin`` for every
  vertex ``v`` and every ``j`` (the parameters that re-identify ``i`` form a convex set);
- record ``i`` is wrong everywhere on ``R`` if one ``j`` has ``g_ij(v) < margin - tol``
  at every vertex (``g_ij`` is then below the margin on all of ``R``).

The records not proven wrong bound the count on ``R``: that is the region's
*ceiling*. The search takes the region of highest ceiling, tests it, counts the
records re-identified at its vertices and centre (lower ends), and splits it at the
midpoint of its longest edge; it ends when no region's ceiling exceeds the best
count (proven optimum) or at its deadline (the largest open ceiling is the bound).
Regions with a ceiling at most the best count are dropped, which is exact.

It is far stronger than the MILP's big-C relaxation in few dimensions and useless in
many (a region must shrink to a few percent of the simplex before its ceiling nears
the optimum, and there are ``r^-(n-1)`` such regions), so learning runs it beside the
MILP only up to :data:`MAX_DIMENSIONS` parameters and reports the better ceiling.

With ``workers > 1`` the simplex is split into a few dozen regions dealt out to
forked worker processes, each searching its share best-first with the best count
shared between them.
"""

from __future__ import annotations

import heapq
import itertools
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rlopt.families import LearnedFamily
from rlopt.milp.ceilings.certificate import REGION_SEARCH
from rlopt.milp.margins import PairMargins
from rlopt.processes import die_with_parent, interrupts_held

__all__ = ["MAX_DIMENSIONS", "Companion", "RegionSearch", "branch_and_bound", "can_fork", "supports"]

MAX_DIMENSIONS = 6
"""Families with at most this many parameters get the search beside the MILP."""

REGIONS_PER_WORKER = 16
"""With workers, the simplex is first split into about this many regions per worker."""

REPORT_SECONDS = 0.5
"""The interval is reported at most this often (and once at the end)."""

POLL_SECONDS = 0.2
"""How often the parent reads the workers' shared count and ceilings."""

MAX_OPEN_PAIRS = 2**26
"""The open regions keep at most this many open pairs (two int32 each: 512 MiB);
beyond it the search stops with its ceiling."""


def supports(family: LearnedFamily, n_attributes: int) -> bool:
    """Whether the search applies: a simplex admissible set and few parameters."""
    return (
        family.simplex_vertices(n_attributes) is not None and family.n_params(n_attributes) <= MAX_DIMENSIONS
    )


@dataclass(order=True)
class _Region:
    key: tuple  # (-ceiling, tie-break) for the heap
    vertices: np.ndarray = field(compare=False)  # (m, P), one vertex per row
    records: np.ndarray = field(compare=False)  # int32 (pairs,): the record i of each open pair
    others: np.ndarray = field(compare=False)  # int32 (pairs,): its competitor j
    sure: int = field(compare=False)  # records correct on the whole region
    ceiling: int = field(compare=False)


@dataclass
class RegionSearch:
    """The search's result: ``lower`` records re-identified by ``theta`` (counted
    from the pair margins; recount it before trusting it), ``upper`` a proven
    ceiling, ``proven`` when they meet."""

    lower: int
    theta: np.ndarray | None
    upper: int
    proven: bool
    regions: int
    seconds: float
    stopped: str  # "proven", "deadline", "memory" or "stop"

    def to_dict(self) -> dict:
        return {
            "lower": self.lower,
            "upper": self.upper,
            "proven": self.proven,
            "regions": self.regions,
            "seconds": round(self.seconds, 3),
            "stopped": self.stopped,
        }


class _Explorer:
    """The tests and the split, on one file pair's margins.

    A region keeps only its *open* pairs ``(i, j)``: those of records not yet
    decided whose margin is below ``margin`` at some vertex (a pair above it at
    every vertex is above it on every subregion, and is dropped)."""

    def __init__(self, margins: PairMargins, margin: float, tol: float):
        self.margins, self.margin, self.tol = margins, margin, tol
        self.counter = itertools.count()

    def root(self, vertices: np.ndarray) -> _Region:
        n_records = self.margins.n_records
        records, others = np.nonzero(~np.eye(n_records, dtype=bool))
        return self.region(
            np.asarray(vertices, dtype=float), records.astype(np.int32), others.astype(np.int32), 0, n_records
        )

    def region(self, vertices, records, others, sure: int, ceiling: int) -> _Region:
        return _Region((-ceiling, -next(self.counter)), vertices, records, others, sure, ceiling)

    def expand(self, region: _Region, lower: int) -> tuple[list[_Region], int, np.ndarray | None]:
        """Test ``region``; returns its children worth keeping (those whose ceiling
        exceeds ``lower``) and the best count met at its vertices and centre."""
        records, others, vertices = region.records, region.others, region.vertices
        g = vertices @ self.margins.slopes[:, records, others] + self.margins.consts[records, others]
        starts = np.flatnonzero(np.r_[True, records[1:] != records[:-1]])  # pairs sorted by record
        wrong = np.logical_or.reduceat(g.max(axis=0) < self.margin - self.tol, starts)
        open_pair = g.min(axis=0) < self.margin
        surely = ~np.logical_or.reduceat(open_pair, starts)
        at_vertex = np.logical_and.reduceat(g >= self.margin, starts, axis=1)  # (m, records)
        centre = np.logical_and.reduceat(g.mean(axis=0) >= self.margin, starts)  # linear in theta
        counts = np.append(at_vertex.sum(axis=1), centre.sum()) + region.sure
        best = int(np.argmax(counts))
        count = int(counts[best])
        theta = vertices[best] if best < len(vertices) else vertices.mean(axis=0)
        sure = region.sure + int(surely.sum())
        undecided = ~wrong & ~surely
        ceiling = sure + int(undecided.sum())
        if ceiling <= max(lower, count) or not undecided.any():
            return [], count, theta  # nothing better inside (or all decided: count == ceiling)
        keep = open_pair & np.repeat(undecided, np.diff(np.r_[starts, records.size]))
        records, others = records[keep], others[keep]
        edges = np.linalg.norm(vertices[:, None, :] - vertices[None, :, :], axis=2)
        a, b = np.unravel_index(np.argmax(edges), edges.shape)
        middle = (vertices[a] + vertices[b]) / 2
        children = []
        for replaced in (a, b):
            child = vertices.copy()
            child[replaced] = middle
            children.append(self.region(child, records, others, sure, ceiling))
        return children, count, theta


def _search(
    explorer: _Explorer,
    heap: list[_Region],
    best: list,
    *,
    until: float,
    lower: Callable[[], int] = lambda: 0,
    on_step: Callable[[], bool] | None = None,
) -> str:
    """Best-first search of ``heap`` (in place) until it closes or ``until``;
    ``best`` is ``[count, theta]``, updated in place; ``lower()`` a count found
    elsewhere. ``on_step()`` returning true stops the search. Returns why it stopped."""
    open_pairs = sum(region.records.size // 2 for region in heap)
    while heap:
        floor = max(best[0], lower())
        if heap[0].ceiling <= floor:
            heap.clear()
            return "proven"
        if time.perf_counter() >= until:
            return "deadline"
        if on_step is not None and on_step():
            return "stop"
        if open_pairs > MAX_OPEN_PAIRS:
            return "memory"
        region = heapq.heappop(heap)
        open_pairs -= region.records.size // 2
        children, count, theta = explorer.expand(region, floor)
        if count > best[0]:
            best[0], best[1] = count, theta
        for child in children:
            if child.ceiling > best[0]:
                heapq.heappush(heap, child)
                open_pairs += child.records.size // 2  # the two children share their pairs
    return "proven"


def branch_and_bound(
    margins: PairMargins,
    vertices: np.ndarray,
    *,
    margin: float,
    tol: float,
    deadline: float | None = None,
    lower: Callable[[], int] = lambda: 0,
    workers: int = 1,
    report: Callable[[int, int, np.ndarray | None], bool | None] | None = None,
) -> RegionSearch:
    """Search the simplex ``conv(vertices)`` (see the module).

    ``lower()``: a count known elsewhere (non-decreasing); regions that cannot beat
    it are dropped, so the ceiling proven is ``max(own count, lower())``. The
    result's ``lower`` is this search's own count. ``report(upper, count, theta)``
    is called when the ceiling falls or the count rises; when it returns true the
    search stops. ``workers > 1`` forks that many worker processes (they share the
    margins); where fork is unavailable the search runs in this process.
    """
    t0 = time.perf_counter()
    until = np.inf if deadline is None else deadline
    explorer = _Explorer(margins, margin, tol)
    n_records = margins.n_records
    heap = [explorer.root(vertices)]
    best: list = [0, None]
    state: dict[str, Any] = {"upper": n_records, "regions": 0, "reported": (n_records, 0), "at": -np.inf}

    def notify(elsewhere: int = 0, *, last: bool = False) -> bool:
        """Report a better interval (at most every REPORT_SECONDS, and at the end);
        ``elsewhere``: the workers' ceiling and count."""
        upper = max(best[0], lower(), heap[0].ceiling if heap else 0, elsewhere)
        state["upper"] = min(state["upper"], upper)
        now = time.perf_counter()
        if (state["upper"], best[0]) != state["reported"] and (last or now - state["at"] >= REPORT_SECONDS):
            state["reported"], state["at"] = (state["upper"], best[0]), now
            return bool(report(state["upper"], best[0], best[1])) if report is not None else False
        return False

    if workers <= 1 or not can_fork():
        ticks = itertools.count(1)

        def step() -> bool:  # every 64 regions: the report, and whether to stop
            state["regions"] += 1
            return next(ticks) % 64 == 0 and notify()

        stopped, elsewhere = _search(explorer, heap, best, until=until, lower=lower, on_step=step), 0
    else:
        stopped, elsewhere = _parallel(explorer, heap, best, workers, until, lower, state, notify)
    notify(elsewhere, last=True)
    return RegionSearch(
        lower=best[0],
        theta=best[1],
        upper=state["upper"],
        proven=stopped == "proven",
        regions=state["regions"],
        seconds=time.perf_counter() - t0,
        stopped=stopped,
    )


def can_fork() -> bool:
    """Whether worker processes can be forked (they then share the margins without a
    copy, and a user's script is not re-imported as it is under ``spawn``): not where
    fork is unavailable, nor in a daemon process (e.g. a Dask worker), which may have
    no children."""
    return "fork" in multiprocessing.get_all_start_methods() and not multiprocessing.current_process().daemon


def _parallel(
    explorer: _Explorer,
    heap: list,
    best: list,
    workers: int,
    until: float,
    lower: Callable[[], int],
    state: dict,
    notify: Callable[[int], bool],
) -> tuple[str, int]:
    """Split the simplex into about :data:`REGIONS_PER_WORKER` regions per worker, deal
    them out by ceiling, and let each forked worker search its share best-first with
    the best count shared; a worker publishes its highest open ceiling as it goes
    (it only falls, so a late value is still a ceiling). Returns why it stopped and
    the workers' final ceiling."""
    ended = _split(explorer, heap, best, workers, until, lower, state)
    if ended is not None:
        return ended, 0
    context = multiprocessing.get_context("fork")
    ordered = sorted(heap)
    shared = _Shared(
        best=context.Value("i", max(best[0], lower())),
        tops=context.Array("i", [ordered[w].ceiling if w < len(ordered) else 0 for w in range(workers)]),
        stop=context.Value("b", 0),
    )
    channels, processes = [], []
    for w in range(workers):
        receive, send = context.Pipe(duplex=False)
        process = context.Process(
            target=_worker,
            daemon=True,
            args=(
                explorer,
                ordered[w::workers],
                w,
                shared.best,
                shared.tops,
                shared.stop,
                until,
                os.getpid(),
                send,
            ),
        )
        with interrupts_held():  # a Ctrl-C during the fork is raised after it, not lost
            process.start()
        channels.append(receive)
        processes.append(process)
    heap.clear()
    try:
        return _gather(channels, processes, shared, best, lower, state, notify)
    finally:
        shared.stop.value = 1
        for process in processes:
            process.join(timeout=2 * POLL_SECONDS)
            if process.is_alive():
                process.terminate()


def _split(
    explorer: _Explorer,
    heap: list,
    best: list,
    workers: int,
    until: float,
    lower: Callable[[], int],
    state: dict,
) -> str | None:
    """Expand the best regions in this process until there are about
    :data:`REGIONS_PER_WORKER` per worker; why the search ended already (``"proven"``
    or ``"deadline"``), else ``None``."""
    while heap and len(heap) < REGIONS_PER_WORKER * workers and time.perf_counter() < until:
        floor = max(best[0], lower())
        if heap[0].ceiling <= floor:
            heap.clear()
            return "proven"
        children, count, theta = explorer.expand(heapq.heappop(heap), floor)
        state["regions"] += 1
        if count > best[0]:
            best[0], best[1] = count, theta
        for child in children:
            heapq.heappush(heap, child)
    if not heap or time.perf_counter() >= until:
        return "proven" if not heap else "deadline"
    return None


@dataclass
class _Shared:
    """What the parent shares with its forked workers: the best count (``best``), each
    worker's highest open ceiling (``tops``) and the flag that stops them (``stop``)."""

    best: Any
    tops: Any
    stop: Any


def _gather(
    channels: list,
    processes: list,
    shared: _Shared,
    best: list,
    lower: Callable[[], int],
    state: dict,
    notify: Callable[[int], bool],
) -> tuple[str, int]:
    """Poll the workers until each has sent its result (passing on ``lower()`` and
    reporting the interval; the workers are stopped when ``notify`` asks), then
    merge their results. Returns why the search stopped and the workers' final ceiling."""
    stopped = "proven"
    while any(process.is_alive() for process in processes) or any(c.poll() for c in channels):
        for process in processes:
            process.join(timeout=POLL_SECONDS / len(processes))
        with shared.best.get_lock():
            shared.best.value = max(shared.best.value, lower())
        # the shared count belongs in the ceiling: the workers drop regions that cannot beat it
        if notify(max(max(shared.tops[:]), shared.best.value)) and not shared.stop.value:
            shared.stop.value, stopped = 1, "stop"
        if all(c.poll() for c in channels):
            break
    for channel in channels:
        count, theta, why, regions = channel.recv()
        state["regions"] += regions
        if count > best[0]:
            best[0], best[1] = count, theta
        if why != "proven" and stopped == "proven":
            stopped = why
    return stopped, max(max(shared.tops[:]), shared.best.value)


def _worker(explorer, regions, index, shared_best, tops, stop, until, parent, send) -> None:
    die_with_parent(parent)
    heap = list(regions)
    heapq.heapify(heap)
    best: list = [0, None]
    ticks = itertools.count(1)

    def step() -> bool:  # every 64 regions: publish the count and the ceiling
        if next(ticks) % 64 == 0:
            publish()
        return bool(stop.value)

    def publish() -> None:
        if best[0] > shared_best.value:
            with shared_best.get_lock():
                shared_best.value = max(shared_best.value, best[0])
        tops[index] = heap[0].ceiling if heap else 0

    try:
        why = _search(explorer, heap, best, until=until, lower=lambda: shared_best.value, on_step=step)
        publish()
        send.send((best[0], best[1], why, next(ticks) - 1))
    except KeyboardInterrupt:  # Ctrl-C reaches every process of the group: the parent decides
        send.send((best[0], best[1], "stop", next(ticks) - 1))


class Companion:
    """A search in a forked process beside the caller's MILP (``deadline`` a
    ``time.perf_counter()`` value, shared by fork): by default this module's branch and
    bound; ``target`` another search with :func:`_companion`'s signature and messages
    (:func:`rlopt.milp.ceilings.hitting.block_companion`), ``label`` its name in a certificate and
    ``key`` in a result's solver figures. :meth:`offer` passes it verified counts found
    elsewhere; :meth:`poll` returns its reports ``(upper, count, theta)`` as they arrive
    (``count`` and ``theta`` are its own: recount before trusting them)."""

    def __init__(
        self,
        za: np.ndarray,
        zb: np.ndarray,
        family: LearnedFamily,
        *,
        margin: float,
        tol: float,
        deadline: float | None,
        target: Callable | None = None,
        label: str = REGION_SEARCH,
        key: str = "parameter_bb",
    ):
        self.label, self.key = label, key
        context = multiprocessing.get_context("fork")
        self._offered = context.Value("i", 0)
        self._receive, send = context.Pipe(duplex=False)
        self._process = context.Process(
            target=target or _companion,
            daemon=True,
            args=(za, zb, family, margin, tol, deadline, self._offered, os.getpid(), send),
        )
        try:
            with interrupts_held():  # a Ctrl-C during the fork is raised after it, not lost
                self._process.start()
        except KeyboardInterrupt:
            self._process.terminate()
            raise
        send.close()
        self.upper: int | None = None
        self.result: Any = (
            None  # the search's result (a RegionSearch here): .upper, .lower, .theta, .to_dict()
        )

    def offer(self, count: int) -> None:
        with self._offered.get_lock():
            self._offered.value = max(self._offered.value, int(count))

    def poll(self) -> list[tuple[int, int, np.ndarray | None]]:
        reports = []
        try:
            while self._receive.poll():
                kind, *payload = self._receive.recv()
                if kind == "report":
                    reports.append(tuple(payload))
                elif kind == "done":
                    self.result = payload[0]
                    reports.append((self.result.upper, self.result.lower, self.result.theta))
        except (EOFError, OSError):  # the process ended (or was ended): what arrived stands
            pass
        for upper, _, _ in reports:
            self.upper = upper if self.upper is None else min(self.upper, upper)
        return reports

    def close(self) -> None:
        if self._process.is_alive():
            self._process.terminate()
        self._process.join(timeout=5)
        self._receive.close()


def _companion(za, zb, family, margin, tol, deadline, offered, parent, send) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    die_with_parent(parent)
    margins = PairMargins.build(za, zb, family, deadline=deadline)
    if margins is None:  # too large for memory, or no time: no ceiling from here
        return
    result = branch_and_bound(
        margins,
        family.simplex_vertices(za.shape[1]),
        margin=margin,
        tol=tol,
        deadline=deadline,
        lower=lambda: offered.value,
        report=lambda upper, count, theta: send.send(("report", upper, count, theta)),
    )
    send.send(("done", result))
