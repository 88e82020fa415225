"""The TREC family of whitespace-separated files: ``trec`` (runs ``qid Q0 docno rank score tag``, ``qid
docno score``, ``qid docno rank``, ``qid docno``; qrels ``qid iter docno rel``, ``qid docno``) and its two
named three-column run layouts, ``msmarco`` (``qid docno rank``) and ``qid-doc-score``. The reader and
writer live in :mod:`ragrade.io.trec`; this module says what the formats are."""

from __future__ import annotations

import os
from typing import Any

from ragrade.errors import InputError
from ragrade.io.formats.base import Format, no_options


class Trec(Format):
    name = "trec"
    aliases: tuple[str, ...] = ("txt",)
    extensions: tuple[str, ...] = (".trec", ".txt", ".qrels", ".qrel", ".run")
    out_of_core = True
    layout: tuple[str, ...] | None = ("query", "q0", "doc", "rank", "score", "tag")
    description = "whitespace-separated TREC lines (qrels: qid iter doc grade; runs: qid Q0 doc rank score tag)"

    def sniff(self, head: bytes, line: str | None) -> bool:
        from ragrade.io.sniffing import sniff_short_trec, sniff_trec

        if line is None:
            return False
        return sniff_trec(line) is not None or ("," not in line and sniff_short_trec(line) is not None)

    def read_run(self, path: str, *, name: str | None, progress: Any, chunk_size: int, opts: dict[str, Any]) -> Any:
        from ragrade.io.trec import read_trec_run

        no_options(opts, self.name)
        return read_trec_run(path, name=name, format=self.name, chunk_size=chunk_size, progress=progress)

    def read_qrels(self, path: str, *, progress: Any, chunk_size: int, prefer: str | None,
                   opts: dict[str, Any]) -> Any:
        from ragrade.io.trec import read_trec_qrels

        no_options(opts, self.name)
        return read_trec_qrels(path, chunk_size=chunk_size, progress=progress)

    def write_run(self, run: Any, path: str | os.PathLike[str], *, tag: str | None, ties: str) -> None:
        from ragrade.io.trec import write_trec_run

        write_trec_run(run, path, tag=tag, ties=ties)

    def write_qrels(self, qrels: Any, path: str | os.PathLike[str]) -> None:
        from ragrade.io.trec import write_trec_qrels

        write_trec_qrels(qrels, path)

    def guess_kind(self, path: str) -> str | None:
        from ragrade.io.sniffing import sniff_short_trec, sniff_trec
        from ragrade.io.textfiles import first_line

        line = first_line(path, skip_comments=True)
        if not line:
            return None
        return sniff_trec(line) or sniff_short_trec(line) or ("run" if len(line.split()) >= 6 else None)

    def spark_read(self, spark: Any, path: str, kind: str) -> Any:
        """Lines split on whitespace; numbers stay text (the Spark reader casts them, naming a bad value)."""
        from pyspark.sql import functions as F

        lines = spark.read.text(path).select(F.trim(F.col("value")).alias("line"))
        lines = lines.where((F.length("line") > 0) & ~F.col("line").startswith("#"))
        parts = F.split(F.col("line"), r"\s+")
        first = lines.select(F.size(parts).alias("n")).limit(1).collect()
        if not first:
            raise InputError(f"{path}: the file is empty")
        n = int(first[0]["n"])
        if kind == "qrels":
            if n == 4:
                return lines.select(parts[0].alias("query"), parts[2].alias("doc"), parts[3].alias("grade"))
            if n == 2:
                return lines.select(parts[0].alias("query"), parts[1].alias("doc"))
            raise InputError(f"{path}: expected TREC qrels lines of 4 or 2 columns, got {n}")
        if n >= 6:
            return lines.select(parts[0].alias("query"), parts[2].alias("doc"), parts[4].alias("score"))
        if n == 3:
            if self.name == "trec":
                raise InputError(f"{path}: a three-column run holds ranks or scores; on Spark, say which: "
                                 f"run_format='msmarco' (ranks) or 'qid-doc-score' (scores)")
            value = "rank" if self.name == "msmarco" else "score"
            return lines.select(parts[0].alias("query"), parts[1].alias("doc"), parts[2].alias(value))
        raise InputError(f"{path}: expected TREC run lines of 6 or 3 columns on Spark, got {n}")


class ThreeColumns(Trec):
    """A named three-column run layout: never detected, only given (``format=``)."""

    aliases = ()
    extensions = ()

    def __init__(self, name: str, value: str) -> None:
        self.name = name
        self.value = value  # "rank" or "score"
        self.layout = ("query", "doc", value)
        self.description = f"run lines qid doc {value} (named explicitly)"

    def sniff(self, head: bytes, line: str | None) -> bool:
        return False

    def read_qrels(self, path: str, *, progress: Any, chunk_size: int, prefer: str | None,
                   opts: dict[str, Any]) -> Any:
        if self.value == "score":
            raise InputError("format 'qid-doc-score' is a run layout; qrels files are read with format 'trec' "
                             "(qid iter doc grade, or qid doc) or as a table (tsv, csv, jsonl, parquet)")
        return super().read_qrels(path, progress=progress, chunk_size=chunk_size, prefer=prefer, opts=opts)

    def write_run(self, run: Any, path: str | os.PathLike[str], *, tag: str | None, ties: str) -> None:
        from ragrade.io import writers

        writers.write_three_columns(writers.run_table(run, ties), path, self.value)

    def write_qrels(self, qrels: Any, path: str | os.PathLike[str]) -> None:
        raise InputError(f"format {self.name!r} is a run layout; write qrels as trec, tsv, csv, jsonl or parquet")

    def guess_kind(self, path: str) -> str | None:
        return "run"


TREC = Trec()
MSMARCO = ThreeColumns("msmarco", "rank")
QID_DOC_SCORE = ThreeColumns("qid-doc-score", "score")
