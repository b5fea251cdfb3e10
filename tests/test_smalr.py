"""SMALR: latent shared vocabulary, HEM / LA, MCLM, CLC and the eq. (4) objective."""

import math

import pytest
import torch
from torch import nn

from polyvse.losses.mclm import MCLMHead, cross_language_pairs, mask_words, mclm_loss
from polyvse.losses.score_triplet import multimodal_triplet_scores
from polyvse.losses.triplet import multimodal_triplet
from polyvse.models.clc import CLCClassifier, clc_average, fit_clc
from polyvse.models.hem import HEM, SMALR, HEMConfig, LanguageAgnostic, frequent_words
from polyvse.models.latent_vocab import LatentAssignment, LatentVocabulary, LatentVocabularyConfig, explore_choice
from polyvse.models.registry import FAMILIES
from polyvse.models.trained import load_model
from polyvse.text.vocab import Vocabulary
from polyvse.train.objectives_smalr import LatentVocabularyObjective, SMALRObjective

COUNTS = {"en": {"a": 5, "red": 4, "dog": 3, "cat": 1}, "de": {"ein": 5, "rot": 2, "hund": 1}}
SMALL = dict(universal_dim=8, gru_hidden=6, joint_dim=5, image_hidden=7, specific_dim=3)


def vocab():
    return Vocabulary.from_counts(COUNTS)  # en <unk>=1 a=2 red=3 dog=4 cat=5, de <unk>=6 ein=7 rot=8 hund=9


def batch():
    return {
        "images": torch.randn(3, 4),
        "tokens": torch.tensor([[2, 3, 4, 0], [7, 8, 0, 0], [3, 2, 5, 4], [9, 7, 0, 0], [2, 2, 0, 0], [9, 0, 0, 0]]),
        "lengths": torch.tensor([3, 2, 4, 2, 2, 1]),
        "lang": torch.tensor([0, 1, 0, 1, 0, 1]),
        "image_of_sentence": torch.tensor([0, 0, 1, 1, 2, 2]),
    }


def unit(*angles):
    return torch.tensor([[math.cos(a), math.sin(a)] for a in angles])


def latent_vocab(seed=0, **kw):
    torch.manual_seed(seed)
    cfg = LatentVocabularyConfig(vocab_size=10, word_dim=3, n_tokens=30, dim=8, scorer_dim=4, **kw)
    return LatentVocabulary(cfg)


def tiny(cls=HEM, k=2, seed=0):
    v = vocab()
    lv = latent_vocab(seed)
    specific = frequent_words(v, COUNTS, k)
    torch.manual_seed(seed)
    return cls.from_vocabulary(v, 4, lv.compact(~specific), specific, torch.randn(len(v), 3), **SMALL), lv


# -- hard assignment with exploration -------------------------------------------------


def test_exploration_p0_is_the_argmax():
    scores = torch.randn(50, 40)
    assert torch.equal(explore_choice(scores, 0.0, 20), scores.argmax(dim=1))


def test_exploration_p1_stays_in_the_top_m():
    g = torch.Generator().manual_seed(0)
    scores = torch.randn(5, 60, generator=g)
    rows = torch.arange(5).repeat(400)
    chosen = explore_choice(scores, 1.0, 20, rows, g)
    top = scores.topk(20, dim=1).indices
    for r in range(5):
        picked = set(chosen[rows == r].tolist())
        assert picked <= set(top[r].tolist())
        assert len(picked) >= 18  # uniform over the 20: nearly all appear in 400 draws


def test_exploration_rate():
    g = torch.Generator().manual_seed(1)
    scores = torch.randn(4, 60, generator=g)
    rows = torch.arange(4).repeat(5000)
    chosen = explore_choice(scores, 0.2, 20, rows, g)
    not_best = (chosen != scores.argmax(dim=1)[rows]).float().mean()
    assert float(not_best) == pytest.approx(0.2 * 19 / 20, abs=0.012)  # the uniform draw may hit the argmax


# -- latent vocabulary pretraining ----------------------------------------------------


def test_latent_sentence_is_the_mean_of_argmax_embeddings():
    lv = latent_vocab().eval()
    tokens, lengths = torch.tensor([[2, 7, 4, 0]]), torch.tensor([3])
    x = lv.word_vectors[[2, 7, 4]] @ lv.query.weight.T + lv.query.bias
    best = (x @ lv.keys.T).argmax(dim=1)
    by_hand = lv.embeddings[best].mean(dim=0)
    assert torch.allclose(lv(tokens, lengths)[0], by_hand, atol=1e-6)
    assert torch.allclose(lv(torch.tensor([[2, 7, 4, 0, 0, 0]]), lengths), lv(tokens, lengths))


