"""What a risk assessment found, as typed rows: the headline (the worst case), one row
per baseline and one per family, beside the other figures. :class:`RiskAssessment`
holds them; :attr:`RiskAssessment.figures` is their JSON form (what ``--json`` writes
and the HTML report renders)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rlopt.risk.threshold import Decision
from rlopt.risk.worst_case import WorstCase
from rlopt.status import Status

__all__ = ["BaselineRow", "FamilyRow", "Headline", "RiskAssessment", "plain"]


@dataclass(frozen=True, kw_only=True)
class BaselineRow:
    """A baseline's count (AM, MD: also at the margin, the count a family's ceiling
    bounds; PLD: in no family, only strictly). ``status`` is ``exact``, or says why there
    is no count (``undefined: …``, ``not computed: …``)."""

    rate: float | None
    n_correct: int | None
    status: str
    n_correct_margin: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class FamilyRow:
    """A learned family's interval ``[n_correct, bound]`` (or a saved parameter's count).

    ``source`` is ``"learned"`` or ``"saved parameters"``; ``lower_source`` names the step
    whose parameter reached the lower end; ``history`` is the interval over the run (its
    certificate's events); ``sample`` the solve on the learning sample of a large file
    (then ``status`` is ``sampled`` and the counts are the whole file's recount);
    ``blocks`` the certificate of its block ceilings (:mod:`rlopt.milp.ceilings.blocks`), if any;
    ``upper_source`` what proves ``bound`` (the certificate's name: ``MILP bound``,
    ``identical records``, ...)."""

    family: str
    source: str
    rate: float | None = None
    n_correct: int | None = None
    bound: int | None = None
    bound_rate: float | None = None
    status: str
    gap: float | None = None
    seconds: float = 0.0
    n_at_risk: int | None = None
    at_risk_exact: bool | None = None
    lower_source: str | None = None
    history: list[dict] | None = field(default=None, repr=False)
    sample: dict | None = None
    blocks: dict | None = field(default=None, repr=False)
    upper_source: str | None = None

    @property
    def learned(self) -> bool:
        return self.source == "learned"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class Headline:
    """The worst case over everything the run measured: ``[n_correct, upper_n_correct]``
    of ``n_records``, reached by ``source``, capped by ``upper_source``; ``failed`` names
    what was asked for and failed, ``incomplete`` says so in words (``None``: nothing).
    With no learned family and no attack there is no worst case (``rate`` is ``None``)."""

    rate: float | None
    status: str
    source: str | None
    n_correct: int | None = None
    upper_rate: float | None = None
    upper_n_correct: int | None = None
    upper_source: str | None = None
    n_records: int | None = None
    note: str | None = None
    failed: tuple[str, ...] = ()
    incomplete: str | None = None
    stopped: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        worst: WorstCase,
        *,
        failed: tuple[str, ...],
        incomplete: str | None,
        stopped: tuple[str, ...] = (),
    ) -> Headline:
        n = worst.n_records
        interrupted = stopped and worst.status != Status.PROVEN
        return cls(
            rate=worst.n_correct / n,
            n_correct=worst.n_correct,
            upper_rate=worst.upper / n,
            upper_n_correct=worst.upper,
            status=Status.INTERRUPTED if interrupted else worst.status,
            source=worst.source,
            upper_source=worst.upper_source,
            n_records=n,
            note=worst.note,
            failed=failed,
            incomplete=incomplete,
            stopped=stopped,
        )

    @property
    def proven(self) -> bool:
        return self.status == Status.PROVEN

    def to_dict(self) -> dict:
        return asdict(self) | {"failed": list(self.failed), "stopped": list(self.stopped)}


@dataclass
class RiskAssessment:
    """Every figure of a risk report.

    Attributes
    ----------
    headline : Headline
        The worst case and whether it is proven.
    baselines : dict of str to BaselineRow
        AM, MD and PLD, by name.
    families : list of FamilyRow
        Each learned family (and saved parameter), in learning order.
    inputs, params, shapley, attack, generalisation, interval_disclosure, information_loss, records_summary, tradeoff
        The other figures, JSON-ready: the run's inputs and notes, each family's
        parameter and the Choquet parameters' Shapley values, the transparency attack,
        the k-fold generalisation, interval disclosure, information loss, the per-record
        table's sums and the risk-utility trade-off (``None`` when not asked for).
    records : DataFrame
        One row per record: which families' optima re-identify it, whether some
        admissible parameter of each family can, the baselines and the attack.
    drivers : dict or None
        Which attribute carries the risk (:func:`rlopt.risk.drivers.attribute_drivers`:
        the worst case without each attribute, ranked, what the parameters say of each
        attribute, the records every method re-identifies); ``None`` when not asked for.
    decision : Decision or None
        The answer to the officer's threshold (:func:`rlopt.risk.threshold.decide`):
        passes, fails or undecided; ``None`` without a threshold.
    """

    headline: Headline
    baselines: dict[str, BaselineRow]
    families: list[FamilyRow]
    inputs: dict
    params: dict
    shapley: dict
    attack: dict | None
    generalisation: list
    interval_disclosure: list
    information_loss: dict
    records_summary: dict
    tradeoff: list | None
    records: pd.DataFrame = field(repr=False)
    drivers: dict | None = None
    decision: Decision | None = None

    def _repr_html_(self) -> str:
        """A notebook's view: the answer line, the families' intervals and the baselines
        (:mod:`rlopt.report.notebook`)."""
        from rlopt.report.notebook import assessment_html

        return assessment_html(self)

    def plot(self):
        """Each family's interval and the baselines, as a matplotlib figure."""
        from rlopt.report.notebook import assessment_figure

        return assessment_figure(self)

    @property
    def failed(self) -> list[str]:
        """What was asked for and failed (families, generalisation folds, trade-off
        cells), as in the headline's ``incomplete`` text; empty when nothing failed."""
        return list(self.headline.failed)

    @property
    def stopped(self) -> list[str]:
        """What a Ctrl-C stopped before it finished (families, whose rows hold the
        interval they had reached, and later steps); empty for a run that ended."""
        return list(self.headline.stopped)

    @property
    def complete(self) -> bool:
        """Whether everything asked for was assessed: when not, the headline is over what
        was, and the worst case may be higher (see :attr:`failed`, :attr:`stopped`)."""
        return not self.failed and not self.stopped

    @property
    def figures(self) -> dict[str, Any]:
        """The JSON form: ``inputs``, ``headline``, ``baselines``, ``families``,
        ``params``, ``shapley``, ``attack``, ``generalisation``, ``interval_disclosure``,
        ``information_loss``, ``records_summary``, ``tradeoff``, ``drivers``, ``decision``."""
        return {
            "inputs": self.inputs,
            "interrupted": bool(self.stopped),
            "headline": self.headline.to_dict(),
            "baselines": {name: row.to_dict() for name, row in self.baselines.items()},
            "families": [row.to_dict() for row in self.families],
            "params": self.params,
            "shapley": self.shapley,
            "attack": self.attack,
            "generalisation": self.generalisation,
            "interval_disclosure": self.interval_disclosure,
            "information_loss": self.information_loss,
            "records_summary": self.records_summary,
            "tradeoff": self.tradeoff,
            "drivers": self.drivers,
            "decision": None if self.decision is None else self.decision.to_dict(),
        }

    def to_json(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.figures, indent=1, default=plain))
        return path


def plain(value):
    """A numpy scalar or array as the Python value JSON writes."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")
