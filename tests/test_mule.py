"""MULE, PARALLEL-EmbN, gradient reversal and their objectives."""

import math

import pytest
import torch
from torch import nn

from polyvse.models.gradient_reversal import GradientReversal, dann_lambda, reverse_gradient
from polyvse.models.mule import MULE, MULEConfig
from polyvse.models.parallel_embn import ParallelEmbN, language_offsets
from polyvse.models.registry import FAMILIES
from polyvse.models.trained import load_model
from polyvse.models.universal import masked_mean
from polyvse.text.vocab import Vocabulary
from polyvse.train.objectives import EmbNObjective
from polyvse.train.objectives_mule import LIWEObjective, MULEObjective, MULEPretrainObjective, ParallelEmbNObjective

COUNTS = {"en": {"a": 5, "red": 4, "dog": 3, "cat": 1}, "de": {"ein": 5, "rot": 2, "hund": 1}}
SMALL = dict(word_dim=3, universal_dim=8, gru_hidden=6, joint_dim=5, image_hidden=7)


def vocab():
    return Vocabulary.from_counts(COUNTS)  # ids: en <unk>=1 a=2 red=3 dog=4 cat=5, de <unk>=6 ein=7 rot=8 hund=9


def tiny_mule(seed=0, **kw):
    torch.manual_seed(seed)
    return MULE.from_vocabulary(vocab(), image_dim=4, **{**SMALL, **kw})


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


# -- gradient reversal --------------------------------------------------------------


def test_gradient_reversal_is_identity_forward_and_negates_backward():
    x = torch.randn(4, 3, requires_grad=True)
    y = reverse_gradient(x, 0.3)
    assert torch.equal(y, x)
    (y * torch.arange(3.0)).sum().backward()
    assert torch.allclose(x.grad, -0.3 * torch.arange(3.0).expand(4, 3))
    layer = GradientReversal(2.0)
    z = torch.ones(2, requires_grad=True)
    layer(z).sum().backward()
    assert z.grad.tolist() == [-2.0, -2.0]


def test_classifier_gradient_into_universal_embedding_is_flipped():
    m = tiny_mule()
    b = batch()
    u = m.encode_universal(b["tokens"], b["lengths"], b["lang"]).detach().requires_grad_(True)
    # without reversal: the plain classifier
    ce = nn.functional.cross_entropy(m.language_classifier(u), b["lang"])
    plain_u, plain_w = torch.autograd.grad(ce, [u, m.language_classifier.weight])
    # through the model's reversal layer with weight λ
    lam = 0.7
    ce_rev = nn.functional.cross_entropy(m.language_logits(u, lam), b["lang"])
    rev_u, rev_w = torch.autograd.grad(ce_rev, [u, m.language_classifier.weight])
    assert plain_u.abs().sum() > 0
    assert torch.allclose(rev_u, -lam * plain_u, atol=1e-7)
    assert torch.allclose(rev_w, plain_w)  # the classifier itself still minimises its loss


def test_dann_schedule():
    assert dann_lambda(0.0) == 0.0
    assert dann_lambda(1.0) == pytest.approx(2 / (1 + math.exp(-10)) - 1)
    assert dann_lambda(0.1) == pytest.approx(2 / (1 + math.exp(-1)) - 1)
    assert dann_lambda(2.0) == dann_lambda(1.0)  # clipped to [0, 1]
    values = [dann_lambda(p / 10) for p in range(11)]
    assert values == sorted(values)


# -- MULE model -----------------------------------------------------------------------


def test_mule_shapes_and_unit_norm():
    m = tiny_mule().eval()
    b = batch()
    u, s = m.encode(b["tokens"], b["lengths"], b["lang"])
    assert u.shape == (6, 8) and s.shape == (6, 5)
    assert torch.allclose(s.norm(dim=1), torch.ones(6))
    assert torch.allclose(m.embed_sentences(b["tokens"], b["lengths"], b["lang"]), s)
    img = m.embed_images(b["images"])
    assert img.shape == (3, 5) and torch.allclose(img.norm(dim=1), torch.ones(3))


