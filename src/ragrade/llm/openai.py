"""The OpenAI-compatible backend of the LLM core: any chat-completions server (OpenAI, vLLM, Ollama,
llama.cpp), asking the task set it is given (the judge metrics' or the assessor's), and the home of the
one retry policy (backoff, ``Retry-After``, structured-output fallback, configuration errors) that other
HTTP backends inherit by subclassing :class:`OpenAIBackend` (see :mod:`ragrade.llm.ollama`).

Needs the ``llm`` extra (httpx; aiohttp too, which is used when installed: its connection pool keeps up
with hundreds of requests in flight, where httpx's costs milliseconds per request, see docs/scale.md;
``http_client`` chooses). One :class:`OpenAIJudge` holds one async connection pool and a semaphore
bounding the requests in flight. Each judgment:

1. is sent with temperature 0 and a fixed seed, and a JSON-schema ``response_format`` (``json_schema`` mode)
   when the server accepts it; a server that rejects it (an error naming ``response_format``) is asked
   again with ``{"type": "json_object", "schema": ...}`` (llama.cpp, vLLM), then ``{"type": "json_object"}``,
   then with none, and the mode that worked is kept for the next requests;
2. is retried on HTTP 408/409/429/5xx, timeouts, broken connections, truncated or non-JSON bodies, with
   exponential backoff and full jitter (``Retry-After`` honoured, capped at ``max_backoff``);
3. has its reply parsed by :func:`ragrade.judges.prompts.parse_output` (first JSON value, code fences
   tolerated); an unreadable reply is asked again ``parse_retries`` times, then recorded as a permanent
   failure;
4. adds its token usage and cost (``prompt_price`` / ``completion_price`` per million tokens) to
   :attr:`OpenAIJudge.stats`.

The API key is read from the environment variable named by ``api_key_env`` when the judge is created. It is
sent only in the ``Authorization`` header and is not part of ``repr``. Everything the judge returns (each
judgment's output and error, hence the cache, ``details`` and error messages) goes through
:func:`ragrade.llm.secrets.redact`, which removes the key and anything that looks like a credential, even
from a server that echoes the request back.

Configuration errors stop the run instead of failing judgment after judgment: HTTP 401 and 403 (the key),
404 (the model or the URL) and a refused connection before any judgment succeeded (nothing listens at
``base_url``) raise :class:`~ragrade.judges.base.JudgeConfigError` at once, without retries; the runner
then stops and caches nothing of it.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ragrade.errors import ConnectFailed as _ConnectFailed
from ragrade.errors import ConnectionBroken as _Broken
from ragrade.errors import FormatRejected as _FormatRejected
from ragrade.errors import InputError, require
from ragrade.errors import RequestRefused as _Fatal
from ragrade.errors import RequestTimedOut as _Timeout
from ragrade.errors import RetryRequest as _Retryable
from ragrade.llm.base import JudgeConfigError, Judgment, Redactor, Usage, redact_judgment
from ragrade.llm.tasks import OutputError, TaskSet

_RESPONSE_FORMATS = ("json_schema", "json_object_schema", "json_object", "none")
_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 521, 522, 524, 529})


@dataclass(frozen=True)
class OpenAISettings:
    """Settings of :class:`OpenAIJudge`. ``response_format``: ``"auto"`` (try JSON schema, fall back),
    ``"json_schema"``, ``"json_object_schema"``, ``"json_object"`` or ``"none"``."""

    model: str = "gpt-4o-mini"
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str = "OPENAI_API_KEY"
    max_concurrency: int = 8
    timeout: float = 60.0
    connect_timeout: float = 10.0
    max_retries: int = 5
    parse_retries: int = 1
    backoff_base: float = 0.5
    max_backoff: float = 30.0
    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int | None = 1024
    response_format: str = "auto"
    prompt_price: float = 0.0  # per million prompt tokens
    completion_price: float = 0.0  # per million completion tokens
    max_items: int = 32  # longest list a grammar-constrained server may generate (json_object_schema mode)
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    jitter_seed: int | None = None  # seeds the backoff jitter (only timing depends on it)
    http_client: str = "auto"  # "aiohttp", "httpx", or "auto": aiohttp when installed, else httpx

    def __post_init__(self) -> None:
        if self.http_client not in ("auto", "aiohttp", "httpx"):
            raise InputError("http_client must be auto, aiohttp or httpx", value=self.http_client)
        if self.response_format not in ("auto", *_RESPONSE_FORMATS):
            raise InputError(
                "response_format must be auto, json_schema, json_object_schema, json_object or none", value=self.response_format
            )
        if self.max_concurrency < 1:
            raise InputError("max_concurrency must be at least 1", value=self.max_concurrency)
        if self.max_retries < 0 or self.parse_retries < 0:
            raise InputError("retries must be >= 0", value=(self.max_retries, self.parse_retries))
        if not self.base_url.startswith(("http://", "https://")):
            raise InputError("base_url must start with http:// or https://", value=self.base_url)


@dataclass
class JudgeStats:
    """Counters of one judge over its lifetime."""

    judgments: int = 0
    requests: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


#: HTTP statuses that mean the configuration is wrong, not the judgment: what to check for each.
_CONFIG_STATUS = {
    401: "the server refused the API key (HTTP 401): check the key in ${env}",
    403: "the server refused the API key (HTTP 403: forbidden): check the key in ${env} and its permissions",
    404: "the server has no such model or endpoint (HTTP 404): check --model ({model}) and --base-url ({url})",
}


class OpenAIBackend:
    """LLM judge over an OpenAI-compatible ``/chat/completions`` endpoint. See the module docstring.

    ``OpenAIBackend(settings, tasks=task_set)`` or ``OpenAIBackend(model=..., base_url=..., tasks=...)``;
    keyword arguments override the settings. Use ``async with`` or call :meth:`aclose`.
    (:class:`ragrade.judges.OpenAIJudge` is this backend asking the judge metrics' tasks by default.)
    """

    name = "openai"
    cacheable = True
    #: The path of the endpoint under ``base_url`` (a backend speaking another HTTP API overrides it, with
    #: :meth:`request_body`, :meth:`reply_text`, :meth:`reply_cut` and :meth:`reply_usage`, its public hooks; retries, backoff, the key's
    #: handling and redaction stay here).
    endpoint = "chat/completions"
    #: The request field holding the structured-output mode (a server naming it in an error refuses it).
    format_field = "response_format"

    def __init__(self, settings: OpenAISettings | None = None, *, tasks: TaskSet | None = None,
                 **overrides: Any) -> None:
        if tasks is None:
            raise InputError("an LLM backend needs a task set (tasks=): ragrade.judges.prompts.TASK_SET or "
                             "ragrade.assessment.prompt.TASK_SET")
        self.tasks = tasks
        self.settings = replace(settings or OpenAISettings(), **overrides)
        s = self.settings
        self.model = s.model
        self.max_concurrency = s.max_concurrency
        self.prompt_version = self.tasks.prompt_version
        self.stats = JudgeStats()
        self._api_key = os.environ.get(s.api_key_env) or None
        self.redact = Redactor([self._api_key])  # every piece of the key, in everything the judge returns
        self._mode = "json_schema" if s.response_format == "auto" else s.response_format
        self._rng = random.Random(s.jitter_seed)
        self._answered = False  # a response came back: from then on a refused connection is transient
        self._sem: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Any = None
        self._aiohttp: Any = None
        self._httpx: Any = None
        if s.http_client in ("auto", "aiohttp"):
            try:
                import aiohttp

                self._aiohttp = aiohttp
            except ImportError:
                if s.http_client == "aiohttp":
                    require("aiohttp", extra="llm", purpose="The OpenAI-compatible judge with http_client='aiohttp'")
        if self._aiohttp is None:
            self._httpx = require("httpx", extra="llm", purpose="The OpenAI-compatible judge")

    def __repr__(self) -> str:
        key = "set" if self._api_key else "unset"
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={self.settings.base_url!r}, "
            f"api_key_env={self.settings.api_key_env!r} ({key}, redacted), max_concurrency={self.max_concurrency})"
        )

    __str__ = __repr__

    # The questions asked come from the task set (the judge metrics' or the assessor's).
    def messages(self, task: str, inputs: Mapping[str, str]) -> list[dict[str, str]]:
        """The chat messages of one judgment."""
        return self.tasks.messages(task, inputs)

    def schema(self, task: str) -> dict[str, Any] | None:
        """The JSON schema of a task's reply, or None for a task this judge does not answer."""
        return self.tasks.schema(task)

    def parse(self, task: str, text: str) -> dict[str, Any]:
        """The canonical output read from the reply text (raises OutputError when it cannot be read)."""
        return self.tasks.parse(task, text)

    async def __aenter__(self) -> OpenAIBackend:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _http(self) -> Any:
        if self._client is None:
            httpx = self._httpx
            s = self.settings
            headers = {"Content-Type": "application/json"}
            if self._api_key:
                headers["Authorization"] = f"Bearer {self._api_key}"
            if self._aiohttp is not None:
                aiohttp = self._aiohttp
                self._client = aiohttp.ClientSession(
                    headers=headers,
                    timeout=aiohttp.ClientTimeout(total=s.timeout, connect=s.connect_timeout),
                    connector=aiohttp.TCPConnector(limit=s.max_concurrency),
                    trust_env=False,
                )
                return self._client
            self._client = httpx.AsyncClient(
                base_url=s.base_url.rstrip("/") + "/",
                headers=headers,
                timeout=httpx.Timeout(s.timeout, connect=s.connect_timeout),
                limits=httpx.Limits(max_connections=s.max_concurrency, max_keepalive_connections=s.max_concurrency),
                trust_env=False,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            if self._aiohttp is not None:
                await self._client.close()
            else:
                await self._client.aclose()
            self._client = None

    async def _post(self, body: dict[str, Any]) -> tuple[int, Mapping[str, str], bytes]:
        """``(status, headers, body)`` of one POST to ``chat/completions``; the transport's failures as
        :class:`_Timeout`, :class:`_ConnectFailed` or :class:`_Broken`."""
        if self._aiohttp is not None:
            aiohttp = self._aiohttp
            url = self.settings.base_url.rstrip("/") + "/" + self.endpoint
            data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
            try:
                async with self._http().post(url, data=data) as resp:
                    return resp.status, resp.headers, await resp.read()
            except TimeoutError as exc:  # aiohttp's timeouts derive from it
                raise _Timeout(type(exc).__name__) from None
            except aiohttp.ClientConnectorError as exc:
                raise _ConnectFailed(type(exc).__name__, str(exc)) from None
            except (aiohttp.ClientError, OSError) as exc:
                raise _Broken(type(exc).__name__, str(exc)) from None
        httpx = self._httpx
        try:
            resp = await self._http().post(self.endpoint, json=body)
            raw = resp.content  # reading the body may fail on a truncated response
        except httpx.TimeoutException as exc:
            raise _Timeout(type(exc).__name__) from None
        except httpx.ConnectError as exc:
            raise _ConnectFailed(type(exc).__name__, str(exc)) from None
        except (httpx.TransportError, httpx.DecodingError) as exc:
            raise _Broken(type(exc).__name__, str(exc)) from None
        return resp.status_code, resp.headers, raw

    # ------------------------------------------------------------------------------------------------------

    def _scrub(self, text: str) -> str:
        """Remove the API key and anything credential-like from a text that may end up in an error message
        (and keep it short)."""
        text = self.redact(text)
        return text if len(text) <= 300 else text[:300] + "..."

    def _config_error(self, status: int, body: str) -> JudgeConfigError:
        s = self.settings
        what = _CONFIG_STATUS[status].replace("${env}", s.api_key_env).format(model=s.model, url=s.base_url)
        return JudgeConfigError(f"{what}. The server said: {self._scrub(body)}" if body.strip() else what)

    def request_body(self, task: str, inputs: Mapping[str, str], mode: str) -> dict[str, Any]:
        s = self.settings
        body: dict[str, Any] = {
            "model": s.model,
            "messages": self.messages(task, inputs),
            "temperature": s.temperature,
        }
        if s.seed is not None:
            body["seed"] = s.seed
        if s.max_tokens is not None:
            body["max_tokens"] = s.max_tokens
        if mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": task, "schema": self.schema(task), "strict": True},
            }
        elif mode == "json_object_schema":  # llama.cpp / vLLM / Ollama-style schema-constrained JSON mode
            body["response_format"] = {"type": "json_object", "schema": bounded_schema(self.schema(task) or {}, s.max_items)}
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        body.update(s.extra_body)
        return body

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        s = self.settings
        delay = self._rng.uniform(0, min(s.max_backoff, s.backoff_base * 2**attempt))
        if retry_after is not None:
            delay = max(delay, min(retry_after, s.max_backoff))
        return delay

    @staticmethod
    def _retry_after(headers: Mapping[str, str]) -> float | None:
        value = headers.get("retry-after")
        if value is None:
            ms = headers.get("retry-after-ms")
            try:
                return float(ms) / 1000 if ms is not None else None
            except ValueError:
                return None
        try:
            return max(0.0, float(value))
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                return None
            return max(0.0, when.timestamp() - time.time())

    async def _request(self, body: dict[str, Any]) -> dict[str, Any]:
        """One HTTP request; returns the decoded response or raises _Retryable / _Fatal / _FormatRejected."""
        self.stats.requests += 1
        try:
            status, headers, raw = await self._post(body)
        except _Timeout as exc:
            raise _Retryable(f"timeout ({exc.args[0]})") from None
        except _ConnectFailed as exc:
            name, text = exc.args
            if not self._answered:  # nothing ever answered: a wrong URL or no server, not a hiccup
                raise JudgeConfigError(
                    f"cannot connect to the judge server at {self.settings.base_url} "
                    f"({self._scrub(text) or name}): check --base-url and that the server runs"
                ) from None
            raise _Retryable(f"connection error ({name}: {self._scrub(text)})") from None
        except _Broken as exc:
            raise _Retryable(f"connection error ({exc.args[0]}: {self._scrub(exc.args[1])})") from None
        if status in _CONFIG_STATUS:
            raise self._config_error(status, raw.decode("utf-8", "replace"))
        self._answered = True
        if status >= 400:
            text = self._scrub(raw.decode("utf-8", "replace"))
            # A server that does not know a response_format answers 400/422 (OpenAI, vLLM) or 500
            # (llama-cpp-python's request validation) naming it: step down instead of retrying.
            if status in (400, 422, 500) and self.format_field in body and self.format_field in text:
                raise _FormatRejected(text)
            if status in _RETRY_STATUS:
                raise _Retryable(f"HTTP {status}", self._retry_after(headers))
            raise _Fatal(f"HTTP {status}: {text}")
        try:
            data = json.loads(raw)
        except ValueError:
            raise _Retryable(f"response body is not JSON: {self._scrub(raw.decode('utf-8', 'replace'))!r}") from None
        if not isinstance(data, dict):
            raise _Retryable("response body is not a JSON object")
        return data

    @staticmethod
    def reply_text(data: Mapping[str, Any]) -> str:
        """The reply's text (raises OutputError when the response holds none)."""
        return _message_text(data)

    @staticmethod
    def reply_cut(data: Mapping[str, Any]) -> bool:
        """Whether the reply was cut at ``max_tokens``."""
        return _finish_reason(data) == "length"

    def reply_usage(self, data: Mapping[str, Any]) -> Usage:
        u = data.get("usage") or {}
        pt = int(u.get("prompt_tokens") or 0) if isinstance(u, dict) else 0
        ct = int(u.get("completion_tokens") or 0) if isinstance(u, dict) else 0
        s = self.settings
        return Usage(pt, ct, (pt * s.prompt_price + ct * s.completion_price) / 1e6)

    async def judge(self, task: str, inputs: Mapping[str, str]) -> Judgment:
        """Answer one judgment (never raises for a failed call)."""
        if self.schema(task) is None:
            return Judgment.failed(f"unknown task {task!r}", transient=False)
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            # A new event loop (e.g. a second asyncio.run): the pool and semaphore of the old one are unusable.
            self._loop, self._client = loop, None
            self._sem = asyncio.Semaphore(self.settings.max_concurrency)
        assert self._sem is not None
        async with self._sem:
            j = redact_judgment(await self._judge(task, inputs), self.redact)
        self.stats.judgments += 1
        self.stats.failures += 0 if j.ok else 1
        self.stats.prompt_tokens += j.usage.prompt_tokens
        self.stats.completion_tokens += j.usage.completion_tokens
        self.stats.cost += j.usage.cost
        return j

    async def _judge(self, task: str, inputs: Mapping[str, str]) -> Judgment:
        s = self.settings
        usage = Usage()
        attempts = 0
        retries = 0
        parse_failures = 0
        last = "no attempt"
        while True:
            attempts += 1
            mode = self._mode
            try:
                data = await self._request(self.request_body(task, inputs, mode))
            except _FormatRejected as exc:
                nxt = _RESPONSE_FORMATS.index(mode) + 1
                if s.response_format != "auto" or nxt >= len(_RESPONSE_FORMATS):
                    return Judgment.failed(f"server rejected response_format: {exc}", transient=False, usage=usage, attempts=attempts)
                if self._mode == mode:  # another request may have stepped down already
                    self._mode = _RESPONSE_FORMATS[nxt]
                continue
            except _Fatal as exc:
                return Judgment.failed(str(exc), transient=False, usage=usage, attempts=attempts)
            except _Retryable as exc:
                last = str(exc)
                if retries >= s.max_retries:
                    return Judgment.failed(f"gave up after {attempts} attempts: {last}", transient=True, usage=usage, attempts=attempts)
                await asyncio.sleep(self._backoff(retries, exc.retry_after))
                retries += 1
                self.stats.retries += 1
                continue
            usage = usage + self.reply_usage(data)
            try:
                # Redact the whole reply first: an error quoting a clipped piece of it can then never hold
                # part of the key (a server may echo the request, headers included).
                text = self.reply_text(self.redact(data))
                output = self.parse(task, text)
            except OutputError as exc:
                parse_failures += 1
                last = f"unreadable reply: {self._scrub(str(exc))}"
                cut = self.reply_cut(data)
                if cut:  # the same request would be cut at the same place again
                    last = f"reply cut at max_tokens={s.max_tokens}; {last}"
                if cut or parse_failures > s.parse_retries:
                    return Judgment.failed(last, transient=False, usage=usage, attempts=attempts)
                continue
            return Judgment(output, usage=usage, attempts=attempts)


def bounded_schema(schema: dict[str, Any], max_items: int) -> dict[str, Any]:
    """A copy of ``schema`` with ``maxItems`` on arrays and ``maxLength`` on strings (a grammar-constrained
    small model cannot loop for ever)."""
    out = {k: (bounded_schema(v, max_items) if isinstance(v, dict) else v) for k, v in schema.items()}
    if "properties" in schema:
        out["properties"] = {k: bounded_schema(v, max_items) for k, v in schema["properties"].items()}
    if schema.get("type") == "array":
        out["maxItems"] = max_items
    if schema.get("type") == "string":
        out["maxLength"] = 300
    return out


def _finish_reason(data: Mapping[str, Any]) -> str | None:
    try:
        return data["choices"][0].get("finish_reason")
    except (KeyError, IndexError, TypeError, AttributeError):
        return None


def _message_text(data: Mapping[str, Any]) -> str:
    try:
        msg = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        # (the text is shown in an error: the judge redacts it before it goes anywhere)
        raise OutputError(f"response has no choices[0].message: {json.dumps(data)[:200]!r}") from None
    if isinstance(msg, dict) and isinstance(msg.get("parsed"), dict | list):
        return json.dumps(msg["parsed"])
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str) or not content.strip():
        refusal = msg.get("refusal") if isinstance(msg, dict) else None
        raise OutputError(f"empty message content{f' (refusal: {refusal})' if refusal else ''}")
    return content
