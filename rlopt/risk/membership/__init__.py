"""The worst case of a fully synthetic release: a distance-based membership attack
(docs/method.md §9).

A fully synthetic record is nobody's, so record linkage does not apply. What an
intruder can still learn is whether a record they hold was in the generator's
training file: they call it a member when its nearest synthetic record, under a
distance of a family, is within a threshold. With records held out of the training
file as non-members, the attack's advantage is ``TPR - FPR`` (0: the release says
nothing of membership; 1: it gives every member away). Tools of the field report it
for one fixed distance (the distance to the closest record, DCR, Euclidean); rlopt
reports the best distance and threshold of a family, proven or bracketed by the
parameter-space region search (:mod:`~rlopt.risk.membership.regions`) and the MILP
(:mod:`~rlopt.risk.membership.milp`), beside that fixed figure and its chance level.

- :func:`split_release`: a file split into members and held-out records, the members
  given to a generator of the masking registry (a fully synthetic one);
- :func:`membership_risk`: the three files in, :class:`MembershipRisk` out: the fixed
  Euclidean attack and its chance level, the share of synthetic records nearer a member
  than a held-out record (the DCR test of SDMetrics and SynthEval), and each family's
  worst case (:class:`FamilyFigure`);
- :func:`recount`: the attack of one parameter counted in plain numpy at its best
  threshold, the only source of a lower end;
- :func:`standardised`: the z-scores of the three files, by their pooled moments.

The package's modules, in the order a run meets them:

- :mod:`~rlopt.risk.membership.attack`: :func:`membership_risk` and the attack's steps
  (standardising, the fixed attack, each family's search, region search and MILP);
- :mod:`~rlopt.risk.membership.regions`: the parameter-space region search (an exact
  ceiling, and the best threshold of a distance);
- :mod:`~rlopt.risk.membership.milp`: the family's MILP (Pyomo, solved by HiGHS);
- :mod:`~rlopt.risk.membership.calibration`: the out-of-sample advantage (cross-fitting),
  the permutation null and the anchors;
- :mod:`~rlopt.risk.membership.result`: the nouns (:class:`Attack`,
  :class:`FamilyFigure`, :class:`MembershipRisk`).
"""

from rlopt.risk.membership.attack import (
    MILP_PAIRS,
    distances,
    euclidean,
    fit,
    membership_risk,
    recount,
    set_aside,
    split_release,
    standardised,
)
from rlopt.risk.membership.result import Attack, FamilyFigure, MembershipRisk

__all__ = [
    "MILP_PAIRS",
    "Attack",
    "FamilyFigure",
    "MembershipRisk",
    "distances",
    "euclidean",
    "fit",
    "membership_risk",
    "recount",
    "set_aside",
    "split_release",
    "standardised",
]
