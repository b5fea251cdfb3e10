"""Google Translate through ``googletrans==4.0.2``: online, opt-in from config.

MULE (§Experiments, "Machine Translations") and SMALR (§4) used Google's online
translator. ``googletrans`` is imported only when a translation is requested,
so the package works without it (``pip install googletrans==4.0.2``).

googletrans 4.x is asynchronous (``async with Translator(timeout=...) as t:
await t.translate([...], src=..., dest=...)``) and sends one HTTP request per
sentence of a list, so:

* sentences go in batches of ``batch_size`` per call;
* the rate limit counts sentences: a call of ``n`` sentences starts no sooner
  than ``n / requests_per_second`` seconds after the previous one started;
* every call is bounded by ``timeout`` seconds (also given to the HTTP client);
* a failed call is retried ``retries`` times after ``backoff``, ``2·backoff``,
  ``4·backoff``… seconds (at most ``max_backoff``);
* after the last retry a :class:`TranslationError` names the backend, the
  number of sentences done, and the network error; it carries the finished
  translations (``partial``) so the cache keeps them.

With no network, a call therefore fails within about
``(retries + 1) · timeout + Σ back-offs`` seconds (65 s with the defaults).
"""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Mapping

from polyvse.translate.backend import TranslationBackend, TranslationError, register

INSTALL_HINT = "pip install googletrans==4.0.2"

# Codes that Google spells differently from ISO 639-1 / the workflow.
DEFAULT_LANGUAGE_CODES: dict[str, str] = {"zh": "zh-cn"}


def _default_client_factory(timeout: float) -> Any:
    try:
        from googletrans import Translator  # imported lazily: an optional dependency
    except ImportError as e:
        raise ImportError(f"the 'googletrans' translation backend needs the googletrans package: {INSTALL_HINT}") from e
    # raise_exception: by default googletrans answers an HTTP error (e.g. 429, rate
    # limited) with the source text as its "translation", which the cache would keep.
    return Translator(timeout=timeout, raise_exception=True)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, asyncio.TimeoutError):
        return "timed out"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@register("googletrans")
class GoogleTransBackend(TranslationBackend):
    """Batched, rate-limited, retried Google Translate.

    ``client_factory(timeout)`` returns an async context manager whose
    ``translate(list_of_texts, src=..., dest=...)`` coroutine returns objects with
    a ``.text`` attribute; the default builds ``googletrans.Translator``. Tests
    inject a fake one.
    """

    def __init__(
        self,
        batch_size: int = 20,
        requests_per_second: float = 5.0,
        retries: int = 4,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        timeout: float = 10.0,
        language_codes: Mapping[str, str] | None = None,
        client_factory: Callable[[float], Any] | None = None,
    ) -> None:
        if batch_size < 1 or requests_per_second <= 0 or retries < 0 or timeout <= 0 or backoff < 0:
            raise ValueError(
                "googletrans backend: batch_size ≥ 1, requests_per_second > 0, retries ≥ 0, "
                "timeout > 0 and backoff ≥ 0 are required"
            )
        self.batch_size = batch_size
        self.requests_per_second = requests_per_second
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.timeout = timeout
        self.language_codes = dict(DEFAULT_LANGUAGE_CODES if language_codes is None else language_codes)
        self.client_factory = client_factory or _default_client_factory
        self._next_start = 0.0  # monotonic time before which the next call may not start

    def _code(self, lang: str) -> str:
        return self.language_codes.get(lang, lang)

    async def _throttle(self, n_sentences: int) -> None:
        now = time.monotonic()
        if now < self._next_start:
            await asyncio.sleep(self._next_start - now)
            now = time.monotonic()
        self._next_start = now + n_sentences / self.requests_per_second

    async def _call(self, client: Any, batch: list[str], src: str, tgt: str) -> list[str]:
        result = await asyncio.wait_for(
            client.translate(batch, src=self._code(src), dest=self._code(tgt)), timeout=self.timeout
        )
        if not isinstance(result, list):
            result = [result]
        texts = [r.text for r in result]
        if len(texts) != len(batch) or not all(isinstance(t, str) for t in texts):
            raise ValueError(f"expected {len(batch)} translations, got {len(texts)}")
        return texts

    async def _translate_all(self, texts: list[str], src: str, tgt: str) -> list[str]:
        done: list[str] = []
        try:
            client = self.client_factory(self.timeout)
        except ImportError:
            raise
        except Exception as e:
            raise TranslationError(self.name, 0, f"cannot create the client: {_describe(e)}", total=len(texts)) from e
        async with client:
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start : start + self.batch_size]
                for attempt in range(self.retries + 1):
                    await self._throttle(len(batch))
                    try:
                        done.extend(await self._call(client, batch, src, tgt))
                        break
                    except (ValueError, TypeError) as e:
                        if isinstance(e, json.JSONDecodeError) and attempt < self.retries:
                            # An unparsable page (rate limiting, captcha) is transient: retry.
                            await asyncio.sleep(min(self.backoff * 2**attempt, self.max_backoff))
                            continue
                        # A bad language code or a wrong number of answers: retrying cannot help.
                        raise TranslationError(
                            self.name, len(done), _describe(e), total=len(texts), partial=done
                        ) from e
                    except Exception as e:
                        if attempt == self.retries:
                            raise TranslationError(
                                self.name,
                                len(done),
                                f"{_describe(e)} ({self.retries + 1} attempts, timeout {self.timeout:g} s each)",
                                total=len(texts),
                                partial=done,
                            ) from e
                        await asyncio.sleep(min(self.backoff * 2**attempt, self.max_backoff))
        return done

    def translate_batch(self, texts: list[str], src: str, tgt: str) -> list[str]:
        if not texts:
            return []
        coro = self._translate_all(list(texts), src, tgt)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(coro)
        # Called from inside an event loop (a notebook): run ours in a thread.
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, coro).result()
