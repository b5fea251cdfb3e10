"""A persistent SQLite cache of translations, and the translator that goes through it.

Keyed by (backend, source language, target language, source text), where
"backend" is the backend's :meth:`~polyvse.translate.backend.TranslationBackend.cache_key`.
Results are written as they arrive, one transaction per answered batch, so a
killed job loses at most the batch in flight and its re-run sends nothing that
was already translated.

Concurrency: the database runs in WAL mode, so readers never block and
writers (two jobs translating different pairs under ``--cores all``) take
turns on short ``BEGIN IMMEDIATE`` transactions, waiting up to ``timeout``
seconds for each other. WAL needs a local file system (SQLite's documented
limit): on a network file system shared by cluster nodes, give each job its
own cache file or use ``journal_mode="delete"``.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from polyvse.errors import InputError
from polyvse.translate.backend import TranslationBackend, TranslationError

SCHEMA_VERSION = 1
_LOOKUP_CHUNK = 500  # well under SQLite's limit on bound parameters

_SCHEMA = """
CREATE TABLE IF NOT EXISTS translations (
    backend TEXT NOT NULL,
    src     TEXT NOT NULL,
    tgt     TEXT NOT NULL,
    source  TEXT NOT NULL,
    target  TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (backend, src, tgt, source)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class TranslationCache:
    """SQLite store of translations; ``path=":memory:"`` for a throw-away cache.

    One connection per process (re-opened after a fork). Use as a context
    manager or call :meth:`close`.
    """

    def __init__(self, path: str | Path, timeout: float = 60.0, journal_mode: str = "wal") -> None:
        self.path = str(path)
        self.timeout = timeout
        self.journal_mode = journal_mode
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        self._connect()

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        try:
            # isolation_level=None: we open transactions ourselves (BEGIN IMMEDIATE).
            conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
            conn.execute(f"PRAGMA journal_mode={self.journal_mode}")
            # NORMAL in WAL: a killed process loses no committed batch; only a power cut can lose the last ones.
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(_SCHEMA)
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        except sqlite3.DatabaseError as e:
            raise InputError(self.path, f"not a usable translation cache: {e}") from None
        if int(version) != SCHEMA_VERSION:
            conn.close()
            raise InputError(self.path, f"translation cache has schema version {version}, expected {SCHEMA_VERSION}")
        self._conn, self._pid = conn, os.getpid()
        return conn

    def get_many(self, backend: str, src: str, tgt: str, texts: Iterable[str]) -> dict[str, str]:
        """The cached translations among ``texts``, as {source text: translation}."""
        conn = self._connect()
        texts = list(dict.fromkeys(texts))
        found: dict[str, str] = {}
        for start in range(0, len(texts), _LOOKUP_CHUNK):
            chunk = texts[start : start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT source, target FROM translations WHERE backend = ? AND src = ? AND tgt = ? "
                f"AND source IN ({marks})",
                (backend, src, tgt, *chunk),
            )
            found.update(rows)
        return found

    def put_many(self, backend: str, src: str, tgt: str, pairs: Iterable[tuple[str, str]]) -> int:
        """Store (source, translation) pairs in one committed transaction; returns how many."""
        conn = self._connect()
        now = time.time()
        rows = [(backend, src, tgt, s, t, now) for s, t in pairs]
        if not rows:
            return 0
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("INSERT OR REPLACE INTO translations VALUES (?, ?, ?, ?, ?, ?)", rows)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return len(rows)

    def count(self, backend: str | None = None, src: str | None = None, tgt: str | None = None) -> int:
        """Number of cached translations, optionally of one backend / pair."""
        where, args = [], []
        for col, val in (("backend", backend), ("src", src), ("tgt", tgt)):
            if val is not None:
                where.append(f"{col} = ?")
                args.append(val)
        sql = "SELECT COUNT(*) FROM translations" + (" WHERE " + " AND ".join(where) if where else "")
        return self._connect().execute(sql, args).fetchone()[0]

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None

    def __enter__(self) -> "TranslationCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class PairStats:
    """Bookkeeping of one (src, tgt) pair, for the log. Counts are of sentences."""

    src: str
    tgt: str
    requested: int = 0  # texts asked for, duplicates included
    unique: int = 0  # distinct non-blank texts
    hits: int = 0  # distinct texts found in the cache
    sent: int = 0  # distinct texts sent to the backend (= misses)
    translated: int = 0  # of those, answered and stored
    calls: int = 0  # backend calls


class CachedTranslator:
    """Translate through a :class:`TranslationCache`, sending the backend only what it lacks.

    :meth:`translate` looks all texts up first, sends the distinct misses in
    batches of ``batch_size``, and commits each answered batch before asking
    for the next. Blank texts translate to themselves without a request;
    ``src == tgt`` returns the texts unchanged. ``progress(n)`` is called with
    the number of sentences answered after each batch (e.g. ``tqdm.update``).
    """

    def __init__(
        self,
        backend: TranslationBackend,
        cache: TranslationCache,
        batch_size: int = 64,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be ≥ 1")
        self.backend = backend
        self.cache = cache
        self.batch_size = batch_size
        self.progress = progress
        self.pairs: dict[tuple[str, str], PairStats] = {}

    @property
    def stats(self) -> dict[str, int]:
        """Totals over all pairs: requested, unique, hits, sent, translated, calls."""
        keys = ("requested", "unique", "hits", "sent", "translated", "calls")
        return {k: sum(getattr(p, k) for p in self.pairs.values()) for k in keys}

    def stats_rows(self) -> list[dict[str, object]]:
        """One dict per pair (with the backend name), ready for a TSV/JSON log."""
        return [{"backend": self.backend.name, **asdict(p)} for p in self.pairs.values()]

    def translate(self, texts: Sequence[str], src: str, tgt: str) -> list[str]:
        """Translations of ``texts`` from ``src`` to ``tgt``, in order (see the class docstring)."""
        texts = list(texts)
        if src == tgt:
            return texts
        st = self.pairs.setdefault((src, tgt), PairStats(src, tgt))
        st.requested += len(texts)
        key = self.backend.cache_key(src, tgt)
        unique = list(dict.fromkeys(t for t in texts if t.strip()))
        found = self.cache.get_many(key, src, tgt, unique)
        misses = [t for t in unique if t not in found]
        st.unique += len(unique)
        st.hits += len(found)
        st.sent += len(misses)
        done = 0
        for start in range(0, len(misses), self.batch_size):
            batch = misses[start : start + self.batch_size]
            st.calls += 1
            try:
                answer = self.backend.translate_batch(batch, src, tgt)
                if len(answer) != len(batch):
                    raise ValueError(f"backend returned {len(answer)} translations for {len(batch)} sentences")
            except InputError:
                raise
            except Exception as e:
                partial = e.partial[: len(batch)] if isinstance(e, TranslationError) else []
                self._store(key, src, tgt, batch, partial, found)
                done += len(partial)
                st.translated += len(partial)
                reason = e.reason if isinstance(e, TranslationError) else f"{type(e).__name__}: {e}"
                raise TranslationError(
                    self.backend.name,
                    done,
                    f"{reason} [{src}→{tgt}; {len(found)} sentences of this request are in the cache]",
                    total=len(misses),
                ) from e
            self._store(key, src, tgt, batch, answer, found)
            done += len(batch)
            st.translated += len(batch)
            if self.progress is not None:
                self.progress(len(batch))
        return [found.get(t, t) for t in texts]

    def _store(
        self, key: str, src: str, tgt: str, batch: list[str], answer: Sequence[str], found: dict[str, str]
    ) -> None:
        pairs = list(zip(batch, answer))
        self.cache.put_many(key, src, tgt, pairs)
        found.update(pairs)
