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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ragrade.errors import InputError, ParseError
from ragrade.options import public

FORMAT_VERSION = 1


@public
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


def truth_of(qrels: Any, metrics: Any, truth: Mapping[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
    """``(route, settings)`` of a ground truth scored with ``metrics`` and the ground-truth keywords ``truth``
    (``chunks=``, ``assignments=``, ...: :data:`ragrade.engine.plan.TRUTH_OPTIONS`): the route that evaluates
    it (character spans, nuggets; None for judged ids) and the keywords of ``truth`` that are conventions of
    that route (its ``SETTINGS``: a span threshold, say), which a candidate must share with its baseline."""
    from ragrade.engine.plan import build_plan
    from ragrade.evaluation import route_of

    given = {k: v for k, v in (truth or {}).items() if v is not None}
    route = route_of(build_plan(qrels, None, metrics, **given))
    if route is None:
        return None, {}
    return route, {k: v for k, v in given.items() if k in getattr(route, "SETTINGS", ())}


def truth_stats(qrels: Any, metrics: Any = (), truth: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """:func:`qrels_stats` of judged ids, or the route's own for another ground truth (its fingerprint covers
    the truth itself: the spans, the nuggets; not a chunking or the assignments a run's passages needed)."""
    route, _ = truth_of(qrels, metrics, truth)
    if route is None:
        return qrels_stats(qrels)
    from ragrade.engine.plan import build_plan

    given = {k: v for k, v in (truth or {}).items() if v is not None}
    stats: dict[str, Any] = route.truth_stats(build_plan(qrels, None, metrics, **given))
    return stats


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
    #: The ground-truth keywords that are conventions of its route (a span threshold...), when the ground
    #: truth is not judged ids (``truth_of``).
    truth: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_result(cls, result: Any, qrels: Any, matcher: Any = None,
                    truth: Mapping[str, Any] | None = None) -> Baseline:
        """The baseline of ``result`` (a :class:`~ragrade.engine.result.Result`), scored against ``qrels``
        (with ``matcher``, when the items were texts; with the ground-truth keywords ``truth``, when the
        ground truth is spans or nuggets)."""
        from dataclasses import asdict

        from ragrade import __version__
        from ragrade.engine.result import Result

        if not isinstance(result, Result):
            raise InputError(f"a baseline is made from a ragrade Result, not a {type(result).__name__}")
        result = result.collect()  # a Spark result's values, on the driver
        profile = None if result.profile is None or result.profile.name == "default" else result.profile.name
        labels = [(label, m) for label, m in result.metrics.items()]
        _, settings = truth_of(qrels, labels, truth)
        return cls(run=result.run_name, metrics={label: str(m) for label, m in result.metrics.items()},
                   profile=profile, policies=dict(asdict(result.policies)), truth=settings,
                   qrels=truth_stats(qrels, labels, truth),
                   per_query=result.per_query.copy(), ragrade_version=__version__,
                   created=_dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                   means=dict(result.means), counts=dict(result.counts), summary=result.summary.to_dict(),
                   matcher=_matcher_name(matcher))

    def to_dict(self) -> dict[str, Any]:
        frame = self.per_query
        extra: dict[str, Any] = {} if self.matcher is None else {"matcher": self.matcher}
        if self.truth:
            extra["truth"] = dict(self.truth)
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
        """The baseline of a parsed baseline file, each field checked (a :class:`ParseError` naming the
        file and the field otherwise)."""
        where = path or "<baseline>"
        if not isinstance(data, dict) or "ragrade_baseline" not in data:
            raise ParseError("not a ragrade baseline file (save one with `ragrade evaluate ... --save-baseline`)",
                             path=where)
        if data["ragrade_baseline"] != FORMAT_VERSION:
            raise ParseError(f"baseline format {data['ragrade_baseline']!r} is not one this ragrade reads "
                             f"({FORMAT_VERSION})", path=where)
        field_of = _Fields(data, where)
        metrics = field_of.mapping("metrics", str)
        policies = field_of.mapping("policies", (str, int, float, type(None)))
        frame = _per_query(field_of.mapping("per_query", object), metrics, where)
        matcher = field_of.optional("matcher", str)
        truth = field_of.mapping("truth", (str, int, float), {})
        return cls(run=None if data.get("run") is None else str(data["run"]), metrics=metrics,
                   profile=field_of.optional("profile", str), policies=policies,
                   qrels=field_of.mapping("qrels", object), per_query=frame,
                   ragrade_version=str(field_of.required("ragrade_version", str)),
                   created=str(field_of.required("created", str)), means=field_of.mapping("means", object, {}),
                   counts=field_of.mapping("counts", object, {}), summary=field_of.mapping("summary", object, {}),
                   path=path, matcher=matcher, truth=truth)


class _Fields:
    """The fields of a parsed baseline file, each checked for its type (a :class:`ParseError` naming the
    file and the field otherwise)."""

    def __init__(self, data: dict[str, Any], where: str) -> None:
        self.data, self.where = data, where

    def _bad(self, key: str, what: str) -> ParseError:
        return ParseError(f"malformed baseline file: {key!r} must be {what}", path=self.where,
                          text=repr(self.data.get(key))[:80])

    def required(self, key: str, kind: type | tuple[type, ...]) -> Any:
        value = self.data.get(key)
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _kinds(kind)):
            raise self._bad(key, _kind_words(kind))
        return value

    def optional(self, key: str, kind: type) -> Any:
        return None if self.data.get(key) is None else self.required(key, kind)

    def mapping(self, key: str, values: type | tuple[type, ...], default: Any = None) -> dict[str, Any]:
        if default is not None and self.data.get(key) is None:
            return dict(default)
        value = self.data.get(key)
        if not isinstance(value, dict) or not all(isinstance(v, values) for v in value.values()):
            raise self._bad(key, f"a mapping of {_kind_words(values)}")
        return {str(k): v for k, v in value.items()}


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_words(kind: type | tuple[type, ...]) -> str:
    return " or ".join({"str": "texts", "int": "integers", "float": "numbers", "NoneType": "null",
                        "object": "values", "dict": "objects"}.get(k.__name__, k.__name__) for k in _kinds(kind))


def _per_query(pq: dict[str, Any], metrics: dict[str, str], where: str) -> pd.DataFrame:
    """The per-query values of a baseline file: one column per metric, indexed by distinct query ids; the
    values numbers in [0, 1] for a metric bounded there (or null)."""
    queries, values = pq.get("queries"), pq.get("values")
    if not isinstance(queries, list) or not all(isinstance(q, str | int) and not isinstance(q, bool)
                                                for q in queries):
        raise ParseError("malformed baseline file: per_query.queries must be a list of query ids", path=where)
    ids = [str(q) for q in queries]
    if len(set(ids)) != len(ids):
        twice = next(q for q in ids if ids.count(q) > 1)
        raise ParseError(f"the baseline lists query {twice!r} twice (per_query.queries): each query has one "
                         f"value per metric", path=where)
    if not isinstance(values, dict) or list(values) != list(metrics):
        raise ParseError("malformed baseline file: per_query.values must hold one list per metric of 'metrics', "
                         "in its order", path=where)
    columns = {str(c): _column(c, vs, len(ids), metrics[str(c)], where) for c, vs in values.items()}
    return pd.DataFrame(columns, index=pd.Index(ids, name="query", dtype=object))


def _column(label: str, values: Any, n: int, definition: str, where: str) -> np.ndarray:
    """One metric's per-query values (null: NaN), checked: numbers, one per query, in [0, 1] when the
    metric is bounded there."""
    ok = isinstance(values, list) and len(values) == n and all(
        v is None or (isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)) for v in values)
    if not ok:
        raise ParseError(f"malformed baseline file: the values of {label!r} must be {n} numbers or nulls, one per "
                         "query", path=where)
    out = np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)
    if _bounded(definition):
        outside = np.flatnonzero((out < -1e-9) | (out > 1 + 1e-9))  # beyond the float rounding of a mean
        if outside.size:
            raise ParseError(f"{label} lies in [0, 1], but the baseline holds {out[outside[0]]!r} for a query "
                             f"(the file was edited or is not a baseline of this metric)", path=where)
    return out


