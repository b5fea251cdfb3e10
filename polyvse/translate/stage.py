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
from polyvse.translate.quality import check_references, describe_backend, mt_quality, unmeasured_quality

log = logging.getLogger(__name__)


@contextmanager
def cached_translator(settings: Mapping, langs: Sequence[str], dictionaries: str | Path | None) -> Iterator[CachedTranslator]:
    """The configured backend behind the persistent cache.

    settings: the ``translate`` config block; ``dictionaries``: directory of
    MUSE files for the dictionary backend, which alone gets ``settings["errors"]``
    (the MT error model, :mod:`polyvse.translate.errors`).
    """
    name = settings["backend"]
    if name == "dictionary":
        if dictionaries is None or not Path(dictionaries).is_dir():
            raise FileNotFoundError(f"config key translate.dictionaries: {dictionaries!r} is not a directory "
                                    "of MUSE dictionaries (en-xx.txt, xx-en.txt)")
        errors = dict(settings.get("errors", {}))
        backend = make_backend("dictionary", directory=dictionaries, languages=langs,
                               errors=errors, seed=int(errors.get("seed", 0)))
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


def synthetic_references(dataset: Mapping, langs: Sequence[str], split: str = "test") -> pd.DataFrame:
    """References of the same plan for a synthetic dataset's config block (the ``references`` rule).

    Rebuilds the dataset's plans (no images) with the arguments the dataset
    rule uses; the ``mt_quality`` rule checks that their English rows are the
    dataset's captions.
    """
    from polyvse.data.synthetic import build_dataset, reference_captions

    if dataset["adapter"] != "synthetic":
        raise ValueError(f"adapter {dataset['adapter']!r} has no references of the same plan: only synthetic data does")
    s = dataset["synthetic"]
    ds = build_dataset(s["profile"], s["n_train"], s["n_val"], s["n_test"], seed=s["seed"],
                       captions_per_image=s["captions_per_image"],
                       langs=list(langs) if s["profile"] == "all" else None)
    return reference_captions(ds, list(langs), split=split)


def measure_quality(captions: pd.DataFrame, references: pd.DataFrame | None, langs: Sequence[str],
                    settings: Mapping, dictionaries: str | Path | None) -> pd.DataFrame:
    """results/{dataset}/mt_quality.tsv: BLEU/chrF of the configured MT (see :mod:`polyvse.translate.quality`).

    ``references`` None (real data): every en↔xx pair is written ``unmeasured``.
    Translations go through the same cache as the translation stage.
    """
    backend = describe_backend(settings)
    if references is None:
        return unmeasured_quality(langs, backend)
    check_references(references, captions)
    refs = references[references["lang"].isin(list(langs))]
    with cached_translator(settings, langs, dictionaries) as translator:
        return mt_quality(refs, translator, backend)
