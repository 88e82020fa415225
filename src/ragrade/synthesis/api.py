"""``ragrade.synthesize``: a test set from a corpus (docs/synthesize.md).

:func:`synthesize` (and :func:`asynthesize`) read the corpus (:func:`ragrade.spans.read_corpus`), build the
judge from the one backend registry (:func:`ragrade.llm.backends.make_judge` with the synthesis task set)
unless one is given, run :class:`~ragrade.synthesis.generate.Synthesis` through the LLM core's runner, cache
and budget, and return a :class:`~ragrade.synthesis.model.TestSet` (written to ``output`` when given).

A directory a run writes into holds ``run.json`` from the start (the settings, the corpus fingerprint, the
model and the prompt version): a second run into it is refused unless ``resume=True``, and a resumed run
must have the same settings. The cache makes the resumption cheap: every answer of the first run is reused,
and the files written are those an uninterrupted run writes.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from ragrade.errors import InputError, boundary
from ragrade.llm.budget import Budget
from ragrade.synthesis import prompts
from ragrade.synthesis.checks import Thresholds, default_encoder
from ragrade.synthesis.generate import KINDS, Settings, Synthesis, parse_mix, run_sync
from ragrade.synthesis.model import TestSet
from ragrade.synthesis.summary import corpus_info, judge_info, summarize
from ragrade.synthesis.write import FILES, write_json_lines

RUN_FILE = "run.json"
#: The parts of run.json a resumed run must match.
_SAME = ("parameters", "corpus", "prompt_version", "judge_name", "model")


def _split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(thresholds, LLM settings) from the extra keywords; anything else is an error."""
    from ragrade.llm.openai import OpenAISettings

    th_names = {f.name for f in fields(Thresholds)}
    llm_names = {f.name for f in fields(OpenAISettings)}
    th, llm = {}, {}
    for k, v in options.items():
        if k in th_names:
            th[k] = v
        elif k in llm_names:
            llm[k] = v
        else:
            raise InputError(f"synthesize() got an unexpected keyword {k!r} (thresholds: {', '.join(sorted(th_names))}; "
                             "LLM settings: model, base_url, api_key_env, timeout, max_retries, max_tokens, ...)")
    return th, llm


def run_record(settings: Settings, corpus: Any, judge: Any, passages: int) -> dict[str, Any]:
    """The run record (the first line of provenance.jsonl; run.json)."""
    from ragrade import __version__

    info = judge_info(judge)
    return {"record": "run", "tool": "ragrade synthesize", "ragrade": __version__,
            "prompt_version": prompts.PROMPT_VERSION, "prompts": prompts.prompt_hashes(), "judge": info,
            "judge_name": info["name"], "model": info["model"], "corpus": corpus_info(corpus, passages),
            "parameters": settings.to_dict(), "seed": settings.seed}


def prepare_directory(directory: Any, record: Mapping[str, Any], resume: bool) -> None:
    """Check ``directory`` may take this run (see the module docstring) and write its ``run.json``."""
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: not a directory")
    held = [n for n in (RUN_FILE, *FILES) if (out / n).exists()]
    if held and not resume:
        raise InputError(f"{out} already holds a test set or an interrupted run ({', '.join(held)}): resume it "
                         "(--resume, resume=True) or choose another directory")
    if (out / RUN_FILE).exists():
        try:
            before = json.loads((out / RUN_FILE).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"{out / RUN_FILE}: cannot be read ({exc}); remove it to start again") from None
        differ = [k for k in _SAME if before.get(k) != record.get(k)]
        if differ:
            raise InputError(f"{out} was started with other settings ({', '.join(differ)} differ): resume with the "
                             "same corpus, settings and model, or choose another directory")
    out.mkdir(parents=True, exist_ok=True)
    write_json_lines([dict(record)], out / RUN_FILE)


def _check_arguments(judge: Any, budget: Any, output: Any) -> None:
    from ragrade.llm.base import Judge

    if judge is not None and not isinstance(judge, Judge):
        raise InputError("judge must be a judge of the LLM core (name, model, prompt_version, cacheable, "
                         "max_concurrency, async judge(task, inputs), aclose())", value=type(judge).__name__)
    if budget is not None and not isinstance(budget, Budget):
        raise InputError("budget must be a ragrade.llm.budget.Budget", value=type(budget).__name__)
    if output is not None and not isinstance(output, str | os.PathLike):
        raise InputError("output must be a directory path", value=type(output).__name__)


def _make_judge(backend: str, llm: dict[str, Any], seed: int) -> Any:
    """The judge of ``backend``: one of the registry serving the synthesis task set, or ``offline`` (the
    extractive stand-in of :mod:`ragrade.synthesis.offline`, which takes no LLM setting)."""
    from ragrade.llm.backends import get, make_judge, names

    if backend == "offline":
        if llm:
            raise InputError(f"the offline backend takes no LLM setting ({', '.join(llm)})")
        from ragrade.synthesis.offline import ExtractiveJudge

        return ExtractiveJudge()
    if backend not in names(prompts.TASK_SET.name):
        get(backend, prompts.TASK_SET.name)  # the registry's error, naming the backends that serve it
    llm.setdefault("seed", seed)
    return make_judge(backend, prompts.TASK_SET, **llm)


