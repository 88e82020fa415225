"""Reading and writing span files, chunk maps and corpora (docs/spans.md, "Files").

Every file is read through the format registry (:mod:`ragrade.io.formats`: JSONL, CSV, TSV, Parquet, Arrow
IPC); what the columns mean is decided here:

* spans: ``query``, ``doc``, ``start``, ``end`` and optionally ``grade`` and ``text`` (other spellings below),
  or Chroma's ``questions_df.csv`` as it is: ``question``, ``references`` (a JSON list of ``{content,
  start_index, end_index}``), ``corpus_id``; its queries are numbered ``"0"``, ``"1"``, ... as Chroma numbers
  them, and each question's text is kept;
* chunk maps: ``chunk_id``, ``doc``, ``start``, ``end`` and optionally ``text``; without a ``doc`` column the
  document is the chunk id up to its first ``#`` (MS MARCO v2.1 segments: ``docid#n``, ``start_char``,
  ``end_char``);
* corpora: a folder of documents (every file under it but hidden ones, read as UTF-8 text; its path under
  the folder, without its extension, is the document id: Chroma's ``corpora/finance.md`` is ``finance``), or a JSONL/Parquet/TSV file of ``id`` and
  ``text`` (:func:`ragrade.io.texts.read_passages`), or a mapping ``{doc id: text}``.

Writers go through pyarrow (:mod:`ragrade.io.writers`), to a temporary name renamed on success.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import ragrade.spans.arguments as A
from ragrade.errors import InputError, ParseError
from ragrade.options import public
from ragrade.spans.model import ChunkMap, Corpus, SpanTruth

QUERY = ("query", "query_id", "qid", "question_id", "queryid", "q")
DOC = ("doc", "doc_id", "docid", "document", "document_id", "corpus_id", "file_path", "file", "path")
START = ("start", "start_index", "start_char", "begin", "span_start", "char_start")
END = ("end", "end_index", "end_char", "stop", "span_end", "char_end")
GRADE = ("grade", "relevance", "rel", "label")
TEXT = ("text", "content", "span_text", "answer", "segment", "contents")
QUESTION = ("question", "query_text", "question_text")
CHUNK = ("chunk_id", "chunk", "segment_id", "passage_id", "pid", "id", "_id", "docid")
CHUNK_DOC = ("doc", "doc_id", "document", "document_id", "corpus_id", "file_path", "parent_id", "source")


def _pick(names: Sequence[str], options: Sequence[str], what: str, source: str, required: bool = True,
          exclude: Sequence[str] = ()) -> str | None:
    if required and not names:
        raise ParseError("holds no rows (an empty file or table: nothing to read as spans or chunks)", path=source)
    lower = {n.lower(): n for n in names}
    for o in options:
        if o in lower and lower[o] not in exclude:
            return lower[o]
    if required:
        raise ParseError(f"cannot find the {what} column (looked for {', '.join(options)}; columns: "
                         f"{', '.join(names)})", path=source)
    return None


def _table(value: Any, format: str | None, what: str) -> tuple[Any, str]:
    """``(pyarrow Table with text columns as read, source name)`` of a path, a table, a DataFrame or rows."""
    import pyarrow as pa

    if isinstance(value, str | os.PathLike):
        from ragrade.io import formats
        from ragrade.io.sources import readable_path

        path = os.fspath(value)
        with readable_path(path) as p:
            return formats.records_format(p, format).records(p, strings=True), path
    if isinstance(value, pa.Table):
        return value, what
    if hasattr(value, "to_dict") and hasattr(value, "columns"):  # a pandas DataFrame
        return pa.Table.from_pandas(value, preserve_index=False), what
    if isinstance(value, Sequence) and all(isinstance(r, Mapping) for r in value):
        return pa.Table.from_pylist([dict(r) for r in value]), what
    raise InputError(f"{what}: expected a file path, a pyarrow Table, a DataFrame or a list of dicts",
                     value=type(value).__name__)


@public(source=None, format=A.FORMAT, corpus=A.SOME_CORPUS)
def read_spans(source: Any, format: str | None = None, *, corpus: Any = None) -> SpanTruth:
    """Gold spans from a file (JSONL/CSV/TSV/Parquet; Chroma's ``questions_df.csv`` as it is), a table, a
    DataFrame, a list of dicts or a :class:`SpanTruth`. With ``corpus`` (a folder, a file or a mapping),
    every span is checked against its document (:meth:`SpanTruth.check`)."""
    if isinstance(source, SpanTruth):
        truth = source
    else:
        table, name = _table(source, format, "span")
        names = table.column_names
        lower = [n.lower() for n in names]
        if "references" in lower and "question" in lower:
            truth = _chroma(table, name)
        else:
            truth = _span_columns(table, name)
    if corpus is not None:
        truth.check(read_corpus(corpus))
    return truth


def _column(table: Any, name: str | None) -> list[Any] | None:
    return None if name is None else table.column(name).to_pylist()


def _span_columns(table: Any, source: str) -> SpanTruth:
    names = table.column_names
    q = _pick(names, QUERY, "query", source)
    d = _pick(names, DOC, "document", source)
    s = _pick(names, START, "start offset", source)
    e = _pick(names, END, "end offset", source)
    g = _pick(names, GRADE, "grade", source, required=False)
    t = _pick(names, TEXT, "text", source, required=False, exclude=[x for x in (q, d) if x])
    cols = [_column(table, c) for c in (q, d, s, e, g, t)]
    asked = _questions(cols[0], _column(table, _pick(names, QUESTION, "question", source, required=False)))
    return SpanTruth.from_columns(*cols, questions=asked, source=source, rows=range(1, table.num_rows + 1))


def _questions(queries: list[Any] | None, texts: list[Any] | None) -> dict[str, str]:
    """Each query's question, from a question column where the spans have one."""
    if queries is None or texts is None:
        return {}
    return {str(q): str(t) for q, t in zip(queries, texts, strict=True) if t not in (None, "")}


def _chroma(table: Any, source: str) -> SpanTruth:
    """Chroma's questions_df.csv: one row per question, its spans a JSON list in ``references``."""
    names = table.column_names
    qcol = _pick(names, ("question",), "question", source)
    rcol = _pick(names, ("references",), "references", source)
    ccol = _pick(names, ("corpus_id", "doc", "document"), "corpus id", source)
    questions, refs, corpora = _column(table, qcol), _column(table, rcol), _column(table, ccol)
    assert questions is not None and refs is not None and corpora is not None
    cols: dict[str, list[Any]] = {"query": [], "doc": [], "start": [], "end": [], "text": [], "row": []}
    asked: dict[str, str] = {}
    for i, (question, raw, corpus_id) in enumerate(zip(questions, refs, corpora, strict=True)):
        qid = str(i)
        asked[qid] = "" if question is None else str(question)
        for ref in _references(raw, source, i):
            cols["query"].append(qid)
            cols["doc"].append(corpus_id)
            cols["start"].append(ref.get("start_index"))
            cols["end"].append(ref.get("end_index"))
            cols["text"].append(ref.get("content"))
            cols["row"].append(i + 1)
    return SpanTruth.from_columns(cols["query"], cols["doc"], cols["start"], cols["end"], None, cols["text"],
                                  questions=asked, source=source, rows=cols["row"])


def _references(raw: Any, source: str, i: int) -> list[dict[str, Any]]:
    if isinstance(raw, list):
        refs = raw
    else:
        try:
            refs = json.loads(raw)
        except (TypeError, ValueError) as exc:
            raise ParseError(f"row {i + 1}: the references are not a JSON list ({exc})", path=source,
                             text=str(raw)[:200]) from None
    if not isinstance(refs, list) or not refs or not all(isinstance(r, Mapping) for r in refs):
        raise ParseError(f"row {i + 1}: the references must be a non-empty JSON list of "
                         "{content, start_index, end_index}", path=source, text=str(raw)[:200])
    for r in refs:
        if "start_index" not in r or "end_index" not in r:
            raise ParseError(f"row {i + 1}: a reference lacks start_index or end_index", path=source,
                             text=json.dumps(r)[:200])
    return [dict(r) for r in refs]


@public(source=None, format=A.FORMAT, corpus=A.SOME_CORPUS, delimiter=A.DELIMITER)
def read_chunks(source: Any, format: str | None = None, *, corpus: Any = None, name: str | None = None,
                delimiter: str = "#") -> ChunkMap:
    """A chunk map from a file (JSONL/CSV/TSV/Parquet), a table, a DataFrame, a list of dicts or a
    :class:`ChunkMap`. Without a document column, a chunk's document is its id up to the first
    ``delimiter`` (MS MARCO v2.1 segments). With ``corpus``, every chunk is checked against its document."""
    if isinstance(source, ChunkMap):
        chunks = source
    else:
        table, where = _table(source, format, "chunk map")
        names = table.column_names
        c = _pick(names, CHUNK, "chunk id", where)
        d = _pick(names, CHUNK_DOC, "document", where, required=False, exclude=[c] if c else [])
        s = _pick(names, START, "start offset", where)
        e = _pick(names, END, "end offset", where)
        t = _pick(names, TEXT, "text", where, required=False, exclude=[x for x in (c, d) if x])
        ids = _column(table, c)
        assert ids is not None
        docs = _column(table, d) if d is not None else [_doc_of(x, delimiter, where, i) for i, x in enumerate(ids)]
        default = Path(where).stem if isinstance(source, str | os.PathLike) else ""
        chunks = ChunkMap.from_columns(ids, docs, _column(table, s), _column(table, e), _column(table, t),
                                       name=name or default, source=where, rows=range(1, table.num_rows + 1))
    if corpus is not None:
        chunks.check(read_corpus(corpus))
    return chunks


def _doc_of(chunk_id: Any, delimiter: str, source: str, i: int) -> str:
    text = "" if chunk_id is None else str(chunk_id)
    if delimiter not in text:
        raise ParseError(f"row {i + 1}: the chunk map has no document column and chunk id {text!r} holds no "
                         f"{delimiter!r} to take the document id from", path=source)
    return text.split(delimiter, 1)[0]


@public(source=None, format=A.FORMAT)
def read_corpus(source: Any, format: str | None = None) -> Corpus:
    """The documents: a folder of text files, a JSONL/Parquet/TSV corpus file, a mapping ``{doc id: text}``
    or a :class:`Corpus` (see the module docstring). Files are read as UTF-8 text with Python's universal
    newlines (``\\r\\n`` is read as ``\\n``), as Chroma's chunking_evaluation and LegalBench-RAG read theirs."""
    if isinstance(source, Corpus):
        return source
    if isinstance(source, Mapping):
        return Corpus({str(k): v for k, v in source.items()}, source="documents")
    if not isinstance(source, str | os.PathLike):
        raise InputError("corpus: expected a folder, a file or a mapping {doc id: text}",
                         value=type(source).__name__)
    path = Path(source)
    if path.is_dir():
        return _folder(path)
    from ragrade.io.texts import read_passages

    passages = read_passages(os.fspath(path), None, format=format)
    texts = {pid: text for pid, (_title, text) in passages.texts.items()}
    texts.update({pid: "" for pid in passages.empty})
    return Corpus(texts, source=os.fspath(path))


def _folder(path: Path) -> Corpus:
    """Every file under the folder (hidden ones left out) is a document, read as UTF-8 text."""
    texts: dict[str, str] = {}
    where: dict[str, Path] = {}
    for f in sorted(p for p in path.rglob("*") if p.is_file() and not any(x.startswith(".") for x in
                                                                            p.relative_to(path).parts)):
        doc = f.relative_to(path).with_suffix("").as_posix()
        if doc in texts:
            raise InputError(f"{path}: {where[doc].name} and {f.name} would both be document {doc!r}")
        try:
            texts[doc] = f.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(f"a document of the corpus folder is not UTF-8 text ({exc.reason} at byte {exc.start})",
                             path=os.fspath(f)) from None
        where[doc] = f
    if not texts:
        raise InputError(f"{path}: the corpus folder holds no files")
    return Corpus(texts, source=os.fspath(path))


def _write(table: Any, path: str | os.PathLike[str], format: str | None) -> None:
    from ragrade.io import formats

    fmt = formats.out_format(path, format)
    target = os.fspath(path)
    if fmt.name == "tsv" and "text" in table.column_names and any(
            t is not None and ("\t" in t or "\n" in t or "\r" in t) for t in table.column("text").to_pylist()):
        raise InputError(f"{target}: a text holds a tab or a line break, which TSV cannot hold; write JSONL, CSV "
                         "or Parquet")
    tmp = f"{target}.tmp-{os.getpid()}"
    try:
        fmt.write_records(table, tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


@public(truth=None, format=A.FORMAT)
def write_spans(truth: SpanTruth, path: str | os.PathLike[str], format: str | None = None) -> None:
    """Write gold spans (``query, doc, start, end, grade[, text][, question]``), format from the file name."""
    import pyarrow as pa

    if not isinstance(truth, SpanTruth):
        raise InputError("write_spans writes a SpanTruth (ragrade.read_spans makes one)", value=type(truth).__name__)

    cols: dict[str, Any] = {"query": pa.array(truth.query.tolist(), pa.string()),
                            "doc": pa.array(truth.doc.tolist(), pa.string()),
                            "start": pa.array(truth.start), "end": pa.array(truth.end), "grade": pa.array(truth.grade)}
    if truth.text is not None:
        cols["text"] = pa.array(truth.text.tolist(), pa.string())
    if truth.questions:
        cols["question"] = pa.array([truth.questions.get(q) for q in truth.query.tolist()], pa.string())
    _write(pa.table(cols), path, format)


@public(chunks=None, format=A.FORMAT)
def write_chunks(chunks: ChunkMap, path: str | os.PathLike[str], format: str | None = None) -> None:
    """Write a chunk map (``chunk_id, doc, start, end[, text]``), format from the file name."""
    import pyarrow as pa

    if not isinstance(chunks, ChunkMap):
        raise InputError("write_chunks writes a ChunkMap (ragrade.read_chunks makes one)", value=type(chunks).__name__)

    cols: dict[str, Any] = {"chunk_id": pa.array(chunks.chunk_id.tolist(), pa.string()),
                            "doc": pa.array(chunks.doc.tolist(), pa.string()),
                            "start": pa.array(chunks.start), "end": pa.array(chunks.end)}
    if chunks.text is not None:
        cols["text"] = pa.array(chunks.text.tolist(), pa.string())
    _write(pa.table(cols), path, format)


__all__ = ["read_chunks", "read_corpus", "read_spans", "write_chunks", "write_spans"]