def _bounded(definition: str) -> bool:
    from ragrade.errors import RagradeError
    from ragrade.metrics.parser import parse_metric

    try:
        return bool(parse_metric(definition).family.bounded)
    except RagradeError:  # not a metric this ragrade reads: the gate says so (IncomparableError)
        return False


@public
def save_baseline(result: Any, path: str | os.PathLike[str], qrels: Any, *, matcher: Any = None,
                  **truth: Any) -> Path:
    """Save ``result`` (scored against ``qrels``, with ``matcher`` when its items were texts, with the
    ground-truth keywords ``truth`` of :func:`ragrade.evaluate` when the ground truth is spans or nuggets)
    as a baseline file for :func:`ragrade.gate`.

    >>> import ragrade, tempfile, os
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    >>> r = ragrade.evaluate(qrels, {"q1": ["d1"], "q2": ["d3", "d2"]}, ["rr"])
    >>> p = save_baseline(r, os.path.join(tempfile.mkdtemp(), "baseline.json"), qrels)
    >>> load_baseline(p).per_query["rr"].tolist()
    [1.0, 0.5]
    """
    from ragrade.engine.plan import TRUTH_OPTIONS
    from ragrade.errors import UnknownNameError

    unknown = [k for k in truth if k not in TRUTH_OPTIONS]
    if unknown:
        raise UnknownNameError("option", unknown[0], ["matcher", *TRUTH_OPTIONS])
    return Baseline.from_result(result, qrels, matcher, truth).save(path)


def _matcher_name(matcher: Any) -> str | None:
    if matcher is None or isinstance(matcher, str):
        return matcher
    return str(getattr(matcher, "name", type(matcher).__name__))


@public
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
    except (OSError, UnicodeDecodeError, RecursionError) as exc:  # RecursionError: JSON nested too deep
        raise ParseError(f"cannot read the baseline: {exc}", path=p) from None
    return Baseline.from_dict(data, path=p)


def _null(v: Any) -> Any:
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f
