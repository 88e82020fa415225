"""Summaries of the calls of traces: latency percentiles per retriever, tokens and cost (the table, the
report's section and the command's output)."""

from __future__ import annotations

from typing import Any

import numpy as np

#: The latency percentiles reported.
PERCENTILES = (50, 95, 99)


def latency_table(table: Any) -> Any:
    """Per retriever: calls, calls timed, latency p50/p95/p99 and mean (ms), tokens and cost summed over
    its calls (NaN where no call carries them). One row ``all`` for every call together."""
    import pandas as pd

    rows = []
    for name, part in [*table.groupby("retriever", sort=True, dropna=False), ("all", table)]:
        lat = part["latency_ms"].to_numpy(dtype=np.float64)
        timed = lat[~np.isnan(lat)]
        pct = np.percentile(timed, PERCENTILES) if len(timed) else np.full(len(PERCENTILES), np.nan)
        rows.append({"retriever": str(name), "calls": len(part), "timed": len(timed),
                     **{f"p{p}_ms": float(v) for p, v in zip(PERCENTILES, pct, strict=True)},
                     "mean_ms": float(timed.mean()) if len(timed) else np.nan,
                     "tokens": _sum(part["tokens"]), "cost": _sum(part["cost"])})
    return pd.DataFrame(rows).set_index("retriever")


def _sum(column: Any) -> float:
    values = column.to_numpy(dtype=np.float64)
    ok = ~np.isnan(values)
    return float(values[ok].sum()) if ok.any() else float("nan")


def trace_totals(table: Any) -> dict[str, float]:
    """Tokens and cost summed over the traces of the calls (each trace counted once)."""
    per_trace = table.drop_duplicates("trace")
    return {"traces": len(per_trace), "tokens": _sum(per_trace["trace_tokens"]),
            "cost": _sum(per_trace["trace_cost"])}
