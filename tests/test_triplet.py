import math

import pytest
import torch

from polyvse.losses.triplet import (
    gathered_top_k_hinge,
    multimodal_triplet,
    neighbourhood_triplet,
    same_language_triplet,
    top_k_triplet,
)
from polyvse.train.objectives import EmbNObjective
from polyvse.train.objectives_mule import MULEObjective
from polyvse.train.objectives_smalr import SMALRObjective


def unit(*angles):
    return torch.tensor([[math.cos(a), math.sin(a)] for a in angles])


def test_top_k_triplet_by_hand():
    # anchor at 0 rad; positive at 0.5 rad; negatives at 0.55 and 2.0 rad
    a = unit(0.0)
    c = unit(0.5, 0.55, 2.0)
    pos = torch.tensor([[True, False, False]])
    d = lambda x: 1 - math.cos(x)
    m = 0.05
    v1 = max(0.0, m + d(0.5) - d(0.55))
    v2 = max(0.0, m + d(0.5) - d(2.0))
    assert v1 > 0 and v2 == 0
    assert float(top_k_triplet(a, c, pos, m, top_k=2)) == pytest.approx((v1 + v2) / 2, abs=1e-6)
    assert float(top_k_triplet(a, c, pos, m, top_k=1)) == pytest.approx(v1, abs=1e-6)


def test_multimodal_weights_the_sentence_anchored_term():
    torch.manual_seed(0)
    img = torch.nn.functional.normalize(torch.randn(4, 8), dim=1)
    txt = torch.nn.functional.normalize(torch.randn(8, 8), dim=1)
    owner = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3])
    pos = owner.unsqueeze(0) == torch.arange(4).unsqueeze(1)
    i_term = top_k_triplet(img, txt, pos, 0.05, 10)
    s_term = top_k_triplet(txt, img, pos.T, 0.05, 10)
    assert float(i_term) > 0 and float(s_term) > 0
    got = multimodal_triplet(img, txt, owner, 0.05, 10, sentence_weight=1.5)
    assert float(got) == pytest.approx(float(i_term + 1.5 * s_term), rel=1e-6)


def test_neighbourhood_excludes_self_pairs_and_is_zero_when_separated():
    # two images, two sentences each, perfectly clustered far apart: no violation
    s = unit(0.0, 0.01, math.pi, math.pi + 0.01)
    owner = torch.tensor([0, 0, 1, 1])
    assert float(neighbourhood_triplet(s, owner, 0.05, 10)) == 0.0
    # swap the clusters' membership: every constraint violated
    assert float(neighbourhood_triplet(s, torch.tensor([0, 1, 0, 1]), 0.05, 10)) > 1.0


def test_no_positive_pair_gives_zero_with_gradient():
    x = torch.randn(3, 4, requires_grad=True)
    loss = top_k_triplet(x, x, torch.zeros(3, 3, dtype=torch.bool))
    loss.backward()
    assert float(loss.detach()) == 0.0 and x.grad is not None


# -- same-language matching (MULE eq. 3) versus every language (SMALR eq. 3) ---------------


def two_language_batch():
    """Images I0 = e1, I1 = e2, I2 = e3. English: s0 (I0) between e1 and e2, s1 (I1) = e2;
    German: d0 (I0) = e2, d2 (I2) = e3. I1 has no German sentence, I2 no English one.
    Other-language items violate: d0 lies on I1 (d(d0, I1) = 0 while d(d0, I0) = 1) and on
    s1 (d(I1, d0) = 0 = d(I1, s1))."""
    e = torch.eye(3)
    images = e.clone()
    sentences = torch.stack([(e[0] + e[1]) / math.sqrt(2), e[1], e[1], e[2]])
    return images, sentences, torch.tensor([0, 1, 0, 2]), torch.tensor([0, 0, 1, 1])


M, H = 0.05, 1 - 1 / math.sqrt(2)  # margin; cosine distance at 45 degrees


