"""ROUGE-L over aligned (retrieved, reference) text pairs, batched.

Two variants:

* ``"standard"``: sentence-level ROUGE-L as in Google's ``rouge-score`` (``rougeL``, no stemming):
  lower-cased alphanumeric tokens, ``LCS / len(reference)`` (recall), ``LCS / len(candidate)``
  (precision) and their F1. LCS lengths come from rapidfuzz's bit-parallel ``LCSseq`` over token
  sequences encoded one character per token, for all pairs in one ``cpdist`` call.
* ``"union"``: the summary-level *union-LCS* of the ``rouge`` package used by continuous-eval's
  ``RougeChunkMatch`` (docs/profiles.md, continuous-eval): both texts split into sentences on every ``.``, whitespace collapsed,
  words split on single spaces (no lower-casing); for every (reference sentence, candidate sentence)
  pair one LCS is reconstructed with that package's back-tracking rule and reduced to its set of
  words; the union of those sets over all sentence pairs is the overlap; recall divides it by the
  number of distinct reference words, precision by the distinct candidate words.
  The dynamic programme is vectorised over all sentence pairs at once (one NumPy step per reference
  position, the row recurrence solved with ``maximum.accumulate``), and so is the back-tracking.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ragrade.errors import require
from ragrade.matching._text import TokenCoder, codes_of, rouge_score_tokens

_CELL_BUDGET = 4_000_000  # DP cells per batch (int32) -> ~16 MB per table


def _rapidfuzz():
    return require("rapidfuzz", extra="text", purpose="fuzzy and ROUGE text matching")


# -- standard ROUGE-L ------------------------------------------------------------------------------


def rouge_l_standard(candidates: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """``(n, 3)`` array of (precision, recall, f) of sentence-level ROUGE-L for aligned pairs.
    A pair where either side has no token scores 0."""
    rf = _rapidfuzz()
    c_codes, c_uniq = codes_of(candidates)
    r_codes, r_uniq = codes_of(references)
    coder = TokenCoder()
    c_tok = [coder.encode(rouge_score_tokens(t)) for t in c_uniq]
    r_tok = [coder.encode(rouge_score_tokens(t)) for t in r_uniq]
    c_len = np.array([len(t) for t in c_tok], dtype=np.float64)[c_codes] if len(c_codes) else np.zeros(0)
    r_len = np.array([len(t) for t in r_tok], dtype=np.float64)[r_codes] if len(r_codes) else np.zeros(0)
    c_str = [coder.as_chars(t) for t in c_tok]
    r_str = [coder.as_chars(t) for t in r_tok]
    n = len(c_codes)
    if n == 0:
        return np.zeros((0, 3))
    lcs = rf.process.cpdist(
        [c_str[i] for i in c_codes], [r_str[i] for i in r_codes],
        scorer=rf.distance.LCSseq.similarity, workers=1, dtype=np.int64,
    ).astype(np.float64)
    out = np.zeros((n, 3))
    ok = (c_len > 0) & (r_len > 0)
    p = np.divide(lcs, c_len, out=np.zeros(n), where=ok)
    r = np.divide(lcs, r_len, out=np.zeros(n), where=ok)
    f = np.divide(2 * p * r, p + r, out=np.zeros(n), where=(p + r) > 0)
    out[:, 0], out[:, 1], out[:, 2] = p, r, f
    return out


# -- continuous-eval's union LCS ------------------------------------------------------------------


def _sentences(text: str) -> list[str]:
    # The `rouge` package: split on ".", keep non-empty pieces, collapse whitespace.
    return [" ".join(piece.split()) for piece in text.split(".") if len(piece) > 0]


class _Parsed:
    """Sentences of the distinct texts as token codes (flat, with offsets), the sentences as strings of
    one character per token (for rapidfuzz), and the number of distinct words of each text.

    Tokenisation is done in bulk: all sentences are joined and split once, and tokens are coded with
    one ``pd.factorize`` over the whole corpus (``vocab`` is shared between the two sides)."""

    def __init__(self, texts: np.ndarray, vocab: dict[str, int]) -> None:
        sents_per_text = [_sentences(t) for t in texts.tolist()]
        self.n_sent = np.fromiter((len(x) for x in sents_per_text), dtype=np.int64, count=len(texts))
        self.sent_off = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(self.n_sent, out=self.sent_off[1:])
        sents = [x for ss in sents_per_text for x in ss]
        # words of a sentence are split on single spaces (whitespace is already collapsed)
        self.sent_len = np.fromiter((x.count(" ") + 1 for x in sents), dtype=np.int64, count=len(sents))
        words = " ".join(sents).split(" ") if sents else []
        codes, uniq = pd.factorize(np.asarray(words, dtype=object), sort=False)
        # map this side's codes into the shared vocabulary
        remap = np.fromiter((vocab.setdefault(w, len(vocab)) for w in uniq.tolist()), dtype=np.int64,
                            count=len(uniq))
        self.flat = remap[codes] if len(codes) else np.zeros(0, dtype=np.int64)
        self.tok_off = np.zeros(len(sents) + 1, dtype=np.int64)
        np.cumsum(self.sent_len, out=self.tok_off[1:])
        text_of_tok = np.repeat(np.repeat(np.arange(len(texts), dtype=np.int64), self.n_sent), self.sent_len)
        v = len(vocab) + 1
        key = _distinct(text_of_tok * v + self.flat)
        self.word_text, self.word_code = key // v, key % v  # distinct words of each text, by text
        self.word_off = np.searchsorted(self.word_text, np.arange(len(texts) + 1))
        self.n_words = np.diff(self.word_off).astype(np.int64)
        self._n_sents = len(sents)

    def chars(self) -> list[str] | list[list[int]]:
        """Each sentence as a string with one character per token code (surrogates skipped)."""
        if len(self.flat) and int(self.flat.max()) >= 0x10FFFF - 0x800 - 1:
            lst = self.flat.tolist()
            return [lst[a:b] for a, b in zip(self.tok_off[:-1].tolist(), self.tok_off[1:].tolist(), strict=True)]
        cp = self.flat + 1
        cp = np.where(cp < 0xD800, cp, cp + 0x800).astype("<u4")
        big = cp.tobytes().decode("utf-32-le")
        off = self.tok_off.tolist()
        return [big[off[i]: off[i + 1]] for i in range(self._n_sents)]

    def padded(self, sent: np.ndarray, width: int, fill: int) -> np.ndarray:
        """Token codes of sentences ``sent`` as a ``(len(sent), width)`` array padded with ``fill``."""
        col = np.arange(width, dtype=np.int64)
        inside = col[None, :] < self.sent_len[sent][:, None]
        where = np.where(inside, self.tok_off[sent][:, None] + col[None, :], 0)
        flat = self.flat if len(self.flat) else np.zeros(1, dtype=np.int64)
        return np.where(inside, flat[where], fill)


def _pair_sentences(ci: np.ndarray, ri: np.ndarray, cand: _Parsed, ref: _Parsed):
    """All (pair, reference sentence, candidate sentence) triples, flat."""
    nc = cand.n_sent[ci]
    nr = ref.n_sent[ri]
    per = nc * nr
    total = int(per.sum())
    pair = np.repeat(np.arange(len(ci), dtype=np.int64), per)
    local = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(per) - per, per)
    nc_rep = np.repeat(nc, per)
    r_sent = np.repeat(ref.sent_off[ri], per) + local // np.maximum(nc_rep, 1)
    c_sent = np.repeat(cand.sent_off[ci], per) + local % np.maximum(nc_rep, 1)
    return pair, r_sent, c_sent


def _distinct(x: np.ndarray) -> np.ndarray:
    """Sorted distinct values of an int64 array (sort-based; faster here than np.unique's hashing)."""
    if len(x) == 0:
        return np.zeros(0, dtype=np.int64)
    x = np.sort(x)
    return x[np.concatenate(([True], x[1:] != x[:-1]))]


def _bitlen(x: np.ndarray) -> np.ndarray:
    return np.ceil(np.log2(np.maximum(x, 1) + 1)).astype(np.int64)


def _lcs_words(r_tok: np.ndarray, r_len: np.ndarray, c_tok: np.ndarray, c_len: np.ndarray) -> np.ndarray:
    """Boolean ``(B, Lr)``: reference positions on the LCS that the `rouge` package reconstructs
    (back-tracking from the end: take a match; else go up if the cell above is strictly larger;
    else go left)."""
    b, lr = r_tok.shape
    lc = c_tok.shape[1]
    eq = r_tok[:, :, None] == c_tok[:, None, :]  # (B, Lr, Lc)
    table = np.zeros((b, lr + 1, lc + 1), dtype=np.int16 if max(lr, lc) < 32000 else np.int32)
    for i in range(1, lr + 1):
        prev = table[:, i - 1, :]
        cand = np.where(eq[:, i - 1, :], prev[:, :-1] + np.int16(1), prev[:, 1:]).astype(table.dtype, copy=False)
        np.maximum.accumulate(cand, axis=1, out=table[:, i, 1:])
    mark = np.zeros((b, lr), dtype=bool)
    ii: np.ndarray = r_len.astype(np.int64).copy()
    jj: np.ndarray = c_len.astype(np.int64).copy()
    rows = np.arange(b)
    active = np.flatnonzero((ii > 0) & (jj > 0))
    while len(active):
        ia, ja = ii[active], jj[active]
        e = eq[rows[active], ia - 1, ja - 1]
        up = table[active, ia - 1, ja]
        left = table[active, ia, ja - 1]
        mark[active[e], ia[e] - 1] = True
        go_up = ~e & (up > left)
        ii[active] = ia - (e | go_up)
        jj[active] = ja - (e | (~e & ~go_up))
        active = active[(ii[active] > 0) & (jj[active] > 0)]
    return mark


def _common_words(ci: np.ndarray, ri: np.ndarray, cand: _Parsed, ref: _Parsed, v: int) -> np.ndarray:
    """Number of distinct words shared by candidate text ``ci[p]`` and reference text ``ri[p]``."""

    def expand(parsed: _Parsed, t: np.ndarray) -> np.ndarray:
        cnt = parsed.n_words[t]
        p = np.repeat(np.arange(len(t), dtype=np.int64), cnt)
        local = np.arange(int(cnt.sum()), dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        return p * v + parsed.word_code[np.repeat(parsed.word_off[t], cnt) + local]

    keys = np.sort(np.concatenate([expand(cand, ci), expand(ref, ri)]))
    dup = keys[1:][keys[1:] == keys[:-1]]
    return np.bincount(dup // v, minlength=len(ci)).astype(np.int64)


def rouge_l_union(candidates: Sequence[str], references: Sequence[str],
                  prune: tuple[int, str, float] | None = None) -> np.ndarray:
    """``(n, 3)`` array of (precision, recall, f) of the `rouge` package's summary-level ROUGE-L for
    aligned pairs; NaN where that package raises (an empty text, or a text with no sentence), which
    continuous-eval treats as "no match".

    ``prune=(column, op, threshold)`` (op ``">="`` or ``">"``) is for threshold decisions only: pairs
    whose upper bound (distinct words the two texts share) cannot pass are not back-tracked and get
    the bound as their scores (below the threshold); all other pairs are exact."""
    rf = _rapidfuzz()
    n = len(candidates)
    if n == 0:
        return np.zeros((0, 3))
    c_codes, c_uniq = codes_of(candidates)
    r_codes, r_uniq = codes_of(references)
    vocab: dict[str, int] = {}
    cand = _Parsed(c_uniq, vocab)
    ref = _Parsed(r_uniq, vocab)
    c_empty = np.array([len(t) == 0 for t in c_uniq.tolist()], dtype=bool)
    r_empty = np.array([len(t) == 0 for t in r_uniq.tolist()], dtype=bool)
    valid = ~c_empty[c_codes] & ~r_empty[r_codes] & (cand.n_sent[c_codes] > 0) & (ref.n_sent[r_codes] > 0)
    # Work per distinct (candidate, reference) combination.
    key = c_codes * (len(r_uniq) + 1) + r_codes
    ukey, inv = np.unique(key, return_inverse=True)
    uc, ur = ukey // (len(r_uniq) + 1), ukey % (len(r_uniq) + 1)
    uvalid = np.zeros(len(ukey), dtype=bool)
    uvalid[inv] = valid
    ci, ri = uc[uvalid], ur[uvalid]
    m = ref.n_words[ri].astype(np.float64)
    nn = cand.n_words[ci].astype(np.float64)
    exact = np.ones(len(ci), dtype=bool)
    bound = None
    if prune is not None and len(ci):
        col, op, thr = prune
        common = _common_words(ci, ri, cand, ref, len(vocab) + 1).astype(np.float64)
        bp, br = common / nn, common / m
        bound = np.column_stack([bp, br, 2.0 * ((bp * br) / (bp + br + 1e-8))])
        exact = bound[:, col] >= thr if op == ">=" else bound[:, col] > thr
    work = np.flatnonzero(exact)
    pair, r_sent, c_sent = _pair_sentences(ci[work], ri[work], cand, ref)
    pair = work[pair]
    overlap = np.zeros(len(ci), dtype=np.int64)
    if len(pair):
        # Skip sentence pairs whose LCS is empty (one C call for all of them).
        r_chars, c_chars = ref.chars(), cand.chars()
        lcs = rf.process.cpdist([r_chars[s] for s in r_sent.tolist()], [c_chars[s] for s in c_sent.tolist()],
                                scorer=rf.distance.LCSseq.similarity, workers=1, dtype=np.int64)
        keep = lcs > 0
        pair, r_sent, c_sent = pair[keep], r_sent[keep], c_sent[keep]
        words_pair: list[np.ndarray] = []
        words_code: list[np.ndarray] = []
        rl, cl = ref.sent_len[r_sent], cand.sent_len[c_sent]
        # Bucket sentence pairs by the bit length of both sides (little padding, few buckets).
        bucket = _bitlen(rl) * 64 + _bitlen(cl)
        for bk in np.unique(bucket).tolist():
            sel = np.flatnonzero(bucket == bk)
            width_r, width_c = int(rl[sel].max()), int(cl[sel].max())
            step = max(1, _CELL_BUDGET // ((width_r + 1) * (width_c + 1)))
            for s0 in range(0, len(sel), step):
                idx = sel[s0 : s0 + step]
                rt = ref.padded(r_sent[idx], width_r, -1)
                ct = cand.padded(c_sent[idx], width_c, -2)
                mark = _lcs_words(rt, rl[idx], ct, cl[idx])
                rows, cols = np.nonzero(mark)
                words_pair.append(pair[idx][rows])
                words_code.append(rt[rows, cols])
        if words_pair:
            wp = np.concatenate(words_pair)
            wc = np.concatenate(words_code)
            k = _distinct(wp * (len(vocab) + 1) + wc)
            overlap = np.bincount(k // (len(vocab) + 1), minlength=len(ci)).astype(np.int64)
    uscores = np.full((len(ukey), 3), np.nan)
    p = overlap / nn
    r = overlap / m
    f = 2.0 * ((p * r) / (p + r + 1e-8))
    vals = np.column_stack([p, r, f])
    if bound is not None:
        vals[~exact] = bound[~exact]
    uscores[uvalid] = vals
    return uscores[inv]
