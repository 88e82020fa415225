"""Writers for headered TSV/CSV, JSONL and Parquet (TREC lives in :mod:`ragrade.io.trec`), and the one rule
every writer of ragrade follows (:func:`output_path`, :func:`write_text`): a file is written under a temporary
name in its folder and renamed over the target only once complete, so a failed or interrupted write never
destroys what was there; an output that is one of the command's inputs is refused; a write the system
refuses (a full disk, ``/dev/full``, a read-only folder) is one :class:`~ragrade.errors.InputError` naming
the file. A device or a pipe (``/dev/stdout``, a FIFO) is written in place: it cannot be renamed over.

Runs are written one row per retrieved item in rank order: ``query, doc, rank, score`` (no ``score``
column for ranked lists without scores), plus ``text`` when the run carries the retrieved texts. Qrels are written ``query, doc, grade`` (plus ``unit`` for
grouped qrels in Parquet/TSV; JSONL writes groups in the list layout ``{"query": .., "groups": [[..]]}``).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from ragrade.data import Qrels, Run
from ragrade.io.textfiles import PathLike
from ragrade.io.textfiles import gz_extension as is_gzip

#: Parquet metadata key holding a run's name.
RUN_NAME_KEY = "ragrade.run_name"


def refuse_inputs(target: PathLike, inputs: Iterable[Any]) -> None:
    """An :class:`~ragrade.errors.InputError` when ``target`` is one of ``inputs`` (the same file, by any
    path): writing it would destroy what is being read."""
    from ragrade.errors import InputError

    out = os.fspath(target)
    for given in inputs:
        if not isinstance(given, str | os.PathLike):
            continue
        src = os.fspath(given)
        same = os.path.realpath(src) == os.path.realpath(out)
        with contextlib.suppress(OSError):
            same = same or os.path.samefile(src, out)
        if same:
            raise InputError(f"the output {out} is also an input ({src}): write to another file")


@contextlib.contextmanager
def output_path(path: PathLike, *, inputs: Iterable[Any] = ()) -> Iterator[str]:
    """Yield the path to write ``path``'s content to: a temporary file in ``path``'s folder (its name ends
    with ``path``'s own, so ``.gz`` and the extension still decide the format), renamed over ``path`` when
    the block ends without an error and removed otherwise. A device or a pipe is yielded as it is. An
    ``inputs`` path equal to ``path`` is refused first; the system refusing the write (no space, no
    permission, no such folder) is an :class:`~ragrade.errors.InputError` naming ``path``."""
    from ragrade.errors import InputError

    target = os.fspath(path)
    refuse_inputs(target, inputs)
    try:
        mode = os.stat(target).st_mode
    except OSError:
        mode = None
    try:
        if mode is not None and not stat.S_ISREG(mode):  # /dev/stdout, /dev/full, a FIFO: written in place
            yield target
            return
        fd, tmp = tempfile.mkstemp(prefix=".ragrade-", suffix="-" + os.path.basename(target),
                                   dir=os.path.dirname(target) or ".")
    except OSError as exc:
        raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, stat.S_IMODE(mode) if mode is not None else _default_mode())
        os.replace(tmp, target)
    except OSError as exc:
        raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            os.remove(tmp)


def _default_mode() -> int:
    """The mode a new file gets (0o666 under the umask)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def write_text(path: PathLike, text: str, *, inputs: Iterable[Any] = ()) -> None:
    """``text`` written to ``path`` (UTF-8) under the rule of :func:`output_path`."""
    with output_path(path, inputs=inputs) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)


def csv_text(rows: Iterable[Iterable[Any]]) -> str:
    """``rows`` as CSV text (the ``csv`` module's quoting, ``\n`` line ends): the delimited table of
    ``Result.to_csv`` and of every command's ``--format csv``, written here with the other formats."""
    import csv
    import io

    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def _dict_col(codes: np.ndarray, vocab: np.ndarray) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(pa.array(np.asarray(codes, dtype=np.int32)),
                                          pa.array(vocab, type=pa.string()))


def run_table(run: Run, ties: str = "docid_desc") -> pa.Table:
    order = run.ranking(ties)
    counts = np.diff(run.offsets)
    seg = np.repeat(np.arange(run.n_queries, dtype=np.int32), counts)
    pos = np.arange(run.n_rows, dtype=np.int64) - np.repeat(run.offsets[:-1], counts)
    cols = {
        "query": _dict_col(seg, run.query_ids),
        "doc": _dict_col(run.doc_codes[order], run.doc_vocab),
        "rank": pa.array(pos + 1),
    }
    if run.scores is not None:
        cols["score"] = pa.array(run.scores[order], type=pa.float64())
    if run.texts is not None:
        cols["text"] = pa.array(run.texts[order], type=pa.string())
    table = pa.table(cols)
    if run.name:
        table = table.replace_schema_metadata({RUN_NAME_KEY: run.name})
    return table