def test_straight_through_gradients():
    """Embeddings get the gradient of the hard lookup; the scorer gets the
    gradient of the soft attention Σ π_k e_k."""
    lv = latent_vocab().eval()
    tokens, lengths = torch.tensor([[2, 7, 4], [3, 3, 0]]), torch.tensor([3, 2])
    target = torch.randn(2, 8)
    (lv(tokens, lengths) * target).sum().backward()
    got_keys, got_query, got_emb = lv.keys.grad.clone(), lv.query.weight.grad.clone(), lv.embeddings.grad.clone()

    ref = latent_vocab().eval()
    scores = ref.scores(torch.tensor([2, 7, 4, 3, 3]))
    soft = torch.softmax(scores, dim=1) @ ref.embeddings.detach()  # soft features, embeddings held fixed
    hard = ref.embeddings[scores.argmax(dim=1)]
    per_word = hard + soft - soft.detach()  # scorer via the soft path, embeddings via the hard lookup
    sentences = torch.stack([per_word[:3].mean(0), per_word[3:].mean(0)])
    (sentences * target).sum().backward()
    assert torch.allclose(got_keys, ref.keys.grad, atol=1e-6)
    assert torch.allclose(got_query, ref.query.weight.grad, atol=1e-6)
    assert torch.allclose(got_emb, ref.embeddings.grad, atol=1e-6)
    chosen = set(scores.argmax(dim=1).tolist())
    assert {int(i) for i in got_emb.abs().sum(dim=1).nonzero()} == chosen  # only chosen tokens move


def straight_through_run(
    straight_through: str, explore_m: int, training: bool = True, scorer: str = "dot"
) -> dict[str, torch.Tensor]:
    lv = latent_vocab(explore_m=explore_m, straight_through=straight_through, scorer=scorer)  # seed 0: one init
    lv.train(training)
    lv.generator = torch.Generator().manual_seed(5)
    tokens, lengths = torch.tensor([[2, 7, 4, 9], [3, 3, 1, 0], [5, 6, 8, 2]]), torch.tensor([4, 3, 4])
    out = lv(tokens, lengths)
    (out * torch.linspace(-1, 1, out.numel()).view_as(out)).sum().backward()
    return {"out": out.detach(), "keys": lv.keys.grad, "query": lv.query.weight.grad, "emb": lv.embeddings.grad}


@pytest.mark.parametrize("scorer", ["dot", "cosine"])
def test_top_m_straight_through_is_softmax_when_m_covers_every_token(scorer):
    """top_m renormalises the soft attention over each word's M best tokens: with M = n_tokens it is
    the full softmax, choice (exploration included) and gradients alike."""
    full, top = straight_through_run("softmax", 30, scorer=scorer), straight_through_run("top_m", 30, scorer=scorer)
    for name in full:
        assert torch.allclose(full[name], top[name], atol=1e-5), name


def test_the_cosine_scorer_has_no_common_offset_and_no_norm_to_win_by():
    """The cosine scorer: an FC without bias (a zero, i.e. mean, vector scores every token alike), unit
    queries and keys (scores within ±cosine_scale / temperature, a key's norm changes nothing), where the
    dot scorer lets one key with a large norm win every word."""
    words = torch.arange(1, 10)
    cosine = latent_vocab(scorer="cosine", cosine_scale=20.0, temperature=2.0)
    assert cosine.query.bias is None and latent_vocab().query.bias is not None
    scores = cosine.scores(words)
    assert scores.abs().max() <= 10.0 + 1e-5
    dot = latent_vocab()
    with torch.no_grad():
        for lv in (cosine, dot):
            lv.keys[7] *= 1000.0
    assert torch.allclose(cosine.scores(words), scores, atol=1e-4)
    assert (dot.scores(words).argmax(dim=1) == 7).float().mean() >= 0.5  # a long key wins many words
    with torch.no_grad():
        cosine.word_vectors[3] = 0.0
    assert torch.allclose(cosine.scores(torch.tensor([3])), torch.zeros(1, 30))
    with pytest.raises(ValueError, match="scorer"):
        latent_vocab(scorer="bilinear")


