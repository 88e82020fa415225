"""The trec_eval drop-in's readings of its files (:mod:`ragrade.compat.trec_eval`): the checks trec_eval makes of
judgment lines, grades as its ``atol`` reads them, each ranking in its rank order (and cut by ``-M``), the run id,
the z-score file."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ragrade.compat import _native
from ragrade.compat._trec_eval_c import atof as _atof
from ragrade.errors import TrecEvalError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np



# -- reading ---------------------------------------------------------------------------------------------------


def last_run_id(path: str) -> str:
    """The run tag (6th column) of the last data line of a run file, as trec_eval prints under ``runid``."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        block = 1 << 16
        pos = size
        tail = b""
        while pos > 0:
            step = min(block, pos)
            pos -= step
            f.seek(pos)
            tail = f.read(step) + tail
            lines = [ln for ln in tail.split(b"\n") if ln.strip() and not ln.lstrip().startswith(b"#")]
            if len(lines) >= 2 or (pos == 0 and lines):
                fields = lines[-1].split()
                return fields[5].decode("utf-8", "replace") if len(fields) >= 6 else ""
    return ""


def in_rank_order(run: Any, max_docs: int | None = None) -> Any:
    """``run`` stored in trec_eval's rank order (score descending, ties by document id descending), without
    its scores (the order is the ranking then; no trec_eval measure reads a score) and, when a hash scan of
    its raw ids in C finds no document listed twice in a query, marked so (the engine then skips its own
    scan, which codes every id first). ``max_docs`` (-M) keeps the first ``max_docs`` documents of each ranking
    in that order (0: every ranking empty), before the scan, as trec_eval looks for a document listed twice
    among the documents it keeps only. A run with a duplicate is returned as it is (without -M) or cut (with
    -M): the engine's scan finds it and names it. The ordering works on the raw Arrow ids, without a Python
    string per tied row."""
    from ragrade.data import Run

    if run.n_rows == 0 or not (run.raw_is_arrow or run.raw_docs is not None) or (
            max_docs is None and (not run.raw_is_arrow or run.scores is None)):
        return run
    if not run.raw_is_arrow:  # ids held in a NumPy array (not read from a file): order and cut them as they are
        order = run.ranking_sparse("docid_desc")[0]
        offsets, perm = _cut(run.offsets, order, max_docs)
        return Run(run.query_ids, offsets, None, None, None, name=run.name,
                   raw_docs=run.raw_docs if perm is None else run.raw_docs[perm])
    if max_docs is None and run.scores is not None:
        ordered = _ordered_from_chunks(run)
        if ordered is not None:
            return ordered
    return _ordered_arrow(run, max_docs)


def _ordered_arrow(run: Any, max_docs: int | None) -> Any:
    """:func:`in_rank_order` on the ids as one Arrow array (with -M, or without the fast path)."""
    import pyarrow as pa

    from ragrade.compat._native import arrow_int64, arrow_strings, contiguous
    from ragrade.data import Run

    raw = contiguous(run.raw_docs) if isinstance(run.raw_docs, pa.ChunkedArray) else run.raw_docs  # one copy
    unique = None
    perm = None
    c = _native.speedups
    strings = arrow_strings(raw) if c is not None else None
    if strings is not None and c is not None:
        if max_docs is None:
            if c.first_duplicate_in_segments(strings[0], strings[1], run.offsets) >= 0:
                return run
            unique = True
        if run.scores is not None:
            perm = trec_order(run.scores, run.offsets, strings)  # one sort in C: scores, then ids
    if perm is None and run.scores is not None:
        perm = run.ranking_sparse("docid_desc")[0]
    offsets, perm = _cut(run.offsets, perm, max_docs)
    docs = raw if perm is None else raw.take(arrow_int64(perm))
    if max_docs is not None and c is not None:  # the scan, on the documents kept
        kept = arrow_strings(docs)
        if kept is not None and c.first_duplicate_in_segments(kept[0], kept[1], offsets) < 0:
            unique = True
    return Run(run.query_ids, offsets, None, None, None, name=run.name, unique=unique, raw_docs=docs)


