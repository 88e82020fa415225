"""Nugget creation (docs/nuggets.md, "Creating nuggets"), the procedure of TREC RAG's AutoNuggetizer with our
own prompts:

1. the passages a query's judgments grade ``>= min_grade`` (2), highest grade first (ties by document id),
   are read ``window`` (10) at a time; each window is one call that returns the whole revised nugget list
   (nuggets of 1-12 words, at most ``max_nuggets``: 30; a longer list is cut there);
2. a window whose reply cannot be read is asked again at temperature 0.2 (the first ask is at 0), up to
   ``retries`` times; if it still fails, the list stays as it was (the failure is counted and reported);
3. the final list is labelled vital or okay, ``label_batch`` (10) nuggets a call (a reply with a label
   missing or unknown is asked again the same way; a batch that still fails is labelled ``failed``);
4. vital nuggets first (the order is kept otherwise) and the list cut to ``keep`` (20; None: no cut).

Windows are sequential within a query (each revises the list of the one before); the queries advance
together, one round of calls per window position. Every call goes through the LLM core's cache and runner
(:mod:`ragrade.nuggets.asking`): a run that is stopped (a budget, a kill) resumes from the cache without
repeating a call. A query whose procedure did not finish (the budget) is left out of the nuggets and listed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragrade.errors import InputError
from ragrade.nuggets import prompts
from ragrade.nuggets.asking import Asker, Budget, Judge, Outcome, run_sync
from ragrade.nuggets.data import Nugget, Nuggets
from ragrade.nuggets.texts import passage_texts, query_texts

#: Words beyond which a nugget is counted as long (the prompt asks for 1-12).
MAX_WORDS = 12


@dataclass(frozen=True)
class CreateSettings:
    """The numbers of the procedure (every one an option of ``ragrade nuggets create``)."""

    min_grade: float = 2
    window: int = 10
    max_nuggets: int = 30
    label_batch: int = 10
    keep: int | None = 20
    vital_first: bool = True

    def __post_init__(self) -> None:
        for name in ("window", "max_nuggets", "label_batch"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError(f"{name} must be a whole number >= 1", value=v)
        if self.keep is not None and (isinstance(self.keep, bool) or not isinstance(self.keep, int) or self.keep < 1):
            raise InputError("keep must be a whole number >= 1 or None (no cut)", value=self.keep)


@dataclass(frozen=True)
class CreateResult:
    """What :func:`create` made: ``nuggets``; ``failures`` (one dict per failed window or labelling batch:
    query, step, reason); ``skipped`` (queries not asked: no text, no passage graded high enough, no passage
    text); ``unfinished`` (queries a budget stopped: re-run to resume); ``counts`` and ``costs`` (calls,
    cache hits, tokens, cost); ``judge`` (name, model, prompt version)."""

    nuggets: Nuggets
    failures: list[dict[str, Any]]
    skipped: list[dict[str, str]]
    unfinished: list[str]
    counts: dict[str, Any]
    costs: dict[str, Any]
    judge: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return not self.unfinished


@dataclass
class _Query:
    """The state of one query's procedure."""

    qid: str
    text: str
    windows: list[list[str]]
    current: list[str] = field(default_factory=list)
    origin: dict[str, int] = field(default_factory=dict)  # nugget text -> window that introduced it
    labels: list[str] = field(default_factory=list)
    stopped: bool = False


def relevant_passages(qrels: Any, min_grade: float) -> dict[str, list[str]]:
    """``{query: [doc, ...]}``: the documents graded ``>= min_grade``, highest grade first, ties by id."""
    from ragrade.engine.inputs import as_qrels

    if hasattr(qrels, "to_qrels") and callable(qrels.to_qrels):  # an assessment's labels
        qrels = qrels.to_qrels()
    out: dict[str, list[str]] = {}
    for q, docs in as_qrels(qrels).to_dict().items():
        ranked = sorted(((float(g), d) for d, g in docs.items() if float(g) >= min_grade), key=lambda x: (-x[0], x[1]))
        if ranked:
            out[q] = [d for _, d in ranked]
    return out