def test_top_m_straight_through_chooses_as_softmax_and_moves_only_the_top_keys():
    full, top = straight_through_run("softmax", 4), straight_through_run("top_m", 4)
    assert torch.allclose(full["out"], top["out"], atol=1e-6)  # same tokens chosen, exploration included
    assert torch.allclose(full["emb"], top["emb"], atol=1e-6)  # the hard lookup's gradient
    assert not torch.allclose(full["keys"], top["keys"], atol=1e-6)  # the soft path differs...
    scores = latent_vocab(explore_m=4).scores(torch.tensor([1, 2, 3, 4, 5, 6, 7, 8, 9]))  # the runs' words, init
    best = set(scores.topk(4, dim=1).indices.flatten().tolist())
    moved = {int(i) for i in top["keys"].abs().sum(dim=1).nonzero()}
    assert moved and moved <= best  # ...and reaches only keys among some word's top 4
    with pytest.raises(ValueError, match="straight_through"):
        latent_vocab(straight_through="sparse")


def test_compact_keeps_used_tokens_and_freezes_the_argmax():
    lv = latent_vocab()
    words = torch.ones(10, dtype=torch.bool)
    words[[3, 7]] = False
    a = lv.compact(words)
    assert a.word_to_token[0] == -1 and a.word_to_token[3] == -1 and a.word_to_token[7] == -1
    ids = torch.tensor([1, 2, 4, 5, 6, 8, 9])
    best = lv.assign(ids)
    assert a.n_tokens == len(set(best.tolist())) < 30  # unused tokens dropped
    assert torch.equal(a.embeddings[a.word_to_token[ids]], lv.embeddings.detach()[best])
    assert torch.equal(a.source_tokens[a.word_to_token[ids]], best)
    again = LatentAssignment.from_dict(a.as_dict())
    assert torch.equal(again.word_to_token, a.word_to_token)


class FixedSentences(nn.Module):
    def __init__(self, sentences):
        super().__init__()
        self.sentences = sentences

    def forward(self, tokens, lengths):
        return self.sentences

    def sentences_and_usage(self, tokens, lengths):
        return self.sentences, torch.full((4,), 0.25)  # an even assignment over four tokens


def test_pretraining_triplet_by_hand():
    s = unit(0.0, 0.3, 0.35, 1.5)  # images: s0, s1 → 0; s2, s3 → 1 (any language)
    b = {"tokens": None, "lengths": None, "image_of_sentence": torch.tensor([0, 0, 1, 1])}
    d = lambda a: 1 - math.cos(a)
    m = 0.05
    hinges = [
        m + d(0.3) - d(0.35),
        m + d(0.3) - d(1.5),  # anchor s0, positive s1
        m + d(0.3) - d(0.05),
        m + d(0.3) - d(1.2),  # anchor s1, positive s0
        m + d(1.15) - d(0.35),
        m + d(1.15) - d(0.05),  # anchor s2, positive s3
        m + d(1.15) - d(1.5),
        m + d(1.15) - d(1.2),
    ]  # anchor s3, positive s2
    expected = sum(max(0.0, h) for h in hinges) / 8
    got = LatentVocabularyObjective()(FixedSentences(s), b)
    assert float(got["loss"]) == pytest.approx(expected, abs=1e-6)


def test_pretraining_learns_the_scorer():
    lv = latent_vocab()
    terms = LatentVocabularyObjective()(lv.train(), batch())
    terms["loss"].backward()
    assert float(terms["loss"].detach()) > 0
    assert lv.query.weight.grad.abs().sum() > 0 and lv.keys.grad.abs().sum() > 0


# -- HEM, LA, SMALR models ------------------------------------------------------------


def test_frequent_words_per_language():
    v = vocab()
    got = frequent_words(v, COUNTS, 2)
    assert {v.itos[i] for i in got.nonzero(as_tuple=True)[0].tolist()} == {
        ("en", "a"),
        ("en", "red"),
        ("de", "ein"),
        ("de", "rot"),
    }


