"""Readers and writers for ground truth (:class:`~ragrade.data.Qrels`) and runs (:class:`~ragrade.data.Run`).

Formats (detected from the file extension, ``.gz`` allowed on any text format, or given with ``format=``):

=================  ==========================  ====================================================
format             extensions                  content
=================  ==========================  ====================================================
``trec``           ``.trec .txt .qrels .run``  qrels ``qid iter docno rel`` or ``qid docno``; run
                                               ``qid Q0 docno rank score tag``, ``qid docno score``,
                                               ``qid docno rank`` or ``qid docno`` (whitespace-
                                               separated; the first line decides; ``#`` comments)
``msmarco``        (explicit only)             run ``qid docno rank`` (MS MARCO); qrels as ``trec``
``qid-doc-score``  (explicit only)             run ``qid docno score``
``tsv``            ``.tsv``                    headered table (or TREC content, sniffed)
``csv``            ``.csv``                    headered table (or TREC content, sniffed)
``jsonl``          ``.jsonl .ndjson``          one object per row, or one query per line with a
                                               list (``retrieved`` / ``gold`` / ``groups``)
``parquet``        ``.parquet .pq``            row layout; list columns also accepted
=================  ==========================  ====================================================

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
from ragrade.errors import InputError, ParseError, boundary
from ragrade.io._common import (
    FORMATS,
    TREC_FAMILY,
    PathLike,
    Progress,
    detect_format,
    first_line,
    normalise_format,
    sniff_short_trec,
    sniff_trec,
)
from ragrade.io.trec import CHUNK_SIZE

__all__ = [
    "FORMATS",
    "detect_format",
    "guess_kind",
    "read_qrels",
    "read_run",
    "write_qrels",
    "write_run",
]


def _check_exists(path: PathLike) -> str:
    p = os.fspath(path)
    if not os.path.exists(p):
        raise ParseError("no such file", path=p)
    if os.path.isdir(p):
        raise ParseError("is a directory, not a file", path=p)
    return p


@boundary
def read_run(path: PathLike, format: str | None = None, name: str | None = None, *,
             progress: Progress | None = None, chunk_size: int = CHUNK_SIZE, **opts: Any) -> Run:
    """Read a run (retrieval results) from ``path``.

    ``format`` overrides detection (``trec``, ``msmarco``, ``qid-doc-score``, ``tsv``, ``csv``, ``jsonl``,
    ``parquet``). ``name`` defaults to the TREC tag of the first line, or the file name. A ``text`` column
    (rows layout) or a ``texts`` list column (list layout) is kept as the run's retrieved texts. ``progress(bytes_done, bytes_total)`` is called as
    the file is read. Table formats take ``query_col``, ``doc_col``, ``score_col``, ``rank_col`` and
    ``list_col`` (JSONL/Parquet list layout) to name columns explicitly; CSV/TSV take ``header`` (True,
    False or None to sniff).

    Errors in the file raise :class:`~ragrade.errors.ParseError` naming the file, the line and the text.
    """
    p = _check_exists(path)
    fmt = detect_format(p, format)
    if fmt in TREC_FAMILY:
        _no_opts(opts, fmt)
        from ragrade.io.trec import read_trec_run

        return read_trec_run(p, name=name, format=fmt, chunk_size=chunk_size, progress=progress)
    from ragrade.io import tables

    table, locate = _load(p, fmt, "run", progress, opts)
    return tables.table_to_run(table, p, locate, name=name, **_pick(opts, "query_col", "doc_col", "score_col",
                                                                    "rank_col", "list_col", "text_col"))


@boundary
def read_qrels(path: PathLike, format: str | None = None, *, progress: Progress | None = None,
               chunk_size: int = CHUNK_SIZE, **opts: Any) -> Qrels:
    """Read ground truth from ``path``.

    ``format`` overrides detection. Table formats take ``query_col``, ``doc_col``, ``grade_col``,
    ``list_col`` and ``unit_col`` (rows sharing a unit form one group). Without a grade column every listed
    document has grade 1. A document judged twice for one query is an error (naming both the file and the
    line of the second judgment). A table with an ``origin`` column (merged human + LLM qrels, see
    ``docs/assessment.md``) gives one judgment per pair: ``prefer="human"`` (default), ``"llm"`` or ``"error"``.
    """
    p = _check_exists(path)
    fmt = detect_format(p, format)
    prefer = opts.pop("prefer", None)
    if fmt == "qid-doc-score":
        raise InputError("format 'qid-doc-score' is a run layout; qrels files are read with format 'trec' "
                         "(qid iter doc grade, or qid doc) or as a table (tsv, csv, jsonl, parquet)")
    if fmt in TREC_FAMILY:
        _no_opts(opts, fmt)
        from ragrade.io.trec import read_trec_qrels

        return read_trec_qrels(p, chunk_size=chunk_size, progress=progress)
    from ragrade.io import tables
    from ragrade.io.origins import resolve_origins

    table, locate = _load(p, fmt, "qrels", progress, opts)
    table, locate = resolve_origins(table, locate, p, prefer, opts.get("query_col"), opts.get("doc_col"))
    return tables.table_to_qrels(table, p, locate, **_pick(opts, "query_col", "doc_col", "grade_col", "list_col",
                                                           "unit_col"))


_KNOWN = {"query_col", "doc_col", "score_col", "grade_col", "rank_col", "list_col", "unit_col", "header", "text_col"}


def _no_opts(opts: dict[str, Any], fmt: str) -> None:
    given = [k for k, v in opts.items() if v is not None]
    if given:
        raise InputError(f"option {given[0]!r} does not apply to the {fmt} format")


def _pick(opts: dict[str, Any], *names: str) -> dict[str, Any]:
    unknown = [k for k in opts if k not in _KNOWN]
    if unknown:
        raise InputError(f"unknown reader option {unknown[0]!r}; options: {', '.join(sorted(_KNOWN))}")
    return {k: v for k, v in opts.items() if k in names}


def _load(p: str, fmt: str, kind: str, progress: Progress | None, opts: dict[str, Any]):
    from ragrade.io import tables

    if fmt in ("tsv", "csv"):
        return tables.load_delimited(p, tables.delimiter_for(fmt), header=opts.pop("header", None), kind=kind,
                                     progress=progress)
    opts.pop("header", None)
    if fmt == "jsonl":
        return tables.load_jsonl(p, progress)
    return tables.load_parquet(p, progress)


def _out_format(path: PathLike, format: str | None) -> str:
    if format:
        fmt = normalise_format(format)
        if fmt is None:
            raise InputError("give a concrete output format (trec, tsv, csv, jsonl or parquet)")
        return fmt
    from ragrade.io._common import _EXTENSIONS, _suffixes

    ext, _ = _suffixes(path)
    fmt = _EXTENSIONS.get(ext)
    if fmt is None:
        raise InputError(f"cannot tell the output format from {os.fspath(path)!r}; pass format= "
                         f"({', '.join(FORMATS)})")
    return fmt


@boundary
def write_run(run: Run, path: PathLike, format: str | None = None, *, tag: str | None = None,
              ties: str = "docid_desc") -> None:
    """Write ``run`` to ``path`` in rank order (format from the extension unless given; ``.gz`` compresses).

    TREC lines are ``qid Q0 docno rank score tag`` (``tag`` defaults to the run's name); ``msmarco`` writes
    ``qid<TAB>docno<TAB>rank`` and ``qid-doc-score`` writes ``qid<TAB>docno<TAB>score``; tables have columns
    ``query, doc, rank, score``. Ranked lists without scores are written without a score column (TREC:
    descending pseudo-scores). A ``.tsv`` path is written as a headered table. The retrieved texts of a
    run that carries them are written as a ``text`` column in TSV, CSV, JSONL and Parquet; the TREC
    layouts have no place for them (a :class:`~ragrade.errors.RagradeWarning` says they were left out)."""
    from ragrade.io import writers

    fmt = _out_format(path, format)
    if run.has_texts and fmt in ("trec", "msmarco", "qid-doc-score"):
        import warnings

        from ragrade.errors import RagradeWarning

        warnings.warn(f"the {fmt} format has no place for the retrieved texts: they are not written to "
                      f"{os.fspath(path)} (use JSONL or Parquet to keep them)", RagradeWarning, stacklevel=3)
    if fmt == "trec":
        from ragrade.io.trec import write_trec_run

        write_trec_run(run, path, tag=tag, ties=ties)
    elif fmt in ("msmarco", "qid-doc-score"):
        writers.write_three_columns(writers.run_table(run, ties), path, "rank" if fmt == "msmarco" else "score")
    elif fmt in ("tsv", "csv"):
        writers.write_delimited(writers.run_table(run, ties), path, "\t" if fmt == "tsv" else ",")
    elif fmt == "jsonl":
        writers.write_jsonl_rows(writers.run_table(run, ties), path)
    else:
        writers.write_parquet(writers.run_table(run, ties), path)


@boundary
def write_qrels(qrels: Qrels, path: PathLike, format: str | None = None) -> None:
    """Write ``qrels`` to ``path`` (format from the extension unless given; ``.gz`` compresses).

    TREC lines are ``qid 0 docno grade``; tables have columns ``query, doc, grade`` (plus ``unit`` for
    grouped qrels); JSONL writes grouped qrels as ``{"query": .., "groups": [[..], ..]}`` lines."""
    from ragrade.io import writers

    fmt = _out_format(path, format)
    if fmt in ("msmarco", "qid-doc-score"):
        raise InputError(f"format {fmt!r} is a run layout; write qrels as trec, tsv, csv, jsonl or parquet")
    if fmt == "trec":
        from ragrade.io.trec import write_trec_qrels

        write_trec_qrels(qrels, path)
    elif fmt in ("tsv", "csv"):
        writers.write_delimited(writers.qrels_table(qrels), path, "\t" if fmt == "tsv" else ",")
    elif fmt == "jsonl":
        if qrels.has_groups:
            writers.write_jsonl_groups(qrels, path)
        else:
            writers.write_jsonl_rows(writers.qrels_table(qrels), path)
    else:
        writers.write_parquet(writers.qrels_table(qrels), path)


def guess_kind(path: PathLike, format: str | None = None) -> str | None:
    """``"run"``, ``"qrels"`` or None (undecided) from a file's first line / columns."""
    p = _check_exists(path)
    fmt = detect_format(p, format)
    if fmt in ("msmarco", "qid-doc-score"):
        return "run"
    if fmt == "trec":
        line = first_line(p, skip_comments=True)
        if not line:
            return None
        return sniff_trec(line) or sniff_short_trec(line) or ("run" if len(line.split()) >= 6 else None)
    from ragrade.io._common import (
        GOLD_LIST_NAMES,
        GRADE_NAMES,
        GROUP_NAMES,
        RANK_NAMES,
        RUN_LIST_NAMES,
        SCORE_NAMES,
    )

    if fmt == "parquet":
        import pyarrow.parquet as pq

        names = [n.lower() for n in pq.read_schema(p).names]
    elif fmt == "jsonl":
        import json

        try:
            names = [n.lower() for n in json.loads(first_line(p) or "{}")]
        except (ValueError, TypeError):
            return None
    else:
        line = first_line(p) or ""
        names = [f.strip().strip('"').lower() for f in line.split("\t" if fmt == "tsv" else ",")]
    if any(n in names for n in (*GROUP_NAMES, *GOLD_LIST_NAMES)):
        return "qrels"
    if any(n in names for n in (*RUN_LIST_NAMES, *RANK_NAMES)):
        return "run"
    if any(n in names for n in GRADE_NAMES if n != "score"):
        return "qrels"
    if any(n in names for n in SCORE_NAMES):
        return "run"
    return None
