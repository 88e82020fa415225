"""Test sets users already have, as span truth (docs/synthesize.md, "Importing"):

* a **Ragas** testset (``TestsetGenerator``'s ``to_pandas()`` saved as CSV, JSONL or Parquet): each row's
  ``user_input`` is the question, ``reference_contexts`` (a list; in CSV the list's Python or JSON text) the
  texts that answer it (the ``<1-hop>``, ``<2-hop>`` marks Ragas' multi-hop synthesizers put before each
  are taken off), ``reference`` the answer, ``synthesizer_name`` the kind;
* a **LlamaIndex** ``EmbeddingQAFinetuneDataset`` saved with ``save_json`` (``queries``, ``corpus``,
  ``relevant_docs``): each query's relevant node texts.

Every reference text is located in the corpus by the spans package's locator (:func:`ragrade.spans.locate_chunks`:
exact, whitespace-normalised, fuzzy above ``fuzzy_floor``). A question whose every reference is found becomes
an item (its excerpts, the passages holding them, the leakage scores); a question with a reference not found
is refused, listed in ``rejects`` (stage ``import``) with the text that was not found: the report of what
could not be located. Nothing is kept as loose text.
"""

from __future__ import annotations

import ast
import bisect
import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ragrade.errors import InputError, ParseError, boundary
from ragrade.spans.model import Corpus
from ragrade.synthesis.checks import Draft, Thresholds, leak
from ragrade.synthesis.lexical import BM25, excerpt_quality
from ragrade.synthesis.model import Excerpt, Item, Reject, TestSet
from ragrade.synthesis.prompts import one_line
from ragrade.synthesis.sample import Candidate, Passage, Passages
from ragrade.synthesis.summary import corpus_info, summarize

#: Ragas synthesizer names -> ragrade's kinds.
RAGAS_KINDS = {"single_hop_specific_query_synthesizer": "single", "multi_hop_specific_query_synthesizer": "multi",
               "multi_hop_abstract_query_synthesizer": "abstract"}


#: The marks Ragas' multi-hop synthesizers put before each context (``<1-hop>`` and a blank line).
_HOP = re.compile(r"\A<\d+-hop>\s*")


def _contexts(value: Any, where: str) -> list[str]:
    """A row's reference contexts: a list, or the JSON or Python text of one (CSV); Ragas' ``<n-hop>`` marks
    taken off."""
    if isinstance(value, str):
        text = value.strip()
        try:
            value = json.loads(text)
        except ValueError:
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                value = [text]  # one context written as plain text
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ParseError(f"{where}: reference_contexts must be a list of texts", text=str(value)[:200])
    return [_HOP.sub("", v) for v in value if v.strip()]


def _ragas_kind(name: Any, contexts: int) -> str:
    if isinstance(name, str) and name in RAGAS_KINDS:
        return RAGAS_KINDS[name]
    return "single" if contexts <= 1 else "multi"


def read_ragas(path: str | os.PathLike[str]) -> list[tuple[str, str, str, str, list[str]]]:
    """``(query id, kind, question, answer, contexts)`` rows of a Ragas testset file (ids q1, q2, ...)."""
    from ragrade.io import formats
    from ragrade.io.sources import readable_path

    rows = []
    with readable_path(os.fspath(path)) as p:
        fmt = formats.records_format(p, None)
        for i, (row, line) in enumerate(fmt.rows(p), 1):
            where = f"{p}, {'line ' + str(line) if line else 'row ' + str(i)}"
            if "user_input" not in row or "reference_contexts" not in row:
                raise ParseError(f"{where}: a Ragas testset row needs user_input and reference_contexts (columns: "
                                 f"{', '.join(row)})", path=p)
            q = row["user_input"]
            if not isinstance(q, str) or not q.strip():
                raise ParseError(f"{where}: empty user_input", path=p)
            ctx = _contexts(row["reference_contexts"], where)
            answer = row.get("reference")
            rows.append((f"q{i}", _ragas_kind(row.get("synthesizer_name"), len(ctx)), one_line(q),
                         one_line(answer) if isinstance(answer, str) else "", ctx))
    return rows


def read_llamaindex(path: str | os.PathLike[str]) -> list[tuple[str, str, str, str, list[str]]]:
    """``(query id, kind, question, answer, contexts)`` of a LlamaIndex ``EmbeddingQAFinetuneDataset`` JSON."""
    p = os.fspath(path)
    try:
        with open(p, encoding="utf-8") as fh:
            data = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ParseError(f"not a JSON document ({exc})", path=p) from None
    if not isinstance(data, dict) or not all(isinstance(data.get(k), dict) for k in ("queries", "corpus",
                                                                                      "relevant_docs")):
        raise ParseError("an EmbeddingQAFinetuneDataset holds the objects queries, corpus and relevant_docs", path=p)
    rows = []
    for qid, question in data["queries"].items():
        ids = data["relevant_docs"].get(qid)
        if not isinstance(question, str) or not question.strip():
            raise ParseError(f"query {qid!r}: empty question", path=p)
        if not isinstance(ids, list) or not ids:
            raise ParseError(f"query {qid!r}: no relevant_docs", path=p)
        missing = [n for n in ids if n not in data["corpus"]]
        if missing:
            raise ParseError(f"query {qid!r}: relevant node {missing[0]!r} is not in the dataset's corpus", path=p)
        rows.append((str(qid), "single", one_line(question), "", [str(data["corpus"][n]) for n in ids]))
    return rows


