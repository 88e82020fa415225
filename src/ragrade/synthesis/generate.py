"""The synthesis run (docs/synthesize.md, "Procedure"): rounds of questions asked through the one LLM core
(:func:`ragrade.llm.runner.execute`, its cache and budget), until every kind has its share of ``n``.

Each round:

1. for every kind still short, the next candidates of its stream (:mod:`ragrade.synthesis.sample`) — as many
   as it lacks in the first round, then that many divided by the share of its candidates that passed so far
   (at most 4 times), never more than ``max_candidates`` times its share in all;
2. one question judgment each (``question_single`` / ``_multi`` / ``_abstract``), asked together;
3. in candidate order: the reply read (a failed judgment is a reject with its reason), the excerpts located,
   the quality, leakage and duplicate checks (:mod:`ragrade.synthesis.checks`); survivors wait;
4. for every kind, as many waiting candidates as it lacks get the answerability judgment (asked together);
   those the check passes are kept.

Everything that decides — which passages, which candidates, which are checked, in which order — depends on
the corpus, the settings and the answers, never on timing; every answer is cached as soon as it arrives.
So a run killed at any point and run again (``--resume``) asks only what the cache lacks and writes the
same files as a run never interrupted.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragrade.errors import InputError
from ragrade.llm.base import Judge, judgment_key
from ragrade.llm.budget import Budget
from ragrade.llm.cache import JudgmentCache
from ragrade.llm.runner import Execution, execute, worst_of
from ragrade.spans.model import Corpus
from ragrade.synthesis import prompts
from ragrade.synthesis.checks import Draft, Duplicates, Encoder, Thresholds, leak, locate, quality
from ragrade.synthesis.lexical import BM25
from ragrade.synthesis.model import Item, Reject
from ragrade.synthesis.requests import NOT_ASKED, RequestLimit
from ragrade.synthesis.sample import Candidate, Passages

KINDS = ("single", "multi", "abstract")
DEFAULT_MIX = {"single": 0.5, "multi": 0.25, "abstract": 0.25}
#: A round asks at most this many times what a kind lacks.
MAX_FACTOR = 4.0


def parse_mix(mix: Any) -> dict[str, float]:
    """The kind shares from ``{"single": 0.5, ...}`` or ``"single=0.5,multi=0.25,abstract=0.25"`` (kinds not
    named get 0; the shares are divided by their sum)."""
    if mix is None:
        return dict(DEFAULT_MIX)
    if isinstance(mix, str):
        pairs: dict[str, Any] = {}
        for part in (p.strip() for p in mix.split(",") if p.strip()):
            name, eq, value = part.partition("=")
            if not eq:
                raise InputError("a mix is kind=share pairs separated by commas (single=0.5,multi=0.25,abstract=0.25)",
                                 value=part)
            pairs[name.strip()] = value.strip()
        mix = pairs
    if not isinstance(mix, Mapping) or not mix:
        raise InputError("mix must be a mapping kind -> share or 'single=0.5,multi=0.25,abstract=0.25'", value=mix)
    out = dict.fromkeys(KINDS, 0.0)
    for k, v in mix.items():
        if k not in KINDS:
            raise InputError(f"unknown question kind in the mix (kinds: {', '.join(KINDS)})", value=k)
        try:
            out[k] = float(v)
        except (TypeError, ValueError):
            raise InputError(f"the share of {k} must be a number", value=v) from None
        if not out[k] >= 0 or math.isinf(out[k]):
            raise InputError(f"the share of {k} must be a finite number >= 0", value=v)
    total = sum(out.values())
    if total <= 0:
        raise InputError("the mix gives no kind a share above 0", value=mix)
    return {k: v / total for k, v in out.items()}


def targets(n: int, mix: Mapping[str, float]) -> dict[str, int]:
    """How many questions of each kind make ``n`` (largest remainders; ties in the order of :data:`KINDS`)."""
    raw = {k: n * mix.get(k, 0.0) for k in KINDS}
    out = {k: math.floor(v) for k, v in raw.items()}
    left = n - sum(out.values())
    for k in sorted(KINDS, key=lambda k: (-(raw[k] - out[k]), KINDS.index(k)))[:left]:
        out[k] += 1
    return out


@dataclass(frozen=True)
class Settings:
    """What a synthesis run is asked (recorded in the provenance)."""

    n: int
    mix: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_MIX))
    seed: int = 0
    personas: tuple[str, ...] = ()
    passage_chars: int = 1200
    min_passage_chars: int = 200
    check_answerable: bool = True
    max_candidates: float = 4.0
    thresholds: Thresholds = field(default_factory=Thresholds)

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 1:
            raise InputError("n (the number of questions) must be a positive integer", value=self.n)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise InputError("seed must be an integer", value=self.seed)
        if not all(isinstance(p, str) and p.strip() for p in self.personas):
            raise InputError("personas must be non-empty texts", value=self.personas)
        if not (isinstance(self.max_candidates, int | float) and self.max_candidates >= 1):
            raise InputError("max_candidates must be a number >= 1", value=self.max_candidates)

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "mix": dict(self.mix), "targets": targets(self.n, self.mix), "seed": self.seed,
                "personas": list(self.personas), "passage_chars": self.passage_chars,
                "min_passage_chars": self.min_passage_chars, "check_answerable": self.check_answerable,
                "max_candidates": self.max_candidates, "thresholds": self.thresholds.to_dict()}


@dataclass
class Counts:
    """This run's work (not written to the files)."""

    calls: int = 0
    cache_hits: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    unasked: int = 0
    rounds: int = 0

    def add(self, ex: Execution) -> None:
        self.calls += ex.calls - sum(1 for j in ex.results.values() if not j.ok and j.error == NOT_ASKED)
        self.cache_hits += ex.cache_hits
        self.failed += ex.failed
        self.prompt_tokens += ex.prompt_tokens
        self.completion_tokens += ex.completion_tokens
        self.cost += float(ex.cost)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Waiting:
    """A draft that passed the checks, waiting for its answerability judgment."""

    draft: Draft

    @property
    def kind(self) -> str:
        return self.draft.candidate.kind


