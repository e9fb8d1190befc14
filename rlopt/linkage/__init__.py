"""Record linkage: distance-based record linkage (DBRL), probabilistic
(Fellegi–Sunter) linkage, and their evaluation.

- :mod:`~rlopt.linkage.distance_based`: :func:`link_records` (each masked record's
  nearest original, exactly, by a KD-tree or pair by pair), :func:`dbrl` on two files,
  and :func:`recount`, the reference count of a parameter at a margin (plain numpy,
  independent of the MILP's coefficients: what every reported count is);
- :mod:`~rlopt.linkage.nearest`, :mod:`~rlopt.linkage.boxes` and
  :mod:`~rlopt.linkage.brute`: the three exact paths (a KD-tree after a linear map,
  boxes bounded at their nearest corner for a monotone distance, every pair);
- :mod:`~rlopt.linkage.identical`: groups of identical records, evaluated once, and the
  ceiling they prove for every distance;
- :mod:`~rlopt.linkage.probabilistic`: :func:`pld`.
"""

from rlopt.linkage.distance_based import LinkageResult, dbrl, link_records, recount
from rlopt.linkage.probabilistic import PLDResult, pld

__all__ = ["LinkageResult", "dbrl", "link_records", "recount", "PLDResult", "pld"]
