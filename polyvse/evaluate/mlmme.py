"""Test-split evaluation of an MLMME / VSE run (Calixto et al. 2017, Table 1).

Rows, in long form (``task, query, target, r1, r5, r10, medr, n_queries``):

- ``image_sentence``: per language, sentence → image (``query`` = the
  language, ``target`` = ``image``) and image → sentence; every human test
  caption is a query, the pool is every test image with a caption in that
  language (:func:`polyvse.evaluate.embed.retrieval_for`);
- ``sentence_sentence``: for every ordered pair of the run's languages,
  sentences of one retrieving sentences of the other
  (:mod:`polyvse.evaluate.crosslingual`): what the S_S term trains for.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd
import torch

from polyvse.evaluate.crosslingual import sentence_retrieval
from polyvse.evaluate.embed import embed_sentences, retrieval_for
from polyvse.evaluate.retrieval import KS
from polyvse.evaluate.views import IMAGE_VIEW
from polyvse.errors import InputError
from polyvse.models.mlmme import MLMME
from polyvse.text.vocab import Vocabulary
from polyvse.text.encoded import encode_captions

COLUMNS: tuple[str, ...] = ("task", "query", "target", *(f"r{k}" for k in KS), "medr", "n_queries")
IMAGE = IMAGE_VIEW


def evaluate_mlmme(
    model: MLMME,
    vocab: Vocabulary,
    captions: pd.DataFrame,
    features: np.ndarray,
    image_ids: Sequence[str],
    langs: Sequence[str],
    max_len: int,
) -> pd.DataFrame:
    """The long-form table described above, for the test split's human captions."""
    index = {img: i for i, img in enumerate(image_ids)}
    feats = torch.from_numpy(np.asarray(features, dtype=np.float32))
    rows, encoded = [], {}
    for lang in langs:
        test = captions[(captions["split"] == "test") & (captions["lang"] == lang) & (captions["origin"] == "human")]
        if test.empty:
            raise InputError("captions", f"no human test captions in {lang!r}")
        enc = encoded[lang] = encode_captions(test.reset_index(drop=True), vocab, index, max_len)
        res = retrieval_for(model, feats, enc)
        n_images = int(torch.unique(enc.image_row).numel())
        rows.append(
            {
                "task": "image_sentence",
                "query": lang,
                "target": IMAGE,
                **{f"r{k}": res.t2i[k] for k in KS},
                "medr": res.medr_t2i,
                "n_queries": len(enc),
            }
        )
        rows.append(
            {
                "task": "image_sentence",
                "query": IMAGE,
                "target": lang,
                **{f"r{k}": res.i2t[k] for k in KS},
                "medr": res.medr_i2t,
                "n_queries": n_images,
            }
        )
    embedded = {lang: embed_sentences(model, enc).cpu().numpy() for lang, enc in encoded.items()}
    for k, l in combinations(langs, 2):
        k_to_l, l_to_k = sentence_retrieval(
            embedded[k], encoded[k].image_row.numpy(), embedded[l], encoded[l].image_row.numpy()
        )
        rows.append({"task": "sentence_sentence", "query": k, "target": l, **k_to_l.as_row()})
        rows.append({"task": "sentence_sentence", "query": l, "target": k, **l_to_k.as_row()})
    return pd.DataFrame(rows, columns=list(COLUMNS))
