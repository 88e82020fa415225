"""The questions put to the LLM when a test set is synthesized: a :class:`~ragrade.llm.tasks.TaskSet` of
ragrade's own (prompts, JSON schemas and reply readers as data; docs/synthesize.md, "Prompts").

Tasks (inputs are strings):

* ``question_single`` — one passage (``passage_1``, ``title_1``): a specific question it answers;
* ``question_multi`` — two passages of different documents (``passage_1``, ``title_1``, ``passage_2``,
  ``title_2``): a specific question that needs a fact of each;
* ``question_abstract`` — two passages: a broader question (a comparison, a theme, a consequence) that the
  two answer together;
* ``answerability`` — ``question`` and ``excerpts``: can the question be answered from the excerpts alone?

Every question task also takes ``persona`` (empty: none) and ``max_excerpts``. Its reply is one JSON object
``{"question": ..., "answer": ..., "excerpts": [{"passage": 1, "text": ...}, ...]}``, the excerpts copied
verbatim from the passages (they are then located in the documents; an excerpt that cannot be found is
refused). :func:`parse` reads a reply leniently where nothing is lost (a code fence, prose around the object,
excerpts given as plain strings) and strictly where something would be (no question, no excerpt: an
:class:`~ragrade.llm.tasks.OutputError`, so the backend asks again before the item is rejected).

:data:`PROMPT_VERSION` is part of every cache key; :func:`prompt_hashes` (the SHA-256 of each task's
system prompt, template and schema) goes into the provenance file of every test set. Reword a prompt and
bump the version.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from ragrade.judges.prompts import extract_json
from ragrade.llm.tasks import OutputError, TaskSet

PROMPT_VERSION = "synthesize-1"

KIND_TASK = {"single": "question_single", "multi": "question_multi", "abstract": "question_abstract"}
ANSWERABILITY = "answerability"
TASKS = (*KIND_TASK.values(), ANSWERABILITY)

SYSTEM = (
    "You write test questions for a search engine over a collection of documents. You are shown passages "
    "of the documents. You write a question a real user could type, which the passages answer, and you "
    "copy, character for character, the parts of the passages that hold the answer. You answer with one "
    "JSON object and nothing else."
)

_RULES = (
    "Rules:\n"
    "- The question must make sense to someone who has not seen the passages: never write \"the passage\", "
    "\"the text\", \"the document\" or \"according to\".\n"
    "- Use your own words: do not copy a phrase of the passages into the question.\n"
    "- EXCERPTS: copy exactly, character for character, the shortest parts of the passages (a sentence or "
    "two each, at most {max_excerpts} in all) that a reader needs to answer the question. Give each with "
    "the number of its passage.\n"
    "- ANSWER: the answer in one or two sentences.\n"
    "{persona_line}"
)

_REPLY = 'Reply as JSON: {{"question": "...", "answer": "...", "excerpts": [{{"passage": 1, "text": "..."}}]}}'

TEMPLATES: dict[str, str] = {
    "question_single": (
        "Write one specific question that PASSAGE 1 answers: it asks about one fact the passage states.\n"
        + _RULES + "\nPASSAGE 1 (from \"{title_1}\"):\n{passage_1}\n\n" + _REPLY
    ),
    "question_multi": (
        "Write one specific question that needs BOTH passages to be answered: it joins a fact of PASSAGE 1 "
        "with a fact of PASSAGE 2 (for example it compares them, or one leads to the other). Copy at least "
        "one excerpt from each passage.\n"
        + _RULES + "\nPASSAGE 1 (from \"{title_1}\"):\n{passage_1}\n\nPASSAGE 2 (from \"{title_2}\"):\n"
        "{passage_2}\n\n" + _REPLY
    ),
    "question_abstract": (
        "Write one broad question that PASSAGE 1 and PASSAGE 2 answer together: about a theme, a comparison, "
        "a cause or a consequence they share, not about a single fact. Copy at least one excerpt from each "
        "passage.\n"
        + _RULES + "\nPASSAGE 1 (from \"{title_1}\"):\n{passage_1}\n\nPASSAGE 2 (from \"{title_2}\"):\n"
        "{passage_2}\n\n" + _REPLY
    ),
    ANSWERABILITY: (
        "Can the QUESTION be answered from the EXCERPTS alone, without any other knowledge? Answer true only "
        "when the excerpts state everything the answer needs.\n\n"
        "QUESTION: {question}\n"
        "EXCERPTS:\n{excerpts}\n\n"
        'Reply as JSON: {{"answerable": true or false}}'
    ),
}

ANSWERABILITY_SYSTEM = (
    "You check test questions for a search engine. You read a question and a few excerpts of documents and "
    "say whether the excerpts alone answer the question. You answer with one JSON object and nothing else."
)

_EXCERPT = {
    "type": "object",
    "properties": {"passage": {"type": "integer"}, "text": {"type": "string"}},
    "required": ["passage", "text"],
    "additionalProperties": False,
}
QUESTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"question": {"type": "string"}, "answer": {"type": "string"},
                   "excerpts": {"type": "array", "items": _EXCERPT}},
    "required": ["question", "answer", "excerpts"],
    "additionalProperties": False,
}
ANSWERABILITY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answerable": {"type": "boolean"}},
    "required": ["answerable"],
    "additionalProperties": False,
}

#: Longest question kept (characters): a longer one is an unreadable reply.
MAX_QUESTION = 600

_WS = re.compile(r"\s+")


def messages(task: str, inputs: Mapping[str, str]) -> list[dict[str, str]]:
    """The chat messages of one task."""
    if task == ANSWERABILITY:
        return [{"role": "system", "content": ANSWERABILITY_SYSTEM},
                {"role": "user", "content": TEMPLATES[task].format(question=inputs["question"],
                                                                     excerpts=inputs["excerpts"])}]
    persona = inputs.get("persona", "").strip()
    fields = {
        "max_excerpts": inputs.get("max_excerpts", "5"),
        "persona_line": f"- Ask as {persona} would ask.\n" if persona else "",
        "passage_1": inputs["passage_1"], "title_1": inputs.get("title_1", ""),
        "passage_2": inputs.get("passage_2", ""), "title_2": inputs.get("title_2", ""),
    }
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TEMPLATES[task].format(**fields)}]


def schema(task: str) -> dict[str, Any] | None:
    if task == ANSWERABILITY:
        return ANSWERABILITY_SCHEMA
    return QUESTION_SCHEMA if task in TEMPLATES else None


def _clip(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[:n] + "..."


def one_line(text: str) -> str:
    """``text`` with every run of whitespace read as one space, trimmed."""
    return _WS.sub(" ", text).strip()


def _excerpts(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise OutputError(f"'excerpts' must be a list, got {_clip(json.dumps(value))}")
    out = []
    for e in value:
        if isinstance(e, dict):
            text, where = e.get("text", e.get("excerpt")), e.get("passage")
        else:
            text, where = e, None
        if not isinstance(text, str) or not text.strip():
            continue
        p = where if isinstance(where, int) and not isinstance(where, bool) and where in (1, 2) else 0
        out.append({"passage": p, "text": text})
    if not out:
        raise OutputError("the reply holds no excerpt")
    return out


def parse_question(text: str) -> dict[str, Any]:
    """``{"question", "answer", "excerpts": [{"passage": 0|1|2, "text"}]}`` from a question reply (passage 0:
    not said). Raises :class:`OutputError` for a reply without a JSON object, a question or an excerpt."""
    obj = extract_json(text)
    if not isinstance(obj, dict):
        raise OutputError(f"reply is not a JSON object: {_clip(text.strip())!r}")
    q = obj.get("question")
    if not isinstance(q, str) or not one_line(q):
        raise OutputError("the reply holds no question")
    if len(one_line(q)) > MAX_QUESTION:
        raise OutputError(f"the question is longer than {MAX_QUESTION} characters")
    answer = obj.get("answer")
    return {"question": one_line(q), "answer": one_line(answer) if isinstance(answer, str) else "",
            "excerpts": _excerpts(obj.get("excerpts", obj.get("references")))}


_YES = {"true", "yes", "1", "answerable"}
_NO = {"false", "no", "0", "not answerable", "unanswerable"}


def parse_answerability(text: str) -> dict[str, Any]:
    """``{"answerable": 0 or 1}``; raises :class:`OutputError` when the reply says neither."""
    obj = extract_json(text)
    v = obj.get("answerable") if isinstance(obj, dict) else None
    if isinstance(v, bool) or (isinstance(v, int) and v in (0, 1)):
        return {"answerable": int(v)}
    if isinstance(v, str) and v.strip().lower() in _YES | _NO:
        return {"answerable": int(v.strip().lower() in _YES)}
    raise OutputError(f"reply has no true/false 'answerable': {_clip(text.strip())!r}")


def parse(task: str, text: str) -> dict[str, Any]:
    return parse_answerability(text) if task == ANSWERABILITY else parse_question(text)


def prompt_hashes() -> dict[str, str]:
    """Task -> SHA-256 of its system prompt, template and reply schema (recorded in the provenance)."""
    out = {}
    for task in TASKS:
        system = ANSWERABILITY_SYSTEM if task == ANSWERABILITY else SYSTEM
        blob = json.dumps([system, TEMPLATES[task], schema(task)], sort_keys=True, ensure_ascii=False)
        out[task] = hashlib.sha256(blob.encode("utf-8")).hexdigest()
    return out


#: The task set of test-set synthesis, as every LLM backend takes it.
TASK_SET = TaskSet("synthesize", PROMPT_VERSION, messages, schema, parse, max_tokens=768)

__all__ = ["ANSWERABILITY", "KIND_TASK", "PROMPT_VERSION", "QUESTION_SCHEMA", "TASKS", "TASK_SET", "TEMPLATES",
           "messages", "one_line", "parse", "parse_answerability", "parse_question", "prompt_hashes", "schema"]
