"""The chunking section of the HTML report (:func:`ragrade.compare_chunkings`; docs/spans.md, "Which chunker
wins"): one row per chunking (chunks, mean chunk length, index characters, the compared metrics, the best
in bold), span recall@k and span IoU@k curves per chunking, and IoU at k against the index size. The page
is the comparison's report (:func:`ragrade.report.html.render_comparison_html`) with this section after the
summary; its per-query view shows each chunking's retrieved chunks (ids ``chunking:chunk``) with their text
and their grade in the spans projected onto that chunking."""

from __future__ import annotations

import html
from typing import Any

import numpy as np

from ragrade.errors import InputError
from ragrade.formatting import number
from ragrade.report.plots import curve_plot
from ragrade.report.prepare import curve_table
from ragrade.report.svg import INK, MUTED, Axes, Figure, Group, Text, marker, nice_ticks, run_style, write_svg

#: (a :class:`ragrade.chunking.ChunkingComparison`: named, not imported, so that report/ does not import the
#: package that imports it)
ChunkingComparison = Any

ANCHOR = "chunking"


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def table_html(cc: ChunkingComparison, digits: int = 4) -> str:
    """The chunkings' table (best mean of each metric in bold)."""
    head = ("<th>chunks</th><th>mean length</th><th>index characters</th>"
            + "".join(f"<th>{_e(m)}</th>" for m in cc.metrics))
    best = {m: float(cc.table[m].astype(float).max()) for m in cc.metrics}
    rows = [f'<table id="chunkings"><thead><tr><th class="l">chunking</th>{head}</tr></thead><tbody>']
    for name, row in cc.table.iterrows():
        cells = [f"<td>{int(row['chunks'])}</td>", f"<td>{float(row['mean_length']):.1f}</td>",
                 f"<td>{int(row['index_characters'])}</td>"]
        for m in cc.metrics:
            pooled = row.get(f"pooled {m}")
            sub = f'<div class="ci">pooled {number(pooled, digits)}</div>' if pooled is not None else ""
            cls = ' class="best"' if float(row[m]) == best[m] else ""
            cells.append(f"<td{cls}>{number(row[m], digits)}{sub}</td>")
        rows.append(f'<tr><td class="l">{_e(name)}</td>{"".join(cells)}</tr>')
    rows.append("</tbody></table>")
    return "".join(rows)


def size_plot(cc: ChunkingComparison, metric: str | None = None) -> Figure:
    """Each chunking as a point: ``metric`` (default span IoU at k) against the characters its index holds."""
    col = metric or f"span_iou@{cc.k}"
    names = [str(n) for n in cc.table.index]
    x = cc.table["index_characters"].to_numpy(dtype=float)
    y = cc.table[col].to_numpy(dtype=float)
    desc = "; ".join(f"{n}: {number(v, 3)} with {int(c)} index characters" for n, v, c in zip(names, y, x, strict=True))
    fig = Figure(width=520, height=300, title=f"{col} against index size", name=f"{col}-by-size",
                 description=f"Mean {col} of every chunking against the characters of its index. {desc}.")
    kx = x / 1000.0  # thousands of characters
    lo, hi = float(np.nanmin(kx)), float(np.nanmax(kx))
    pad = (hi - lo) * 0.12 or max(hi * 0.1, 1.0)
    x_ticks = [t for t in nice_ticks(max(0.0, lo - pad), hi + pad) if max(0.0, lo - pad) <= t <= hi + pad]
    top = max(float(np.nanmax(y)) if np.isfinite(y).any() else 1.0, 1e-9)
    y_ticks = nice_ticks(0, top * 1.25)
    step = (y_ticks[1] - y_ticks[0]) if len(y_ticks) > 1 else top
    while y_ticks[-1] < top * 1.12:  # room above the highest point for its label
        y_ticks.append(y_ticks[-1] + step)
    ax = Axes(64, 40, 300, 200, (max(0.0, lo - pad), hi + pad), (0, y_ticks[-1]))
    fig.add(Text(12, 22, f"{col} against index size", size=13, weight="600"))
    ax.draw(fig, x_label="index characters (thousands)", y_label=f"mean {col}", x_ticks=x_ticks, y_ticks=y_ticks)
    x = kx
    for i, (n, px, py) in enumerate(zip(names, ax.sx(x), ax.sy(y), strict=True)):
        colour, shape, _ = run_style(i)
        fig.add(Group([marker(shape, float(px), float(py), 8.0, colour)],
                      attrs={"class": "tip", "data-tip": f"{n}: {col} {number(y[i], 4)}, "
                                                         f"{round(x[i] * 1000)} characters"}))
        fig.add(Text(float(px) + 7, float(py) - 6, n, size=10.5, fill=INK if i % 2 == 0 else MUTED))
    return fig


