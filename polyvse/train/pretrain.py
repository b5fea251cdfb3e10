"""SMALR's latent-vocabulary pretraining as a workflow step (SMALR §3.1), and
the assignment a LA / HEM / SMALR model starts from.

Pretraining (:func:`pretrain_latent_vocabulary`) reads every configured
language's (augmented) training captions and FastText vectors, learns the
word → latent-token scorer and the latent embeddings with the sentence triplet
loss of eq. (1) (positives: sentences of the same image in any language), and
saves the frozen argmax assignment of every word of its joint vocabulary,
keyed by (language, token), with the latent embeddings of the tokens used
("unused tokens are dropped").

A model's vocabulary may differ from the pretraining's (fewer languages, human
captions only, another threshold): :func:`latent_assignment_for` looks its
words up by (language, token), keeps only the tokens its latent words use,
and renumbers them.

Where the paper is silent, three choices keep the hard assignment from
collapsing onto a single latent token (with every word on one token all
sentences are equal and the triplet loss sits at exactly its margin, a
minimum the straight-through dynamics find readily):

- the scorer reads each language's FastText vectors centred on the
  language's mean and scaled to unit norm (``center_vectors``): a corpus's
  common direction otherwise decides every word's argmax;
- an optional usage term (``usage_weight``; 0 = the paper's loss) adds
  ``w · (1 − H(π̄) / log N)``, π̄ the mean assignment distribution of the
  batch's words: the load-balancing term of hard-routing models;
- the best epoch is chosen by cross-lingual sentence retrieval on the
  validation split (same-image sentences of other languages, R@1/5/10) with
  ties counted against the query, not by the validation loss (which a
  collapsed assignment minimises).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn

from polyvse.data.tables import select_captions
from polyvse.io import release_freed_memory
from polyvse.models.latent_vocab import LatentAssignment, LatentVocabulary, LatentVocabularyConfig
from polyvse.optim import adam
from polyvse.text.joint_vectors import joint_vectors
from polyvse.text.vocab import Vocabulary
from polyvse.train.data import ImageGroupedBatches, batch_sampler, collate, encode_captions
from polyvse.train.loop import fingerprint, resolve_device, run_epochs
from polyvse.train.negatives import NegativesWarmup
from polyvse.train.objectives_smalr import LatentVocabularyObjective

log = logging.getLogger(__name__)


def centred_unit_vectors(vectors: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each language's vectors minus their mean, scaled to unit norm (zero rows stay zero)."""
    out = {}
    for lang, v in vectors.items():
        v = np.asarray(v, dtype=np.float32)
        c = v - v.mean(axis=0, keepdims=True)
        out[lang] = c / np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-8)
    return out


@torch.no_grad()
def cross_lingual_recall(
    sentences: Tensor, image: Tensor, lang: Tensor, ks: tuple[int, ...] = (1, 5, 10), chunk: int = 1024
) -> float:
    """Mean R@K (percent) of retrieving a same-image sentence of another language
    among the other-language sentences, ties counted against the query.

    sentences ``(S, D)``, image ``(S,)``, lang ``(S,)``. Queries without such a
    sentence are skipped; 0 when there are none. Queries ``chunk`` at a time: the scale config's
    10,140 validation sentences made a full ``(S, S)`` score matrix and its masks ~1.5 GB."""
    unit = nn.functional.normalize(sentences, dim=1)
    ranks = []
    for i in range(0, len(unit), chunk):
        sim = unit[i : i + chunk] @ unit.T  # (C, S)
        other = lang[i : i + chunk].unsqueeze(1) != lang.unsqueeze(0)
        positive = (image[i : i + chunk].unsqueeze(1) == image.unsqueeze(0)) & other
        has = positive.any(dim=1)
        sim, other, positive = sim[has], other[has], positive[has]
        best = sim.masked_fill(~positive, -math.inf).max(dim=1).values
        # rank of the best positive among other-language sentences; equal scores rank above it
        ranks.append(((sim >= best.unsqueeze(1)) & other & ~positive).sum(dim=1) + 1)
    rank = torch.cat(ranks) if ranks else torch.zeros(0, dtype=torch.long)
    if len(rank) == 0:
        return 0.0
    return float(np.mean([100.0 * float((rank <= k).float().mean()) for k in ks]))


