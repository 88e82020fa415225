"""The self-contained HTML report: summary tables, plots and a per-query drill-down in one file.

Safety: the file loads nothing from the network (a Content-Security-Policy forbids every fetch; plots are
``data:`` images). Names and numbers in the static tables are HTML-escaped; the per-query data sits in a
``<script type="application/json">`` block with ``<``, ``>`` and ``&`` written as ``\\u003c`` etc., and the
page script puts every string on screen with ``textContent``. The script itself is allowed by its SHA-256
hash, so even an injected ``<script>`` element would not run.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import html
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragrade.compare.core import Comparison
from ragrade.compare.export import _num, _pval
from ragrade.errors import InputError, MissingDependencyError, require
from ragrade.report._assets import CSS, JS
from ragrade.report.data import build_payload

_MAX_DELTA_PLOTS = 6


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def json_for_html(payload: Any) -> str:
    """JSON text that is safe inside a ``<script>`` element (no ``<``, ``>`` or ``&`` characters)."""
    text = json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


# --------------------------------------------------------------------------------------------- static parts
def summary_table_html(cmp: Comparison, digits: int = 4) -> str:
    counts = {m: int(cmp.summary.loc[(m, cmp.runs[0]), "n"]) for m in cmp.metrics}
    head = "".join(f'<th>{_e(m)}<div class="ci">n = {counts[m]}</div></th>' for m in cmp.metrics)
    out = [
        f'<table id="summary"><thead><tr><th class="l">#</th><th class="l">run</th>{head}</tr></thead><tbody>'
    ]
    for run in cmp.runs:
        cells = []
        for metric in cmp.metrics:
            row = cmp.summary.loc[(metric, run)]
            sup = f"<sup>{_e(row['marker'])}</sup>" if row["marker"] else ""
            ci = f'<div class="ci">[{_num(row["ci_low"], digits)}, {_num(row["ci_high"], digits)}]</div>'
            cls = ' class="best"' if row["best"] else ""
            cells.append(f"<td{cls}>{_num(row['mean'], digits)}{sup}{ci}</td>")
        out.append(
            f'<tr><td class="l">{_e(cmp.letters[run])}</td><td class="l">{_e(run)}</td>{"".join(cells)}</tr>'
        )
    out.append("</tbody></table>")
    return "".join(out)


def pairs_table_html(cmp: Comparison, digits: int = 4) -> str:
    out = [
        '<table id="pairs"><thead><tr><th class="l">metric</th><th class="l">control</th><th class="l">treatment</th>'
        "<th>Δ</th><th>Δ CI</th><th>p</th><th>p adj.</th><th>Cohen's d<sub>z</sub></th><th>wins</th><th>ties</th>"
        "<th>losses</th></tr></thead><tbody>"
    ]
    for (metric, a, b), row in cmp.pairs.iterrows():
        cls = ""
        if row["significant"]:
            cls = ' class="sig-pos"' if row["delta"] > 0 else ' class="sig-neg"'
        out.append(
            f'<tr><td class="l">{_e(metric)}</td><td class="l">{_e(a)}</td><td class="l">{_e(b)}</td>'
            f"<td{cls}>{row['delta']:+.{digits}f}</td>"
            f'<td class="ci">[{_num(row["delta_ci_low"], digits)}, {_num(row["delta_ci_high"], digits)}]</td>'
            f"<td>{_pval(row['p_value'])}</td><td{cls}>{_pval(row['p_adjusted'])}</td>"
            f"<td>{_num(row['cohens_dz'], 2)}</td><td>{row['wins']}</td><td>{row['ties']}</td><td>{row['losses']}</td></tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)


def _svg_img(svg: str, caption: str) -> str:
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return (
        f'<figure><img alt="{_e(caption)}" src="data:image/svg+xml;base64,{data}">'
        f"<figcaption>{_e(caption)}</figcaption></figure>"
    )


def _plots_html(cmp: Comparison, plots: bool | None, curves: Mapping[str, Any] | None) -> str:
    if plots is False:
        return ""
    try:
        require("matplotlib", extra="plots", purpose="Plots in the report")
    except MissingDependencyError as exc:
        if plots is True:
            raise
        return f'<section id="plots"><h2>Plots</h2><p class="note">{_e(exc)}</p></section>'
    from ragrade.report import plots as P

    figs: list[str] = []
    for metric, frame in (curves or {}).items():
        figs.append(
            _svg_img(P.figure_to_svg(P.plot_metric_curves(frame, metric)), f"{metric}@k for every run")
        )
    for metric in cmp.metrics:
        per_run = {run: cmp.scores[run][metric] for run in cmp.runs}
        figs.append(_svg_img(P.figure_to_svg(P.plot_distributions(per_run, metric)), f"per-query {metric}"))
    seen = []
    for metric, a, b in cmp.pairs.index:
        if len(seen) >= _MAX_DELTA_PLOTS:
            break
        if metric != cmp.metrics[0]:
            continue
        seen.append((a, b))
        fig = P.plot_delta(
            cmp.scores[a][metric], cmp.scores[b][metric], control_name=a, treatment_name=b, metric=metric
        )
        figs.append(_svg_img(P.figure_to_svg(fig), f"sorted per-query Δ {metric}: {b} − {a}"))
    return f'<section id="plots"><h2>Plots</h2><div class="plots">{"".join(figs)}</div></section>'


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
</div>
<div class="pager"><button id="pg-prev" type="button">&larr; prev</button><button id="pg-next" type="button">next
  &rarr;</button><span id="qcount" class="note"></span></div>
<table id="qtable"><thead></thead><tbody></tbody></table>
<p class="note">Click a query to see what each run retrieved (in rank order, marked relevant or not) and which
relevant items it missed.</p>
<div id="detail"></div>
<noscript><p>The per-query view needs JavaScript; the tables above do not.</p></noscript>
</section>
"""


