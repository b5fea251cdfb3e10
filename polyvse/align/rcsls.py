"""RCSLS refinement of the Translator matrix M (Translator poster §2, "RCSLS";
Joulin et al. 2018, "Loss in translation", eq. 5).

With dictionary pairs ``(a_i, b_i)`` (a: target-language vector, b: its
source-language translation) the poster minimises

    f(M) = 1/n Σ_i [ −2 a_iᵀ Mᵀ b_i + r(M a_i, B) + r(b_i, M A) ],
    r(x, Y) = 1/k Σ_{y ∈ kNN(x, Y)} xᵀ y,

the relaxed CSLS loss: pull each mapped word towards its translation, push it
away from its k nearest source words, and push each source word away from its k
nearest mapped target words. ``B`` and ``A`` are the candidate sets of the
neighbour searches: the dictionary's own words by default, or whole
vocabularies (Joulin et al. use the 200k most frequent words). As in Joulin et
al., the written ``r(b_i, A)`` searches the *mapped* target words ``M A``.

Optimisation, as the poster and Joulin et al. describe it: full-batch gradient
steps on M; when a step makes the objective worse, M is restored and the step
size halved. A step is accepted only if it does not increase ``f``, so the
objective this module reports never increases.

The poster imposes no constraint on M. Joulin et al. offer a convex relaxation
of orthogonality (singular values clipped to ≤ 1, their ``spectral`` model,
the default here, see :func:`rcsls_refine`); ``constraint="orthogonal"``
projects onto orthogonal matrices instead and ``"none"`` is the literal poster
objective. The projection is applied to the candidate before the acceptance
test, so the no-increase guarantee holds for every choice.

Shapes: M is ``(d_s, d_t)`` (poster convention, ``M t ≈ s``), see
:mod:`polyvse.align.procrustes`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from polyvse.align.procrustes import as_matrix, check_pairs, procrustes
from polyvse.errors import InputError

CONSTRAINTS: tuple[str, ...] = ("none", "spectral", "orthogonal")


def knn_indices(queries: np.ndarray, candidates: np.ndarray, k: int, chunk: int = 2048) -> np.ndarray:
    """Rows of ``candidates`` with the k largest inner products with each query.

    queries ``(n, d)``, candidates ``(V, d)`` → ``(n, k)`` (unordered within a row).
    Nearest = largest inner product, the similarity r(·,·) itself uses; queries
    are processed in chunks so that memory stays ``O(chunk · V)``.
    """
    top = np.empty((len(queries), k), dtype=np.int64)
    for lo in range(0, len(queries), chunk):
        sim = queries[lo : lo + chunk] @ candidates.T
        top[lo : lo + chunk] = np.argpartition(sim, -k, axis=1)[:, -k:]
    return top


def _check_setup(
    target: ArrayLike,
    source: ArrayLike,
    k: int,
    target_vocab: ArrayLike | None,
    source_vocab: ArrayLike | None,
    where: str,
) -> tuple[np.ndarray, ...]:
    a, b = check_pairs(target, source, where)
    za = a if target_vocab is None else as_matrix(target_vocab, f"{where}(target_vocab)")
    zb = b if source_vocab is None else as_matrix(source_vocab, f"{where}(source_vocab)")
    if za.shape[1] != a.shape[1] or zb.shape[1] != b.shape[1]:
        raise InputError(
            where,
            f"vocabulary dimensions {za.shape[1]}/{zb.shape[1]} differ from the "
            f"dictionary vectors' {a.shape[1]}/{b.shape[1]} (target/source)",
        )
    if not 1 <= k <= min(len(za), len(zb)):
        raise InputError(
            where,
            f"k = {k} nearest neighbours, but the candidate sets have {len(za)} target and {len(zb)} source words",
        )
    return a, b, za, zb


def _objective_and_gradient(
    m: np.ndarray, a: np.ndarray, b: np.ndarray, za: np.ndarray, zb: np.ndarray, k: int, chunk: int
) -> tuple[float, np.ndarray]:
    """f(M) and its (sub)gradient ``(d_s, d_t)``.

    Each term is linear in M once the neighbour sets are fixed, and the sets are
    piecewise constant in M, so (away from ties) ∂f/∂M is
    ``1/n [−2 Σ b_i a_iᵀ + Σ ȳ_i a_iᵀ + Σ b_i āᵢᵀ]`` with ȳ_i the mean of M a_i's
    source neighbours and ā_i the mean of the target words whose images are b_i's
    neighbours. f is convex (a sum of top-k maxima of linear functions).
    """
    n = len(a)
    mapped = a @ m.T  # (n, d_s): M a_i
    nn_b = knn_indices(mapped, zb, k, chunk)  # kNN(M a_i, B)
    nn_a = knn_indices(b, za @ m.T, k, chunk)  # kNN(b_i, M A)
    y_bar = zb[nn_b].mean(axis=1)  # (n, d_s)
    a_bar = za[nn_a].mean(axis=1)  # (n, d_t)
    # b_iᵀ M a_i, r(M a_i, B) = (M a_i)ᵀ ȳ_i, r(b_i, M A) = b_iᵀ M ā_i
    value = (
        -2.0 * np.einsum("ij,ij->", mapped, b)
        + np.einsum("ij,ij->", mapped, y_bar)
        + np.einsum("ij,ij->", b, a_bar @ m.T)
    ) / n
    grad = (-2.0 * b.T @ a + y_bar.T @ a + b.T @ a_bar) / n
    return float(value), grad


def rcsls_objective(
    m: ArrayLike,
    target: ArrayLike,
    source: ArrayLike,
    *,
    k: int = 10,
    target_vocab: ArrayLike | None = None,
    source_vocab: ArrayLike | None = None,
    chunk: int = 2048,
) -> tuple[float, np.ndarray]:
    """The RCSLS objective f(M) of the poster and its gradient.

    m: ``(d_s, d_t)``; target: ``(n, d_t)`` and source: ``(n, d_s)`` dictionary
    pairs (row i translates row i); target_vocab ``(V_t, d_t)`` and source_vocab
    ``(V_s, d_s)``: neighbour candidates (default: the dictionary's words).
    Returns ``(f, ∂f/∂M)``.
    """
    a, b, za, zb = _check_setup(target, source, k, target_vocab, source_vocab, "rcsls_objective")
    mat = _check_map(m, a.shape[1], b.shape[1], "rcsls_objective(m)")
    return _objective_and_gradient(mat, a, b, za, zb, k, chunk)


def _check_map(m: ArrayLike, d_t: int, d_s: int, where: str) -> np.ndarray:
    mat = as_matrix(m, where)
    if mat.shape != (d_s, d_t):
        raise InputError(where, f"M must be (d_source, d_target) = ({d_s}, {d_t}), got {mat.shape}")
    return mat


def project(m: np.ndarray, constraint: str) -> np.ndarray:
    """Project M onto the constraint set: ``none`` (identity), ``spectral``
    (singular values clipped to ≤ 1, Joulin et al.'s convex relaxation of
    orthogonality) or ``orthogonal`` (all singular values set to 1)."""
    if constraint == "none":
        return m
    u, s, vt = np.linalg.svd(m, full_matrices=False)
    s = np.minimum(s, 1.0) if constraint == "spectral" else np.ones_like(s)
    return (u * s) @ vt


@dataclass(frozen=True)
class RcslsStep:
    """One gradient step: the objective of the M kept after it, the candidate's
    objective, the step size tried, whether the candidate was kept, and the
    largest singular value of the kept M (the unconstrained objective is
    positively homogeneous in M, so its norm can drift)."""

    step: int
    objective: float
    candidate_objective: float
    lr: float
    accepted: bool
    spectral_norm: float


@dataclass(frozen=True)
class RcslsResult:
    """The refined M ``(d_s, d_t)`` and the per-step log (step 0 = the start)."""

    matrix: np.ndarray
    log: list[RcslsStep]

    @property
    def objective(self) -> float:
        return self.log[-1].objective

    def log_frame(self) -> pd.DataFrame:
        """The log as a table ``step, objective, candidate_objective, lr, accepted``."""
        return pd.DataFrame([asdict(s) for s in self.log])


def _spectral_norm(m: np.ndarray) -> float:
    return float(np.linalg.norm(m, 2))


def rcsls_refine(
    target: ArrayLike,
    source: ArrayLike,
    init: ArrayLike | None = None,
    *,
    k: int = 10,
    n_iter: int = 50,
    lr: float = 1.0,
    min_lr: float = 1e-4,
    constraint: str = "spectral",
    target_vocab: ArrayLike | None = None,
    source_vocab: ArrayLike | None = None,
    chunk: int = 2048,
) -> RcslsResult:
    """Refine M by full-batch gradient descent on the RCSLS objective.

    target ``(n, d_t)``, source ``(n, d_s)``: dictionary pairs, normally
    ℓ2-normalised (:func:`polyvse.align.procrustes.normalize_vectors`); init:
    the starting M ``(d_s, d_t)``, Procrustes's solution when omitted (the
    poster's SVD + RCSLS), projected onto the constraint set. Each of at most ``n_iter`` steps tries
    ``M − lr·∇f``; if that raises f the step is rejected, M kept and lr halved.
    Stops early once lr < ``min_lr``. ``k``: neighbours in r(·,·) (poster: 10).

    ``constraint`` defaults to ``spectral``: the poster's objective is
    positively homogeneous in M (f(cM) = c·f(M) for c > 0), so unconstrained
    descent from a point with f < 0 grows ‖M‖ without bound. Retrieval ignores
    the scale, but T2 feeds ``M t`` into a pretrained encoder, which does not.
    Pass ``constraint="none"`` for the literal poster objective.
    """
    where = "rcsls_refine"
    a, b, za, zb = _check_setup(target, source, k, target_vocab, source_vocab, where)
    if constraint not in CONSTRAINTS:
        raise InputError(where, f"constraint {constraint!r} is not one of {', '.join(CONSTRAINTS)}")
    if not (lr > 0 and min_lr > 0 and n_iter >= 0):
        raise InputError(where, f"need lr > 0, min_lr > 0, n_iter >= 0; got {lr}, {min_lr}, {n_iter}")
    m = procrustes(a, b) if init is None else _check_map(init, a.shape[1], b.shape[1], f"{where}(init)")
    m = project(m.copy(), constraint)
    f, grad = _objective_and_gradient(m, a, b, za, zb, k, chunk)
    log = [RcslsStep(0, f, f, 0.0, True, _spectral_norm(m))]
    for step in range(1, n_iter + 1):
        if lr < min_lr:
            break
        candidate = project(m - lr * grad, constraint)
        f_new, grad_new = _objective_and_gradient(candidate, a, b, za, zb, k, chunk)
        accepted = f_new <= f
        tried_lr = lr
        if accepted:
            m, f, grad = candidate, f_new, grad_new
        else:  # worse: keep (restore) M, halve the step
            lr /= 2.0
        log.append(RcslsStep(step, f, f_new, tried_lr, accepted, _spectral_norm(m)))
    return RcslsResult(m, log)