def test_hem_word_features_mix_specific_and_latent_words():
    m, lv = tiny()
    m.eval()
    a_id, dog_id, rot_id = 2, 4, 8
    words = m.word_features(torch.tensor([[a_id, dog_id], [rot_id, 9]]), torch.tensor([0, 1]))
    slot = int(m.specific_of_word[a_id])
    by_hand = m.language_fc[0](m.specific_embeddings.weight[slot])
    assert torch.allclose(words[0, 0], by_hand)
    token = int(m.latent_of_word[dog_id])
    assert m.specific_of_word[dog_id] == -1 and token >= 0
    assert torch.allclose(words[0, 1], m.latent_embeddings.weight[token])
    # initial latent feature = the pretrained embedding of the word's argmax token
    assert torch.allclose(m.latent_embeddings.weight[token], lv.embeddings[lv.assign(torch.tensor([dog_id]))[0]])
    assert torch.allclose(words[1, 0], m.language_fc[1](m.specific_embeddings.weight[int(m.specific_of_word[rot_id])]))


def test_hem_tables_take_sparse_gradients_equal_to_the_dense_ones():
    """lazy_word_tables turns HEM's latent and specific tables sparse; their gradients are
    the dense ones, row for row, and only rows the batch reads appear."""
    from polyvse.optim import lazy_word_tables

    dense, _ = tiny()
    sparse, _ = tiny()
    tables = lazy_word_tables(sparse)
    assert {id(t) for t in tables} >= {id(sparse.latent_embeddings.weight), id(sparse.specific_embeddings.weight)}
    tokens = torch.tensor([[2, 4, 0], [8, 9, 7]])
    langs = torch.tensor([0, 1])
    for m in (dense, sparse):
        m.word_features(tokens, langs).pow(2).sum().backward()
    for name in ("latent_embeddings", "specific_embeddings"):
        d = getattr(dense, name).weight.grad
        s = getattr(sparse, name).weight.grad
        assert s.is_sparse and not d.is_sparse
        assert torch.allclose(s.to_dense(), d, atol=1e-6)
        read = set(s.coalesce().indices()[0].tolist())
        assert read == set(d.abs().sum(dim=1).nonzero(as_tuple=True)[0].tolist())


def test_hem_loads_a_state_dict_with_bare_table_parameters():
    """Models saved when the tables were bare parameters (``latent_embeddings``, not
    ``latent_embeddings.weight``) still load."""
    m, _ = tiny()
    old = {
        (k[: -len(".weight")] if k in ("latent_embeddings.weight", "specific_embeddings.weight") else k): v
        for k, v in m.state_dict().items()
    }
    assert "latent_embeddings" in old and "latent_embeddings.weight" not in old
    fresh, _ = tiny()
    with torch.no_grad():
        for p in fresh.parameters():
            p.add_(1.0)
    fresh.load_state_dict(old)
    for k, v in m.state_dict().items():
        assert torch.equal(fresh.state_dict()[k], v)


def test_hem_from_vocabulary_checks_every_word_is_covered():
    v = vocab()
    lv = latent_vocab()
    specific = frequent_words(v, COUNTS, 2)
    with pytest.raises(ValueError, match="neither a latent token"):
        HEM.from_vocabulary(v, 4, lv.compact(specific), specific, **SMALL)  # rare words not assigned
    with pytest.raises(ValueError, match="n_specific must be 0"):
        LanguageAgnostic(HEMConfig(vocab_size=10, image_dim=4, n_langs=2, n_latent=3, n_specific=2))


def test_parameter_counts_by_hand():
    U, H, J, I, Ih, p, L = 8, 6, 5, 4, 7, 3, 2
    gru = 3 * (H * U + H * H + 2 * H)
    test_time = gru + (H * J + J) + (I * Ih + Ih) + 2 * Ih + (Ih * J + J)
    classifier = U * L + L
    hem, _ = tiny(HEM)
    n_latent, n_specific = hem.config.n_latent, hem.config.n_specific
    assert n_specific == 4
    train_hem = test_time + classifier + n_latent * U + n_specific * p + L * (p * U + U)
    assert hem.parameter_counts() == (train_hem, test_time)
    smalr, _ = tiny(SMALR)
    mclm = (2 * U) * (2 * U) + 2 * U + (2 * J) * (2 * J) + 2 * J
    assert smalr.parameter_counts() == (train_hem + U + mclm, test_time)  # + MASK feature and MCLM heads
    la, lv = tiny(LanguageAgnostic, k=0)
    assert la.config.n_specific == 0 and len(la.language_fc) == 0
    assert la.parameter_counts() == (test_time + classifier + la.config.n_latent * U, test_time)


