"""The column vocabulary: the names (compared case-insensitively) by which every reader of named columns
— CSV/TSV headers, JSON Lines keys, Parquet schemas, Spark DataFrames, pandas DataFrames — recognises
query ids, document ids, scores, grades, ranks and list columns. Public: other packages import these, not
the readers' private modules. :func:`pick_column` picks a column by that vocabulary."""

from __future__ import annotations

from ragrade.errors import ParseError

QUERY_NAMES = ("query", "query_id", "qid", "query-id", "queryid", "topic", "q")
DOC_NAMES = ("doc", "doc_id", "docid", "docno", "corpus-id", "corpus_id", "document", "document_id", "pid", "id")
SCORE_NAMES = ("score", "scores", "sim", "similarity")
GRADE_NAMES = ("grade", "relevance", "rel", "label", "judgment", "score")
RANK_NAMES = ("rank", "position", "pos")
RUN_LIST_NAMES = ("retrieved", "retrieved_ids", "results", "docs", "doc_ids", "ranking", "ranked")
GOLD_LIST_NAMES = ("gold", "gold_docs", "gold_ids", "relevant", "relevant_ids", "positives", "qrels")
GROUP_NAMES = ("groups", "gold_groups", "retrieval_gt")

# Corpora and topics (ragrade.assessment): passages and queries with their texts.
PASSAGE_ID_NAMES = ("_id", "id", "docid", "doc_id", "pid", "passage_id", "docno", "doc")
PASSAGE_TEXT_NAMES = ("text", "contents", "content", "passage", "body")
TITLE_NAMES = ("title",)
QUERY_ID_NAMES = ("qid", "query_id", "_id", "id", "topic", "query-id", "queryid")
QUERY_TEXT_NAMES = ("text", "query", "question", "title")

#: Words that mark a first line as a header. Short names that are also plausible ids ("q", "id", "pid",
#: "Q0", a run tag) are left out, so that they never turn a TREC line into a "header".
HEADER_WORDS = frozenset(
    w.lower()
    for w in (*QUERY_NAMES, *DOC_NAMES, *SCORE_NAMES, *GRADE_NAMES, *RANK_NAMES, "iter")
    if w not in ("q", "id", "pid")
)


def kind_from_columns(names: list[str]) -> str | None:
    """``"run"``, ``"qrels"`` or None from a table's column names: list columns (``retrieved`` vs
    ``gold``/``groups``), a rank column, a grade column (other than ``score``), a score column."""
    lower = [n.lower() for n in names]
    if any(n in lower for n in (*GROUP_NAMES, *GOLD_LIST_NAMES)):
        return "qrels"
    if any(n in lower for n in (*RUN_LIST_NAMES, *RANK_NAMES)):
        return "run"
    if any(n in lower for n in GRADE_NAMES if n != "score"):
        return "qrels"
    if any(n in lower for n in SCORE_NAMES):
        return "run"
    return None


__all__ = ["DOC_NAMES", "GOLD_LIST_NAMES", "GRADE_NAMES", "GROUP_NAMES", "HEADER_WORDS", "PASSAGE_ID_NAMES",
           "PASSAGE_TEXT_NAMES", "QUERY_ID_NAMES", "QUERY_NAMES", "QUERY_TEXT_NAMES", "RANK_NAMES",
           "RUN_LIST_NAMES", "SCORE_NAMES", "TITLE_NAMES", "kind_from_columns"]


def pick_column(names: list[str], wanted: str | None, defaults: tuple[str, ...], what: str, path: str,
                required: bool = True, exclude: tuple[str, ...] = (), option: str | None = None) -> str | None:
    """The column to use for ``what``: ``wanted`` if given (must exist), else the first default present
    (names compared case-insensitively). ``option``: the keyword that names it (default ``{what}_col``)."""
    if wanted is not None:
        if wanted not in names:
            raise ParseError(f"no column {wanted!r} for the {what} (columns: {', '.join(names)})", path=path)
        return wanted
    lower = {n.lower(): n for n in names}
    for d in defaults:
        if d in lower and lower[d] not in exclude:
            return lower[d]
    if required:
        from ragrade.options import how_to_give

        keyword = option or what + "_col"
        how = how_to_give(keyword, f"rename the column to one of {', '.join(defaults[:3])}")
        raise ParseError(
            f"cannot find the {what} column (looked for {', '.join(defaults)}; columns: {', '.join(names)}); "
            + (f"{how} to name it" if how.startswith(("pass", "give")) else how),
            path=path,
        )
    return None
