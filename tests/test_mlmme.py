"""MLMME (Calixto et al. 2017): the β-weighted multilingual ranking loss and the model."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from polyvse.errors import InputError
from polyvse.losses.multilingual_ranking import (
    ContrastiveSet,
    image_sentence_loss,
    multilingual_ranking_loss,
    sample_contrastive_indices,
    sentence_sentence_loss,
)
from polyvse.models.mlmme import MLMME, MLMMEConfig, vocabulary_ranges

ALPHA = 0.2


def unit(*rows):
    return torch.nn.functional.normalize(torch.tensor(rows, dtype=torch.float64), dim=-1)


def random_unit(*shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.nn.functional.normalize(torch.randn(*shape, generator=g, dtype=torch.float64), dim=-1)


# --- direct implementations, one hinge at a time -----------------------------------


def vse_in_batch(images, sentences, margin=ALPHA):
    """Kiros et al.'s bidirectional hinge with every other batch item contrastive."""
    total = 0.0
    for b in range(len(images)):
        for r in range(len(images)):
            if r != b:
                total += max(0.0, margin - images[b] @ sentences[b] + images[b] @ sentences[r])
                total += max(0.0, margin - sentences[b] @ images[b] + sentences[b] @ images[r])
    return total


def vse_random(images, sentences, neg_images, neg_sentences, margin=ALPHA):
    total = 0.0
    for b in range(len(images)):
        for r in range(neg_images.shape[1]):
            total += max(0.0, margin - images[b] @ sentences[b] + images[b] @ neg_sentences[b, r])
            total += max(0.0, margin - sentences[b] @ images[b] + sentences[b] @ neg_images[b, r])
    return total


def sentence_pairs_in_batch(sentences, margin=ALPHA):
    langs = list(sentences)
    total = 0.0
    for i, k in enumerate(langs):
        for l in langs[i + 1 :]:
            vk, vl = sentences[k], sentences[l]
            for b in range(len(vk)):
                for r in range(len(vk)):
                    if r != b:
                        total += max(0.0, margin - vk[b] @ vl[b] + vk[b] @ vl[r])
                        total += max(0.0, margin - vl[b] @ vk[b] + vl[b] @ vk[r])
    return total


# --- hand computations --------------------------------------------------------


def tiny_batch():
    images = unit([1.0, 0.0], [0.0, 1.0])
    sentences = {"en": unit([0.6, 0.8], [0.8, 0.6]), "de": unit([1.0, 0.0], [0.6, 0.8])}
    return images, sentences


def test_eq1_by_hand():
    images, sentences = tiny_batch()
    # en: s(d1,v1)=.6 s(d1,v2)=.8 s(d2,v1)=.8 s(d2,v2)=.6 → each of the 4 hinges .2−.6+.8 = .4
    assert image_sentence_loss(images, {"en": sentences["en"]}, contrastive="in_batch").item() == pytest.approx(1.6)
    # de: s(d1,w1)=1 s(d1,w2)=.6 s(d2,w1)=0 s(d2,w2)=.8 → every hinge is negative
    assert image_sentence_loss(images, {"de": sentences["de"]}, contrastive="in_batch").item() == pytest.approx(0.0)
    assert image_sentence_loss(images, sentences, contrastive="in_batch").item() == pytest.approx(1.6)


def test_eq2_by_hand():
    _, sentences = tiny_batch()
    # s(en1,de1)=.6 s(en1,de2)=1 s(en2,de1)=.8 s(en2,de2)=.96
    # en→de: .2−.6+1 = .6, .2−.96+.8 = .04; de→en: .2−.6+.8 = .4, .2−.96+1 = .24
    assert sentence_sentence_loss(sentences, contrastive="in_batch").item() == pytest.approx(1.28)


def test_eq3_by_hand_and_its_terms():
    images, sentences = tiny_batch()
    loss = multilingual_ranking_loss(images, sentences, beta=0.75, contrastive="in_batch")
    assert loss.total.item() == pytest.approx(0.75 * 1.6 + 0.25 * 1.28)
    assert loss.image_sentence.item() == pytest.approx(1.6)
    assert loss.sentence_sentence.item() == pytest.approx(1.28)
    mean = multilingual_ranking_loss(images, sentences, beta=0.75, contrastive="in_batch", reduction="mean")
    assert mean.total.item() == pytest.approx((0.75 * 1.6 + 0.25 * 1.28) / 2)