def render_comparison_html(
    cmp: Comparison,
    qrels: Any,
    runs: Mapping[str, Any],
    *,
    texts: Mapping[str, str] | None = None,
    queries: Mapping[str, str] | None = None,
    title: str = "ragrade report",
    depth: int | None = None,
    plots: bool | None = None,
    curves: Mapping[str, Any] | None = None,
    max_text_chars: int = 600,
    ties: str = "docid_desc",
) -> str:
    """The report for an existing :class:`Comparison` (the rankings come from ``runs``, grades from ``qrels``).

    ``plots``: ``None`` draws them when matplotlib is installed (else says how to install it), ``True``
    requires them, ``False`` leaves them out. ``curves``: ``{metric: DataFrame}`` from
    :func:`ragrade.report.plots.metric_at_k`, drawn as metric@k curves. ``ties``: the tie policy used to
    order the retrieved items shown (use the one the comparison was evaluated with).
    """
    payload = build_payload(
        cmp, qrels, runs, texts=texts, queries=queries, depth=depth, max_text_chars=max_text_chars, ties=ties
    )
    script_hash = base64.b64encode(hashlib.sha256(JS.encode("utf-8")).digest()).decode("ascii")
    csp = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{script_hash}'; base-uri 'none'; form-action 'none'"
    )
    n_queries = len(payload["qids"])
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    runs_line = ", ".join(f"{cmp.letters[r]} = {r}" for r in cmp.runs)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_e(csp)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="generator" content="ragrade">',
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
        f"<header><h1>{_e(title)}</h1>",
        f"<p>{n_queries} queries · runs: {_e(runs_line)} · generated {_e(stamp)} by ragrade</p></header><main>",
        '<section id="summary-section"><h2>Summary</h2>',
        summary_table_html(cmp),
        f'<p class="note">{_e(cmp.description)} Bold: best mean of the metric.</p>',
        "<h3>Paired differences (treatment − control)</h3>",
        pairs_table_html(cmp),
        '<p class="note">Wins/ties/losses count queries where the treatment scores higher/equal/lower. '
        "Cohen's d<sub>z</sub> = mean of the per-query differences / their standard deviation.</p></section>",
        _plots_html(cmp, plots, curves),
        _QUERY_SECTION,
        f'</main><script type="application/json" id="ragrade-data">{json_for_html(payload)}</script>',
        f"<script>{JS}</script></body></html>",
    ]
    return "\n".join(parts)


