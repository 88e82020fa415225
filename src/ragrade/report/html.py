"""The self-contained HTML report: summary tables, plots and a per-query drill-down in one file.

Safety: the file loads nothing (its Content-Security-Policy, ``default-src 'none'``, forbids every fetch)
and runs and styles nothing but its own script and style sheet, both allowed by their SHA-256 hashes.
Plots are inline SVG drawn by ragrade. Names and numbers in the static tables and plots are
HTML-escaped; the per-query data sits in a base64 block that no string can break out of, and the page
script puts every string on screen with ``textContent``.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import html
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ragrade.comparison import Comparison, metric_labels, name_runs
from ragrade.comparison.export import groups_note, hole_cells, hole_note, pair_rows, summary_rows
from ragrade.comparison.stats import CIMethod
from ragrade.errors import InputError, RagradeError
from ragrade.formatting import number, pvalue, signed
from ragrade.options import public
from ragrade.report._assets import CSS, JS
from ragrade.report.data import (
    Prepared,
    build_payload,
    default_depth,
    pack_payload,
    prepare_items,
    report_queries,
)
from ragrade.report.plots import comparison_figures
from ragrade.report.prepare import DEFAULT_KS, compare_evaluated, evaluate_runs, read_input
from ragrade.report.slices import slices_section_html
from ragrade.report.svg import file_stem
from ragrade.report.traces import traces_section_html

MAX_PAIR_PLOTS = 10
"""Pairs of runs that get a scatter and a difference plot per metric (more: ``ragrade plot``)."""

_KIND_LABELS = {
    "curves": "metric@k",
    "distribution": "distribution",
    "scatter": "per-query scatter",
    "difference": "sorted differences",
    "hole_rate": "hole rate",
}


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


# --------------------------------------------------------------------------------------------- static parts
def summary_table_html(cmp: Comparison, digits: int = 4) -> str:
    rows = summary_rows(cmp)
    counts = {m: int(rows[(m, cmp.runs[0])]["n"]) for m in cmp.metrics}
    head = "".join(f'<th>{_e(m)}<div class="ci">n = {counts[m]}</div></th>' for m in cmp.metrics)
    holes = hole_cells(cmp)
    if holes:
        head += f'<th>holes@{_e(str(cmp.hole_k))}<div class="ci">unjudged</div></th>'

    out = [
        f'<table id="summary"><thead><tr><th class="l">#</th><th class="l">run</th>{head}</tr></thead><tbody>'
    ]
    for run in cmp.runs:
        cells = []
        for metric in cmp.metrics:
            row = rows[(metric, run)]
            sup = f"<sup>{_e(row['marker'])}</sup>" if row["marker"] else ""
            grp = f'<span class="grp" title="significance group">{_e(row["group"])}</span>' if row["group"] else ""
            ci = f'<div class="ci">[{number(row["ci_low"], digits)}, {number(row["ci_high"], digits)}]</div>'
            cls = ' class="best"' if row["best"] else ""
            cells.append(f"<td{cls}>{number(row['mean'], digits)}{sup}{grp}{ci}</td>")
        if holes:
            cells.append(f"<td>{_e(holes[run])}</td>")
        out.append(
            f'<tr><td class="l">{_e(cmp.letters[run])}</td><td class="l">{_e(run)}</td>{"".join(cells)}</tr>'
        )
    out.append("</tbody></table>")
    return "".join(out)


def pairs_table_html(cmp: Comparison, digits: int = 4) -> str:
    out = [
        '<table id="pairs"><thead><tr><th class="l">metric</th><th class="l">control</th><th class="l">treatment</th>'
        "<th>Δ</th><th>Δ CI</th><th>p</th><th>p adj.</th><th>Cohen's d<sub>z</sub></th>"
        '<th title="minimal detectable effect: the smallest difference a paired t-test detects with power 0.8 '
        'at this number of queries">MDE</th><th>wins</th><th>ties</th>'
        "<th>losses</th></tr></thead><tbody>"
    ]
    for metric, a, b, row in pair_rows(cmp):
        cls = ""
        if row["significant"]:
            cls = ' class="sig-pos"' if row["delta"] > 0 else ' class="sig-neg"'
        out.append(
            f'<tr><td class="l">{_e(metric)}</td><td class="l">{_e(a)}</td><td class="l">{_e(b)}</td>'
            f"<td{cls}>{signed(row['delta'], digits)}</td>"
            f'<td class="ci">[{number(row["delta_ci_low"], digits)}, {number(row["delta_ci_high"], digits)}]</td>'
            f"<td>{pvalue(row['p_value'])}</td><td{cls}>{pvalue(row['p_adjusted'])}</td>"
            f"<td>{number(row['cohens_dz'], 2)}</td><td>{number(row.get('mde'), digits)}</td><td>{row['wins']}</td><td>{row['ties']}</td><td>{row['losses']}</td></tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)


def _keys_for(cmp: Comparison, qids: Sequence[str]) -> dict[str, np.ndarray]:
    """Per run, the report's query number of every row of ``cmp.scores[run]``."""
    index = pd.Index(np.asarray(list(qids), dtype=object), dtype=object)
    out = {}
    for run in cmp.runs:
        frame = cmp.scores[run]
        pos = index.get_indexer(np.asarray(frame.index, dtype=object))
        out[run] = pos.astype(np.int64)
    return out