def test_random_contrastive_terms_by_hand():
    images, sentences = unit([1.0, 0.0]), {"en": unit([0.6, 0.8])}
    negatives = ContrastiveSet(
        images=unit([0.0, 1.0], [0.6, 0.8]).unsqueeze(0), sentences={"en": unit([0.0, 1.0], [1.0, 0.0]).unsqueeze(0)}
    )
    # image anchor: .2−.6+0 → 0, .2−.6+1 = .6; sentence anchor: .2−.6+.8 = .4, .2−.6+1 = .6
    loss = image_sentence_loss(images, sentences, negatives=negatives)
    assert loss.item() == pytest.approx(1.6)


# --- reductions to VSE and to the sentence–sentence term -----------------------------


@pytest.mark.parametrize("langs", [("en",), ("en", "de")])
def test_beta_one_is_vse_in_batch(langs):
    images = random_unit(6, 5, seed=1)
    sentences = {lang: random_unit(6, 5, seed=10 + i) for i, lang in enumerate(langs)}
    loss = multilingual_ranking_loss(images, sentences, beta=1.0, contrastive="in_batch")
    expected = sum(vse_in_batch(images, v) for v in sentences.values())
    assert loss.total.item() == pytest.approx(float(expected), rel=1e-12)
    assert expected > 0  # the batch is not trivially separated


def test_beta_one_is_vse_with_random_contrastive_terms():
    images, en = random_unit(4, 5, seed=2), random_unit(4, 5, seed=3)
    negatives = ContrastiveSet(random_unit(4, 3, 5, seed=4), {"en": random_unit(4, 3, 5, seed=5)})
    loss = multilingual_ranking_loss(images, {"en": en}, beta=1.0, negatives=negatives)
    expected = vse_random(images, en, negatives.images, negatives.sentences["en"])
    assert loss.total.item() == pytest.approx(float(expected), rel=1e-12)


def test_beta_zero_is_the_sentence_sentence_term():
    images = random_unit(5, 4, seed=6)
    sentences = {"en": random_unit(5, 4, seed=7), "de": random_unit(5, 4, seed=8), "fr": random_unit(5, 4, seed=9)}
    loss = multilingual_ranking_loss(images, sentences, beta=0.0, contrastive="in_batch")
    expected = sentence_pairs_in_batch(sentences)
    assert loss.total.item() == pytest.approx(float(expected), rel=1e-12)
    assert loss.image_sentence.item() > 0  # S_I is computed but weighted out


def test_contrastive_set_from_flat_rows_keeps_each_tuples_draws_together():
    images, en = random_unit(3, 4, seed=16), random_unit(3, 4, seed=17)
    pool_images, pool_en = random_unit(10, 4, seed=18), random_unit(10, 4, seed=19)
    draws = sample_contrastive_indices(10, 2, generator=torch.Generator().manual_seed(3))[:3]  # (B=3, R=2)
    flat = draws.reshape(-1)
    negatives = ContrastiveSet.from_rows(pool_images[flat], {"en": pool_en[flat]}, n_contrastive=2)
    torch.testing.assert_close(negatives.images[1, 0], pool_images[draws[1, 0]])
    torch.testing.assert_close(negatives.sentences["en"][2, 1], pool_en[draws[2, 1]])
    expected = vse_random(images, en, pool_images[draws], pool_en[draws])
    assert image_sentence_loss(images, {"en": en}, negatives=negatives).item() == pytest.approx(float(expected))
    with pytest.raises(InputError, match="B × R"):
        ContrastiveSet.from_rows(pool_images[:5], {"en": pool_en[:5]}, n_contrastive=2)


def test_sentence_sentence_random_mode_uses_each_languages_contrastive_sentences():
    en, de = random_unit(3, 4, seed=11), random_unit(3, 4, seed=12)
    neg = {"en": random_unit(3, 2, 4, seed=13), "de": random_unit(3, 2, 4, seed=14)}
    negatives = ContrastiveSet(random_unit(3, 2, 4, seed=15), neg)
    expected = 0.0
    for b in range(3):
        for r in range(2):
            expected += max(0.0, ALPHA - en[b] @ de[b] + en[b] @ neg["de"][b, r])
            expected += max(0.0, ALPHA - de[b] @ en[b] + de[b] @ neg["en"][b, r])
    got = sentence_sentence_loss({"en": en, "de": de}, negatives=negatives)
    assert got.item() == pytest.approx(float(expected), rel=1e-12)
    assert sentence_sentence_loss({"en": en}, negatives=negatives).item() == 0.0  # K = 1: no pairs


