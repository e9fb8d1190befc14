"""Families side by side and spare workers racing the open ones: every core on the proof.

:func:`race` learns several families of one pair in ``jobs`` worker processes (or on a
Dask cluster). Each family starts one run when a worker is free (in the order given, so a
family started late gets the parameters of those finished as starts); a worker that a
proven family frees starts another run of a family still open, with another HiGHS seed
(:attr:`~rlopt.milp.solvers.options.SolverOptions.seed`) and the time left to that
family's limit. A branch and bound's time varies with its seed by large factors, and the
runs of one family tell each other their ceilings and parameters as they go
(:mod:`rlopt.milp.racing.peers`): the first to meet the others' ends stops them all.

:func:`combine` makes a family's figure of its runs: the best verified lower end (each run
recounted its own parameter), the lowest ceiling (each run's bound is proven on an exact
model of the same problem), ``optimal`` where they meet. A proven figure is the family's
optimum whatever the number of workers; an interval at a time limit may narrow with it.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rlopt.data import LinkageData
from rlopt.exceptions import InputError, RecountMismatchError, SolverError
from rlopt.families import Distance, LearnedFamily, get_learned_family
from rlopt.milp.racing.peers import Peers, read_states
from rlopt.milp.solvers.options import SolverOptions
from rlopt.results import LearnResult
from rlopt.status import Status

__all__ = ["Raced", "race", "combine", "MIN_RACE_SECONDS"]

MIN_RACE_SECONDS = 5.0
"""A spare run is not started with less than this left to its family's limit."""

POLL_SECONDS = 0.5


@dataclass
class Raced:
    """One family's outcome: its combined result and parameter, or the ``error`` that
    failed every run of it; ``runs`` how many runs (seeds) it had."""

    family: str
    result: LearnResult | None = None
    distance: Distance | None = None
    error: str | None = None
    runs: int = 0


def combine(
    family: str, outcomes: Sequence[tuple[LearnResult, Distance | None, int]]
) -> tuple[LearnResult, Distance | None]:
    """A family's figure of its runs ``(result, distance, seed)``: the parameter of the best
    verified count, the lowest proven ceiling, ``optimal`` where the two meet. A verified
    count above another run's proven ceiling is a :class:`RecountMismatchError`."""
    best, distance, best_seed = max(outcomes, key=lambda o: (_verified(o[0]), -o[2]))
    bounded = [(o[0].bound, o[2]) for o in outcomes if o[0].bound is not None]
    bound, bound_seed = min(bounded) if bounded else (best.bound, best_seed)
    verified = best.n_correct_verified
    if verified is not None and bound is not None and verified > bound:
        raise RecountMismatchError(
            f"{family}: the run with seed {best_seed} re-identifies {verified} records (recounted), "
            f"above the ceiling {bound} that the run with seed {bound_seed} proved: no figure is reported"
        )
    status, claimed = best.status, best.claimed
    if verified is not None and verified == bound:
        status, claimed = Status.OPTIMAL, bound
    race = {
        "runs": len(outcomes),
        "seeds": sorted(o[2] for o in outcomes),
        "lower_from_seed": best_seed,
        "bound_from_seed": bound_seed,
    }
    result = dataclasses.replace(
        best,
        status=status,
        claimed=claimed,
        bound=bound,
        gap=None if verified is None or bound is None else (bound - verified) / max(bound, 1),
        solver={**best.solver, "race": race},
        seconds={**best.seconds, "total": max(o[0].seconds.get("total", 0.0) for o in outcomes)},
    )
    return result, distance


def _verified(result: LearnResult) -> int:
    """A result's verified count for a comparison (-1 when it has none)."""
    return -1 if result.n_correct_verified is None else result.n_correct_verified


def _learn_one(
    data: LinkageData,
    family: LearnedFamily,
    margin: float,
    options: SolverOptions,
    known: list,
    folder: str,
    settings: dict,
    first: bool = True,
) -> tuple[LearnResult, Distance | None]:
    """One run of a race, in a worker (module level: it pickles). ``settings``: the
    other arguments of :func:`~rlopt.milp.pipeline.learn` (reductions, searches, ...);
    ``first``: the family's first run (the others leave out what the first does alone)."""
    from rlopt.milp.ceilings.regions import supports
    from rlopt.milp.pipeline import learn
    from rlopt.milp.reductions import Searches

    run = _run_name(family.name, options.seed)
    if not first:  # the first run's export, and its parameter-space branch and bound (deterministic)
        settings = {**settings, "export": None}
        if supports(family, data.n_attributes):  # the block search instead takes the run's seed
            searches = settings.get("searches") or Searches()
            settings["searches"] = dataclasses.replace(searches, parameter_bb=False)
    return learn(
        data, family, margin=margin, options=options, known=known, peers=Peers(folder, run), **settings
    )


