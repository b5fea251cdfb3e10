"""LIWE: the character vocabulary, words built from characters, and the GRU over the words."""

import copy

import pandas as pd
import pytest
import torch

from polyvse.models.liwe import LIWE, LIWE_SIZES, LIWEConfig
from polyvse.models.registry import FAMILIES
from polyvse.text.chars import PAD, UNK, CharVocabulary
from polyvse.train.data import collate, encode_captions
from polyvse.train.objectives_mule import LIWEObjective

TEXTS = [("A red dog.", "en"), ("Ein roter Hund!", "de"), ("红色的狗", "zh")]
C = 5  # characters of a word in these tests


def chars():
    return CharVocabulary.from_texts(TEXTS, ["en", "de", "zh"], word_chars=C)


def tiny(char_dim=4, seed=0):
    torch.manual_seed(seed)
    return LIWE(
        LIWEConfig(
            vocab_size=len(chars()),
            image_dim=6,
            char_dim=char_dim,
            word_chars=C,
            word_hidden=[8],
            word_dim=6,
            gru_hidden=5,
            joint_dim=3,
            image_hidden=7,
        )
    )


def test_char_vocabulary_encodes_each_word_in_its_own_slots():
    v = chars()
    assert v.itos[:2] == ["<pad>", "<unk>"]
    assert "A" not in v.stoi and "." not in v.stoi and " " not in v.stoi and "狗" in v.stoi
    red = [v.stoi[c] for c in "red"] + [PAD] * 2
    assert v.encode("Red", "en") == red
    # "cat": c was never seen; a word longer than word_chars keeps its first characters
    assert "c" not in v.stoi
    assert v.encode("red cat", "en") == red + [UNK, v.stoi["a"], v.stoi["t"]] + [PAD] * 2
    assert v.encode("rotterhund", "de") == [v.stoi.get(c, UNK) for c in "rotte"]
    assert v.encode("!!!", "en") == [UNK] + [PAD] * 4  # a text without a word: one unknown word
    # zh: each character a word (text.segmenter chars, as the word families read it)
    assert len(v.encode("红色的狗", "zh")) == 4 * C
    # max_len counts words, as for the word families: a long sentence is not cut to its first characters
    assert v.encode("a red dog", "en", max_len=2) == v.encode("a red", "en")
    assert len(v.encode("a red dog " * 10, "en", max_len=40)) == 30 * C
    with pytest.raises(KeyError):
        v.encode("x", "fr")
    again = CharVocabulary.from_state_dict(v.state_dict())
    assert again.itos == v.itos and again.langs == v.langs and again.word_chars == C


def test_encode_batch_pads_whole_words():
    tokens, lengths = chars().encode_batch(["a dog", "红"], ["en", "zh"])
    assert tokens.shape == (2, 2 * C) and lengths.tolist() == [2 * C, C]
    assert tokens[1, C:].tolist() == [0] * C


def test_char_vocabulary_works_with_the_training_batches():
    caps = pd.DataFrame(
        {"image_id": ["i0", "i1", "i0"], "lang": ["en", "de", "zh"], "text": ["a red dog", "ein hund", "红色的狗"]}
    )
    enc = encode_captions(caps, chars(), {"i0": 0, "i1": 1}, max_len=50)
    assert enc.lengths.tolist() == [3 * C, 2 * C, 4 * C] and enc.lang.tolist() == [0, 1, 2]
    b = collate(enc, [0, 1, 2], torch.randn(2, 6), torch.device("cpu"))
    m = tiny().eval()
    out = m.embed_sentences(b["tokens"], b["lengths"], b["lang"])
    assert out.shape == (3, 3) and torch.allclose(out.norm(dim=1), torch.ones(3))
    terms = LIWEObjective()(m.train(), b)
    terms["loss"].backward()
    assert m.words.char_embeddings.weight.grad is not None


