"""Telling a file's layout from its text: TREC lines (:func:`sniff_trec`, :func:`sniff_short_trec`), a header
row (:func:`looks_like_header`), Arrow's reading of numbers (:func:`is_arrow_number`), and the rule that
reads the third column of a headerless three-column run as ranks or scores (:func:`values_are_ranks`)."""

from __future__ import annotations

import re

import numpy as np

from ragrade.errors import ParseError
from ragrade.io.columns import HEADER_WORDS as _HEADER_WORDS
from ragrade.io.textfiles import RowLocator

_ARROW_NUMBER = re.compile(
    r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan(?:\([^)]*\))?)",
    re.IGNORECASE | re.ASCII,
)


def is_arrow_number(token: str | bytes) -> bool:
    """Whether pyarrow reads ``token`` as a float64 (plain decimals, ``inf``/``infinity``/``nan`` in any
    case). Python's ``float`` is laxer (``1_000``, non-ASCII digits): error paths use this, so that the line
    they blame is the one pyarrow refused."""
    if isinstance(token, bytes):
        try:
            token = token.decode("ascii")
        except UnicodeDecodeError:
            return False
    return _ARROW_NUMBER.fullmatch(token) is not None


def split_fields(line: str) -> list[str]:
    """``line`` split on ASCII whitespace only (as the TREC readers split; ``str.split`` would also split
    on no-break and other Unicode spaces inside an id)."""
    return [f.decode("utf-8", errors="replace") for f in line.encode("utf-8", errors="surrogatepass").split()]


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def sniff_trec(line: str) -> str | None:
    """``"qrels"`` / ``"run"`` if ``line`` looks like a TREC qrels / run line, else None.

    Rule: split on runs of whitespace; 4 fields whose last is a number → qrels (``qid iter docno rel``);
    6 fields (or more: trec_eval ignores what follows the tag) whose 4th and 5th are numbers → run
    (``qid Q0 docno rank score tag``); and no field is a known header word (``query``, ``doc``,
    ``score``, ``qid``, ``docno``, ``rank``, ...).
    """
    fields = split_fields(line)
    if any(f.lower() in _HEADER_WORDS for f in fields[:6]):
        return None
    if len(fields) == 4 and _is_number(fields[3]):
        return "qrels"
    if len(fields) >= 6 and _is_number(fields[3]) and _is_number(fields[4]):
        return "run"
    return None


def sniff_short_trec(line: str) -> str | None:
    """``"run"`` for a line of three whitespace-separated fields ending in a number (``qid doc score`` or
    MS MARCO's ``qid doc rank``), ``"qrels"`` for two fields (``qid doc``: every listed document relevant),
    else None; no field may be a header word."""
    fields = split_fields(line)
    if any(f.lower() in _HEADER_WORDS for f in fields):
        return None
    if len(fields) == 3 and _is_number(fields[2]):
        return "run"
    if len(fields) == 2:
        return "qrels"
    return None


def looks_like_header(fields: list[str]) -> bool:
    """A first row is a header unless its last field is a number and no field is a known column name."""
    if any(f.strip().lower() in _HEADER_WORDS for f in fields):
        return True
    return not (fields and _is_number(fields[-1].strip()))


def value_segments(qkeys: np.ndarray) -> np.ndarray:
    """Starts of the runs of equal neighbours in ``qkeys`` (per-row query codes), with ``len`` appended."""
    n = len(qkeys)
    if n == 0:
        return np.zeros(1, dtype=np.int64)
    return np.append(np.flatnonzero(np.r_[True, qkeys[1:] != qkeys[:-1]]), n).astype(np.int64)


def values_are_ranks(values: np.ndarray, starts: np.ndarray, seg_queries: np.ndarray, *, path: str,
                     locate: RowLocator) -> bool:
    """The rule that reads the third column of a headerless ``qid doc NUMBER`` run (docs/formats.md,
    "Three-column runs"): ranks (MS MARCO's ``qid pid rank``) or scores.

    ``starts`` are the first rows of the runs of consecutive lines with one query (``len`` appended) and
    ``seg_queries`` the query of each run (codes or ids). The numbers are **ranks** when every one is an
    integer, they strictly increase down each query's lines, and each query's smallest is 0 or 1; they
    are **scores** when any is not an integer, or when they never increase down a query's lines (a file
    written best first). Anything else (integers that go up and down) is ambiguous: a
    :class:`ParseError` asks for ``format="msmarco"`` or ``format="qid-doc-score"``.
    """
    v = np.asarray(values, dtype=np.float64)
    n = len(v)
    if n == 0 or not np.isfinite(v).all() or not (v == np.floor(v)).all():
        return False
    inside = np.ones(max(n - 1, 0), dtype=bool)  # neighbour pairs within one run of a query
    cuts = starts[1:-1] - 1
    inside[cuts[(cuts >= 0) & (cuts < n - 1)]] = False
    step = np.diff(v)[inside]
    if (step > 0).all():
        firsts = v[starts[:-1]]
        import pandas as pd

        smallest = pd.Series(firsts).groupby(pd.Series(seg_queries), sort=False).min().to_numpy()
        if np.isin(smallest, (0.0, 1.0)).all():
            return True
    if (step <= 0).all():
        return False
    # Report the first line whose number is larger than the one above it (same query).
    line, text = locate(int(np.flatnonzero(inside)[np.flatnonzero(step > 0)[0]]) + 1)
    raise ParseError(
        "the third column holds integers that are neither ranks (1, 2, 3, ... down each query's lines) nor "
        "scores that never increase down a query's lines; say which: format='msmarco' (ranks) or "
        "format='qid-doc-score' (scores), on the command line --run-format msmarco / qid-doc-score",
        path=path, line=line, text=text,
    )