def plots_html(
    cmp: Comparison,
    qids: Sequence[str],
    *,
    curves: Mapping[str, pd.DataFrame] | None = None,
    hole_rates: Any = None,
    max_pair_plots: int = MAX_PAIR_PLOTS,
) -> str:
    """The plots section: per metric its plots (inline SVG with the hooks of the page script)."""
    pairs = list(dict.fromkeys((a, b) for _, a, b in cmp.pairs.index))
    shown = pairs[:max_pair_plots]
    figures = comparison_figures(cmp, curves=curves, hole_rates=hole_rates, keys=_keys_for(cmp, qids), pairs=shown)
    run_index = {r: i for i, r in enumerate(cmp.runs)}
    metric_index = {m: i for i, m in enumerate(cmp.metrics)}
    blocks: dict[str, list[str]] = {}
    used: set[str] = set()
    for n, (kind, detail, fig) in enumerate(figures):
        attrs = {"data-kind": kind}
        if kind in ("scatter", "difference"):
            metric, a, b = detail
            attrs.update({"data-mi": str(metric_index[metric]), "data-ai": str(run_index[a]), "data-bi": str(run_index[b])})
            section = metric
        elif kind == "distribution":
            attrs["data-mi"] = str(metric_index[detail])
            section = detail
        elif kind == "curves":
            section = next(m for m in cmp.metrics if m.startswith(f"{detail}@"))
        else:
            section = ""
        stem = file_stem(fig.name)
        name, k = stem, 2
        while name in used:
            name, k = f"{stem}-{k}", k + 1
        used.add(name)
        attrs["data-name"] = name
        attr_text = "".join(f' {key}="{_e(value)}"' for key, value in attrs.items())
        svg = fig.to_svg(interactive=True, element_id=f"fig{n}")
        caption = f"{_e(_KIND_LABELS[kind])}"
        blocks.setdefault(section, []).append(
            f'<figure class="plot"{attr_text}>{svg}<figcaption><span>{caption}</span>'
            f'<button class="dl" type="button" hidden>Download SVG</button></figcaption></figure>'
        )
    parts = ['<section id="plots"><h2>Plots</h2>']
    parts.append(
        '<p class="note">Hover a mark for its queries and values; click a query to open it below (a mark that '
        "holds several queries lists them in the query table). Colours: blue = the second run of the pair "
        "scores higher, vermillion = lower.</p>"
    )
    for metric in cmp.metrics:
        if metric in blocks:
            parts.append(f'<div class="metric-plots"><h3>{_e(metric)}</h3><div class="plots">{"".join(blocks[metric])}</div></div>')
    if "" in blocks:
        parts.append(f'<div class="metric-plots"><h3>Judgment coverage</h3><div class="plots">{"".join(blocks[""])}</div></div>')
    if len(pairs) > len(shown):
        rest = ", ".join(f"{b} − {a}" for a, b in pairs[len(shown) :])
        parts.append(
            f'<p class="note">{len(pairs) - len(shown)} more pairs have no scatter or difference plot here '
            f"({_e(rest)}); <code>ragrade plot</code> writes them all.</p>"
        )
    parts.append("</section>")
    return "".join(parts)