def _plan(qrels: Any, queries: Any, passages: Any, s: CreateSettings
          ) -> tuple[list[_Query], dict[str, str], list[dict[str, str]]]:
    """The queries to run (with their windows), the passage texts, and the queries skipped (with why)."""
    rel = relevant_passages(qrels, s.min_grade)
    qtexts = query_texts(queries)
    texts = passage_texts(passages, {d for docs in rel.values() for d in docs}) if rel else {}
    todo, skipped = [], []
    for q, docs in rel.items():
        found = [d for d in docs if d in texts]
        if q not in qtexts:
            skipped.append({"query": q, "reason": "no query text"})
        elif not found:
            skipped.append({"query": q, "reason": "no text for any of its passages"})
        else:
            windows = [found[i: i + s.window] for i in range(0, len(found), s.window)]
            todo.append(_Query(q, qtexts[q], windows))
    return todo, texts, skipped


def _window_inputs(st: _Query, step: int, texts: Mapping[str, str], s: CreateSettings) -> dict[str, str]:
    numbered = "\n".join(f"[{i}] {texts[d]}" for i, d in enumerate(st.windows[step], 1))
    return {"query": st.text, "passages": numbered, "nuggets": json.dumps(st.current, ensure_ascii=False),
            "max_nuggets": str(s.max_nuggets)}


async def _windows(asker: Asker, states: list[_Query], texts: Mapping[str, str], s: CreateSettings,
                   failures: list[dict[str, Any]], counts: dict[str, Any]) -> None:
    """Every query's windows, one round per window position."""
    for step in range(max((len(st.windows) for st in states), default=0)):
        active = [st for st in states if step < len(st.windows) and not st.stopped]
        if not active:
            continue
        got = await asker.ask({st.qid: (prompts.CREATE, _window_inputs(st, step, texts, s)) for st in active})
        for st in active:
            res = got[st.qid]
            counts["windows"] += 1
            if res.unasked:
                st.stopped = True
            elif res.output is None:
                failures.append({"query": st.qid, "step": f"window {step + 1}", "reason": res.error})
            else:
                nuggets = list(dict.fromkeys(res.output["nuggets"]))
                counts["truncated"] += max(0, len(nuggets) - s.max_nuggets)
                st.current = nuggets[: s.max_nuggets]
                for t in st.current:
                    st.origin.setdefault(t, step)


def _check_labels(expected: Mapping[str, int]) -> Any:
    def check(name: str, output: dict[str, Any]) -> str | None:
        n, got = expected[name], len(output["labels"])
        return None if got == n else f"expected {n} labels, got {got}"

    return check


async def _label(asker: Asker, states: list[_Query], s: CreateSettings, failures: list[dict[str, Any]],
                 counts: dict[str, Any]) -> None:
    """Label every finished query's nuggets vital or okay, ``label_batch`` a call."""
    requests: dict[str, tuple[str, dict[str, str]]] = {}
    sizes: dict[str, int] = {}
    where: dict[str, tuple[_Query, int]] = {}
    for st in states:
        if st.stopped:
            continue
        st.labels = ["failed"] * len(st.current)
        for b in range(0, len(st.current), s.label_batch):
            batch = st.current[b: b + s.label_batch]
            name = f"{st.qid}\x00{b}"
            requests[name] = (prompts.LABEL, {"query": st.text, "nuggets": json.dumps(batch, ensure_ascii=False)})
            sizes[name], where[name] = len(batch), (st, b)
    got: dict[str, Outcome] = await asker.ask(requests, _check_labels(sizes)) if requests else {}
    for name, res in got.items():
        st, b = where[name]
        counts["label_batches"] += 1
        if res.unasked:
            st.stopped = True
        elif res.output is None:
            failures.append({"query": st.qid, "step": f"labels {b + 1}-{b + sizes[name]}", "reason": res.error})
            counts["labels_failed"] += sizes[name]
        else:
            st.labels[b: b + sizes[name]] = res.output["labels"]