def test_universal_sentence_is_the_mean_of_language_specific_word_features():
    m = tiny_mule().eval()
    tokens, lengths = torch.tensor([[7, 8, 0]]), torch.tensor([2])
    u = m.encode_universal(tokens, lengths, torch.tensor([1]))
    fc = m.language_fc[1]
    words = m.word_embeddings.weight[[7, 8]]
    by_hand = (words @ fc.weight.T + fc.bias).mean(dim=0)
    assert torch.allclose(u[0], by_hand, atol=1e-6)
    # the other language's FC gives another vector: the FC is language-specific
    assert not torch.allclose(m.encode_universal(tokens, lengths, torch.tensor([0])), u)


def test_word_features_are_each_position_through_its_languages_fc():
    m = tiny_mule()
    tokens = torch.tensor([[7, 8, 7], [8, 2, 0], [7, 3, 3]])
    langs = torch.tensor([1, 0, 1])  # one word in both languages, languages out of order
    got = m.word_features(tokens, langs)
    for s, lang in enumerate(langs.tolist()):
        fc = m.language_fc[lang]
        torch.testing.assert_close(got[s], m.word_embeddings(tokens[s]) @ fc.weight.T + fc.bias)
    got.sum().backward()  # every language's FC gets the gradient of its own words
    assert all(float(fc.weight.grad.abs().sum()) > 0 for fc in m.language_fc[:2])


def test_padding_does_not_change_mean_pooling_or_sentence():
    m = tiny_mule().eval()
    short = m.encode(torch.tensor([[2, 3, 4]]), torch.tensor([3]), torch.tensor([0]))
    padded = m.encode(torch.tensor([[2, 3, 4, 0, 0, 0]]), torch.tensor([3]), torch.tensor([0]))
    for a, b in zip(short, padded):
        assert torch.allclose(a, b, atol=1e-6)
    x = torch.randn(2, 5, 3)
    garbage = x.clone()
    garbage[0, 2:] = 1e6  # values beyond the length must never be read
    lengths = torch.tensor([2, 5])
    assert torch.allclose(masked_mean(garbage, lengths), masked_mean(x, lengths))
    assert torch.allclose(masked_mean(x, lengths)[0], x[0, :2].mean(dim=0))


def test_mule_word_vectors_initialise_the_embeddings():
    v = vocab()
    vectors = torch.arange(len(v) * 3, dtype=torch.float).view(len(v), 3)
    m = MULE.from_vocabulary(v, 4, word_vectors=vectors, **SMALL)
    assert torch.equal(m.word_embeddings.weight[1:], vectors[1:])
    assert torch.equal(m.word_embeddings.weight[0], torch.zeros(3))  # padding
    with pytest.raises(ValueError, match="word_vectors"):
        MULE.from_vocabulary(v, 4, word_vectors=torch.zeros(3, 3), **SMALL)


def test_mule_parameter_counts_by_hand():
    m = tiny_mule()
    V, d, U, L, H, J, I, Ih = 10, 3, 8, 2, 6, 5, 4, 7
    emb = V * d
    lang_fc = L * (d * U + U)
    gru = 3 * (H * U + H * H + 2 * H)
    text_fc = H * J + J
    image = (I * Ih + Ih) + 2 * Ih + (Ih * J + J)
    classifier = U * L + L
    train, test = m.parameter_counts()
    assert train == emb + lang_fc + gru + text_fc + image + classifier
    assert test == gru + text_fc + image  # word features precomputed, classifier unused at test time
    assert sum(p.numel() for p in m.universal_parameters()) == emb + lang_fc


def test_mule_needs_languages_in_range():
    m = tiny_mule()
    with pytest.raises(ValueError, match="langs"):
        m.embed_sentences(torch.tensor([[2]]), torch.tensor([1]), None)
    with pytest.raises(ValueError, match="out of range"):
        m.embed_sentences(torch.tensor([[2]]), torch.tensor([1]), torch.tensor([5]))


def test_mule_rebuilds_from_its_checkpoint():
    m = tiny_mule().eval()
    saved = {
        "family": m.family,
        "config": m.config.as_dict(),
        "state_dict": m.state_dict(),
        "vocab": vocab().state_dict(),
    }
    again, _ = load_model(saved)
    b = batch()
    assert torch.equal(
        again.eval().embed_sentences(b["tokens"], b["lengths"], b["lang"]),
        m.embed_sentences(b["tokens"], b["lengths"], b["lang"]),
    )
    assert FAMILIES["mule"] == (MULE, MULEConfig)