def pretrain_latent_vocabulary(
    captions: pd.DataFrame,
    tokens: Mapping[str, list[str]],
    counts: Mapping[str, Mapping[str, int]],
    fasttext: Mapping[str, np.ndarray],
    settings: Mapping,
    text: Mapping,
    checkpoint_dir: Path,
    seed: int = 0,
    threads: int = 1,
    progress: bool = True,
) -> dict:
    """Pretrain the latent vocabulary of ``settings["langs"]`` and return what the pretrain rule saves.

    tokens / fasttext: per language, the vocabulary file's tokens and their
    row-aligned FastText vectors; counts: the vocabulary counts (for
    ``text.min_count``); settings: one ``pretrain.<name>`` config block.
    Returns ``{"entries", "word_to_token", "embeddings", "source_tokens",
    "config", "log", "best_epoch", "val_score"}``.
    """
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    langs = list(settings["langs"])
    vocab = Vocabulary.from_counts({l: counts[l] for l in langs}, text["min_count"], text["segmenter"])
    images = sorted(set(captions["image_id"]), key=str)
    index = {img: i for i, img in enumerate(images)}
    train = encode_captions(
        select_captions(captions, "train", langs, settings["captions"]),
        vocab,
        index,
        text["max_len"],
        keep_frame=False,
    )
    val_caps = select_captions(captions, "val", langs, settings["captions"])
    if len(train) == 0 or val_caps.empty:
        raise ValueError(f"latent pretraining needs train and val captions in {langs}")
    # Memory at Multi30K's size with MT: the caption table (~0.7 GB) and the per-language
    # FastText tables (~0.24 GB, and as much again centred) are not read past this point;
    # a caller that passes them without keeping a reference gets that memory back here.
    del captions
    release_freed_memory()
    if settings.get("center_vectors", True):
        fasttext = centred_unit_vectors(fasttext)
    vectors = torch.from_numpy(joint_vectors(vocab, tokens, fasttext))
    del fasttext
    config = LatentVocabularyConfig(
        vocab_size=len(vocab),
        word_dim=int(vectors.shape[1]),
        n_tokens=settings["n_tokens"],
        dim=settings["dim"],
        scorer_dim=settings["scorer_dim"],
        explore_p=settings["explore_p"],
        explore_m=settings["explore_m"],
        temperature=settings["temperature"],
        straight_through=settings.get("straight_through", "softmax"),
        scorer=settings.get("scorer", "dot"),
        cosine_scale=float(settings.get("cosine_scale", 30.0)),
    )
    model = LatentVocabulary(config, vectors)
    val = encode_captions(val_caps, vocab, index, text["max_len"])
    dummy = torch.zeros(len(images), 1)  # collate wants image features; the pretraining reads sentences only
    device = resolve_device(settings.get("device", "cpu"))
    model.to(device)
    objective = LatentVocabularyObjective(
        settings["margin"], settings["top_k"], usage_weight=float(settings.get("usage_weight", 0.0))
    )
    # the sentences of an image in every language it has: the neighbourhood triplet's positives are an
    # image's sentences in other languages, which the latent tokens must bring together
    batches = batch_sampler(
        train,
        settings["images_per_batch"],
        settings["captions_per_image"],
        "natural",
        settings.get("image_captions", "quota"),
    )
    n_batches = min(len(batches), settings.get("batches_per_epoch") or len(batches))
    warmup = NegativesWarmup(objective, settings.get("negatives_warmup_epochs", 0) * n_batches)
    val_batches = ImageGroupedBatches(val.image_row, settings["images_per_batch"], settings["captions_per_image"])
    val_fixed = [collate(val, rows, dummy, device) for rows in val_batches.epoch(np.random.default_rng([seed, 0]))]
    # one sentence per (image, language) of the validation split, for the retrieval score
    first = np.array(val.frame.groupby(["image_id", "lang"], sort=False).head(1).index, dtype=np.int64)
    val_one = val.subset(first)

    def epoch(rng: np.random.Generator) -> Iterator[dict[str, Tensor]]:
        for i, rows in enumerate(batches.epoch(rng)):
            if i >= n_batches:
                return
            if i % 100 == 99:  # batches of varying vocabularies fragment the heap over an epoch
                release_freed_memory()
            yield collate(train, rows, dummy, device)

    @torch.no_grad()
    def validate(m: LatentVocabulary) -> dict[str, float]:
        # eval mode: the argmax assignment, no exploration
        loss = float(np.mean([float(objective(m, b)["loss"]) for b in val_fixed]))
        used = int(torch.unique(m.assign(torch.arange(1, len(vocab), device=device))).numel())
        # the sentences 1,024 at a time: the scale config's 10,140 in one batch padded to
        # (10,140, 40, 512) floats, 0.8 GB and as much again for their mean (measured peak 3.9 GB)
        sentences = torch.cat(
            [
                m(tokens.to(device), lengths)
                for tokens, lengths in (
                    val_one.take(torch.arange(i, min(i + 1024, len(val_one)))) for i in range(0, len(val_one), 1024)
                )
            ]
        )
        recall = cross_lingual_recall(sentences, val_one.image_row.to(device), val_one.lang.to(device))
        return {"val_score": recall, "val_loss": loss, "tokens_used": used}

    optimiser = adam(model.parameters(), lr=settings["lr"])
    run_id = fingerprint(dict(settings), dict(text), len(vocab), len(train), seed)
    log.info(
        "latent pretraining on %s: %d sentences, vocabulary %d, %d latent tokens, %d batches an epoch",
        "+".join(langs),
        len(train),
        len(vocab),
        config.n_tokens,
        n_batches,
    )
    result = run_epochs(
        model,
        optimiser,
        epoch,
        n_batches,
        lambda b: objective(model, b),
        validate,
        epochs=settings["epochs"],
        seed=seed,
        checkpoint_dir=checkpoint_dir,
        run_id=run_id,
        device=device,
        score_name="val_score",
        progress=progress,
        after_step=warmup.step,
        stateful={"negatives": warmup},
        patience=settings.get("patience"),
        patience_from=settings.get("negatives_warmup_epochs", 0),
    )
    model.load_state_dict(result.best_state)
    model.cpu().eval()
    assignment = model.compact()
    log.info(
        "best epoch %d: %d of %d latent tokens used by %d words",
        result.best_epoch,
        assignment.n_tokens,
        config.n_tokens,
        len(vocab) - 1,
    )
    saved_config = {k: v for k, v in config.as_dict().items()}
    return {
        "entries": [list(e) for e in vocab.itos],
        **assignment.as_dict(),
        "config": saved_config,
        "settings": dict(settings),
        "log": result.log.to_dict("records"),
        "best_epoch": result.best_epoch,
        "val_score": result.best_score,
    }


