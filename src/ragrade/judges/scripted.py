"""A judge that answers from a script: for tests, demos and reproducing worked examples."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ragrade.judges.prompts import OutputError, normalize_output
from ragrade.llm.base import Judgment


class ScriptedJudge:
    """Answers each judgment with ``script(task, inputs)``, a canonical output dict (see
    :data:`ragrade.judges.base.TASKS`) or raises to simulate a failure. Counts the calls it gets."""

    cacheable = True
    max_concurrency = 4

    def __init__(
        self,
        script: Callable[[str, Mapping[str, str]], Any],
        *,
        name: str = "scripted",
        model: str = "script",
        prompt_version: str = "1",
    ) -> None:
        self.script = script
        self.name = name
        self.model = model
        self.prompt_version = prompt_version
        self.calls = 0

    def __repr__(self) -> str:
        return f"ScriptedJudge(name={self.name!r}, model={self.model!r})"

    async def judge(self, task: str, inputs: Mapping[str, str]) -> Judgment:
        self.calls += 1
        try:
            return Judgment(normalize_output(task, self.script(task, inputs)))
        except OutputError as exc:
            return Judgment.failed(f"invalid output: {exc}", transient=False)
        except Exception as exc:
            return Judgment.failed(f"{type(exc).__name__}: {exc}", transient=True)

    async def aclose(self) -> None:
        return None