def _ordered_from_chunks(run: Any) -> Any:
    """The fast path of :func:`in_rank_order` (no ``-M``, scores, the drop-ins' C helpers): the ids are read where
    the scanner left them (one Arrow chunk per thread), scanned for a document listed twice and sorted into
    trec_eval's order per segment (the segments split across cores), then gathered in that order by the thread
    that sorted them (one chunk per thread). ``run`` itself when a document is listed twice (the engine's scan
    names it); None without the helpers or with ids that are not plain strings. Ids the C tokenizer read
    (:attr:`~ragrade.data.Run.raw_utf8`) are read and gathered without pyarrow."""
    import numpy as np

    from ragrade.data import Run, Utf8Column

    c = _native.speedups
    if c is None:
        return None
    utf8 = run.raw_utf8
    parts: list[Any]
    if utf8 is not None:
        parts = list(utf8.chunks)
    else:
        import pyarrow as pa

        from ragrade.compat._native import arrow_strings

        chunks = run.raw_docs.chunks if isinstance(run.raw_docs, pa.ChunkedArray) else [run.raw_docs]
        parts = [arrow_strings(ch) for ch in chunks]
    if any(p is None for p in parts):
        return None
    offs = tuple(np.ascontiguousarray(p[0], dtype=np.int64) for p in parts if p is not None)
    datas = tuple(p[1] for p in parts if p is not None)
    scores = np.ascontiguousarray(run.scores, dtype=np.float64)
    offsets = np.ascontiguousarray(run.offsets, dtype=np.int64)
    perm = np.empty(len(scores), dtype=np.int64)
    found = [-1]
    gathered: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def part(bounds: tuple[int, int]) -> None:
        got = c.rank_order_chunks(scores, offsets, offs, datas, perm, bounds[0], bounds[1], True)
        if got >= 0:
            found[0] = got
            return
        r0, r1 = int(offsets[bounds[0]]), int(offsets[bounds[1]])
        if r1 > r0:  # this range's ids in that order: one chunk per worker, gathered where they were sorted
            out_off = np.empty(r1 - r0 + 1, dtype=np.int64)
            out_data = np.empty(_bytes_of_rows(offs, r0, r1), dtype=np.uint8)
            c.gather_chunks(offs, datas, perm[r0:r1], out_off, out_data)
            gathered[r0] = (out_off, out_data)

    _by_workers(part, offsets, len(scores))
    if found[0] >= 0:
        return run
    docs = Utf8Column([gathered[r0] for r0 in sorted(gathered)])
    return Run(run.query_ids, run.offsets, None, None, None, name=run.name, unique=True, raw_docs=docs)


def _bytes_of_rows(offs: tuple[np.ndarray, ...], r0: int, r1: int) -> int:
    """The bytes of the ids of rows ``r0 .. r1 - 1``, rows numbered across the chunks (``offs``: each chunk's
    offsets)."""
    total = base = 0
    for o in offs:
        n = len(o) - 1
        a, z = max(r0 - base, 0), min(r1 - base, n)
        if z > a:
            total += int(o[z] - o[a])
        base += n
    return total


