"""The declarations of the span functions' arguments (:mod:`ragrade.options`: one :class:`Option` each, checked
by :func:`ragrade.options.public` before any work; the generated tests try their bad values)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ragrade.options import MAX_COUNT, Option


def _corpus(option: Option, value: Any) -> Any:
    from ragrade.spans.model import Corpus

    if isinstance(value, Corpus | Mapping) or (isinstance(value, str) and value.strip()) or isinstance(value, os.PathLike):
        return value
    raise option.error(value)


def _strings(optional_items: bool) -> Any:
    def check(option: Option, value: Any) -> Any:
        if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
            raise option.error(value)
        if not all(isinstance(v, str) or (optional_items and v is None) for v in value):
            raise option.error(value)
        return value

    return check


def _delimiter(option: Option, value: Any) -> Any:
    if isinstance(value, str) and value:
        return value
    raise option.error(value)


def _chunks(option: Option, value: Any) -> Any:
    from ragrade.spans.model import ChunkMap

    if isinstance(value, ChunkMap | str | os.PathLike) or hasattr(value, "column_names") or hasattr(value, "columns") \
            or (isinstance(value, Sequence) and not isinstance(value, bytes) and all(isinstance(r, Mapping) for r in value)):
        if isinstance(value, str) and not value.strip():
            raise option.error(value)
        return value
    raise option.error(value)


def _callable(option: Option, value: Any) -> Any:
    if callable(value):
        return value
    raise option.error(value)


def _mapping(option: Option, value: Any) -> Any:
    if isinstance(value, Mapping):
        return value
    raise option.error(value)


CORPUS = Option("corpus", object, None, validator=_corpus, bad=(5, 1.5, b"x", [], "", None),
                what="a folder, a corpus file or a mapping {doc id: text}", doc="The documents.")
SOME_CORPUS = Option("corpus", object, None, nullable=True, validator=_corpus, bad=(5, 1.5, b"x", []),
                     what="a folder, a corpus file or a mapping {doc id: text}", doc="The documents (optional).")
TEXTS = Option("texts", object, None, validator=_strings(False), bad=(5, "abc", [1], None),
               what="a list of texts", doc="The chunks' texts.")
DOC_HINTS = Option("docs", object, None, nullable=True, validator=_strings(True), bad=(5, "abc", [1]),
                   what="a list of document ids (None where unknown)", doc="Each text's document.")
CHUNK_IDS = Option("ids", object, None, nullable=True, validator=_strings(False), bad=(5, "abc", [1]),
                   what="a list of chunk ids", doc="The chunks' ids.")
ORDERED = Option("ordered", bool, None, nullable=True, doc="The texts of a document come in document order.")
FUZZY = Option("fuzzy", bool, True, doc="Locate by fuzzy matching what is not found otherwise.")
FLOOR = Option("floor", float, 90.0, minimum=0, maximum=100, doc="The lowest rapidfuzz score of a fuzzy location.")
LABEL = Option("name", str, "", doc="A name.")
FORMAT = Option("format", str, None, nullable=True, validator=_delimiter, bad=(5, "", b"x"),
                what="a format name (jsonl, csv, tsv, parquet, arrow)", doc="The file's format.")
DELIMITER = Option("delimiter", str, "#", validator=_delimiter, bad=(5, "", None),
                   what="a non-empty text", doc="What separates a passage id's document from its number.")
METHOD = Option("method", str, "maxp", choices=("maxp", "firstp", "sump"),
                doc="How passages make a document's score.")
HITS = Option("hits", int, None, minimum=1, maximum=MAX_COUNT, nullable=True,
              doc="Documents kept per query (None: all).")
CHUNKS = Option("chunks", object, None, nullable=True, validator=_chunks, bad=(5, 1.5, b"x", ""),
                what="a chunk map (a ChunkMap, a file, a table)", doc="A chunk map.")
K = Option("k", int, 5, minimum=1, maximum=MAX_COUNT, doc="The cutoff of the span measures compared.")
RETRIEVER = Option("retriever", object, None, nullable=True, validator=_callable, bad=(5, "abc"),
                   what="a callable (texts, ids) -> retriever", doc="Builds a retriever over one chunking.")
RUNS = Option("runs", object, None, nullable=True, validator=_mapping, bad=(5, "abc", [1]),
              what="a mapping {chunking name: run}", doc="The chunkings' runs.")
RULE = Option("rule", str, "chunk", choices=("chunk", "gold", "iou"), doc="What the projection's threshold measures.")
THRESHOLD = Option("threshold", float, None, minimum=0, maximum=1, open_minimum=True, nullable=True,
                   doc="The share a chunk needs to be relevant (None: any overlap).")
LEVELS = Option("levels", int, 1, minimum=1, maximum=MAX_COUNT, doc="Grade levels of projected chunks.")
LEVEL = Option("level", str, "auto", choices=("auto", "doc", "chunk"), doc="What the judgments judge.")

__all__ = [
    "CHUNKS",
    "CHUNK_IDS",
    "CORPUS",
    "DELIMITER",
    "DOC_HINTS",
    "FLOOR",
    "FORMAT",
    "FUZZY",
    "HITS",
    "LABEL",
    "LEVEL",
    "LEVELS",
    "METHOD",
    "ORDERED",
    "RETRIEVER",
    "RULE",
    "RUNS",
    "SOME_CORPUS",
    "TEXTS",
    "THRESHOLD",
    "K",
]
