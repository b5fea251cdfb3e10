"""googletrans backend with an injected fake client: batching, rate limit, retries, bounded failure."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from polyvse.translate.backend import TranslationError, make_backend
from polyvse.translate.cache import CachedTranslator, TranslationCache
from polyvse.translate.googletrans_backend import GoogleTransBackend


class FakeClient:
    """Stands in for googletrans.Translator: an async context manager with an async translate()."""

    def __init__(self, behaviour=None):
        self.calls: list[tuple[list[str], str, str, float]] = []
        self.behaviour = behaviour or (lambda n, texts: None)  # may raise, or be a coroutine to await
        self.entered = self.exited = 0

    async def __aenter__(self):
        self.entered += 1
        return self

    async def __aexit__(self, *exc):
        self.exited += 1

    async def translate(self, text, src="auto", dest="en"):
        self.calls.append((list(text), src, dest, time.monotonic()))
        outcome = self.behaviour(len(self.calls), text)
        if asyncio.iscoroutine(outcome):
            await outcome
        return [SimpleNamespace(text=f"{dest}:{t}") for t in text]


def make(client: FakeClient, **options) -> GoogleTransBackend:
    defaults = dict(batch_size=3, requests_per_second=1e6, retries=2, backoff=0.001, timeout=1.0)
    return make_backend("googletrans", client_factory=lambda timeout: client, **{**defaults, **options})


def test_import_does_not_need_googletrans():
    code = "import sys, polyvse.translate; assert 'googletrans' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_package_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "googletrans", None)  # import fails even where it is installed
    with pytest.raises(ImportError, match=r"pip install googletrans==4\.0\.2"):
        GoogleTransBackend().translate_batch(["a dog"], "en", "de")


def test_default_client_is_googletrans_translator_raising_on_http_errors(monkeypatch):
    made = []

    class Translator(FakeClient):
        def __init__(self, **kwargs):
            super().__init__()
            made.append(kwargs)

    monkeypatch.setitem(sys.modules, "googletrans", SimpleNamespace(Translator=Translator))
    out = GoogleTransBackend(timeout=7.5, requests_per_second=1e6).translate_batch(["a dog"], "en", "de")
    assert out == ["de:a dog"]
    assert made == [{"timeout": 7.5, "raise_exception": True}]


def test_batches_in_order_and_maps_language_codes():
    client = FakeClient()
    texts = [f"s{i}" for i in range(7)]
    out = make(client).translate_batch(texts, "en", "zh")
    assert out == [f"zh-cn:s{i}" for i in range(7)]
    assert [c[0] for c in client.calls] == [texts[0:3], texts[3:6], texts[6:7]]
    assert {(c[1], c[2]) for c in client.calls} == {("en", "zh-cn")}
    assert client.entered == client.exited == 1


def test_rate_limit_spaces_calls_by_sentences_per_second():
    client = FakeClient()
    # 3 sentences per call at 60 sentences/s: calls start at least 50 ms apart
    make(client, requests_per_second=60.0).translate_batch([f"s{i}" for i in range(9)], "en", "de")
    starts = [c[3] for c in client.calls]
    assert len(starts) == 3
    assert all(b - a >= 0.045 for a, b in zip(starts, starts[1:])), starts


def test_retries_with_backoff_then_succeeds():
    def flaky(n, texts):
        if n <= 2:
            raise ConnectionError("connection reset")

    client = FakeClient(flaky)
    t0 = time.monotonic()
    out = make(client, retries=2, backoff=0.02).translate_batch(["a", "b"], "en", "de")
    assert out == ["de:a", "de:b"]
    assert len(client.calls) == 3
    assert time.monotonic() - t0 >= 0.02 + 0.04  # back-off 0.02 then 0.04 s


def test_network_down_fails_in_bounded_time_with_backend_count_and_error():
    def hang(n, texts):
        if n > 1:  # the first batch gets through, then the network disappears
            return asyncio.sleep(3600)

    client = FakeClient(hang)
    b = make(client, batch_size=2, retries=2, timeout=0.05, backoff=0.01)
    t0 = time.monotonic()
    with pytest.raises(TranslationError) as err:
        b.translate_batch(["a", "b", "c", "d", "e"], "en", "de")
    elapsed = time.monotonic() - t0
    assert elapsed < 3.0  # 3 attempts × 0.05 s + 0.03 s of back-off, far from the hour the call would hang
    e = err.value
    assert e.backend == "googletrans" and e.done == 2 and e.total == 5 and e.partial == ["de:a", "de:b"]
    assert "timed out" in str(e) and "'googletrans'" in str(e) and "after 2 of 5 sentences" in str(e)
    assert len(client.calls) == 1 + 3
    assert client.exited == 1  # the client was closed


def test_dns_failure_message_and_partial_results_kept_by_cache():
    def offline(n, texts):
        if n > 1:
            raise OSError("[Errno -3] Temporary failure in name resolution")

    client = FakeClient(offline)
    cache = TranslationCache(":memory:")
    # the cache sends batches of 4, the backend splits them into calls of 2: the first call of 2 succeeds
    translator = CachedTranslator(make(client, batch_size=2, retries=1), cache, batch_size=4)
    with pytest.raises(TranslationError) as err:
        translator.translate(["a", "b", "c", "d", "e"], "en", "fr")
    msg = str(err.value)
    assert "googletrans" in msg and "Temporary failure in name resolution" in msg
    assert err.value.done == 2 and err.value.total == 5
    assert cache.get_many("googletrans", "en", "fr", ["a", "b", "c"]) == {"a": "fr:a", "b": "fr:b"}


def test_bad_language_is_not_retried():
    def invalid(n, texts):
        raise ValueError("invalid destination language")

    client = FakeClient(invalid)
    with pytest.raises(TranslationError, match="invalid destination language"):
        make(client, retries=5).translate_batch(["a"], "en", "xx")
    assert len(client.calls) == 1


def test_unparsable_answer_is_retried():
    def garbled(n, texts):
        if n == 1:
            raise json.JSONDecodeError("Expecting value", "<html>", 0)

    client = FakeClient(garbled)
    assert make(client, retries=1).translate_batch(["a"], "en", "de") == ["de:a"]
    assert len(client.calls) == 2


def test_wrong_number_of_answers_fails():
    class Short(FakeClient):
        async def translate(self, text, src="auto", dest="en"):
            return [SimpleNamespace(text="only one")]

    with pytest.raises(TranslationError, match="expected 3 translations, got 1"):
        make(Short()).translate_batch(["a", "b", "c"], "en", "de")
