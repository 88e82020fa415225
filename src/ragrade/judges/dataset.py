"""Read a judge dataset (question, reference, retrieved contexts per row) from any format of records of the
registry (:mod:`ragrade.io.formats`: JSONL, JSON — one array of objects —, CSV/TSV, Parquet, Arrow IPC, and
whatever is registered next). Rows come back as a list of dicts for
:func:`ragrade.judges.runner.examples_from`.

In CSV/TSV files every cell is read as text and the contexts column holds a JSON-encoded list of strings.
JSONL, Parquet and Arrow IPC hold real lists.
"""

from __future__ import annotations

import os
from typing import Any


def read_rows(path: str | os.PathLike[str], fmt: str | None = None) -> list[dict[str, Any]]:
    """The rows of a dataset file (possibly none). ``fmt``: a format of records (default: from the file
    name). Errors name the file and, where known, the line."""
    from ragrade.io import formats
    from ragrade.io.sources import readable_path

    if fmt is not None:
        formats.records_format(os.fspath(path), fmt)  # an unknown name is refused before the file is opened
    with readable_path(path) as p:
        return [row for row, _ in formats.records_format(p, fmt).rows(p)]


__all__ = ["read_rows"]
