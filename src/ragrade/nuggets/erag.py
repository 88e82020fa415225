"""eRAG labels (Salemi and Zamani, SIGIR 2024; docs/nuggets.md, "eRAG"): grade each retrieved document by the
answer a generator gives **from that document alone**, scored against the gold answers. The grades are qrels
for the retrieved documents; any measure then reads them (eRAG's own aggregation: :meth:`ERAGLabels.scores`).

``generate`` is a callable ``(query text, document text) -> answer`` or an LLM judge of the LLM core (it is
asked the ``answer`` task of :data:`ragrade.nuggets.prompts.TASK_SET`: cached, budgeted, retried like every
call). ``score`` is ``"exact_match"``, ``"token_f1"`` (SQuAD-style normalisation: lower case, punctuation
and the articles a/an/the removed, whitespace collapsed; the best over the gold answers), a callable
``(answer, gold answers) -> float in [0, 1]``, or an LLM judge (the ``answer_match`` task: 1 when it says
the answer matches, else 0). One document answered for one query text is one generation, wherever it is
ranked and in however many runs.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragrade.errors import InputError
from ragrade.nuggets import prompts
from ragrade.nuggets.asking import Asker, Budget, Outcome, run_sync
from ragrade.nuggets.texts import passage_texts, query_texts
from ragrade.options import public

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower case, punctuation and the articles a/an/the removed, whitespace collapsed."""
    return " ".join(_ARTICLES.sub(" ", str(text).lower().translate(_PUNCT)).split())


def exact_match(answer: str, gold: Sequence[str]) -> float:
    """1.0 when the normalised answer equals a normalised gold answer, else 0.0.

    >>> exact_match("The Eiffel Tower!", ["eiffel tower"])
    1.0
    """
    a = normalize_answer(answer)
    return float(any(a == normalize_answer(g) for g in gold))


def token_f1(answer: str, gold: Sequence[str]) -> float:
    """The best token F1 of the normalised answer against the normalised gold answers.

    >>> round(token_f1("Paris, France", ["Paris"]), 4)
    0.6667
    """
    a = normalize_answer(answer).split()
    best = 0.0
    for g in gold:
        t = normalize_answer(g).split()
        common = sum((Counter(a) & Counter(t)).values())
        if common:
            p, r = common / len(a), common / len(t)
            best = max(best, 2 * p * r / (p + r))
        elif not a and not t:
            best = max(best, 1.0)
    return best


SCORES: dict[str, Callable[[str, Sequence[str]], float]] = {"exact_match": exact_match, "token_f1": token_f1}


@dataclass(frozen=True)
class ERAGLabels:
    """eRAG's document labels: ``outputs`` (a DataFrame ``query, doc, rank, answer, score``, one row per
    retrieved document, rank 1-based), ``failures`` (documents whose answer or score failed: no label),
    ``costs`` of the LLM calls, and the labels as qrels (:attr:`qrels`)."""

    outputs: Any
    failures: list[dict[str, Any]] = field(default_factory=list)
    costs: dict[str, Any] = field(default_factory=dict)

    @property
    def qrels(self) -> Any:
        """The labels as graded :class:`~ragrade.data.Qrels` (grade = the answer's score in [0, 1])."""
        from ragrade.data import Qrels

        ok = self.outputs.dropna(subset=["score"]).drop_duplicates(["query", "doc"])
        return Qrels.from_columns(ok["query"].to_numpy(dtype=object), ok["doc"].to_numpy(dtype=object),
                                  ok["score"].to_numpy(dtype=np.float64), source="erag")

    @property
    def binary(self) -> bool:
        """Whether every label is 0 or 1 (eRAG then aggregates with any measure)."""
        s = self.outputs["score"].dropna()
        return bool(((s == 0) | (s == 1)).all())

    def scores(self, metrics: Sequence[str]) -> Any:
        """Per-query values as eRAG aggregates its labels: with binary labels, the measures computed from the
        labels as qrels over the ranking (any ragrade measure); with graded labels only ``P@k`` (the mean
        label of the top k) and ``success@k`` (the best label of the top k), as eRAG allows. A DataFrame,
        one row per query, one column per metric."""
        import pandas as pd

        if self.binary:
            from ragrade.engine.executor import run_in_memory
            from ragrade.engine.plan import build_plan

            plan = build_plan(self.qrels, self._run(), list(metrics))
            return run_in_memory(plan)["run"].per_query
        data = {m: _graded(self.outputs, m) for m in metrics}
        return pd.DataFrame(data)

    def _run(self) -> Any:
        from ragrade.data import Run

        o = self.outputs
        return Run.from_columns(o["query"].to_numpy(dtype=object), o["doc"].to_numpy(dtype=object),
                                (-o["rank"].to_numpy(dtype=np.float64)), source="erag")


