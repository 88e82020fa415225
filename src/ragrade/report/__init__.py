"""Reports of a comparison: the self-contained HTML report and its plots (no optional dependency).

- :func:`write_html` / :func:`render_html`: evaluate, compare and write one HTML file with the summary
  tables, interactive inline-SVG plots and a per-query drill-down; :func:`render_comparison_html` does it
  for an existing :class:`~ragrade.comparison.Comparison`.
- :mod:`ragrade.report.plots`: the plots as figures (scatter, sorted differences, metric@k curves,
  distributions, hole rate), saved as SVG (or PNG with matplotlib); :func:`write_plots` writes them all.
- :func:`read_payload`: the per-query data of a written report, back as Python data.
- :mod:`ragrade.report.conventions`: the conventions report (``ragrade.conventions``): one dataset's
  metrics under every applicable profile, side by side.
"""

from __future__ import annotations

from ragrade.report.data import read_payload
from ragrade.report.html import render_comparison_html, render_html, write_html
from ragrade.report.plots import write_plots

__all__ = ["read_payload", "render_comparison_html", "render_html", "write_html", "write_plots"]
