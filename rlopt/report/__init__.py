"""Reports: self-contained HTML (figures embedded, user strings escaped) rendered
from computed figures; nothing here solves anything.

Modules:

- ``answers``: the answer in one line (:func:`~rlopt.report.answers.answer`, ``map_answer``
  for a map, ``integral_answer`` for an update attack), first on every report and page;
- ``html``: the risk, results, compare and integral reports (Jinja templates in ``templates/``);
- ``plots``: their charts (matplotlib, embedded as data URIs);
- ``notebook``: what a notebook shows of a result (``_repr_html_``, ``.plot()``: a risk
  assessment, a learned estimator, a membership result, a map)."""

from rlopt.report.html import render_compare_report, render_results_report, render_risk_report

__all__ = ["render_risk_report", "render_results_report", "render_compare_report"]
