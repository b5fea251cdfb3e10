"""Test-split retrieval of a trained model, one row per language."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch
from torch import nn

from polyvse.evaluate.embed import retrieval_for
from polyvse.text.vocab import Vocabulary
from polyvse.text.encoded import encode_captions

log = logging.getLogger(__name__)


def test_queries(captions: pd.DataFrame, lang: str) -> tuple[pd.DataFrame, str]:
    """The test sentences of ``lang`` and where they come from (``human`` or ``mt``).

    Human captions are used when the language has them; otherwise machine
    translations (SMALR Tables 1–2, columns marked ¹).
    """
    test = captions[(captions["split"] == "test") & (captions["lang"] == lang)]
    human = test[test["origin"] == "human"]
    if not human.empty:
        return human.reset_index(drop=True), "human"
    if not test.empty:
        return test.reset_index(drop=True), "mt"
    raise ValueError(f"no test captions in language {lang!r} (neither human nor translated)")


def translated_queries(
    captions: pd.DataFrame, translations: pd.DataFrame, lang: str, into: str
) -> tuple[pd.DataFrame, str]:
    """The human test captions of ``lang`` translated into ``into`` (MULE Table 4(b),
    "Trans. to En"): rows keep their image and are encoded as language ``into``."""
    if lang == into:
        return test_queries(captions, lang)
    t = translations[(translations["lang"] == lang) & (translations["tgt_lang"] == into)]
    if t.empty:
        raise ValueError(f"no test captions of {lang!r} translated into {into!r}")
    queries = pd.DataFrame({"image_id": t["image_id"].to_numpy(), "lang": into, "text": t["text"].to_numpy()})
    return queries, f"human→mt:{into}"


def evaluate_model(
    model: nn.Module,
    vocab: Vocabulary,
    captions: pd.DataFrame,
    features: np.ndarray,
    image_ids: Sequence[str],
    langs: Sequence[str],
    max_len: int,
    translations: pd.DataFrame | None = None,
    query_lang: str | None = None,
) -> pd.DataFrame:
    """Columns: lang, test_source, n_images, n_sentences, r{1,5,10}_{t2i,i2t}, medr_*, mR.

    With ``query_lang`` set, every query is first translated into that language
    (``translations``: the query-translation table of the translation stage).
    """
    index = {img: i for i, img in enumerate(image_ids)}
    feats = torch.from_numpy(np.asarray(features, dtype=np.float32))
    rows = []
    for lang in langs:
        if query_lang is None:
            queries, source = test_queries(captions, lang)
        else:
            if translations is None:
                raise ValueError("translated queries need the query-translation table")
            queries, source = translated_queries(captions, translations, lang, query_lang)
        enc = encode_captions(queries, vocab, index, max_len)
        res = retrieval_for(model, feats, enc)
        rows.append(
            {
                "lang": lang,
                "test_source": source,
                "n_images": int(queries["image_id"].nunique()),
                "n_sentences": len(queries),
                **res.as_row(),
            }
        )
        log.info("%s (%s test captions): mR %.1f", lang, source, res.mean_recall)
    return pd.DataFrame(rows)