def test_same_language_triplet_keeps_sentences_in_their_language_and_every_image_by_hand():
    images, sentences, ios, lang = two_language_batch()
    # English: image anchors I0, I1 against the English sentences: (I0,s0|s1): M+H-1 → 0,
    # (I1,s1|s0): M-H → 0; sentence anchors against every image of the batch:
    # (s0,I0|I1): M+H-H = M, (s0,I0|I2): M+H-1 → 0, (s1,I1|I0), (s1,I1|I2): M-1 → 0
    en = 0.0 + 1.5 * M / 4
    # German: image anchors I0, I2: (I0,d0|d2): M+1-1 = M, (I2,d2|d0) → 0; sentence anchors:
    # (d0,I0|I1): M+1-0 = 1+M — I1 has no German sentence, yet an image has no language: it is
    # d0's negative all the same —, (d0,I0|I2): M+1-1 = M, (d2,I2|I0), (d2,I2|I1) → 0
    de = M / 2 + 1.5 * (1 + 2 * M) / 4
    got = same_language_triplet(images, sentences, ios, lang, M, 10, 1.5)
    assert float(got) == pytest.approx((en + de) / 2, abs=1e-6)
    # a language's term reads its own sentences and every image: moving the German sentences
    # anywhere changes the German term alone
    moved = sentences.clone()
    moved[2:] = torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])  # d0 onto I1, d2 onto I0
    de_moved = same_language_triplet(images, moved[2:], ios[2:], lang[2:], M, 10, 1.5)
    assert float(same_language_triplet(images, moved, ios, lang, M, 10, 1.5)) == pytest.approx(
        (en + float(de_moved)) / 2, abs=1e-6
    )


def test_multimodal_triplet_uses_every_language_by_hand():
    images, sentences, ios, lang = two_language_batch()
    # image rows (k = 3): (I0,s0) negs s1,d2 → 0,0; (I0,d0) negs s1,d2 → M,M;
    # (I1,s1) negs s0,d0,d2 → 0,M,0; (I2,d2) negs s0,s1,d0 → 0,0,0: 10 terms
    image_term = 3 * M / 10
    # sentence rows: (s0,I0) negs I1,I2 → M,0; (s1,I1) → 0,0; (d0,I0) negs I1 (d = 0), I2 → 1+M, M; (d2,I2) → 0,0
    sentence_term = (M + 1 + M + M) / 8
    got = multimodal_triplet(images, sentences, ios, M, 10, 1.5)
    assert float(got) == pytest.approx(image_term + 1.5 * sentence_term, abs=1e-6)


def test_same_language_triplet_equals_multimodal_on_one_language_and_ranks_a_lone_sentence():
    torch.manual_seed(0)
    img = torch.nn.functional.normalize(torch.randn(4, 8), dim=1)
    txt = torch.nn.functional.normalize(torch.randn(9, 8), dim=1)
    owner = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3, 1])
    one = torch.zeros(8, dtype=torch.long)
    expected = multimodal_triplet(img, txt[:8], owner[:8], 0.05, 10, 1.5)
    assert float(expected) > 0
    assert float(same_language_triplet(img, txt[:8], owner[:8], one)) == pytest.approx(float(expected), rel=1e-6)
    # a language with one sentence: its image has no negative sentence in that language, but the
    # sentence has the batch's three other images as negatives
    lang = torch.tensor([0] * 8 + [1])
    lone = top_k_triplet(txt[8:], img, torch.tensor([[False, True, False, False]]), 0.05, 10)
    assert float(lone) > 0
    got = same_language_triplet(img, txt, owner, lang)
    assert float(got) == pytest.approx((float(expected) + 1.5 * float(lone)) / 2, rel=1e-6)
    with pytest.raises(ValueError, match=r"lang_of_sentence \(8,\) does not match image_of_sentence \(9,\)"):
        same_language_triplet(img, txt, owner, one)