def test_smalr_masked_encoding_uses_the_mask_feature():
    m, _ = tiny(SMALR)
    m.eval()
    tokens, lengths, langs = torch.tensor([[2, 4, 5]]), torch.tensor([3]), torch.tensor([0])
    mask = torch.tensor([[False, True, False]])
    u_masked, _ = m.encode(tokens, lengths, langs, mask=mask)
    words = m.word_features(tokens, langs)[0]
    by_hand = (words[0] + m.mask_embedding + words[2]) / 3
    assert torch.allclose(u_masked[0], by_hand, atol=1e-6)
    hem, _ = tiny(HEM)
    with pytest.raises(ValueError, match="MASK"):
        hem.encode(tokens, lengths, langs, mask=mask)


def test_smalr_rebuilds_from_its_checkpoint_with_frozen_assignment():
    m, _ = tiny(SMALR)
    m.eval()
    saved = {
        "family": m.family,
        "config": m.config.as_dict(),
        "state_dict": m.state_dict(),
        "vocab": vocab().state_dict(),
    }
    again, _ = load_model(saved)
    b = batch()
    assert type(again) is SMALR and FAMILIES["hem"][1] is HEMConfig
    assert torch.equal(again.latent_of_word, m.latent_of_word)
    assert torch.equal(
        again.eval().embed_sentences(b["tokens"], b["lengths"], b["lang"]),
        m.embed_sentences(b["tokens"], b["lengths"], b["lang"]),
    )
    assert not any(p is m.latent_of_word for p in m.parameters())  # the assignment is not trained


# -- MCLM -----------------------------------------------------------------------------


def test_masking_rate_is_twenty_percent():
    g = torch.Generator().manual_seed(0)
    lengths = torch.randint(1, 13, (6000,), generator=g)
    mask = mask_words(lengths, 12, 0.2, g)
    per_sentence = mask.sum(dim=1).float()
    assert float(per_sentence.sum() / lengths.sum()) == pytest.approx(0.2, abs=0.006)
    assert bool((per_sentence >= torch.floor(0.2 * lengths)).all())
    assert bool((per_sentence <= torch.ceil(0.2 * lengths)).all())
    steps = torch.arange(12).unsqueeze(0)
    assert not bool(mask[steps >= lengths.unsqueeze(1)].any())  # padding is never masked
    fives = mask[lengths == 5][:, :5].float().mean(dim=0)  # every position equally likely
    assert torch.allclose(fives, torch.full((5,), 0.2), atol=0.04)
    threes = mask[lengths == 3].sum(dim=1).float().mean()  # 0.6 words on average: rate kept for short ones
    assert float(threes) == pytest.approx(0.6, abs=0.06)


def test_cross_language_pairs():
    ios = torch.tensor([0, 0, 0, 1, 1, 2])
    lang = torch.tensor([1, 0, 1, 0, 2, 0])
    first, second = cross_language_pairs(ios, lang)
    assert sorted(zip(first.tolist(), second.tolist())) == [(1, 0), (1, 2), (3, 4)]


def test_mclm_loss_by_hand():
    # image 0: s0 (lang 0), s1 (lang 1), s2 (lang 2); image 1: s3 (lang 0), s4 (lang 1)
    full_angles = [0.0, 1.0, 2.0, 3.0, 4.0]
    masked_angles = [0.2, 1.0, 2.5, 2.9, 4.3]
    full, masked = unit(*full_angles), unit(*masked_angles) * 2.0  # norm is irrelevant: ℓ2 inside
    lang = torch.tensor([0, 1, 2, 0, 1])
    first, second = cross_language_pairs(torch.tensor([0, 0, 0, 1, 1]), lang)
    head = MCLMHead(2)
    nn.init.zeros_(head.fc.weight)
    nn.init.zeros_(head.fc.bias)  # S' = 0: the reconstruction is the masked sentence itself
    chord = lambda i: 2 * math.sin(abs(full_angles[i] - masked_angles[i]) / 2)  # |unit(a) − unit(b)|
    pair = lambda a, b: chord(a) + chord(b)
    expected = (pair(0, 1) + pair(3, 4)) / 2 + pair(0, 2) + pair(1, 2)  # mean within (0,1), sum over pairs
    assert mclm_loss(full, masked, head, first, second, lang).item() == pytest.approx(expected, abs=1e-6)
    # the FC's prediction is added to the masked sentence before normalising
    with torch.no_grad():
        head.fc.bias.copy_(torch.tensor([-1.0, 0.0, 0.0, 0.0]))
    one = mclm_loss(
        full[:2],
        torch.tensor([[1.0, 1.0], [0.0, 2.0]]),
        head,
        torch.tensor([0]),
        torch.tensor([1]),
        torch.tensor([0, 1]),
    )
    # s0: (1,1) + (−1,0) = (0,1) vs unit(0) = (1,0): √2; s1: (0,2) vs unit(1 rad)
    expected_one = math.sqrt(2) + torch.linalg.vector_norm(torch.tensor([0.0, 1.0]) - unit(1.0)[0]).item()
    assert one.item() == pytest.approx(expected_one, abs=1e-6)