def _run_name(family: str, seed: int) -> str:
    """A run's name in the channel (its file), one per family and seed."""
    return f"{family}-seed{seed}"


@dataclass
class _Family:
    """A family's runs so far: started at ``t0`` (``time.perf_counter``), its outcomes,
    its runs in flight, its latest combined interval (what ``intervals`` was told)."""

    name: str
    family: LearnedFamily
    t0: float | None = None
    outcomes: list = field(default_factory=list)
    running: int = 0
    started: int = 0
    errors: list[str] = field(default_factory=list)
    contradicted: bool = False  # a run's recount contradicted its solver: no figure
    told: tuple | None = None

    def closed(self) -> bool:
        """Whether another run could change the figure: not once a run proved it, stopped
        at its gap or cut limit (before the time limit, so another would too), or
        contradicted a proof (the family has no figure)."""
        return self.contradicted or any(o[0].status != Status.TIME_LIMIT for o in self.outcomes)

    def left(self, time_limit: float | None, now: float) -> float | None:
        return None if time_limit is None or self.t0 is None else self.t0 + time_limit - now


class _Race:
    """The scheduler of :func:`race`: which run starts when a worker is free."""

    def __init__(self, data, families, margin, options, known, folder, say, intervals, settings):
        self.data, self.margin, self.options, self.folder = data, margin, options, folder
        self.families = [_Family(family.name, family) for family in families]
        self.settings = settings
        self.known, self.say, self.intervals = list(known), say, intervals
        self.futures: dict[concurrent.futures.Future, tuple[_Family, int]] = {}

    def next_run(self, now: float) -> tuple[_Family, SolverOptions] | None:
        """A family not started yet (in order), else the open family with the fewest runs
        in flight (the largest on a tie) with time left; ``None`` when none is."""
        waiting = [f for f in self.families if f.t0 is None]
        if waiting:
            family = waiting[0]
            family.t0 = now
            return family, self.options
        limit = self.options.time_limit
        open_ = [
            f
            for f in self.families
            if f.running
            and not f.closed()
            and ((left := f.left(limit, now)) is None or left >= MIN_RACE_SECONDS)
        ]
        if not open_:
            return None
        family = min(reversed(open_), key=lambda f: f.running)
        left = family.left(limit, now)
        seed = self.options.seed + family.started  # the first run has the user's seed
        return family, dataclasses.replace(self.options, seed=seed, time_limit=left)

    def start(self, executor, now: float) -> bool:
        chosen = self.next_run(now)
        if chosen is None:
            return False
        family, options = chosen
        known = self.known + self.finished_parameters()
        first = family.started == 0
        future = executor.submit(
            _learn_one,
            self.data,
            family.family,
            self.margin,
            options,
            known,
            self.folder,
            self.settings,
            first,
        )
        self.futures[future] = (family, options.seed)
        family.running += 1
        family.started += 1
        self.say(
            f"learning {family.name} (time limit {options.time_limit} s)"
            if first
            else f"racing {family.name}: run {family.started} (seed {options.seed}, {options.time_limit:.0f} s left)"
            if options.time_limit is not None
            else f"racing {family.name}: run {family.started} (seed {options.seed})"
        )
        return True

    def finished_parameters(self) -> list[tuple[str, Distance]]:
        """The best parameter of each family whose runs have all ended (a start of the
        families that contain it)."""
        found = []
        for family in self.families:
            if family.outcomes and not family.running:
                distance = max(family.outcomes, key=lambda o: _verified(o[0]))[1]
                if distance is not None:
                    found.append((f"{family.name}'s best parameter", distance))
        return found

    def collect(self, future: concurrent.futures.Future) -> _Family:
        """A run's outcome (or failure) kept with its family, which it returns."""
        family, seed = self.futures.pop(future)
        family.running -= 1
        try:
            result, distance = future.result()
        except RecountMismatchError as exc:  # a proof contradicted: the family has no figure
            family.errors.append(str(exc))
            family.contradicted = True
        except SolverError as exc:  # this seed's solve failed
            family.errors.append(f"seed {seed}: {exc}")
            # the others' figures stand, unless they may have taken a ceiling it published
            # before it failed (alone, nothing a failed solve returned is a figure)
            mine = [s for s in read_states(self.folder) if s.run == _run_name(family.name, seed)]
            family.contradicted |= any(s.upper is not None for s in mine)
        else:
            family.outcomes.append((result, distance, seed))
        return family

    def tell(self, now: float) -> None:
        """Each family's combined interval, to ``intervals``, when it narrowed."""
        if self.intervals is None:
            return
        states = read_states(self.folder)
        for family in self.families:
            mine = [s for s in states if s.family == family.name]
            lowers = [s for s in mine if s.lower is not None]
            uppers = [s for s in mine if s.upper is not None]
            if not lowers and not uppers:
                continue
            low = max(lowers, key=lambda s: s.lower or 0, default=None)
            up = min(uppers, key=lambda s: s.upper or 0, default=None)
            key = (low and low.lower, up and up.upper)
            if key != family.told:
                family.told = key
                self.intervals(
                    family.name,
                    {
                        "seconds": round(now - (family.t0 or now), 3),
                        "lower": low and low.lower,
                        "lower_source": low and low.lower_source,
                        "upper": up and up.upper,
                        "upper_source": up and up.upper_source,
                    },
                )

    def run(self, executor, slots: int, finished: Callable[[Raced], None] | None) -> None:
        """Start runs while a worker is free, collect them as they end, until none is left;
        ``finished`` told of each family whose last run ended."""
        while True:
            now = time.perf_counter()
            while len(self.futures) < slots and self.start(executor, now):
                pass
            if not self.futures:
                return
            done, _ = concurrent.futures.wait(
                list(self.futures), timeout=POLL_SECONDS, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for future in done:
                family = self.collect(future)
                if not family.running and finished is not None:  # no run of it starts again
                    finished(self.outcome(family))
            self.tell(time.perf_counter())

    def outcome(self, family: _Family) -> Raced:
        if family.contradicted or not family.outcomes:
            why = "; ".join(family.errors) or "no run finished"
            return Raced(family.name, error=why, runs=family.started)
        try:
            result, distance = combine(family.name, family.outcomes)
        except RecountMismatchError as exc:
            return Raced(family.name, error=str(exc), runs=family.started)
        if family.errors:  # a seed whose solve failed: said beside the figure the others made
            result.solver["race"]["failed"] = list(family.errors)
        return Raced(family.name, result, distance, runs=family.started)


def race(
    data: LinkageData,
    families: Sequence[str | LearnedFamily],
    *,
    margin: float,
    options: SolverOptions,
    jobs: int,
    scheduler: str | None = None,
    known: Sequence[tuple[str, Distance]] = (),
    progress: Callable[[str], None] | None = None,
    intervals: Callable[[str, dict], None] | None = None,
    settings: dict | None = None,
    finished: Callable[[Raced], None] | None = None,
) -> list[Raced]:
    """Learn ``families`` on ``data`` in ``jobs`` worker processes (or on the Dask
    ``scheduler``): side by side, spare workers racing the open ones with other seeds
    (see the module's docstring). One :class:`Raced` per family, in the order given;
    ``progress(message)`` as each run starts, ``intervals(family, event)`` as a
    family's combined interval narrows; ``settings``: the other arguments of every run's
    :func:`~rlopt.milp.pipeline.learn` (``reductions``, ``searches``, ``big_c``, ...; the
    runs after the first leave out the parameter-space branch and bound and ``export``);
    ``finished(raced)`` as each family's last run ends (what a Ctrl-C later keeps).
    Ctrl-C ends every worker and raises ``KeyboardInterrupt``."""
    from rlopt.processes import dask_client, local_pool, oversubscription, stop_pool

    if scheduler is None and (message := oversubscription(jobs, options.threads or 1)):
        warnings.warn(message, stacklevel=2)
    resolved = [get_learned_family(f) if isinstance(f, str) else f for f in families]
    names = [f.name for f in resolved]
    shared = sorted({n for n in names if names.count(n) > 1})
    if shared:  # a family's runs, states and ceilings are keyed by its name
        raise InputError(
            f"families named {shared} more than once (e.g. ci_k with two k); expected each name once: "
            "race families of one name in separate calls"
        )
    say = progress or (lambda message: None)
    client = dask_client(scheduler) if scheduler is not None else None  # a bad address: an error first
    folder = tempfile.mkdtemp(prefix="rlopt-race-")
    state = _Race(data, resolved, margin, options, known, folder, say, intervals, settings or {})
    executor = client.get_executor() if client is not None else local_pool(jobs)
    slots = jobs if client is None else _cluster_threads(client)
    try:
        state.run(executor, slots, finished)
    except BaseException:  # Ctrl-C, or a worker lost: end every run now
        if client is None:
            stop_pool(executor)
        raise
    else:
        if client is None:
            executor.shutdown(wait=True)
        return [state.outcome(f) for f in state.families]
    finally:
        if client is not None:
            client.close()
        shutil.rmtree(folder, ignore_errors=True)


def _cluster_threads(client) -> int:
    """The threads of the Dask cluster's workers (one run each), at least one."""
    workers = client.scheduler_info().get("workers", {})
    return max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))
