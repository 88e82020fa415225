"""The report's slice section: per slice, each run's mean and each pair's difference with its corrected
p-value (a table per slicing column), and a bar chart of the differences (inline SVG, drawn with
presentation attributes only, so the report's content security policy needs no change)."""

from __future__ import annotations

import html
import math
from typing import Any

from ragrade.formatting import number, pvalue, signed

_BAR_H = 18
_LABEL_W = 170
_PLOT_W = 360


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def slices_section_html(cmp: Any, digits: int = 4) -> str:
    """The ``<section id="slices">`` of the report (empty when the comparison has no slices)."""
    sliced = getattr(cmp, "slices", None)
    if sliced is None:
        return ""
    parts = ['<section id="slices"><h2>Slices</h2>']
    means = sliced.means
    for column in sliced.columns:
        part = sliced.pairs[sliced.pairs["column"] == column]
        parts.append(f"<h3>By {_e(column)}</h3>")
        head = "".join(f"<th>{_e(r)} · {_e(m)}</th>" for m in sliced.metrics for r in sliced.runs)
        parts.append(f'<table class="slices"><thead><tr><th class="l">slice</th><th>queries</th>{head}'
                     "</tr></thead><tbody>")
        labels = list(dict.fromkeys(part["slice"].tolist())) or [
            label for (col, label) in sliced.queries if col == column]
        sub = means[means["column"] == column]
        for label in labels:
            rows = sub[sub["slice"] == label]
            lookup = {(r.metric, r.run): r.mean for r in rows.itertuples(index=False)}
            cells = "".join(f"<td>{number(lookup.get((m, r), math.nan), digits)}</td>"
                            for m in sliced.metrics for r in sliced.runs)
            parts.append(f'<tr><td class="l">{_e(label)}</td><td>{sliced.queries[(column, label)]}</td>{cells}</tr>')
        parts.append("</tbody></table>")
        parts.append('<table class="slices"><thead><tr><th class="l">slice</th><th class="l">metric</th>'
                     '<th class="l">control</th><th class="l">treatment</th><th>Δ</th><th>p</th><th>p adj.</th>'
                     "</tr></thead><tbody>")
        for rec in part.to_dict("records"):
            cls = ""
            if rec["significant"]:
                cls = ' class="sig-pos"' if rec["delta"] > 0 else ' class="sig-neg"'
            parts.append(
                f'<tr><td class="l">{_e(rec["slice"])}</td><td class="l">{_e(rec["metric"])}</td>'
                f'<td class="l">{_e(rec["control"])}</td><td class="l">{_e(rec["treatment"])}</td>'
                f"<td{cls}>{signed(rec['delta'], digits)}</td><td>{pvalue(rec['p_value'])}</td>"
                f"<td{cls}>{pvalue(rec['p_adjusted'])}</td></tr>")
        parts.append("</tbody></table>")
        parts.append(slice_plot_svg(part, column))
    parts.append(f'<p class="note">{_e(sliced.description)}</p></section>')
    return "\n".join(parts)


def slice_plot_svg(pairs: Any, column: str) -> str:
    """Horizontal bars: the mean difference of every (slice, metric, pair), from a zero line; a filled
    bar is significant after the correction across slices, an outlined one is not."""
    recs = [r for r in pairs.to_dict("records") if not math.isnan(r["delta"])]
    if not recs:
        return ""
    span = max(abs(r["delta"]) for r in recs) or 1.0
    height = _BAR_H * len(recs) + 30
    width = _LABEL_W + _PLOT_W + 70
    zero = _LABEL_W + _PLOT_W / 2
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="slice-plot" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="mean difference per slice, by {_e(column)}">',
           f'<line x1="{zero}" y1="4" x2="{zero}" y2="{height - 20}" stroke="#888" stroke-width="1"/>']
    for i, r in enumerate(recs):
        y = 6 + i * _BAR_H
        w = abs(r["delta"]) / span * (_PLOT_W / 2)
        x = zero if r["delta"] >= 0 else zero - w
        colour = "#1f77b4" if r["delta"] >= 0 else "#d62728"
        fill = colour if r["significant"] else "none"
        label = f"{r['slice']} · {r['metric']}" + (f" · {r['treatment']} − {r['control']}"
                                                   if len({(p['control'], p['treatment']) for p in recs}) > 1 else "")
        out.append(f'<text x="{_LABEL_W - 6}" y="{y + 12}" text-anchor="end" font-size="11" '
                   f'fill="#333">{_e(label)}</text>')
        out.append(f'<rect x="{x:.2f}" y="{y + 2}" width="{max(w, 0.5):.2f}" height="{_BAR_H - 6}" '
                   f'fill="{fill}" stroke="{colour}" stroke-width="1"><title>{_e(label)}: Δ '
                   f'{signed(r["delta"], 4)}, p adj. {pvalue(r["p_adjusted"])}</title></rect>')
        out.append(f'<text x="{_LABEL_W + _PLOT_W + 6}" y="{y + 12}" font-size="11" fill="#333">'
                   f'{_e(signed(r["delta"], 3))}</text>')
    out.append(f'<text x="{zero}" y="{height - 6}" text-anchor="middle" font-size="11" fill="#555">'
               "mean difference (treatment − control); filled: significant after correction</text>")
    out.append("</svg>")
    return "".join(out)
