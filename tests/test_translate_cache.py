"""SQLite translation cache: persistence, WAL concurrency across processes, resumable CachedTranslator."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3

import pytest

from polyvse.errors import InputError
from polyvse.translate.backend import TranslationBackend, TranslationError
from polyvse.translate.cache import CachedTranslator, TranslationCache


class RecordingBackend(TranslationBackend):
    """Upper-cases; records every batch; raises on call number ``fail_on`` (1-based)."""

    name = "fake"

    def __init__(self, fail_on: int | None = None):
        self.calls: list[list[str]] = []
        self.fail_on = fail_on

    def translate_batch(self, texts, src, tgt):
        self.calls.append(list(texts))
        if len(self.calls) == self.fail_on:
            raise ConnectionError("network unreachable")
        return [f"{tgt}:{t.upper()}" for t in texts]

    @property
    def sent(self) -> list[str]:
        return [t for batch in self.calls for t in batch]


def test_put_get_persist_and_count(tmp_path):
    path = tmp_path / "sub" / "mt.sqlite"
    with TranslationCache(path) as cache:
        assert cache.put_many("b", "en", "de", [("a dog", "ein hund"), ("a cat", "eine katze")]) == 2
        cache.put_many("b", "en", "fr", [("a dog", "un chien")])
        cache.put_many("b", "en", "de", [("a dog", "ein köter")])  # a later answer replaces
    with TranslationCache(path) as cache:  # a new connection, as a re-run would open
        assert cache.get_many("b", "en", "de", ["a dog", "a cat", "a cow"]) == {
            "a dog": "ein köter",
            "a cat": "eine katze",
        }
        assert cache.get_many("other", "en", "de", ["a dog"]) == {}
        assert (cache.count(), cache.count(tgt="de"), cache.count(backend="b", src="en", tgt="fr")) == (3, 2, 1)
        mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"


def test_many_lookups_beyond_parameter_limit():
    cache = TranslationCache(":memory:")
    pairs = [(f"s{i}", f"t{i}") for i in range(1234)]
    cache.put_many("b", "en", "de", pairs)
    assert cache.get_many("b", "en", "de", [s for s, _ in pairs] + ["missing"]) == dict(pairs)


def test_not_a_database_is_an_input_error(tmp_path):
    bad = tmp_path / "mt.sqlite"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(InputError) as err:
        TranslationCache(bad)
    assert err.value.where == str(bad)


def _writer(path: str, tgt: str, n: int, batch: int, start) -> None:
    start.wait(10)  # both processes write at the same time
    cache = TranslationCache(path)
    for i in range(0, n, batch):
        cache.put_many("fake", "en", tgt, [(f"sentence {j}", f"{tgt} {j}") for j in range(i, min(n, i + batch))])
        cache.get_many("fake", "en", tgt, [f"sentence {i}"])  # interleave reads with the other's writes
    cache.close()


@pytest.mark.parametrize("targets", [("de", "fr"), ("de", "de")], ids=["different-pairs", "same-pair"])
def test_two_processes_write_at_once_without_loss(tmp_path, targets):
    path = str(tmp_path / "mt.sqlite")
    TranslationCache(path).close()  # created (and switched to WAL) once, as the first job would
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    n = 600
    procs = [ctx.Process(target=_writer, args=(path, tgt, n, 20, start)) for tgt in targets]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with TranslationCache(path) as cache:
        for tgt in set(targets):
            got = cache.get_many("fake", "en", tgt, [f"sentence {j}" for j in range(n)])
            assert got == {f"sentence {j}": f"{tgt} {j}" for j in range(n)}
        assert cache.count() == n * len(set(targets))


def test_sends_only_distinct_misses_and_counts_hits():
    cache = TranslationCache(":memory:")
    cache.put_many("fake", "en", "de", [("b", "de:cached")])
    backend = RecordingBackend()
    tr = CachedTranslator(backend, cache, batch_size=2)
    out = tr.translate(["a", "b", "a", "", "c", "  ", "d"], "en", "de")
    assert out == ["de:A", "de:cached", "de:A", "", "de:C", "  ", "de:D"]
    assert backend.calls == [["a", "c"], ["d"]]  # blank texts never sent, duplicates once
    assert tr.stats == {"requested": 7, "unique": 4, "hits": 1, "sent": 3, "translated": 3, "calls": 2}
    assert tr.translate(["x"], "de", "de") == ["x"] and len(backend.calls) == 2
    rows = tr.stats_rows()
    assert rows == [
        {
            "backend": "fake",
            "src": "en",
            "tgt": "de",
            "requested": 7,
            "unique": 4,
            "hits": 1,
            "sent": 3,
            "translated": 3,
            "calls": 2,
        }
    ]


def test_killed_run_resumes_at_the_failed_call(tmp_path):
    path = tmp_path / "mt.sqlite"
    texts = [f"caption {i}" for i in range(10)]
    failing = RecordingBackend(fail_on=3)
    with TranslationCache(path) as cache:
        with pytest.raises(TranslationError) as err:
            CachedTranslator(failing, cache, batch_size=2).translate(texts, "en", "de")
    assert err.value.backend == "fake" and err.value.done == 4 and err.value.total == 10
    assert "network unreachable" in str(err.value)
    assert failing.calls == [texts[0:2], texts[2:4], texts[4:6]]

    rerun = RecordingBackend()
    with TranslationCache(path) as cache:  # as a new job would
        tr = CachedTranslator(rerun, cache, batch_size=2)
        out = tr.translate(texts, "en", "de")
    assert out == [f"de:CAPTION {i}" for i in range(10)]
    assert rerun.calls[0] == texts[4:6]  # resumes at the batch of the failed call N = 3
    assert rerun.sent == texts[4:]  # nothing already translated is requested again
    assert tr.stats["hits"] == 4 and tr.stats["sent"] == 6

    third = RecordingBackend()
    with TranslationCache(path) as cache:
        tr = CachedTranslator(third, cache, batch_size=2)
        assert tr.translate(texts, "en", "de") == out
    assert third.calls == [] and tr.stats["hits"] == 10 and tr.stats["sent"] == 0


def test_cache_key_separates_backends_and_input_errors_pass_through():
    class Keyed(RecordingBackend):
        def cache_key(self, src, tgt):
            return "fake:v2"

    cache = TranslationCache(":memory:")
    CachedTranslator(RecordingBackend(), cache).translate(["a"], "en", "de")
    keyed = Keyed()
    CachedTranslator(keyed, cache).translate(["a"], "en", "de")
    assert keyed.calls == [["a"]]  # a different key does not reuse the other backend's entries

    class BadInput(RecordingBackend):
        def translate_batch(self, texts, src, tgt):
            raise InputError("dicts/", "no dictionary")

    with pytest.raises(InputError, match="no dictionary"):
        CachedTranslator(BadInput(), cache).translate(["b"], "en", "de")


def test_wrong_answer_count_is_a_translation_error():
    class Short(RecordingBackend):
        def translate_batch(self, texts, src, tgt):
            return ["x"]

    with pytest.raises(TranslationError, match="1 translations for 2 sentences"):
        CachedTranslator(Short(), TranslationCache(":memory:")).translate(["a", "b"], "en", "de")
