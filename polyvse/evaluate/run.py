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
from polyvse.train.data import encode_captions

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


def evaluate_model(model: nn.Module, vocab: Vocabulary, captions: pd.DataFrame, features: np.ndarray,
                   image_ids: Sequence[str], langs: Sequence[str], max_len: int) -> pd.DataFrame:
    """Columns: lang, test_source, n_images, n_sentences, r{1,5,10}_{t2i,i2t}, medr_*, mR."""
    index = {img: i for i, img in enumerate(image_ids)}
    feats = torch.from_numpy(np.asarray(features, dtype=np.float32))
    rows = []
    for lang in langs:
        queries, source = test_queries(captions, lang)
        enc = encode_captions(queries, vocab, index, max_len)
        res = retrieval_for(model, feats, enc)
        rows.append({"lang": lang, "test_source": source, "n_images": int(queries["image_id"].nunique()),
                     "n_sentences": len(queries), **res.as_row()})
        log.info("%s (%s test captions): mR %.1f", lang, source, res.mean_recall)
    return pd.DataFrame(rows)