def test_mclm_loss_has_finite_gradient_when_nothing_is_masked():
    full = torch.randn(2, 4, requires_grad=True)
    head = MCLMHead(4)
    nn.init.zeros_(head.fc.weight)
    nn.init.zeros_(head.fc.bias)
    loss = mclm_loss(full, full, head, torch.tensor([0]), torch.tensor([1]), torch.tensor([0, 1]))
    loss.backward()
    assert loss.item() == 0.0 and bool(torch.isfinite(full.grad).all())


# -- the SMALR objective, eq. (4) ------------------------------------------------------


def test_smalr_objective_is_equation_four():
    m, _ = tiny(SMALR)
    obj = SMALRObjective(progress=0.4, generator=torch.Generator().manual_seed(0))
    b = batch()
    torch.manual_seed(5)  # dropout
    t = obj(m, b)
    assert float(t["mask_pairs"]) == 3  # one en–de pair per image
    expected = (
        t["multimodal"]
        + t["multimodal_masked"]
        + 1e-4 * t["mask"]
        + 1e-6 * t["language"]
        + 5e-2 * (t["neighbourhood_universal"] + t["neighbourhood_final"])
    )
    assert float(t["loss"].detach()) == pytest.approx(float(expected.detach()), rel=1e-6)
    assert float(t["mask"].detach()) == pytest.approx(float((t["mask_universal"] + t["mask_final"]).detach()))
    t["loss"].backward()
    for p in (
        m.mask_embedding,
        m.mclm_universal.fc.weight,
        m.mclm_final.fc.weight,
        m.latent_embeddings.weight,
        m.specific_embeddings.weight,
        m.language_classifier.weight,
    ):
        assert p.grad is not None and p.grad.abs().sum() > 0
    # the same generator seed draws the same masks
    torch.manual_seed(5)
    again = SMALRObjective(progress=0.4, generator=torch.Generator().manual_seed(0))(m, b)
    assert float(again["mask"].detach()) == pytest.approx(float(t["mask"].detach()))


def test_hem_and_la_objective_has_no_mclm():
    m, _ = tiny(HEM)
    t = SMALRObjective(mclm=False)(m, batch())
    assert "mask" not in t and "multimodal_masked" not in t
    expected = t["multimodal"] + 1e-6 * t["language"] + 5e-2 * (t["neighbourhood_universal"] + t["neighbourhood_final"])
    assert float(t["loss"].detach()) == pytest.approx(float(expected.detach()), rel=1e-6)
    with pytest.raises(ValueError, match="no MCLM heads"):
        SMALRObjective()(m, batch())


# -- CLC ------------------------------------------------------------------------------


def test_clc_c_has_352_parameters_for_ten_languages():
    assert CLCClassifier(10).parameter_count() == 352
    assert CLCClassifier(4).parameter_count() == 4 * 32 + 32


def test_clc_a_averages_over_languages():
    scores = torch.tensor([[[0.1, 0.5], [0.3, -0.5], [float("nan"), 0.9]]])  # (Q=1, L=3, N=2)
    assert torch.allclose(clc_average(scores), torch.tensor([[0.2, (0.5 - 0.5 + 0.9) / 3]]))


def test_clc_c_starts_as_clc_a():
    torch.manual_seed(0)
    scores = torch.rand(6, 10, 7) * 2 - 1
    out = CLCClassifier(10)(scores)
    assert torch.allclose(out, 1 + clc_average(scores), atol=1e-6)


