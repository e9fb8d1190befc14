"""Record linkage: distance-based record linkage (DBRL) and its evaluation."""

from rlopt.linkage.dbrl import TIE_RTOL, LinkageResult, dbrl, link_records

__all__ = ["LinkageResult", "dbrl", "link_records", "TIE_RTOL"]
