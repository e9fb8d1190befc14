"""Record linkage: distance-based record linkage (DBRL), probabilistic
(Fellegi–Sunter) linkage, and their evaluation."""

from rlopt.linkage.distance_based import LinkageResult, dbrl, link_records
from rlopt.linkage.probabilistic import PLDResult, pld

__all__ = ["LinkageResult", "dbrl", "link_records", "PLDResult", "pld"]
