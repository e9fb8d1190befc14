"""The anytime certificate of a learning run: its interval over time.

At every moment of a run the truth lies in ``[lower, upper]``: ``lower`` is the
best *recounted* count of an admissible parameter the run has met (never a
solver's unverified claim), ``upper`` the best proven ceiling (the screening's
records at risk, the MILP's bound). Each improvement of either end is an event
``{"seconds", "lower", "lower_source", "upper", "upper_source"}``, so a user who
stops a run at any moment holds an honest interval and knows which step
produced each end.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Certificate"]


@dataclass
class Certificate:
    """The interval of one run as it improves (``n_records`` records, clock from ``t0``,
    a ``time.perf_counter()`` value). ``progress(event)`` is called on every
    improvement (e.g. to print it)."""

    n_records: int
    t0: float = field(default_factory=time.perf_counter)
    progress: Callable[[dict], None] | None = None
    lower: int | None = None
    lower_source: str | None = None
    upper: int = field(init=False)
    upper_source: str = field(init=False)
    events: list[dict] = field(default_factory=list)

    def __post_init__(self):
        self.upper, self.upper_source = self.n_records, "number of records"

    def found(self, count: int, source: str) -> bool:
        """A verified count ``count`` (recounted from an admissible parameter) by
        ``source``; recorded when it raises the lower end. Returns whether it did."""
        if self.lower is not None and count <= self.lower:
            return False
        self.lower, self.lower_source = int(count), source
        self._event()
        return True

    def bounded(self, ceiling: int, source: str) -> bool:
        """A proven ceiling by ``source``; recorded when it lowers the upper end."""
        if ceiling >= self.upper:
            return False
        self.upper, self.upper_source = int(ceiling), source
        self._event()
        return True

    def _event(self) -> None:
        event = {
            "seconds": round(time.perf_counter() - self.t0, 3),
            "lower": self.lower,
            "lower_source": self.lower_source,
            "upper": self.upper,
            "upper_source": self.upper_source,
        }
        self.events.append(event)
        if self.progress is not None:
            self.progress(event)

    def to_list(self) -> list[dict]:
        return [dict(event) for event in self.events]
