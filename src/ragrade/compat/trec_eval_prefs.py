"""Preference judgments for the ``ragrade trec_eval`` drop-in: ``-R prefs``, ``-R qrels_prefs`` and trec_eval
10's fourteen ``prefs_*`` measures (``-m all_prefs``, ``-m prefs``), computed as trec_eval 10.0 computes them.

A **prefs** file holds ``qid jg jsg docno rel_level`` lines: within one judgment sub-group (jsg) of a
judgment group (jg), a document with a higher ``rel_level`` is preferred to one with a lower level (equal
levels: no preference); the levels themselves only order documents, except that 0 means "not relevant". A
**qrels_prefs** file is an ordinary qrels file (``qid iter docno grade``) read the same way, with ``iter`` as
the judgment group and one sub-group per group.

For each query, the documents named in its judgments are numbered in the order a ranking meets them: the
retrieved ones first (by score descending, equal scores by document id ascending, as trec_eval orders them
here; only the first ``-M`` documents count), then the others by document id. A group with one sub-group
keeps its documents in classes of equal level (every document of a higher class preferred to every document
of a lower one); a group with several sub-groups keeps a preference matrix, closed under transitivity
(``a > b`` and ``b > c`` give ``a > c``). Each preference ``a > b`` of a group is then

- *fulfilled* (both retrieved, ``a`` first) or *failed* (both retrieved, ``b`` first): the ``_ret`` counts;
- *implied fulfilled* (only ``a`` retrieved) or *implied failed* (only ``b`` retrieved): the ``_imp`` counts;
- *not occurring* (neither retrieved).

The measures combine these counts (docs/trec_eval.md gives each one); :mod:`ragrade.compat.trec_eval_prefs_kernels`
computes them, this module reads the files. The definitions follow trec_eval
10.0's code, including its accidents: a group whose last class of levels is not the only one at or below 0
(negative levels) makes ``prefs_avgjg_Rnonrel`` read trec_eval's scratch memory beyond that class; where
that memory holds what an earlier group or query wrote there, the value is reproduced; where it holds
nothing trec_eval wrote, trec_eval's value changes from run to run, and ragrade reads
:data:`ragrade.compat.trec_eval_prefs_kernels.UNWRITTEN` there (:attr:`Result.guessed` lists the values concerned).

Where trec_eval stops (a malformed line, a document at two levels of one sub-group, a document both
non-relevant and relevant in one group, contradictory preferences in one group, a duplicate document in a
ranking, a judged query absent from the run without ``-c``), this module raises :class:`TrecEvalError` naming
the file and lines, the query, group or document.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragrade.errors import TrecEvalError

if TYPE_CHECKING:  # pragma: no cover

    from ragrade.metrics import Metric

#: the preference formats of ``-R``
FORMATS = ("prefs", "qrels_prefs")

#: trec_eval 10's preference measures, in its table order (the counts print as integers)
COUNTS = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret")
RATIOS = ("prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
          "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp")
NAMES = COUNTS + RATIOS

BOGUS_DOC = "ceci_nest_pas_un_docno"  # trec_eval -c: the one document of a judged query missing from the run


def key(name: str) -> Metric:
    """The column key of a preference measure in the drop-in's per-query columns (not a registry metric)."""
    from ragrade.metrics import Metric

    return Metric(f"trec_eval_{name}")


_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _level(text: str, path: str, number: int) -> float:
    """C's ``atof`` of a rel_level field: its longest decimal prefix (0 if none), ``inf``; NaN has no order
    and is refused."""
    body = text[1:] if text[:1] in "+-" else text
    if body[:3].lower() == "nan":
        raise TrecEvalError(f"{path}, line {number}: rel_level {text!r} is not a number (trec_eval's order of "
                            "preferences is undefined with it)")
    if body[:3].lower() == "inf":
        return -math.inf if text.startswith("-") else math.inf
    found = _DECIMAL.match(text)
    return float(found.group(0)) if found else 0.0


