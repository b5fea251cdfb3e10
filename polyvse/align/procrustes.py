"""Orthogonal Procrustes: the SVD initialisation of the Translator matrix M.

Translator poster §2 "SVD": ``argmin_M ||M T − I||`` over orthogonal M, where the
columns of T are target-language word vectors and the columns of I the vectors
of their source-language translations. M maps the *target* language into the
*source* language's space, acting on column vectors: ``M t ≈ s``.

With row matrices (one word per row) ``X`` (target, ``(n, d_t)``) and ``Y``
(source, ``(n, d_s)``) this is ``W = argmin ||X W − Y||_F`` with ``M = Wᵀ``. If
``Xᵀ Y = U Σ Vᵀ`` then ``W = U Vᵀ`` (Schönemann 1966), so ``M = V Uᵀ``.

``M`` has the shape of a bias-free ``torch.nn.Linear(d_t, d_s).weight``, which
computes ``x Mᵀ``: the matrix drops into a model unchanged.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import orthogonal_procrustes

from polyvse.errors import InputError


def as_matrix(array: ArrayLike, where: str) -> np.ndarray:
    """``array`` as a finite float64 2-D matrix, or an :class:`InputError` naming ``where``."""
    matrix = np.asarray(array, dtype=np.float64)
    if matrix.ndim != 2:
        raise InputError(where, f"expected a 2-D matrix (rows are words), got shape {matrix.shape}")
    if matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise InputError(where, f"empty matrix of shape {matrix.shape}")
    if not np.isfinite(matrix).all():
        raise InputError(where, "contains NaN or infinite values")
    return matrix


def check_pairs(target: ArrayLike, source: ArrayLike, where: str) -> tuple[np.ndarray, np.ndarray]:
    """Validate paired word vectors: same number of rows, finite values."""
    x = as_matrix(target, f"{where}(target)")
    y = as_matrix(source, f"{where}(source)")
    if x.shape[0] != y.shape[0]:
        raise InputError(
            where, f"target has {x.shape[0]} rows but source has {y.shape[0]}: rows must be translation pairs"
        )
    return x, y


def normalize_vectors(vectors: ArrayLike, center: bool = False) -> np.ndarray:
    """Unit-length rows; with ``center``, unit length → subtract the mean → unit length.

    RCSLS (Joulin et al. 2018 §4) works on ℓ2-normalised (optionally centred)
    vectors, so that the inner products in its objective are cosines.
    ``(V, d) -> (V, d)``.
    """
    x = as_matrix(vectors, "normalize_vectors(vectors)")

    def unit(m: np.ndarray) -> np.ndarray:
        return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)

    x = unit(x)
    if center:
        x = unit(x - x.mean(axis=0, keepdims=True))
    return x


def procrustes(target: ArrayLike, source: ArrayLike) -> np.ndarray:
    """The orthogonal M with ``M t_i ≈ s_i`` in least squares (poster §2, "SVD").

    target: ``(n, d_t)`` target-language vectors; source: ``(n, d_s)`` vectors of
    their translations, row i paired with row i. Returns M ``(d_s, d_t)``;
    orthogonal when ``d_s == d_t``, otherwise with orthonormal rows or columns
    (whichever the shape allows).
    """
    x, y = check_pairs(target, source, "procrustes")
    if x.shape[1] == y.shape[1]:
        return orthogonal_procrustes(x, y)[0].T  # W = argmin ||X W − Y||_F, W orthogonal
    # scipy asks for one dimension; across two, W = U Vᵀ keeps orthonormal rows or columns
    u, _, vt = np.linalg.svd(x.T @ y, full_matrices=False)  # Xᵀ Y = U Σ Vᵀ
    return (u @ vt).T