_QUERY_SECTION = """
<section id="queries"><h2>Queries</h2>
<div class="controls">
  <label>metric<select id="ctl-metric"></select></label>
  <label>pair<select id="ctl-pair"></select></label>
  <label>sort<select id="ctl-sort"></select></label>
  <label>show<select id="ctl-show"><option value="all">all queries</option>
    <option value="gain">treatment better</option><option value="loss">treatment worse</option>
    <option value="tie">ties</option></select></label>
  <label>search id or text<input id="ctl-search" type="search" placeholder="filter queries" autocomplete="off"></label>
  <label>rows<select id="ctl-size"><option>25</option><option selected>50</option><option>100</option>
    <option>250</option></select></label>
  <span id="subset" class="chip" hidden><span id="subset-label"></span><button id="subset-clear" type="button"
    aria-label="show all queries">&times;</button></span>
</div>
<div class="pager"><button id="pg-prev" type="button">&larr; prev</button><button id="pg-next" type="button">next
  &rarr;</button><span id="qcount" class="note">Loading the per-query data&hellip;</span></div>
<table id="qtable"><thead></thead><tbody></tbody></table>
<p class="note">Click a query to see what each run retrieved (in rank order, marked relevant or not) and which
relevant items it missed.</p>
<div id="detail"></div>
<noscript><p>The per-query view and the plots' hover need JavaScript; the tables and plots do not.</p></noscript>
</section>
"""


def render_comparison_html(
    cmp: Comparison,
    qrels: Any,
    runs: Mapping[str, Any],
    *,
    per_query: Mapping[str, pd.DataFrame] | None = None,
    curves: Mapping[str, pd.DataFrame] | None = None,
    hole_rates: Any = None,
    texts: Mapping[str, str] | None = None,
    queries: Mapping[str, str] | None = None,
    title: str = "ragrade report",
    depth: int | None = None,
    plots: bool = True,
    max_pair_plots: int = MAX_PAIR_PLOTS,
    max_text_chars: int = 600,
    ties: str = "docid_desc",
    compression: int = 1,
    sections: Sequence[tuple[str, str, str]] = (),
) -> str:
    """The report for an existing :class:`Comparison` (the rankings come from ``runs``, grades from ``qrels``).

    ``per_query``: the per-query scores shown in the query view (default ``cmp.scores``); ``curves``:
    ``{metric family: table}`` from :func:`ragrade.report.plots.metric_at_k`, drawn as metric@k curves;
    ``hole_rates``: a table of the share of unjudged items per run and cutoff (see
    :func:`ragrade.report.plots.hole_rate_table`), drawn when given; ``plots=False`` leaves the plots out;
    ``ties``: the tie policy used to order the retrieved items shown (the one the comparison was
    evaluated with); ``compression``: the deflate level of the per-query data (1 fastest, 9 smallest);
    ``sections``: more sections after the summary, ``(anchor id, navigation label, HTML)`` (the chunking
    section of :func:`ragrade.compare_chunkings`: ``chunking/report.py``).
    """
    scores = dict(per_query) if per_query is not None else dict(cmp.scores)
    header, arrays = build_payload(
        scores,
        cmp.metrics,
        qrels,
        runs,
        letters=cmp.letters,
        pairs=list(dict.fromkeys((a, b) for _, a, b in cmp.pairs.index)),
        texts=texts,
        queries=queries,
        depth=depth,
        max_text_chars=max_text_chars,
        ties=ties,
    )
    # Compression releases the interpreter lock: it runs while the plots are drawn.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragrade-pack") as pool:
        packing = pool.submit(pack_payload, header, arrays, level=compression)
        plots_part = (
            plots_html(cmp, header["qids"], curves=curves, hole_rates=hole_rates, max_pair_plots=max_pair_plots)
            if plots
            else ""
        )
        data = packing.result()
    return _page(cmp, header, data, plots_part, title=title, plots=plots, sections=sections)


