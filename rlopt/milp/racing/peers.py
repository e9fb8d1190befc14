"""What the runs racing on one pair tell each other (:mod:`rlopt.milp.racing.race`).

Every run of a race (several families side by side, several seeds of one family) owns one
:class:`Peers` on a shared folder. It publishes its interval as it narrows: its verified
lower end with the parameter that reaches it, and its proven ceiling. It hears the others':

- a peer's **ceiling** of the same family is a ceiling of this run too (the same problem:
  same pair, family and margin; each run's bound is proven on an exact model);
- a peer's **parameter**, of the same family or of one this family contains
  (:func:`rlopt.families.containment.embed`), is *recounted by this run* before it counts:
  a lower end is never taken on a peer's word.

A run whose verified lower end meets the lowest ceiling stops (the interval is closed).

The channel is a folder of small JSON files, one per run, each replaced whole
(``os.replace``): nothing to start or stop, and a reader never sees half a file. Runs on
one machine share it (the local pool, a local Dask cluster); runs on machines that do not
share the folder hear nothing from each other, which costs only time, never a figure.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Peers", "PeerState", "read_states"]

INTERVAL = 0.5
"""Seconds between two publications, and between two readings, of one run."""


@dataclass(frozen=True)
class PeerState:
    """One run's interval as it last published it: ``lower`` verified (by that run's
    recount) with ``theta`` of ``family``; ``upper`` proven."""

    run: str
    family: str
    lower: int | None
    lower_source: str | None
    theta: tuple[float, ...] | None
    upper: int | None
    upper_source: str | None
    seconds: float
    done: bool = False

    def to_dict(self) -> dict:
        return {**vars(self), "theta": None if self.theta is None else list(self.theta)}

    @classmethod
    def from_dict(cls, d: dict) -> PeerState:
        theta = d.get("theta")
        return cls(**{**d, "theta": None if theta is None else tuple(map(float, theta))})


def read_states(folder: str | Path) -> list[PeerState]:
    """Every run's latest state in ``folder`` (a file being replaced is read whole or not
    at all; an unreadable one is skipped: it only costs the news it held)."""
    states = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            states.append(PeerState.from_dict(json.loads(path.read_text())))
        except (OSError, ValueError, TypeError):
            continue
    return states


class Peers:
    """Run ``run``'s end of the channel in ``folder``: :meth:`publish` its interval,
    :meth:`heard` the others' (at most every :data:`INTERVAL` seconds each)."""

    def __init__(self, folder: str | Path, run: str):
        self.folder, self.run = Path(folder), run
        self.recounted: set[tuple[str, int]] = set()  # (run, lower) of the peers' parameters recounted here
        self._published: tuple | None = None
        self._last_publish = -math.inf
        self._last_read = -math.inf
        self._t0 = time.perf_counter()

    def publish(
        self,
        family: str,
        lower: int | None,
        lower_source: str | None,
        theta: np.ndarray | None,
        upper: int | None,
        upper_source: str | None,
        *,
        done: bool = False,
        force: bool = False,
    ) -> None:
        """This run's interval, when it changed (and not within :data:`INTERVAL` of the
        last publication unless ``force`` or ``done``)."""
        now = time.perf_counter()
        key = (lower, upper, done)
        if key == self._published or (not (force or done) and now - self._last_publish < INTERVAL):
            return
        state = PeerState(
            run=self.run,
            family=family,
            lower=lower,
            lower_source=lower_source,
            theta=None if theta is None else tuple(float(v) for v in np.ravel(theta)),
            upper=upper,
            upper_source=upper_source,
            seconds=round(now - self._t0, 3),
            done=done,
        )
        path = self.folder / f"{self.run}.json"
        partial = self.folder / f".{self.run}.json.part"
        try:
            partial.write_text(json.dumps(state.to_dict()))
            os.replace(partial, path)
        except OSError:  # a worker that does not share the folder (a remote Dask worker): silence
            return
        self._published, self._last_publish = key, now

    def heard(self, *, force: bool = False) -> list[PeerState] | None:
        """The other runs' states; ``None`` when read less than :data:`INTERVAL` ago."""
        now = time.perf_counter()
        if not force and now - self._last_read < INTERVAL:
            return None
        self._last_read = now
        return [state for state in read_states(self.folder) if state.run != self.run]
