"""Reports of a comparison: the self-contained HTML report and plots (plots need the ``plots`` extra).

- :func:`write_html` / :func:`render_html`: evaluate, compare and write one HTML file with the summary
  tables, plots and a per-query drill-down; :func:`render_comparison_html` does it for an existing
  :class:`~ragrade.compare.Comparison`.
- :mod:`ragrade.report.plots`: metric@k curves, per-query distributions, sorted delta plots (PNG/SVG).
"""

from __future__ import annotations

from ragrade.report.html import json_for_html, render_comparison_html, render_html, write_html

__all__ = ["json_for_html", "render_comparison_html", "render_html", "write_html"]
