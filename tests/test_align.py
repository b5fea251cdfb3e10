"""Translator's language transformation: Procrustes, RCSLS, dictionary induction."""

from __future__ import annotations

import numpy as np
import pytest

from polyvse.align.induction import induction_precision, translation_pairs
from polyvse.align.procrustes import normalize_vectors, procrustes
from polyvse.align.rcsls import rcsls_objective, rcsls_refine
from polyvse.errors import InputError


def random_orthogonal(d: int, rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(d, d)))
    return q * np.sign(np.diag(r))


def heteroscedastic_pairs(seed: int, vocab: int = 600, d: int = 16, low: float = 0.2, high: float = 2.0):
    """Target words are a rotation of their source words plus language-specific
    noise that is small on half of the target directions and large on the other
    half: an orthogonal map must carry the noisy directions along, a refined
    (non-orthogonal) map can shrink them."""
    rng = np.random.default_rng(seed)
    source = normalize_vectors(rng.normal(size=(vocab, d)))
    rotation = random_orthogonal(d, rng)
    noise_sd = np.r_[np.full(d // 2, low), np.full(d - d // 2, high)] / np.sqrt(d)
    target = normalize_vectors(source @ rotation.T + rng.normal(size=(vocab, d)) * noise_sd)
    order = rng.permutation(vocab)
    return target, source, order[: vocab // 2], order[vocab // 2 :]


# --- Procrustes ---------------------------------------------------------------


def test_procrustes_recovers_a_known_rotation_exactly():
    rng = np.random.default_rng(0)
    m_true = random_orthogonal(12, rng)
    target = rng.normal(size=(40, 12))
    source = target @ m_true.T  # M t = s, noiseless
    m = procrustes(target, source)
    np.testing.assert_allclose(m, m_true, atol=1e-5)
    np.testing.assert_allclose(target @ m.T, source, atol=1e-5)


def test_procrustes_beats_every_nearby_orthogonal_matrix_on_noisy_pairs():
    rng = np.random.default_rng(1)
    target = rng.normal(size=(60, 8))
    source = target @ random_orthogonal(8, rng).T + 0.3 * rng.normal(size=(60, 8))
    m = procrustes(target, source)
    np.testing.assert_allclose(m @ m.T, np.eye(8), atol=1e-10)
    best = np.linalg.norm(target @ m.T - source)
    for _ in range(20):  # rotate M slightly: exp of a small skew-symmetric matrix
        a = 0.05 * rng.normal(size=(8, 8))
        u, _, vt = np.linalg.svd(np.eye(8) + (a - a.T))
        perturbed = (u @ vt) @ m
        assert np.linalg.norm(target @ perturbed.T - source) > best


def test_procrustes_rectangular_map_has_orthonormal_rows():
    rng = np.random.default_rng(2)
    m = procrustes(rng.normal(size=(30, 6)), rng.normal(size=(30, 4)))
    assert m.shape == (4, 6)
    np.testing.assert_allclose(m @ m.T, np.eye(4), atol=1e-10)


def test_procrustes_rejects_unpaired_rows():
    with pytest.raises(InputError, match="rows must be translation pairs"):
        procrustes(np.ones((5, 3)), np.ones((4, 3)))
    with pytest.raises(InputError, match="NaN"):
        procrustes(np.full((5, 3), np.nan), np.ones((5, 3)))


def test_normalize_vectors_centres_then_renormalises():
    x = normalize_vectors(np.array([[3.0, 4.0], [1.0, 0.0], [0.0, 2.0]]), center=True)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0)
    unit = np.array([[0.6, 0.8], [1.0, 0.0], [0.0, 1.0]])
    centred = unit - unit.mean(axis=0)
    np.testing.assert_allclose(x, centred / np.linalg.norm(centred, axis=1, keepdims=True))


# --- RCSLS ------------------------------------------------------------------


def rcsls_by_the_formula(m, a, b, za, zb, k):
    """The poster's objective term by term, with explicit sorting."""
    total = 0.0
    for i in range(len(a)):
        ma = m @ a[i]
        r1 = np.sort(zb @ ma)[-k:].mean()  # r(M a_i, B)
        r2 = np.sort((za @ m.T) @ b[i])[-k:].mean()  # r(b_i, M A)
        total += -2.0 * a[i] @ m.T @ b[i] + r1 + r2
    return total / len(a)


def test_rcsls_objective_matches_the_formula():
    rng = np.random.default_rng(3)
    a, b = normalize_vectors(rng.normal(size=(7, 5))), normalize_vectors(rng.normal(size=(7, 5)))
    za, zb = normalize_vectors(rng.normal(size=(20, 5))), normalize_vectors(rng.normal(size=(25, 5)))
    m = rng.normal(size=(5, 5))
    f, _ = rcsls_objective(m, a, b, k=3, target_vocab=za, source_vocab=zb)
    assert f == pytest.approx(rcsls_by_the_formula(m, a, b, za, zb, 3), rel=1e-12)
    # without vocabularies the neighbours are searched among the dictionary words
    f_dict, _ = rcsls_objective(m, a, b, k=3)
    assert f_dict == pytest.approx(rcsls_by_the_formula(m, a, b, a, b, 3), rel=1e-12)


def test_rcsls_gradient_matches_finite_differences():
    rng = np.random.default_rng(4)
    a, b = normalize_vectors(rng.normal(size=(9, 4))), normalize_vectors(rng.normal(size=(9, 3)))
    za, zb = normalize_vectors(rng.normal(size=(15, 4))), normalize_vectors(rng.normal(size=(12, 3)))
    m = rng.normal(size=(3, 4))
    _, grad = rcsls_objective(m, a, b, k=2, target_vocab=za, source_vocab=zb)
    eps = 1e-6
    numeric = np.zeros_like(m)
    for idx in np.ndindex(*m.shape):
        step = np.zeros_like(m)
        step[idx] = eps
        hi = rcsls_by_the_formula(m + step, a, b, za, zb, 2)
        lo = rcsls_by_the_formula(m - step, a, b, za, zb, 2)
        numeric[idx] = (hi - lo) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, atol=1e-6)


@pytest.mark.parametrize("constraint", ["none", "spectral", "orthogonal"])
def test_rcsls_step_never_increases_the_reported_objective(constraint):
    target, source, train, _ = heteroscedastic_pairs(5, vocab=200, d=8)
    # a huge step size forces overshoots, so the restore-and-halve path runs
    result = rcsls_refine(
        target[train],
        source[train],
        k=10,
        lr=50.0,
        n_iter=40,
        constraint=constraint,
        target_vocab=target,
        source_vocab=source,
    )
    objectives = np.array([s.objective for s in result.log])
    assert np.all(np.diff(objectives) <= 0.0)
    rejected = [s for s in result.log if not s.accepted]
    assert rejected, "the overshooting step size should have been rejected at least once"
    for before, step in zip(result.log, result.log[1:]):
        if not step.accepted:
            assert step.candidate_objective > before.objective
            assert step.objective == before.objective  # M restored
    for prev, nxt in zip(result.log[1:], result.log[2:]):  # halved after a rejection only
        assert nxt.lr == (prev.lr / 2 if not prev.accepted else prev.lr)
    # the reported value is the objective of the matrix returned
    f_final, _ = rcsls_objective(
        result.matrix, target[train], source[train], k=10, target_vocab=target, source_vocab=source
    )
    assert f_final == pytest.approx(result.objective, rel=1e-12)
    assert result.objective < objectives[0]
    frame = result.log_frame()
    assert list(frame.columns) == ["step", "objective", "candidate_objective", "lr", "accepted", "spectral_norm"]


def test_rcsls_constraints_bound_the_norm_of_m():
    target, source, train, _ = heteroscedastic_pairs(6, vocab=200, d=8)
    spectral = rcsls_refine(target[train], source[train], n_iter=30, constraint="spectral")
    assert max(s.spectral_norm for s in spectral.log) <= 1.0 + 1e-9
    orthogonal = rcsls_refine(target[train], source[train], n_iter=30, constraint="orthogonal")
    np.testing.assert_allclose(orthogonal.matrix @ orthogonal.matrix.T, np.eye(8), atol=1e-9)
    # the literal objective is positively homogeneous: its descent inflates M
    free = rcsls_refine(target[train], source[train], n_iter=30, constraint="none")
    assert free.log[-1].spectral_norm > 1.2


def test_rcsls_improves_precision_over_procrustes_on_a_noisy_mapping():
    target, source, train, test = heteroscedastic_pairs(7)
    held_out = np.stack([test, test], axis=1)
    m0 = procrustes(target[train], source[train])
    refined = rcsls_refine(target[train], source[train], m0, target_vocab=target, source_vocab=source)
    before = induction_precision(m0, target, source, held_out)
    after = induction_precision(refined.matrix, target, source, held_out)
    assert after.csls >= before.csls + 10.0
    assert after.nn >= before.nn + 10.0


def test_rcsls_rejects_bad_arguments():
    x = np.eye(4)
    with pytest.raises(InputError, match="k = 10"):
        rcsls_refine(x, x, k=10)
    with pytest.raises(InputError, match="constraint"):
        rcsls_refine(x, x, k=2, constraint="unit")
    with pytest.raises(InputError, match=r"\(4, 4\)"):
        rcsls_refine(x, x, np.eye(3), k=2)


# --- dictionary induction -------------------------------------------------------


def angle(deg: float) -> np.ndarray:
    return np.array([np.cos(np.radians(deg)), np.sin(np.radians(deg))])


def test_csls_fixes_a_hub_that_nearest_neighbour_picks():
    # target words t1 (0°), t2 (20°); source words: hub (20°), true translation of t1 (−25°)
    target = np.stack([angle(0), angle(20)])
    source = np.stack([angle(20), angle(-25)])
    pairs = np.array([[0, 1], [1, 0]])
    result = induction_precision(np.eye(2), target, source, pairs, k=1)
    # NN: cos(t1, hub) = .940 > cos(t1, true) = .906 → t1 wrong, t2 right.
    assert result.nn == pytest.approx(50.0)
    # CSLS, k = 1: r_T(hub) = 1, r_T(true) = .906, so for t1
    # 2·.940 − 1 = .879 < 2·.906 − .906 = .906 → correct; t2 stays correct.
    assert result.csls == pytest.approx(100.0)
    assert result.n_queries == 2


def test_induction_counts_any_gold_translation_and_maps_with_m():
    rng = np.random.default_rng(8)
    source = normalize_vectors(rng.normal(size=(30, 6)))
    m = random_orthogonal(6, rng)
    target = source[:10] @ m  # M t = s exactly for the first 10 source words
    # query 0 lists a wrong translation first and the right one second; query 1 only a wrong one
    pairs = np.array([[0, 17], [0, 0], [1, 5]] + [[i, i] for i in range(2, 10)])
    result = induction_precision(m, target, source, pairs, k=3)
    assert result.n_queries == 10
    assert result.nn == pytest.approx(90.0) and result.csls == pytest.approx(90.0)
    assert induction_precision(np.eye(6), target, source, pairs, k=3).nn < 50.0


def test_translation_pairs_drops_words_without_vectors():
    pairs = translation_pairs(
        [("chat", "Katze"), ("chien", "Hund"), ("oiseau", "Vogel"), ("chat", "Katze")],
        ["chien", "chat"],
        {"Hund": 0, "Katze": 1},
    )
    np.testing.assert_array_equal(pairs, [[1, 1], [0, 0]])
    assert translation_pairs([("x", "y")], ["a"], ["b"]).shape == (0, 2)
    with pytest.raises(InputError, match="non-empty"):
        induction_precision(np.eye(2), np.eye(2), np.eye(2), np.zeros((0, 2), dtype=int), k=1)
