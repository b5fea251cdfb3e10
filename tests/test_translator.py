"""Translator inside VSE: the FS / T1 / T2 initialisation protocols (Translator poster §3)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from polyvse.align.procrustes import procrustes
from polyvse.errors import InputError
from polyvse.losses.multilingual_ranking import image_sentence_loss
from polyvse.models.translator import build_source_model, build_translator_model

D_SOURCE, D_TARGET, IMAGE_DIM = 6, 6, 10


def vectors(seed: int, vocab: int = 15, d: int = D_SOURCE) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(vocab, d))
    v[0] = 0.0  # padding row
    return v


def source_model():
    torch.manual_seed(0)
    return build_source_model(vectors(0), IMAGE_DIM, gru_hidden=8, joint_dim=5, init_std=0.3).eval()


def rotation(d: int, seed: int) -> np.ndarray:
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(d, d)))
    return q


TOKENS = torch.tensor([[1, 4, 7, 2], [3, 3, 9, 0], [14, 0, 0, 0]])
LENGTHS = torch.tensor([4, 3, 1])


def test_t2_with_the_exact_svd_matrix_reproduces_the_source_model():
    src = source_model()
    q = rotation(D_SOURCE, 1)
    target = vectors(0) @ q  # target word i is a rotation of source word i: Q t_i = s_i
    m = procrustes(target[1:], vectors(0)[1:])  # SVD recovers Q from the dictionary
    np.testing.assert_allclose(m, q, atol=1e-8)
    t2 = build_translator_model("T2", target, source_model=src, translator_init=m).eval()
    torch.testing.assert_close(
        t2.embed_sentences(TOKENS, LENGTHS), src.embed_sentences(TOKENS, LENGTHS), atol=1e-5, rtol=0
    )
    features = torch.randn(2, IMAGE_DIM)
    torch.testing.assert_close(t2.embed_images(features), src.embed_images(features))
    torch.testing.assert_close(t2.translator_matrix.detach(), torch.as_tensor(m, dtype=torch.float32))


def test_t1_copies_the_source_encoder_and_starts_m_at_random():
    src = source_model()
    torch.manual_seed(1)
    t1 = build_translator_model("T1", vectors(5), source_model=src)
    for (name, p), q in zip(t1.text.encoder.named_parameters(), src.text.encoder.parameters()):
        assert torch.equal(p, q), name
        assert p.data_ptr() != q.data_ptr()  # a copy, not shared
    m = t1.translator_matrix.detach().clone()
    torch.testing.assert_close(m @ m.T, torch.eye(D_SOURCE), atol=1e-5, rtol=0)  # random orthogonal
    # training T1 leaves the source model untouched
    before = [p.clone() for p in src.parameters()]
    opt = torch.optim.SGD([p for p in t1.parameters() if p.requires_grad], lr=0.1)
    loss = image_sentence_loss(
        t1.embed_images(torch.randn(3, IMAGE_DIM)), {"fr": t1.embed_sentences(TOKENS, LENGTHS)}, contrastive="in_batch"
    )
    loss.backward()
    assert t1.translator_matrix.grad is not None and t1.text.embed.weight.grad is None  # M trains, vectors frozen
    opt.step()
    assert all(torch.equal(a, b) for a, b in zip(before, src.parameters()))
    assert not torch.equal(t1.translator_matrix.detach(), m)


def test_fs_starts_from_scratch_without_a_translator():
    src = source_model()
    fs = build_translator_model("FS", vectors(5, d=4), source_model=src)
    assert fs.translator_matrix is None
    assert fs.text.encoder.gru.input_size == 4  # reads the target vectors directly
    assert fs.text.encoder.gru.hidden_size == 8 and fs.embed_images(torch.randn(1, IMAGE_DIM)).shape == (1, 5)
    alone = build_translator_model(
        "FS", vectors(5, d=4), image_dim=IMAGE_DIM, gru_hidden=7, joint_dim=3, image_branch="random"
    )
    assert alone.embed_sentences(TOKENS, LENGTHS).shape == (3, 3)
    with pytest.raises(InputError, match="image_branch 'source' copies the source model's image branch"):
        build_translator_model("FS", vectors(5, d=4), image_dim=IMAGE_DIM)


def all_protocols(image_branch: str, image_seed: int = 0) -> dict:
    src = source_model()
    target = vectors(5)
    torch.manual_seed(123)  # what the protocols draw for their text side differs; the image branch must not
    return {
        p: build_translator_model(
            p,
            target,
            source_model=src,
            image_branch=image_branch,
            image_seed=image_seed,
            translator_init=np.eye(D_SOURCE) if p == "T2" else None,
        )
        for p in ("FS", "T1", "T2")
    }, src


@pytest.mark.parametrize("image_branch", ["source", "random"])
def test_every_protocol_starts_from_the_same_image_branch(image_branch):
    models, src = all_protocols(image_branch)
    weights = {p: m.image.state_dict() for p, m in models.items()}
    for p in ("T1", "T2"):
        assert weights[p].keys() == weights["FS"].keys()
        for k in weights["FS"]:
            assert torch.equal(weights[p][k], weights["FS"][k]), (p, k)
    features = torch.randn(3, IMAGE_DIM)
    for p in ("T1", "T2"):  # the same map, not only the same tensors
        torch.testing.assert_close(models[p].embed_images(features), models["FS"].embed_images(features))
    assert len({models[p].image.project.weight.data_ptr() for p in models}) == 3  # copies, never shared
    copied = torch.equal(models["FS"].image.project.weight, src.image.project.weight)
    assert copied == (image_branch == "source")
    # the text branches still differ by protocol: FS reads the target vectors without M
    assert models["FS"].translator_matrix is None and models["T1"].translator_matrix is not None


def test_random_image_branch_depends_on_its_seed_only():
    first, _ = all_protocols("random", image_seed=0)
    torch.manual_seed(999)  # another global state: the same image branch
    again, _ = all_protocols("random", image_seed=0)
    other, _ = all_protocols("random", image_seed=1)
    assert torch.equal(first["FS"].image.project.weight, again["T2"].image.project.weight)
    assert not torch.equal(first["FS"].image.project.weight, other["FS"].image.project.weight)
    with pytest.raises(InputError, match="'frozen' is not one of source, random"):
        build_translator_model("FS", vectors(5), source_model=source_model(), image_branch="frozen")


def test_rectangular_translator_maps_target_dimension_to_source_dimension():
    src = source_model()
    t1 = build_translator_model("T1", vectors(6, d=9), source_model=src)
    assert tuple(t1.translator_matrix.shape) == (D_SOURCE, 9)
    assert t1.embed_sentences(TOKENS, LENGTHS).shape == (3, 5)


def test_protocol_arguments_are_checked():
    src = source_model()
    with pytest.raises(InputError, match="source_model"):
        build_translator_model("T1", vectors(5))
    with pytest.raises(InputError, match="translator_init"):
        build_translator_model("T2", vectors(5), source_model=src)
    with pytest.raises(InputError, match=r"\(6, 6\)"):
        build_translator_model("T2", vectors(5), source_model=src, translator_init=np.eye(4))
    with pytest.raises(InputError, match="protocol"):
        build_translator_model("T3", vectors(5), source_model=src)
    with pytest.raises(InputError, match="joint_dim"):
        build_translator_model("T1", vectors(5), source_model=src, joint_dim=64)


def test_parameter_counts():
    src = source_model()
    t2 = build_translator_model("T2", vectors(5), source_model=src, translator_init=np.eye(D_SOURCE))
    train, test = t2.parameter_counts()
    gru = 3 * 8 * (D_SOURCE + 8) + 2 * 3 * 8
    expected = D_SOURCE * D_TARGET + gru + 8 * 5 + IMAGE_DIM * 5  # M, GRU, text map, W_I
    assert train == expected and test == expected  # frozen vectors: neither trained nor counted
