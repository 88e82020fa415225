"""A drop-in for the trec_eval 10 command line: ``ragrade trec_eval [options] QRELS RUN``.

The options are trec_eval's (``-q -c -n -l -M -N -J -R -T -m -v -h``, long forms too), the measures its
measures (``-m P.5,10``, ``-m all_trec``, ``-m official``...), and the output is meant to be byte for byte what
trec_eval 10.0 prints: the same lines in the same order (measures in trec_eval's table order, queries in the
byte order of their ids, the ``all`` lines last), the same names (``P_5``, ``iprec_at_recall_0.10``,
``utility_2,-1,0,0``) and the same formats (22-wide names, ``%6.4f`` values, integer counts, ``runid``,
``relstring``). The values come from ragrade's kernels (the registry's families); this module reads the
command line, the files and the measures, and prints.

Where trec_eval stops with an error (an unknown measure, a bad parameter, a duplicate document in a run, a
judged query missing from the run without ``-c``), :func:`run` raises :class:`TrecEvalError` with a clear
message; the command prints it as one ``error:`` line and exits with status 2.

``-M`` cuts each ranking in trec_eval's order before anything else (``-M0``: every ranking empty); ``-l0`` is
level 1 on the judgments with every grade >= 0 raised by one (the measures with a relevance level), and below 0
the measures that read the rankings' marks come from :mod:`ragrade.compat.trec_eval_query`, which also computes the
parameters the kernels do not express (gain maps trec_eval sorts out of order, recall levels outside [0, 1]...).

``-R qrels_jg`` reads judgment groups (``qid group docno grade``) for ``map_avgjg``, ``P_avgjg`` and
``Rprec_mult_avgjg``. ``-R prefs`` and ``-R qrels_prefs`` read preference judgments for the ``prefs_*``
measures (:mod:`ragrade.compat.trec_eval_prefs`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ragrade.compat.trec_eval_args import Options, help_text, parse_args
from ragrade.compat.trec_eval_inputs import (
    grades_as_trec_eval_reads,
    in_rank_order,
    judgment_lines,
    negative_queries,
)
from ragrade.compat.trec_eval_measures import MEASURES, NICKNAMES, VERSION
from ragrade.compat.trec_eval_output import format_parts, relstring_texts, write_parts
from ragrade.compat.trec_eval_plan import Planned, plan
from ragrade.compat.trec_eval_values import (
    clean_missing,
    direct_columns,
    jg_columns,
    kernel_gain_maps,
    rbp_leftovers,
    scored_columns,
    with_relstring_parts,
)
from ragrade.errors import TrecEvalError

if TYPE_CHECKING:  # pragma: no cover

    pass


def run(argv: Sequence[str], out: TextIO | None = None, value_format: str = "%6.4f") -> int:
    """Run trec_eval's command line ``argv`` (without the program name), writing what trec_eval 10 prints to
    ``out`` (stdout by default). Returns the exit status (0); raises :class:`TrecEvalError` where trec_eval
    stops. ``value_format`` replaces trec_eval's ``%6.4f`` (``"%.17g"``: every digit, for comparisons)."""
    out = sys.stdout if out is None else out
    opts = parse_args(argv)
    if opts.version:
        print(f"trec_eval version {VERSION} (ragrade trec_eval)", file=sys.stderr)
        return 0
    if opts.help:
        out.write(help_text(opts))
        return 0
    if len(opts.files) != 2:
        raise TrecEvalError("usage: ragrade trec_eval [-q] [-c] [-n] [-l LEVEL] [-M N] [-N N] [-J] [-m MEASURE[.PARAMS]]"
                            "... QRELS RUN  (exactly two files; `ragrade trec_eval -h` for help)")
    prefs = opts.rel_format in ("prefs", "qrels_prefs")  # compat/trec_eval_prefs.py (-M0, -l0 are fine there)
    if opts.rel_format not in ("qrels", "qrels_jg") and not prefs:
        raise TrecEvalError(f"illegal rel_format {opts.rel_format!r} (trec_eval knows qrels, prefs, qrels_prefs, "
                            "qrels_jg)")
    if opts.results_format != "trec_results":
        raise TrecEvalError(f"illegal retrieval results format {opts.results_format!r} (trec_eval knows "
                            "trec_results)")
    if opts.zscores is not None and not os.path.isfile(opts.zscores):
        raise TrecEvalError(f"cannot read the z-score file {opts.zscores!r}: it does not exist")
    if opts.max_docs is not None and opts.max_docs < 0:
        raise TrecEvalError(f"-M{opts.max_docs}: a negative number of documents per ranking (trec_eval crashes)")
    planned = plan(opts)
    qrels_path, run_path = opts.files
    write_parts(out, output_parts(planned, opts, qrels_path, run_path, value_format))
    return 0


def main(argv: Sequence[str]) -> int:
    """trec_eval's program: :func:`run` on stdout, where trec_eval stops one ``error: ...`` line on stderr
    (``TrecEvalError``, ragrade's other errors, a file that cannot be read) and status 2; else 0, the output
    flushed. Anything else propagates (a bug of ragrade: the caller reports it). ``ragrade trec_eval`` calls this,
    with or without click (:mod:`ragrade.__main__` skips click's import for it)."""
    from ragrade.errors import RagradeError

    try:
        run(argv, sys.stdout)
        sys.stdout.flush()
    except (TrecEvalError, RagradeError, OSError) as err:
        sys.stderr.write(f"error: {err}\n")
        sys.stderr.flush()
        return 2
    return 0


