"""Read a judge dataset (question, reference, retrieved contexts per row) from JSONL, JSON (one array of
objects), CSV/TSV or Parquet, through the format registry (:mod:`ragrade.io.formats`). Rows come back as a
list of dicts for :func:`ragrade.judges.runner.examples_from`.

In CSV/TSV files every cell is read as text and the contexts column holds a JSON-encoded list of strings.
Parquet and JSONL hold real lists.
"""

from __future__ import annotations

import os
from typing import Any

from ragrade.errors import InputError

#: The formats a judge dataset may be in (names of :mod:`ragrade.io.formats`; ``json`` is JSON Lines'
#: alias, whose reader also takes one JSON array of objects).
FORMATS = ("jsonl", "json", "csv", "tsv", "parquet")


def detect_format(path: str | os.PathLike[str]) -> str:
    """The dataset format from the file name (``.jsonl``, ``.ndjson``, ``.json``, ``.csv``, ``.tsv``,
    ``.parquet``, ``.pq``; ``.gz`` may follow)."""
    from ragrade.io import formats

    fmt = formats.by_extension(path)
    if fmt is None or fmt.name not in FORMATS:
        raise InputError(f"{path}: cannot tell the format from the file name; give it explicitly", value=str(path))
    return fmt.name


def read_rows(path: str | os.PathLike[str], fmt: str | None = None) -> list[dict[str, Any]]:
    """The rows of a dataset file (possibly none). Errors name the file and, where known, the line."""
    from ragrade.io import formats
    from ragrade.io.sources import readable_path

    if fmt is not None and fmt.lower() not in FORMATS:
        raise InputError(f"unknown dataset format {fmt!r}; expected one of {', '.join(FORMATS)}")
    with readable_path(path) as p:
        chosen = formats.get(fmt) if fmt is not None else formats.get(detect_format(p))
        return [row for row, _ in chosen.rows(p)]
