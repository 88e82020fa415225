"""A scripted 'LLM' for the nugget prompts, answered by the judges' loopback fault server (tests/judges/
fakeserver.py), and a small collection of queries, passages, runs and gold answers.

The collection: passage ``dNN`` of query ``qX`` says ``full kNN`` (it states fact kNN) and ``part kMM`` (it
states part of fact kMM). The scripted model:

* creation: adds the nugget ``key kNN is stated`` for each passage of the window (the ``full`` key), after
  the nuggets so far, capped at the asked maximum;
* labelling: a nugget whose key number is even is vital, odd okay;
* assignment: ``support`` when the text says ``full kNN``, ``partial_support`` when it says ``part kNN``;
* answers (eRAG): the first word of the document; matching: correct when the answer is a gold answer.

``FAULTS``: ``{substring: [mode, ...]}``; a request whose prompt holds the substring takes the next mode
(``ok``, ``bad_json``, ``unknown_label``, ``missing``, ``cut``).
"""

from __future__ import annotations

import json
import re
from typing import Any

FAULTS: dict[str, list[str]] = {}
#: a marker the json shim turns into a reply cut at max_tokens (finish_reason "length")
CUT = "\x00CUT\x00"


def field(user: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*?)(?=\n\n[A-Z][A-Z ]+[:(]|\n\n(?:For each|Weigh|Revise|Answer|Is the|Reply)|\Z)", user,
                  re.S | re.M)
    return m.group(1) if m else ""


def numbered(user: str) -> list[str]:
    block = user.split("NUGGETS:\n", 1)[1].split("\n\n", 1)[0]
    return [re.sub(r"^\d+\. ", "", line) for line in block.splitlines()]


def key_of(nugget: str) -> str:
    m = re.search(r"k\d+", nugget)
    return m.group(0) if m else ""


def task_of(user: str) -> str:
    if "NEW PASSAGES:" in user:
        return "create"
    if user.count("NUGGETS:") and "Weigh each of the" in user:
        return "label"
    if "does the TEXT state it?" in user:
        return "assign"
    if user.startswith("QUESTION:") and "DOCUMENT:" in user:
        return "answer"
    if "ACCEPTED ANSWERS:" in user:
        return "match"
    return "unknown"


def _fault(user: str) -> str:
    for key, modes in FAULTS.items():
        if key in user and modes:
            return modes.pop(0)
    return "ok"


def _create(user: str) -> dict[str, Any]:
    current = json.loads(re.search(r"ANSWER KEY SO FAR \(\d+ nuggets\): (.*)$", user, re.M).group(1))
    passages = user.split("NEW PASSAGES:\n", 1)[1].split("\n\nRevise", 1)[0]
    most = int(re.search(r"at most (\d+) nuggets", user).group(1))
    new = [f"key {k} is stated" for k in re.findall(r"full (k\d+)", passages)]
    return {"nuggets": list(dict.fromkeys(current + new))[:most]}


def _labels(user: str, task: str) -> list[str]:
    nuggets = numbered(user)
    if task == "label":
        return ["vital" if int(key_of(n)[1:] or 1) % 2 == 0 else "okay" for n in nuggets]
    text = field(user, "TEXT")
    return ["support" if f"full {key_of(n)}" in text else "partial_support" if f"part {key_of(n)}" in text
            else "not_support" for n in nuggets]


def nugget_answer(user: str) -> Any:
    """The scripted reply to one prompt (a dict, or a string for a broken one)."""
    task = task_of(user)
    mode = _fault(user)
    if mode == "bad_json":
        return "I think the labels are support and not_support."
    if task == "create":
        return _create(user)
    if task in ("label", "assign"):
        labels = _labels(user, task)
        if mode == "unknown_label":
            labels[0] = "maybe"
        elif mode == "missing":
            labels = labels[:-1]
        elif mode == "cut":
            return CUT + json.dumps({"labels": labels})[:15]
        return {"labels": labels}
    if task == "answer":
        words = field(user, "DOCUMENT").split()
        return {"answer": words[0] if words else ""}
    if task == "match":
        gold = [g.lower() for g in json.loads(field(user, "ACCEPTED ANSWERS"))]
        return {"correct": field(user, "ANSWER TO GRADE").strip().lower() in gold}
    return {"error": "unknown prompt"}


class JsonShim:
    """The fake server's ``json`` module: a string answer is sent as the reply's text as it is (a broken reply),
    and one marked :data:`CUT` as a reply cut at max_tokens."""

    loads = staticmethod(json.loads)

    @staticmethod
    def dumps(obj: Any, *args: Any, **kwargs: Any) -> str:
        if isinstance(obj, str):
            return obj
        if isinstance(obj, dict) and "choices" in obj:
            msg = obj["choices"][0]["message"]
            if isinstance(msg.get("content"), str) and msg["content"].startswith(CUT):
                msg["content"] = msg["content"][len(CUT):]
                obj["choices"][0]["finish_reason"] = "length"
        return json.dumps(obj, *args, **kwargs)


def calls(server: Any, task: str | None = None) -> list[dict[str, Any]]:
    """The requests the server got (for one task)."""
    with server.lock:
        return [e for e in server.log if task is None or task_of(e["user"]) == task]


# -- a small collection ----------------------------------------------------------------------------------------

def collection(n_queries: int = 3, per_query: int = 12) -> dict[str, Any]:
    """queries, passages, qrels (grades 3, 2 and 1), three runs sharing passages, gold answers."""
    queries, passages, qrels, answers = {}, {}, {}, {}
    runs: dict[str, dict[str, list[str]]] = {"a": {}, "b": {}, "c": {}}
    for i in range(n_queries):
        q = f"q{i}"
        queries[q] = f"what does topic {i} say"
        qrels[q] = {}
        docs = [f"{q}-d{j:02d}" for j in range(per_query)]
        for j, d in enumerate(docs):
            passages[d] = f"w{j} passage {d} says full k{j:02d} and part k{(j + 1) % per_query:02d}."
            qrels[q][d] = 3 if j % 3 == 0 else 2 if j % 3 == 1 else 1
        runs["a"][q] = docs[:8]
        runs["b"][q] = docs[2:10]
        runs["c"][q] = list(reversed(docs[:8]))
        answers[q] = ["w0", "w3"]
    return {"queries": queries, "passages": passages, "qrels": qrels, "runs": runs, "answers": answers}
