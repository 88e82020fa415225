"""Readers and writers for ground truth (:class:`~ragrade.data.Qrels`) and runs (:class:`~ragrade.data.Run`).

Formats are the objects of the registry :mod:`ragrade.io.formats` (one module each; :data:`FORMATS` lists
their names): ``trec`` (``.trec .txt .qrels .run``; qrels ``qid iter docno rel`` or ``qid docno``, runs
``qid Q0 docno rank score tag``, ``qid docno score``, ``qid docno rank`` or ``qid docno``), ``msmarco`` and
``qid-doc-score`` (named only), ``tsv`` and ``csv`` (headered tables, or TREC content, sniffed), ``jsonl``
(``.jsonl .ndjson .json``: rows, or one query per line with a list), ``parquet`` and ``arrow`` (Feather).
Detected from the file extension (``.gz`` allowed on any text format), else from the content, or given
with ``format=``. Pipes are read as streams and devices refused (:mod:`ragrade.io.sources`).

A ``.tsv``/``.csv`` file whose first non-blank line looks like TREC (4 fields ending in a number, or 6
fields whose 4th and 5th are numbers, and no header word such as ``query``/``doc``/``score``) is read as
TREC. gzip is recognised by its content (magic bytes), whatever the file name. See ``docs/formats.md``.

>>> import tempfile, os
>>> from ragrade import Run, read_run, write_run
>>> path = os.path.join(tempfile.mkdtemp(), "bm25.trec")
>>> write_run(Run.from_dict({"q1": {"d1": 2.0, "d2": 1.5}}, name="bm25"), path)
>>> print(open(path).read(), end="")
q1 Q0 d1 1 2 bm25
q1 Q0 d2 2 1.5 bm25
>>> read_run(path).to_dict()
{'q1': {'d1': 2.0, 'd2': 1.5}}
"""

from __future__ import annotations

import os
from typing import Any

from ragrade.data import Qrels, Run
from ragrade.errors import user_code
from ragrade.io.formats import FORMATS, TREC_FAMILY, detect_format, normalise_format
from ragrade.io.sources import check_input, readable_path
from ragrade.io.textfiles import MAX_LINE_BYTES, PathLike, Progress, default_run_name, open_binary
from ragrade.io.textfiles import read_text_lines as text_lines
from ragrade.io.trec import CHUNK_SIZE
from ragrade.options import QRELS_OBJECT, RUN_OBJECT, public

__all__ = [
    "FORMATS",
    "MAX_LINE_BYTES",
    "TREC_FAMILY",
    "check_input",
    "default_run_name",
    "detect_format",
    "guess_kind",
    "normalise_format",
    "open_binary",
    "read_qrels",
    "read_run",
    "readable_path",
    "text_lines",
    "write_qrels",
    "write_run",
]


@public
def read_run(path: PathLike, format: str | None = None, name: str | None = None, *,
             progress: Progress | None = None, chunk_size: int = CHUNK_SIZE, **opts: Any) -> Run:
    """Read a run (retrieval results) from ``path``.

    ``format`` overrides detection (``trec``, ``msmarco``, ``qid-doc-score``, ``tsv``, ``csv``, ``jsonl``,
    ``parquet``: :data:`FORMATS`). ``name`` defaults to the TREC tag of the first line, or the file name. A
    ``text`` column (rows layout) or a ``texts`` list column (list layout) is kept as the run's retrieved
    texts. ``progress(bytes_done, bytes_total)`` is called as the file is read. Table formats take
    ``query_col``, ``doc_col``, ``score_col``, ``rank_col`` and ``list_col`` (JSONL/Parquet list layout) to
    name columns explicitly; CSV/TSV take ``header`` (True, False or None to sniff).

    Errors in the file raise :class:`~ragrade.errors.ParseError` naming the file, the line and the text.
    A pipe (``/dev/stdin``, ``<(zcat run.gz)``, a FIFO) is read as a stream (docs/formats.md, "Pipes,
    devices and limits").
    """
    from ragrade.io.formats import detect

    progress = None if progress is None else user_code(progress)  # the caller's callback: its errors are its own
    with readable_path(path) as p:
        return detect(p, format).read_run(p, name=name, progress=progress, chunk_size=chunk_size, opts=opts)


