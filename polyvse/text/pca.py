"""PCA reduction of a language's word vectors (SMALR §3.1: FastText "reduced from
300-D to 50-D using Principal Component Analysis"; SMALR §4, "PCA Reduction",
Figure 3: 50, 100 and 200 dimensions).

PCA is fitted per language on the vectors of that language's vocabulary. The
fitted mean and components are kept (:class:`PCAProjection`, saved as ``.npz``)
so that a word seen later is projected exactly as the fitted ones were.

``V`` word vectors, centred on their mean, span at most ``min(V - 1, D)``
directions. When the configured dimension is larger (the embedded synthetic
languages have about 50 to 90 words), the projection keeps the components that
exist and
adds zero components up to the configured dimension, with a logged warning: the
output keeps the configured width (so models and parameter counts follow the
config), and the extra columns are zero for every word, fitted or new.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from polyvse.errors import InputError
from polyvse.io import atomic_path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PCAProjection:
    """``x ↦ (x − mean) @ components.T``.

    ``mean`` is ``(D,)``, ``components`` ``(k, D)`` with orthonormal rows (zero
    rows past ``n_fitted``), ``explained_variance_ratio`` ``(k,)``.
    """

    mean: np.ndarray
    components: np.ndarray
    explained_variance_ratio: np.ndarray
    n_fitted: int

    @property
    def dim(self) -> int:
        return int(self.components.shape[0])

    def project(self, vectors: np.ndarray) -> np.ndarray:
        """``(N, D)`` (or ``(D,)``) vectors → ``(N, k)`` (or ``(k,)``) float32."""
        vectors = np.asarray(vectors, dtype=np.float64)
        if vectors.shape[-1] != self.mean.shape[0]:
            raise ValueError(f"PCA was fitted on {self.mean.shape[0]}-D vectors, got shape {vectors.shape}")
        return ((vectors - self.mean) @ self.components.T).astype(np.float32)

    def save(self, path: str | Path) -> None:
        """Write ``mean``, ``components``, ``explained_variance_ratio``, ``n_fitted`` to ``.npz`` atomically."""
        with atomic_path(path, suffix=".npz") as tmp:
            np.savez(
                tmp,
                mean=self.mean,
                components=self.components,
                explained_variance_ratio=self.explained_variance_ratio,
                n_fitted=np.int64(self.n_fitted),
            )

    @classmethod
    def load(cls, path: str | Path) -> "PCAProjection":
        path = Path(path)
        if not path.is_file():
            raise InputError(path, "PCA file not found")
        with np.load(path) as z:
            missing = {"mean", "components", "explained_variance_ratio", "n_fitted"} - set(z.files)
            if missing:
                raise InputError(path, f"not a PCA file: missing {', '.join(sorted(missing))}")
            return cls(z["mean"], z["components"], z["explained_variance_ratio"], int(z["n_fitted"]))


def fit_pca(vectors: np.ndarray, dim: int, seed: int = 0) -> PCAProjection:
    """Fit PCA with ``dim`` components on ``(V, D)`` word vectors.

    ``dim`` larger than ``min(V - 1, D)`` keeps the components that exist and
    pads with zero components (logged): a direction of zero variance would be an
    arbitrary one, and would give new words arbitrary coordinates. The full SVD is used, and sklearn fixes the
    sign of each component, so a fit is deterministic.
    """
    from sklearn.decomposition import PCA

    vectors = np.asarray(vectors, dtype=np.float64)
    if vectors.ndim != 2 or vectors.shape[0] < 2:
        raise ValueError(f"PCA needs a (V, D) matrix with at least two words, got shape {vectors.shape}")
    if dim < 1:
        raise ValueError(f"PCA dimension must be at least 1, got {dim}")
    if not np.isfinite(vectors).all():
        raise ValueError("PCA: the word vectors hold NaN or infinite values")
    n_words, d = vectors.shape
    k = min(dim, n_words - 1, d)
    if k < dim:
        log.warning(
            "PCA to %d dimensions: %d words of %d-D vectors span at most %d around their mean; "
            "components %d..%d are zero",
            dim,
            n_words,
            d,
            k,
            k,
            dim - 1,
        )
    pca = PCA(n_components=k, svd_solver="full", random_state=seed).fit(vectors)
    components = np.zeros((dim, d), dtype=np.float64)
    components[:k] = pca.components_
    ratio = np.zeros(dim, dtype=np.float64)
    ratio[:k] = pca.explained_variance_ratio_
    return PCAProjection(mean=pca.mean_.copy(), components=components, explained_variance_ratio=ratio, n_fitted=k)
