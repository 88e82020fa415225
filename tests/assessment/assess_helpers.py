"""Helpers shared by the assessment tests."""

from __future__ import annotations

import re
from typing import Any


def field(user: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*?)(?=\n[A-Z]+: |\n\nReply as JSON|\Z)", user, re.S | re.M)
    return m.group(1) if m else ""


def grade_answer(user: str) -> dict[str, Any]:
    """A deterministic 'assessor' for the fault server: the number of the query's words (3+ letters) found
    in the passage, capped at 3."""
    if not user.startswith("Grade the PASSAGE"):
        return {"error": "not a grading prompt"}
    q = {w for w in re.findall(r"[a-z]{3,}", field(user, "QUERY").lower())}
    p = set(re.findall(r"[a-z]{3,}", field(user, "PASSAGE").lower()))
    return {"grade": min(3, len(q & p))}


def small_collection(n_queries: int = 6, depth: int = 5) -> tuple[dict, dict, dict, dict]:
    """(run a, run b, queries, passages): two runs over n_queries queries with overlapping top lists."""
    words = ["amber", "basalt", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper"]
    run_a: dict[str, dict[str, float]] = {}
    run_b: dict[str, dict[str, float]] = {}
    queries: dict[str, str] = {}
    passages: dict[str, tuple[str, str]] = {}
    for i in range(n_queries):
        q = f"q{i}"
        qw = [words[i % 10], words[(i + 3) % 10], words[(i + 7) % 10]]
        queries[q] = " ".join(qw)
        run_a[q] = {f"d{i}-{j}": float(depth - j) for j in range(depth)}
        run_b[q] = {f"d{i}-{j}": float(j) for j in range(2, depth + 2)}
        for j in range(depth + 2):
            passages[f"d{i}-{j}"] = (f"Title {i}-{j}", "word " * 3 + " ".join(qw[: j % 4]) + f" filler number {i}x{j}.")
    return run_a, run_b, queries, passages