def _curve_labels(labels: Sequence[str], ks: Sequence[int]) -> dict[str, list[tuple[int, str]]]:
    """``{base metric: [(k, label), ...]}`` for every metric label with a cutoff (``ndcg@10`` -> ``ndcg``)."""
    cuts = sorted({int(k) for k in ks})
    if not cuts or cuts[0] < 1:
        raise InputError("cutoffs must be positive integers", value=list(ks))
    out: dict[str, list[tuple[int, str]]] = {}
    for m in labels:
        base = re.sub(r"@\d+$", "", m)
        if base != m and base not in out:
            out[base] = [(k, f"{base}@{k}") for k in cuts]
    return out


def render_html(
    qrels: Any,
    runs: Mapping[str, Any],
    metrics: Sequence[str] | str,
    *,
    texts: Mapping[str, str] | None = None,
    queries: Mapping[str, str] | None = None,
    title: str = "ragrade report",
    baseline: str | None = None,
    test: str = "randomization",
    correction: str | None = None,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    depth: int | None = None,
    plots: bool | None = None,
    curves: bool | None = None,
    ks: Sequence[int] = (1, 3, 5, 10, 20, 50, 100),
    **policies: Any,
) -> str:
    """Evaluate, compare and render the report as HTML text (see :func:`write_html`)."""
    import pandas as pd

    from ragrade.compare.core import compare_scores, metric_labels
    from ragrade.engine.core import Evaluator

    labels = metric_labels(metrics)
    runs = {str(k): _read(v, "run") for k, v in runs.items()}
    qrels = _read(qrels, "qrels")
    want_curves = curves if curves is not None else plots is not False
    curve_plan = _curve_labels(labels, ks) if want_curves else {}
    # One evaluation per run serves both the comparison and the metric@k curves.
    extra = [lab for pairs in curve_plan.values() for _, lab in pairs]
    evaluator = Evaluator(qrels, list(dict.fromkeys([*labels, *extra])), **policies)
    results = {name: evaluator.evaluate(run) for name, run in runs.items()}
    cmp = compare_scores(
        {name: res.per_query[labels] for name, res in results.items()},
        labels,
        baseline=baseline,
        test=test,
        correction=correction,
        alpha=alpha,
        n_resamples=n_resamples,
        seed=seed,
    )
    curve_data: dict[str, Any] = {}
    for base, pairs in curve_plan.items():
        frame = pd.DataFrame(
            {name: [float(res.means[lab]) for _, lab in pairs] for name, res in results.items()},
            index=pd.Index([k for k, _ in pairs], name="k"),
        )
        frame.attrs["metric"] = base
        curve_data[base] = frame
    return render_comparison_html(
        cmp,
        qrels,
        runs,
        texts=texts,
        queries=queries,
        title=title,
        depth=depth,
        plots=plots,
        curves=curve_data,
        ties=policies.get("ties") or "docid_desc",
    )


def write_html(
    path: str | os.PathLike[str],
    qrels: Any,
    runs: Mapping[str, Any],
    metrics: Sequence[str] | str,
    **options: Any,
) -> Path:
    """Write the self-contained HTML report to ``path`` and return the path.

    ``qrels`` and each run may be objects, nested dicts or file paths. ``options`` are those of
    :func:`render_html`: ``texts`` (``{doc id: text}``), ``queries`` (``{query id: text}``), ``title``,
    ``baseline``, ``test``, ``correction``, ``alpha``, ``n_resamples``, ``seed``, ``depth`` (items shown
    per run and query; default the largest metric cutoff), ``plots``, ``curves``, ``ks``, and evaluation
    policies (:class:`ragrade.policies.Policies`, e.g. ``ties="input"``).
    """
    out = Path(path)
    if out.suffix.lower() not in (".html", ".htm"):
        raise InputError("the report file must end in .html", value=str(path))
    text = render_html(qrels, runs, metrics, **options)
    out.write_text(text, encoding="utf-8")
    return out


def _read(value: Any, kind: str) -> Any:
    if isinstance(value, str | os.PathLike):
        from ragrade.io import read_qrels, read_run

        return read_qrels(value) if kind == "qrels" else read_run(value)
    return value
