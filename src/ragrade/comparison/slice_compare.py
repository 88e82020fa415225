"""Runs compared slice by slice: :func:`compare_slices` and :func:`by_slices` (labels as in
:mod:`ragrade.engine.slices`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ragrade.engine.slices import SLICE_CORRECTION, label_groups, plain, slice_labels
from ragrade.errors import InputError


@dataclass(frozen=True)
class SliceComparison:
    """Per-slice comparison (see :func:`compare_slices`): ``pairs`` has one row per (column, slice, metric,
    control, treatment) with ``queries``, ``mean_control``, ``mean_treatment``, ``delta``, ``p_value``,
    ``p_adjusted`` (corrected across the slices of the column) and ``significant``; ``means`` one row per
    (column, slice, metric, run)."""

    columns: list[str]
    metrics: list[str]
    runs: list[str]
    pairs: pd.DataFrame
    means: pd.DataFrame
    test: str
    correction: str
    alpha: float
    queries: dict[tuple[str, str], int] = field(default_factory=dict)

    @property
    def description(self) -> str:
        from ragrade.comparison.stats import CORRECTION_LABELS, TEST_LABELS

        return (f"Per slice: two-sided {TEST_LABELS[self.test]} on the slice's queries; p-values corrected "
                f"across the slices of each column ({CORRECTION_LABELS[self.correction]}), alpha = "
                f"{self.alpha:g}. Slices with fewer than two queries are not tested.")

    def to_dict(self) -> dict[str, Any]:
        """``{column: {label: {"metrics": {run: {metric: mean}}, "queries": n, "pairs": [...]}}}``."""
        out: dict[str, Any] = {}
        for (column, label), n in self.queries.items():
            entry: dict[str, Any] = {"metrics": {}, "queries": n, "pairs": []}
            out.setdefault(column, {})[label] = entry
        for row in self.means.itertuples(index=False):
            out[row.column][row.slice]["metrics"].setdefault(row.run, {})[row.metric] = plain(row.mean)
        for rec in self.pairs.to_dict("records"):
            out[rec["column"]][rec["slice"]]["pairs"].append(
                {k: (plain(v) if isinstance(v, float) else v) for k, v in rec.items()
                 if k not in ("column", "slice")})
        return out

    def to_markdown(self, digits: int = 4) -> str:
        from ragrade.formatting import markdown_escape, pvalue, signed

        lines = []
        for column in self.columns:
            part = self.pairs[self.pairs["column"] == column]
            lines += [f"**Slices by {markdown_escape(column)}**", "",
                      "| slice | queries | metric | control | treatment | Δ | p | p adj. | sig. |",
                      "|---|---:|---|---|---|---:|---:|---:|:---:|"]
            for rec in part.to_dict("records"):
                lines.append(
                    f"| {markdown_escape(rec['slice'])} | {rec['queries']} | {markdown_escape(rec['metric'])} | "
                    f"{markdown_escape(rec['control'])} | {markdown_escape(rec['treatment'])} | "
                    f"{signed(rec['delta'], digits)} | {pvalue(rec['p_value'])} | {pvalue(rec['p_adjusted'])} | "
                    f"{'yes' if rec['significant'] else 'no'} |")
            lines.append("")
        lines.append(f"_{markdown_escape(self.description)}_")
        return "\n".join(lines) + "\n"

    def to_rich(self, digits: int = 4) -> Any:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        from ragrade.formatting import pvalue, signed

        tables = []
        for column in self.columns:
            t = Table(title=f"slices by {column}", title_justify="left", caption=self.description,
                      caption_justify="left")
            for name in ("slice", "queries", "metric", "control", "treatment", "Δ", "p", "p adj."):
                t.add_column(name, justify="right" if name in ("queries", "Δ", "p", "p adj.") else "left")
            for rec in self.pairs[self.pairs["column"] == column].to_dict("records"):
                style = ("blue" if rec["delta"] > 0 else "red") if rec["significant"] else ""
                t.add_row(Text(rec["slice"]), str(rec["queries"]), Text(rec["metric"]), Text(rec["control"]),
                          Text(rec["treatment"]), Text(signed(rec["delta"], digits), style=style),
                          pvalue(rec["p_value"]), Text(pvalue(rec["p_adjusted"]), style="bold" if rec["significant"]
                                                       else ""))
            tables.append(t)
        return Group(*tables)


def by_slices(cmp: Any, labels: Any, correction: str | None = SLICE_CORRECTION) -> Any:
    """A copy of the comparison ``cmp`` with its per-slice results in ``slices`` (:func:`compare_slices`);
    ``cmp`` is not changed. Its exports (JSON key ``"slices"``, markdown, terminal, report) show them."""
    from dataclasses import replace

    return replace(cmp, slices=compare_slices(cmp, labels, correction))


def compare_slices(cmp: Any, labels: Any, correction: str | None = SLICE_CORRECTION) -> SliceComparison:
    """Compare the runs of ``cmp`` (a :class:`~ragrade.comparison.Comparison`) slice by slice: the
    comparison's test (and its settings: resamples, seed, alpha) on each slice's queries, every pair's
    p-value then corrected across the slices of the column (``correction``; Holm by default, ``None`` for
    none). The comparison's own correction across pairs is not applied within a slice."""
    import warnings

    from ragrade.comparison.core import compare_scores
    from ragrade.comparison.stats import adjust_pvalues, normalize_correction

    corr = normalize_correction(correction)
    frame = slice_labels(labels)
    first = cmp.scores[cmp.runs[0]]
    ids_all = [str(q) for q in first.index]
    pair_rows: list[dict[str, Any]] = []
    mean_rows: list[dict[str, Any]] = []
    queries: dict[tuple[str, str], int] = {}
    for column in frame.columns:
        start = len(pair_rows)
        for label, mask in label_groups(ids_all, frame[column]).items():
            n = int(mask.sum())
            queries[(str(column), label)] = n
            sub = {run: cmp.scores[run].iloc[np.flatnonzero(mask)] for run in cmp.runs}
            for run in cmp.runs:
                for m in cmp.metrics:
                    values = sub[run][m].to_numpy(dtype=np.float64)
                    values = values[~np.isnan(values)]
                    mean_rows.append({"column": str(column), "slice": label, "metric": m, "run": run,
                                      "mean": float(values.mean()) if len(values) else math.nan})
            tested = None
            if n >= 2:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        tested = compare_scores(sub, cmp.metrics, baseline=cmp.baseline, test=cmp.test,
                                                alpha=cmp.alpha, n_resamples=cmp.n_resamples, seed=cmp.seed,
                                                ci_method="resample" if n < 100 else "saddlepoint")
                    except InputError:
                        tested = None
            for (m, a, b) in cmp.pairs.index:
                row = {"column": str(column), "slice": label, "queries": n, "metric": str(m), "control": str(a),
                       "treatment": str(b), "mean_control": math.nan, "mean_treatment": math.nan,
                       "delta": math.nan, "p_value": math.nan}
                if tested is not None and (m, a, b) in tested.pairs.index:
                    got = tested.pair(m, a, b)
                    row.update(mean_control=float(got["mean_control"]), mean_treatment=float(got["mean_treatment"]),
                               delta=float(got["delta"]), p_value=float(got["p_value"]))
                elif n >= 1:
                    ca = sub[str(a)][m].to_numpy(dtype=np.float64)
                    cb = sub[str(b)][m].to_numpy(dtype=np.float64)
                    ok = ~(np.isnan(ca) | np.isnan(cb))
                    if ok.any():
                        row.update(mean_control=float(ca[ok].mean()), mean_treatment=float(cb[ok].mean()),
                                   delta=float((cb[ok] - ca[ok]).mean()))
                pair_rows.append(row)
        # correct each (metric, pair) across this column's slices
        block = pair_rows[start:]
        keys = {(r["metric"], r["control"], r["treatment"]) for r in block}
        for key in keys:
            members = [r for r in block if (r["metric"], r["control"], r["treatment"]) == key]
            tested_rows = [r for r in members if not math.isnan(r["p_value"])]
            adjusted: list[float] = (adjust_pvalues(np.array([r["p_value"] for r in tested_rows]), corr).tolist()
                                     if tested_rows else [])
            for r, p in zip(tested_rows, adjusted, strict=True):
                r["p_adjusted"] = float(p)
            for r in members:
                r.setdefault("p_adjusted", math.nan)
                r["significant"] = bool(r["p_adjusted"] <= cmp.alpha)
    columns = ["column", "slice", "queries", "metric", "control", "treatment", "mean_control", "mean_treatment",
               "delta", "p_value", "p_adjusted", "significant"]
    return SliceComparison(columns=[str(c) for c in frame.columns], metrics=list(cmp.metrics), runs=list(cmp.runs),
                           pairs=pd.DataFrame(pair_rows, columns=columns),
                           means=pd.DataFrame(mean_rows, columns=["column", "slice", "metric", "run", "mean"]),
                           test=cmp.test, correction=corr, alpha=cmp.alpha, queries=queries)


__all__ = ["SliceComparison", "by_slices", "compare_slices"]