def _by_workers(part: Any, offsets: np.ndarray, n: int, workers: int | None = None) -> None:
    """``part((first segment, end segment))`` over every segment of ``offsets`` (``n`` rows), the segments split
    into one range per worker thread (about a million rows each, up to the cores, at most 4)."""
    from itertools import pairwise

    import numpy as np

    from ragrade.compat._native import each

    nseg = len(offsets) - 1
    if workers is None:
        workers = min(os.cpu_count() or 1, 4, max(1, n // 1_000_000))
    workers = max(1, min(workers, max(nseg, 1)))
    if workers == 1:
        part((0, nseg))
        return
    cuts = np.searchsorted(offsets, np.linspace(0, n, workers + 1)[1:-1]).tolist()
    each(part, list(pairwise([0, *cuts, nseg])))


def trec_order(scores: np.ndarray, offsets: np.ndarray, strings: tuple[np.ndarray, Any],
               workers: int | None = None) -> np.ndarray | None:
    """Permutation ordering each segment's rows by descending score, equal scores by document id descending
    (``strings``: the ids as int64 offsets into UTF-8 bytes, one per row, e.g. :func:`~ragrade.compat._native.
    arrow_strings`), rows equal in both in row order: trec_eval's order, what ``Run.ranking("docid_desc")`` gives
    (as a full permutation), by one merge sort per segment in C, the segments split across cores. None without the
    drop-ins' C helpers."""
    c = _native.speedups
    if c is None:
        return None
    import numpy as np

    scores = np.ascontiguousarray(scores, dtype=np.float64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    str_off = np.ascontiguousarray(strings[0], dtype=np.int64)
    out = np.empty(len(scores), dtype=np.int64)

    def part(bounds: tuple[int, int]) -> None:
        c.sort_segments_trec(scores, offsets, str_off, strings[1], out, bounds[0], bounds[1])

    _by_workers(part, offsets, len(scores), workers)
    return out


def _cut(offsets: np.ndarray, perm: np.ndarray | None, max_docs: int | None) -> tuple[np.ndarray, np.ndarray | None]:
    """The segments' offsets and the rows (``perm``: the rank order, None: as stored) of the first
    ``max_docs`` rows of each segment (all of them when None)."""
    import numpy as np

    if max_docs is None:
        return offsets, perm
    lengths = np.minimum(np.diff(offsets), max(max_docs, 0))
    cut = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=cut[1:])
    within = np.arange(int(cut[-1]), dtype=np.int64) - np.repeat(cut[:-1], lengths)
    rows = np.repeat(np.asarray(offsets[:-1], dtype=np.int64), lengths) + within
    return cut, rows if perm is None else perm[rows]


def negative_queries(qrels: Any, qids: list[str], qrels_path: str) -> dict[str, float]:
    """Where trec_eval 10 stops on a query whose judgments all have a negative grade: the first query it
    scores (it finds no room for the count of each grade, "Can't calculate measure"), or any query whose
    grades are all below -1 (it clears a negative number of bytes and crashes). Returns each query's
    highest grade."""
    import numpy as np

    g = qrels.grades
    lengths = np.diff(qrels.offsets)
    top = np.full(len(lengths), -np.inf)
    has = lengths > 0
    top[has] = np.maximum.reduceat(g, qrels.offsets[:-1][has]) if len(g) else top[has]
    best = dict(zip(qrels.query_ids.tolist(), top.tolist(), strict=True))
    if best[qids[0]] < 0:
        raise TrecEvalError(f"{qrels_path}: every judgment of query {qids[0]!r}, the first trec_eval scores, has a "
                            "negative grade: trec_eval 10 stops there (\"Can't calculate measure\")")
    low = next((q for q in qids if best[q] < -1), None)
    if low is not None:
        raise TrecEvalError(f"{qrels_path}: every judgment of query {low!r} has a grade below -1: trec_eval 10 "
                            "crashes on such a query")
    return best


_ODD_LINE = re.compile(rb"(?:^|\n)(?:[ \t\r\v\f]*\n|[ \t\r\v\f]+#)")  # a blank line, or an indented '#'
_COMMENT_LINE = re.compile(rb"^#[^\n]*\n", re.MULTILINE)
_BLANK_HEAD = re.compile(rb"\n[\n \t\r\v\f]")  # where _ODD_LINE may find something (one quick pass)


def judgment_lines(path: str, fields: int) -> None:
    """Stop where trec_eval 10 stops reading a judgments file (qrels, qrels_jg, prefs, qrels_prefs): it skips a
    line starting with ``#`` and reads the line after it as data, whatever it is, so a blank line, a second
    comment line in a row and an indented ``#`` are malformed lines to it (it stops), a comment on the last line
    makes it read past the end of the file (it crashes), and such a line with ``fields`` fields is a judgment of a
    query whose id starts with ``#`` (ragrade stops there too, rather than read a comment as a query). A file's
    lines are looked at only where it holds ``#``, a line feed after a line feed or a line starting with a blank
    (memchr-speed tests); gzip files are ragrade's own (trec_eval reads none)."""
    try:
        with open(path, "rb") as f:
            data = _file_bytes(f)
    except OSError:
        return  # (the reader names the problem)
    try:
        _check_judgment_lines(data, path, fields)
    finally:
        if not isinstance(data, bytes):
            data.close()


def _check_judgment_lines(data: Any, path: str, fields: int) -> None:
    if not data or data[:2] == b"\x1f\x8b":
        return

    def stop(at: int, what: str) -> None:
        line = data[:at].count(b"\n") + 1
        raise TrecEvalError(f"{path}, line {line}: {what}")

    body = data if data[-1:] == b"\n" else bytes(data) + b"\n"
    blank, hashes = _blank_line_head(body), body.find(b"#") >= 0
    if blank or hashes:  # lines to look at in Python (rare)
        body = bytes(body)
    if blank:  # a line that is empty or starts with a blank
        odd = _ODD_LINE.search(body)
        if odd is not None:
            at = odd.start() + (body[odd.start():odd.start() + 1] == b"\n")
            indented = body[at:body.index(b"\n", at)].strip()[:1] == b"#"
            stop(at, ("an indented comment line" if indented else "a blank line") + ": trec_eval 10 reads it as a "
                 "malformed line and stops (it skips one comment line at a time, starting in the first column)")
    if hashes:
        for comment in _COMMENT_LINE.finditer(body):
            at = comment.end()
            if at >= len(body):
                stop(comment.start(), "the file ends with a comment line; trec_eval 10 then reads past the end of "
                     "the file and crashes (ragrade trec_eval stops here)")
            tokens = body[at:body.index(b"\n", at)].split()
            if tokens[:1] and tokens[0][:1] == b"#":
                stop(at, "a comment line right after another one: trec_eval 10 reads it as " + (
                    f"a judgment of query {tokens[0].decode('utf-8', 'replace')!r}; ragrade trec_eval stops here "
                    "rather than read a comment as a query" if len(tokens) == fields else "a malformed line and stops")
                     + " (it skips one comment line at a time)")
    second = body.find(b"\n", body.find(b"\n") + 1)  # (two comment lines in a row stopped above)
    head = bytes(body[: second + 1] if second >= 0 else body)
    first = next((line for line in head.split(b"\n") if line[:1] != b"#"), b"").split()
    if first and len(first) != fields:  # (the reader holds every line to the first one's fields)
        stop(head.index(b" ".join(first[:1])), f"{len(first)} fields, not {fields}: trec_eval 10 reads it as a "
             "malformed line and stops")


def _file_bytes(f: Any) -> Any:
    """The bytes of an open file: a read-only memory map of a regular file (no copy; mapped pages are the page
    cache's), else what it reads (a pipe, an empty file)."""
    import mmap

    try:
        if os.fstat(f.fileno()).st_size > 0:
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        pass
    return f.read()


def _blank_line_head(body: Any) -> bool:
    """Whether a line of ``body`` (ending with a line feed) is empty or starts with a blank: one memchr per line
    in C (``blank_line_head``), else one regular-expression search."""
    c = _native.speedups
    if c is not None:
        return bool(c.blank_line_head(body) >= 0)
    return body[:1] in (b"\n", b" ", b"\t", b"\r", b"\v", b"\f") or _BLANK_HEAD.search(body) is not None


#: The highest grade read: trec_eval sets aside a count for every grade from 0 to the highest judged, and runs out
#: of memory (or stops, "Can't calculate measure") long before 2^31.
TOP_GRADE = 2 ** 31 - 1


def grades_as_trec_eval_reads(qrels: Any, path: str) -> Any:
    """``qrels`` with each grade as trec_eval's ``atol`` reads it: the integer part of a decimal (``1.5`` is 1,
    ``-0.5`` is 0); a grade above :data:`TOP_GRADE` stops with an error, as trec_eval stops or runs out of
    memory there."""
    import numpy as np

    from ragrade.data import Qrels

    g = qrels.grades
    if len(g) and g.max() > TOP_GRADE:
        where = int(np.argmax(g))
        q = qrels.query_ids[int(np.searchsorted(qrels.offsets, where, side="right")) - 1]
        raise TrecEvalError(f"{path}: query {q!r} has a judgment of grade {g[where]:.0f}: trec_eval 10 sets aside a "
                            f"count for every grade from 0 to the highest, and stops or runs out of memory at grades "
                            f"this high (ragrade trec_eval reads grades up to {TOP_GRADE})")
    whole = np.trunc(g)
    if np.array_equal(whole, g):
        return qrels
    whole = whole + 0.0  # (-0.5 reads as 0, not -0)
    if qrels.raw_docs is not None:
        return Qrels(qrels.query_ids, qrels.offsets, None, None, whole, raw_docs=qrels.raw_docs)
    return Qrels(qrels.query_ids, qrels.offsets, qrels.doc_codes, qrels.doc_vocab, whole)


def grade_zero_relevant(qrels: Any) -> Any:
    """``qrels`` with every grade >= 0 raised by one: at relevance level 1 these judgments read as trec_eval
    reads the originals at -l0 (grade 0 relevant; negative grades stay judged "unjudged in the pool")."""
    import numpy as np

    from ragrade.data import Qrels

    g = qrels.grades
    shifted = np.where(g >= 0, g + 1.0, g)
    if qrels.raw_docs is not None:
        return Qrels(qrels.query_ids, qrels.offsets, None, None, shifted, raw_docs=qrels.raw_docs)
    return Qrels(qrels.query_ids, qrels.offsets, qrels.doc_codes, qrels.doc_vocab, shifted)


def four_field_lines(path: str, what: str, layout: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of a whitespace-separated file of four fields per line (``#`` comments and
    blank lines skipped), as trec_eval reads its -Z and qrels_jg files; anything else stops with the line."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, start=1):
                fields = line.split()
                if not fields or fields[0].startswith("#"):
                    continue
                if len(fields) != 4:
                    raise TrecEvalError(f"{path}, line {number}: a {what} line is '{layout}', got {line.strip()!r}")
                yield number, fields
    except OSError as err:
        raise TrecEvalError(f"cannot read the {what} file {path!r}: {err.strerror}") from None


def read_zscores(path: str) -> dict[str, dict[str, tuple[float, float]]]:
    """trec_eval's -Z file: ``qid measure mean stddev`` lines (``#`` comments and blank lines skipped)."""
    table: dict[str, dict[str, tuple[float, float]]] = {}
    for _, fields in four_field_lines(path, "z-score", "qid measure mean stddev"):
        table.setdefault(fields[0], {})[fields[1]] = (_atof(fields[2]), _atof(fields[3]))
    return table