class Synthesis:
    """The state of one run (see the module docstring)."""

    def __init__(self, settings: Settings, corpus: Corpus, judge: Judge, *, cache: JudgmentCache | None,
                 budget: Budget, max_concurrency: int | None = None, retry_failed: bool = False,
                 encoder: Encoder | None = None, progress: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.s, self.corpus, self.cache = settings, corpus, cache
        self.budget, self.max_concurrency, self.retry_failed, self.progress = budget, max_concurrency, retry_failed, progress
        self.limit = RequestLimit(judge, budget.calls) if budget.calls is not None else None
        self.judge: Any = self.limit if self.limit is not None else judge
        self.passages = Passages(corpus, settings.passage_chars, settings.min_passage_chars)
        self.index = BM25.build([p.text for p in self.passages.items])
        self.targets = targets(settings.n, settings.mix)
        if (self.targets["multi"] or self.targets["abstract"]) and self.passages.documents() < 2:
            raise InputError("multi-hop questions pair passages of different documents, and the corpus has one "
                             "document with passages long enough: give mix='single=1' or more documents")
        self.streams = {"single": self.passages.singles(settings.seed, settings.personas),
                        "multi": self.passages.pairs(settings.seed, "multi", settings.personas),
                        "abstract": self.passages.pairs(settings.seed, "abstract", settings.personas)}
        self.dups = Duplicates(settings.thresholds, encoder)
        self.pulled = dict.fromkeys(KINDS, 0)
        self.asked = dict.fromkeys(KINDS, 0)
        self.passed = dict.fromkeys(KINDS, 0)
        self.exhausted: set[str] = set()
        self.next_index = 0
        self.kept: list[Draft] = []
        self.waiting: list[Waiting] = []
        self.rejects: list[Reject] = []
        self.counts = Counts()
        self.stopped = False

    # -- what to ask -------------------------------------------------------------------------------------------
    def short(self, kind: str) -> int:
        return self.targets[kind] - sum(1 for d in self.kept if d.candidate.kind == kind)

    def lacking(self, kind: str) -> int:
        return self.short(kind) - sum(1 for w in self.waiting if w.kind == kind)

    def plan(self) -> list[Candidate]:
        """The next candidates of every kind still lacking (see the module docstring, step 1)."""
        out: list[Candidate] = []
        for kind in KINDS:
            lack = self.lacking(kind)
            if lack <= 0 or kind in self.exhausted:
                continue
            rate = self.passed[kind] / self.asked[kind] if self.asked[kind] else 1.0
            want = math.ceil(lack * min(MAX_FACTOR, 1.0 / max(rate, 1.0 / MAX_FACTOR)))
            room = math.ceil(self.s.max_candidates * self.targets[kind]) + 2 - self.pulled[kind]
            for _ in range(max(0, min(want, room))):
                got = next(self.streams[kind], None)
                if got is None:
                    break
                out.append(Candidate(self.next_index, kind, got[0], got[1]))
                self.next_index += 1
                self.pulled[kind] += 1
            if not any(c.kind == kind for c in out):
                self.exhausted.add(kind)
        return out

    def inputs(self, c: Candidate) -> dict[str, str]:
        out = {"persona": c.persona, "max_excerpts": str(self.s.thresholds.max_excerpts)}
        for i, p in enumerate(c.passages, 1):
            out[f"passage_{i}"] = p.text
            out[f"title_{i}"] = p.doc
        return out

    # -- asking --------------------------------------------------------------------------------------------------
    async def ask(self, requests: dict[str, tuple[str, dict[str, str]]]) -> Execution:
        b = self.budget
        left = Budget(None, None if b.tokens is None else max(0, b.tokens - self.counts.prompt_tokens -
                                                                 self.counts.completion_tokens),
                      None if b.usd is None else max(0.0, b.usd - self.counts.cost))
        llm = getattr(self.judge, "settings", None) is not None
        ex = await execute(self.judge, requests, cache=self.cache, max_concurrency=self.max_concurrency,
                           retry_failed=self.retry_failed, budget=left,
                           worst=worst_of(self.judge, requests) if llm else None, order="given")
        self.counts.add(ex)
        if self.progress is not None:
            self.progress({"kept": len(self.kept), "n": self.s.n, **self.counts.to_dict()})
        return ex

    def outcome(self, ex: Execution, key: str) -> Any:
        """The judgment of ``key``, or None when it was not asked (a budget)."""
        j = ex.results.get(key)
        if j is None or (not j.ok and j.error == NOT_ASKED):
            self.counts.unasked += 1
            self.stopped = True
            return None
        return j

    async def generate(self, new: list[Candidate]) -> None:
        """Ask the question judgments of ``new`` and check the replies (steps 2 and 3)."""
        keys, requests = {}, {}
        for c in new:
            task, inputs = prompts.KIND_TASK[c.kind], self.inputs(c)
            keys[c.index] = judgment_key(self.judge, task, inputs)
            requests[keys[c.index]] = (task, inputs)
        ex = await self.ask(requests)
        replies = []
        for c in new:
            j = self.outcome(ex, keys[c.index])
            if j is None:
                continue
            self.asked[c.kind] += 1
            if not j.ok:
                self.rejects.append(Reject(c.index, c.kind, "generation", j.error or "failed", None, c.passages))
            else:
                replies.append((c, j.output))
        for (c, out), found in zip(replies, locate(replies, self.s.thresholds.fuzzy_floor), strict=True):
            self.check(c, out, found)

    def check(self, c: Candidate, out: Mapping[str, Any], found: Any) -> None:
        """Step 3 for one reply: a waiting draft or a reject."""
        if isinstance(found, str):
            self.rejects.append(Reject(c.index, c.kind, "location", found, out["question"], c.passages))
            return
        d = Draft(c, out["question"], out.get("answer", ""), found, {})
        t = self.s.thresholds
        refusal = quality(d, t) or leak(d, self.index, t) or self.dups.check(d.question, f"candidate {c.index}",
                                                                             d.scores)
        if refusal is not None:
            self.rejects.append(Reject(c.index, c.kind, refusal.stage, refusal.reason, d.question, c.passages,
                                       dict(d.scores)))
            return
        self.passed[c.kind] += 1
        self.waiting.append(Waiting(d))

    async def answerability(self) -> None:
        """Step 4: the waiting drafts each kind lacks, checked; the others wait."""
        pick: list[Waiting] = []
        for kind in KINDS:
            pick += [w for w in self.waiting if w.kind == kind][: max(0, self.short(kind))]
        pick.sort(key=lambda w: w.draft.candidate.index)
        if not self.s.check_answerable:
            for w in pick:
                w.draft.scores["answerable"] = None
                self.keep(w)
            return
        keys, requests = {}, {}
        for w in pick:
            text = "\n".join(f"[{i}] {x.text}" for i, x in enumerate(w.draft.excerpts, 1))
            inputs = {"question": w.draft.question, "excerpts": text}
            keys[id(w)] = judgment_key(self.judge, prompts.ANSWERABILITY, inputs)
            requests[keys[id(w)]] = (prompts.ANSWERABILITY, inputs)
        if not requests:
            return
        ex = await self.ask(requests)
        for w in pick:
            j = self.outcome(ex, keys[id(w)])
            if j is None:
                continue
            if j.ok and j.output.get("answerable") == 1:
                w.draft.scores["answerable"] = 1
                self.keep(w)
                continue
            d = w.draft
            reason = ("the excerpts do not answer the question (answerability check)" if j.ok else
                      f"the answerability check failed: {j.error}")
            d.scores["answerable"] = 0 if j.ok else None
            self.waiting.remove(w)
            self.dups.remove(f"candidate {d.candidate.index}")
            self.rejects.append(Reject(d.candidate.index, d.candidate.kind, "answerability", reason, d.question,
                                       d.candidate.passages, d.scores))

    def keep(self, w: Waiting) -> None:
        self.waiting.remove(w)
        self.kept.append(w.draft)

    async def run(self) -> tuple[list[Item], list[Reject]]:
        while not self.stopped:
            self.counts.rounds += 1
            new = self.plan()
            if new:
                await self.generate(new)
            before = len(self.kept)
            if not self.stopped or self.waiting:
                await self.answerability()
            if all(self.short(k) <= 0 for k in KINDS) or (not new and len(self.kept) == before):
                break
        return self.finish()

    def finish(self) -> tuple[list[Item], list[Reject]]:
        """The kept drafts as items (ids q1, q2, ... in candidate order); the waiting ones as rejects."""
        for w in self.waiting:
            d, c = w.draft, w.draft.candidate
            stage, reason = (("budget", "not checked: the budget was spent") if self.stopped else
                             ("unused", "not needed: its kind had its share when it was checked"))
            self.rejects.append(Reject(c.index, c.kind, stage, reason, d.question, c.passages, d.scores))
        self.waiting = []
        items = []
        for i, d in enumerate(sorted(self.kept, key=lambda d: d.candidate.index), 1):
            c = d.candidate
            items.append(Item(f"q{i}", c.kind, d.question, d.answer, tuple(d.excerpts), c.passages, c.persona,
                              c.index, dict(d.scores)))
        return items, sorted(self.rejects, key=lambda r: r.candidate)


def run_sync(coro: Any) -> Any:
    """Run a coroutine from synchronous code (refused inside a running event loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    from ragrade.errors import RagradeError

    raise RagradeError("synthesize() cannot run inside a running event loop (e.g. Jupyter); use "
                       "`await ragrade.synthesis.asynthesize(...)`")


__all__ = ["DEFAULT_MIX", "KINDS", "Counts", "Settings", "Synthesis", "parse_mix", "run_sync", "targets"]
