"""Nugget assignment (docs/nuggets.md, "Assigning nuggets"): does a text state each of its query's nuggets?

One call per (text, batch of ``batch`` (10) nuggets), the nuggets in their file order; labels ``support`` /
``partial_support`` / ``not_support`` (``grades=2``: ``support`` / ``not_support``). The texts are:

* retrieved passages: the top ``depth`` of each run (any run input), or explicit ``(query, doc)`` pairs;
* joined contexts: the top k of each run concatenated (``joined=(5, 10)``), numbered ``[1] ... [k]`` in rank
  order; a context is identified by its document ids in rank order;
* generated answers: ``{query: answer}`` or ``{run: {query: answer}}``.

Each call is a judgment of the LLM core keyed by (judge, model, prompt version, task, query text, the text,
the nugget batch): a passage retrieved by several runs or at several k, or a top k two runs share, is
judged once, now and in every later run sharing the cache. A label list of the wrong length or with an
unknown label is asked again at temperature 0.2 (:mod:`ragrade.nuggets.asking`); a batch that still fails is
labelled ``failed`` (never ``not_support``) with its reason. Texts that are already labelled in
``assignments=`` are not asked again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragrade.errors import InputError
from ragrade.nuggets import prompts
from ragrade.nuggets.asking import Asker, Budget, Judge, run_sync
from ragrade.nuggets.data import Assignment, Assignments, Nuggets, as_assignments, as_nuggets
from ragrade.nuggets.texts import passage_texts, query_texts


@dataclass(frozen=True)
class Item:
    """One text to assign: a passage (``doc``), a joined context (``context``) or an answer (``run``)."""

    query: str
    doc: str | None = None
    context: tuple[str, ...] | None = None
    run: str | None = None
    answer: str | None = None

    def label(self, nugget_id: str, label: str, reason: str | None = None) -> Assignment:
        return Assignment(self.query, nugget_id, label, self.doc, self.context, self.run, reason)

    def labelled(self, a: Assignments) -> Mapping[str, str]:
        if self.doc is not None:
            return a.passage(self.query, self.doc)
        if self.context is not None:
            return a.joined(self.query, self.context)
        return a.answer(self.query, self.run)

    def describe(self) -> str:
        if self.doc is not None:
            return f"passage {self.doc}"
        if self.context is not None:
            return f"top {len(self.context)} joined ({', '.join(self.context)})"
        return "answer" + (f" of {self.run}" if self.run else "")


@dataclass(frozen=True)
class AssignResult:
    """What :func:`assign` produced: ``assignments`` (the given ones with the new labels); ``failures`` (one
    dict per failed call: query, text, nuggets, reason; its labels are ``failed``); ``not_judged`` (texts
    that could not be asked: no query text, no passage text); ``unasked`` (calls a budget left); ``counts``
    and ``costs``; ``judge``."""

    assignments: Assignments
    failures: list[dict[str, Any]]
    not_judged: list[dict[str, str]]
    unasked: int
    counts: dict[str, Any]
    costs: dict[str, Any]
    judge: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return not self.unasked


def ranked_lists(run: Any, ties: str = "docid_desc") -> dict[str, list[str]]:
    """``{query: [doc, ...]}`` in rank order from any run input, later copies of a repeated document removed."""
    from ragrade.engine.inputs import as_run

    return {q: list(dict.fromkeys(docs)) for q, docs in as_run(run).to_lists(ties).items()}


def _named_runs(runs: Any) -> dict[str, Any]:
    """``{name: run}`` from one run or a mapping of named runs."""
    if runs is None:
        return {}
    if isinstance(runs, Mapping) and runs and _many(runs):
        return {str(k): v for k, v in runs.items()}
    return {"run": runs}


def _many(runs: Mapping[str, Any]) -> bool:
    """Whether a mapping is ``{run name: run}`` rather than one run (``{query: {doc: score}}``/``{query: [docs]}``)."""
    first = next(iter(runs.values()))
    if isinstance(first, Mapping):
        inner = next(iter(first.values()), None)
        return isinstance(inner, Mapping | list | tuple)
    return not isinstance(first, list | tuple)


def items_of(nuggets: Nuggets, *, runs: Any = None, depth: int | None = 10, joined: Iterable[int] = (),
             pairs: Iterable[tuple[str, str]] | None = None, answers: Any = None, ties: str = "docid_desc"
             ) -> list[Item]:
    """The texts to assign, each once: the top ``depth`` passages and the joined top k of every run, the
    ``pairs``, the ``answers``; only for queries that have nuggets."""
    out: dict[Item, None] = {}
    ks = sorted({int(k) for k in joined})
    if any(k < 1 for k in ks) or (depth is not None and depth < 0):
        raise InputError("depth must be a whole number >= 0 and joined cutoffs >= 1", value=(depth, ks))
    for run in _named_runs(runs).values():
        for q, docs in ranked_lists(run, ties).items():
            if not nuggets.of(q):
                continue
            for d in docs[:depth]:
                out[Item(q, doc=d)] = None
            for k in ks:
                if docs[:k]:
                    out[Item(q, context=tuple(docs[:k]))] = None
    for q, d in pairs or ():
        if nuggets.of(str(q)):
            out[Item(str(q), doc=str(d))] = None
    for run_name, q, text in _answers(answers):
        if nuggets.of(q):
            out[Item(q, run=run_name, answer=text)] = None
    return list(out)


def _answers(answers: Any) -> list[tuple[str | None, str, str]]:
    if answers is None:
        return []
    if not isinstance(answers, Mapping):
        raise InputError("answers must be {query: answer} or {run: {query: answer}}", value=type(answers).__name__)
    if all(isinstance(v, Mapping) for v in answers.values()):
        return [(str(r), str(q), str(t)) for r, qs in answers.items() for q, t in qs.items()]
    return [(None, str(q), str(t)) for q, t in answers.items()]


def _text_of(item: Item, texts: Mapping[str, str]) -> tuple[str | None, str]:
    """The text shown for an item, or None and why not."""
    if item.answer is not None:
        return (item.answer, "") if item.answer.strip() else (None, "empty answer")
    if item.doc is not None:
        t = texts.get(item.doc)
        return (t, "") if t else (None, "no passage text")
    parts = [texts[d] for d in item.context or () if d in texts]
    if not parts:
        return None, "no passage text"
    return "\n\n".join(f"[{i}] {t}" for i, t in enumerate(parts, 1)), ""


def _requests(items: list[Item], nuggets: Nuggets, qtexts: Mapping[str, str], texts: Mapping[str, str],
              given: Assignments, task: str, batch: int
              ) -> tuple[dict[str, tuple[str, dict[str, str]]], dict[str, tuple[Item, list[str]]], list[dict[str, str]]]:
    requests: dict[str, tuple[str, dict[str, str]]] = {}
    where: dict[str, tuple[Item, list[str]]] = {}
    not_judged: list[dict[str, str]] = []
    for i, item in enumerate(items):
        qt = qtexts.get(item.query) or nuggets.query_text(item.query)
        text, why = _text_of(item, texts)
        if not qt or text is None:
            not_judged.append({"query": item.query, "text": item.describe(), "reason": why or "no query text"})
            continue
        have = item.labelled(given)
        nugs = nuggets.of(item.query)
        for b in range(0, len(nugs), batch):
            chunk = nugs[b: b + batch]
            if all(n.nugget_id in have for n in chunk):
                continue
            name = f"{i}\x00{b}"
            requests[name] = (task, {"query": qt, "passage": text,
                                     "nuggets": json.dumps([n.text for n in chunk], ensure_ascii=False)})
            where[name] = (item, [n.nugget_id for n in chunk])
    return requests, where, not_judged


async def aassign(nuggets: Any, *, judge: Judge, passages: Any = None, runs: Any = None, depth: int | None = 10,
                  joined: Iterable[int] = (), pairs: Iterable[tuple[str, str]] | None = None, answers: Any = None,
                  queries: Any = None, assignments: Any = None, grades: int = 3, batch: int = 10,
                  ties: str = "docid_desc", cache: Any = True, budget: Budget | None = None,
                  max_concurrency: int | None = None, retry_failed: bool = False, retries: int = 2,
                  temperature: float = 0.0, retry_temperature: float = 0.2, progress: Any = None) -> AssignResult:
    """Asynchronous :func:`assign`."""
    if grades not in (2, 3):
        raise InputError("grades must be 2 (support / not_support) or 3 (with partial_support)", value=grades)
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise InputError("batch must be a whole number >= 1", value=batch)
    nugs = as_nuggets(nuggets)
    given = as_assignments(assignments) if assignments is not None else Assignments()
    items = items_of(nugs, runs=runs, depth=depth, joined=joined, pairs=pairs, answers=answers, ties=ties)
    docs = {d for it in items for d in ((it.doc,) if it.doc else it.context or ())}
    texts = passage_texts(passages, docs) if docs else {}
    task = prompts.ASSIGN if grades == 3 else prompts.ASSIGN2
    requests, where, not_judged = _requests(items, nugs, query_texts(queries), texts, given, task, batch)
    asker = Asker(judge, cache, budget or Budget(), max_concurrency, retry_failed, temperature, retry_temperature,
                  retries, progress=progress)
    try:
        sizes = {name: len(ids) for name, (_, ids) in where.items()}
        got = await asker.ask(requests, lambda name, out: None if len(out["labels"]) == sizes[name]
                              else f"expected {sizes[name]} labels, got {len(out['labels'])}") if requests else {}
    finally:
        await asker.aclose()
    new, failures, unasked = [], [], 0
    for name, res in got.items():
        item, ids = where[name]
        if res.unasked:
            unasked += 1
        elif res.output is None:
            failures.append({"query": item.query, "text": item.describe(), "nuggets": ids, "reason": res.error})
            new += [item.label(n, "failed", res.error) for n in ids]
        else:
            new += [item.label(n, lab) for n, lab in zip(ids, res.output["labels"], strict=True)]
    counts = {"texts": len(items), "calls_needed": len(requests), "labels": len(new), "failed_batches": len(failures),
              "not_judged": len(not_judged), "unasked": unasked}
    info = {"judge": judge.name, "model": judge.model, "prompt_version": prompts.PROMPT_VERSION,
            "cache": asker.cache_path}
    return AssignResult(given.merged(Assignments(new)), failures, not_judged, unasked, counts, asker.costs.to_dict(),
                        info)


def assign(nuggets: Any, *, judge: Judge, **options: Any) -> AssignResult:
    """Assign ``nuggets`` to texts with ``judge`` (see the module docstring for the texts and the calls).

    Options: ``passages`` (the corpus: a path, a Passages or ``{doc id: text}``), ``runs`` (one run or
    ``{name: run}``), ``depth`` (10), ``joined`` (cutoffs of the joined mode), ``pairs``, ``answers``,
    ``queries`` (texts when the nuggets file has none), ``assignments`` (given labels: not asked again),
    ``grades`` (3 or 2), ``batch`` (10), ``ties``, ``cache``, ``budget``, ``max_concurrency``,
    ``retry_failed``, ``retries`` (2), ``temperature`` (0), ``retry_temperature`` (0.2), ``progress``."""
    return run_sync(lambda: aassign(nuggets, judge=judge, **options), "assign")


__all__ = ["AssignResult", "Item", "aassign", "assign", "items_of", "ranked_lists"]
