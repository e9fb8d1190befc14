"""Reports: self-contained HTML (figures embedded, user strings escaped) rendered
from computed figures; nothing here solves anything."""

from rlopt.report.html import render_compare_report, render_results_report, render_risk_report

__all__ = ["render_risk_report", "render_results_report", "render_compare_report"]
