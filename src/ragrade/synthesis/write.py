"""Writing a test set (docs/synthesize.md, "Output"): every file to a temporary name in its directory, renamed
over the final name once complete, so that a run killed while writing leaves either the old file or the new.

* ``spans.jsonl`` — the span qrels, by :func:`ragrade.spans.write_spans` (``query, doc, start, end, grade,
  text``);
* ``topics.tsv`` — ``qid<TAB>text`` with that header, through the format registry's TSV writer (questions
  are single lines);
* ``provenance.jsonl`` — the run record (``"record": "run"``: model, prompt hashes, parameters, seed,
  summary), then one ``"record": "item"`` line per question (its passages, excerpts and scores);
* ``rejects.jsonl`` — one line per candidate not kept, with its stage and reason.

The JSON lines are written by :func:`write_json_lines` (nested records of varying shape, which a columnar
writer would pad with nulls); keys keep their order and nothing depends on time, so writing the same test
set twice gives the same bytes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

FILES = ("spans.jsonl", "topics.tsv", "provenance.jsonl", "rejects.jsonl")


def _replace(target: Path, write: Any) -> None:
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_json_lines(records: Iterable[Mapping[str, Any]], path: str | os.PathLike[str]) -> None:
    """One JSON object per line (UTF-8, no ASCII escaping, NaN refused), written atomically."""
    lines = [json.dumps(r, ensure_ascii=False, allow_nan=False, separators=(", ", ": ")) + "\n" for r in records]

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            fh.writelines(lines)

    _replace(Path(path), write)


def write_topics(topics: Mapping[str, str], path: str | os.PathLike[str]) -> None:
    """``qid<TAB>text`` lines under that header (the format registry's TSV writer), written atomically."""
    import pyarrow as pa

    from ragrade.io import formats

    table = pa.table({"qid": pa.array(list(topics), pa.string()), "text": pa.array(list(topics.values()), pa.string())})
    _replace(Path(path), lambda tmp: formats.get("tsv").write_records(table, os.fspath(tmp)))


def write_test_set(ts: Any, directory: str | os.PathLike[str]) -> dict[str, str]:
    """The four files of a test set (see the module docstring); returns name -> path."""
    from ragrade.spans.read import write_spans

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: os.fspath(out / name) for name in FILES}
    write_spans(ts.spans, paths["spans.jsonl"], "jsonl")
    write_topics(ts.topics, paths["topics.tsv"])
    write_json_lines([dict(ts.provenance), *(it.to_dict() for it in ts.items)], paths["provenance.jsonl"])
    write_json_lines([r.to_dict() for r in ts.rejects], paths["rejects.jsonl"])
    return paths


__all__ = ["FILES", "write_json_lines", "write_test_set", "write_topics"]
