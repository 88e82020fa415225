"""The questions the nugget procedures put to an LLM: prompts, JSON schemas and strict reply readers, as one
:class:`ragrade.llm.tasks.TaskSet` (``TASK_SET``) that any backend of the LLM core asks. Written for ragrade
(docs/nuggets.md shows them); :data:`PROMPT_VERSION` is part of every cache key.

Tasks and their inputs (all strings):

* ``nugget_create`` — ``query``, ``passages`` (numbered), ``nuggets`` (the current list as JSON),
  ``max_nuggets``: reply ``{"nuggets": [text, ...]}``, the whole revised list;
* ``nugget_label`` — ``query``, ``nuggets`` (JSON list): reply ``{"labels": ["vital" | "okay", ...]}``;
* ``nugget_assign`` — ``query``, ``passage``, ``nuggets``: reply ``{"labels": ["support" | "partial_support"
  | "not_support", ...]}``; ``nugget_assign2`` the same with two grades (``support`` | ``not_support``);
* ``answer`` — ``query``, ``document``: reply ``{"answer": text}`` (eRAG's answer from one document);
* ``answer_match`` — ``query``, ``gold`` (JSON list of accepted answers), ``answer``: reply
  ``{"correct": true | false}`` (an LLM as eRAG's answer metric).

Any other input (``sampling``: the temperature and attempt of a call) is not shown to the model: it only
keeps the cache keys of different attempts apart. A reply is one JSON object (a single surrounding Markdown
code fence is tolerated); anything else, a label outside the task's set or a list that is not a list of
strings is unreadable (:class:`~ragrade.errors.OutputError`). Whether a list has one label per nugget is
checked by the procedures, which know how many were asked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ragrade.errors import OutputError
from ragrade.llm.tasks import TaskSet

#: Version of the prompts and schemas below; part of every cache key (bump it when a prompt changes).
PROMPT_VERSION = "nuggets-1"

CREATE, LABEL, ASSIGN, ASSIGN2, ANSWER, MATCH = ("nugget_create", "nugget_label", "nugget_assign", "nugget_assign2",
                                                 "answer", "answer_match")
#: The labels each task's reply may hold.
TASK_LABELS: dict[str, tuple[str, ...]] = {
    LABEL: ("vital", "okay"),
    ASSIGN: ("support", "partial_support", "not_support"),
    ASSIGN2: ("support", "not_support"),
}

_SYSTEM = {
    CREATE: "You write answer keys for judging search results. An answer key lists nuggets: short, self-contained "
            "facts that a good answer to the query states. You reply with one JSON object and nothing else.",
    LABEL: "You weigh the facts of an answer key for a search query. You reply with one JSON object and nothing else.",
    ASSIGN: "You check which facts a text states. You judge only from the text given, not from what you know. You "
            "reply with one JSON object and nothing else.",
    ANSWER: "You answer a question from one document only. You reply with one JSON object and nothing else.",
    MATCH: "You grade a short answer against the accepted answers of a question. You reply with one JSON object "
           "and nothing else.",
}
_SYSTEM[ASSIGN2] = _SYSTEM[ASSIGN]

_CREATE = (
    "QUERY: {query}\n\n"
    "ANSWER KEY SO FAR ({count} nuggets): {nuggets}\n\n"
    "NEW PASSAGES:\n{passages}\n\n"
    "Revise the answer key for the QUERY with what the new passages add, and return the whole key:\n"
    "- keep the nuggets of the key so far that still help, merge nuggets that say the same thing, add the facts "
    "of the new passages that help answer the query;\n"
    "- one fact per nugget, stated (not asked), 1 to 12 words;\n"
    "- take facts only from the key so far and the passages, never from elsewhere;\n"
    "- at most {max_nuggets} nuggets, the most important first.\n\n"
    'Reply as JSON: {{"nuggets": ["...", "..."]}}'
)

_LABEL = (
    "QUERY: {query}\n\n"
    "NUGGETS:\n{numbered}\n\n"
    "Weigh each of the {count} nuggets for the QUERY:\n"
    '"vital" = a good answer must state it; without it the answer is incomplete;\n'
    '"okay" = worth stating, but a good answer can leave it out.\n\n'
    'Reply as JSON with exactly {count} labels, one per nugget in the order above: {{"labels": ["vital" or "okay", '
    "...]}}"
)

_ASSIGN = (
    "QUERY: {query}\n\n"
    "TEXT: {passage}\n\n"
    "NUGGETS:\n{numbered}\n\n"
    "For each of the {count} nuggets, does the TEXT state it?\n{scale}\n\n"
    'Reply as JSON with exactly {count} labels, one per nugget in the order above: {{"labels": [...]}}'
)
_SCALE3 = ('"support" = the text states the whole fact;\n'
           '"partial_support" = the text states part of the fact, or states it vaguely;\n'
           '"not_support" = the text does not state it.')
_SCALE2 = ('"support" = the text states the whole fact;\n'
           '"not_support" = the text does not state it, or only part of it.')

_ANSWER = (
    "QUESTION: {query}\n\n"
    "DOCUMENT: {document}\n\n"
    "Answer the QUESTION in a few words, using only the DOCUMENT. If the document does not say, answer with what "
    "it suggests, or an empty string.\n\n"
    'Reply as JSON: {{"answer": "..."}}'
)

_MATCH = (
    "QUESTION: {query}\n\n"
    "ACCEPTED ANSWERS: {gold}\n\n"
    "ANSWER TO GRADE: {answer}\n\n"
    "Is the answer to grade correct, that is, does it say the same as one of the accepted answers?\n\n"
    'Reply as JSON: {{"correct": true or false}}'
)


def _numbered(nuggets_json: str) -> tuple[str, int]:
    items = json.loads(nuggets_json)
    return "\n".join(f"{i}. {t}" for i, t in enumerate(items, 1)), len(items)


def build_messages(task: str, inputs: Mapping[str, str]) -> list[dict[str, str]]:
    """The chat messages of one judgment (``sampling`` and other keys the prompt does not name are ignored)."""
    q = inputs.get("query", "").strip()
    if task == CREATE:
        current = json.loads(inputs.get("nuggets", "[]"))
        user = _CREATE.format(query=q, count=len(current), nuggets=json.dumps(current, ensure_ascii=False),
                              passages=inputs["passages"].strip(), max_nuggets=inputs.get("max_nuggets", "30"))
    elif task == LABEL:
        numbered, count = _numbered(inputs["nuggets"])
        user = _LABEL.format(query=q, numbered=numbered, count=count)
    elif task in (ASSIGN, ASSIGN2):
        numbered, count = _numbered(inputs["nuggets"])
        user = _ASSIGN.format(query=q, passage=inputs["passage"].strip(), numbered=numbered, count=count,
                              scale=_SCALE3 if task == ASSIGN else _SCALE2)
    elif task == ANSWER:
        user = _ANSWER.format(query=q, document=inputs["document"].strip())
    elif task == MATCH:
        user = _MATCH.format(query=q, gold=inputs["gold"], answer=inputs["answer"].strip())
    else:
        raise OutputError(f"unknown task {task!r}")
    return [{"role": "system", "content": _SYSTEM[task]}, {"role": "user", "content": user}]


def _labels_schema(labels: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "object", "properties": {"labels": {"type": "array", "items": {"type": "string", "enum": list(labels)}}},
            "required": ["labels"], "additionalProperties": False}


SCHEMAS: dict[str, dict[str, Any]] = {
    CREATE: {"type": "object", "properties": {"nuggets": {"type": "array", "items": {"type": "string"}}},
             "required": ["nuggets"], "additionalProperties": False},
    LABEL: _labels_schema(TASK_LABELS[LABEL]),
    ASSIGN: _labels_schema(TASK_LABELS[ASSIGN]),
    ASSIGN2: _labels_schema(TASK_LABELS[ASSIGN2]),
    ANSWER: {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
             "additionalProperties": False},
    MATCH: {"type": "object", "properties": {"correct": {"type": "boolean"}}, "required": ["correct"],
            "additionalProperties": False},
}

_FENCE = re.compile(r"\A```(?:json|JSON)?\s*\n?(.*?)\n?```\Z", re.DOTALL)


def _clip(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[:n] + "..."


def _object(text: str) -> dict[str, Any]:
    stripped = text.strip()
    if not stripped:
        raise OutputError("empty reply")
    m = _FENCE.match(stripped)
    try:
        obj = json.loads(m.group(1).strip() if m else stripped)
    except ValueError:
        raise OutputError(f"reply is not a JSON object: {_clip(stripped)!r}") from None
    if not isinstance(obj, dict):
        raise OutputError(f"reply is not a JSON object: {_clip(stripped)!r}")
    return obj


def _strings(obj: dict[str, Any], key: str) -> list[str]:
    value = obj.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise OutputError(f"reply has no list of strings {key!r}: {_clip(json.dumps(obj))!r}")
    return value


def normal_label(text: str) -> str:
    """A label as written by a model, normalised: lower case, spaces and hyphens as underscores."""
    return text.strip().lower().replace(" ", "_").replace("-", "_")


def parse_reply(task: str, text: str) -> dict[str, Any]:
    """The canonical output of one reply (raises :class:`~ragrade.errors.OutputError`).

    >>> parse_reply("nugget_label", '{"labels": ["Vital", "okay"]}')
    {'labels': ['vital', 'okay']}
    >>> parse_reply("nugget_assign", '{"labels": ["supported"]}')
    Traceback (most recent call last):
    ...
    ragrade.errors.OutputError: unknown label 'supported' (expected support, partial_support, not_support)
    """
    obj = _object(text)
    if task == CREATE:
        nuggets = [" ".join(t.split()) for t in _strings(obj, "nuggets")]
        return {"nuggets": [t for t in nuggets if t]}
    if task in TASK_LABELS:
        labels = [normal_label(t) for t in _strings(obj, "labels")]
        allowed = TASK_LABELS[task]
        bad = next((t for t in labels if t not in allowed), None)
        if bad is not None:
            raise OutputError(f"unknown label {bad!r} (expected {', '.join(allowed)})")
        return {"labels": labels}
    if task == ANSWER:
        answer = obj.get("answer")
        if not isinstance(answer, str):
            raise OutputError(f"reply has no string 'answer': {_clip(json.dumps(obj))!r}")
        return {"answer": answer.strip()}
    if task == MATCH:
        correct = obj.get("correct")
        if not isinstance(correct, bool):
            raise OutputError(f"'correct' must be true or false: {_clip(json.dumps(obj))!r}")
        return {"correct": correct}
    raise OutputError(f"unknown task {task!r}")


def _schema(task: str) -> dict[str, Any] | None:
    return SCHEMAS.get(task)


#: The nugget tasks as the LLM backends take them (``ragrade.llm.backends.make_judge("openai", TASK_SET, ...)``).
TASK_SET = TaskSet("nugget", PROMPT_VERSION, build_messages, _schema, parse_reply, max_tokens=1024)

__all__ = ["ANSWER", "ASSIGN", "ASSIGN2", "CREATE", "LABEL", "MATCH", "PROMPT_VERSION", "SCHEMAS", "TASK_LABELS",
           "TASK_SET", "build_messages", "normal_label", "parse_reply"]
