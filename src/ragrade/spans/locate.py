"""Where a chunk's text lies in its document (docs/spans.md, "Locating chunks").

:func:`locate_chunks` finds each text in three stages, each only for what the one before left:

1. **exact**: an index of every text's first :data:`ANCHOR` characters (a 64-bit polynomial hash) is matched
   against every window of every document in one vectorised pass per document (a prefix-sum rolling hash,
   documents read once), and each candidate is checked by comparing the whole text. With a document hint
   (the chunker's document) only that document's candidates count; with ``ordered`` (a chunker's output,
   in document order) the occurrence after the previous chunk's start nearest its end is taken, so
   repeated passages map to successive occurrences. Texts shorter than the anchor are found with ``str.find``.
2. **whitespace-normalised**: runs of whitespace read as one space on both sides (splitters that strip or
   rejoin whitespace), the position mapped back to the document's own offsets.
3. **fuzzy** (rapidfuzz's ``partial_ratio_alignment``, score >= ``floor``): within the hinted document near
   the neighbouring chunks, or within documents up to :data:`FUZZY_MAX` characters.

The result is a :class:`~ragrade.spans.model.ChunkMap` of the located chunks with a :class:`LocationReport`
(``chunks.report``): how each was found, the texts not located (left out of the map) and the texts found
at more than one place of their document (the position taken is said).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import ragrade.spans.arguments as A
from ragrade.errors import InputError
from ragrade.options import public
from ragrade.spans.model import ChunkMap, Corpus

ANCHOR = 32
FUZZY_MAX = 200_000
_B = np.uint64(0x100000001B3)  # odd: invertible modulo 2**64
_B_INV = np.uint64(pow(0x100000001B3, -1, 1 << 64))
_BLOCK = 1 << 22
_WS = re.compile(r"\s+")


@dataclass
class LocationReport:
    """What :func:`locate_chunks` did: ``methods`` (exact / whitespace / fuzzy counts), ``unlocated`` (rows
    ``(index, chunk id, document hint, text)`` not found), ``duplicated`` (``(index, chunk id, occurrences,
    start taken)``: texts found at several places of their document), ``fuzzy_scores`` (index -> score)."""

    methods: Counter[str] = field(default_factory=Counter)
    unlocated: list[tuple[int, str, str | None, str]] = field(default_factory=list)
    duplicated: list[tuple[int, str, int, int]] = field(default_factory=list)
    fuzzy_scores: dict[int, float] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The report in sentences (for notes)."""
        out = [f"{n} chunk(s) located {how}" for how, n in sorted(self.methods.items())]
        if self.unlocated:
            _, cid, doc, text = self.unlocated[0]
            where = f" in document {doc!r}" if doc else ""
            out.append(f"{len(self.unlocated)} chunk text(s) not found (first: chunk {cid!r}{where}, "
                       f"{text[:50]!r}); they are left out")
        if self.duplicated:
            _, cid, n, at = self.duplicated[0]
            out.append(f"{len(self.duplicated)} chunk text(s) occur more than once in their document (first: chunk "
                       f"{cid!r}, {n} times; taken at {at})")
        return out


# -- hashing -----------------------------------------------------------------------------------------------

def _codes(text: str) -> np.ndarray:
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8).astype(np.uint64)
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)


_POWERS: dict[int, np.ndarray] = {}


def _powers(n: int, base: np.uint64) -> np.ndarray:
    """``base ** i`` modulo 2**64 for i < n (a prefix of one table kept per base, grown as needed)."""
    key = int(base)
    table = _POWERS.get(key)
    if table is None or len(table) < n:
        size = max(n, 1 << 16)
        out = np.full(size, base, dtype=np.uint64)
        out[0] = 1
        with np.errstate(over="ignore"):
            table = np.cumprod(out, dtype=np.uint64)
        _POWERS[key] = table
    return table[:n]


def _window_hashes(text: str, q: int) -> np.ndarray:
    """The hash of every window of ``q`` code points of ``text`` (position i: ``text[i:i + q]``)."""
    n = len(text)
    if n < q:
        return np.zeros(0, dtype=np.uint64)
    out = np.empty(n - q + 1, dtype=np.uint64)
    for lo in range(0, n - q + 1, _BLOCK):  # blocks bound the memory of one long document
        hi = min(n - q + 1, lo + _BLOCK)
        c = _codes(text[lo: hi + q - 1])
        with np.errstate(over="ignore"):
            pre = np.empty(len(c) + 1, dtype=np.uint64)
            pre[0] = 0
            np.cumsum(c * _powers(len(c), _B), dtype=np.uint64, out=pre[1:])
            out[lo:hi] = (pre[q:] - pre[:-q]) * _powers(hi - lo, _B_INV)
    return out


