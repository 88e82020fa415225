"""ROUGE-L over aligned (retrieved, reference) text pairs, batched.

Two variants:

* ``"standard"``: sentence-level ROUGE-L as in Google's ``rouge-score`` (``rougeL``, no stemming):
  lower-cased alphanumeric tokens, ``LCS / len(reference)`` (recall), ``LCS / len(candidate)``
  (precision) and their F1. LCS lengths come from rapidfuzz's bit-parallel ``LCSseq`` over token
  sequences encoded one character per token, for all pairs in one ``cpdist`` call.
* ``"union"``: the summary-level *union-LCS* of the ``rouge`` package used by continuous-eval's
  ``RougeChunkMatch`` (SPEC 4.3): both texts split into sentences on every ``.``, whitespace collapsed,
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
    """Sentences of the distinct texts as token-code arrays, plus distinct-word counts."""

    def __init__(self, texts: np.ndarray, coder: TokenCoder) -> None:
        self.sent_off = np.zeros(len(texts) + 1, dtype=np.int64)  # text -> sentence range
        tokens: list[list[int]] = []
        n_words = np.zeros(len(texts), dtype=np.int64)
        for i, t in enumerate(texts.tolist()):
            sents = _sentences(t)
            toks = [coder.encode(s.split(" ")) for s in sents]
            tokens.extend(toks)
            self.sent_off[i + 1] = self.sent_off[i] + len(sents)
            n_words[i] = len({c for s in toks for c in s})
        self.tokens = tokens
        self.n_words = n_words
        self.sent_len = np.array([len(s) for s in tokens], dtype=np.int64)
        self.n_sent = np.diff(self.sent_off)
        self.tok_off = np.zeros(len(tokens) + 1, dtype=np.int64)
        np.cumsum(self.sent_len, out=self.tok_off[1:])
        self.flat = np.fromiter((c for s in tokens for c in s), dtype=np.int64, count=int(self.tok_off[-1]))

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


def _bitlen(x: np.ndarray) -> np.ndarray:
    return np.ceil(np.log2(np.maximum(x, 1) + 1)).astype(np.int64)


def _lcs_words(r_tok: np.ndarray, r_len: np.ndarray, c_tok: np.ndarray, c_len: np.ndarray) -> np.ndarray:
    """Boolean ``(B, Lr)``: reference positions on the LCS that the `rouge` package reconstructs
    (back-tracking from the end: take a match; else go up if the cell above is strictly larger;
    else go left)."""
    b, lr = r_tok.shape
    lc = c_tok.shape[1]
    eq = r_tok[:, :, None] == c_tok[:, None, :]  # (B, Lr, Lc)
    table = np.zeros((b, lr + 1, lc + 1), dtype=np.int32)
    for i in range(1, lr + 1):
        prev = table[:, i - 1, :]
        cand = np.where(eq[:, i - 1, :], prev[:, :-1] + 1, prev[:, 1:])
        np.maximum.accumulate(cand, axis=1, out=table[:, i, 1:])
    mark = np.zeros((b, lr), dtype=bool)
    i = r_len.astype(np.int64).copy()
    j = c_len.astype(np.int64).copy()
    rows = np.arange(b)
    active = np.flatnonzero((i > 0) & (j > 0))
    while len(active):
        ia, ja = i[active], j[active]
        e = eq[rows[active], ia - 1, ja - 1]
        up = table[active, ia - 1, ja]
        left = table[active, ia, ja - 1]
        mark[active[e], ia[e] - 1] = True
        go_up = ~e & (up > left)
        i[active] = ia - (e | go_up)
        j[active] = ja - (e | (~e & ~go_up))
        active = active[(i[active] > 0) & (j[active] > 0)]
    return mark


def rouge_l_union(candidates: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """``(n, 3)`` array of (precision, recall, f) of the `rouge` package's summary-level ROUGE-L for
    aligned pairs; NaN where that package raises (an empty text, or a text with no sentence), which
    continuous-eval treats as "no match"."""
    rf = _rapidfuzz()
    n = len(candidates)
    if n == 0:
        return np.zeros((0, 3))
    c_codes, c_uniq = codes_of(candidates)
    r_codes, r_uniq = codes_of(references)
    coder = TokenCoder()
    cand = _Parsed(c_uniq, coder)
    ref = _Parsed(r_uniq, coder)
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
    pair, r_sent, c_sent = _pair_sentences(ci, ri, cand, ref)
    overlap = np.zeros(len(ci), dtype=np.int64)
    if len(pair):
        # Skip sentence pairs whose LCS is empty (one C call for all of them).
        r_chars = [coder.as_chars(t) for t in ref.tokens]
        c_chars = [coder.as_chars(t) for t in cand.tokens]
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
            k = np.unique(wp * (len(coder) + 1) + wc)
            overlap = np.bincount(k // (len(coder) + 1), minlength=len(ci)).astype(np.int64)
    m = ref.n_words[ri].astype(np.float64)
    nn = cand.n_words[ci].astype(np.float64)
    uscores = np.full((len(ukey), 3), np.nan)
    p = overlap / nn
    r = overlap / m
    f = 2.0 * ((p * r) / (p + r + 1e-8))
    uscores[uvalid] = np.column_stack([p, r, f])
    return uscores[inv]
