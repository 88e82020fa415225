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
from dataclasses import dataclass, field
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

@dataclass
class SpanInputs:
    """Everything the span measures read, in global coordinates (see the module docstring).

    ``gold_*``: one row per gold span (``gold_query``: the query's index, 0..n_queries-1).
    ``ret_*``: one row per retrieved chunk (``ret_rank``: its 0-based position in the query's ranking).
    ``chunk_start``/``chunk_end``: the whole chunking, sorted by start, for precision_omega and
    ``retrieve=-1`` (None when not given). ``token_map(tokenizer)``: the sorted global offsets at which the
    corpus's tokens start under a tokenizer. ``semantics``: ``default``, ``chroma`` or ``legalbench_rag``.
    ``cache``: lengths shared by the measures of one evaluation.
    """

    n_queries: int
    gold_query: np.ndarray
    gold_start: np.ndarray
    gold_end: np.ndarray
    ret_query: np.ndarray
    ret_rank: np.ndarray
    ret_start: np.ndarray
    ret_end: np.ndarray
    chunk_start: np.ndarray | None = None
    chunk_end: np.ndarray | None = None
    semantics: str = "default"
    token_map: Callable[[str], np.ndarray] | None = None
    cache: dict[Any, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.semantics not in SEMANTICS:
            raise ValueError(f"unknown span semantics {self.semantics!r}")

    @property
    def width(self) -> int:
        if "width" not in self.cache:
            arrays = [self.gold_end, self.ret_end] + ([self.chunk_end] if self.chunk_end is not None else [])
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


def _top(metric: Metric, inp: SpanInputs) -> np.ndarray | None:
    """A mask of the retrieved rows the metric reads (None: every row)."""
    if metric.get("retrieve") == -1:
        k = cutoffs(metric, inp)
        assert k is not None
        return inp.ret_rank < k[inp.ret_query]
    if metric.k is None or (len(inp.ret_rank) and int(inp.ret_rank.max()) < metric.k):
        return None
    return inp.ret_rank < metric.k


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


def ratio(num: np.ndarray, den: np.ndarray, empty: float) -> np.ndarray:
    """``num / den`` (float64), ``empty`` where ``den`` is 0."""
    out = np.full(len(num), empty, dtype=np.float64)
    ok = den != 0
    out[ok] = num[ok].astype(np.float64) / den[ok].astype(np.float64)
    return out


def _lengths_for(metric: Metric, inp: SpanInputs) -> _Lengths | _RowLengths:
    key = ("lengths", metric.k, metric.get("retrieve"), metric.get("tokenizer"))
    if key not in inp.cache:
        inp.cache[key] = lengths(inp, _top(metric, inp), metric.get("tokenizer"))
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
              if k == "width" or (isinstance(k, tuple) and k[0] in ("tokens", "gold", "gold rows"))}
    counts = np.bincount(group, minlength=inp.n_queries)
    rank = np.arange(len(group)) - np.repeat(np.cumsum(counts) - counts, counts)  # (pairs come grouped)
    omega = SpanInputs(inp.n_queries, inp.gold_query, inp.gold_start, inp.gold_end, group, rank,
                       inp.chunk_start[idx], inp.chunk_end[idx], token_map=inp.token_map, cache=shared)
    p = lengths(omega, None, metric.get("tokenizer"))
    den = p.gold_union + p.ret_union - p.inter
    if chroma:  # no chunk touches the gold: Chroma's score stays 0 (a zero numerator over the gold)
        den = np.where(np.bincount(group, minlength=inp.n_queries) == 0, p.gold_union, den)
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


__all__ = ["CHROMA_CAP", "SEMANTICS", "TOKENIZERS", "SpanInputs", "covered", "cutoffs", "fraction", "key_width",
           "keys", "lengths", "overlap_pairs", "pieces", "pooled", "ratio", "span_iou", "span_precision", "span_precision_omega", "span_recall",
           "token_starts", "touching", "union_length"]