def test_score_triplet_matches_the_embedding_triplet():
    torch.manual_seed(0)
    img = nn.functional.normalize(torch.randn(4, 6), dim=1)
    txt = nn.functional.normalize(torch.randn(8, 6), dim=1)
    owner = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3])
    assert float(multimodal_triplet_scores(txt @ img.T, owner, 0.05, 3)) == pytest.approx(
        float(multimodal_triplet(img, txt, owner, 0.05, 3)), abs=1e-6
    )


def test_fit_clc_learns_to_trust_the_informative_language():
    g = torch.Generator().manual_seed(0)
    q, n = 40, 20
    owner = torch.arange(q) % n
    truth = torch.zeros(q, n)
    truth[torch.arange(q), owner] = 1.0
    informative = 0.6 * truth + 0.3 * torch.rand(q, n, generator=g)
    noise = torch.rand(q, n, generator=g)
    scores = torch.stack([informative, noise], dim=1)  # (Q, 2, N)
    clc = CLCClassifier(2)
    losses = fit_clc(clc, scores, owner, iterations=30, lr=0.05)
    assert len(losses) == 30 and losses[-1] < losses[0]
    w = clc.hidden_weight.detach()
    assert bool((w[:, 0] > w[:, 1]).all())
    acc = lambda s: float((s.argmax(dim=1) == owner).float().mean())
    assert acc(clc(scores).detach()) >= acc(clc_average(scores))


def test_top_m_usage_is_the_mean_of_the_words_top_m_attention():
    """The usage term's π̄ under top_m: each distinct word's softmax over its M best tokens,
    placed on those tokens and averaged over the words; it sums to 1 and carries a gradient."""
    torch.manual_seed(0)
    config = LatentVocabularyConfig(
        vocab_size=9, word_dim=6, n_tokens=12, dim=4, scorer_dim=5, explore_m=3, straight_through="top_m"
    )
    lv = LatentVocabulary(config, torch.randn(9, 6)).eval()
    tokens, lengths = torch.tensor([[1, 2, 2, 3], [4, 1, 0, 0]]), torch.tensor([4, 2])
    _, usage = lv.sentences_and_usage(tokens, lengths)
    words = torch.tensor([1, 2, 3, 4])
    with torch.no_grad():
        scores = lv.scores(words)
        top = scores.topk(3, dim=1)
        expected = torch.zeros(12)
        for row, probs in zip(top.indices, torch.softmax(top.values, dim=1)):
            expected[row] += probs / 4
    assert torch.allclose(usage.detach(), expected, atol=1e-6)
    assert float(usage.detach().sum()) == pytest.approx(1.0, abs=1e-6) and usage.requires_grad


def test_top_m_pair_scores_and_carrier_have_the_plain_gradients():
    """The chunked autograd functions of the top_m straight-through give the values and gradients of
    their plain formulations (a whole gather of keys / embeddings), whatever the chunk."""
    from polyvse.models.latent_vocab import _PairScores, _ZeroCarrier

    g = torch.Generator().manual_seed(0)
    query = torch.randn(7, 5, dtype=torch.float64, generator=g, requires_grad=True)
    keys = torch.randn(11, 5, dtype=torch.float64, generator=g, requires_grad=True)
    emb = torch.randn(11, 4, dtype=torch.float64, generator=g)
    top = torch.randint(0, 11, (7, 3), generator=g)
    w_scores, w_out = (
        torch.randn(7, 3, dtype=torch.float64, generator=g),
        torch.randn(7, 4, dtype=torch.float64, generator=g),
    )

    def plain():
        scores = torch.bmm(keys[top], query.unsqueeze(-1)).squeeze(-1)
        probs = torch.softmax(scores, dim=1)
        carrier = torch.bmm((probs - probs.detach()).unsqueeze(1), emb[top]).squeeze(1)
        return scores, carrier

    def chunked(chunk):
        scores = _PairScores.apply(query, keys, top, chunk)
        return scores, _ZeroCarrier.apply(torch.softmax(scores, dim=1), emb, top, chunk)

    results = []
    for run in (plain, lambda: chunked(2), lambda: chunked(100)):
        scores, carrier = run()
        ((scores * w_scores).sum() + (carrier * w_out).sum()).backward()
        results.append((scores.detach(), carrier.detach(), query.grad.clone(), keys.grad.clone()))
        query.grad, keys.grad = None, None
    for other in results[1:]:
        for a, b in zip(results[0], other):
            assert torch.allclose(a, b, atol=1e-12)
    assert float(results[0][1].abs().max()) == 0.0 and float(results[0][2].abs().max()) > 0
