"""Write merged qrels: the human judgments and the assessor's grades in one table with an ``origin``
column (``human`` / ``llm``) and an ``assessor`` column (empty for human rows; the judge, model and prompt
version for assessor rows, marked ``offline approximation`` for the offline assessors).

``ragrade.read_qrels`` reads the file back, one judgment per pair, the human one by default
(see :mod:`ragrade.io.origins`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ragrade.data import Qrels
from ragrade.errors import InputError


def assessor_label(judge: Mapping[str, Any]) -> str:
    """``"openai:gpt-4o-mini (assess-graded-1)"``; offline judges get ``"; offline approximation"``."""
    label = f"{judge['name']}:{judge['model']} ({judge['prompt_version']})"
    return label + "; offline approximation" if judge.get("approximation") else label


def merge(human: Qrels | Mapping[str, Any] | None, grades: pd.DataFrame, assessor: str) -> pd.DataFrame:
    """Rows ``query, doc, grade, origin, assessor``: every human judgment, then every assessor grade (both
    may judge a pair; the reader's policy picks one)."""
    frames = []
    if human is not None:
        h = human if isinstance(human, Qrels) else Qrels.from_dict(human)
        hd = h.to_pandas()[["query", "doc", "grade"]].copy()
        hd["origin"] = "human"
        hd["assessor"] = None
        frames.append(hd)
    g = grades[["query", "doc", "grade"]].copy()
    g["origin"] = "llm"
    g["assessor"] = assessor
    frames.append(g)
    out = pd.concat(frames, ignore_index=True)
    out["query"] = out["query"].astype(str)
    out["doc"] = out["doc"].astype(str)
    gr = out["grade"].to_numpy(dtype=np.float64)
    out["grade"] = gr.astype(np.int64) if np.all(np.mod(gr, 1) == 0) else gr
    return out


def write_merged(table: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """Write a merged table in the format of records its file name selects (``.parquet``, ``.jsonl``,
    ``.csv``, ``.tsv``, ``.arrow``...: :mod:`ragrade.io.formats`)."""
    import pyarrow as pa

    from ragrade.io import formats

    fmt = formats.by_extension(path)
    if fmt is None or not fmt.holds_records:
        exts = ", ".join(e for f in formats.REGISTRY if f.holds_records for e in f.extensions)
        raise InputError(f"the merged qrels file must be a table of records ({exts})", value=os.fspath(path))
    from ragrade.io.writers import output_path

    with output_path(path) as tmp:  # written whole, then renamed into place
        fmt.write_records(pa.Table.from_pandas(table, preserve_index=False), tmp)


__all__ = ["assessor_label", "merge", "write_merged"]
