"""Prompts, JSON schemas and output parsing for the LLM judge.

Each task (see :data:`ragrade.judges.base.TASKS`) has a system prompt, a user message template, and a JSON
schema for servers that support structured output. Whatever the server does, the reply goes through
:func:`parse_output`, which finds the first JSON value in the text (code fences and chatter around it are
tolerated), and :func:`normalize_output`, which checks its shape and turns the many ways a model writes a
yes/no verdict into 0/1. Bump :data:`PROMPT_VERSION` whenever a prompt or schema changes: it is part of the
cache key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ragrade.llm.tasks import OutputError as _OutputError
from ragrade.llm.tasks import TaskSet

PROMPT_VERSION = "judge-prompts-1"

_SYSTEM = (
    "You are a careful, strict grader of retrieval results. You answer with one JSON object and nothing "
    "else. Judge only from the texts you are given, not from your own knowledge."
)

_TEMPLATES: dict[str, str] = {
    "chunk_verdict": (
        "Decide whether the CONTEXT is useful for answering the QUESTION{answer_hint}.\n"
        "Give verdict 1 if the context contains information that helps arrive at the answer, "
        "otherwise 0, and a one-sentence reason.\n\n"
        "QUESTION: {question}\n{answer_block}CONTEXT: {context}\n\n"
        'Reply as JSON: {{"reason": "...", "verdict": 0 or 1}}'
    ),
    "attribution": (
        "Split the REFERENCE ANSWER into short, self-contained factual statements. For each statement "
        "decide whether the CONTEXT supports it (attributed 1) or not (attributed 0), with a short reason.\n\n"
        "QUESTION: {question}\nCONTEXT: {context}\nREFERENCE ANSWER: {reference}\n\n"
        'Reply as JSON: {{"statements": [{{"statement": "...", "reason": "...", "attributed": 0 or 1}}]}}'
    ),
    "entities": (
        "List the named entities in the TEXT: people, places, organisations, products, works, events, "
        "dates and numbers with their units. Copy each entity exactly as written, once.\n\n"
        "TEXT: {text}\n\n"
        'Reply as JSON: {{"entities": ["...", "..."]}}'
    ),
    "relevance": (
        "Split the CONTEXT into short statements. For each statement decide whether it helps answer the "
        "QUESTION (relevant 1) or not (relevant 0), with a short reason.\n\n"
        "QUESTION: {question}\nCONTEXT: {context}\n\n"
        'Reply as JSON: {{"statements": [{{"statement": "...", "reason": "...", "relevant": 0 or 1}}]}}'
    ),
}

_VERDICT = {"type": "integer", "enum": [0, 1]}
_STR = {"type": "string"}

SCHEMAS: dict[str, dict[str, Any]] = {
    "chunk_verdict": {
        "type": "object",
        "properties": {"reason": _STR, "verdict": _VERDICT},
        "required": ["reason", "verdict"],
        "additionalProperties": False,
    },
    "attribution": {
        "type": "object",
        "properties": {
            "statements": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"statement": _STR, "reason": _STR, "attributed": _VERDICT},
                    "required": ["statement", "reason", "attributed"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["statements"],
        "additionalProperties": False,
    },
    "entities": {
        "type": "object",
        "properties": {"entities": {"type": "array", "items": _STR}},
        "required": ["entities"],
        "additionalProperties": False,
    },
    "relevance": {
        "type": "object",
        "properties": {
            "statements": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"statement": _STR, "reason": _STR, "relevant": _VERDICT},
                    "required": ["statement", "reason", "relevant"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["statements"],
        "additionalProperties": False,
    },
}


def build_messages(task: str, inputs: Mapping[str, str]) -> list[dict[str, str]]:
    """The chat messages for one judgment."""
    if task not in _TEMPLATES:
        raise ValueError(f"unknown judgment task {task!r}; expected one of {sorted(_TEMPLATES)}")
    fields = dict(inputs)
    if task == "chunk_verdict":
        answer = fields.get("answer", "")
        fields["answer_hint"] = " and arriving at the ANSWER" if answer else ""
        fields["answer_block"] = f"ANSWER: {answer}\n" if answer else ""
    return [
        {"role": "system", "content": _SYSTEM},
        {"role": "user", "content": _TEMPLATES[task].format(**fields)},
    ]


OutputError = _OutputError  # (defined in the LLM core; re-exported here, its old home)


_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def extract_json(text: str) -> Any:
    """The first JSON object or array in ``text``.

    Tries, in order: the whole text; the inside of each Markdown code fence; each ``{`` or ``[`` in the text
    as the start of a value (``json.JSONDecoder.raw_decode`` finds where that value ends, so braces inside
    strings and trailing chatter are handled). Raises :class:`OutputError` when nothing parses.
    """
    stripped = text.strip()
    if not stripped:
        raise OutputError("empty reply")
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    for block in _FENCE.findall(stripped):
        try:
            return json.loads(block.strip())
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[{\[]", stripped):
        try:
            value, _ = decoder.raw_decode(stripped, match.start())
        except ValueError:
            continue
        if isinstance(value, dict | list):
            return value
    raise OutputError(f"no JSON object in reply {_clip(stripped)!r}")


_YES = {"1", "yes", "y", "true", "relevant", "supported", "attributed", "useful"}
_NO = {"0", "no", "n", "false", "irrelevant", "not relevant", "unsupported", "not supported", "not attributed"}


def _flag(value: Any, what: str) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    if isinstance(value, str):
        v = value.strip().strip(".").lower()
        if v in _YES:
            return 1
        if v in _NO:
            return 0
    raise OutputError(f"{what} must be 0/1 or yes/no, got {value!r}")


def _clip(text: str, n: int = 160) -> str:
    return text if len(text) <= n else text[:n] + "..."


def _first_key(obj: Mapping[str, Any], names: tuple[str, ...], what: str) -> Any:
    for name in names:
        if name in obj:
            return obj[name]
    raise OutputError(f"missing {what!r} (looked for {', '.join(names)}) in {_clip(json.dumps(obj))!r}")


def _statement_list(obj: Any, flag_names: tuple[str, ...], flag_out: str) -> dict[str, Any]:
    items = obj
    if isinstance(obj, dict):
        items = _first_key(obj, ("statements", "classifications", "sentences", "items", "results"), "statements")
    if not isinstance(items, list):
        raise OutputError(f"statements must be a list, got {_clip(json.dumps(items))!r}")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise OutputError(f"statement {i} must be an object, got {item!r}")
        text = _first_key(item, ("statement", "sentence", "claim", "text"), "statement")
        flag = _flag(_first_key(item, (*flag_names, "verdict", "label"), flag_out), f"statement {i} {flag_out}")
        out.append({"statement": str(text), "reason": str(item.get("reason", "")), flag_out: flag})
    return {"statements": out}


def normalize_output(task: str, obj: Any) -> dict[str, Any]:
    """Check a parsed reply against the task's shape and return its canonical form."""
    if task == "chunk_verdict":
        if not isinstance(obj, dict):
            raise OutputError(f"expected an object with a verdict, got {_clip(json.dumps(obj))!r}")
        verdict = _flag(_first_key(obj, ("verdict", "relevant", "useful", "label"), "verdict"), "verdict")
        return {"verdict": verdict, "reason": str(obj.get("reason", ""))}
    if task == "attribution":
        return _statement_list(obj, ("attributed", "supported"), "attributed")
    if task == "relevance":
        return _statement_list(obj, ("relevant",), "relevant")
    if task == "entities":
        items = obj
        if isinstance(obj, dict):
            items = _first_key(obj, ("entities", "entity_list", "named_entities"), "entities")
        if not isinstance(items, list):
            raise OutputError(f"entities must be a list, got {_clip(json.dumps(items))!r}")
        ents: list[str] = []
        for e in items:
            if isinstance(e, dict):
                e = _first_key(e, ("entity", "name", "text"), "entity")
            if not isinstance(e, str | int | float):
                raise OutputError(f"entity must be a string, got {e!r}")
            s = str(e).strip()
            if s and s not in ents:
                ents.append(s)
        return {"entities": ents}
    raise ValueError(f"unknown judgment task {task!r}")


def parse_output(task: str, text: str) -> dict[str, Any]:
    """Parse and normalise a judge's raw reply text."""
    return normalize_output(task, extract_json(text))


def _schema(task: str) -> dict[str, Any] | None:
    return SCHEMAS.get(task)


#: The judge metrics' tasks, as the LLM backends take them (:class:`ragrade.llm.tasks.TaskSet`).
TASK_SET = TaskSet("context", PROMPT_VERSION, build_messages, _schema, parse_output, max_tokens=1024,
                   offline={"offline": "ragrade.judges.offline:LexicalJudge",
                            "semantic": "ragrade.judges.offline:SemanticJudge"})