@public
def read_qrels(path: PathLike, format: str | None = None, *, progress: Progress | None = None,
               chunk_size: int = CHUNK_SIZE, **opts: Any) -> Qrels:
    """Read ground truth from ``path``.

    ``format`` overrides detection. Table formats take ``query_col``, ``doc_col``, ``grade_col``,
    ``list_col`` and ``unit_col`` (rows sharing a unit form one group). Without a grade column every listed
    document has grade 1. A document judged twice for one query is an error (naming both the file and the
    line of the second judgment). A table with an ``origin`` column (merged human + LLM qrels, see
    ``docs/assessment.md``) gives one judgment per pair: ``prefer="human"`` (default), ``"llm"`` or ``"error"``.
    A pipe is read as a stream, as by :func:`read_run`.
    """
    from ragrade.io.formats import detect

    prefer = opts.pop("prefer", None)
    progress = None if progress is None else user_code(progress)  # the caller's callback: its errors are its own
    with readable_path(path) as p:
        return detect(p, format).read_qrels(p, progress=progress, chunk_size=chunk_size, prefer=prefer, opts=opts)


@public(run=RUN_OBJECT)
def write_run(run: Run, path: PathLike, format: str | None = None, *, tag: str | None = None,
              ties: str = "docid_desc") -> None:
    """Write ``run`` to ``path`` in rank order (format from the extension unless given; ``.gz`` compresses).

    TREC lines are ``qid Q0 docno rank score tag`` (``tag`` defaults to the run's name); ``msmarco`` writes
    ``qid<TAB>docno<TAB>rank`` and ``qid-doc-score`` writes ``qid<TAB>docno<TAB>score``; tables have columns
    ``query, doc, rank, score``. Ranked lists without scores are written without a score column (TREC:
    descending pseudo-scores). A ``.tsv`` path is written as a headered table. The retrieved texts of a
    run that carries them are written as a ``text`` column in TSV, CSV, JSONL and Parquet; the TREC
    layouts have no place for them (a :class:`~ragrade.errors.RagradeWarning` says they were left out)."""
    from ragrade.io.formats import out_format

    fmt = out_format(path, format)
    if run.has_texts and fmt.layout is not None:
        import warnings

        from ragrade.errors import RagradeWarning

        warnings.warn(f"the {fmt.name} format has no place for the retrieved texts: they are not written to "
                      f"{os.fspath(path)} (use JSONL or Parquet to keep them)", RagradeWarning, stacklevel=3)
    from ragrade.io.writers import output_path

    with output_path(path) as tmp:  # written whole under a temporary name, then renamed over path
        fmt.write_run(run, tmp, tag=tag, ties=ties)


@public(qrels=QRELS_OBJECT)
def write_qrels(qrels: Qrels, path: PathLike, format: str | None = None) -> None:
    """Write ``qrels`` to ``path`` (format from the extension unless given; ``.gz`` compresses).

    TREC lines are ``qid 0 docno grade``; tables have columns ``query, doc, grade`` (plus ``unit`` for
    grouped qrels); JSONL writes grouped qrels as ``{"query": .., "groups": [[..], ..]}`` lines."""
    from ragrade.io.formats import out_format
    from ragrade.io.writers import output_path

    fmt = out_format(path, format)
    with output_path(path) as tmp:  # written whole under a temporary name, then renamed over path
        fmt.write_qrels(qrels, tmp)


def guess_kind(path: PathLike, format: str | None = None) -> str | None:
    """``"run"``, ``"qrels"`` or None (undecided) from a file's first line / columns."""
    from ragrade.io.formats import detect
    from ragrade.io.sources import is_pipe

    p = check_input(path)
    if is_pipe(p):
        return None  # looking would consume what the reader needs
    return detect(p, format).guess_kind(p)