def test_a_word_is_read_from_its_characters_alone_and_padding_never_enters():
    m = tiny().eval()
    tokens, lengths = chars().encode_batch(["a red dog", "ein hund"], ["en", "de"])
    out = m.embed_sentences(tokens, lengths)
    padded = m.embed_sentences(torch.cat([tokens, torch.zeros(2, 2 * C, dtype=torch.long)], dim=1), lengths)
    assert torch.allclose(out, padded, atol=1e-6)
    # the same word in another sentence has the same embedding (eval mode: batch norm's running statistics)
    v = chars()
    words = tokens.view(2, -1, C)
    assert torch.equal(m.words(words[0, 1:2]), m.words(torch.tensor([v.encode("red", "en")])))
    # the backward direction reads the sentence too: changing the first word changes the output
    changed = tokens.clone()
    changed[0, :C] = changed[0, C : 2 * C]
    assert not torch.allclose(m.embed_sentences(changed, lengths)[0], out[0])
    with pytest.raises(ValueError, match="words of 5 character slots"):
        m.embed_sentences(tokens[:, :-1], lengths - 1)
    assert m.embed_images(torch.randn(4, 6)).shape == (4, 3)


def test_liwe_uses_both_final_states_of_a_bidirectional_gru_over_the_words():
    m = tiny().eval()
    tokens, lengths = chars().encode_batch(["a red dog", "ein hund", "红"], ["en", "de", "zh"])
    bi = torch.nn.GRU(m.config.word_dim, m.config.gru_hidden, batch_first=True, bidirectional=True)
    with torch.no_grad():  # the two one-way GRUs' weights as the directions of one bidirectional GRU
        for name, value in m.forward_gru.named_parameters():
            getattr(bi, name).copy_(value)
            getattr(bi, f"{name}_reverse").copy_(dict(m.backward_gru.named_parameters())[name])
    n_words = lengths // C
    words = m.words(tokens.view(3, -1, C).flatten(0, 1)).view(3, -1, m.config.word_dim)
    packed = torch.nn.utils.rnn.pack_padded_sequence(words, n_words, batch_first=True, enforce_sorted=False)
    _, h_n = bi(packed)  # forward after the last word, backward after reading back to the first
    by_hand = torch.nn.functional.normalize(m.fc(torch.cat([h_n[0], h_n[1]], dim=1)), dim=1)
    assert torch.allclose(m.embed_sentences(tokens, lengths), by_hand, atol=1e-6)


def test_liwe_parameter_counts_by_hand():
    m = tiny(char_dim=4)
    V, d, H, J, I, Ih = len(chars()), 4, 5, 3, 6, 7
    emb = V * d
    words = (C * d * 8 + 8 + 2 * 8) + (8 * 6 + 6 + 2 * 6)  # FC + batch norm, twice
    bigru = 2 * 3 * (H * 6 + H * H + 2 * H)
    fc = 2 * H * J + J
    image = (I * Ih + Ih) + 2 * Ih + (Ih * J + J)
    assert m.parameter_counts() == (emb + words + bigru + fc + image, words + bigru + fc + image)


def test_small_and_large_liwe():
    assert LIWE_SIZES == {"small": 24, "large": 120}
    small = LIWE(LIWEConfig(vocab_size=50, image_dim=6, char_dim=LIWE_SIZES["small"]))
    large = LIWE(LIWEConfig(vocab_size=50, image_dim=6, char_dim=LIWE_SIZES["large"]))
    assert large.parameter_counts()[0] > small.parameter_counts()[0]
    assert FAMILIES["liwe"] == (LIWE, LIWEConfig)


def test_character_words_over_distinct_words_equal_the_layers_over_every_occurrence():
    torch.manual_seed(3)
    m = tiny()
    words = m.words
    chars_ = torch.randint(0, len(chars()), (5, C))
    batch = chars_[torch.tensor([0, 1, 0, 2, 3, 0, 4, 1, 1])]  # repeated words, as in a batch
    reference = copy.deepcopy(words)
    out = words(batch)
    expected = reference.layers(reference.char_embeddings(batch).flatten(1))
    assert torch.allclose(out, expected, atol=1e-5)
    grads = torch.autograd.grad(out.square().sum(), list(words.parameters()))
    expected_grads = torch.autograd.grad(expected.square().sum(), list(reference.parameters()))
    for g, e in zip(grads, expected_grads):
        assert torch.allclose(g, e, atol=1e-5)
    for mine, theirs in zip(words.layers, reference.layers):
        if isinstance(mine, torch.nn.BatchNorm1d):
            assert torch.allclose(mine.running_mean, theirs.running_mean, atol=1e-6)
            assert torch.allclose(mine.running_var, theirs.running_var, atol=1e-5)
            assert int(mine.num_batches_tracked) == int(theirs.num_batches_tracked) == 1
    words.eval(), reference.eval()
    assert torch.allclose(words(batch), reference.layers(reference.char_embeddings(batch).flatten(1)), atol=1e-5)
