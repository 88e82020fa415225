"""The command-line options of the LLM core, defined once for ``ragrade judge`` and ``ragrade assess``:
the backend (``--judge``, its choices from :data:`ragrade.llm.backends.BACKENDS`), the server and model, the
key's variable, concurrency, timeout, retries, reply cap, seed, structured output, prices, the budget, the
cache and the progress bar; and how the options become a judge (:func:`make_judge`) and a cache argument
(:func:`cache_arg`). :func:`secret_errors` keeps every piece of the key out of the error line."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

import click

from ragrade.cli._options import option
from ragrade.options import BASE_URL, CONCURRENCY, LLM_SEED, TIMEOUT

RESPONSE_FORMATS = ["auto", "json_schema", "json_object_schema", "json_object", "none"]


class BackendChoice(click.ParamType):
    """A backend name of the registry serving the task set ``tasks`` (read when the option is parsed, so
    a backend registered at run time is a valid choice)."""

    name = "BACKEND"

    def __init__(self, tasks: str) -> None:
        self.tasks = tasks

    def _names(self) -> list[str]:
        from ragrade.llm.backends import names

        return names(self.tasks)

    def get_metavar(self, param: Any, ctx: Any = None) -> str:
        return "[" + "|".join(self._names()) + "]"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        if value in self._names():
            return str(value)
        self.fail(f"{value!r} is not one of {', '.join(map(repr, self._names()))}", param, ctx)


class ProfileChoice(click.Choice):
    """The judge profiles (:data:`ragrade.judges.metrics.JUDGE_PROFILES`), read when first needed: the
    command's module stays light to import."""

    def __init__(self) -> None:
        super().__init__([])

    @property  # type: ignore[override]
    def choices(self) -> list[str]:
        from ragrade.judges.metrics import PROFILES

        return list(PROFILES)

    @choices.setter
    def choices(self, value: Any) -> None:
        return None


def llm_options(*, tasks: str, max_tokens: int, concurrency_help: str = "Judgments in flight at once.",
                ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The shared options, for a command whose judgments are of the task set ``tasks`` (``"context"``:
    the judge metrics, ``"grade"``: the assessor) and whose replies are capped at ``max_tokens``."""
    from ragrade.llm.backends import BACKENDS

    helps = "; ".join(f"{b.name}: {b.help}" for b in BACKENDS.values())
    options: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
        click.option("--judge", "judge_kind", type=BackendChoice(tasks), default="offline", show_default=True,
                     help=f"Which backend answers the judgments ({helps}; the key is read from the variable named "
                          "by --api-key-env and never printed or stored)."),
        option(BASE_URL, envvar="RAGRADE_JUDGE_BASE_URL"),
        click.option("--model", envvar="RAGRADE_JUDGE_MODEL", default="gpt-4o-mini", show_default=True,
                     help="Model name for an LLM backend (env RAGRADE_JUDGE_MODEL)."),
        click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True,
                     help="Name of the environment variable holding the API key (unset: no key sent)."),
        option(CONCURRENCY, help=concurrency_help),
        option(TIMEOUT, default=60.0, help="Seconds allowed per request."),
        click.option("--max-retries", type=click.IntRange(min=0), default=5, show_default=True,
                     help="Retries of a request that failed transiently (429, 5xx, timeouts)."),
        click.option("--max-tokens", type=click.IntRange(min=1), default=max_tokens, show_default=True,
                     help="Reply length cap."),
        option(LLM_SEED),
        click.option("--response-format", type=click.Choice(RESPONSE_FORMATS), default="auto", show_default=True,
                     help="Structured-output mode; auto tries a JSON schema and steps down when the server "
                          "refuses it."),
        click.option("--prompt-price", type=click.FloatRange(min=0), default=0.0,
                     help="Price per million prompt tokens (cost, --budget-usd, --dry-run)."),
        click.option("--completion-price", type=click.FloatRange(min=0), default=0.0,
                     help="Price per million completion tokens."),
        click.option("--budget-calls", type=click.IntRange(min=0), default=None,
                     help="Ask at most this many judgments."),
        click.option("--budget-tokens", type=click.IntRange(min=0), default=None,
                     help="Spend at most this many tokens (prompt + completion); each judgment reserves its "
                          "worst case."),
        click.option("--budget-usd", type=click.FloatRange(min=0), default=None,
                     help="Spend at most this cost (needs --prompt-price / --completion-price)."),
        click.option("--cache", "cache_path", type=click.Path(dir_okay=False), default=None,
                     help="SQLite cache file (default: $XDG_CACHE_HOME/ragrade/judgments.sqlite3)."),
        click.option("--no-cache", is_flag=True, help="Neither read nor write the cache (no resume)."),
        click.option("--retry-failed", is_flag=True,
                     help="Ask again judgments that failed permanently in an earlier run."),
        click.option("--progress/--no-progress", default=None,
                     help="Progress bar on stderr (default: when stderr is a terminal)."),
    ]

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        for decorator in reversed(options):
            fn = decorator(fn)
        return fn

    return decorate


def check_budget(o: dict[str, Any]) -> None:
    if o["budget_usd"] is not None and not (o["prompt_price"] or o["completion_price"]):
        raise click.UsageError("--budget-usd needs --prompt-price and/or --completion-price")


def make_judge(o: dict[str, Any], task_set: Any) -> Any:
    """The judge the options ask for, from the one backend registry."""
    from ragrade.llm.backends import make_judge as build

    return build(o["judge_kind"], task_set, model=o["model"], base_url=o["base_url"], api_key_env=o["api_key_env"],
                 max_concurrency=o["max_concurrency"], timeout=o["timeout"], max_retries=o["max_retries"],
                 max_tokens=o["max_tokens"], seed=o["llm_seed"], response_format=o["response_format"],
                 prompt_price=o["prompt_price"], completion_price=o["completion_price"])


def budget(o: dict[str, Any]) -> Any:
    from ragrade.llm.budget import Budget

    return Budget(o["budget_calls"], o["budget_tokens"], o["budget_usd"])


def cache_arg(o: dict[str, Any]) -> Any:
    """False (``--no-cache``), the ``--cache`` path, or True (the user cache)."""
    return False if o["no_cache"] else (o["cache_path"] or True)


def key_of(o: dict[str, Any]) -> str | None:
    """The API key the options point to, when an LLM backend is used (to scrub it, never to show it)."""
    from ragrade.llm.backends import is_llm

    return os.environ.get(o["api_key_env"]) if is_llm(o["judge_kind"]) else None


@contextlib.contextmanager
def secret_errors(key: str | None) -> Iterator[None]:
    """Like :func:`ragrade.cli._output.input_errors`, with every piece of ``key`` removed from the error
    line (a judge already scrubs its own messages: this also covers any other error on the way)."""
    from ragrade.cli._output import fail, input_errors
    from ragrade.errors import RagradeError
    from ragrade.llm.secrets import Redactor

    redact = Redactor([key])
    with input_errors():
        try:
            yield
        except RagradeError as exc:
            fail(redact.text(str(exc)))


__all__ = ["BackendChoice", "ProfileChoice", "budget", "cache_arg", "check_budget", "key_of", "llm_options", "make_judge",
           "secret_errors"]