def output_parts(planned: list[Planned], opts: Options, qrels_path: str, run_path: str,
                 value_format: str = "%6.4f") -> Iterator[str | bytes]:
    """The text trec_eval 10 prints for ``planned`` measures on the two files, in parts (UTF-8 bytes or str),
    to be written one after the other; every error trec_eval stops on is raised before the first part."""
    for path in (qrels_path, run_path):
        if path != "-" and not os.path.isfile(path):
            raise TrecEvalError(f"cannot read file {path!r}: it does not exist")
    if opts.rel_format != "qrels":
        judgment_lines(qrels_path, 5 if opts.rel_format == "prefs" else 4)
    if opts.rel_format == "qrels_jg":
        qids, jg_values = jg_columns(planned, opts, qrels_path, run_path)
        yield from format_parts(planned, opts, qids, jg_values, {}, 0, run_path, value_format)
        return
    if opts.rel_format in ("prefs", "qrels_prefs"):
        from ragrade.compat import trec_eval_prefs

        names = [p.measure.name for p in planned if p.measure.name.startswith("prefs_")]
        qids, prefs_columns = trec_eval_prefs.columns(names, opts, qrels_path, run_path)
        yield from format_parts(planned, opts, qids, prefs_columns, {}, 0, run_path, value_format)
        return
    yield from _qrels_parts(planned, opts, qrels_path, run_path, value_format)


def _qrels_parts(planned: list[Planned], opts: Options, qrels_path: str, run_path: str,
                 value_format: str) -> Iterator[str | bytes]:
    """The output of ``-R qrels`` (the default): the files read as trec_eval reads them, every measure's values
    per query, brought to trec_eval 10's where its C differs, then formatted."""
    import numpy as np

    qrels, runobj, qids, missing_mask = _read_pair(opts, qrels_path, run_path)
    best_grade = negative_queries(qrels, qids, qrels_path) if any(
        p.measure.kind not in ("runid", "count_q") for p in planned) else {}
    planned = with_relstring_parts(kernel_gain_maps(planned, qrels), runobj)
    relstrings: dict[str, str] = {}
    columns, helpers = scored_columns(planned, opts, qrels, runobj, qids, missing_mask, run_path, best_grade)
    planned = direct_columns(planned, opts, columns, qrels, runobj, qids, missing_mask)
    rbp_leftovers(planned, opts, columns, qrels, runobj, qids, missing_mask)
    if opts.query and any(p.measure.kind == "relstring" for p in planned):
        rs = next(p for p in planned if p.measure.kind == "relstring")
        relstrings = relstring_texts(rs, columns, qids, helpers[0]) if rs.parts else {q: "" for q in qids}
    if missing_mask.any():
        clean_missing(planned, columns, missing_mask, qids, relstrings)
    positive = int(np.count_nonzero(qrels.grades > 0)) if opts.complete else 0
    yield from format_parts(planned, opts, qids, columns, relstrings, positive, run_path, value_format)


def _read_pair(opts: Options, qrels_path: str, run_path: str) -> tuple[Any, Any, list[str], Any]:
    """``(qrels, run in trec_eval's order, the judged queries in trec_eval's order, which of them the run lacks)``;
    trec_eval's stops (a judged query without results but -c, no query at all) are raised here.

    The run is read and put in trec_eval's order on a thread of its own (C without the GIL, on both cores) while
    this thread checks and reads the judgments, then loads the scoring port; an error of the judgments is raised
    first, as trec_eval reads them first."""
    import threading

    import numpy as np

    read: dict[str, Any] = {}

    def run_side() -> None:
        try:
            from ragrade.io import read_run

            read["run"] = in_rank_order(read_run(run_path, format="trec"), opts.max_docs)
        except BaseException as exc:  # (raised below, after any error of the judgments)
            read["run_error"] = exc

    side = threading.Thread(target=run_side, daemon=True)
    side.start()
    try:
        judgment_lines(qrels_path, 4)
        from ragrade.io import read_qrels

        qrels = grades_as_trec_eval_reads(read_qrels(qrels_path, format="trec"), qrels_path)
        from ragrade import Evaluator  # noqa: F401  (the scoring port, needed next, loaded meanwhile)
    finally:
        side.join()
    if "run_error" in read:
        raise read["run_error"]
    runobj = read["run"]
    run_ids = set(runobj.query_ids.tolist())
    qids = sorted(qrels.query_ids.tolist())  # code-point order: the byte order of their UTF-8, as trec_eval sorts
    missing = [q for q in qids if q not in run_ids]
    if missing and not opts.complete:
        raise TrecEvalError(f"query {missing[0]!r} has judgments in {qrels_path} but no results in {run_path} "
                            "(trec_eval stops here: \"result qid not found\"); use -c to score such queries as empty "
                            "rankings")
    if not qids:
        raise TrecEvalError("no queries with both results and relevance information")
    return qrels, runobj, qids, np.array([q not in run_ids for q in qids], dtype=bool)


__all__ = ["MEASURES", "NICKNAMES", "TrecEvalError", "help_text", "main", "parse_args", "plan", "run"]