def _page(cmp: Comparison, header: Mapping[str, Any], data: str, plots_part: str, *, title: str, plots: bool,
          sections: Sequence[tuple[str, str, str]] = ()) -> str:
    csp = (
        f"default-src 'none'; style-src 'sha256-{_sha256(CSS)}'; script-src 'sha256-{_sha256(JS)}'; "
        "img-src 'none'; base-uri 'none'; form-action 'none'"
    )
    n_queries = len(header["qids"])
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    runs_line = ", ".join(f"{cmp.letters[r]} = {r}" for r in cmp.runs)
    note = " ".join(x for x in (cmp.description, groups_note(cmp), "Bold: best mean of the metric.",
                                hole_note(cmp)) if x)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_e(csp)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light">',
        '<meta name="generator" content="ragrade">',
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        f"<header><h1>{_e(title)}</h1>",
        f"<p>{n_queries} {'query' if n_queries == 1 else 'queries'} · runs: {_e(runs_line)} · generated {_e(stamp)} by ragrade</p></header>",
        '<nav aria-label="sections"><a href="#summary-section">Summary</a>'
        + ('<a href="#slices">Slices</a>' if getattr(cmp, "slices", None) is not None else "")
        + "".join(f'<a href="#{_e(anchor)}">{_e(label)}</a>' for anchor, label, _ in sections)
        + ('<a href="#plots">Plots</a>' if plots else "")
        + '<a href="#queries">Queries</a></nav><main>',
        '<section id="summary-section"><h2>Summary</h2>',
        summary_table_html(cmp),
        f'<p class="note">{_e(note)}</p>',
        "<h3>Paired differences (treatment − control)</h3>",
        pairs_table_html(cmp),
        '<p class="note">Wins/ties/losses count queries where the treatment scores higher/equal/lower. '
        "Cohen's d<sub>z</sub> = mean of the per-query differences / their standard deviation.</p></section>",
        slices_section_html(cmp),
        *(part for _, _, part in sections),
        plots_part,
        _QUERY_SECTION,
        '</main><div id="tip" role="tooltip" hidden></div>',
        f'<script type="application/octet-stream" id="ragrade-data">{data}</script>',
        f"<script>{JS}</script></body></html>",
    ]
    return "\n".join(parts)


@public
def render_html(
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    metrics: Sequence[Any] | str,
    *,
    texts: Mapping[str, str] | None = None,
    queries: Mapping[str, str] | None = None,
    title: str = "ragrade report",
    baseline: str | None = None,
    test: str = "randomization",
    correction: str | None = None,
    alpha: float = 0.05,
    confidence: float | None = None,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    ci_method: CIMethod = "auto",
    depth: int | None = None,
    plots: bool = True,
    ks: Sequence[int] | None = DEFAULT_KS,
    hole_rates: Any = None,
    max_pair_plots: int = MAX_PAIR_PLOTS,
    compression: int = 1,
    slices: Any = None,
    slice_correction: str | None = "holm",
    **policies: Any,
) -> str:
    """Evaluate, compare and render the report as HTML text (see :func:`write_html`). Every run is
    evaluated once, for the compared metrics and the curves' cutoffs together. ``slices``: query labels
    (see :meth:`ragrade.Comparison.by`) for a slice section, p-values corrected across slices with
    ``slice_correction``."""
    import ragrade.engine  # noqa: F401  (fully imported here, before two threads use it)
    from ragrade.engine.inputs import as_qrels
    from ragrade.engine.plan import build_plan
    from ragrade.evaluation import judgments_of, route_of

    # Another ground truth (spans, nuggets) is read by its route, which says which ids it judges; judged ids
    # are read once, for the engine and the per-query data.
    routed_plan = build_plan(qrels, None, metrics, **policies)
    routed = route_of(routed_plan) is not None
    truth = judgments_of(routed_plan) if routed else as_qrels(read_input(qrels, "qrels"))
    named = {name: read_input(run, "run") for name, run in name_runs(runs).items()}
    ties = str(policies.get("ties") or "docid_desc")
    shown_depth = default_depth(metric_labels(metrics)) if depth is None else depth
    # Two threads. The second puts every run in rank order while this one evaluates them, then builds and
    # compresses the per-query data while this one compares the runs and draws the plots (the sorts,
    # most NumPy and pandas work and zlib release the interpreter lock). The comparison's run letters and
    # pairs go into the data's header last.
    evaluated: Future[tuple[dict[str, pd.DataFrame], list[str], Any, dict[str, Any]]] = Future()
    labelled: Future[tuple[dict[str, str], list[tuple[str, str]]]] = Future()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragrade-payload") as pool:
        payload = pool.submit(_payload_job, truth, named, ties, evaluated, labelled, texts=texts, queries=queries,
                              depth=shown_depth, compression=compression)
        try:
            # with max_memory the evaluation reads the files piece by piece (the plan gets the paths)
            big = policies.get("max_memory") is not None
            ev = evaluate_runs(qrels if big or routed else truth, runs if big else named, metrics,
                               ks=ks if plots else None,
                               **policies)
            if baseline is not None and str(baseline) not in ev.runs:
                raise InputError(f"baseline is not one of the runs {list(ev.runs)}", value=baseline)
            per_query = {name: frame[ev.labels] for name, frame in ev.per_query.items()}
            evaluated.set_result((per_query, ev.labels, ev.qrels, ev.runs))
            cmp, curves = _compare(ev, slices, slice_correction, baseline=baseline, test=test,
                                   correction=correction, alpha=alpha, confidence=confidence,
                                   n_resamples=n_resamples, seed=seed, ci_method=ci_method)
            labelled.set_result((dict(cmp.letters), list(dict.fromkeys((a, b) for _, a, b in cmp.pairs.index))))
        except BaseException as exc:  # the second thread waits for these: hand it the error
            _hand_over(exc, evaluated, labelled)
            raise
        if hole_rates is None and ev.hole_rates:  # the engine's hole rates of every run
            hole_rates = ev.hole_rates
        plots_part = (
            plots_html(cmp, report_queries(per_query, ev.labels), curves=curves, hole_rates=hole_rates,
                       max_pair_plots=max_pair_plots)
            if plots
            else ""
        )
        header, data = payload.result()
    plots_part = traces_section_html(truth, named, list(ev.labels)) + plots_part  # runs read from traces (issue 37)
    return _page(cmp, header, data, plots_part, title=title, plots=plots)