def read_prefs(path: str, fmt: str, where: dict[tuple[str, str, str], list[int]] | None = None,
               ) -> dict[str, list[tuple[str, str, str, float]]]:
    """``{qid: [(jg, jsg, docno, rel_level), ...]}`` from a prefs (``qid jg jsg docno rel``) or qrels_prefs
    (``qid jg docno rel``, sub-group "0") file, read as trec_eval 10 reads it: whitespace-separated fields,
    exactly five (four) per line, a line starting with ``#`` skipped as a comment unless the line before was a
    skipped comment (trec_eval then reads it as data), blank lines malformed. ``where`` (if given) receives the
    line numbers of every (qid, jg, docno)."""
    fields_wanted = 5 if fmt == "prefs" else 4
    layout = "qid jg jsg docno rel_level" if fmt == "prefs" else "qid jg docno rel_level"
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise TrecEvalError(f"cannot read the {fmt} file {path!r}: {err.strerror}") from None
    if not data:
        raise TrecEvalError(f"cannot read the {fmt} file {path!r}: it is empty (trec_eval stops too)")
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    out: dict[str, list[tuple[str, str, str, float]]] = {}
    after_comment = False
    for number, raw in enumerate(lines, start=1):
        if raw.startswith(b"#") and not after_comment:
            after_comment = True
            continue
        was_comment, after_comment = after_comment, False
        parts = raw.split()
        if len(parts) != fields_wanted:
            hint = (" (trec_eval reads a '#' line that follows a comment line as data)"
                    if was_comment and raw.startswith(b"#") else "")
            shown = raw.decode("utf-8", "replace").strip()
            raise TrecEvalError(f"{path}, line {number}: malformed {fmt} line: want {fields_wanted} fields "
                                f"'{layout}', got {shown!r}{hint}")
        text = [p.decode("utf-8", "surrogateescape") for p in parts]
        rel = _level(text[-1], path, number)
        if where is not None:
            where.setdefault((text[0], text[1], text[-2]), []).append(number)
        if fmt == "prefs":
            out.setdefault(text[0], []).append((text[1], text[2], text[3], rel))
        else:
            out.setdefault(text[0], []).append((text[1], "0", text[2], rel))
    if not out:
        raise TrecEvalError(f"{path}: no judgments in the {fmt} file (only comments)")
    return out


@dataclass
class Result:
    """The preference measures of every judged query, in trec_eval's order of queries."""

    qids: list[str]
    values: dict[str, Any]  # measure name -> float64 array, one value per query
    guessed: set[tuple[str, str]]  # (measure, query): prefs_avgjg_Rnonrel(_ret) read memory trec_eval never wrote


def columns(names: list[str], opts: Any, prefs_path: str, run_path: str) -> tuple[list[str], dict[Metric, Any]]:
    """The drop-in's per-query columns (keys: :func:`key`) of the preference measures ``names`` and the query
    ids in trec_eval's order (:func:`evaluate`)."""
    res = evaluate(names, opts, prefs_path, run_path)
    return res.qids, {key(n): v for n, v in res.values.items()}


def evaluate(names: list[str], opts: Any, prefs_path: str, run_path: str) -> Result:
    """The preference measures ``names`` for ``-R prefs`` or ``-R qrels_prefs`` (``opts``: the parsed
    trec_eval options: ``rel_format``, ``complete``, ``max_docs``) on every judged query (one absent from
    the run stops without ``-c``)."""
    import numpy as np

    from ragrade.compat.trec_eval_prefs_kernels import (
        JudgmentConflict,
        ScratchPool,
        form_query,
        query_values,
        strcmp_key,
    )
    from ragrade.io import read_run

    where: dict[tuple[str, str, str], list[int]] = {}
    judgments = read_prefs(prefs_path, opts.rel_format, where)
    runobj = read_run(run_path, format="trec")
    in_run = set(runobj.query_ids.tolist())
    qids = sorted(judgments, key=strcmp_key)
    missing = [q for q in qids if q not in in_run]
    if missing and not opts.complete:
        raise TrecEvalError(f"query {missing[0]!r} has judgments in {prefs_path} but no results in {run_path} "
                            "(trec_eval stops here); use -c to score such queries")
    if opts.max_docs is not None and opts.max_docs < 0:
        raise TrecEvalError(f"-M{opts.max_docs}: a negative number of documents (trec_eval crashes)")
    wanted = set(names)
    values: dict[str, list[float]] = {n: [] for n in names}
    pool = ScratchPool()
    if names:
        for qid in qids:
            rows = [(d, float(s or 0.0)) for d, s in runobj.ranked(qid)] if qid in in_run else [(BOGUS_DOC, 1.0)]
            try:
                q = form_query(qid, judgments[qid], rows, opts.max_docs, pool, run_path)
            except JudgmentConflict as err:
                numbers = sorted({n for d in err.docs for n in where.get((qid, err.group, d), [])})
                shown = ", ".join(str(n) for n in numbers[:6]) + (", ..." if len(numbers) > 6 else "")
                raise TrecEvalError(f"{prefs_path}, line{'s' if len(numbers) > 1 else ''} {shown}: {err}") from None
            got = query_values(q, pool, wanted)
            for n in names:
                values[n].append(got[n])
    return Result(qids, {n: np.array(v, dtype=np.float64) for n, v in values.items()}, pool.guessed)


__all__ = ["COUNTS", "FORMATS", "NAMES", "RATIOS", "Result", "columns", "evaluate", "key", "read_prefs"]
