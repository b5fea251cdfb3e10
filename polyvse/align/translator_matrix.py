"""The Translator matrix M from a bilingual dictionary: SVD (orthogonal
Procrustes), then RCSLS (Translator poster §2; Joulin et al. 2018), with the
dictionary-induction precision@1 of both on held-out pairs.

The dictionary's target words are split at random (seeded) into training and
held-out words; every pair of a held-out word is held out, so no query's
translation is seen while learning the M that is scored. The M handed on to
the Translator models is then learnt again, the same way, on the whole
dictionary (``refit_all``, the default): the held-out score estimates its
quality, and no dictionary word is left unaligned for the downstream task. Vectors are prepared as Joulin et al. (2018) do: unit length, centred, unit
length again (:func:`prepare_vectors`); the Translator models read the same
prepared vectors, so that M's inputs and outputs are what the encoders see.
Centring matters for FastText vectors trained on a small corpus: their
shared component can make every pair of words almost parallel (mean cosine
0.9999 for the synthetic French vectors), which hides the words' differences
from both the alignment and the encoders.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from polyvse.align.induction import InductionResult, induction_precision, translation_pairs
from polyvse.align.procrustes import normalize_vectors, procrustes
from polyvse.align.rcsls import rcsls_refine
from polyvse.errors import InputError


def prepare_vectors(vectors: np.ndarray) -> np.ndarray:
    """``(V, d) → (V, d)``: unit length, centred over the vocabulary, unit length."""
    return normalize_vectors(vectors, center=True)


def split_by_target_word(pairs: np.ndarray, heldout: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(training pairs, held-out pairs) of ``pairs`` ``(m, 2)`` [target_row, source_row]:
    a ``heldout`` fraction of the distinct target words (at least one, and at
    least one left for training) with all their pairs goes to the held-out set."""
    words = np.unique(pairs[:, 0])
    if len(words) < 2:
        raise InputError("dictionary", f"{len(words)} target word(s) with vectors: too few to hold some out")
    n_out = min(len(words) - 1, max(1, int(round(heldout * len(words)))))
    out_words = np.random.default_rng(seed).permutation(words)[:n_out]
    is_out = np.isin(pairs[:, 0], out_words)
    return pairs[~is_out], pairs[is_out]


@dataclass
class TranslatorMatrix:
    """M ``(d_s, d_t)`` after SVD + RCSLS (refit on the whole dictionary, or the
    scored one), the scored SVD solution, the held-out precision@1 of SVD and
    SVD + RCSLS learnt without the held-out words, the RCSLS step log of M, and
    M's precision@1 on the pairs it was learnt from (how well it fits)."""

    matrix: np.ndarray
    svd_matrix: np.ndarray
    svd_precision: InductionResult
    rcsls_precision: InductionResult
    rcsls_log: pd.DataFrame
    fitted_precision: InductionResult
    n_train_pairs: int
    n_heldout_pairs: int
    refit_all: bool

    def summary(self) -> dict:
        return {
            "refit_on_all_pairs": self.refit_all,
            "n_train_pairs": self.n_train_pairs,
            "n_heldout_pairs": self.n_heldout_pairs,
            "heldout_queries": self.rcsls_precision.n_queries,
            "p1_nn_svd": round(self.svd_precision.nn, 2),
            "p1_csls_svd": round(self.svd_precision.csls, 2),
            "p1_nn_rcsls": round(self.rcsls_precision.nn, 2),
            "p1_csls_rcsls": round(self.rcsls_precision.csls, 2),
            "p1_csls_final_on_its_training_pairs": round(self.fitted_precision.csls, 2),
            "rcsls_objective_start": float(self.rcsls_log["objective"].iloc[0]),
            "rcsls_objective_end": float(self.rcsls_log["objective"].iloc[-1]),
        }


def fit_translator_matrix(
    target_vectors: np.ndarray,
    target_words: Sequence[str],
    source_vectors: np.ndarray,
    source_words: Sequence[str],
    dictionary: Sequence[tuple[str, str]],
    *,
    k: int = 10,
    n_iter: int = 50,
    lr: float = 1.0,
    constraint: str = "spectral",
    heldout: float = 0.2,
    seed: int = 0,
    refit_all: bool = True,
) -> TranslatorMatrix:
    """M mapping target word vectors into the source space (``M t ≈ s``).

    target_vectors ``(V_t, d_t)`` rows for ``target_words``; source_vectors
    ``(V_s, d_s)`` for ``source_words``; dictionary: ``(target_word,
    source_word)`` pairs. RCSLS searches neighbours among every word of both
    vocabularies; k nearest neighbours (poster: 10, capped at the vocabulary sizes).
    """
    tv, sv = prepare_vectors(target_vectors), prepare_vectors(source_vectors)
    pairs = translation_pairs(dictionary, target_words, source_words)
    if len(pairs) == 0:
        raise InputError("dictionary", "no dictionary pair has both words in the vocabularies")
    train, test = split_by_target_word(pairs, heldout, seed)
    k = min(k, len(tv), len(sv))

    def svd_then_rcsls(rows: np.ndarray):
        svd = procrustes(tv[rows[:, 0]], sv[rows[:, 1]])
        return svd, rcsls_refine(
            tv[rows[:, 0]],
            sv[rows[:, 1]],
            svd,
            k=k,
            n_iter=n_iter,
            lr=lr,
            constraint=constraint,
            target_vocab=tv,
            source_vocab=sv,
        )

    svd, refined = svd_then_rcsls(train)
    scores = induction_precision(svd, tv, sv, test, k=k), induction_precision(refined.matrix, tv, sv, test, k=k)
    final, fitted_on = (svd_then_rcsls(pairs)[1], pairs) if refit_all else (refined, train)
    return TranslatorMatrix(
        final.matrix,
        svd,
        *scores,
        final.log_frame(),
        induction_precision(final.matrix, tv, sv, fitted_on, k=k),
        len(train),
        len(test),
        refit_all,
    )
