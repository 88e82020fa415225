"""A persistent judgment cache in SQLite (standard library ``sqlite3``): the one cache of the LLM core,
used by the judges and the assessor alike (one file can hold both; keys never collide: the task is hashed).

One row per judgment, keyed by :func:`ragrade.llm.base.judgment_key` (judge, model, prompt version, task,
inputs). Every judgment is committed as soon as it is known, so a run that is killed keeps everything it had
finished and the next run starts where it stopped. The database is in WAL mode with a busy timeout, so
several processes can read and write it at once; a successful judgment is never overwritten by a failure.

Default location: ``$XDG_CACHE_HOME/ragrade/judgments.sqlite3`` (``~/.cache/ragrade/...`` when the variable
is unset; ``%LOCALAPPDATA%\\ragrade\\...`` on Windows).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ragrade.llm.base import Judgment, Usage, redact_judgment

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    key TEXT PRIMARY KEY,
    judge TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    task TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    output TEXT,
    error TEXT,
    transient INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 1,
    created REAL NOT NULL
)
"""

# A success replaces anything; a failure replaces only a failure.
_UPSERT = """
INSERT INTO judgments (key, judge, model, prompt_version, task, status, output, error, transient,
                       prompt_tokens, completion_tokens, cost, attempts, created)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(key) DO UPDATE SET
    status = excluded.status, output = excluded.output, error = excluded.error,
    transient = excluded.transient, prompt_tokens = excluded.prompt_tokens,
    completion_tokens = excluded.completion_tokens, cost = excluded.cost,
    attempts = excluded.attempts, created = excluded.created
WHERE judgments.status = 'failed'
"""


def default_cache_path() -> Path:
    """``$XDG_CACHE_HOME/ragrade/judgments.sqlite3`` or the platform's user cache directory."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        base = Path(xdg)
    elif sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path.home() / ".cache"
    return base / "ragrade" / "judgments.sqlite3"


class JudgmentCache:
    """SQLite store of judgments. Use as a context manager or call :meth:`close`.

    ``path=None`` uses :func:`default_cache_path`; ``":memory:"`` keeps the cache in memory (no resume).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, timeout: float = 60.0) -> None:
        self.path: Path | None = None
        target: str
        if path == ":memory:":
            target = ":memory:"
        else:
            p = Path(path) if path is not None else default_cache_path()
            p.parent.mkdir(parents=True, exist_ok=True)
            self.path = p
            target = str(p)
        # isolation_level=None: autocommit; each write is its own transaction, durable when it returns.
        self._conn = sqlite3.connect(target, timeout=timeout, isolation_level=None, check_same_thread=False)
        self._conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        if target != ":memory:":
            self._retry(lambda: self._conn.execute("PRAGMA journal_mode = WAL"))
            self._conn.execute("PRAGMA synchronous = NORMAL")
        self._retry(lambda: self._conn.execute(_SCHEMA))

    @staticmethod
    def _retry(fn, attempts: int = 50):
        # Schema creation and the switch to WAL can race between processes opening a new file at once;
        # "database is locked" there is not covered by the busy timeout in every SQLite build.
        for i in range(attempts):
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or i == attempts - 1:
                    raise
                time.sleep(0.05 * (i + 1))
        return None

    def __repr__(self) -> str:
        return f"JudgmentCache({str(self.path) if self.path else ':memory:'!r})"

    def __enter__(self) -> JudgmentCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._conn.close()

    def __len__(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]

    def counts(self) -> dict[str, int]:
        """Number of rows by status."""
        rows = self._conn.execute("SELECT status, COUNT(*) FROM judgments GROUP BY status").fetchall()
        return {status: n for status, n in rows}

    def get(self, key: str) -> Judgment | None:
        row = self._conn.execute(
            "SELECT status, output, error, transient, prompt_tokens, completion_tokens, cost, attempts "
            "FROM judgments WHERE key = ?",
            (key,),
        ).fetchone()
        return None if row is None else _row_to_judgment(row)

    def get_many(self, keys: Iterable[str]) -> dict[str, Judgment]:
        """Look up many keys at once (in chunks, to stay under SQLite's parameter limit)."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, Judgment] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                "SELECT key, status, output, error, transient, prompt_tokens, completion_tokens, cost, attempts "
                f"FROM judgments WHERE key IN ({marks})",
                chunk,
            ).fetchall()
            for row in rows:
                found[row[0]] = _row_to_judgment(row[1:])
        return found

    def put(self, key: str, *, judge: str, model: str, prompt_version: str, task: str, judgment: Judgment) -> None:
        """Store one judgment (committed before returning). Its output and error go through
        :func:`~ragrade.llm.secrets.redact` first: nothing that looks like a credential is ever stored."""
        judgment = redact_judgment(judgment)
        u = judgment.usage
        params = (
            key,
            judge,
            model,
            prompt_version,
            task,
            "ok" if judgment.ok else "failed",
            json.dumps(judgment.output, ensure_ascii=False) if judgment.ok else None,
            judgment.error,
            int(judgment.transient),
            u.prompt_tokens,
            u.completion_tokens,
            u.cost,
            judgment.attempts,
            time.time(),
        )
        self._retry(lambda: self._conn.execute(_UPSERT, params))


def _row_to_judgment(row: tuple) -> Judgment:
    status, output, error, transient, pt, ct, cost, attempts = row
    usage = Usage(int(pt), int(ct), float(cost))
    if status == "ok":
        return Judgment(json.loads(output), None, False, usage, int(attempts), cached=True)
    return Judgment(None, error or "failed", bool(transient), usage, int(attempts), cached=True)


def open_cache(cache: Any, *, cacheable: bool = True) -> tuple[JudgmentCache | None, bool]:
    """``(cache, owned)`` from what a caller passed: True (the user cache), a path, a :class:`JudgmentCache`
    (not owned: the caller closes it), or False/None (no cache). A judge that is not ``cacheable`` gets
    none. ``owned``: whether the caller must close it."""
    if not cacheable or cache is None or cache is False:
        return None, False
    if isinstance(cache, JudgmentCache):
        return cache, False
    if cache is True:
        return JudgmentCache(), True
    if isinstance(cache, str | os.PathLike):
        return JudgmentCache(cache), True
    from ragrade.errors import InputError

    raise InputError("cache must be True, False/None, a path or a JudgmentCache", value=cache)
