"""Cross-Lingual Consistency at test time (SMALR §3.4): the ``clc_a`` and
``clc_c`` evaluation protocols of a trained multilingual model.

Each human query in language l_i is scored against every image in its own
language and in each of its machine translations into the model's other
languages (the translation stage's ``{split}_translations.parquet``), giving
scores ``(Q, L, N)``; CLC-A averages them over the languages, CLC-C aggregates
them with the small MLP of :mod:`polyvse.models.clc`, fitted on the
validation split's queries and images (30 full-batch iterations, eq. 3) and
then applied to the test split. No model is retrained.

Language slots follow the model's languages (``vocab.langs``); a query's own
language fills its own slot, so CLC-C learns one weight per language for all
queries. A missing translation is NaN (CLC-A averages the others, CLC-C fills
it with their mean).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn

from polyvse.evaluate.embed import embed_images, embed_sentences
from polyvse.evaluate.retrieval import RetrievalResult, bidirectional_retrieval
from polyvse.models.clc import CLCClassifier, clc_average, fit_clc
from polyvse.text.encoded import encode_captions

log = logging.getLogger(__name__)

CLC_PROTOCOLS = ("clc_a", "clc_c")


def human_queries(captions: pd.DataFrame, split: str, lang: str) -> pd.DataFrame:
    """The human captions of ``lang`` in ``split`` (the CLC queries), in table order."""
    q = captions[(captions["split"] == split) & (captions["lang"] == lang) & (captions["origin"] == "human")]
    return q[["image_id", "lang", "cap_idx", "text"]].reset_index(drop=True)


def version_texts(queries: pd.DataFrame, translations: pd.DataFrame, langs: Sequence[str]) -> list[list[str | None]]:
    """For every query, its text in each language of ``langs``: itself in its own
    language, its translation elsewhere (None where the table has none).

    queries: ``image_id, lang, cap_idx, text``; translations: the translation
    stage's ``image_id, lang, cap_idx, tgt_lang, text``.
    """
    key = ["image_id", "lang", "cap_idx"]
    by_key = {}
    if len(translations):
        sub = translations[translations["lang"].isin(set(queries["lang"]))]
        by_key = {
            (i, l, int(c), t): text
            for i, l, c, t, text in sub[["image_id", "lang", "cap_idx", "tgt_lang", "text"]].itertuples(index=False)
        }
    out = []
    for image_id, lang, cap_idx, text in queries[[*key, "text"]].itertuples(index=False):
        out.append([text if tgt == lang else by_key.get((image_id, lang, int(cap_idx), tgt)) for tgt in langs])
    return out


@torch.no_grad()
def clc_scores(
    model: nn.Module,
    vocab,
    queries: pd.DataFrame,
    translations: pd.DataFrame,
    features: Tensor,
    image_index: dict,
    max_len: int,
) -> tuple[Tensor, np.ndarray]:
    """Scores ``(Q, L, N)`` of every query version against the images the queries
    describe, and ``(Q,)`` the column of each query's image.

    L = ``vocab.langs`` (the model's languages); N = the distinct images of
    ``queries`` in first-seen order; missing translations score NaN.
    """
    langs = list(vocab.langs)
    images = list(dict.fromkeys(queries["image_id"]))
    column = {img: i for i, img in enumerate(images)}
    rows = torch.tensor([image_index[i] for i in images], dtype=torch.long)
    img = embed_images(model, features[rows])
    texts = version_texts(queries, translations, langs)
    scores = torch.full((len(queries), len(langs), len(images)), float("nan"))
    for j, lang in enumerate(langs):
        present = [q for q, t in enumerate(texts) if t[j] is not None]
        if not present:
            continue
        frame = pd.DataFrame(
            {
                "image_id": queries["image_id"].iloc[present].to_numpy(),
                "lang": lang,
                "text": [texts[q][j] for q in present],
            }
        )
        enc = encode_captions(frame, vocab, image_index, max_len)
        scores[present, j] = (embed_sentences(model, enc) @ img.T).cpu()
    missing = int(torch.isnan(scores[:, :, 0]).sum())
    if missing:
        log.warning(
            "%d of %d query versions have no translation; CLC uses the others",
            missing,
            scores.shape[0] * scores.shape[1],
        )
    return scores, np.array([column[i] for i in queries["image_id"]], dtype=np.int64)


def fit_clc_classifier(
    model: nn.Module,
    vocab,
    captions: pd.DataFrame,
    val_translations: pd.DataFrame,
    features: Tensor,
    image_index: dict,
    max_len: int,
    query_langs: Sequence[str],
    iterations: int = 30,
    lr: float = 0.1,
    seed: int = 0,
) -> tuple[CLCClassifier, list[float]]:
    """CLC-C fitted on the validation split: every human validation query of
    ``query_langs`` with its translations, against the validation images, all at
    once (SMALR §3.4). Returns the classifier and its loss per iteration.

    The MLP starts as CLC-A (weights 1/|L|) and learns a convex weighting of the
    languages (:mod:`polyvse.models.clc`: softmax-parametrised weights, so the
    collapse to a constant output that lowers eq. (3) to its margin cannot happen)."""
    queries = pd.concat([human_queries(captions, "val", l) for l in query_langs], ignore_index=True)
    if queries.empty:
        raise ValueError(f"CLC-C needs human validation captions in {list(query_langs)}")
    scores, column = clc_scores(model, vocab, queries, val_translations, features, image_index, max_len)
    torch.manual_seed(seed)
    classifier = CLCClassifier(len(vocab.langs))
    losses = fit_clc(classifier, scores, torch.from_numpy(column), iterations=iterations, lr=lr)
    log.info(
        "CLC-C fitted on %d validation queries x %d images: loss %.4f → %.4f; first-layer weight per "
        "language (the ensemble's): %s",
        scores.shape[0],
        scores.shape[2],
        losses[0],
        losses[-1],
        dict(zip(vocab.langs, np.round(classifier.language_weights().detach().numpy(), 4).tolist())),
    )
    return classifier, losses


@torch.no_grad()
def clc_retrieval(scores: Tensor, column: np.ndarray, classifier: CLCClassifier | None) -> RetrievalResult:
    """Retrieval from aggregated scores: CLC-A (``classifier`` None) or CLC-C."""
    combined = clc_average(scores) if classifier is None else classifier.eval()(scores)
    return bidirectional_retrieval(combined.numpy(), column)


def evaluate_clc(
    model: nn.Module,
    vocab,
    captions: pd.DataFrame,
    features: np.ndarray,
    image_ids: Sequence[str],
    langs: Sequence[str],
    max_len: int,
    test_translations: pd.DataFrame,
    protocol: str,
    val_translations: pd.DataFrame | None = None,
    seed: int = 0,
) -> tuple[pd.DataFrame, int]:
    """The ``clc_a`` / ``clc_c`` protocol on the test split, one row per query
    language of ``langs`` (columns as :func:`polyvse.evaluate.run.evaluate_model`),
    and the number of parameters CLC adds (0, or CLC-C's)."""
    if protocol not in CLC_PROTOCOLS:
        raise ValueError(f"unknown CLC protocol {protocol!r}; expected one of {CLC_PROTOCOLS}")
    index = {img: i for i, img in enumerate(image_ids)}
    feats = torch.from_numpy(np.asarray(features, dtype=np.float32))
    classifier, added = None, 0
    if protocol == "clc_c":
        if val_translations is None:
            raise ValueError("CLC-C is fitted on the validation split: it needs the validation translations")
        classifier, _ = fit_clc_classifier(
            model, vocab, captions, val_translations, feats, index, max_len, langs, seed=seed
        )
        added = classifier.parameter_count()
    rows = []
    for lang in langs:
        queries = human_queries(captions, "test", lang)
        if queries.empty:
            raise ValueError(f"CLC: no human test captions in {lang!r}")
        scores, column = clc_scores(model, vocab, queries, test_translations, feats, index, max_len)
        res = clc_retrieval(scores, column, classifier)
        rows.append(
            {
                "lang": lang,
                "test_source": "human",
                "n_images": int(queries["image_id"].nunique()),
                "n_sentences": len(queries),
                **res.as_row(),
            }
        )
        log.info("%s %s: mR %.1f", protocol, lang, res.mean_recall)
    return pd.DataFrame(rows), added
