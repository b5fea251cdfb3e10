"""LIWE: character vocabulary and the character-level bidirectional GRU encoder."""

import pandas as pd
import pytest
import torch

from polyvse.models.liwe import LIWE, LIWE_SIZES, LIWEConfig
from polyvse.models.registry import FAMILIES
from polyvse.text.chars import UNK, CharVocabulary, normalise
from polyvse.train.data import collate, encode_captions
from polyvse.train.objectives_mule import LIWEObjective

TEXTS = [("A red dog.", "en"), ("Ein roter Hund!", "de"), ("红色的狗", "zh")]


def chars():
    return CharVocabulary.from_texts(TEXTS, ["en", "de", "zh"])


def tiny(char_dim=4, seed=0):
    torch.manual_seed(seed)
    return LIWE(
        LIWEConfig(vocab_size=len(chars()), image_dim=6, char_dim=char_dim, gru_hidden=5, joint_dim=3, image_hidden=7)
    )


def test_char_vocabulary_counts_normalised_characters():
    v = chars()
    assert normalise("A red  dog.", "en") == "a red dog"
    assert v.itos[:2] == ["<pad>", "<unk>"]
    assert v.itos[2] == " "  # the most frequent character: 5 spaces
    assert "A" not in v.stoi and "." not in v.stoi and "狗" in v.stoi
    ids = v.encode("Red cat", "en")
    assert len(ids) == 7 and ids[4] == UNK  # "c" never seen
    assert v.encode("!!!", "en") == [UNK]  # an empty text still has one step
    # max_len counts words, as for the word families, not characters
    assert v.encode("a red dog", "en", max_len=2) == [v.stoi[c] for c in "a red"]
    assert len(v.encode("a red dog " * 10, "en", max_len=40)) == len("a red dog " * 10) - 1
    with pytest.raises(KeyError):
        v.encode("x", "fr")
    again = CharVocabulary.from_state_dict(v.state_dict())
    assert again.itos == v.itos and again.langs == v.langs


def test_encode_batch_pads_with_zero():
    tokens, lengths = chars().encode_batch(["a dog", "红"], ["en", "zh"])
    assert tokens.shape == (2, 5) and lengths.tolist() == [5, 1]
    assert tokens[1, 1:].tolist() == [0, 0, 0, 0]


def test_char_vocabulary_works_with_the_training_batches():
    caps = pd.DataFrame(
        {"image_id": ["i0", "i1", "i0"], "lang": ["en", "de", "zh"], "text": ["a red dog", "ein hund", "红色的狗"]}
    )
    enc = encode_captions(caps, chars(), {"i0": 0, "i1": 1}, max_len=50)
    assert enc.lengths.tolist() == [9, 8, 4] and enc.lang.tolist() == [0, 1, 2]
    b = collate(enc, [0, 1, 2], torch.randn(2, 6), torch.device("cpu"))
    m = tiny().eval()
    out = m.embed_sentences(b["tokens"], b["lengths"], b["lang"])
    assert out.shape == (3, 3) and torch.allclose(out.norm(dim=1), torch.ones(3))
    terms = LIWEObjective()(m.train(), b)
    terms["loss"].backward()
    assert m.char_embeddings.weight.grad is not None


def test_liwe_shapes_and_padding_invariance():
    m = tiny().eval()
    tokens, lengths = chars().encode_batch(["a red dog", "ein hund"], ["en", "de"])
    out = m.embed_sentences(tokens, lengths)
    padded = m.embed_sentences(torch.cat([tokens, torch.zeros(2, 4, dtype=torch.long)], dim=1), lengths)
    assert torch.allclose(out, padded, atol=1e-6)
    # the backward direction reads the sentence too: changing the first character changes the output
    changed = tokens.clone()
    changed[0, 0] = changed[0, 2]
    assert not torch.allclose(m.embed_sentences(changed, lengths)[0], out[0])
    assert m.embed_images(torch.randn(4, 6)).shape == (4, 3)


def test_liwe_uses_both_final_states_as_a_packed_bidirectional_gru_would():
    m = tiny().eval()
    tokens, lengths = chars().encode_batch(["a red dog", "ein hund", "红"], ["en", "de", "zh"])
    bi = torch.nn.GRU(m.config.char_dim, m.config.gru_hidden, batch_first=True, bidirectional=True)
    with torch.no_grad():  # the two one-way GRUs' weights as the directions of one bidirectional GRU
        for name, value in m.forward_gru.named_parameters():
            getattr(bi, name).copy_(value)
            getattr(bi, f"{name}_reverse").copy_(dict(m.backward_gru.named_parameters())[name])
    packed = torch.nn.utils.rnn.pack_padded_sequence(
        m.char_embeddings(tokens), lengths, batch_first=True, enforce_sorted=False
    )
    _, h_n = bi(packed)  # forward after the last character, backward after reading back to the first
    by_hand = torch.nn.functional.normalize(m.fc(torch.cat([h_n[0], h_n[1]], dim=1)), dim=1)
    assert torch.allclose(m.embed_sentences(tokens, lengths), by_hand, atol=1e-6)


def test_liwe_parameter_counts_by_hand():
    m = tiny(char_dim=4)
    C, d, H, J, I, Ih = len(chars()), 4, 5, 3, 6, 7
    emb = C * d
    bigru = 2 * 3 * (H * d + H * H + 2 * H)
    fc = 2 * H * J + J
    image = (I * Ih + Ih) + 2 * Ih + (Ih * J + J)
    assert m.parameter_counts() == (emb + bigru + fc + image, bigru + fc + image)


def test_small_and_large_liwe():
    assert LIWE_SIZES == {"small": 24, "large": 120}
    small = LIWE(LIWEConfig(vocab_size=50, image_dim=6, char_dim=LIWE_SIZES["small"]))
    large = LIWE(LIWEConfig(vocab_size=50, image_dim=6, char_dim=LIWE_SIZES["large"]))
    assert large.parameter_counts()[0] > small.parameter_counts()[0]
    assert FAMILIES["liwe"] == (LIWE, LIWEConfig)
