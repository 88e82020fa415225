"""Agreement of a judge with the hand labels in ``data/agreement.jsonl`` (used by test_agreement.py and
bench/bench_judges.py).

Each line is one judgment with its hand label: ``chunk_verdict`` (is the chunk useful for the answer),
``attribution`` (does the context support this one statement), ``relevance`` (does this one context
statement help answer the question) — all 0/1 — and ``entities`` (the entities of a text). Binary tasks
report accuracy and Cohen's kappa; entities report micro precision/recall/F1 over normalised strings.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from ragrade.judges.metrics import normalize_entity

DATA = Path(__file__).parent / "data" / "agreement.jsonl"


def load_items(path: Path = DATA) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _predict(task: str, output: dict[str, Any]) -> Any:
    if task == "chunk_verdict":
        return output["verdict"]
    if task == "attribution":  # the label is about the whole statement: all of its parts must be supported
        parts = output["statements"]
        return int(bool(parts) and all(s["attributed"] for s in parts))
    if task == "relevance":
        return int(any(s["relevant"] for s in output["statements"]))
    return output["entities"]


def kappa(pred: list[int], gold: list[int]) -> float:
    n = len(gold)
    po = sum(p == g for p, g in zip(pred, gold, strict=True)) / n
    p1, g1 = sum(pred) / n, sum(gold) / n
    pe = p1 * g1 + (1 - p1) * (1 - g1)
    return 1.0 if pe == 1 else (po - pe) / (1 - pe)


async def _judge_all(judge: Any, items: list[dict[str, Any]], concurrency: int) -> list[Any]:
    sem = asyncio.Semaphore(concurrency)

    async def one(it: dict[str, Any]) -> Any:
        async with sem:
            return await judge.judge(it["task"], it["inputs"])

    return await asyncio.gather(*(one(it) for it in items))


def measure(judge: Any, items: list[dict[str, Any]] | None = None, *, concurrency: int = 1) -> dict[str, dict[str, float]]:
    """Per task: n, failed, accuracy and kappa (binary tasks; a failed judgment counts as wrong) or micro
    precision/recall/F1 (entities)."""
    items = items if items is not None else load_items()
    judgments = asyncio.run(_judge_all(judge, items, concurrency))
    report: dict[str, dict[str, float]] = {}
    for task in ("chunk_verdict", "attribution", "relevance", "entities"):
        pairs = [(it, j) for it, j in zip(items, judgments, strict=True) if it["task"] == task]
        failed = sum(1 for _, j in pairs if not j.ok)
        if task == "entities":
            tp = fp = fn = 0
            for it, j in pairs:
                gold = {normalize_entity(e) for e in it["label"]}
                pred = {normalize_entity(e) for e in _predict(task, j.output)} if j.ok else set()
                tp, fp, fn = tp + len(gold & pred), fp + len(pred - gold), fn + len(gold - pred)
            p = tp / (tp + fp) if tp + fp else 0.0
            r = tp / (tp + fn) if tp + fn else 0.0
            report[task] = {"n": len(pairs), "failed": failed, "precision": p, "recall": r,
                            "f1": 2 * p * r / (p + r) if p + r else 0.0}
        else:
            gold = [it["label"] for it, _ in pairs]
            pred = [_predict(task, j.output) if j.ok else 1 - it["label"] for it, j in pairs]
            report[task] = {"n": len(pairs), "failed": failed,
                            "accuracy": sum(p == g for p, g in zip(pred, gold, strict=True)) / len(gold),
                            "kappa": kappa(pred, gold)}
    return report