def _graded(outputs: Any, metric: str) -> Any:
    from ragrade.metrics import parse_metric

    m = parse_metric(metric)
    if m.name not in ("precision", "hit_rate") or m.params:
        raise InputError("with graded eRAG labels only P@k and success@k apply (eRAG's rule)", value=metric)
    out = {}
    for q, g in outputs.sort_values(["query", "rank"]).groupby("query", sort=False):
        labels = g["score"].to_numpy(dtype=np.float64)
        k = len(labels) if m.k is None else int(m.k)
        if k > len(labels):
            raise InputError(f"{metric}: query {q!r} has {len(labels)} ranked documents (eRAG needs k of them)")
        top = labels[:k]
        out[q] = float(np.mean(top)) if m.name == "precision" else float(np.max(top, initial=0.0))
    import pandas as pd

    return pd.Series(out, dtype=np.float64)


def _gold(answers: Mapping[str, Any], q: str) -> list[str]:
    g = answers.get(q)
    if g is None:
        return []
    return [g] if isinstance(g, str) else [str(x) for x in g]


async def _generate(generate: Any, asker: Asker | None, pairs: list[tuple[str, str, str]]
                    ) -> dict[tuple[str, str], Outcome]:
    """The answer of each distinct (query text, document text)."""
    distinct = {(qt, dt): None for _, qt, dt in pairs}
    if asker is None:
        return {key: Outcome({"answer": str(generate(*key))}) for key in distinct}
    names = {f"{i}": key for i, key in enumerate(distinct)}
    got = await asker.ask({n: (prompts.ANSWER, {"query": qt, "document": dt}) for n, (qt, dt) in names.items()})
    return {names[n]: res for n, res in got.items()}


async def _score(score: Any, asker: Asker | None, items: list[tuple[str, list[str], str]]) -> dict[tuple[str, str, str],
                                                                                                   Outcome]:
    """The score of each distinct (query text, gold answers, answer)."""
    distinct = {(qt, json.dumps(g, ensure_ascii=False), a): g for qt, g, a in items}
    if asker is None:
        fn = SCORES[score] if isinstance(score, str) else score
        out = {}
        for key, g in distinct.items():
            v = float(fn(key[2], g))
            if not 0.0 <= v <= 1.0:
                raise InputError("score must return a number in [0, 1]", value=v)
            out[key] = Outcome({"score": v})
        return out
    names = {f"{i}": key for i, key in enumerate(distinct)}
    got = await asker.ask({n: (prompts.MATCH, {"query": k[0], "gold": k[1], "answer": k[2]}) for n, k in names.items()})
    return {names[n]: (Outcome({"score": float(res.output["correct"])}) if res.output is not None else res)
            for n, res in got.items()}


def _asker(x: Any, options: Mapping[str, Any]) -> Asker | None:
    """An Asker for an LLM judge; None for a callable or a score's name."""
    if isinstance(x, str) or (callable(x) and not hasattr(x, "judge")):
        return None
    if not hasattr(x, "judge"):
        raise InputError("generate and score must be callables or LLM judges", value=type(x).__name__)
    return Asker(x, options.get("cache", True), options.get("budget") or Budget(), options.get("max_concurrency"),
                 options.get("retry_failed", False), 0.0, 0.2, options.get("retries", 2))


def _rows(answered: list[tuple[str, str, int, Outcome]], scored: Mapping[tuple[str, str, str], Outcome],
          qtexts: Mapping[str, str], answers: Mapping[str, Any]) -> tuple[list[tuple[Any, ...]], list[dict[str, Any]]]:
    """The rows of :attr:`ERAGLabels.outputs` (a failed score leaves the score empty) and the failures."""
    table, failures = [], []
    for q, d, r, o in answered:
        if o.output is None:
            failures.append({"query": q, "doc": d, "reason": f"answer: {o.error}"})
            continue
        s = scored[(qtexts[q], json.dumps(_gold(answers, q), ensure_ascii=False), o.output["answer"])]
        if s.output is None:
            failures.append({"query": q, "doc": d, "reason": f"score: {s.error}"})
        table.append((q, d, r, o.output["answer"], None if s.output is None else s.output["score"]))
    return table, failures