USAGE_COLUMNS = [
    "scope",
    "words",
    "tokens_used",
    "largest_token_words",
    "largest_token_share",
    "entropy_bits",
    "normalised_entropy",
    "effective_tokens",
]


def latent_usage(
    entries: list[list[str]] | list[tuple[str, str]], word_to_token: Tensor, n_tokens: int
) -> pd.DataFrame:
    """How the pretraining's words spread over the latent tokens (SMALR §3.1), overall and per language.

    ``entries``: ``(language, token)`` of every row of the joint vocabulary (row 0 padding);
    ``word_to_token``: ``(V,)`` the frozen assignment, −1 where a row has no token; ``n_tokens``:
    the latent vocabulary's configured size. A row of :data:`USAGE_COLUMNS` per scope (``all``,
    then each language): the words, the tokens they use, the largest token's words and share,
    the entropy of the words' distribution over tokens (bits), that entropy over
    log2(min(words, n_tokens)) (1: words spread as evenly as possible, 0: one token holds every
    word), and 2^entropy (the number of equally used tokens with that entropy). A collapsed
    assignment — the failure this report exists to show — has a share near 1 and entropy near 0.
    """
    token = word_to_token.long().cpu().numpy()
    langs = np.array([str(e[0]) for e in entries], dtype=object)
    if len(langs) != len(token):
        raise ValueError(f"latent_usage: {len(entries)} vocabulary entries for {len(token)} assignments")
    rows = []
    for scope in ["all", *dict.fromkeys(langs[1:])]:
        keep = (token >= 0) & ((langs == scope) if scope != "all" else True)
        counts = np.bincount(token[keep]) if keep.any() else np.zeros(0, dtype=np.int64)
        counts = counts[counts > 0]
        words = int(counts.sum())
        p = counts / max(words, 1)
        entropy = max(0.0, float(-(p * np.log2(p)).sum())) if words else 0.0  # max: no -0.0 in the report
        ceiling = math.log2(min(words, n_tokens)) if min(words, n_tokens) > 1 else 0.0
        rows.append(
            {
                "scope": scope,
                "words": words,
                "tokens_used": int(len(counts)),
                "largest_token_words": int(counts.max()) if words else 0,
                "largest_token_share": round(float(counts.max()) / words, 4) if words else 0.0,
                "entropy_bits": round(entropy, 3),
                "normalised_entropy": round(entropy / ceiling, 4) if ceiling else 0.0,
                "effective_tokens": round(2.0**entropy, 1),
            }
        )
    return pd.DataFrame(rows, columns=USAGE_COLUMNS)


def latent_assignment_for(vocab: Vocabulary, saved: Mapping, words: Tensor) -> LatentAssignment:
    """The pretrained assignment of the ``words`` (``(V,)`` bool) of ``vocab``.

    Each word is looked up by (language, token) in the pretraining's
    vocabulary; a word it lacks takes the token of its language's ``<unk>``
    (logged). Only the tokens these words use are kept, renumbered in token
    order; ``word_to_token`` is −1 for the other words and for padding.
    """
    entries = {tuple(e): i for i, e in enumerate(saved["entries"])}
    pretrained = saved["word_to_token"].long()
    words = words.clone()
    words[0] = False
    token = torch.full((len(vocab),), -1, dtype=torch.long)
    missing = []
    for j in words.nonzero(as_tuple=True)[0].tolist():
        lang, tok = vocab.itos[j]
        row = entries.get((lang, tok))
        if row is None:
            missing.append((lang, tok))
            row = entries.get((lang, "<unk>"))
            if row is None:
                raise KeyError(f"language {lang!r} is not in the latent pretraining's vocabulary")
        token[j] = pretrained[row]
    if missing:
        log.warning(
            "%d words are not in the latent pretraining's vocabulary and take their language's <unk> token, e.g. %s",
            len(missing),
            missing[:5],
        )
    chosen = token[words]
    used, renumbered = torch.unique(chosen, return_inverse=True)
    word_to_token = torch.full((len(vocab),), -1, dtype=torch.long)
    word_to_token[words] = renumbered
    return LatentAssignment(
        word_to_token, saved["embeddings"][used].float().clone(), saved["source_tokens"][used].long().clone()
    )
