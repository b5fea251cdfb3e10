"""The vector index (polyvse.vector_index): exact scores of approximate candidates, additions without a
rebuild, and a kill that leaves the index as it was."""

import json

import numpy as np
import pytest

from polyvse.errors import InputError
from polyvse.vector_index import IndexSettings, VectorIndex, exact_top_k


def clustered(n: int, dim: int = 32, clusters: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors around ``clusters`` centres (as embeddings of images of a few hundred kinds), and 100
    queries drawn around the same centres."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim)).astype(np.float32)
    x = centres[rng.integers(0, clusters, n)] + 0.4 * rng.standard_normal((n, dim)).astype(np.float32)
    q = centres[rng.integers(0, clusters, 100)] + 0.4 * rng.standard_normal((100, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True), q


def recall(found: np.ndarray, exact: np.ndarray) -> float:
    return float(np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(found, exact)]))


def test_exact_top_k_by_hand_with_ties_to_the_lower_row():
    vectors = np.array([[1, 0], [0, 1], [1, 0], [0.5, 0.5]], dtype=np.float32)
    scores, rows = exact_top_k(vectors, np.array([[1, 0.2]], dtype=np.float32), 3)
    assert rows.tolist() == [[0, 2, 3]]  # rows 0 and 2 tie at 1.0: the lower first
    assert np.allclose(scores, [[1.0, 1.0, 0.6]])
    assert exact_top_k(vectors, np.ones((2, 2), dtype=np.float32), 10)[1].shape == (2, 4)  # k capped at N


def test_the_index_finds_the_exact_neighbours_and_returns_their_exact_scores(tmp_path):
    x, q = clustered(30_000)
    index = VectorIndex.build(x, tmp_path / "ix")
    assert index.meta["cells"] == int(4 * np.sqrt(30_000))
    scores, rows = index.search(q, 10)
    exact_scores, exact_rows = exact_top_k(x, q, 10)
    assert recall(rows, exact_rows) >= 0.95
    assert np.allclose(scores, np.einsum("qd,qkd->qk", q, x[rows]), atol=1e-5)  # the model's own scores
    assert (np.diff(scores, axis=1) <= 0).all()
    same = rows == exact_rows
    assert np.allclose(scores[same], exact_scores[same], atol=1e-5)


def test_probing_one_cell_of_many_misses_neighbours_so_the_test_above_can_fail(tmp_path):
    x, q = clustered(30_000)
    index = VectorIndex.build(x, tmp_path / "ix", IndexSettings(cells=600, probe=1, rerank=10))
    assert recall(index.search(q, 10)[1], exact_top_k(x, q, 10)[1]) < 0.95


def test_added_vectors_join_the_trained_cells_without_a_rebuild(tmp_path):
    x, q = clustered(12_000)
    index = VectorIndex.build(x[:10_000], tmp_path / "ix")
    centroids = index.ivf.quantizer.reconstruct_n(0, index.meta["cells"]).copy()
    index.add(x[10_000:])
    again = VectorIndex.open(tmp_path / "ix")
    assert len(again) == 12_000 and again.meta["chunks"] == ["chunk_000.npy", "chunk_001.npy"]
    assert np.array_equal(again.ivf.quantizer.reconstruct_n(0, again.meta["cells"]), centroids)
    assert np.array_equal(again.vectors(np.array([3, 10_005])), x[[3, 10_005]])
    scores, rows = again.search(x[10_005:10_006], 1)
    assert rows[0, 0] == 10_005 and scores[0, 0] == pytest.approx(1.0, abs=1e-5)  # an added vector finds itself
    assert recall(again.search(q, 10)[1], exact_top_k(x, q, 10)[1]) >= 0.95


def test_a_kill_before_the_meta_is_written_leaves_the_index_as_it_was(tmp_path, monkeypatch):
    import polyvse.vector_index as vi

    x, _ = clustered(3_000)
    index = VectorIndex.build(x[:2_000], tmp_path / "ix")

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(vi, "write_text", killed)  # the chunk and the inverted file are written, the meta is not
    with pytest.raises(KeyboardInterrupt):
        index.add(x[2_000:])
    monkeypatch.undo()
    again = VectorIndex.open(tmp_path / "ix")
    assert len(again) == 2_000 and again.ivf.ntotal == 2_000
    again.add(x[2_000:])  # the next run writes the same names again
    assert len(VectorIndex.open(tmp_path / "ix")) == 3_000
    assert sorted(p.name for p in (tmp_path / "ix").glob("ivf_*.faiss")) == ["ivf_001.faiss"]


def test_a_missing_or_foreign_index_is_refused_by_name(tmp_path):
    with pytest.raises(InputError, match="no vector index here"):
        VectorIndex.open(tmp_path)
    x, _ = clustered(500)
    VectorIndex.build(x, tmp_path / "ix")
    meta = json.loads((tmp_path / "ix" / "meta.json").read_text())
    (tmp_path / "ix" / "meta.json").write_text(json.dumps({**meta, "format": 99}))
    with pytest.raises(InputError, match="format 99"):
        VectorIndex.open(tmp_path / "ix")
    with pytest.raises(ValueError, match="64-D"):
        VectorIndex.build(x, tmp_path / "other").add(np.zeros((2, 64), dtype=np.float32))


def test_an_image_collection_answers_by_row_the_same_exactly_and_through_its_index(tmp_path):
    import torch

    from polyvse.query import ImageCollection, Index

    x, q = clustered(5_000, dim=16, clusters=50)
    names = [f"img{i:05d}.png" for i in range(len(x))]
    paths = [str(tmp_path / n) for n in names]
    exact = ImageCollection.of(Index(ids=names, embeddings=torch.from_numpy(x), paths=paths, texts=[""] * len(x)))
    indexed = ImageCollection(names=names, paths=paths, indexed=VectorIndex.build(x, tmp_path / "ix"))
    for query in torch.from_numpy(q[:10]):
        want = exact.search(query, 5)
        assert [r for r, _ in want] == exact_top_k(x, query.numpy()[None], 5)[1][0].tolist()
        got = indexed.search(query, 5)
        assert [r for r, _ in got] == [r for r, _ in want]
        assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
    assert torch.equal(exact.embedding(7), torch.from_numpy(x[7]))
    assert np.allclose(indexed.embedding(7).numpy(), x[7])
