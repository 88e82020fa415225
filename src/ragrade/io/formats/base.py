"""What a file format is to ragrade: one :class:`Format` object per format (docs/formats.md, "Adding a
format"). The registry (:mod:`ragrade.io.formats`) lists them; every reader of the house — ``read_run`` /
``read_qrels``, the writers, the out-of-core reader, Spark, the judge datasets and the assessment topics
and corpus readers — asks the registry, and nothing else lists formats or extensions."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ragrade.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

    from ragrade.data import Qrels, Run
    from ragrade.io._common import Progress


class Format:
    """One file format. Subclasses override what the format can do; the defaults refuse, naming the
    format. Attributes:

    * ``name`` — the name users give (``format=``, ``--run-format``); ``aliases`` — other spellings;
    * ``extensions`` — file name endings that select it (``.gz`` may follow any text format);
    * ``binary`` — not line-oriented text (no line numbers in errors, no line limit);
    * ``out_of_core`` — :mod:`ragrade.io.stream` reads it piece by piece (``--max-memory``);
    * ``layout`` — the fixed columns of a headerless layout (TREC), or None: columns are named in the file
      and recognised by the vocabulary of :mod:`ragrade.io.columns`;
    * ``headerless`` — a file of records may lack a header row (CSV/TSV).

    A format of records (tables of named columns) defines :meth:`records`; everything else about records
    (:meth:`rows`, :meth:`batches`, :meth:`column_names`, and a :class:`TableFormat`'s runs and ground
    truth) has a default built on it, which a format overrides only to stream or to give line numbers.
    """

    name: str = ""
    aliases: tuple[str, ...] = ()
    extensions: tuple[str, ...] = ()
    binary: bool = False
    out_of_core: bool = False
    layout: tuple[str, ...] | None = None
    #: the first row may be data rather than column names (CSV/TSV): readers of records then name the
    #: columns themselves (``rows(path, names=...)``, ``batches(path, names=...)``)
    headerless: bool = False
    #: one line for ``ragrade info`` and docs: what a file of this format holds
    description: str = ""
    #: the order in which content sniffing asks the text formats (lower first)
    sniff_order: int = 50

    # -- detection ------------------------------------------------------------------------------------
    def sniff(self, head: bytes, line: str | None) -> bool:
        """Whether a file whose name says nothing is of this format, from its first bytes (``head``) and
        its first non-blank, non-comment line (``line``, decoded; None if there is none)."""
        return False

    def refine(self, path: str) -> Format:
        """The format to use for ``path`` once its extension chose this one (a ``.tsv`` holding TREC
        lines is TREC): by default, this one."""
        return self

    # -- runs and ground truth ------------------------------------------------------------------------------
    def read_run(self, path: str, *, name: str | None, progress: Progress | None, chunk_size: int,
                 opts: dict[str, Any]) -> Run:
        raise InputError(f"the {self.name} format does not hold runs")

    def read_qrels(self, path: str, *, progress: Progress | None, chunk_size: int, prefer: str | None,
                   opts: dict[str, Any]) -> Qrels:
        raise InputError(f"the {self.name} format does not hold ground truth")

    def write_run(self, run: Run, path: str | os.PathLike[str], *, tag: str | None, ties: str) -> None:
        raise InputError(f"runs cannot be written as {self.name}")

    def write_qrels(self, qrels: Qrels, path: str | os.PathLike[str]) -> None:
        raise InputError(f"ground truth cannot be written as {self.name}")

    def guess_kind(self, path: str) -> str | None:
        """``"run"``, ``"qrels"`` or None (undecided), from the first line or the columns."""
        return None

    # -- records: tables of named columns (topics, corpora, judge datasets, texts, spans, traces, ...) ------
    @property
    def holds_records(self) -> bool:
        """Whether the format holds records (tables of named columns): it defines :meth:`records`."""
        return type(self).records is not Format.records

    def records(self, path: str, *, strings: bool = False) -> pa.Table:
        """The whole file as an Arrow table of records. ``strings``: every top-level column as text exactly
        as written (ids such as ``007`` stay so; a nested value, such as a list of objects, as its JSON
        text). Without ``strings`` nested values keep their Arrow types (a JSON list of objects is a
        ``list<struct>`` column). This is the one method a format of records must define: :meth:`rows`,
        :meth:`batches` and :meth:`column_names` default to it."""
        raise InputError(f"the {self.name} format holds no records (tables of named columns)")

    def rows(self, path: str, *, names: list[str] | None = None) -> Iterator[tuple[dict[str, Any], int | None]]:
        """The records one by one as Python dicts (nested values as Python lists and dicts), each with its
        line number where the format has lines, else None (small files: topics, datasets). ``names``: the
        columns of a file whose rows carry no names (:attr:`headerless` formats only). By default:
        :meth:`records`, row by row."""
        self._no_names(names)
        for row in self.records(path).to_pylist():
            yield row, None

    def batches(self, path: str, columns: list[str] | None = None, *, names: list[str] | None = None,
                skip_rows: int = 0, block_size: int = 1 << 20,
                progress: Progress | None = None) -> Iterator[pa.RecordBatch]:
        """The file's records streamed in blocks of about ``block_size`` bytes: memory holds one block,
        whatever the file's size, where the format streams (CSV/TSV, JSONL, Parquet). ``columns``: only
        these, read as text by the text formats (other columns are ignored); ``names`` and ``skip_rows``:
        a :attr:`headerless` file's column names and the rows to pass over first. A format that cannot
        type a file's block (a JSONL key that is a number on one line and a string on another) raises
        ``pyarrow.ArrowInvalid`` / ``ArrowTypeError``, and the caller may fall back to :meth:`rows`.
        By default: :meth:`records` whole."""
        self._no_names(names, skip_rows)
        table = self.records(path, strings=columns is not None)
        if columns is not None:
            missing = [c for c in columns if c not in table.column_names]
            if missing:
                from ragrade.errors import ParseError

                raise ParseError(f"no column {missing[0]!r} (the file has {', '.join(table.column_names)})",
                                 path=path)
            table = table.select(columns)
        yield from table.to_batches()

    def column_names(self, path: str) -> list[str]:
        """The names of the columns of a file of records (its header, first object or schema)."""
        return list(self.records(path).column_names)

    def write_records(self, table: pa.Table, path: str | os.PathLike[str]) -> None:
        """Write an Arrow table of records (merged qrels, spans, nuggets...) as this format."""
        raise InputError(f"records cannot be written as {self.name}")

    def _no_names(self, names: list[str] | None, skip_rows: int = 0) -> None:
        if names is not None or skip_rows:
            raise InputError(f"the {self.name} format names its columns; column names and rows to skip do not "
                             "apply")

    # -- Spark ---------------------------------------------------------------------------------------------
    def spark_read(self, spark: Any, path: str, kind: str) -> Any:
        """A Spark DataFrame of the file (``kind``: ``"run"`` or ``"qrels"``), columns named as in a table."""
        raise InputError(f"{path}: Spark does not read the {self.name} format here; convert it to Parquet first "
                         f"(ragrade convert {os.path.basename(path)} data.parquet)")

    def __repr__(self) -> str:
        return f"<format {self.name}>"


#: Reader options of the table formats (``read_run(path, query_col=...)``).
TABLE_OPTIONS = ("query_col", "doc_col", "score_col", "grade_col", "rank_col", "list_col", "unit_col", "header",
                 "text_col")


class TableFormat(Format):
    """A format of named columns (CSV/TSV with a header, JSON Lines, Parquet, Arrow IPC): :meth:`records`
    (or, to name lines in errors, :meth:`load`) reads the file into an Arrow table; the column logic of :mod:`ragrade.io.tables` (shared by every such format) turns it
    into a run or ground truth, recognising columns by the vocabulary of :mod:`ragrade.io.columns`."""

    def load(self, path: str, kind: str, progress: Progress | None, opts: dict[str, Any]
             ) -> tuple[pa.Table, Any]:
        """``(table, locate)``: the file as an Arrow table and ``locate(row) -> (line, text)`` for errors. By
        default :meth:`records`, errors naming rows (a format with lines overrides it to name lines)."""
        from ragrade.io.tables import row_locator

        opts.pop("header", None)
        table = self.records(path)
        if progress is not None:
            size = os.path.getsize(path)
            progress(size, size)
        return table, row_locator(table)

    def read_run(self, path: str, *, name: str | None, progress: Progress | None, chunk_size: int,
                 opts: dict[str, Any]) -> Run:
        from ragrade.io import tables

        opts = dict(opts)
        _known(opts)
        table, locate = self.load(path, "run", progress, opts)
        return tables.table_to_run(table, path, locate, name=name,
                                   **_pick(opts, "query_col", "doc_col", "score_col", "rank_col", "list_col",
                                           "text_col"))

    def read_qrels(self, path: str, *, progress: Progress | None, chunk_size: int, prefer: str | None,
                   opts: dict[str, Any]) -> Qrels:
        from ragrade.io import tables
        from ragrade.io.origins import resolve_origins

        opts = dict(opts)
        _known(opts)
        table, locate = self.load(path, "qrels", progress, opts)
        table, locate = resolve_origins(table, locate, path, prefer, opts.get("query_col"), opts.get("doc_col"))
        return tables.table_to_qrels(table, path, locate,
                                     **_pick(opts, "query_col", "doc_col", "grade_col", "list_col", "unit_col"))

    def guess_kind(self, path: str) -> str | None:
        from ragrade.io.columns import kind_from_columns

        try:
            names = self.column_names(path)
        except (ValueError, OSError):
            return None
        return kind_from_columns(names)


def _known(opts: dict[str, Any]) -> None:
    unknown = [k for k in opts if k not in TABLE_OPTIONS]
    if unknown:
        raise InputError(f"unknown reader option {unknown[0]!r}; options: {', '.join(sorted(TABLE_OPTIONS))}")


def _pick(opts: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in opts.items() if k in names}


def no_options(opts: dict[str, Any], fmt: str) -> None:
    """A format without named columns takes no reader option."""
    given = [k for k, v in opts.items() if v is not None]
    if given:
        raise InputError(f"option {given[0]!r} does not apply to the {fmt} format")


def text_lines(path: str) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of every line of a (possibly gzipped) UTF-8 text file, line ends and a
    leading byte-order mark removed; bytes that are not UTF-8 are a :class:`ParseError` naming the line."""
    from ragrade.errors import ParseError
    from ragrade.io._common import open_binary

    stream, raw = open_binary(path)
    try:
        for n, data in enumerate(stream, start=1):
            if n == 1 and data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                raise ParseError("the file is not UTF-8 text", path=path, line=n) from None
            yield n, text.rstrip("\r\n")
    finally:
        stream.close()
        raw.close()