async def asynthesize(corpus: Any, n: int, *, backend: str = "openai", judge: Any = None, mix: Any = None,
                      seed: int = 0, personas: Sequence[str] = (), passage_chars: int = 1200,
                      min_passage_chars: int = 200, check_answerable: bool = True, max_candidates: float = 4.0,
                      embeddings: Any = None, cache: Any = True, budget: Budget | None = None,
                      max_concurrency: int | None = None, retry_failed: bool = False,
                      progress: Callable[[dict[str, Any]], None] | None = None, output: Any = None,
                      resume: bool = False, **options: Any) -> TestSet:
    """Asynchronous :func:`synthesize`."""
    from ragrade.llm.cache import open_cache
    from ragrade.spans.read import read_corpus

    th, llm = _split_options(options)
    settings = Settings(n, parse_mix(mix), seed, tuple(personas), passage_chars, min_passage_chars,
                        bool(check_answerable), max_candidates, Thresholds(**th))
    if judge is not None and llm:
        raise InputError(f"LLM settings ({', '.join(llm)}) are for the judge synthesize() builds; a given judge "
                         "has its own")
    if resume and not cache:
        raise InputError("resume needs the cache (cache=False / --no-cache keeps nothing to resume from)")
    _check_arguments(judge, budget, output)
    corp = read_corpus(corpus)
    owned_judge = judge is None
    if max_concurrency is not None and backend != "offline":
        llm.setdefault("max_concurrency", max_concurrency)  # the backend's own pool and semaphore
    j = _make_judge(backend, llm, seed) if judge is None else judge
    store, owned = open_cache(cache, cacheable=getattr(j, "cacheable", True))
    try:
        syn = Synthesis(settings, corp, j, cache=store, budget=budget or Budget(), max_concurrency=max_concurrency,
                        retry_failed=retry_failed, encoder=default_encoder(embeddings), progress=progress)
        record = run_record(settings, corp, j, len(syn.passages))
        if output is not None:
            prepare_directory(output, record, resume)
        items, rejects = await syn.run()
    finally:
        if owned and store is not None:
            store.close()
        if owned_judge:
            with contextlib.suppress(Exception):
                await j.aclose()
    complete = all(syn.short(k) <= 0 for k in KINDS)
    counts = {**syn.counts.to_dict(), "requests": syn.limit.sent if syn.limit is not None else None,
              "budget_reached": syn.stopped}
    provenance = {**record, "summary": summarize(items, rejects, syn.targets, complete)}
    ts = TestSet(tuple(items), tuple(rejects), corp, provenance, counts, complete)
    if output is not None:
        ts.write(output)
    return ts


@boundary
def synthesize(corpus: Any, n: int, *, backend: str = "openai", **kwargs: Any) -> TestSet:
    """A test set of ``n`` questions from ``corpus`` (a folder of text/Markdown files, a JSONL/Parquet/TSV file
    of ``id`` and ``text``, or ``{doc id: text}``), each anchored to the exact excerpts that answer it.

    ``backend``: a backend of :data:`ragrade.llm.backends.BACKENDS` that serves the synthesis task set
    (``openai``: any OpenAI-compatible server; ``ollama``), built with the LLM settings given as keywords
    (``model``, ``base_url``, ``api_key_env``, ``max_concurrency``... as for the judges), or ``offline``
    (:class:`ragrade.synthesis.offline.ExtractiveJudge`: no model, questions that leak by construction, for
    trying the mechanics); or ``judge=``: a
    judge object of the core (:class:`ragrade.llm.base.Judge`) asked the tasks of
    :data:`ragrade.synthesis.prompts.TASK_SET`.

    ``mix``: kind shares (default ``single=0.5,multi=0.25,abstract=0.25``); ``seed``: passage sampling (and
    the server's seed); ``personas``: question styles taken in turn; ``passage_chars`` /
    ``min_passage_chars``: the passages asked about; ``check_answerable``: the second call; thresholds
    (``fuzzy_floor``, ``max_excerpts``, ``min_excerpt_quality``, ``max_excerpt_share``, ``max_leakage``,
    ``min_bm25_rank``, ``max_duplicate``, ``max_duplicate_embedding``); ``embeddings``: the embedding
    duplicate check (None: when the semantic extra is installed; a callable ``texts -> vectors``);
    ``cache`` (True: the user cache, a path, a JudgmentCache, False), ``budget`` (a
    :class:`ragrade.llm.budget.Budget`; its ``calls`` counts HTTP requests here), ``max_concurrency``,
    ``retry_failed``, ``progress``; ``output``: a directory to write the four files into, ``resume``.
    See docs/synthesize.md."""
    return run_sync(asynthesize(corpus, n, backend=backend, **kwargs))


def read_run_file(directory: Any) -> dict[str, Any] | None:
    p = Path(directory) / RUN_FILE
    return json.loads(p.read_text(encoding="utf-8")) if p.exists() else None


__all__ = ["RUN_FILE", "asynthesize", "prepare_directory", "read_run_file", "run_record", "synthesize"]
