"""The membership attack's nouns: one distance's attack (:class:`Attack`), a family's
worst case (:class:`FamilyFigure`) and the whole answer (:class:`MembershipRisk`), with
its JSON, notebook view and plot."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from rlopt.risk.membership.calibration import Anchor, OutOfSample, PermutationNull
from rlopt.status import Status

__all__ = ["Attack", "FamilyFigure", "MembershipRisk"]


@dataclass(frozen=True)
class Attack:
    """One distance's attack, recounted: call a record a member when its nearest
    synthetic record is within ``threshold``; ``units = n_h TP - n_m FP``, so
    ``advantage = units / (n_m n_h) = TPR - FPR``."""

    family: str
    params: dict
    threshold: float
    units: int
    tpr: float
    fpr: float
    advantage: float


@dataclass(frozen=True)
class FamilyFigure:
    """A family's worst case: ``lower`` the best verified attack, ``ceiling`` the proven
    advantage no parameter of the family exceeds, ``status`` ``optimal`` when they meet."""

    family: str
    lower: Attack
    ceiling: float
    status: Status
    seconds: float
    source: str  # what proves the ceiling: "regions", "milp", or "none" (the trivial 1)
    solver: dict = field(default_factory=dict)
    model: dict = field(default_factory=dict)  # what the builder kept


@dataclass(frozen=True)
class MembershipRisk:
    """The membership figures of one release. ``fixed`` is the Euclidean distance to
    the closest record (the DCR other tools use) at its best threshold on the same
    split; ``dcr_share`` the share of synthetic records whose closest original is a
    member (about ``n_m / (n_m + n_h)`` when the release does not favour its training
    records); ``chance`` the fixed attack's advantage that 5 % of random relabellings of
    the same records as members and held out reach (what the fixed distance finds on this
    split when the release favours no one); ``families`` each family's worst case;
    ``worst`` the largest verified advantage and ``upper`` the largest ceiling over them."""

    columns: tuple[str, ...]
    n_members: int
    n_holdout: int
    n_synthetic: int
    fixed: Attack
    dcr_share: float
    chance: float
    families: dict[str, FamilyFigure]
    not_started: tuple[str, ...] = ()  # Ctrl-C came before these families
    out_of_sample: OutOfSample | None = None  # the headline (None: not run, or stopped)
    null: PermutationNull | None = None
    anchors: dict[str, Anchor] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()  # what was asked for but not run, and why
    stopped: bool = False  # Ctrl-C stopped the calibration (the in-sample figures finished)

    def _repr_html_(self) -> str:
        """A notebook's view (:mod:`rlopt.report.notebook`)."""
        from rlopt.report.notebook import membership_html

        return membership_html(self)

    def plot(self):
        """The advantages as intervals (out of sample, in sample per family, the anchors)."""
        from rlopt.report.notebook import membership_figure

        return membership_figure(self)

    @property
    def interrupted(self) -> bool:
        return self.stopped or self.status == Status.INTERRUPTED

    @property
    def worst(self) -> Attack:
        attacks = [self.fixed] + [f.lower for f in self.families.values()]
        return max(attacks, key=lambda a: a.units)

    @property
    def upper(self) -> float:
        """The ceiling of the worst case over the families (1 without a family: no
        distance but the fixed one was searched)."""
        if self.not_started:  # a family Ctrl-C kept from starting bounds nothing
            return 1.0
        return max((f.ceiling for f in self.families.values()), default=1.0)

    @property
    def status(self) -> Status:
        """The in-sample worst case's (a calibration Ctrl-C stopped leaves it as it was)."""
        if self.not_started or any(f.status == Status.INTERRUPTED for f in self.families.values()):
            return Status.INTERRUPTED  # Ctrl-C before a family's end
        # proven when a verified attack meets every family's ceiling (a family still open
        # below another's optimum changes nothing)
        return Status.PROVEN if self.families and self.worst.advantage >= self.upper else Status.INTERVAL

    def to_dict(self) -> dict:
        return {
            "columns": list(self.columns),
            "n_members": self.n_members,
            "n_holdout": self.n_holdout,
            "n_synthetic": self.n_synthetic,
            "advantage": self.worst.advantage,
            "advantage_upper": self.upper,
            "status": str(self.status),
            "source": self.worst.family,
            "not_started": list(self.not_started),
            "fixed_dcr": asdict(self.fixed),
            "dcr_share": self.dcr_share,
            "fixed_dcr_chance": self.chance,
            "families": {
                name: asdict(figure) | {"status": str(figure.status)}
                for name, figure in self.families.items()
            },
            "out_of_sample": None if self.out_of_sample is None else self.out_of_sample.to_dict(),
            "permutation_null": None if self.null is None else self.null.to_dict(),
            "anchors": {kind: anchor.to_dict() for kind, anchor in self.anchors.items()},
            "skipped": list(self.skipped),
        }