def _grades(g: np.ndarray) -> pa.Array:
    return pa.array(g.astype(np.int64)) if np.all(np.mod(g, 1) == 0) else pa.array(g)


def qrels_table(qrels: Qrels) -> pa.Table:
    seg = np.repeat(np.arange(qrels.n_queries, dtype=np.int32), np.diff(qrels.offsets))
    cols = {
        "query": _dict_col(seg, qrels.query_ids),
        "doc": _dict_col(qrels.doc_codes, qrels.doc_vocab),
        "grade": _grades(qrels.grades),
    }
    if qrels.has_groups:
        cols["unit"] = pa.array(qrels.unit_ids())
    return pa.table(cols)


def write_three_columns(table: pa.Table, path: PathLike, value: str) -> None:
    """Headerless ``query<TAB>doc<TAB>value`` lines (``value``: ``"rank"``, MS MARCO's layout, or
    ``"score"``); a run without scores cannot be written with scores."""
    import pyarrow.csv as pacsv

    from ragrade.errors import InputError

    if value not in table.column_names:
        raise InputError("the run has no scores (ranked lists): write it with format 'msmarco' (ranks) instead")
    table = table.select(["query", "doc", value])
    table = table.cast(pa.schema([pa.field(f.name, pa.string() if pa.types.is_dictionary(f.type) else f.type)
                                  for f in table.schema]))
    import pyarrow.compute as pc

    for name in ("query", "doc"):  # read back by a whitespace split: no whitespace inside an id
        bad = pc.match_substring_regex(table.column(name), r"\s")
        if pc.any(bad).as_py():
            row = int(np.flatnonzero(bad.to_numpy(zero_copy_only=False))[0])
            raise InputError(f"a {name} id contains whitespace and cannot be written in this layout; use "
                             "tsv, jsonl or parquet", value=table.column(name)[row].as_py())
    opts = pacsv.WriteOptions(include_header=False, delimiter="\t", quoting_style="none")
    if is_gzip(path):
        with pa.CompressedOutputStream(os.fspath(path), "gzip") as out:
            pacsv.write_csv(table, out, opts)
    else:
        pacsv.write_csv(table, os.fspath(path), opts)


def write_delimited(table: pa.Table, path: PathLike, delimiter: str) -> None:
    import pyarrow.csv as pacsv

    table = table.cast(pa.schema([pa.field(f.name, pa.string() if pa.types.is_dictionary(f.type) else f.type)
                                  for f in table.schema]))
    if delimiter != ",":
        _check_no_delimiter(table, delimiter)
        if "text" in table.column_names:  # texts hold quotes, which Arrow's writer refuses unquoted
            _write_joined(table, path, delimiter)
            return
    header = (delimiter.join(table.column_names) + "\n").encode()
    opts = pacsv.WriteOptions(include_header=False, delimiter=delimiter,
                              quoting_style="needed" if delimiter == "," else "none")
    if is_gzip(path):
        with pa.CompressedOutputStream(os.fspath(path), "gzip") as out:
            out.write(header)
            pacsv.write_csv(table, out, opts)
    else:
        with pa.OSFile(os.fspath(path), "wb") as out:
            out.write(header)
            pacsv.write_csv(table, out, opts)


def write_delimited_records(table: pa.Table, path: PathLike, delimiter: str) -> None:
    """A table of text columns (records: :func:`ragrade.io.formats.base.as_strings`) as CSV (quoted where
    needed) or TSV (never quoted: a value holding a tab or a line break is refused)."""
    if delimiter == ",":
        write_delimited(table, path, delimiter)
        return
    import pyarrow.compute as pc

    from ragrade.errors import InputError

    for name in table.column_names:
        col = table.column(name)
        if len(col) and pc.any(pc.match_substring_regex(col, r"[\t\n\r]")).as_py():
            raise InputError(f"column {name!r} holds a tab or a line break and cannot be written to TSV; use "
                             "CSV, JSONL or Parquet")
    _write_joined(table, path, delimiter)


def _write_bytes(path: PathLike, data: Any) -> None:
    """``data`` to ``path``, gzipped when the name ends in ``.gz``."""
    if is_gzip(path):
        import gzip

        with gzip.open(os.fspath(path), "wb") as fh:
            fh.write(data)
    else:
        with open(os.fspath(path), "wb") as fh:
            fh.write(data)


