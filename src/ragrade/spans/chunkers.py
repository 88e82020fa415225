"""Chunkers: what turns documents into a chunk map (docs/spans.md, "Chunkers").

* :func:`fixed` — windows of ``size`` characters, each ``size - overlap`` after the previous one.
* :func:`recursive` — pieces cut at the first separator of a list that occurs (paragraphs, lines,
  sentences, words, characters), each piece cut again with the next separators while it is longer than
  ``size``; consecutive pieces then joined while they fit in ``size``, a new chunk starting with the last
  pieces of the previous one up to ``overlap`` characters; whitespace at a chunk's ends left out.
* anything else that chunks text: a LangChain text splitter (``split_text``), a LlamaIndex node parser
  (``get_nodes_from_documents``; the nodes' own ``start_char_idx``/``end_char_idx`` are used where set)
  or any callable ``text -> list[str]``: the texts are located in their document
  (:func:`ragrade.spans.locate_chunks`, in order).

Our own chunkers give offsets directly (nothing to locate). :func:`chunk_corpus` applies a chunker to every
document of a corpus and gives the :class:`~ragrade.spans.model.ChunkMap` (ids ``doc#n``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ragrade.spans.arguments as A
from ragrade.errors import InputError
from ragrade.options import public
from ragrade.spans.model import ChunkMap

Spans = list[tuple[int, int]]

DEFAULT_SEPARATORS = ("\n\n", "\n", ". ", " ", "")


@dataclass(frozen=True)
class Chunker:
    """A chunker: ``name`` and ``spans(text) -> [(start, end), ...]`` (our own chunkers), or ``texts(text)
    -> [str, ...]`` (foreign ones, located afterwards)."""

    name: str
    spans: Callable[[str], Spans] | None = None
    texts: Callable[[str], list[str]] | None = None

    def __str__(self) -> str:
        return self.name


def fixed(size: int, overlap: int = 0) -> Chunker:
    """Windows of ``size`` characters starting every ``size - overlap`` characters (the last one may be
    shorter)."""
    _check(size, overlap)

    def spans(text: str) -> Spans:
        n, step = len(text), size - overlap
        out = []
        for s in range(0, n, step):
            out.append((s, min(n, s + size)))
            if s + size >= n:
                break
        return out

    return Chunker(f"fixed-{size}" + (f"-{overlap}" if overlap else ""), spans=spans)


def recursive(size: int, overlap: int = 0, separators: Sequence[str] = DEFAULT_SEPARATORS) -> Chunker:
    """The recursive splitter (see the module docstring)."""
    _check(size, overlap)
    seps = tuple(separators)
    if not seps or not all(isinstance(s, str) for s in seps):
        raise InputError("separators must be a non-empty list of strings", value=separators)

    def spans(text: str) -> Spans:
        return _merge(text, _pieces(text, 0, len(text), seps, size), size, overlap)

    return Chunker(f"recursive-{size}" + (f"-{overlap}" if overlap else ""), spans=spans)


def _check(size: int, overlap: int) -> None:
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise InputError("size must be a positive integer (characters)", value=size)
    if isinstance(overlap, bool) or not isinstance(overlap, int) or not 0 <= overlap < size:
        raise InputError("overlap must be an integer from 0 to size - 1", value=overlap)


def _pieces(text: str, lo: int, hi: int, seps: tuple[str, ...], size: int) -> Spans:
    """Contiguous pieces of ``text[lo:hi]``, each at most ``size`` long, cut at the first separator found."""
    if hi - lo <= size:
        return [(lo, hi)]
    for k, sep in enumerate(seps):
        if sep == "":
            return [(s, min(hi, s + size)) for s in range(lo, hi, size)]
        at = text.find(sep, lo, hi)
        if at < 0:
            continue
        out: Spans = []
        start = lo
        while at >= 0:
            end = at + len(sep)  # the separator stays with the piece before it
            out += _pieces(text, start, end, seps[k + 1:], size) if end - start > size else [(start, end)]
            start = end
            at = text.find(sep, start, hi)
        if start < hi:
            out += _pieces(text, start, hi, seps[k + 1:], size) if hi - start > size else [(start, hi)]
        return out
    return [(s, min(hi, s + size)) for s in range(lo, hi, size)]


def _merge(text: str, pieces: Spans, size: int, overlap: int) -> Spans:
    """Consecutive pieces joined while they fit; each new chunk repeats the previous chunk's last pieces
    up to ``overlap`` characters; whitespace at a chunk's ends is left out."""
    chunks: Spans = []
    current: list[tuple[int, int]] = []
    for piece in pieces:
        if current and piece[1] - current[0][0] > size:
            chunks.append((current[0][0], current[-1][1]))
            carried: list[tuple[int, int]] = []
            for p in reversed(current):  # the last pieces, up to overlap, that leave room for this piece
                if current[-1][1] - p[0] > overlap or piece[1] - p[0] > size:
                    break
                carried.insert(0, p)
            current = carried
        current.append(piece)
    if current:
        chunks.append((current[0][0], current[-1][1]))
    out: Spans = []
    for s, e in chunks:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s and (not out or (s, e) != out[-1]):
            out.append((s, e))
    return out