def as_strings(table: pa.Table) -> pa.Table:
    """Every column of an Arrow table as text: strings as they are, numbers as Arrow writes them, nested
    values (lists, structs) as their JSON text (what ``records(path, strings=True)`` promises)."""
    import pyarrow as pa

    from ragrade.io.writers import json_texts

    cols = []
    for col in table.columns:
        t = col.type
        if pa.types.is_dictionary(t):
            col, t = col.cast(t.value_type), t.value_type
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            cols.append(col.cast(pa.string()))
        elif pa.types.is_nested(t):
            cols.append(json_texts(col, nulls=False))
        else:
            cols.append(col.cast(pa.string()))
    return pa.table(cols, names=table.column_names)


class _Counting(io.RawIOBase):
    """A readable (decompressed) file that reports the on-disk bytes read so far, for progress."""

    def __init__(self, path: str, progress: Progress | None) -> None:
        from ragrade.io._common import open_binary

        self._stream, self._raw = open_binary(path)
        self._total = os.fstat(self._raw.fileno()).st_size
        self._progress = progress

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        data = self._stream.read(len(b))
        n = len(data)
        b[:n] = data
        if self._progress:
            self._progress(min(self._raw.tell(), self._total), self._total)
        return n

    def close(self) -> None:
        self._stream.close()
        self._raw.close()
        super().close()


def counting_stream(path: str, progress: Progress | None = None) -> io.BufferedReader:
    """``path`` opened for reading (gzip decompressed, told by content), reporting progress as read."""
    return io.BufferedReader(_Counting(path, progress), buffer_size=1 << 20)
