"""Images that look alike: a batch's in-batch negatives that differ from its captions in a detail.

The papers' objectives rank each caption against the other images of its batch (VSE++'s hardest negative,
MULE eq. 2 and SMALR eq. 1's most violated ones), and draw the batches at random. At the papers' batch sizes
(128 images, 450) a batch holds images that share most of what a caption says; at the embedded default's
16, a caption's 15 negatives rarely share its shapes, so the captions are told apart without their colour
words, and a model queried for "a red circle" returns circles of every colour (docs/learning.md, "Short
queries"). A batch of neighbours puts beside its first image the images whose features are most like it:
negatives that differ in colour, count or place alone, which the model has to read the whole caption to
tell apart. The samplers of :mod:`polyvse.train.data` draw the rest of a batch as before.
"""

from __future__ import annotations

import numpy as np


class ImageNeighbours:
    """Cosine similarity between images' features, centred by the training images' mean (features of one
    backbone share a large common part, which would make every image alike).

    ``features``: ``(N, D)`` rows indexed as the captions' ``image_row``; ``training_rows``: the rows whose mean
    centres them (the training images': no statistic of a validation or test image reaches the training; all
    rows when None). Nothing is precomputed beyond the normalised rows (``N × D`` float32): a seed's
    similarities are one matrix-vector product over the images still to draw, so a dataset of 145K images
    costs no ``N × N`` table.
    """

    def __init__(self, features: np.ndarray, training_rows: np.ndarray | None = None):
        feats = np.asarray(features, dtype=np.float32)
        if feats.ndim != 2 or not len(feats):
            raise ValueError(f"image neighbours need (N, D) features, got shape {feats.shape}")
        rows = feats if training_rows is None else feats[np.asarray(training_rows, dtype=np.int64)]
        if not len(rows):
            raise ValueError("image neighbours need at least one training image to centre the features")
        centred = feats - rows.mean(axis=0, dtype=np.float64).astype(np.float32)
        norms = np.linalg.norm(centred, axis=1, keepdims=True)
        self.unit = centred / np.maximum(norms, np.float32(1e-12))

    def similarity(self, seed: int, rows: np.ndarray) -> np.ndarray:
        """``(len(rows),)`` cosines of image ``seed`` with each of ``rows`` (feature rows)."""
        return self.unit[np.asarray(rows, dtype=np.int64)] @ self.unit[int(seed)]

    def nearest(self, seed: int, rows: np.ndarray, k: int) -> np.ndarray:
        """Positions in ``rows`` of the ``k`` images most like ``seed``, the most alike first (ties: the
        earlier position)."""
        if k <= 0 or not len(rows):
            return np.zeros(0, dtype=np.int64)
        scores = self.similarity(seed, rows)
        return np.argsort(-scores, kind="stable")[:k]


def neighbour_count(share: float, per_batch: int) -> int:
    """How many of a batch's ``per_batch`` images after its first are drawn as the first's neighbours."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"training.neighbour_share must be in [0, 1], got {share!r}")
    return int(round(share * max(0, per_batch - 1)))
