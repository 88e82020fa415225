"""Test sets from a corpus: questions anchored to character spans, checked, valid under any chunking
(docs/synthesize.md; issue 36).

* :func:`synthesize` / :func:`asynthesize` — passages sampled reproducibly, questions of three kinds asked
  through the one LLM core (:mod:`ragrade.llm`), their excerpts located to character offsets by the spans
  package's locator, the checks (excerpt quality, duplicates, leakage, answerability) recorded per item;
* :class:`TestSet` — the kept items (:class:`Item`), the rejects (:class:`Reject`) and the provenance;
  ``.spans`` is span ground truth every command evaluates under any chunking; ``.write(dir)`` writes
  ``spans.jsonl``, ``topics.tsv``, ``provenance.jsonl`` and ``rejects.jsonl``;
* :func:`import_ragas` / :func:`import_llamaindex` — a Ragas testset or a LlamaIndex
  ``EmbeddingQAFinetuneDataset`` as span truth, by locating their reference texts in the corpus;
* :mod:`ragrade.synthesis.prompts` (the task set), :mod:`~ragrade.synthesis.sample`,
  :mod:`~ragrade.synthesis.checks`, :mod:`~ragrade.synthesis.lexical` (word tokens, BM25, leakage),
  :mod:`~ragrade.synthesis.stopwords`.

This package sits at layer 7 (with the LLM core): it uses the spans package (5) and the LLM core (7).
The public function is ``ragrade.synthesize``; this package is ``synthesis`` so that no public name is both
a function and a subpackage.
"""

from __future__ import annotations

from ragrade.synthesis.api import asynthesize, synthesize
from ragrade.synthesis.imports import import_llamaindex, import_ragas
from ragrade.synthesis.model import Excerpt, Item, Reject, TestSet

__all__ = ["Excerpt", "Item", "Reject", "TestSet", "asynthesize", "import_llamaindex", "import_ragas", "synthesize"]