class _Holder:
    """The passage holding most of an excerpt, found by bisection in each document's passages."""

    def __init__(self, passages: Passages) -> None:
        self.by_doc: dict[str, list[Passage]] = {}
        for p in passages.items:
            self.by_doc.setdefault(p.doc, []).append(p)
        self.starts = {d: [p.start for p in ps] for d, ps in self.by_doc.items()}

    def __call__(self, doc: str, start: int, end: int) -> int:
        ps, starts = self.by_doc[doc], self.starts[doc]
        lo = max(0, bisect.bisect_right(starts, start) - 1)
        hi = bisect.bisect_left(starts, end)
        best = max(ps[lo:max(hi, lo + 1)], key=lambda p: min(p.end, end) - max(p.start, start))
        return best.pid


@boundary
def import_rows(rows: Sequence[tuple[str, str, str, str, list[str]]], corpus: Any, *, source: str = "",
                tool: str = "import", fuzzy_floor: float = 90.0, passage_chars: int = 1200) -> TestSet:
    """A test set from ``(query id, kind, question, answer, reference texts)`` rows (see the module docstring)."""
    from ragrade.spans.locate import locate_chunks
    from ragrade.spans.read import read_corpus

    corp: Corpus = read_corpus(corpus)
    texts = [t for *_, ctx in rows for t in ctx]
    located = locate_chunks(corp, texts, ordered=False, floor=fuzzy_floor, ids=[str(i) for i in range(len(texts))])
    fuzzy = located.report.fuzzy_scores
    found = {int(c): (d, s, e) for c, d, s, e in zip(located.chunk_id.tolist(), located.doc.tolist(),
                                                      located.start.tolist(), located.end.tolist(), strict=True)}
    passages = Passages(corp, passage_chars, 1)
    holder = _Holder(passages)
    index = BM25.build([p.text for p in passages.items])
    items, rejects, k = [], [], 0
    for n, (qid, kind, question, answer, ctx) in enumerate(rows):
        excerpts, missing = [], None
        for t in ctx:
            if k not in found and missing is None:
                missing = t
            elif k in found:
                d, s, e = found[k]
                method = "exact" if corp[d][s:e] == t else "fuzzy" if k in fuzzy else "whitespace"
                excerpts.append(Excerpt(d, s, e, corp[d][s:e], holder(d, s, e), method, float(fuzzy.get(k, 100.0))))
            k += 1
        if missing is not None or not excerpts:
            why = (f"a reference text is not in the corpus: {' '.join(missing.split())[:80]!r}" if missing is not None
                   else "no reference text")
            rejects.append(Reject(n, kind, "import", why, question))
            continue
        gold = tuple(passages.items[i] for i in dict.fromkeys(x.passage for x in excerpts))
        draft = Draft(Candidate(n, kind, gold), question, answer, excerpts,
                      {"excerpts": len(excerpts), "location": min(x.score for x in excerpts),
                       "excerpt_quality": min(excerpt_quality(x.text) for x in excerpts)})
        leak(draft, index, Thresholds())
        items.append(Item(qid, kind, question, answer, tuple(excerpts), gold, "", n, draft.scores))
    record = {"record": "run", "tool": f"ragrade synthesize --import {tool}", "source": source,
              "corpus": corpus_info(corp, len(passages)),
              "parameters": {"fuzzy_floor": fuzzy_floor, "passage_chars": passage_chars},
              "references": {"questions": len(rows), "texts": len(texts), "located": len(found),
                             "not_located": len(texts) - len(found)}}
    provenance = {**record, "summary": summarize(items, rejects, complete=not rejects)}
    return TestSet(tuple(items), tuple(rejects), corp, provenance, {}, not rejects)


def import_ragas(path: str | os.PathLike[str], corpus: Any, **kwargs: Any) -> TestSet:
    """A Ragas testset file (CSV, JSONL, Parquet) as a test set over ``corpus`` (see the module docstring)."""
    return import_rows(read_ragas(path), corpus, source=os.fspath(path), tool="ragas", **kwargs)


def import_llamaindex(path: str | os.PathLike[str], corpus: Any, **kwargs: Any) -> TestSet:
    """A LlamaIndex ``EmbeddingQAFinetuneDataset`` JSON as a test set over ``corpus``."""
    return import_rows(read_llamaindex(path), corpus, source=os.fspath(path), tool="llamaindex", **kwargs)


IMPORTERS: Mapping[str, Any] = {"ragas": import_ragas, "llamaindex": import_llamaindex}


def import_test_set(kind: str, path: str | os.PathLike[str], corpus: Any, **kwargs: Any) -> TestSet:
    """``kind``: ``ragas`` or ``llamaindex``."""
    if kind not in IMPORTERS:
        raise InputError(f"unknown test set kind (known: {', '.join(IMPORTERS)})", value=kind)
    return IMPORTERS[kind](path, corpus, **kwargs)


__all__ = ["IMPORTERS", "RAGAS_KINDS", "import_llamaindex", "import_ragas", "import_rows", "import_test_set",
           "read_llamaindex", "read_ragas"]