def test_rows_of_the_same_image_are_not_contrastive_in_batch():
    images = unit([1.0, 0.0], [1.0, 0.0], [0.0, 1.0])  # rows 0 and 1 show one image
    en = unit([1.0, 0.0], [1.0, 0.0], [0.0, 1.0])
    ids = torch.tensor([7, 7, 9])
    assert image_sentence_loss(images, {"en": en}, contrastive="in_batch", image_ids=ids).item() == 0.0
    # without ids, the twin rows are contrastive and each violates the margin by α
    unmasked = image_sentence_loss(images, {"en": en}, contrastive="in_batch").item()
    assert unmasked == pytest.approx(4 * ALPHA)


def test_loss_rejects_bad_input():
    images, sentences = tiny_batch()
    with pytest.raises(InputError, match="needs the embedded contrastive"):
        multilingual_ranking_loss(images, sentences, beta=0.5)
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        multilingual_ranking_loss(images, sentences, beta=1.5, contrastive="in_batch")
    with pytest.raises(InputError, match="one shape"):
        image_sentence_loss(images, {"en": unit([1.0, 0.0])}, contrastive="in_batch")
    with pytest.raises(InputError, match="when sampling"):
        negatives = ContrastiveSet(images.unsqueeze(1), {k: v.unsqueeze(1) for k, v in sentences.items()})
        multilingual_ranking_loss(images, sentences, beta=0.5, negatives=negatives, image_ids=torch.arange(2))
    with pytest.raises(InputError, match="no contrastive sentences for de"):
        negatives = ContrastiveSet(images.unsqueeze(1), {"en": sentences["en"].unsqueeze(1)})
        multilingual_ranking_loss(images, sentences, beta=0.5, negatives=negatives)


def test_sample_contrastive_indices_excludes_the_same_image():
    groups = torch.tensor([0, 0, 1, 1, 1, 2, 3, 3])
    draws = sample_contrastive_indices(8, 50, generator=torch.Generator().manual_seed(0), group_ids=groups)
    assert draws.shape == (8, 50)
    assert not (groups[draws] == groups.view(-1, 1)).any()
    # every allowed tuple is drawn for tuple 5 (group 2) over 50 draws
    assert set(draws[5].tolist()) == {0, 1, 2, 3, 4, 6, 7}
    again = sample_contrastive_indices(8, 50, generator=torch.Generator().manual_seed(0), group_ids=groups)
    assert torch.equal(draws, again)
    other = sample_contrastive_indices(8, 50, generator=torch.Generator().manual_seed(1), group_ids=groups)
    assert not torch.equal(draws, other)  # a new epoch's seed resamples
    with pytest.raises(InputError, match="another group"):
        sample_contrastive_indices(3, 2, generator=torch.Generator(), group_ids=torch.tensor([4, 4, 4]))


# --- the model --------------------------------------------------------------


def small_model(langs=("en", "de"), dropout=0.0) -> MLMME:
    torch.manual_seed(0)
    config = MLMMEConfig(
        vocab_sizes={lang: 12 for lang in langs}, image_dim=10, word_dim=6, gru_hidden=8, joint_dim=5, dropout=dropout
    )
    return MLMME(config)


def test_paper_sizes_are_the_defaults():
    config = MLMMEConfig(vocab_sizes={"en": 3}, image_dim=4096)
    assert (config.word_dim, config.gru_hidden, config.joint_dim, config.dropout) == (620, 1024, 2048, 0.5)


def test_encoders_share_no_parameters_between_languages():
    model = small_model(("en", "de", "fr"))
    storages = {lang: {p.data_ptr() for p in enc.parameters()} for lang, enc in model.encoders.items()}
    for a in storages:
        for b in storages:
            if a != b:
                assert not storages[a] & storages[b]
    # an English-only loss leaves every German parameter without gradient
    tokens, lengths = torch.tensor([[1, 2, 3]]), torch.tensor([3])
    model.encode("en", tokens, lengths).sum().backward()
    assert all(p.grad is None for p in model.encoders["de"].parameters())
    assert all(p.grad is not None for p in model.encoders["en"].parameters())


def test_last_valid_step_ignores_padding():
    model = small_model().eval()
    alone = model.encode("en", torch.tensor([[3, 5, 7]]), torch.tensor([3]))
    # the same sentence in a batch, its tail filled with real token ids instead of padding
    batch = torch.tensor([[3, 5, 7, 9, 11, 2], [4, 4, 4, 4, 4, 4]])
    together = model.encode("en", batch, torch.tensor([3, 6]))
    torch.testing.assert_close(together[0], alone[0], rtol=0, atol=1e-6)
    # reading the tail would change the vector: the test can fail
    assert not torch.allclose(model.encode("en", batch[:1], torch.tensor([6]))[0], alone[0], atol=1e-3)


