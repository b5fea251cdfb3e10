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
from polyvse.translate.quality import (
    check_references,
    describe_backend,
    english_test_references,
    mt_quality,
    unmeasured_quality,
)

log = logging.getLogger(__name__)


OFFLINE_BACKENDS = ("transfer", "dictionary")
"""The built-in offline backends: they read MUSE dictionaries and get ``translate.errors``."""


@contextmanager
def cached_translator(
    settings: Mapping,
    langs: Sequence[str],
    dictionaries: str | Path | None,
    references: str | Path | pd.DataFrame | None = None,
) -> Iterator[CachedTranslator]:
    """The configured backend behind the persistent cache.

    settings: the ``translate`` config block; ``dictionaries``: directory of
    MUSE files for the offline backends (``transfer``, ``dictionary``), which alone
    get ``settings["errors"]`` (the MT error models, :mod:`polyvse.translate.errors`);
    ``references``: the synthetic dataset's plan realisations
    (:func:`polyvse.data.synthetic.plan_realisations`: a parquet path or a table)
    for the ``transfer`` backend; None (real data): every text falls back to
    word-by-word translation.
    """
    name = settings["backend"]
    if name in OFFLINE_BACKENDS:
        if dictionaries is None or not Path(dictionaries).is_dir():
            raise FileNotFoundError(
                f"config key translate.dictionaries: {dictionaries!r} is not a directory "
                "of MUSE dictionaries (en-xx.txt, xx-en.txt)"
            )
        errors = dict(settings.get("errors", {}))
        extra = {"references": references} if name == "transfer" else {}
        backend = make_backend(
            name, directory=dictionaries, languages=langs, errors=errors, seed=int(errors.get("seed", 0)), **extra
        )
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


def augmented_captions(
    captions: pd.DataFrame,
    langs: Sequence[str],
    settings: Mapping,
    dictionaries: str | Path | None,
    references: str | Path | pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Human captions + MT fill-ups for train/val (≥ ``min_per_lang`` a language)
    + translations of the English test captions for languages without human ones.
    ``references``: plan realisations for the ``transfer`` backend (:func:`cached_translator`)."""
    source_order = [l for l in settings["source_order"] if l in set(captions["lang"])]
    with cached_translator(settings, langs, dictionaries, references) as translator:
        out = augment_training(captions, langs, source_order, translator, settings["min_per_lang"])
        return test_translations(out, langs, translator, pivot="en")


def query_translations(
    captions: pd.DataFrame,
    langs: Sequence[str],
    settings: Mapping,
    dictionaries: str | Path | None,
    split: str = "test",
    references: str | Path | pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Every human caption of ``split`` in every other language (SMALR §3.4 CLC; the
    test ``tgt_lang == "en"`` rows are the queries of the translate-to-English
    baseline; the val table is what CLC-C is fitted on). Same columns for both splits.
    ``references``: plan realisations for the ``transfer`` backend (:func:`cached_translator`)."""
    with cached_translator(settings, langs, dictionaries, references) as translator:
        return clc_translations(captions, langs, translator, split=split)


def synthetic_references(dataset: Mapping, langs: Sequence[str], split: str = "test") -> pd.DataFrame:
    """References of the same plan for a synthetic dataset's config block (the ``references`` rule).

    Rebuilds the dataset's plans (no images) with the arguments the dataset
    rule uses; the ``mt_quality`` rule checks that their English rows are the
    dataset's captions.
    """
    from polyvse.data.synthetic import reference_captions

    return reference_captions(_synthetic_plans(dataset, langs), list(langs), split=split)


def synthetic_realisations(dataset: Mapping, langs: Sequence[str]) -> pd.DataFrame:
    """Every human caption's plan realised in every language of ``langs`` (the ``references`` rule).

    :func:`polyvse.data.synthetic.plan_realisations` of the dataset rebuilt (no
    images) with the dataset rule's arguments: what the ``transfer`` backend looks
    sentences up in; its English test rows (``src_lang == "en"``) are the
    references of :func:`measure_quality`.
    """
    from polyvse.data.synthetic import plan_realisations

    return plan_realisations(_synthetic_plans(dataset, langs), list(langs))


def _synthetic_plans(dataset: Mapping, langs: Sequence[str]):
    from polyvse.data.synthetic import build_dataset

    if dataset["adapter"] != "synthetic":
        raise ValueError(f"adapter {dataset['adapter']!r} has no references of the same plan: only synthetic data does")
    s = dataset["synthetic"]
    return build_dataset(
        s["profile"],
        s["n_train"],
        s["n_val"],
        s["n_test"],
        seed=s["seed"],
        captions_per_image=s["captions_per_image"],
        langs=list(langs) if s["profile"] == "all" else None,
        lexicon=s.get("lexicon", "closed"),
    )


def measure_quality(
    captions: pd.DataFrame,
    references: pd.DataFrame | None,
    langs: Sequence[str],
    settings: Mapping,
    dictionaries: str | Path | None,
) -> pd.DataFrame:
    """results/{dataset}/mt_quality.tsv: BLEU/chrF of the configured MT (see :mod:`polyvse.translate.quality`).

    ``references`` None (real data): every en↔xx pair is written ``unmeasured``.
    ``references``: :func:`synthetic_references` (English test captions) or
    :func:`synthetic_realisations` (every caption; its English test rows are
    scored, and the whole table is the ``transfer`` backend's).
    Translations go through the same cache as the translation stage.
    """
    backend = describe_backend(settings)
    if references is None:
        return unmeasured_quality(langs, backend)
    english = english_test_references(references)
    check_references(english, captions)
    refs = english[english["lang"].isin(list(langs))]
    plans = references if "src_lang" in references.columns else None
    with cached_translator(settings, langs, dictionaries, plans) as translator:
        return mt_quality(refs, translator, backend)
