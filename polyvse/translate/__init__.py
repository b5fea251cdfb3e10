"""Machine translation: one interface, several backends, a persistent cache, augmentation.

* :mod:`~polyvse.translate.backend` — :class:`TranslationBackend`, the registry,
  :func:`make_backend`, :class:`TranslationError`;
* :mod:`~polyvse.translate.transfer` — ``transfer``: offline rule-based transfer MT over the
  synthetic grammar's plans, with errors (default), falling back to ``dictionary``;
* :mod:`~polyvse.translate.dictionary` — ``dictionary``: offline word-by-word MT (MUSE dictionaries,
  read by :mod:`polyvse.text.muse`);
* :mod:`~polyvse.translate.errors` — the offline backends' MT error models (``translate.errors``);
* :mod:`~polyvse.translate.quality` — BLEU/chrF of the MT against references of the same plan;
* :mod:`~polyvse.translate.googletrans_backend` — ``googletrans``: online, opt-in
  (the package is imported only when used);
* :mod:`~polyvse.translate.cache` — SQLite cache and :class:`CachedTranslator`;
* :mod:`~polyvse.translate.augment` — augmented training captions, test-time and CLC translations.

Typical use (what the workflow's scripts do)::

    backend = make_backend("dictionary", directory="results/synthetic/dictionaries", languages=langs)
    with TranslationCache("cache/translations.sqlite") as cache:
        translator = CachedTranslator(backend, cache, batch_size=64)
        augmented = augment_training(captions, langs, source_order, translator)
"""

from polyvse.translate.augment import (
    augment_training,
    clc_translations,
    mt_test_languages,
    test_translations,
)
from polyvse.translate.backend import (
    BACKENDS,
    TranslationBackend,
    TranslationError,
    Translator,
    make_backend,
    register,
)
from polyvse.translate.cache import CachedTranslator, PairStats, TranslationCache

# Imported for their @register side effect (googletrans itself is imported lazily).
from polyvse.translate.dictionary import DictionaryBackend
from polyvse.translate.googletrans_backend import GoogleTransBackend
from polyvse.text.muse import MuseDictionary, read_muse
from polyvse.translate.transfer import TransferBackend

__all__ = [
    "BACKENDS",
    "CachedTranslator",
    "DictionaryBackend",
    "GoogleTransBackend",
    "MuseDictionary",
    "PairStats",
    "TransferBackend",
    "TranslationBackend",
    "TranslationCache",
    "TranslationError",
    "Translator",
    "augment_training",
    "clc_translations",
    "make_backend",
    "mt_test_languages",
    "read_muse",
    "register",
    "test_translations",
]