def test_outputs_are_unit_vectors_and_similarity_is_the_dot_product():
    model = small_model().eval()
    images = model.embed_images(torch.randn(4, 10))
    sentences = model.encode("de", torch.tensor([[1, 2], [3, 0]]), torch.tensor([2, 1]))
    torch.testing.assert_close(images.norm(dim=1), torch.ones(4))
    torch.testing.assert_close(sentences.norm(dim=1), torch.ones(2))
    assert images.shape == (4, 5) and sentences.shape == (2, 5)


def test_embed_sentences_routes_each_language_to_its_encoder():
    model = small_model().eval()
    tokens = torch.tensor([[1, 2, 3], [4, 5, 0], [6, 0, 0], [7, 8, 9]])
    lengths = torch.tensor([3, 2, 1, 3])
    langs = torch.tensor([1, 0, 1, 0])  # de, en, de, en
    mixed = model.embed_sentences(tokens, lengths, langs)
    torch.testing.assert_close(mixed[[1, 3]], model.encode("en", tokens[[1, 3]], lengths[[1, 3]]))
    torch.testing.assert_close(mixed[[0, 2]], model.encode("de", tokens[[0, 2]], lengths[[0, 2]]))
    with pytest.raises(InputError, match="langs is required"):
        model.embed_sentences(tokens, lengths)


def test_paper_initialisation():
    model = small_model()
    gru = model.encoders["en"].encoder.gru
    for block in gru.weight_hh_l0.detach().chunk(3, dim=0):
        torch.testing.assert_close(block @ block.T, torch.eye(8), atol=1e-5, rtol=0)
    assert torch.count_nonzero(gru.bias_ih_l0) == 0 and torch.count_nonzero(gru.bias_hh_l0) == 0
    assert torch.count_nonzero(model.encoders["en"].embed.weight[0]) == 0  # padding row
    big = MLMME(MLMMEConfig(vocab_sizes={"en": 500}, image_dim=400, word_dim=64, gru_hidden=32, joint_dim=64))
    assert big.image.project.weight.std().item() == pytest.approx(0.01, rel=0.05)


def test_joint_vocabulary_ids_map_to_each_languages_encoder():
    # joint index: 0 pad, en <unk> a b, de <unk> x y z
    itos = [
        ("", "<pad>"),
        ("en", "<unk>"),
        ("en", "a"),
        ("en", "b"),
        ("de", "<unk>"),
        ("de", "x"),
        ("de", "y"),
        ("de", "z"),
    ]
    sizes, offsets = vocabulary_ranges(itos, ["en", "de"])
    assert sizes == {"en": 4, "de": 5} and offsets == {"en": 0, "de": 3}
    vocab = SimpleNamespace(langs=["en", "de"], itos=itos)
    model = MLMME.from_vocabulary(vocab, image_dim=10, word_dim=6, gru_hidden=8, joint_dim=5, dropout=0.0).eval()
    joint = torch.tensor([[5, 7, 0]])
    local = torch.tensor([[2, 4, 0]])
    torch.testing.assert_close(
        model.encode("de", joint, torch.tensor([2])), model.encoders["de"](local, torch.tensor([2]))
    )
    with pytest.raises(InputError, match="outside de's vocabulary"):
        model.encode("de", torch.tensor([[2]]), torch.tensor([1]))  # an English id
    vse = MLMME.from_vocabulary(vocab, image_dim=10, langs=["de"], word_dim=6, gru_hidden=8, joint_dim=5)
    assert vse.languages == ["de"]
    with pytest.raises(InputError, match="not contiguous"):
        vocabulary_ranges(itos[:2] + itos[4:5] + itos[2:4], ["en", "de"])


def test_parameter_counts_leave_out_the_embedding_tables_at_test_time():
    model = small_model()
    train, test = model.parameter_counts()
    assert train == sum(p.numel() for p in model.parameters())
    assert train - test == 2 * 12 * 6


def test_a_few_adam_steps_lower_the_loss():
    torch.manual_seed(0)
    model = MLMME(
        MLMMEConfig(
            vocab_sizes={"en": 20, "de": 20},
            image_dim=16,
            word_dim=8,
            gru_hidden=16,
            joint_dim=8,
            dropout=0.0,
            init_std=0.1,
        )
    )
    g = torch.Generator().manual_seed(1)
    features = torch.randn(8, 16, generator=g)
    en = torch.randint(1, 20, (8, 4), generator=g)
    de = torch.randint(1, 20, (8, 5), generator=g)
    lengths_en, lengths_de = torch.full((8,), 4), torch.full((8,), 5)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(30):
        images, sentences = model(features, {"en": (en, lengths_en), "de": (de, lengths_de)})
        loss = multilingual_ranking_loss(images, sentences, beta=0.5, contrastive="in_batch").total
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
