"""The one machine-translation interface and the registry of backends.

A backend turns a batch of sentences of one language into another; everything
else (caching, deduplication, batching for resumability, bookkeeping) lives in
:mod:`polyvse.translate.cache`, so a new backend is one class::

    @register("my_nmt")
    class MyNMT(TranslationBackend):
        def translate_batch(self, texts, src, tgt):
            ...

A backend that lives outside this package (for example an offline neural MT
package a user installed) can be named in config as ``"package.module:Class"``
without being registered.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from typing import Any, Callable, Protocol, Sequence, TypeVar


class TranslationError(RuntimeError):
    """A backend failed for good (after its retries).

    Carries the backend's name, how many sentences were translated before the
    failure (``done``, of ``total`` when known), the underlying reason, and
    ``partial``: translations of the first ``len(partial)`` sentences of the
    failed request, so that the caller can keep them (the cache does).
    """

    def __init__(
        self, backend: str, done: int, reason: str, total: int | None = None, partial: Sequence[str] = ()
    ) -> None:
        self.backend = backend
        self.done = done
        self.total = total
        self.reason = reason
        self.partial = list(partial)
        of_total = f" of {total}" if total is not None else ""
        super().__init__(f"translation backend {backend!r} failed after {done}{of_total} sentences: {reason}")


class TranslationBackend(ABC):
    """Translates batches of sentences; subclasses set ``name`` (via :func:`register`)."""

    name: str = "unnamed"

    @abstractmethod
    def translate_batch(self, texts: list[str], src: str, tgt: str) -> list[str]:
        """Return the translation of every text of ``texts`` from ``src`` into ``tgt``, in order.

        Raises :class:`TranslationError` when the backend fails for good.
        """

    def cache_key(self, src: str, tgt: str) -> str:
        """Name under which this backend's translations of ``src``→``tgt`` are cached.

        The default is the backend's name. Backends whose output depends on local
        resources (dictionary files) add a fingerprint of them, so that changing the
        resources never serves stale cached translations.
        """
        return self.name


class Translator(Protocol):
    """Anything that translates a list of sentences: what :mod:`polyvse.translate.augment` needs."""

    def translate(self, texts: Sequence[str], src: str, tgt: str) -> list[str]: ...


BACKENDS: dict[str, type[TranslationBackend]] = {}
"""Registered backends by name (config's ``translate.backend``)."""

B = TypeVar("B", bound=type[TranslationBackend])


def register(name: str) -> Callable[[B], B]:
    """Class decorator: make a backend available to :func:`make_backend` as ``name``."""

    def deco(cls: B) -> B:
        if name in BACKENDS and BACKENDS[name] is not cls:
            raise ValueError(f"translation backend {name!r} is already registered by {BACKENDS[name].__qualname__}")
        cls.name = name
        BACKENDS[name] = cls
        return cls

    return deco


def _import_backend(spec: str) -> type[TranslationBackend]:
    module_name, _, attr = spec.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"translation backend {spec!r} cannot be imported: {e}") from e
    if not (isinstance(cls, type) and issubclass(cls, TranslationBackend)):
        raise ValueError(f"translation backend {spec!r} is not a subclass of TranslationBackend")
    if cls.name == TranslationBackend.name:
        cls.name = spec
    return cls


def make_backend(name: str, **options: Any) -> TranslationBackend:
    """Build the backend called ``name`` with its ``options`` (the config's keyword arguments).

    ``name`` is a registered name (see :data:`BACKENDS`) or ``"module:Class"``.
    """
    if ":" in name:
        cls = _import_backend(name)
    else:
        # Importing the package registers the built-in backends.
        import polyvse.translate  # noqa: F401

        if name not in BACKENDS:
            raise ValueError(
                f"unknown translation backend {name!r}: expected one of {sorted(BACKENDS)} or 'module:Class'"
            )
        cls = BACKENDS[name]
    return cls(**options)
