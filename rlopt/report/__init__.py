"""Reports: self-contained HTML (figures embedded, user strings escaped) rendered
from computed figures; nothing here solves anything.

Modules:

- ``answer``: the worst case in one line (:func:`answer`, :func:`map_answer` for a map),
  first on every report and page;
- ``html``: the risk, results, compare and integral reports (Jinja templates in ``templates/``);
- ``plots``: their charts (matplotlib, embedded as data URIs)."""

from rlopt.report.answer import answer, map_answer
from rlopt.report.html import render_compare_report, render_results_report, render_risk_report

__all__ = ["answer", "map_answer", "render_risk_report", "render_results_report", "render_compare_report"]
