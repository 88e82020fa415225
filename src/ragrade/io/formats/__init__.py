"""The format registry: every file format ragrade reads or writes, one :class:`~ragrade.io.formats.base.Format`
object each, one module each, listed once in :data:`REGISTRY` below.

Everything that needs a format asks here: ``read_run`` / ``read_qrels`` and the writers, the
out-of-core reader (:mod:`ragrade.io.stream`: formats with ``out_of_core``), Spark (``spark_read``), every
reader of records — topics and corpora (:mod:`ragrade.io.texts`), judge datasets, the report's texts,
slices, merged assessment tables, and this round's spans, chunk maps, traces and nuggets — through
:func:`records_format` and the format's ``records`` / ``rows`` / ``batches`` (and ``write_records``), and
the CLI's ``--*-format`` choices (:data:`FORMATS`, :data:`RECORDS`). Adding a format is one module here
plus one line in :data:`REGISTRY` (docs/formats.md, "Adding a format").

The lookups below read :data:`REGISTRY` when called, so a format registered in a test
(``monkeypatch.setattr(formats, "REGISTRY", formats.REGISTRY + (MINE,))``) is found everywhere except in
the command line's choices, which are fixed when a command is imported.
"""

from __future__ import annotations

import os

from ragrade.errors import InputError, ParseError
from ragrade.io.formats.arrow_ipc import ARROW_IPC
from ragrade.io.formats.base import Format, TableFormat
from ragrade.io.formats.delimited import CSV, TSV
from ragrade.io.formats.jsondoc import JSONDOC
from ragrade.io.formats.jsonl import JSONL
from ragrade.io.formats.otlp import OTLP
from ragrade.io.formats.parquet import PARQUET
from ragrade.io.formats.trec import MSMARCO, QID_DOC_SCORE, TREC

#: Every format, one line each.
REGISTRY: tuple[Format, ...] = (
    TREC,
    MSMARCO,
    QID_DOC_SCORE,
    TSV,
    CSV,
    JSONL,
    PARQUET,
    ARROW_IPC,
    OTLP,
    JSONDOC,
)

#: The names users may give (``format=``, ``--run-format``).
FORMATS: tuple[str, ...] = tuple(f.name for f in REGISTRY)
#: The whitespace-separated (TREC family) formats.
TREC_FAMILY: tuple[str, ...] = tuple(f.name for f in REGISTRY if f.layout is not None)
#: The formats of records (tables of named columns): the choices of ``--queries-format`` and the like.
RECORDS: tuple[str, ...] = tuple(f.name for f in REGISTRY if f.holds_records)


def names() -> tuple[str, ...]:
    """The names of the registered formats, now (:data:`FORMATS` is their list when ragrade was imported)."""
    return tuple(f.name for f in REGISTRY)


def get(name: str | Format) -> Format:
    """The format called ``name`` (or one of its aliases, any case, with or without a leading dot)."""
    if isinstance(name, Format):
        return name
    key = str(name).lower().lstrip(".")
    for fmt in REGISTRY:
        if key == fmt.name or key in fmt.aliases:
            return fmt
    raise InputError(f"unknown format {name!r}; use one of {', '.join(names())}")


def normalise_format(name: str) -> str | None:
    """The canonical name of a format given by the user; None for ``"tabular"`` (from the extension)."""
    if str(name).lower() == "tabular":
        return None
    return get(name).name


def suffixes(path: str | os.PathLike[str]) -> tuple[str, bool]:
    """``(extension, gz)`` of a file name: ``run.tsv.gz`` → ``(".tsv", True)``."""
    name = os.fspath(path).lower()
    gz = name.endswith(".gz")
    if gz:
        name = name[:-3]
    return os.path.splitext(name)[1], gz


def by_extension(path: str | os.PathLike[str]) -> Format | None:
    """The format the file name selects (``.gz`` may follow), or None."""
    ext = suffixes(path)[0]
    return next((f for f in REGISTRY if ext in f.extensions), None)


def detect(path: str | os.PathLike[str], format: str | Format | None = None) -> Format:
    """The format of ``path``: ``format`` if given (taken as given, no sniffing), else from the extension
    (refined by the content where the format says so: a ``.tsv`` holding TREC lines), else by content."""
    if format is not None and not (isinstance(format, str) and format.lower() == "tabular"):
        return get(format)
    p = os.fspath(path)
    fmt = by_extension(p)
    if fmt is not None:
        return fmt.refine(p)
    return sniff(p)


def sniff(path: str) -> Format:
    """The format of a file whose name says nothing, from its first bytes and first line: the first
    format of :data:`REGISTRY` that claims it, else a table (TSV if the line holds a tab, else CSV)."""
    from ragrade.io.textfiles import first_line, open_binary

    stream, raw = open_binary(path)
    try:
        head = stream.read(4)
    finally:
        stream.close()
        raw.close()
    for fmt in REGISTRY:
        if fmt.binary and fmt.sniff(head, None):
            return fmt
    line = first_line(path, skip_comments=True)
    if line is None:
        return TREC  # the reader reports the empty file
    for fmt in sorted(REGISTRY, key=lambda f: f.sniff_order):
        if not fmt.binary and fmt.sniff(head, line):
            return fmt
    return TSV if "\t" in line else CSV


def records_format(path: str | os.PathLike[str], format: str | Format | None = None) -> Format:
    """The format of a file of records (topics, corpora, judge datasets, texts, slices, spans, traces,
    nuggets...): ``format`` if given, else the one the file name selects, else the binary formats' magic
    bytes or a JSON object on the first line. A file of the TREC family (``.txt``) holds tab-separated
    records (``id<TAB>text`` lines): it is read as TSV. A format that holds no records is refused."""
    if format is not None:
        fmt = get(format)
    else:
        p = os.fspath(path)
        found = by_extension(p) or _sniff_records(p)
        if found is None:
            exts = ", ".join(e for f in REGISTRY if f.holds_records for e in f.extensions)
            raise ParseError(f"cannot tell the format from the file name (expected {exts}; or give the format)",
                             path=p)
        fmt = found
    if fmt.layout is not None:
        fmt = TSV
    if not fmt.holds_records:
        raise InputError(f"the {fmt.name} format holds no records (tables of named columns); use one of "
                         f"{', '.join(f.name for f in REGISTRY if f.holds_records)}")
    return fmt


def _sniff_records(path: str) -> Format | None:
    """A format of records that the content of an unnamed file shows for sure: a binary magic, or JSON."""
    if not os.path.isfile(path):
        return None
    fmt = sniff(path)
    return fmt if fmt.holds_records and (fmt.binary or fmt is JSONL) else None


def detect_format(path: str | os.PathLike[str], format: str | None = None) -> str:
    """The name of :func:`detect`'s format (docs/formats.md, "Detection")."""
    return detect(path, format).name


def out_format(path: str | os.PathLike[str], format: str | None) -> Format:
    """The format to write ``path`` in: ``format`` if given, else from the file name."""
    if format:
        name = normalise_format(format)
        if name is None:
            raise InputError("give a concrete output format (" + ", ".join(names()) + ")")
        return get(name)
    fmt = by_extension(path)
    if fmt is None:
        raise InputError(f"cannot tell the output format from {os.fspath(path)!r}; pass format= "
                         f"({', '.join(names())})")
    return fmt


__all__ = ["FORMATS", "RECORDS", "REGISTRY", "TREC_FAMILY", "Format", "TableFormat", "by_extension", "detect",
           "detect_format", "get", "names", "normalise_format", "out_format", "records_format", "sniff", "suffixes"]
