"""Record linkage: distance-based record linkage (DBRL), probabilistic
(Fellegi–Sunter) linkage, and their evaluation."""

from rlopt.linkage.distance_based import TIE_RTOL, LinkageResult, dbrl, link_records
from rlopt.linkage.probabilistic import EMResult, PLDResult, fit_em, pld

__all__ = ["LinkageResult", "dbrl", "link_records", "TIE_RTOL", "EMResult", "PLDResult", "fit_em", "pld"]
