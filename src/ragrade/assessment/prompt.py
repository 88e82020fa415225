"""The graded relevance question put to an LLM assessor: its prompt, JSON schema and strict reply parser.

Grades (``docs/assessment.md`` explains them with examples):

=====  ===========================================================================================
grade  meaning
=====  ===========================================================================================
0      unrelated: the passage has nothing to do with the query
1      related, not answering: on the query's topic, but a reader learns nothing that answers it
2      answers partly: part of the answer, or the answer stated vaguely or buried in other matter
3      answers fully and precisely: a reader could stop here
=====  ===========================================================================================

The reply must be one JSON object with an integer ``grade`` from 0 to 3 (a single surrounding Markdown
code fence is tolerated, nothing else). Anything else is an unreadable reply: the judge asks again, and if
the second reply is unreadable too the judgment fails. It is never read as a 0.

:data:`PROMPT_VERSION` is part of every cache key: reword the prompt or the schema and bump it, and old
grades are not reused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ragrade.judges.prompts import OutputError
from ragrade.llm.tasks import TaskSet
from ragrade.options import public

#: The judgment task name of graded relevance (inputs ``query``, ``title``, ``passage``).
TASK = "graded_relevance"

#: Version of the prompt and schema below; part of the cache key.
PROMPT_VERSION = "assess-graded-1"

#: The grades, lowest first.
GRADES = (0, 1, 2, 3)

SYSTEM = (
    "You assess search results for a test collection. You read one search query and one passage and "
    "grade how well the passage answers the query. Judge only from the passage, not from what you know "
    "about the subject. Answer with one JSON object and nothing else."
)

TEMPLATE = (
    "Grade the PASSAGE for the QUERY on this scale:\n"
    "3 = it answers the query fully and precisely; a reader could stop here.\n"
    "2 = it answers the query in part, or the answer is vague or buried in unrelated text.\n"
    "1 = it is about the query's topic but does not answer the query.\n"
    "0 = it has nothing to do with the query.\n\n"
    "QUERY: {query}\n"
    "PASSAGE: {passage}\n\n"
    'Reply as JSON: {{"grade": 0, 1, 2 or 3}}'
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"grade": {"type": "integer", "enum": list(GRADES)}},
    "required": ["grade"],
    "additionalProperties": False,
}


def passage_text(title: str, text: str) -> str:
    """The passage as shown to the assessor: the title on its own line when there is one."""
    title, text = title.strip(), text.strip()
    return f"{title}\n{text}" if title else text


def build_messages(inputs: Mapping[str, str]) -> list[dict[str, str]]:
    """The chat messages for one (query, passage) pair."""
    user = TEMPLATE.format(query=inputs["query"].strip(), passage=passage_text(inputs.get("title", ""), inputs["passage"]))
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


_FENCE = re.compile(r"\A```(?:json|JSON)?\s*\n?(.*?)\n?```\Z", re.DOTALL)


def _clip(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[:n] + "..."


@public
def parse_grade(text: str) -> dict[str, Any]:
    """``{"grade": g}`` from a reply, read strictly; raises :class:`~ragrade.judges.prompts.OutputError`.

    Accepted: a JSON object (optionally inside one Markdown code fence and nothing else) whose ``grade`` is
    an integer 0-3; other keys are ignored. Refused: prose around the object, a grade given as a string
    (``"2"``), a boolean, a fraction (``2.5``, ``2.0``), a number outside 0-3, no ``grade`` key.

    >>> parse_grade('{"grade": 2}')
    {'grade': 2}
    >>> parse_grade('The grade is 2')
    Traceback (most recent call last):
    ...
    ragrade.errors.OutputError: reply is not a JSON object: 'The grade is 2'
    """
    if not isinstance(text, str):
        raise OutputError(f"a reply is a text, not {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise OutputError("empty reply")
    m = _FENCE.match(stripped)
    body = m.group(1).strip() if m else stripped
    try:
        obj = json.loads(body)
    except ValueError:
        raise OutputError(f"reply is not a JSON object: {_clip(stripped)!r}") from None
    if not isinstance(obj, dict):
        raise OutputError(f"reply is not a JSON object: {_clip(stripped)!r}")
    if "grade" not in obj:
        raise OutputError(f"reply has no 'grade': {_clip(stripped)!r}")
    g = obj["grade"]
    if isinstance(g, bool) or not isinstance(g, int) or g not in GRADES:
        raise OutputError(f"grade must be an integer 0-3, got {_clip(json.dumps(g))}")
    return {"grade": int(g)}


__all__ = ["GRADES", "PROMPT_VERSION", "SCHEMA", "TASK", "TASK_SET", "build_messages", "parse_grade", "passage_text"]


def _messages(task: str, inputs: Mapping[str, str]) -> list[dict[str, str]]:
    return build_messages(inputs)


def _schema(task: str) -> dict[str, Any] | None:
    return SCHEMA if task == TASK else None


def _parse(task: str, text: str) -> dict[str, Any]:
    return parse_grade(text)


#: The assessor's one task, as the LLM backends take it (:class:`ragrade.llm.tasks.TaskSet`); replies are
#: ``{"grade": n}``, hence the short reply cap.
TASK_SET = TaskSet("grade", PROMPT_VERSION, _messages, _schema, _parse, max_tokens=64,
                   offline={"offline": "ragrade.assessment.graders:LexicalGrader",
                            "semantic": "ragrade.assessment.graders:SemanticGrader"})
