"""Processes rlopt starts or joins: child processes that never outlive their parent (the
runner's workers, the parameter-space search beside a solve), and the one way to
connect to a Dask scheduler (:func:`dask_client`).

A signal that reaches only the parent (``kill PID``, a job scheduler, a notebook's
interrupt, systemd) or a parent killed outright must not leave a child computing on.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import threading
import time
from collections.abc import Iterable

__all__ = [
    "die_with_parent",
    "dask_client",
    "interrupts_held",
    "local_pool",
    "one_native_thread",
    "oversubscription",
    "stop_pool",
    "with_progress",
    "CONNECT_TIMEOUT",
]

CONNECT_TIMEOUT = "10s"
"""How long to wait for a Dask scheduler before ``cannot reach the Dask scheduler``;
the environment variable ``RLOPT_DASK_CONNECT_TIMEOUT`` (e.g. ``30s``) replaces it."""


def dask_client(scheduler: str):
    """A ``distributed.Client`` on ``scheduler``; an unreachable or malformed address is
    an :class:`~rlopt.exceptions.InputError` after :data:`CONNECT_TIMEOUT`."""
    from rlopt.exceptions import InputError

    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - distributed is a dependency
        raise InputError("--scheduler needs dask.distributed: pip install distributed") from None
    timeout = os.environ.get("RLOPT_DASK_CONNECT_TIMEOUT", CONNECT_TIMEOUT)
    try:
        return Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:  # unreachable or a bad address
        raise InputError(f"cannot reach the Dask scheduler {scheduler!r}: {exc}") from None


def die_with_parent(parent: int) -> None:
    """Make this (child) process end as soon as ``parent`` (its parent's pid) does, even a
    parent killed with SIGKILL: on Linux the kernel sends SIGKILL then
    (``PR_SET_PDEATHSIG``); elsewhere a daemon thread polls the parent every second."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    else:  # pragma: no cover - macOS, Windows

        def watch():
            while os.getppid() == parent:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, daemon=True).start()
    if os.getppid() != parent:  # the parent died before the above
        os._exit(1)


def local_pool(jobs: int):
    """``jobs`` spawned worker processes (a ``ProcessPoolExecutor``) that leave Ctrl-C to
    their parent (it ends them) and die with it, even a killed one."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    return ProcessPoolExecutor(
        max_workers=jobs, mp_context=get_context("spawn"), initializer=_worker_init, initargs=(os.getpid(),)
    )


def _worker_init(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)
    if sys.platform != "win32":
        # A spawned worker's default start method is spawn, under which every lock it
        # makes (Pyomo makes one on import) is a named semaphore the parent's resource
        # tracker must be told of its end: a worker ended mid-task left "leaked semaphore"
        # warnings. Under fork (never used to start a process here) locks are unnamed.
        import multiprocessing

        multiprocessing.set_start_method("fork", force=True)


def stop_pool(pool) -> None:
    """Cancel the tasks of a :func:`local_pool` not started and end its workers now
    (the tasks in flight are lost)."""
    # Python >= 3.14 has pool.terminate_workers(); before, the pool's own process map
    workers = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in workers:
        process.terminate()
    for process in workers:
        process.join(5)
    # The pool's manager thread sees the workers gone, frees its queues and closes its
    # wake-up pipe. The first shutdown forgot the thread, so a second shutdown(wait=True)
    # would not wait for it: left running, the interpreter's exit handler wrote to that
    # pipe as it was being closed ("OSError: Bad file descriptor" after the last line).
    if manager is not None:
        # Ctrl-C may come while submit() waits for the thread it just started to run
        started = time.monotonic() + 5
        while manager.ident is None and time.monotonic() < started:
            time.sleep(0.01)
        if manager.ident is not None:  # never started: nothing to join
            manager.join(10)


def oversubscription(jobs: int, threads: int, cores: int | None = None) -> str | None:
    """What to tell a user whose ``jobs`` processes of ``threads`` HiGHS threads each
    ask for more threads than the machine's ``cores`` (default: ``os.cpu_count()``);
    ``None`` when they fit. The figures stay the same; a time limit buys less."""
    cores = cores or os.cpu_count() or 1
    if jobs * threads <= cores:
        return None
    return (
        f"{jobs} worker processes x {threads} HiGHS thread(s) = {jobs * threads} threads on "
        f"{cores} cores: the workers compete for the cores, so a time-limited solve gets less "
        f"solving in its limit (a wider interval, never another figure); fewer --jobs or "
        f"--threads avoid it"
    )


@contextlib.contextmanager
def interrupts_held():
    """Ctrl-C held back while the block runs and raised when it ends. Around a fork: a
    ``KeyboardInterrupt`` raised in Python's at-fork handlers (logging's lock release,
    for one) is printed and dropped, so a Ctrl-C landing during ``os.fork`` was lost and
    the run went on. Outside the main thread (where no handler can be set) the block
    runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            signal.raise_signal(signal.SIGINT)  # now to the handler it was meant for


@functools.cache
def _blas_controller():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return None
    return ThreadpoolController()


def one_native_thread():
    """A context in which BLAS and OpenMP (scikit-learn's neighbour searches) run on one
    thread, whatever the machine: rlopt's products are small (a block of records times a
    few columns; NCA's gradient on 400 records), and OpenBLAS's threads made them 4-30
    times slower than one thread, more so on a busy machine (NCA on M4-33: 2.15 s on two
    threads, 0.51 s on one), and more so the more cores (a whole fit of M4-28 sb alone on
    16 cores: 14.7 s, 7.0 s on one thread)."""
    controller = _blas_controller()
    return contextlib.nullcontext() if controller is None else controller.limit(limits=1)


def with_progress(items: Iterable, total: int, label: str, enabled: bool):
    """``items`` as they come, with a progress bar on stderr (rich) when ``enabled``."""
    if not enabled:
        yield from items
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()
    ) as bar:
        task = bar.add_task(label, total=total)
        for item in items:
            bar.advance(task)
            yield item
