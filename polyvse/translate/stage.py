"""The translation stage of the workflow as two functions over the canonical
captions table: training augmentation + test-time translations, and the CLC
table. Each opens the backend and the cache it is configured with and logs
the cache's hit/miss counts, so a re-run shows that nothing was sent twice."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pandas as pd

from polyvse.translate.augment import augment_training, clc_translations, test_translations
from polyvse.translate.backend import make_backend
from polyvse.translate.cache import CachedTranslator, TranslationCache

log = logging.getLogger(__name__)


@contextmanager
def cached_translator(settings: Mapping, langs: Sequence[str], dictionaries: str | Path | None) -> Iterator[CachedTranslator]:
    """The configured backend behind the persistent cache.

    settings: the ``translate`` config block; ``dictionaries``: directory of
    MUSE files for the dictionary backend.
    """
    name = settings["backend"]
    if name == "dictionary":
        if dictionaries is None or not Path(dictionaries).is_dir():
            raise FileNotFoundError(f"config key translate.dictionaries: {dictionaries!r} is not a directory "
                                    "of MUSE dictionaries (en-xx.txt, xx-en.txt)")
        backend = make_backend("dictionary", directory=dictionaries, languages=langs)
    elif name == "googletrans":
        backend = make_backend("googletrans", **settings.get("googletrans", {}))
    else:
        backend = make_backend(name, **settings.get("options", {}))
    Path(settings["cache"]).parent.mkdir(parents=True, exist_ok=True)
    with TranslationCache(settings["cache"]) as cache:
        translator = CachedTranslator(backend, cache, batch_size=settings["batch_size"])
        try:
            yield translator
        finally:
            log.info("translation cache %s: %s", settings["cache"], translator.stats)
            for row in translator.stats_rows():
                log.info("  %s", row)


def augmented_captions(captions: pd.DataFrame, langs: Sequence[str], settings: Mapping,
                       dictionaries: str | Path | None) -> pd.DataFrame:
    """Human captions + MT fill-ups for train/val (≥ ``min_per_lang`` a language)
    + translations of the English test captions for languages without human ones."""
    source_order = [l for l in settings["source_order"] if l in set(captions["lang"])]
    with cached_translator(settings, langs, dictionaries) as translator:
        out = augment_training(captions, langs, source_order, translator, settings["min_per_lang"])
        return test_translations(out, langs, translator, pivot="en")


def query_translations(captions: pd.DataFrame, langs: Sequence[str], settings: Mapping,
                       dictionaries: str | Path | None, split: str = "test") -> pd.DataFrame:
    """Every human caption of ``split`` in every other language (SMALR §3.4 CLC; the
    test ``tgt_lang == "en"`` rows are the queries of the translate-to-English
    baseline; the val table is what CLC-C is fitted on). Same columns for both splits."""
    with cached_translator(settings, langs, dictionaries) as translator:
        return clc_translations(captions, langs, translator, split=split)