def section_html(cc: ChunkingComparison, plots: bool = True) -> str:
    """The section: table, notes and plots."""
    parts = [f'<section id="{ANCHOR}"><h2>Chunking</h2>', table_html(cc),
             f'<p class="note">{len(cc.truth.queries)} queries with {len(cc.truth)} gold spans. Span measures at '
             f'k = {cc.k}; pooled: every query\'s lengths summed before dividing. Index characters count overlaps '
             "every time.</p>"]
    for note in cc.notes:
        parts.append(f'<p class="note">{_e(note)}</p>')
    if plots:
        per_query = {name: r.per_query for name, r in cc.results.items()}
        for family in ("span_recall", "span_iou"):
            ks = sorted({int(c.split("@")[1]) for c in next(iter(per_query.values())).columns
                         if c.startswith(f"{family}@")})
            if len(ks) >= 2:
                table = curve_table(per_query, family, ks, n_resamples=2000)
                parts.append(f'<figure class="plot">{write_svg(curve_plot(table, family), interactive=True)}</figure>')
        if f"span_iou@{cc.k}" in cc.table:
            parts.append(f'<figure class="plot">{write_svg(size_plot(cc), interactive=True)}</figure>')
    parts.append("</section>")
    return "".join(parts)


def _union(cc: ChunkingComparison) -> tuple[Any, dict[str, Any], dict[str, str]]:
    """The projected spans of every chunking as one ground truth, the runs and the chunk texts, with ids
    ``chunking:chunk``."""
    from ragrade.data import Qrels, Run
    from ragrade.spans import chunk_texts, project

    qs: list[str] = []
    ds: list[str] = []
    gs: list[float] = []
    runs: dict[str, Any] = {}
    texts: dict[str, str] = {}
    for name, cm in cc.chunks.items():
        q = project(cc.truth, cm, corpus=cc.corpus)
        qs += q.per_row_queries().tolist()
        ds += [f"{name}:{d}" for d in q.per_row_docs().tolist()]
        gs += q.grades.tolist()
        lists = cc.runs[name].to_lists()
        runs[name] = Run.from_ranked({qid: [f"{name}:{d}" for d in docs] for qid, docs in lists.items()}, name=name)
        if cc.corpus is not None:
            texts.update({f"{name}:{c}": t for c, t in zip(cm.chunk_id.tolist(), chunk_texts(cc.corpus, cm),
                                                           strict=True)})
    return Qrels.from_columns(qs, ds, gs, source="projected spans"), runs, texts


def render_chunking_html(cc: ChunkingComparison, *, title: str = "ragrade chunking report", plots: bool = True) -> str:
    """The whole page (see the module docstring); two chunkings at least."""
    from ragrade.report.html import render_comparison_html

    if cc.comparison is None:
        raise InputError("the chunking report compares two chunkings at least")
    qrels, runs, texts = _union(cc)
    return render_comparison_html(cc.comparison, qrels, runs, texts=texts or None, queries=dict(cc.truth.questions) or None,
                                  title=title, plots=plots, depth=cc.k,
                                  sections=[(ANCHOR, "Chunking", section_html(cc, plots))])


__all__ = ["render_chunking_html", "section_html", "size_plot", "table_html"]