def _compare(ev: Any, slices: Any, slice_correction: str | None, **options: Any) -> tuple[Comparison, Any]:
    """The comparison of the evaluated runs (by slices too, when given) and the curves' table."""
    cmp, curves = compare_evaluated(ev, **options)
    if slices is not None:
        from ragrade.comparison.slice_compare import by_slices

        cmp = by_slices(cmp, slices, slice_correction)
    return cmp, curves


def _hand_over(exc: BaseException, *waiting: Future[Any]) -> None:
    """Give ``exc`` to the futures the payload thread waits for (those not set yet)."""
    for future in waiting:
        if not future.done():
            future.set_exception(exc)


def _payload_job(
    qrels: Any,
    runs: Mapping[str, Any],
    ties: str,
    evaluated: Future[tuple[dict[str, pd.DataFrame], list[str], Any, dict[str, Any]]],
    labelled: Future[tuple[dict[str, str], list[tuple[str, str]]]],
    *,
    compression: int,
    **options: Any,
) -> tuple[dict[str, Any], str]:
    """The second thread of :func:`render_html`: while the runs are evaluated, rank them and gather their
    top items and the judgments (:func:`prepare_items`); then :func:`build_payload`; then, once the
    comparison has named the runs and pairs, :func:`pack_payload`."""
    try:
        prepared: Prepared | None = prepare_items(qrels, runs, options["depth"], ties)
    except RagradeError:  # an input the engine cannot read either: the evaluation raises its error
        prepared = None
    per_query, metrics, truth, read = evaluated.result()
    header, arrays = build_payload(per_query, metrics, truth, read, ties=ties, prepared=prepared, **options)
    letters, pairs = labelled.result()
    header["letters"] = [str(letters.get(r, "")) for r in header["runs"]]
    header["pairs"] = [list(p) for p in pairs]
    return header, pack_payload(header, arrays, level=compression)


@public
def write_html(
    path: str | os.PathLike[str],
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    metrics: Sequence[Any] | str,
    **options: Any,
) -> Path:
    """Write the self-contained HTML report to ``path`` and return the path.

    ``qrels``, ``runs`` and ``metrics`` are what :func:`ragrade.compare` takes (objects, dicts, lists,
    DataFrames, file paths; runs as a mapping or a list). ``options`` are those of :func:`render_html`:
    ``texts`` (``{doc id: text}``), ``queries`` (``{query id: text}``), ``title``, the comparison's
    ``baseline``, ``test``, ``correction``, ``alpha``, ``confidence``, ``n_resamples``, ``seed``,
    ``ci_method``; ``depth`` (items shown per run and query; default the largest metric cutoff),
    ``plots`` (default ``True``), ``ks`` (cutoffs of the metric@k curves; ``None``: none), ``hole_rates``
    (a per-run, per-cutoff table of unjudged shares, drawn when given), ``max_pair_plots``,
    ``compression``, and the keywords of :func:`ragrade.evaluate` (``profile``, ``matcher``, ``max_memory``,
    ``names``, ``rel_level`` and the policies, e.g. ``ties="input"``), with the same meaning and values.
    """
    out = Path(path)
    if out.suffix.lower() not in (".html", ".htm"):
        raise InputError("the report file must end in .html", value=str(path))
    text = render_html(qrels, runs, metrics, **options)
    out.write_text(text, encoding="utf-8")
    return out
