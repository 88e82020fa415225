"""A stable fingerprint of a ground truth: the SHA-256 of its rows written as text and sorted, so that the
same judgments (spans, nuggets, graded ids) give the same fingerprint whatever the file format or the order
of the rows. The gate compares a candidate's ground truth with its baseline's by it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def rows_fingerprint(rows: Iterable[tuple[object, ...]], *, kind: str = "") -> str:
    """``sha256:`` + the SHA-256 of ``kind`` (a first line naming what the rows are, so that spans and
    qrels never share a fingerprint) and the rows, each written as tab-separated ``str`` values (floats as
    ``repr(float)``), sorted.

    >>> rows_fingerprint([("q1", "d", 0, 5)], kind="spans") == rows_fingerprint([("q1", "d", 0, 5)], kind="spans")
    True
    >>> rows_fingerprint([("q1", "d", 1.0)]) == rows_fingerprint([("q1", "d", 1)])
    False
    """
    lines = sorted("\t".join(repr(v) if isinstance(v, float) else str(v) for v in row) for row in rows)
    h = hashlib.sha256()
    if kind:
        h.update(f"#{kind}\n".encode())
    for line in lines:
        h.update(line.encode("utf-8", "surrogatepass") + b"\n")
    return "sha256:" + h.hexdigest()


__all__ = ["rows_fingerprint"]
