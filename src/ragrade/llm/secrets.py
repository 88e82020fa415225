"""Keeping secrets out of everything ragrade stores or shows.

:func:`redact` replaces, in strings and in the strings inside lists, tuples and dicts:

* every piece of a given secret (the API key) that is :data:`SECRET_PIECE` characters or longer, wherever
  it appears: the whole key, the key without its first characters (a server echoing part of it), a masked
  key's tail (``sk-te****7890abcdefXYZ``), a piece cut by a length limit. Each maximal stretch of the text
  made of such pieces becomes ``***``. A key shorter than :data:`SECRET_PIECE` is searched for whole (and
  a key shorter than :data:`MIN_SECRET_LENGTH` not at all: replacing a 3-letter "key" everywhere would
  mangle the judge's answers; real API keys are 20 characters or more);
* ``Authorization`` values, bearer tokens and API keys in the usual shapes (``sk-...``, ``hf_...``,
  ``AIza...``, ``AKIA...``, ``api_key=...``), whoever they belong to.

The promise, tested with fragments of the key echoed by a fake server: **no piece of the key of
:data:`SECRET_PIECE` characters or more appears in any output, cache column, ``--details`` file, error
message or log.** :data:`SECRET_PIECE` is 10, two characters safer than the 12 promised in
docs/judges.md: pieces of 10 random characters of a key do not occur in ordinary text, so nothing else is
mangled.

:class:`Redactor` compiles the search for one set of secrets once; :func:`redact` builds one per call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

#: Secrets shorter than this are not searched for.
MIN_SECRET_LENGTH = 8
#: The shortest piece of a secret that is removed wherever it appears (the whole secret when shorter).
SECRET_PIECE = 10
#: Length of the anchors of the quick pre-check: every piece of SECRET_PIECE characters holds one.
_ANCHOR = 5

TOKEN_PATTERNS = (
    # an Authorization header or a bearer token, however it is quoted
    (re.compile(r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?)(?:bearer\s+|basic\s+|token\s+)?[^\s'\",}]+"), r"\1***"),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1***"),
    # API keys in the usual shapes (OpenAI, Anthropic, Groq, Google, Hugging Face, GitHub, AWS)
    (re.compile(r"\b(?:sk|pk|rk|gsk|xai)-[A-Za-z0-9_-]{16,}"), "***"),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"), "***"),
    (re.compile(r"\b(?:hf|ghp|gho|github_pat)_[A-Za-z0-9_]{16,}"), "***"),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), "***"),
    # "api_key": "...", api-key=...
    (re.compile(r"(?i)(api[_-]?key['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]{8,}"), r"\1***"),
)

#: What every pattern above starts with (lower case): a string holding none of these cannot match a
#: pattern, so it skips them (most strings: a judge's reply holds no credential).
_TOKEN_HINTS = ("authorization", "bearer", "api_key", "api-key", "apikey", "sk-", "pk-", "rk-", "xai-", "aiza",
                "hf_", "ghp_", "gho_", "github_pat_", "akia")


def _may_hold_token(text: str) -> bool:
    low = text.lower()
    return any(h in low for h in _TOKEN_HINTS)


class Redactor:
    """Removes the pieces of ``secrets`` (see the module docstring) and credential-shaped tokens.

    The search is compiled once: a quick pre-check (substring tests for short *anchors* of each secret,
    taken every ``SECRET_PIECE - _ANCHOR + 1`` characters, so that every piece of ``SECRET_PIECE``
    characters holds one) and, only for a text that holds an anchor, an exact scan that marks every
    window of ``SECRET_PIECE`` characters of the text that is a piece of a secret and replaces each
    stretch of marked characters by ``***``."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        keys = sorted({s for s in secrets if isinstance(s, str) and len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)
        self.keys: tuple[str, ...] = tuple(keys)
        windows: set[str] = set()
        anchors: set[str] = set()
        self._whole: list[str] = []
        for k in keys:
            if len(k) < SECRET_PIECE:
                self._whole.append(k)
                continue
            windows.update(k[i : i + SECRET_PIECE] for i in range(len(k) - SECRET_PIECE + 1))
            step = SECRET_PIECE - _ANCHOR + 1
            anchors.update(k[i : i + _ANCHOR] for i in range(0, len(k) - _ANCHOR + 1, step))
            anchors.add(k[len(k) - _ANCHOR :])
        self._anchors = tuple(sorted(anchors))
        self._windows = windows
        self._scan = (re.compile("(?=(" + "|".join(re.escape(w) for w in sorted(windows)) + "))")
                      if windows else None)
        # A secret holding a character JSON escapes may not appear as is in a value's JSON text.
        self._json_safe = not any(c in k for k in keys for c in ('"', "\\", *map(chr, range(32))))

    def __bool__(self) -> bool:
        return bool(self.keys)

    def may_hold_secret(self, text: str) -> bool:
        """Whether ``text`` may hold a piece of a secret (False is certain)."""
        return any(a in text for a in self._anchors) or any(k in text for k in self._whole)

    def text(self, x: str) -> str:
        """One string, redacted."""
        if self.keys and self.may_hold_secret(x):
            for k in self._whole:
                x = x.replace(k, "***")
            if self._scan is not None:
                x = self._cut(x)
        if not _may_hold_token(x):
            return x
        for pattern, repl in TOKEN_PATTERNS:
            x = pattern.sub(repl, x)
        return x

    def _cut(self, x: str) -> str:
        assert self._scan is not None
        spans: list[list[int]] = []
        for m in self._scan.finditer(x):
            start, end = m.start(), m.start() + SECRET_PIECE
            if spans and start <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], end)
            else:
                spans.append([start, end])
        if not spans:
            return x
        out, pos = [], 0
        for start, end in spans:
            out.append(x[pos:start])
            out.append("***")
            pos = end
        out.append(x[pos:])
        return "".join(out)

    def __call__(self, value: Any) -> Any:
        """``value`` redacted: strings, lists, tuples and dicts (keys and values) are walked, anything else
        is returned as is; a value with nothing to replace is returned itself."""
        if isinstance(value, dict | list | tuple) and self._json_safe:
            # One look at the whole value: nothing to replace (the usual case) means nothing to walk.
            try:
                text = json.dumps(value, ensure_ascii=False)
            except (TypeError, ValueError):
                text = None
            if text is not None and not _may_hold_token(text) and not (self.keys and self.may_hold_secret(text)):
                return value
        return self._walk(value)

    def _walk(self, x: Any) -> Any:
        if isinstance(x, str):
            return self.text(x)
        if isinstance(x, dict):
            return {self._walk(k): self._walk(v) for k, v in x.items()}
        if isinstance(x, list):
            return [self._walk(v) for v in x]
        if isinstance(x, tuple):
            return tuple(self._walk(v) for v in x)
        return x


def redact(value: Any, secrets: Iterable[str | None] = ()) -> Any:
    """``value`` with every piece of the ``secrets`` of :data:`SECRET_PIECE` characters or more and every
    credential-shaped token replaced by ``***`` (see :class:`Redactor`)."""
    return Redactor(secrets)(value)


__all__ = ["MIN_SECRET_LENGTH", "SECRET_PIECE", "Redactor", "redact"]