# -- MULE objectives ------------------------------------------------------------------


class FixedModel(nn.Module):
    """Stands in for a model: returns given u, s, images and classifier logits."""

    def __init__(self, u, s, img, logits):
        super().__init__()
        self.u, self.s, self.img = u, s, img
        self.classifier = nn.Parameter(logits.clone())
        self.reversal = None

    def embed_images(self, features):
        return self.img

    def encode(self, tokens, lengths, langs, mask=None):
        return self.u, self.s

    def encode_universal(self, tokens, lengths, langs, mask=None):
        return self.u

    def embed_sentences(self, tokens, lengths, langs=None):
        return self.s

    def language_logits(self, universal, reversal_weight=1.0):
        self.reversal = reversal_weight
        return self.classifier


def test_lp_objective_by_hand():
    # image 0: s0 (en), s1 (de); image 1: s2, s3 both en (same language: neither positive nor negative)
    u = unit(0.0, 0.3, 0.35, 1.5)
    b = {
        "tokens": torch.zeros(4, 1, dtype=torch.long),
        "lengths": torch.ones(4, dtype=torch.long),
        "lang": torch.tensor([0, 1, 0, 0]),
        "image_of_sentence": torch.tensor([0, 0, 1, 1]),
    }
    d = lambda a: 1 - math.cos(a)
    m = 0.05
    # positive pairs (0,1) and (1,0); negatives of each: s2, s3
    hinges = [
        m + d(0.3) - d(0.35),
        m + d(0.3) - d(1.5),  # anchor s0
        m + d(0.3) - d(0.05),
        m + d(0.3) - d(1.2),
    ]  # anchor s1
    expected = sum(max(0.0, h) for h in hinges) / 4
    got = MULEPretrainObjective(margin=m, top_k=10)(FixedModel(u, u, None, torch.zeros(4, 2)), b)
    assert float(got["loss"]) == pytest.approx(expected, abs=1e-6)
    assert expected > 0


def test_mule_objective_combines_terms_and_ablation_flags():
    torch.manual_seed(1)
    u = torch.randn(6, 8)
    s = nn.functional.normalize(torch.randn(6, 5), dim=1)
    img = nn.functional.normalize(torch.randn(3, 5), dim=1)
    logits = torch.tensor([[2.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.0], [0.0, 3.0], [1.0, 2.0]])
    b = batch()
    model = FixedModel(u, s, img, logits)
    full = MULEObjective(adversarial_weight=0.1, progress=0.3)(model, b)
    # cross-entropy by hand
    ce = (
        -sum(lg[y] - math.log(math.exp(lg[0]) + math.exp(lg[1])) for lg, y in zip(logits.tolist(), b["lang"].tolist()))
        / 6
    )
    assert float(full["language"].detach()) == pytest.approx(ce, rel=1e-6)
    assert model.reversal == pytest.approx(dann_lambda(0.3))
    assert float(full["language_accuracy"]) == pytest.approx(4 / 6)  # rows 0,1,4,5 right; row 2 tie → 0; row 3 wrong
    expected = full["multimodal"] + 0.05 * (full["neighbourhood_final"] + full["neighbourhood_universal"]) + 0.1 * ce
    assert float(full["loss"].detach()) == pytest.approx(float(expected.detach()), rel=1e-6)
    # EmbN row of the ablation: EmbN's own objective on the MULE architecture
    embn_row = MULEObjective(universal_nc=False, language_classifier=False)(model, b)
    assert set(embn_row) == {"loss", "multimodal", "neighbourhood_final"}
    assert float(embn_row["loss"]) == pytest.approx(float(EmbNObjective()(model, b)["loss"]), rel=1e-6)
    nc_row = MULEObjective(language_classifier=False)(model, b)
    assert "neighbourhood_universal" in nc_row and "language" not in nc_row


