"""PCA reduction of word vectors (polyvse.text.pca)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from polyvse.errors import InputError
from polyvse.text.pca import PCAProjection, fit_pca


def _vectors(n: int = 60, d: int = 12, rank: int = 4, seed: int = 0) -> np.ndarray:
    """``n`` points near a ``rank``-dimensional subspace of R^d, off the origin."""
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(rng.normal(size=(d, rank)))[0].T  # (rank, d) orthonormal
    scales = np.array([5.0, 3.0, 2.0, 1.0])[:rank]
    coords = rng.normal(size=(n, rank)) * scales
    return (coords @ basis + 3.0 + rng.normal(scale=1e-3, size=(n, d))).astype(np.float32)


def test_reduces_to_the_configured_dimension_and_keeps_most_variance():
    x = _vectors()
    p = fit_pca(x, 4)
    y = p.project(x)
    assert y.shape == (60, 4) and y.dtype == np.float32 and p.n_fitted == 4
    # four directions carry (nearly) all the variance of a rank-4 cloud
    assert p.explained_variance_ratio.sum() > 0.999
    # reduced coordinates are centred and ordered by variance
    np.testing.assert_allclose(y.mean(axis=0), 0, atol=1e-4)
    var = y.var(axis=0)
    assert np.all(np.diff(var) < 0)
    # orthonormal components, mean = the data mean
    np.testing.assert_allclose(p.components @ p.components.T, np.eye(4), atol=1e-6)
    np.testing.assert_allclose(p.mean, x.astype(np.float64).mean(axis=0), atol=1e-6)


def test_matches_a_hand_computed_svd():
    x = _vectors(n=30, d=6, rank=3, seed=1).astype(np.float64)
    centred = x - x.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    p = fit_pca(x, 2)
    # same subspace and coordinates up to the sign of each component
    for k in range(2):
        assert abs(abs(p.components[k] @ vt[k]) - 1) < 1e-6
    np.testing.assert_allclose(np.abs(p.project(x)), np.abs(centred @ vt[:2].T), atol=1e-4)
    np.testing.assert_allclose(p.explained_variance_ratio, (s**2 / (s**2).sum())[:2], rtol=1e-6)


def test_a_new_word_projects_like_the_fitted_ones(tmp_path):
    x = _vectors()
    p = fit_pca(x[:-1], 3)
    fitted = p.project(x[:-1])
    # a word seen later, projected alone, gets (x - mean) @ components.T
    new = p.project(x[-1])
    assert new.shape == (3,)
    np.testing.assert_allclose(new, (x[-1] - p.mean) @ p.components.T, rtol=1e-5)
    # a fitted word projected alone equals its row of the batch projection
    np.testing.assert_allclose(p.project(x[5]), fitted[5], rtol=1e-6)
    # and the saved projection gives the same numbers
    path = tmp_path / "en.pca3.npz"
    p.save(path)
    loaded = PCAProjection.load(path)
    np.testing.assert_array_equal(loaded.project(x[-1]), new)
    assert loaded.n_fitted == 3 and loaded.dim == 3


def test_fit_is_deterministic():
    x = _vectors()
    np.testing.assert_array_equal(fit_pca(x, 3).components, fit_pca(x.copy(), 3).components)


def test_dimension_beyond_the_vocabulary_pads_zero_components_with_a_warning(caplog):
    x = _vectors(n=5, d=12)  # 5 words span at most 4 directions around their mean
    with caplog.at_level(logging.WARNING, logger="polyvse.text.pca"):
        p = fit_pca(x, 8)
    assert "span at most 4" in caplog.text
    assert p.dim == 8 and p.n_fitted == 4
    y = p.project(x)
    assert y.shape == (5, 8)
    assert not y[:, 4:].any() and np.abs(y[:, :4]).max() > 0.1
    assert not p.project(np.ones(12))[4:].any()


def test_bad_inputs_fail_clearly(tmp_path):
    with pytest.raises(ValueError, match="at least two words"):
        fit_pca(np.ones((1, 5)), 2)
    with pytest.raises(ValueError, match="NaN"):
        fit_pca(np.array([[0.0, 1.0], [np.nan, 2.0], [1.0, 1.0]]), 1)
    p = fit_pca(_vectors(), 2)
    with pytest.raises(ValueError, match="fitted on 12-D"):
        p.project(np.ones((3, 5)))
    bad = tmp_path / "x.npz"
    np.savez(bad, mean=np.zeros(3))
    with pytest.raises(InputError, match="missing components"):
        PCAProjection.load(bad)