def as_chunker(obj: Any, name: str | None = None) -> Chunker:
    """A :class:`Chunker` from ours, a LangChain text splitter, a LlamaIndex node parser or a callable
    ``text -> list[str]``."""
    if isinstance(obj, Chunker):
        return obj if name is None else Chunker(name, obj.spans, obj.texts)
    label = name or _name_of(obj)
    if hasattr(obj, "split_text") and callable(obj.split_text):
        return Chunker(label, texts=lambda text: obj.split_text(text))
    if hasattr(obj, "get_nodes_from_documents"):
        return _llama(obj, label)
    if callable(obj):
        return Chunker(label, texts=lambda text: obj(text))
    raise InputError("a chunker is ragrade's (fixed, recursive), a LangChain text splitter, a LlamaIndex node "
                     "parser or a callable text -> list of texts", value=type(obj).__name__)


def _name_of(obj: Any) -> str:
    size = getattr(obj, "chunk_size", None)
    base = getattr(obj, "__name__", None) or type(obj).__name__
    return f"{base}-{size}" if isinstance(size, int) else str(base)


def _llama(parser: Any, label: str) -> Chunker:
    def spans_or_texts(text: str) -> list[Any]:
        from llama_index.core import Document

        nodes = parser.get_nodes_from_documents([Document(text=text)])
        out: list[Any] = []
        for node in nodes:
            s, e = getattr(node, "start_char_idx", None), getattr(node, "end_char_idx", None)
            body = node.get_content() if hasattr(node, "get_content") else str(node.text)
            ok = isinstance(s, int) and isinstance(e, int) and text[s:e] == body
            out.append((s, e) if ok else body)
        return out

    return Chunker(label, texts=spans_or_texts)


@public(corpus=A.CORPUS, chunker=None, floor=A.FLOOR)
def chunk_corpus(corpus: Any, chunker: Any, *, name: str | None = None, floor: float = 90.0) -> ChunkMap:
    """Chunk every document of ``corpus`` (:func:`ragrade.spans.read_corpus`) with ``chunker``
    (:func:`as_chunker`): the chunk map, ids ``doc#n``. Texts of a foreign chunker are located in their
    document in order; texts not found are left out and listed in the map's ``report``."""
    from ragrade.spans.locate import LocationReport, locate_chunks
    from ragrade.spans.read import read_corpus

    corp = read_corpus(corpus)
    ch = as_chunker(chunker, name)
    ids: list[str] = []
    docs: list[str] = []
    spans: list[tuple[int, int]] = []
    texts: list[str] = []
    text_docs: list[str] = []
    text_ids: list[str] = []
    for doc, text in corp.items():
        produced = ch.spans(text) if ch.spans is not None else _produced(ch, text, doc)
        for n, item in enumerate(produced):
            cid = f"{doc}#{n}"
            if isinstance(item, tuple):
                ids.append(cid)
                docs.append(doc)
                spans.append(item)
            else:
                texts.append(item)
                text_docs.append(doc)
                text_ids.append(cid)
    report = LocationReport()
    native = len(spans)
    if texts:
        located = locate_chunks(corp, texts, text_docs, text_ids, ordered=True, floor=floor)
        report = located.report
        ids += located.chunk_id.tolist()
        docs += located.doc.tolist()
        spans += list(zip(located.start.tolist(), located.end.tolist(), strict=True))
    if native:
        report.methods["by the chunker's offsets"] += native
    return ChunkMap.from_columns(ids, docs, [s for s, _ in spans], [e for _, e in spans], name=ch.name,
                                 source=corp.source, report=report)


def _produced(ch: Chunker, text: str, doc: str) -> list[Any]:
    assert ch.texts is not None
    out = ch.texts(text)
    if not isinstance(out, Sequence) or isinstance(out, str | bytes):
        raise InputError(f"chunker {ch.name!r} must return a list of texts for document {doc!r}",
                         value=type(out).__name__)
    bad = next((x for x in out if not isinstance(x, str | tuple)), None)
    if bad is not None:
        raise InputError(f"chunker {ch.name!r} returned something that is not a text for document {doc!r}",
                         value=type(bad).__name__)
    return [x for x in out if not (isinstance(x, str) and not x.strip())]


def chunk_texts(corpus: Mapping[str, str], chunks: ChunkMap) -> list[str]:
    """The text of every chunk of a map, from the corpus."""
    return [corpus[d][s:e] for d, s, e in zip(chunks.doc.tolist(), chunks.start.tolist(), chunks.end.tolist(),
                                               strict=True)]


__all__ = ["DEFAULT_SEPARATORS", "Chunker", "as_chunker", "chunk_corpus", "chunk_texts", "fixed", "recursive"]
