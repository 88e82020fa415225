"""The baseline file of the regression gate (``docs/gate.md``): one evaluation saved as JSON with what is
needed to compare a later run with it, query by query, under the same conventions.

::

    {"ragrade_baseline": 1, "ragrade_version": "0.1.0", "created": "2025-05-01T12:00:00Z",
     "run": "bm25", "metrics": {"ndcg@10": "ndcg@10", "P@5": "precision@5"},
     "profile": null, "policies": {"missing_run": "zero", ...},
     "qrels": {"fingerprint": "sha256:...", "queries": 36, "judgments": 368, "relevant": 196},
     "means": {...}, "counts": {...}, "summary": {...},
     "per_query": {"queries": ["q01", ...], "values": {"ndcg@10": [0.71, null, ...], ...}}}

``metrics`` maps each column label to the metric's definition (``str(Metric)``, which parses back to the
same metric); per-query values are written exactly (JSON floats round-trip), NaN as null.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ragrade.errors import InputError, ParseError, boundary

FORMAT_VERSION = 1


@boundary
def qrels_fingerprint(qrels: Any) -> str:
    """A stable hash of the judgments: ``sha256:`` + the SHA-256 of the sorted lines
    ``query<TAB>doc<TAB>grade`` (grade written as a float, ``1.0``), followed for grouped ground truth by
    the sorted lines ``query<TAB>\\x1f-joined sorted group members``. The same judgments give the same
    fingerprint whatever the file format, the order of the lines or the spelling of integral ids.

    >>> qrels_fingerprint({"q1": {"d1": 1, "d2": 0}}) == qrels_fingerprint({"q1": {"d2": 0.0, "d1": 1}})
    True
    """
    from ragrade.engine.inputs import as_qrels

    q = as_qrels(qrels)
    grades = q.grades.tolist()
    rows = sorted(zip(q.per_row_queries().tolist(), q.per_row_docs().tolist(), grades, strict=True))
    h = hashlib.sha256()
    for qid, doc, g in rows:
        h.update(f"{qid}\t{doc}\t{float(g)!r}\n".encode())
    if q.has_groups:
        groups = sorted((qid, "\x1f".join(sorted(grp))) for qid, gs in q.to_groups().items() for grp in gs)
        for qid, members in groups:
            h.update(f"{qid}\t{members}\n".encode())
    return "sha256:" + h.hexdigest()


def qrels_stats(qrels: Any) -> dict[str, Any]:
    """``fingerprint``, ``queries``, ``judgments`` and ``relevant`` (grade > 0) of ground truth."""
    from ragrade.engine.inputs import as_qrels

    q = as_qrels(qrels)
    return {"fingerprint": qrels_fingerprint(q), "queries": q.n_queries, "judgments": q.n_rows,
            "relevant": int(np.count_nonzero(q.grades > 0))}


@dataclass
class Baseline:
    """A saved evaluation: per-query values, metric definitions, conventions, the qrels' fingerprint."""

    run: str | None
    metrics: dict[str, str]
    profile: str | None
    policies: dict[str, Any]  # named policies (strings) and numeric settings (numbers or None)
    qrels: dict[str, Any]
    per_query: pd.DataFrame
    ragrade_version: str
    created: str
    means: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    path: str | None = None
    #: The matcher the items were matched with (its name), when the evaluation matched texts.
    matcher: str | None = None

    @classmethod
    def from_result(cls, result: Any, qrels: Any, matcher: Any = None) -> Baseline:
        """The baseline of ``result`` (a :class:`~ragrade.engine.result.Result`), scored against ``qrels``
        (with ``matcher``, when the items were texts)."""
        from dataclasses import asdict

        from ragrade import __version__
        from ragrade.engine.result import Result

        if not isinstance(result, Result):
            raise InputError(f"a baseline is made from a ragrade Result, not a {type(result).__name__}")
        result = result.collect()  # a Spark result's values, on the driver
        profile = None if result.profile is None or result.profile.name == "default" else result.profile.name
        return cls(run=result.run_name, metrics={label: str(m) for label, m in result.metrics.items()},
                   profile=profile, policies=dict(asdict(result.policies)), qrels=qrels_stats(qrels),
                   per_query=result.per_query.copy(), ragrade_version=__version__,
                   created=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                   means=dict(result.means), counts=dict(result.counts), summary=result.summary.to_dict(),
                   matcher=_matcher_name(matcher))

    def to_dict(self) -> dict[str, Any]:
        frame = self.per_query
        extra = {} if self.matcher is None else {"matcher": self.matcher}
        return {
            "ragrade_baseline": FORMAT_VERSION,
            "ragrade_version": self.ragrade_version,
            "created": self.created,
            "run": self.run,
            "metrics": dict(self.metrics),
            "profile": self.profile,
            "policies": dict(self.policies),
            **extra,
            "qrels": dict(self.qrels),
            "means": {k: _null(v) for k, v in self.means.items()},
            "counts": dict(self.counts),
            "summary": self.summary,
            "per_query": {"queries": [str(q) for q in frame.index.tolist()],
                          "values": {c: [_null(v) for v in frame[c].tolist()] for c in frame.columns}},
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        if not isinstance(path, str | os.PathLike):
            raise InputError("the baseline path must be a string or a path", value=type(path).__name__)
        out = Path(path)
        if out.is_dir():
            raise InputError(f"{os.fspath(out)} is a directory: give the baseline's file name "
                             f"(e.g. {os.path.join(os.fspath(out), 'baseline.json')})")
        try:
            out.write_text(json.dumps(self.to_dict(), indent=1, allow_nan=False) + "\n", encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write the baseline to {os.fspath(out)}: {exc.strerror or exc}") from None
        return out

    @classmethod
    def from_dict(cls, data: Any, path: str | None = None) -> Baseline:
        where = path or "<baseline>"
        if not isinstance(data, dict) or "ragrade_baseline" not in data:
            raise ParseError("not a ragrade baseline file (save one with `ragrade evaluate ... --save-baseline`)",
                             path=where)
        if data["ragrade_baseline"] != FORMAT_VERSION:
            raise ParseError(f"baseline format {data['ragrade_baseline']!r} is not one this ragrade reads "
                             f"({FORMAT_VERSION})", path=where)
        try:
            pq = data["per_query"]
            queries = [str(q) for q in pq["queries"]]
            values = {str(c): np.array([math.nan if v is None else float(v) for v in vs], dtype=np.float64)
                      for c, vs in pq["values"].items()}
            if any(len(v) != len(queries) for v in values.values()):
                raise ValueError("a metric's per-query values do not match the queries")
            metrics = {str(k): str(v) for k, v in data["metrics"].items()}
            if list(metrics) != list(values):
                raise ValueError("the metrics and the per-query columns differ")
            frame = pd.DataFrame(values, index=pd.Index(queries, name="query", dtype=object))
            return cls(run=data.get("run"), metrics=metrics, profile=data.get("profile"),
                       policies={str(k): v if v is None or isinstance(v, int | float) else str(v)
                                 for k, v in dict(data["policies"]).items()},
                       qrels=dict(data["qrels"]), per_query=frame, ragrade_version=str(data["ragrade_version"]),
                       created=str(data["created"]), means=dict(data.get("means") or {}),
                       counts=dict(data.get("counts") or {}), summary=dict(data.get("summary") or {}), path=path,
                       matcher=None if data.get("matcher") is None else str(data["matcher"]))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ParseError(f"malformed baseline file: {type(exc).__name__}: {exc}", path=where) from None


@boundary
def save_baseline(result: Any, path: str | os.PathLike[str], qrels: Any, *, matcher: Any = None) -> Path:
    """Save ``result`` (scored against ``qrels``, with ``matcher`` when its items were texts) as a baseline
    file for :func:`ragrade.gate`.

    >>> import ragrade, tempfile, os
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    >>> r = ragrade.evaluate(qrels, {"q1": ["d1"], "q2": ["d3", "d2"]}, ["rr"])
    >>> p = save_baseline(r, os.path.join(tempfile.mkdtemp(), "baseline.json"), qrels)
    >>> load_baseline(p).per_query["rr"].tolist()
    [1.0, 0.5]
    """
    return Baseline.from_result(result, qrels, matcher).save(path)


def _matcher_name(matcher: Any) -> str | None:
    if matcher is None or isinstance(matcher, str):
        return matcher
    return str(getattr(matcher, "name", type(matcher).__name__))


@boundary
def load_baseline(path: str | os.PathLike[str]) -> Baseline:
    """Read a baseline file written by :func:`save_baseline`."""
    if not isinstance(path, str | os.PathLike):
        raise InputError("the baseline must be given as a file path", value=type(path).__name__)
    p = os.fspath(path)
    if not os.path.exists(p):
        raise ParseError("no such file", path=p)
    try:
        data = json.loads(Path(p).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON ({exc.msg})", path=p, line=exc.lineno) from None
    except (OSError, UnicodeDecodeError, RecursionError) as exc:
        raise ParseError(f"cannot read the baseline: {exc}", path=p) from None
    return Baseline.from_dict(data, path=p)


def _null(v: Any) -> Any:
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f
