"""Span measures: character (or token) overlap between retrieved chunks and gold spans, as sorted-interval
arithmetic over flat arrays (docs/spans.md).

Every interval is ``[start, end)`` in **global coordinates**: the caller places each document at its own
offset (``doc_base[doc] + position``, the documents separated by at least one position), so that intervals
of different documents never overlap nor touch, and every query's intervals are one group. A group's
intervals are keyed ``group * width + coordinate`` (``width`` above every coordinate): one sort of the keys
puts every group's intervals together, in order, and the lengths below follow with no Python loop per
interval or per pair.

* :func:`union_length`: the length of the union of each group's intervals. The starts and the ends are
  sorted *independently*: the i-th smallest end is never below the i-th smallest start, and the union is
  the disjoint pieces ``[s_i, min(e_i, s_(i+1)))`` (the depth ``#starts <= x - #ends <= x`` is positive
  exactly there), so two plain sorts and a subtraction give it.
* :func:`covered`: for each interval of one set, the length of it covered by the union of a group's
  intervals of another set (a prefix sum over the pieces, read with a binary search).
* :func:`touching`: the chunks of a chunking that overlap (or, Chroma's rule, touch) any gold span of a
  query.

The measures (:func:`span_recall`, :func:`span_precision`, :func:`span_iou`, :func:`span_precision_omega`)
read a :class:`SpanInputs` and follow its ``semantics``:

* ``"default"`` (union): gold ``R`` and retrieved ``C`` are point sets; ``I = |C ∩ R|``; recall ``I/|R|``,
  precision ``I/|C|`` (0 when nothing is retrieved), IoU ``I/|C ∪ R|``; precision_omega is the IoU of every
  chunk of the chunking that overlaps gold (touching is not overlapping).
* ``"chroma"``: Chroma's chunking_evaluation with every quirk: recall ``I / Σ|r|``, precision ``I / Σ|c|``
  (a plain sum over the top k: chunks listed twice or overlapping count twice, chunks of other documents
  count), IoU ``I / (Σ|c| + Σ_r |r \\ C|)``; a chunk that only touches a span "contains" it (for
  precision_omega and for ``retrieve=-1``, where each query's k is the number of such chunks); a precision
  or IoU over an empty top k is NaN (Chroma divides by zero).
* ``"legalbench_rag"``: no union: precision ``Σ_c Σ_r |c ∩ r| / Σ|c|``, recall ``Σ_r Σ_c |c ∩ r| / Σ|r|``
  (0 when a denominator is 0; recall may exceed 1 when retrieved snippets overlap; gold spans are disjoint).

Token-level variants (``tokenizer=whitespace``, ``tokenizer=cl100k_base``, ...) measure lengths in tokens:
a length is the number of tokens that *start* inside the interval (a character tiktoken splits over several
tokens starts each of them), so every endpoint goes through one
monotone map (:func:`token_starts`, then ``searchsorted``) and the arithmetic above is unchanged. Which
chunks overlap or touch gold is decided on characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.metrics.parser import Metric

SEMANTICS = ("default", "chroma", "legalbench_rag")
#: Chroma's collection query returns at most 20 results with ``retrieve=-1``: the chroma profile's cap when the
#: metric gives no cutoff.
CHROMA_CAP = 20
_MAX_KEY = 1 << 62


# -- interval primitives ----------------------------------------------------------------------------------

def key_width(*coordinate_arrays: np.ndarray) -> int:
    """One more than the largest coordinate of the arrays (at least 1): the stride of :func:`keys`."""
    top = 0
    for a in coordinate_arrays:
        if len(a):
            top = max(top, int(np.max(a)))
    return top + 1


def keys(group: np.ndarray, coord: np.ndarray, width: int) -> np.ndarray:
    """``group * width + coord`` as int64 (the caller checked that it fits: :func:`check_width`)."""
    return np.asarray(group, dtype=np.int64) * np.int64(width) + np.asarray(coord, dtype=np.int64)


def check_width(n_groups: int, width: int) -> None:
    """Refuse coordinates whose composite keys would not fit in 62 bits."""
    if n_groups * width >= _MAX_KEY:
        raise OverflowError(f"{n_groups} queries over coordinates up to {width} exceed the 62-bit keys of the "
                            "span kernels; evaluate the queries in smaller batches")


def pieces(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of intervals as disjoint sorted pieces ``(piece starts, piece ends)``, from the keys of their
    starts and ends (any order; composite keys keep groups apart). Pieces may be empty."""
    ks = np.sort(starts)
    ke = np.sort(ends)
    if len(ks) == 0:
        return ks, ke
    nxt = np.empty_like(ks)
    nxt[:-1] = ks[1:]
    nxt[-1] = ke[-1]
    return ks, np.minimum(ke, nxt)


