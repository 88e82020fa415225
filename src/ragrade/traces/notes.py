"""Counted notes about what reading traces met: each kind of thing counted, with the first few spans (or
lines) it concerns named, so that nothing is dropped or changed without a sentence saying so."""

from __future__ import annotations

from collections.abc import Iterable

#: What each note kind says, as ``(one, many)`` with ``{n}`` the count; the examples follow in brackets.
TEXTS: dict[str, tuple[str, str]] = {
    "bad_line": ("{n} line is not an OTLP export request (truncated?) and was skipped",
                 "{n} lines are not OTLP export requests (truncated?) and were skipped"),
    "bad_record": ("{n} record is not a span and was skipped", "{n} records are not spans and were skipped"),
    "no_documents": ("{n} retrieval call returned no documents (kept as an empty list)",
                     "{n} retrieval calls returned no documents (kept as empty lists)"),
    "json_documents": ("{n} span gives its documents as a JSON string instead of flattened keys (read)",
                       "{n} spans give their documents as a JSON string instead of flattened keys (read)"),
    "output_ids": ("{n} span has no document.id: the ids were read from output.value (LangChain's instrumentor)",
                   "{n} spans have no document.id: the ids were read from output.value (LangChain's instrumentor)"),
    "no_id": ("{n} retrieved document has no id anywhere in its span and was left out",
              "{n} retrieved documents have no id anywhere in their spans and were left out"),
    "end_before_start": ("{n} span ends before it starts (its latency is left empty)",
                         "{n} spans end before they start (their latency is left empty)"),
    "no_time": ("{n} span has no start or end time (its latency is left empty)",
                "{n} spans have no start or end time (their latency is left empty)"),
    "no_key": ("{n} trace has no value of the join key: its calls have no ground truth",
               "{n} traces have no value of the join key: their calls have no ground truth"),
    "no_topic": ("{n} trace's question matches no topic: its calls have no ground truth",
                 "{n} traces' questions match no topic: their calls have no ground truth"),
    "shared_key": ("{n} trace shares its key with an earlier one: its trajectory is named KEY#2, KEY#3, ...",
                   "{n} traces share their key with an earlier one: their trajectories are named KEY#2, KEY#3, ..."),
    "nested": ("{n} retrieval span sits inside another retrieval call (a sub-retriever): read as part of that call",
               "{n} retrieval spans sit inside other retrieval calls (sub-retrievers): read as part of those calls"),
    "duplicate_span": ("{n} span id appears twice: the later span was skipped",
                       "{n} span ids appear twice: the later spans were skipped"),
    "no_trace": ("{n} span has no trace id and was skipped", "{n} spans have no trace id and were skipped"),
    "bad_score": ("{n} document score is not a number (left empty)", "{n} document scores are not numbers (left empty)"),
    "bad_position": ("{n} document list has gaps in its positions (read in position order)",
                     "{n} document lists have gaps in their positions (read in position order)"),
    "mixed_conventions": ("{n} span of another convention in the same file (both read)",
                          "{n} spans of other conventions in the same file (all read)"),
    "not_json": ("{n} attribute expected to hold JSON could not be read and was ignored",
                 "{n} attributes expected to hold JSON could not be read and were ignored"),
}
EXAMPLES = 3


class Notes:
    """Counts per note kind, with up to :data:`EXAMPLES` examples each (span ids, line numbers)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.examples: dict[str, list[str]] = {}
        self.extra: list[str] = []  # whole sentences (conventions mixed, ...)

    def add(self, kind: str, example: str | None = None, count: int = 1) -> None:
        if count <= 0:
            return
        self.counts[kind] = self.counts.get(kind, 0) + count
        if example is not None:
            shown = self.examples.setdefault(kind, [])
            if len(shown) < EXAMPLES:
                shown.append(example)

    def add_many(self, kind: str, examples: Iterable[object], count: int) -> None:
        """``count`` occurrences of ``kind``, the first :data:`EXAMPLES` of ``examples`` shown."""
        if count <= 0:
            return
        self.counts[kind] = self.counts.get(kind, 0) + count
        shown = self.examples.setdefault(kind, [])
        for e in examples:
            if len(shown) >= EXAMPLES:
                break
            shown.append(str(e))

    def sentence(self, text: str) -> None:
        if text not in self.extra:
            self.extra.append(text)

    def lines(self) -> list[str]:
        """One sentence per kind of note, in a fixed order, with its examples."""
        out = []
        for kind, (one, many) in TEXTS.items():
            n = self.counts.get(kind, 0)
            if not n:
                continue
            text = (one if n == 1 else many).format(n=n)
            shown = self.examples.get(kind)
            out.append(text + (f" ({', '.join(shown)}{', ...' if n > len(shown) else ''})" if shown else ""))
        return out + self.extra

    def __bool__(self) -> bool:
        return bool(self.counts) or bool(self.extra)