def per_language_definition(images, sentences, ios, lang, margin, top_k, weight):
    """MULE eq. (3) as its docstring reads: per language, the image anchors that language's
    sentences describe against its sentences, and its sentences against every image, each term
    the gathered rows' mean; then the mean over the languages."""
    terms = []
    for language in torch.unique(lang).tolist():
        rows = (lang == language).nonzero(as_tuple=True)[0]
        pos = ios[rows].unsqueeze(0) == torch.arange(len(images)).unsqueeze(1)  # (B, S_l)
        own = pos.any(dim=1)
        dist = (
            1 - torch.nn.functional.normalize(images, dim=1) @ torch.nn.functional.normalize(sentences[rows], dim=1).T
        )
        image_term = gathered_top_k_hinge(dist[own], pos[own], ~pos[own], margin, top_k)
        sentence_term = gathered_top_k_hinge(dist.T, pos.T, ~pos.T, margin, top_k)
        terms.append(image_term + weight * sentence_term)
    return torch.stack(terms).mean()


@pytest.mark.parametrize("seed", range(30))
def test_same_language_triplet_over_every_language_at_once_is_the_per_language_definition(seed):
    g = torch.Generator().manual_seed(seed)
    n_images, n_sentences = (int(x) for x in torch.randint(2, 12, (2,), generator=g))
    ios = torch.randint(0, n_images, (n_sentences,), generator=g)
    lang = torch.randint(0, 4, (n_sentences,), generator=g) * 2  # gaps in the language indices
    top_k = int(torch.randint(1, 12, (), generator=g))
    images = torch.randn(n_images, 5, generator=g, dtype=torch.float64, requires_grad=True)
    sentences = torch.randn(n_sentences, 5, generator=g, dtype=torch.float64, requires_grad=True)
    got = same_language_triplet(images, sentences, ios, lang, 0.2, top_k, 1.5)
    expected = per_language_definition(images, sentences, ios, lang, 0.2, top_k, 1.5)
    assert got.item() == pytest.approx(expected.item(), abs=1e-12)
    for mine, theirs in zip(
        torch.autograd.grad(got, (images, sentences)), torch.autograd.grad(expected, (images, sentences))
    ):
        torch.testing.assert_close(mine, theirs)


def test_same_language_triplet_of_one_image_is_zero_with_gradient():
    img = torch.randn(1, 3, requires_grad=True)
    txt = torch.randn(2, 3, requires_grad=True)
    loss = same_language_triplet(img, txt, torch.tensor([0, 0]), torch.tensor([0, 1]))
    loss.backward()
    assert float(loss.detach()) == 0.0 and img.grad is not None and txt.grad is not None


class StubModel(torch.nn.Module):
    """Returns fixed image and sentence embeddings (u = s) and zero language logits."""

    def __init__(self, images, sentences):
        super().__init__()
        self.images, self.sentences = images, sentences
        self.logits = torch.nn.Parameter(torch.zeros(len(sentences), 2))

    def embed_images(self, features):
        return self.images

    def encode(self, tokens, lengths, langs, mask=None):
        return self.sentences, self.sentences

    def universal_words(self, tokens, lengths, langs, mask=None):
        return self.sentences

    def encode_words(self, words, lengths):
        return words, words

    def embed_sentences(self, tokens, lengths, langs=None):
        return self.sentences

    def language_logits(self, universal, reversal_weight=1.0):
        return self.logits


def test_mule_and_embn_match_within_a_language_and_smalr_across_languages():
    images, sentences, ios, lang = two_language_batch()
    batch = {"images": None, "tokens": None, "lengths": None, "lang": lang, "image_of_sentence": ios}
    model = StubModel(images, sentences)
    same = float(same_language_triplet(images, sentences, ios, lang, M, 10, 1.5))
    every = float(multimodal_triplet(images, sentences, ios, M, 10, 1.5))
    assert abs(every - same) > 1e-3  # SMALR's sentences of other languages are negatives too
    assert float(MULEObjective()(model, batch)["multimodal"]) == pytest.approx(same, abs=1e-6)
    assert float(EmbNObjective()(model, batch)["multimodal"]) == pytest.approx(same, abs=1e-6)
    smalr = SMALRObjective(mclm=False)(model, batch)
    assert float(smalr["multimodal"]) == pytest.approx(every, abs=1e-6)