def _prefix_hashes(texts: list[str], q: int) -> np.ndarray:
    """The hash of the first ``q`` code points of each text (each at least ``q`` long), all at once."""
    if not texts:
        return np.zeros(0, dtype=np.uint64)
    joined = "".join(t[:q] for t in texts)
    codes = _codes(joined).reshape(len(texts), q)
    with np.errstate(over="ignore"):
        return np.asarray(np.sum(codes * _powers(q, _B)[None, :], axis=1, dtype=np.uint64), dtype=np.uint64)


class _Anchors:
    """The anchor hashes of the texts to find, sorted, with a bit table of their low bits that lets most
    windows of a document be dismissed without a binary search."""

    def __init__(self, hashes: np.ndarray, who: np.ndarray) -> None:
        order = np.argsort(hashes)
        self.sorted, self.who = hashes[order], who[order]
        bits = int(min(26, max(16, np.ceil(np.log2(max(len(hashes), 1))) + 6)))
        self.mask = np.uint64((1 << bits) - 1)
        self.table = np.zeros(1 << bits, dtype=bool)
        self.table[(hashes & self.mask).astype(np.int64)] = True

    def candidates(self, wh: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(positions, lo, hi)``: the windows whose hash is an anchor's, with the range of the anchors."""
        pos = np.flatnonzero(self.table[(wh & self.mask).astype(np.int64)])
        h = wh[pos]
        lo = np.searchsorted(self.sorted, h, side="left")
        hi = np.searchsorted(self.sorted, h, side="right")
        keep = hi > lo
        return pos[keep], lo[keep], hi[keep]


# -- stage 1: exact ------------------------------------------------------------------------------------------

def _occurrences(corpus: Mapping[str, str], texts: Sequence[str], wanted: list[int],
                 hints: Sequence[str | None]) -> dict[int, list[tuple[str, int]]]:
    """``{text index: [(doc, start), ...]}``: every exact occurrence of each wanted text (anchor hash, then
    a full comparison), in the hinted document only where there is a hint."""
    long = [i for i in wanted if len(texts[i]) >= ANCHOR]
    found: dict[int, list[tuple[str, int]]] = {i: [] for i in wanted}
    if long:
        anchors = _Anchors(_prefix_hashes([texts[i] for i in long], ANCHOR), np.asarray(long))
        docs = {hints[i] for i in long}
        scan = list(corpus) if None in docs else [d for d in corpus if d in docs]
        for doc in scan:
            _scan_document(corpus[doc], doc, anchors, texts, hints, found)
    for i in wanted:
        if len(texts[i]) < ANCHOR:
            found[i] = _find_all(corpus, texts[i], hints[i])
    return found


def _scan_document(text: str, doc: str, anchors: _Anchors, texts: Sequence[str], hints: Sequence[str | None],
                   found: dict[int, list[tuple[str, int]]]) -> None:
    wh = _window_hashes(text, ANCHOR)
    if len(wh) == 0:
        return
    pos, lo, hi = anchors.candidates(wh)
    who = anchors.who
    for p, a, b in zip(pos.tolist(), lo.tolist(), hi.tolist(), strict=True):
        for j in range(a, b):
            i = int(who[j])
            if hints[i] is not None and hints[i] != doc:
                continue
            if text.startswith(texts[i], p):
                found[i].append((doc, p))


def _find_all(corpus: Mapping[str, str], needle: str, hint: str | None) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    if not needle:
        return out
    for doc in ([hint] if hint is not None and hint in corpus else [] if hint is not None else list(corpus)):
        text = corpus[doc]
        at = text.find(needle)
        while at >= 0:
            out.append((doc, at))
            at = text.find(needle, at + 1)
    return out


def _choose(places: list[tuple[str, int]], previous: tuple[str, int, int] | None, ordered: bool) -> tuple[str, int]:
    """The occurrence taken: in order, among those after the previous chunk's start in the same document, the
    one nearest the previous chunk's end (a chunker starts the next chunk there, or a little before when
    chunks overlap); else, and without order, the first."""
    if ordered and previous is not None:
        after = [(abs(at - previous[2]), at, doc) for doc, at in places if doc == previous[0] and at > previous[1]]
        if after:
            _, at, doc = min(after)
            return doc, at
    return places[0]


# -- stage 2: whitespace ----------------------------------------------------------------------------------------

def _normalised(text: str) -> tuple[str, np.ndarray]:
    """``text`` with each run of whitespace read as one space, and the offset in ``text`` of every character
    of it (plus the end)."""
    runs = np.array([m.span() for m in _WS.finditer(text)], dtype=np.int64).reshape(-1, 2)
    keep = np.ones(len(text), dtype=bool)
    extra = runs[:, 1] - runs[:, 0] - 1  # every character of a run but its first is dropped
    if extra.sum():
        first = np.repeat(runs[:, 0] + 1, extra)
        keep[first + (np.arange(int(extra.sum())) - np.repeat(np.cumsum(extra) - extra, extra))] = False
    pos = np.concatenate([np.flatnonzero(keep), np.array([len(text)], dtype=np.int64)])
    return _WS.sub(" ", text), pos


def _whitespace(corpus: Mapping[str, str], text: str, hint: str | None, cache: dict[str, Any]
                ) -> tuple[str, int, int] | None:
    needle = _WS.sub(" ", text).strip()
    if not needle:
        return None
    for doc in ([hint] if hint is not None else list(corpus)):
        if doc not in corpus:
            continue
        if doc not in cache:
            cache[doc] = _normalised(corpus[doc])
        norm, pos = cache[doc]
        at = norm.find(needle)
        if at >= 0:
            return doc, int(pos[at]), int(pos[at + len(needle) - 1]) + 1
    return None


# -- stage 3: fuzzy ---------------------------------------------------------------------------------------------

def _fuzzy(corpus: Mapping[str, str], text: str, hint: str | None, window: tuple[int, int] | None, floor: float,
           ) -> tuple[str, int, int, float] | None:
    from ragrade.errors import require

    fuzz = require("rapidfuzz.fuzz", package="rapidfuzz", extra="text", purpose="locating chunks by fuzzy matching")
    best: tuple[str, int, int, float] | None = None
    for doc in ([hint] if hint is not None else list(corpus)):
        if doc not in corpus:
            continue
        lo, hi = window if window is not None and doc == hint else (0, len(corpus[doc]))
        if hi - lo > FUZZY_MAX:
            continue
        al = fuzz.partial_ratio_alignment(text, corpus[doc][lo:hi], score_cutoff=floor)
        if al is not None and (best is None or al.score > best[3]):
            best = (doc, lo + al.dest_start, lo + al.dest_end, float(al.score))
    return best


# -- the whole ------------------------------------------------------------------------------------------------

@public(corpus=A.CORPUS, texts=A.TEXTS, docs=A.DOC_HINTS, ids=A.CHUNK_IDS, ordered=A.ORDERED, fuzzy=A.FUZZY,
        floor=A.FLOOR, name=A.LABEL)
def locate_chunks(corpus: Any, texts: Sequence[str], docs: Sequence[str | None] | None = None,
                  ids: Sequence[str] | None = None, *, ordered: bool | None = None, fuzzy: bool = True,
                  floor: float = 90.0, name: str = "") -> ChunkMap:
    """The chunk map of ``texts`` in ``corpus`` (a :class:`~ragrade.spans.model.Corpus`, a mapping, a
    folder or a file: :func:`ragrade.spans.read_corpus`), with its :class:`LocationReport` as ``.report``.

    ``docs``: each text's document where known (a chunker's), else None for every document. ``ids``: the
    chunk ids (default ``doc#n``, n counting the document's chunks from 0, or ``chunk-i`` without a document).
    ``ordered`` (default: True when ``docs`` is given): the texts of each document come in document order.
    ``floor``: the lowest rapidfuzz score (0-100) a fuzzy location may have; ``fuzzy=False`` skips that
    stage. See the module docstring."""
    from ragrade.spans.read import read_corpus

    corp = read_corpus(corpus)
    texts = [_text(t, i) for i, t in enumerate(texts)]
    hints: list[str | None] = list(docs) if docs is not None else [None] * len(texts)
    if len(hints) != len(texts) or (ids is not None and len(ids) != len(texts)):
        raise InputError("texts, docs and ids must have the same length")
    unknown = next((d for d in hints if d is not None and d not in corp), None)
    if unknown is not None:
        raise InputError("a chunk's document is not in the corpus", item=str(unknown))
    if not 0 <= floor <= 100:
        raise InputError("floor must be a rapidfuzz score between 0 and 100", value=floor)
    in_order = docs is not None if ordered is None else ordered
    report = LocationReport()
    places = _exact(corp, texts, hints, in_order, report)
    _later_stages(corp, texts, hints, places, report, fuzzy, floor, in_order)
    return _chunk_map(texts, hints, ids, places, report, name, corp.source if isinstance(corp, Corpus) else "")


def _text(t: Any, i: int) -> str:
    if not isinstance(t, str):
        raise InputError(f"chunk {i}: a chunk text must be a string", value=type(t).__name__)
    return t


def _exact(corpus: Mapping[str, str], texts: list[str], hints: list[str | None], ordered: bool,
           report: LocationReport) -> dict[int, tuple[str, int, int]]:
    wanted = [i for i, t in enumerate(texts) if t]
    found = _occurrences(corpus, texts, wanted, hints)
    places: dict[int, tuple[str, int, int]] = {}
    previous: dict[str | None, tuple[str, int, int]] = {}
    for i in wanted:
        occ = sorted(found[i])
        if not occ:
            continue
        doc, at = _choose(occ, previous.get(hints[i]), ordered)
        previous[hints[i]] = (doc, at, at + len(texts[i]))
        places[i] = (doc, at, at + len(texts[i]))
        report.methods["exactly"] += 1
        same_doc = sum(1 for d, _ in occ if d == doc)
        if same_doc > 1:
            report.duplicated.append((i, "", same_doc, at))
    return places


def _later_stages(corpus: Mapping[str, str], texts: list[str], hints: list[str | None],
                  places: dict[int, tuple[str, int, int]], report: LocationReport, fuzzy: bool, floor: float,
                  ordered: bool) -> None:
    cache: dict[str, Any] = {}
    for i, t in enumerate(texts):
        if i in places or not t.strip():
            continue
        hit = _whitespace(corpus, t, hints[i], cache)
        if hit is not None:
            places[i] = hit
            report.methods["after normalising whitespace"] += 1
            continue
        if fuzzy:
            got = _fuzzy(corpus, t, hints[i], _window(i, hints, places, texts) if ordered else None, floor)
            if got is not None:
                places[i] = got[:3]
                report.fuzzy_scores[i] = got[3]
                report.methods["by fuzzy matching"] += 1


def _window(i: int, hints: list[str | None], places: dict[int, tuple[str, int, int]], texts: list[str]
            ) -> tuple[int, int] | None:
    """Near the located neighbours of chunk ``i`` in its document (ordered chunks)."""
    doc = hints[i]
    before = [places[j][1] for j in range(i - 1, -1, -1) if j in places and hints[j] == doc][:1]
    after = [places[j][2] for j in range(i + 1, len(texts)) if j in places and hints[j] == doc][:1]
    if not before and not after:
        return None
    lo = max(0, (before[0] if before else 0) - len(texts[i]))
    hi = (after[0] if after else (before[0] + 3 * len(texts[i]))) + len(texts[i])
    return lo, hi


def _chunk_map(texts: list[str], hints: list[str | None], ids: Sequence[str] | None,
               places: dict[int, tuple[str, int, int]], report: LocationReport, name: str, source: str) -> ChunkMap:
    counters: Counter[str] = Counter()
    all_ids: list[str] = []
    for i in range(len(texts)):
        hint = hints[i]
        all_ids.append(str(ids[i]) if ids is not None else f"{hint}#{counters[hint]}" if hint is not None
                       else f"chunk-{i}")
        if hint is not None:
            counters[hint] += 1
    keep = [i for i in range(len(texts)) if i in places]
    report.unlocated = [(i, all_ids[i], hints[i], texts[i]) for i in range(len(texts))
                        if i not in places and texts[i].strip()]
    report.duplicated = [(i, all_ids[i], n, at) for i, _, n, at in report.duplicated]
    return ChunkMap.from_columns([all_ids[i] for i in keep], [places[i][0] for i in keep],
                                 [places[i][1] for i in keep], [places[i][2] for i in keep],
                                 [texts[i] for i in keep], name=name, source=source, report=report)


__all__ = ["ANCHOR", "LocationReport", "locate_chunks"]
