"""The words of a :class:`~ragrade.engine.result.Result`'s notes: :func:`notes` (one sentence per policy that
applied: the text of the evaluation's warning and the ``note:`` lines of the command line) and
:func:`summary_lines` (the query counts, the notes, the hole-rate line). ``Result.notes()`` and
``Result.summary_lines()`` call these. The result's output formats (dict, JSON, CSV, Markdown) are written by
io/ (:mod:`ragrade.io.results`) with the other writers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragrade.engine.summary import plural

if TYPE_CHECKING:  # pragma: no cover
    from ragrade.engine.result import Result


def summary_lines(result: Result) -> list[str]:
    """A short account of what the policies did: the first line counts queries, each further line
    is one note, in the words of :meth:`notes` (the same wording in every output format and in the
    :class:`~ragrade.errors.RagradeWarning` the evaluation emits), then the hole-rate line."""
    s = result.summary
    lines = [f"{plural(s.qrels_queries, 'query', 'queries')} in the ground truth, {s.run_queries} in the run, "
             f"{s.evaluated} evaluated", *notes(result)]
    if result.hole_rate is not None:
        lines.append(result.hole_rate.line())
    return lines


def notes(result: Result) -> list[str]:
    """One sentence per policy that applied (missing queries, empty lists, duplicates, ties at a
    cutoff, infinite scores, ...): the text of the evaluation's warning, and the ``note:`` lines of
    the command line in every format."""
    s = result.summary
    pol = result.policies
    out: list[str] = []
    if s.missing_from_run:
        what = result.missing_outcome() if pol.missing_run == "zero" else "dropped"
        out.append(f"{plural(len(s.missing_from_run), 'ground-truth query', 'ground-truth queries')} "
                   f"missing from the run, {what}{examples(s.missing_from_run)}")
    if s.only_in_run:
        out.append(f"{plural(len(s.only_in_run), 'run query', 'run queries')} without ground truth, "
                   f"ignored{examples(s.only_in_run)}")
    if s.no_relevant:
        worst = max(s.no_relevant.values(), key=len)
        action = {"skip": "left out of the means", "zero": "scored 0", "nan": "NaN (means are NaN)"}.get(
            pol.no_relevant, str(pol.no_relevant))
        if worst:
            out.append(f"{plural(len(worst), 'query', 'queries')} without relevant judgments, "
                       f"{action}{examples(worst)}")
    if s.empty_lists:
        out.append(f"{plural(len(s.empty_lists), 'query', 'queries')} with an empty retrieved list, "
                   f"scored 0{examples(s.empty_lists)}")
    if s.duplicate_items:
        what = "credited once" if pol.duplicates == "credit_once" else pol.duplicates
        scope = " (judged items; duplicates of unjudged items change no value)" if s.duplicates_judged_only else ""
        out.append(f"{plural(s.duplicate_items, 'duplicate item', 'duplicate items')} in rankings{scope} "
                   f"({what})")
    if s.identical_ids_dropped:
        out.append(f"{plural(s.identical_ids_dropped, 'item', 'items')} with the query's own id dropped")
    for k, n in sorted(s.ties_at_cutoff.items()):
        out.append(f"{plural(n, 'query has', 'queries have')} tied scores across cutoff {k} "
                   f"(values depend on the tie rule: {pol.ties})")
    if s.nonfinite_scores:
        out.append(f"{plural(s.nonfinite_scores, 'score is', 'scores are')} +inf or -inf (an overflowing "
                   f"number reads as inf), ranked as given: +inf first, -inf last")
    if pol.unjudged != "nonrelevant":
        out.append({"condensed": "unjudged documents removed before scoring (condensed lists)",
                    "bounds": "values are lower bounds (unjudged = non-relevant); upper bounds count every "
                              "unjudged document as relevant"}[pol.unjudged])
    if s.judge is not None:
        out += s.judge.notes()
    return out


def examples(items: list[str], n: int = 3) -> str:
    """`` (e.g. 'q1', 'q2', 'q3', ...)``: the first ``n`` items, for a note."""
    shown = ", ".join(repr(x) for x in items[:n])
    return f" (e.g. {shown}{', ...' if len(items) > n else ''})"


__all__ = ["examples", "notes", "summary_lines"]