def test_mule_objective_trains_a_real_model():
    m = tiny_mule()
    objective = MULEObjective(progress=0.5)
    terms = objective(m, batch())
    terms["loss"].backward()
    assert all(torch.isfinite(v) for v in terms.values())
    assert m.language_fc[1].weight.grad.abs().sum() > 0
    assert m.language_classifier.weight.grad.abs().sum() > 0
    # LP only reaches the parameters below the universal embedding
    m.zero_grad(set_to_none=True)
    MULEPretrainObjective()(m, batch())["loss"].backward()
    assert m.language_fc[0].weight.grad is not None and m.text.fc.weight.grad is None


def test_liwe_objective_hardest_negative_by_hand():
    img = unit(0.0, 0.5)
    s = unit(0.3, 0.2, 0.6)  # s0, s2 describe image 0; s1 describes image 1 but lies nearer image 0
    b = {"images": None, "tokens": None, "lengths": None, "lang": None, "image_of_sentence": torch.tensor([0, 1, 0])}
    d = lambda a: 1 - math.cos(a)
    m = 0.2
    image_rows = [
        m + d(0.3) - d(0.2),  # (I0, s0): only negative s1
        m + d(0.6) - d(0.2),  # (I0, s2)
        m + d(0.3) - d(0.1),
    ]  # (I1, s1): hardest of s0 (0.2 rad away) and s2 (0.1 rad away)
    sentence_rows = [m + d(0.3) - d(0.2), m + d(0.3) - d(0.2), m + d(0.6) - d(0.1)]
    assert min(image_rows + sentence_rows) > 0
    expected = sum(image_rows) / 3 + sum(sentence_rows) / 3
    got = LIWEObjective()(FixedModel(None, s, img, torch.zeros(3, 1)), b)
    assert float(got["loss"]) == pytest.approx(expected, abs=1e-6)


# -- PARALLEL-EmbN --------------------------------------------------------------------


def tiny_parallel(**kw):
    torch.manual_seed(0)
    return ParallelEmbN.from_vocabulary(vocab(), 4, word_dim=3, gru_hidden=6, joint_dim=5, image_hidden=7, **kw)


def test_parallel_embn_has_one_branch_per_language():
    p = tiny_parallel().eval()
    assert language_offsets(vocab()) == [1, 6]
    assert [t.num_embeddings for t in p.word_embeddings] == [6, 5]  # en: pad + 5, de: pad + 4
    b = batch()
    before = p.embed_sentences(b["tokens"], b["lengths"], b["lang"])
    assert before.shape == (6, 5) and torch.allclose(before.norm(dim=1), torch.ones(6))
    with torch.no_grad():
        p.word_embeddings[1].weight.add_(1.0)  # change German only
    after = p.embed_sentences(b["tokens"], b["lengths"], b["lang"])
    en = b["lang"] == 0
    assert torch.allclose(after[en], before[en]) and not torch.allclose(after[~en], before[~en])


def test_parallel_embn_maps_joint_ids_to_local_rows():
    v = vocab()
    vectors = torch.arange(len(v) * 3, dtype=torch.float).view(len(v), 3)
    p = tiny_parallel(word_vectors=vectors)
    assert torch.equal(p.word_embeddings[1].weight[2], vectors[v.stoi[("de", "ein")]])  # de local 2 = "ein"
    assert torch.equal(p.word_embeddings[0].weight[0], torch.zeros(3))
    with pytest.raises(ValueError, match="another language"):
        p.embed_sentences(torch.tensor([[2, 3]]), torch.tensor([2]), torch.tensor([1]))  # English ids as German


def test_parallel_embn_parameter_counts_by_hand():
    p = tiny_parallel()
    d, H, J, I, Ih = 3, 6, 5, 4, 7
    tables = (6 + 5) * d
    branch = 3 * (H * d + H * H + 2 * H) + H * J + J
    image = (I * Ih + Ih) + 2 * Ih + (Ih * J + J)
    assert p.parameter_counts() == (tables + 2 * branch + image, 2 * branch + image)


def test_parallel_embn_objective_runs_on_the_model():
    p = tiny_parallel()
    terms = ParallelEmbNObjective()(p, batch())
    terms["loss"].backward()
    assert p.text[0].fc.weight.grad is not None and p.text[1].fc.weight.grad is not None