async def aerag_labels(queries: Any, run: Any, answers: Mapping[str, Any], generate: Any, score: Any = "exact_match",
                       *, passages: Any = None, depth: int | None = None, ties: str = "docid_desc",
                       **options: Any) -> ERAGLabels:
    """Asynchronous :func:`erag_labels`."""
    import pandas as pd

    from ragrade.nuggets.assignment import ranked_lists

    _check(answers, generate, score, depth, options)
    qtexts = query_texts(queries)
    lists = {q: docs[:depth] for q, docs in ranked_lists(run, ties).items() if q in qtexts}
    texts = passage_texts(passages, {d for docs in lists.values() for d in docs})
    rows = [(q, d, r) for q, docs in lists.items() for r, d in enumerate(docs, 1)]
    missing = [{"query": q, "doc": d, "reason": "no passage text"} for q, d, _ in rows if d not in texts]
    rows = [x for x in rows if x[1] in texts]
    gen_asker, score_asker = _asker(generate, options), _asker(score, options)
    try:
        made = await _generate(generate, gen_asker, [(q, qtexts[q], texts[d]) for q, d, _ in rows])
        answered = [(q, d, r, made[(qtexts[q], texts[d])]) for q, d, r in rows]
        scored = await _score(score, score_asker, [(qtexts[q], _gold(answers, q), o.output["answer"])
                                                   for q, _, _, o in answered if o.output is not None])
    finally:
        for a in (gen_asker, score_asker):
            if a is not None:
                await a.aclose()
    table, failures = _rows(answered, scored, qtexts, answers)
    costs = {"generate": gen_asker.costs.to_dict() if gen_asker else {},
             "score": score_asker.costs.to_dict() if score_asker else {}}
    frame = pd.DataFrame(table, columns=["query", "doc", "rank", "answer", "score"])
    return ERAGLabels(frame, [*missing, *failures], costs)


def _check(answers: Any, generate: Any, score: Any, depth: Any, options: Mapping[str, Any]) -> None:
    """The arguments of :func:`erag_labels` that its work would trip on, refused up front."""
    if not isinstance(answers, Mapping):
        raise InputError("answers must be a mapping {query id: gold answer or [answers]}", value=type(answers).__name__)
    if isinstance(score, str) and score not in SCORES:
        raise InputError(f"score must be {', '.join(SCORES)}, a callable or an LLM judge", value=score)
    for name, x in (("generate", generate), ("score", score)):
        if not (callable(x) or hasattr(x, "judge") or (name == "score" and isinstance(x, str))):
            raise InputError(f"{name} must be a callable or an LLM judge", value=type(x).__name__)
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise InputError("depth must be a positive integer or None", value=depth)
    unknown = [k for k in options if k not in ASK_OPTIONS]
    if unknown:
        from ragrade.errors import UnknownNameError

        raise UnknownNameError("option", unknown[0], ["passages", "depth", "ties", *ASK_OPTIONS])
    if options.get("budget") is not None and not isinstance(options["budget"], Budget):
        raise InputError("budget must be a ragrade.llm.budget.Budget", value=type(options["budget"]).__name__)
    if "cache" in options and not isinstance(options["cache"], bool | str) and not hasattr(options["cache"], "__fspath__"):
        raise InputError("cache must be True, False or the path of a cache file", value=type(options["cache"]).__name__)


#: The keywords of an LLM judge's work (:class:`~ragrade.nuggets.asking.Asker`).
ASK_OPTIONS = ("cache", "budget", "max_concurrency", "retry_failed", "retries")


@public
def erag_labels(queries: Any, run: Any, answers: Mapping[str, Any], generate: Any, score: Any = "exact_match",
                **options: Any) -> ERAGLabels:
    """eRAG's labels of the documents ``run`` retrieves (see the module docstring).

    ``queries``: ``{query id: text}`` or a topics file; ``answers``: ``{query id: gold answer or [answers]}``;
    ``passages``: the documents' texts (a corpus path or ``{doc id: text}``); ``depth``: the top k labelled
    (None: all). With LLM judges: ``cache``, ``budget``, ``max_concurrency``, ``retry_failed``, ``retries``.

    >>> labels = erag_labels({"q1": "capital of France"}, {"q1": ["d1", "d2"]}, {"q1": ["Paris"]},
    ...                      lambda q, doc: doc.split()[0], "exact_match",
    ...                      passages={"d1": "Paris is the capital.", "d2": "Lyon is a city."})
    >>> labels.outputs[["doc", "answer", "score"]].values.tolist()
    [['d1', 'Paris', 1.0], ['d2', 'Lyon', 0.0]]
    """
    return run_sync(lambda: aerag_labels(queries, run, answers, generate, score, **options), "erag_labels")


__all__ = ["SCORES", "ERAGLabels", "aerag_labels", "erag_labels", "exact_match", "normalize_answer", "token_f1"]