def union_length(group: np.ndarray, start: np.ndarray, end: np.ndarray, n_groups: int,
                 width: int | None = None) -> np.ndarray:
    """Per group (0..n_groups-1), the length of the union of its intervals (int64)."""
    if width is None:
        width = key_width(start, end)
    check_width(n_groups, width)
    ps, pe = pieces(keys(group, start, width), keys(group, end, width))
    return group_sums(ps // width, pe - ps, n_groups)


def group_sums(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Sum of ``values`` (integers) per group, as int64."""
    if len(values) == 0:
        return np.zeros(n_groups, dtype=np.int64)
    return np.bincount(group, weights=values, minlength=n_groups).astype(np.int64)


def coverage(ps: np.ndarray, pe: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """``F(x)``: the length of the pieces (from :func:`pieces`) left of each key ``x``."""
    lengths = pe - ps
    before = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)

    def f(x: np.ndarray) -> np.ndarray:
        if len(ps) == 0:
            return np.zeros(len(x), dtype=np.int64)
        j = np.searchsorted(ps, x, side="right") - 1
        ok = j >= 0
        jj = np.where(ok, j, 0)
        inside = np.clip(x - ps[jj], 0, lengths[jj])
        return np.where(ok, before[jj] + inside, 0)

    return f


def covered(a_start: np.ndarray, a_end: np.ndarray, b_pieces: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """For each interval ``a`` (keys), the length of it covered by the union of intervals given as their
    :func:`pieces` (keys of the same groups): ``|a ∩ ∪b|``."""
    if len(a_start) == 0:
        return np.zeros(0, dtype=np.int64)
    f = coverage(*b_pieces)
    return f(np.asarray(a_end)) - f(np.asarray(a_start))


def overlap_pairs(gold_start: np.ndarray, gold_end: np.ndarray, chunk_start: np.ndarray, chunk_end: np.ndarray,
                  *, touch: bool) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(gold row, chunk index)`` pair of a gold span and a chunk that overlap (``touch``: or only
    touch, Chroma's ``start <= end`` rule). Chunks sorted by start; global coordinates (documents apart).
    No Python loop: the candidates of each span are a range of the sorted chunks, found by binary search."""
    if len(chunk_start) == 0 or len(gold_start) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    top_end = np.maximum.accumulate(chunk_end)  # non-decreasing: chunks left of lo end before the span
    by_start = np.argsort(gold_start, kind="stable")  # binary searches in key order are much faster
    back = np.empty_like(by_start)
    back[by_start] = np.arange(len(by_start))
    if touch:
        hi = np.searchsorted(chunk_start, gold_end[by_start], side="right")[back]
        lo = np.searchsorted(top_end, gold_start[by_start], side="left")[back]
    else:
        hi = np.searchsorted(chunk_start, gold_end[by_start], side="left")[back]
        lo = np.searchsorted(top_end, gold_start[by_start], side="right")[back]
    count = np.maximum(hi - lo, 0)
    rows = np.repeat(np.arange(len(gold_start)), count)
    first = np.repeat(lo - np.concatenate([[0], np.cumsum(count)[:-1]]), count)
    idx = first + np.arange(len(rows))
    ce, gs = chunk_end[idx], gold_start[rows]
    keep = ce >= gs if touch else (ce > gs) & (chunk_start[idx] < gold_end[rows])
    return rows[keep], idx[keep]


def touching(gold_group: np.ndarray, gold_start: np.ndarray, gold_end: np.ndarray, chunk_start: np.ndarray,
             chunk_end: np.ndarray, *, touch: bool) -> tuple[np.ndarray, np.ndarray]:
    """The ``(group, chunk index)`` pairs, each once, of the chunks that overlap a gold span of the group
    (``touch``: also those that only touch it, Chroma's ``start <= end`` rule)."""
    rows, idx = overlap_pairs(gold_start, gold_end, chunk_start, chunk_end, touch=touch)
    if len(rows) == 0:
        return rows, idx
    group = np.asarray(gold_group)[rows]
    pair = np.sort(keys(group, idx, len(chunk_start)))
    pair = pair[np.concatenate([[True], pair[1:] != pair[:-1]])] if len(pair) else pair  # each pair once
    return pair // len(chunk_start), pair % len(chunk_start)


# -- tokens ------------------------------------------------------------------------------------------------

_WORD = re.compile(r"\S+")
TOKENIZERS = ("chars", "whitespace", "tiktoken", "cl100k_base", "o200k_base", "p50k_base", "r50k_base")


def token_starts(text: str, tokenizer: str) -> np.ndarray:
    """The code-point offsets at which the tokens of ``text`` start: ``whitespace`` (runs of non-space) or a
    tiktoken encoding (``tiktoken`` is cl100k_base), imported when first asked for."""
    if tokenizer == "whitespace":
        return np.fromiter((m.start() for m in _WORD.finditer(text)), dtype=np.int64)
    enc = _encoding(tokenizer)
    tokens = enc.encode_ordinary(text)
    if not tokens:
        return np.zeros(0, dtype=np.int64)
    _, offsets = enc.decode_with_offsets(tokens)
    return np.sort(np.asarray(offsets, dtype=np.int64))  # (a character split over several tokens: each counts)


def _encoding(name: str) -> Any:
    from ragrade.errors import InputError, require

    tiktoken = require("tiktoken", extra="text", purpose="span measures counted in tiktoken tokens")
    encoding = "cl100k_base" if name == "tiktoken" else name
    try:
        return tiktoken.get_encoding(encoding)
    except OSError as exc:  # tiktoken downloads an encoding's file once, then caches it
        raise InputError(f"tiktoken cannot load the {encoding} encoding ({type(exc).__name__}): it downloads it "
                         "once (set TIKTOKEN_CACHE_DIR to a folder holding it when offline)") from None


# -- the measures -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Retrieved:
    """Each query's retrieved chunks in rank order, as indices into one array of intervals (a chunk retrieved
    by many queries is stored once): query ``q`` reads the rows ``seg_lo[q] .. seg_hi[q]-1`` of ``row_iv``;
    a row holds the index of its interval in ``iv_start``/``iv_end``, or -1 (a row that is not read, such as
    a repeat a policy dropped: the ranks close up over it)."""

    seg_lo: np.ndarray
    seg_hi: np.ndarray
    row_iv: np.ndarray
    iv_start: np.ndarray
    iv_end: np.ndarray

    def flat(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(query, rank, start, end)``: one row per retrieved chunk read, grouped by query, ranks 0, 1, ..."""
        lengths = np.asarray(self.seg_hi - self.seg_lo, dtype=np.int64)
        total = int(lengths.sum())
        query = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
        before = np.cumsum(lengths) - lengths
        rows = np.arange(total, dtype=np.int64) + np.repeat(np.asarray(self.seg_lo, dtype=np.int64) - before, lengths)
        iv = np.asarray(self.row_iv, dtype=np.int64)[rows]
        keep = iv >= 0
        if not keep.all():
            query, iv = query[keep], iv[keep]
        counts = np.bincount(query, minlength=len(lengths))
        rank = np.arange(len(query), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        return query, rank, self.iv_start[iv], self.iv_end[iv]


class SpanInputs:
    """Everything the span measures read, in global coordinates (see the module docstring).

    ``gold_*``: one row per gold span (``gold_query``: the query's index, 0..n_queries-1).
    ``ret_*``: one row per retrieved chunk (``ret_rank``: its 0-based position in the query's ranking); or,
    instead, ``retrieved`` (a :class:`Retrieved`: the same rows as indices into the chunks' intervals; the flat
    arrays are then made only where a path reads them).
    ``chunk_start``/``chunk_end``: the whole chunking, sorted by start, for precision_omega and
    ``retrieve=-1`` (None when not given). ``token_map(tokenizer)``: the sorted global offsets at which the
    corpus's tokens start under a tokenizer. ``semantics``: ``default``, ``chroma`` or ``legalbench_rag``.
    ``cache``: lengths shared by the measures of one evaluation.
    """

    def __init__(self, n_queries: int, gold_query: np.ndarray, gold_start: np.ndarray, gold_end: np.ndarray,
                 ret_query: np.ndarray | None = None, ret_rank: np.ndarray | None = None,
                 ret_start: np.ndarray | None = None, ret_end: np.ndarray | None = None,
                 chunk_start: np.ndarray | None = None, chunk_end: np.ndarray | None = None,
                 semantics: str = "default", token_map: Callable[[str], np.ndarray] | None = None,
                 cache: dict[Any, Any] | None = None, *, retrieved: Retrieved | None = None) -> None:
        if semantics not in SEMANTICS:
            raise ValueError(f"unknown span semantics {semantics!r}")
        flat = (ret_query, ret_rank, ret_start, ret_end)
        given = [a is not None for a in flat]
        if not (all(given) if retrieved is None else not any(given)):
            raise ValueError("give the retrieved rows either as ret_query, ret_rank, ret_start and ret_end or as "
                             "retrieved")
        self.n_queries = n_queries
        self.gold_query, self.gold_start, self.gold_end = gold_query, gold_start, gold_end
        self.chunk_start, self.chunk_end = chunk_start, chunk_end
        self.semantics = semantics
        self.token_map = token_map
        self.cache: dict[Any, Any] = {} if cache is None else cache
        self.retrieved = retrieved
        self._flat = None if retrieved is not None else flat

    def _rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if self._flat is None:
            assert self.retrieved is not None
            self._flat = self.retrieved.flat()
        return self._flat  # type: ignore[return-value]

    @property
    def ret_query(self) -> np.ndarray:
        return self._rows()[0]

    @property
    def ret_rank(self) -> np.ndarray:
        return self._rows()[1]

    @property
    def ret_start(self) -> np.ndarray:
        return self._rows()[2]

    @property
    def ret_end(self) -> np.ndarray:
        return self._rows()[3]

    @property
    def n_retrieved(self) -> int:
        """The number of retrieved rows (before any cutoff)."""
        if self._flat is None:
            assert self.retrieved is not None
            return int(np.count_nonzero(self.retrieved.row_iv >= 0)) if len(self.retrieved.row_iv) else 0
        return len(self._flat[0])  # type: ignore[arg-type]

    @property
    def width(self) -> int:
        if "width" not in self.cache:
            ends = [self.gold_end] + ([self.retrieved.iv_end] if self.retrieved is not None else [self.ret_end])
            arrays = ends + ([self.chunk_end] if self.chunk_end is not None else [])
            self.cache["width"] = key_width(*arrays)
            check_width(self.n_queries, self.cache["width"])
        return int(self.cache["width"])


def _tokens(inp: SpanInputs, tokenizer: str | None) -> Callable[[np.ndarray], np.ndarray]:
    """The map of coordinates into the tokenizer's (identity for characters)."""
    if tokenizer in (None, "chars"):
        return lambda x: x
    if inp.token_map is None:
        raise ValueError("token-level span measures need the documents' texts")
    starts = inp.cache.get(("tokens", tokenizer))
    if starts is None:
        starts = inp.cache[("tokens", tokenizer)] = np.asarray(inp.token_map(tokenizer), dtype=np.int64)
    return lambda x: np.searchsorted(starts, x, side="left").astype(np.int64)


def gold_touch_counts(inp: SpanInputs, touch: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(group, chunk index)`` of the chunks overlapping (touching) each query's gold: cached."""
    key = ("touching", touch)
    if key not in inp.cache:
        if inp.chunk_start is None or inp.chunk_end is None:
            raise ValueError("precision_omega and retrieve=-1 need the whole chunking (a chunk map)")
        inp.cache[key] = touching(inp.gold_query, inp.gold_start, inp.gold_end, inp.chunk_start, inp.chunk_end,
                                  touch=touch)
    return inp.cache[key]


def cutoffs(metric: Metric, inp: SpanInputs) -> np.ndarray | None:
    """Each query's number of retrieved chunks read (None: the whole list)."""
    k = metric.k
    if metric.get("retrieve") == -1:
        group, _ = gold_touch_counts(inp, touch=inp.semantics == "chroma")
        per_query = np.bincount(group, minlength=inp.n_queries).astype(np.int64)
        cap = CHROMA_CAP if k is None and inp.semantics == "chroma" else k
        return per_query if cap is None else np.minimum(per_query, cap)
    return None if k is None else np.full(inp.n_queries, k, dtype=np.int64)


def _cut(metric: Metric, inp: SpanInputs) -> np.ndarray | None:
    """Each query's number of retrieved chunks the metric reads (None: every one)."""
    if metric.get("retrieve") == -1:
        return cutoffs(metric, inp)
    return None if metric.k is None else np.full(inp.n_queries, metric.k, dtype=np.int64)


def _mask(inp: SpanInputs, k: np.ndarray | None) -> np.ndarray | None:
    """The retrieved rows within each query's cutoff, as a mask (None: every row)."""
    if k is None:
        return None
    rows = inp.ret_rank < k[inp.ret_query]
    return None if rows.all() else rows


class _Lengths:
    """The lengths one cutoff's measures divide, per query, each computed on first use: ``inter`` = |C ∩ R|,
    ``gold_union`` = |R|, ``ret_union`` = |C|, ``gold_sum`` = Σ|r|, ``ret_sum`` = Σ|c|, ``gold_covered`` =
    Σ_r |r ∩ C|, ``ret_covered`` = Σ_c |c ∩ R| (C: the retrieved rows read; R: the gold spans)."""

    def __init__(self, inp: SpanInputs, rows: np.ndarray | None, tokenizer: str | None) -> None:
        self.n, self.w = inp.n_queries, inp.width
        tok = _tokens(inp, tokenizer)
        self.gold = _gold_keys(inp, tokenizer, tok)
        rq, rs, re_ = inp.ret_query, inp.ret_start, inp.ret_end
        if rows is not None:
            rq, rs, re_ = rq[rows], rs[rows], re_[rows]
        self.rq = rq
        self.ret = (keys(rq, tok(rs), self.w), keys(rq, tok(re_), self.w))
        self._done: dict[str, Any] = {}

    def _get(self, name: str, make: Callable[[], Any]) -> Any:
        if name not in self._done:
            self._done[name] = make()
        return self._done[name]

    def _union(self, pc: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        return group_sums(pc[0] // self.w, pc[1] - pc[0], self.n)

    @property
    def gold_pieces(self) -> tuple[np.ndarray, np.ndarray]:
        return self._get("gp", lambda: pieces(*self.gold[1:]))

    @property
    def ret_pieces(self) -> tuple[np.ndarray, np.ndarray]:
        return self._get("rp", lambda: pieces(*self.ret))

    @property
    def gold_union(self) -> np.ndarray:
        return self._get("gu", lambda: self._union(self.gold_pieces))

    @property
    def ret_union(self) -> np.ndarray:
        return self._get("ru", lambda: self._union(self.ret_pieces))

    @property
    def inter(self) -> np.ndarray:
        gp = self.gold_pieces  # disjoint: the sum of their covered lengths is |R ∩ C|
        return self._get("i", lambda: group_sums(gp[0] // self.w, covered(gp[0], gp[1], self.ret_pieces), self.n))

    @property
    def gold_sum(self) -> np.ndarray:
        g = self.gold
        return self._get("gs", lambda: group_sums(g[0], g[2] - g[1], self.n))

    @property
    def ret_sum(self) -> np.ndarray:
        return self._get("rs", lambda: group_sums(self.rq, self.ret[1] - self.ret[0], self.n))

    @property
    def gold_covered(self) -> np.ndarray:
        g = self.gold
        return self._get("gc", lambda: group_sums(g[0], covered(g[1], g[2], self.ret_pieces), self.n))

    @property
    def ret_covered(self) -> np.ndarray:
        r = self.ret
        return self._get("rc", lambda: group_sums(self.rq, covered(r[0], r[1], self.gold_pieces), self.n))


def _gold_keys(inp: SpanInputs, tokenizer: str | None, tok: Callable[[np.ndarray], np.ndarray]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(query, start keys, end keys)`` of the gold spans under a tokenizer (cached)."""
    key = ("gold", tokenizer)
    if key not in inp.cache:
        gq, w = inp.gold_query, inp.width
        inp.cache[key] = (gq, keys(gq, tok(inp.gold_start), w), keys(gq, tok(inp.gold_end), w))
    return inp.cache[key]


# -- the row-wise path: each query's few intervals as one row of a matrix --------------------------------------

#: the widest row (retrieved chunks read, or gold spans, of one query) the row-wise path takes
DENSE_MAX = 64


@dataclass
class Rows:
    """Each query's intervals as one column of two matrices of shape (intervals, queries): ``start`` and
    ``end``, sorted by start within each query (padding: an empty interval past every coordinate); ``keys``:
    the sorted packed keys, one row per query (start above ``bits`` bits of length). Every operation below is
    a few vector operations over all the queries at once, per row of the matrices."""

    keys: np.ndarray
    bits: int
    start: np.ndarray
    end: np.ndarray

    @classmethod
    def of_keys(cls, keys: np.ndarray, bits: int) -> Rows:
        """From packed keys, one row per query (sorted here, in place)."""
        keys.sort(axis=1)
        t = keys.T.copy()  # (a copy even where the transpose is already contiguous: keys stay as they are)
        s = t >> bits
        t &= (1 << bits) - 1
        t += s
        return cls(keys, bits, s, t)

    @cached_property
    def pieces(self) -> tuple[np.ndarray, np.ndarray]:
        """The disjoint pieces of each query's union (empty ones where an interval adds nothing): each
        interval from where the intervals before it end."""
        ps = np.maximum.accumulate(self.end, axis=0)  # (the furthest end so far, row by row)
        ps[1:] = np.maximum(self.start[1:], ps[:-1])
        ps[0] = self.start[0]
        return ps, np.maximum(self.end, ps)

    @property
    def union(self) -> np.ndarray:
        ps, pe = self.pieces
        return (pe - ps).sum(axis=0)

    def total(self) -> np.ndarray:
        return (self.end - self.start).sum(axis=0)

    def with_bits(self, bits: int) -> np.ndarray:
        """The packed keys with ``bits`` bits of length (a copy; ``bits`` >= this one's)."""
        if bits == self.bits:
            return self.keys.copy()
        return ((self.keys >> self.bits) << bits) | (self.keys & ((1 << self.bits) - 1))


def key_bits(*pairs: tuple[np.ndarray, np.ndarray]) -> int | None:
    """The bits of length of packed keys holding these intervals, or None when the keys would not fit in 62
    bits."""
    longest = max((int((e - s).max()) for s, e in pairs if len(s)), default=0)
    top = max((int(e.max()) for _, e in pairs if len(e)), default=0)
    bits = max(1, longest.bit_length())
    return None if (top + 2) >> (62 - bits) else bits


def row_matrix(query: np.ndarray, position: np.ndarray, start: np.ndarray, end: np.ndarray, n: int,
               cols: int, bits: int) -> Rows:
    """The intervals laid out one query per row of a (queries, intervals) matrix of packed keys
    (``position``: the column), then sorted within each query (see :class:`Rows`)."""
    pad = ((1 << (62 - bits)) - 1) << bits  # start past every coordinate, length 0
    keys_ = np.full((n, max(cols, 1)), pad, dtype=np.int64)
    keys_[query, position] = (start << bits) | (end - start)
    return Rows.of_keys(keys_, bits)


def overlap_sums(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Per query, ``Σ_i Σ_j |a_i ∩ b_j|`` of two matrices of intervals (one vector operation per pair of
    rows)."""
    total = np.zeros(a[0].shape[1], dtype=np.int64)
    lo = np.empty_like(total)
    hi = np.empty_like(total)
    for i in range(a[0].shape[0]):
        for j in range(b[0].shape[0]):
            np.maximum(a[0][i], b[0][j], out=lo)
            np.minimum(a[1][i], b[1][j], out=hi)
            np.subtract(hi, lo, out=hi)
            np.maximum(hi, 0, out=hi)
            total += hi
    return total


class _RowLengths:
    """:class:`_Lengths` computed row by row (the row-wise path; same quantities, same integers):
    ``inter`` = |C| + |R| - |C ∪ R|, the union of C and R from their keys merged and sorted again."""

    def __init__(self, gold: Rows, ret: Rows) -> None:
        self.g, self.r = gold, ret

    @cached_property
    def gold_union(self) -> np.ndarray:
        return self.g.union

    @cached_property
    def ret_union(self) -> np.ndarray:
        return self.r.union

    @cached_property
    def gold_sum(self) -> np.ndarray:
        return self.g.total()

    @cached_property
    def ret_sum(self) -> np.ndarray:
        return self.r.total()

    @cached_property
    def inter(self) -> np.ndarray:
        both = Rows.of_keys(np.concatenate([self.r.keys, self.g.with_bits(self.r.bits)], axis=1), self.r.bits)
        return self.gold_union + self.ret_union - both.union

    @cached_property
    def gold_covered(self) -> np.ndarray:
        if bool((self.gold_union == self.gold_sum).all()):  # disjoint gold spans: Σ_r |r ∩ C| = |R ∩ C|
            return self.inter
        return overlap_sums((self.g.start, self.g.end), self.r.pieces)

    @cached_property
    def ret_covered(self) -> np.ndarray:
        return overlap_sums((self.r.start, self.r.end), self.g.pieces)


def _gold_rows(inp: SpanInputs, tokenizer: str | None, tok: Callable[[np.ndarray], np.ndarray]) -> Rows | None:
    key = ("gold rows", tokenizer)
    if key not in inp.cache:
        counts = np.bincount(inp.gold_query, minlength=inp.n_queries)
        widest = int(counts.max()) if len(counts) else 0
        gs, ge = tok(inp.gold_start), tok(inp.gold_end)
        bits = key_bits((gs, ge), (tok(inp.ret_start), tok(inp.ret_end)))
        rows = None
        if widest <= DENSE_MAX and bits is not None:
            order = np.argsort(inp.gold_query, kind="stable")
            q = inp.gold_query[order]
            first = np.concatenate([[0], np.cumsum(counts)[:-1]])
            pos = np.empty(len(q), dtype=np.int64)
            pos[order] = np.arange(len(q)) - first[q]
            rows = row_matrix(inp.gold_query, pos, gs, ge, inp.n_queries, widest, bits)
        inp.cache[key] = rows
    return inp.cache[key]


def lengths(inp: SpanInputs, rows: np.ndarray | None, tokenizer: str | None) -> _Lengths | _RowLengths:
    """The lengths of the retrieved ``rows`` (a mask or indices; None: all) against the gold (see
    :class:`_Lengths`): row by row when every query has at most :data:`DENSE_MAX` retrieved chunks read and
    gold spans, else over the flat arrays."""
    rq, rank = inp.ret_query, inp.ret_rank
    if rows is not None:
        rq, rank = rq[rows], rank[rows]
    widest = int(rank.max()) + 1 if len(rank) else 0
    if widest <= DENSE_MAX and len(rq) * 4 >= inp.n_queries * widest:
        tok = _tokens(inp, tokenizer)
        gold = _gold_rows(inp, tokenizer, tok)
        if gold is not None:
            rs, re_ = (inp.ret_start, inp.ret_end) if rows is None else (inp.ret_start[rows], inp.ret_end[rows])
            return _RowLengths(gold, row_matrix(rq, rank, tok(rs), tok(re_), inp.n_queries, widest, gold.bits))
    return _Lengths(inp, rows, tokenizer)


# -- the native path: one pass per query in the C helper ------------------------------------------------------

#: whether the C helper (``ragrade._accel.span_lengths``) computes the lengths when it is built (the tests turn it
#: off to compare the paths; ``RAGRADE_NO_ACCEL=1`` turns the helper off altogether)
NATIVE = True


def _accel() -> Any:
    if not NATIVE:
        return None
    from ragrade._native import accel

    return accel if accel is not None and hasattr(accel, "span_lengths") else None


class Counted:
    """The lengths of :class:`_Lengths` (same names, same integers) from the C helper's one pass: ``inter``,
    ``gold_union``, ``ret_union``, ``gold_sum``, ``ret_sum``, ``gold_covered``, ``ret_covered``. ``ret_union``
    (which needs each query's retrieved chunks sorted) is computed by a second pass when first asked for."""

    def __init__(self, out: np.ndarray, again: Callable[[], np.ndarray]) -> None:
        (self.inter, self.gold_union, self._ret_union, self.gold_sum, self.ret_sum, self.gold_covered,
         self.ret_covered) = out
        self._again = again

    @property
    def ret_union(self) -> np.ndarray:
        if len(self._ret_union) and int(self._ret_union.min()) < 0:
            self._ret_union = self._again()[2]
        return self._ret_union


def _i64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int64)


def _index(a: np.ndarray) -> np.ndarray:
    """Row indices as the C helper reads them: int32 kept as it is, anything else as int64."""
    return a if a.dtype == np.int32 and a.flags.c_contiguous else _i64(a)


def _segments(group: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` of each group's rows, for rows sorted by group (0..n-1)."""
    counts = np.bincount(group, minlength=n) if len(group) else np.zeros(n, dtype=np.int64)
    if len(counts) != n:
        raise ValueError("a span or retrieved row names a query past n_queries")
    hi = np.cumsum(counts, dtype=np.int64)
    return hi - counts, hi


def _gold_segments(inp: SpanInputs, tokenizer: str | None, tok: Callable[[np.ndarray], np.ndarray]
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(lo, hi, start, end)``: the gold spans grouped by query (cached)."""
    key = ("gold segments", tokenizer)
    if key not in inp.cache:
        gq, gs, ge = _i64(inp.gold_query), tok(inp.gold_start), tok(inp.gold_end)
        if len(gq) > 1 and bool((gq[1:] < gq[:-1]).any()):
            order = np.argsort(gq, kind="stable")
            gq, gs, ge = gq[order], gs[order], ge[order]
        lo, hi = _segments(gq, inp.n_queries)
        inp.cache[key] = (lo, hi, _i64(gs), _i64(ge))
    return inp.cache[key]


def _native_retrieved(inp: SpanInputs, k: np.ndarray | None, tokenizer: str | None,
                      tok: Callable[[np.ndarray], np.ndarray]) -> tuple[Retrieved, np.ndarray]:
    """The retrieved rows as :class:`Retrieved` (made from the flat arrays when given so: rows sorted by query
    and rank) and each query's number of rows read."""
    n = inp.n_queries
    r = inp.retrieved
    if r is not None:
        every = np.full(n, len(r.row_iv), dtype=np.int64) if k is None else k
        return _retrieved_table(inp, tokenizer, tok), _i64(every)
    retrieved, q, rank = _retrieved_rows(inp, tokenizer, tok)
    if k is None:
        read = retrieved.seg_hi - retrieved.seg_lo
    else:  # the rows within the cutoff: a prefix of each query's rows sorted by rank
        read = np.bincount(q[rank < k[q]], minlength=n).astype(np.int64) if len(q) else np.zeros(n, np.int64)
    return retrieved, read


def _retrieved_table(inp: SpanInputs, tokenizer: str | None, tok: Callable[[np.ndarray], np.ndarray]) -> Retrieved:
    """The given :class:`Retrieved` as the C helper reads it (cached: the same for every cutoff)."""
    key = ("retrieved table", tokenizer)
    if key not in inp.cache:
        r = inp.retrieved
        assert r is not None
        inp.cache[key] = Retrieved(_i64(r.seg_lo), _i64(r.seg_hi), _index(r.row_iv), _i64(tok(r.iv_start)),
                                   _i64(tok(r.iv_end)))
    return inp.cache[key]


def _retrieved_rows(inp: SpanInputs, tokenizer: str | None, tok: Callable[[np.ndarray], np.ndarray]
                    ) -> tuple[Retrieved, np.ndarray, np.ndarray]:
    """The flat retrieved rows as :class:`Retrieved` (rows sorted by query and rank), with their query and
    rank columns (cached: the same for every cutoff)."""
    key = ("retrieved rows", tokenizer)
    if key not in inp.cache:
        q, rank = _i64(inp.ret_query), _i64(inp.ret_rank)
        grouped = len(q) < 2 or bool(((q[1:] > q[:-1]) | ((q[1:] == q[:-1]) & (rank[1:] > rank[:-1]))).all())
        order = np.arange(len(q), dtype=np.int64) if grouped else np.lexsort((rank, q)).astype(np.int64)
        lo, hi = _segments(q[order], inp.n_queries)
        inp.cache[key] = (Retrieved(lo, hi, order, _i64(tok(inp.ret_start)), _i64(tok(inp.ret_end))), q, rank)
    return inp.cache[key]


def _native_lengths(accel: Any, inp: SpanInputs, k: np.ndarray | None, tokenizer: str | None) -> Counted | None:
    """The lengths from the C helper, or None when its 64-bit sums could overflow (the NumPy path then decides)."""
    tok = _tokens(inp, tokenizer)
    glo, ghi, gs, ge = _gold_segments(inp, tokenizer, tok)
    r, read = _native_retrieved(inp, k, tokenizer, tok)
    def call(with_union: bool) -> np.ndarray | None:
        out = np.empty(7 * inp.n_queries, dtype=np.int64)
        if accel.span_lengths(read, r.seg_lo, r.seg_hi, r.row_iv, r.iv_start, r.iv_end, glo, ghi, gs, ge, out,
                              with_union):
            return None
        return out.reshape(7, inp.n_queries)

    first = call(False)
    return None if first is None else Counted(first, lambda: call(True))  # type: ignore[arg-type,return-value]


def lengths_at(inp: SpanInputs, k: np.ndarray | None, tokenizer: str | None) -> Any:
    """The lengths (see :class:`_Lengths`) of the first ``k[q]`` retrieved chunks of each query ``q`` (None:
    all): from the C helper when it is built, else from NumPy (:func:`lengths`); the same integers."""
    accel = _accel()
    if accel is not None:
        got = _native_lengths(accel, inp, k, tokenizer)
        if got is not None:
            return got
    return lengths(inp, _mask(inp, k), tokenizer)


def ratio(num: np.ndarray, den: np.ndarray, empty: float) -> np.ndarray:
    """``num / den`` (float64), ``empty`` where ``den`` is 0."""
    out = np.full(len(num), empty, dtype=np.float64)
    ok = den != 0
    out[ok] = num[ok].astype(np.float64) / den[ok].astype(np.float64)
    return out


def _lengths_for(metric: Metric, inp: SpanInputs) -> Any:
    key = ("lengths", metric.k, metric.get("retrieve"), metric.get("tokenizer"))
    if key not in inp.cache:
        inp.cache[key] = lengths_at(inp, _cut(metric, inp), metric.get("tokenizer"))
    return inp.cache[key]


Fraction = tuple[np.ndarray, np.ndarray, float]


def _recall(metric: Metric, inp: SpanInputs) -> Fraction:
    p = _lengths_for(metric, inp)
    if inp.semantics == "chroma":
        return p.inter, p.gold_sum, np.nan
    if inp.semantics == "legalbench_rag":
        return p.ret_covered, p.gold_sum, 0.0
    return p.inter, p.gold_union, np.nan


def _precision(metric: Metric, inp: SpanInputs) -> Fraction:
    p = _lengths_for(metric, inp)
    if inp.semantics == "chroma":
        return p.inter, p.ret_sum, np.nan
    if inp.semantics == "legalbench_rag":
        return p.ret_covered, p.ret_sum, 0.0
    return p.inter, p.ret_union, 0.0


def _iou(metric: Metric, inp: SpanInputs) -> Fraction:
    if inp.semantics == "legalbench_rag":
        raise ValueError("LegalBench-RAG defines span precision and recall only")
    p = _lengths_for(metric, inp)
    if inp.semantics == "chroma":
        return p.inter, p.ret_sum + p.gold_sum - p.gold_covered, np.nan
    return p.inter, p.gold_union + p.ret_union - p.inter, np.nan


def _omega(metric: Metric, inp: SpanInputs) -> Fraction:
    if inp.semantics == "legalbench_rag":
        raise ValueError("LegalBench-RAG defines span precision and recall only")
    chroma = inp.semantics == "chroma"
    group, idx = gold_touch_counts(inp, touch=chroma)
    assert inp.chunk_start is not None and inp.chunk_end is not None
    shared = {k: v for k, v in inp.cache.items()
              if k == "width" or (isinstance(k, tuple) and k[0] in ("tokens", "gold", "gold rows", "gold segments"))}
    counts = np.bincount(group, minlength=inp.n_queries)
    hi = np.cumsum(counts)  # (pairs come grouped)
    touched = Retrieved(hi - counts, hi, idx, inp.chunk_start, inp.chunk_end)
    omega = SpanInputs(inp.n_queries, inp.gold_query, inp.gold_start, inp.gold_end, token_map=inp.token_map,
                       cache=shared, retrieved=touched)
    p = lengths_at(omega, None, metric.get("tokenizer"))
    den = p.gold_union + p.ret_union - p.inter
    if chroma:  # no chunk touches the gold: Chroma's score stays 0 (a zero numerator over the gold)
        den = np.where(counts == 0, p.gold_union, den)
    return p.inter, den, np.nan


FRACTIONS: dict[str, Callable[[Metric, SpanInputs], Fraction]] = {
    "span_recall": _recall, "span_precision": _precision, "span_iou": _iou, "span_precision_omega": _omega}


def fraction(metric: Metric, inp: SpanInputs) -> Fraction:
    """``(numerators, denominators, value where a denominator is 0)`` of a span measure, per query."""
    return FRACTIONS[metric.name](metric, inp)


def pooled(metric: Metric, inp: SpanInputs, queries: np.ndarray | None = None) -> float:
    """The measure over every query's lengths at once (the sum of the numerators over the sum of the
    denominators: long gold spans weigh more), over ``queries`` (indices; None: all)."""
    num, den, empty = fraction(metric, inp)
    if queries is not None:
        num, den = num[queries], den[queries]
    total = float(den.sum())
    return float(num.sum()) / total if total else empty


def span_recall(metric: Metric, inp: SpanInputs) -> np.ndarray:
    """Share of the gold covered by the top k (per query)."""
    return ratio(*_recall(metric, inp))


def span_precision(metric: Metric, inp: SpanInputs) -> np.ndarray:
    """Share of the top k that is gold (per query)."""
    return ratio(*_precision(metric, inp))


def span_iou(metric: Metric, inp: SpanInputs) -> np.ndarray:
    """Intersection over union of the top k and the gold (per query)."""
    return ratio(*_iou(metric, inp))


def span_precision_omega(metric: Metric, inp: SpanInputs) -> np.ndarray:
    """The IoU of every chunk of the chunking that overlaps the gold (touches it, under Chroma's rule): the
    ceiling of span_iou with perfect retrieval (per query)."""
    return ratio(*_omega(metric, inp))


__all__ = ["CHROMA_CAP", "SEMANTICS", "TOKENIZERS", "Counted", "Retrieved", "SpanInputs", "covered", "cutoffs",
           "fraction", "key_width", "keys", "lengths", "lengths_at", "overlap_pairs", "pieces", "pooled", "ratio", "span_iou", "span_precision", "span_precision_omega", "span_recall",
           "token_starts", "touching", "union_length"]
