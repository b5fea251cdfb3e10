"""Word vectors of a joint (language, token) vocabulary, gathered from the
per-language tables of the text-feature stage.

The ``fasttext`` rule writes one ``(V_l, D)`` array per language whose row i is
the vector of the i-th token of that language's vocabulary file (most frequent
first); the ``pca`` rule keeps that alignment. A model's
:class:`~polyvse.text.vocab.Vocabulary` holds a subset of those tokens (after
``min_count`` thresholding) plus padding and one ``<unk>`` per language, so
its initial embedding table is gathered row by row here (MULE: "we initialize
our word embeddings from 300-dimensional monolingual FastText embeddings";
SMALR §3.1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from polyvse.text.vocab import Vocabulary


def joint_vectors(
    vocab: Vocabulary, tokens: Mapping[str, Sequence[str]], vectors: Mapping[str, np.ndarray]
) -> np.ndarray:
    """``(len(vocab), D)`` float32: row j is the vector of ``vocab.itos[j]``.

    tokens[lang]: the tokens of ``lang``'s vocabulary file in file order;
    vectors[lang]: ``(len(tokens[lang]), D)``, row-aligned with them. Padding is
    zero; a language's ``<unk>`` is the mean of its vectors (the expected vector
    of a word the model has not kept). A vocabulary word missing from its
    language's table raises ``KeyError``.
    """
    dims = {np.asarray(v).shape[1] for v in vectors.values()}
    if len(dims) != 1:
        raise ValueError(f"word vectors of different sizes per language: {sorted(dims)}")
    dim = dims.pop()
    rows: dict[str, dict[str, int]] = {}
    for lang in vocab.langs:
        if lang not in vectors or lang not in tokens:
            raise KeyError(f"no word vectors for language {lang!r}")
        if len(tokens[lang]) != len(vectors[lang]):
            raise ValueError(f"{lang}: {len(tokens[lang])} vocabulary tokens but {len(vectors[lang])} vectors")
        rows[lang] = {tok: i for i, tok in enumerate(tokens[lang])}
    out = np.zeros((len(vocab), dim), dtype=np.float32)
    for j, (lang, tok) in enumerate(vocab.itos):
        if j == 0:
            continue  # padding
        table = np.asarray(vectors[lang], dtype=np.float32)
        if tok == "<unk>":
            out[j] = table.mean(axis=0) if len(table) else 0.0
        elif tok in rows[lang]:
            out[j] = table[rows[lang][tok]]
        else:
            raise KeyError(f"({lang}, {tok}) is in the model's vocabulary but not in {lang}'s vector table")
    return out