def _write_joined(table: pa.Table, path: PathLike, delimiter: str) -> None:
    """Unquoted delimited lines built with Arrow string kernels (nulls written as empty fields)."""
    import pyarrow.compute as pc

    cols = [pc.cast(c, pa.string()).fill_null("") for c in table.columns]
    lines = pc.binary_join_element_wise(*cols, delimiter).to_pylist() if table.num_rows else []
    data = "".join(line + "\n" for line in [delimiter.join(table.column_names), *lines]).encode("utf-8")
    _write_bytes(path, data)


def _check_no_delimiter(table: pa.Table, delimiter: str) -> None:
    import pyarrow.compute as pc

    from ragrade.errors import InputError

    for name in ("query", "doc", "text"):
        if name not in table.column_names:
            continue
        col = table.column(name)
        bad = pc.any(pc.match_substring_regex(col, r"[\t\n\r]")).as_py() if len(col) else False
        if bad:
            what = "a retrieved text" if name == "text" else f"a {name} id"
            raise InputError(f"{what} contains a tab or newline and cannot be written to TSV; use JSONL "
                             "or Parquet")


def write_parquet(table: pa.Table, path: PathLike) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, os.fspath(path))


def _json_strings(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    """JSON text of every value, vectorised: strings are escaped once per distinct value (dictionary),
    numbers use Arrow's shortest round-trip formatting; nested values (lists, structs) are encoded one by
    one; a null is ``null``."""
    return json_texts(col, nulls=True)


def json_texts(col: pa.Array | pa.ChunkedArray, *, nulls: bool = True) -> pa.Array:
    """The JSON text of every value of an Arrow column (``nulls``: a null as the text ``null``, else kept
    null)."""
    import pyarrow.compute as pc

    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        col = col.dictionary_encode()  # texts: escaped once per distinct value, like ids
    if pa.types.is_dictionary(col.type):
        vocab = col.dictionary.to_pylist()
        escaped = pa.array([json.dumps(v, ensure_ascii=False) for v in vocab], type=pa.string())
        out = escaped.take(col.indices)
    elif pa.types.is_nested(col.type):
        out = pa.array([None if v is None else json.dumps(v, ensure_ascii=False, default=str) for v in col.to_pylist()],
                       type=pa.string())
    elif pa.types.is_floating(col.type):
        out = pc.replace_substring(pc.cast(col, pa.string()), "inf", "Infinity")
    elif pa.types.is_boolean(col.type) or pa.types.is_integer(col.type):
        out = pc.cast(col, pa.string())
    elif pa.types.is_null(col.type):
        out = pa.nulls(len(col), type=pa.string())
    else:  # dates, times, binary...: their text, as a JSON string
        out = pa.array([None if v is None else json.dumps(str(v), ensure_ascii=False) for v in col.to_pylist()],
                       type=pa.string())
    return out.fill_null("null") if nulls else out


def write_jsonl_rows(table: pa.Table, path: PathLike) -> None:
    """One JSON object per row, built with Arrow string kernels (no Python object per row)."""
    import pyarrow.compute as pc

    parts: list[pa.Array | str] = []
    for i, name in enumerate(table.column_names):
        parts.append(("{" if i == 0 else ", ") + json.dumps(name) + ": ")
        parts.append(_json_strings(table.column(name)))
    parts.append("}\n")
    n = table.num_rows
    arrays = [pa.array(np.full(n, p, dtype=object), type=pa.string()) if isinstance(p, str) else p for p in parts]
    lines = pc.binary_join_element_wise(*arrays, "") if n else pa.array([], type=pa.string())
    lines = pa.array(lines, type=pa.large_string()) if not isinstance(lines, pa.Array) else lines
    lines = lines.cast(pa.large_string())  # 64-bit offsets: no 2 GiB limit
    # The value buffer of a string array is the concatenation of its values: write it as is.
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)[lines.offset: lines.offset + len(lines) + 1]
    data = lines.buffers()[2]
    body = b"" if data is None or len(lines) == 0 else memoryview(data)[int(offsets[0]): int(offsets[-1])]
    _write_bytes(path, body)


def write_jsonl_groups(qrels: Qrels, path: PathLike) -> None:
    """Grouped qrels in the list layout, one line per query."""
    import gzip

    groups = qrels.to_groups()
    opener = gzip.open if is_gzip(path) else open
    with opener(os.fspath(path), "wt", encoding="utf-8") as fh:
        for q, g in groups.items():
            fh.write(json.dumps({"query": q, "groups": g}, ensure_ascii=False) + "\n")
