"""The on-disk cache of retrieval results (standard library ``sqlite3``).

One row per answered query, keyed by the retriever's name, the id rule (``id_key``), the cutoff ``k`` and
the query *text* (not its id: the same question asked under another id is the same call). A row holds
the hits (id, score, text) as JSON and the latency of the call that produced them. Only successful calls
are stored: a query that failed is asked again next time. Each answer is committed as soon as it
arrives, so an interrupted run keeps what it had; the database is in WAL mode with a busy timeout, so
several processes can share it.

Two retrievers given the same name share entries: name each configuration (``name=`` / ``--name``) when
you change it, or point ``cache=`` to a new file.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

from ragrade.errors import InputError
from ragrade.retrieval.adapters import Hit

_SCHEMA = """
CREATE TABLE IF NOT EXISTS retrievals (
    retriever TEXT NOT NULL,
    id_key TEXT NOT NULL,
    k INTEGER NOT NULL,
    query TEXT NOT NULL,
    hits TEXT NOT NULL,
    latency REAL NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (retriever, id_key, k, query)
)
"""


class RetrievalCache:
    """SQLite store of retrieval results. Use as a context manager or call :meth:`close`. Used from one
    thread (the one running :func:`ragrade.retrieve`); the retriever's own threads never touch it."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 60.0) -> None:
        p = Path(path)
        if p.is_dir():
            raise InputError(f"{p}: the retrieval cache must be a file, not a directory")
        if p.parent and not p.parent.exists():
            p.parent.mkdir(parents=True, exist_ok=True)
        self.path = p
        try:
            self._db = sqlite3.connect(str(p), timeout=timeout)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{p}: cannot use this file as a retrieval cache ({exc})") from None

    def __enter__(self) -> RetrievalCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def get(self, retriever: str, id_key: str | None, k: int, query: str) -> tuple[list[Hit], float] | None:
        """The stored hits and latency of one call, or None."""
        row = self._db.execute(
            "SELECT hits, latency FROM retrievals WHERE retriever = ? AND id_key = ? AND k = ? AND query = ?",
            (retriever, id_key or "", k, query)).fetchone()
        if row is None:
            return None
        return [Hit(str(d), None if s is None else float(s), t) for d, s, t in json.loads(row[0])], float(row[1])

    def put(self, retriever: str, id_key: str | None, k: int, query: str, hits: list[Hit], latency: float) -> None:
        """Store one answer (replacing an older one for the same key) and commit."""
        payload = json.dumps([[h.doc, h.score, h.text] for h in hits], ensure_ascii=False)
        self._db.execute(
            "INSERT OR REPLACE INTO retrievals (retriever, id_key, k, query, hits, latency, created) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)", (retriever, id_key or "", k, query, payload, latency, time.time()))
        self._db.commit()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM retrievals").fetchone()[0])