def _finish(st: _Query, s: CreateSettings, judge: Mapping[str, Any]) -> list[Nugget]:
    """The query's nuggets: vital first (when asked), cut to ``keep``, with ids n1, n2, ... and provenance."""
    pairs = list(zip(st.current, st.labels, strict=True))
    if s.vital_first:
        pairs.sort(key=lambda p: 0 if p[1] == "vital" else 1)  # stable: the list's order otherwise
    if s.keep is not None:
        pairs = pairs[: s.keep]
    out = []
    for i, (text, label) in enumerate(pairs, 1):
        w = st.origin.get(text, 0)
        prov = {"method": "ragrade.nuggets.create", **judge, "window": w + 1, "docs": list(st.windows[w])}
        out.append(Nugget(st.qid, f"n{i}", text, label, prov, st.text))
    return out


async def acreate(qrels: Any, queries: Any, passages: Any, *, judge: Judge, cache: Any = True,
                  budget: Budget | None = None, max_concurrency: int | None = None, retry_failed: bool = False,
                  retries: int = 2, temperature: float = 0.0, retry_temperature: float = 0.2,
                  settings: CreateSettings | None = None, progress: Any = None, **numbers: Any) -> CreateResult:
    """Asynchronous :func:`create`."""
    s = settings or CreateSettings(**numbers)
    states, texts, skipped = _plan(qrels, queries, passages, s)
    asker = Asker(judge, cache, budget or Budget(), max_concurrency, retry_failed, temperature, retry_temperature,
                  retries, progress=progress)
    failures: list[dict[str, Any]] = []
    counts: dict[str, Any] = {"queries": len(states), "passages": sum(len(w) for st in states for w in st.windows),
                              "windows": 0, "label_batches": 0, "labels_failed": 0, "truncated": 0}
    try:
        await _windows(asker, states, texts, s, failures, counts)
        await _label(asker, states, s, failures, counts)
    finally:
        await asker.aclose()
    info = {"judge": judge.name, "model": judge.model, "prompt_version": prompts.PROMPT_VERSION}
    made = [n for st in states if not st.stopped for n in _finish(st, s, info)]
    unfinished = [st.qid for st in states if st.stopped]
    with_nuggets = {n.query for n in made}
    empty = [st.qid for st in states if not st.stopped and st.qid not in with_nuggets]
    counts.update(nuggets=len(made), vital=sum(n.importance == "vital" for n in made),
                  long=sum(len(n.text.split()) > MAX_WORDS for n in made), without_nuggets=len(empty))
    if empty:  # the model read the passages and wrote no nugget: said, since their nugget measures are NaN
        import warnings

        from ragrade.errors import RagradeWarning

        warnings.warn(f"{len(empty)} queries got no nugget from their passages (e.g. {empty[0]!r}): their nugget "
                      "measures are undefined (NaN, left out of the means)", RagradeWarning, stacklevel=3)
    return CreateResult(Nuggets(made), failures, skipped, unfinished, counts, asker.costs.to_dict(),
                        {**info, "cache": asker.cache_path})


def create(qrels: Any, queries: Any, passages: Any, *, judge: Judge, **options: Any) -> CreateResult:
    """Nuggets for every query of ``qrels`` (or an assessment's labels) from its passages graded ``>= 2``, by the
    procedure of the module docstring, asked of ``judge`` (an LLM backend asking :data:`~ragrade.nuggets.prompts.
    TASK_SET`, e.g. :func:`ragrade.nuggets.llm_judge`).

    ``queries``: ``{query id: text}`` or a topics file; ``passages``: ``{doc id: text}``, a corpus file or a
    :class:`~ragrade.io.texts.Passages`. Options: ``cache`` (True: the user cache, a path, a JudgmentCache or
    False), ``budget``, ``max_concurrency``, ``retry_failed``, ``retries`` (2), ``temperature`` (0),
    ``retry_temperature`` (0.2), ``progress`` (``progress(costs, execution)`` as calls finish), and the procedure's
    numbers (:class:`CreateSettings`: ``min_grade`` 2,
    ``window`` 10, ``max_nuggets`` 30, ``label_batch`` 10, ``keep`` 20, ``vital_first`` True)."""
    return run_sync(lambda: acreate(qrels, queries, passages, judge=judge, **options), "create")


__all__ = ["CreateResult", "CreateSettings", "acreate", "create", "relevant_passages"]
