import torch

from polyvse.models.embn import EmbN, EmbNConfig
from polyvse.text.vocab import Vocabulary


def tiny():
    torch.manual_seed(0)
    return EmbN(EmbNConfig(vocab_size=20, image_dim=6, word_dim=5, gru_hidden=7, image_hidden=9, joint_dim=4))


def test_shapes_and_unit_norm():
    m = tiny().eval()
    img = m.embed_images(torch.randn(3, 6))
    txt = m.embed_sentences(torch.randint(1, 20, (5, 4)), torch.tensor([4, 2, 1, 3, 4]))
    assert img.shape == (3, 4) and txt.shape == (5, 4)
    assert torch.allclose(img.norm(dim=1), torch.ones(3)) and torch.allclose(txt.norm(dim=1), torch.ones(5))


def test_padding_does_not_change_a_sentence():
    m = tiny().eval()
    short = m.embed_sentences(torch.tensor([[3, 4, 5]]), torch.tensor([3]))
    padded = m.embed_sentences(torch.tensor([[3, 4, 5, 0, 0, 0]]), torch.tensor([3]))
    assert torch.allclose(short, padded, atol=1e-6)


def test_parameter_counts_by_hand():
    m = tiny()
    emb = 20 * 5
    gru = 3 * (7 * 5 + 7 * 7 + 2 * 7)  # W_ih, W_hh, b_ih, b_hh for three gates
    text_fc = 7 * 4 + 4
    image = (6 * 9 + 9) + 2 * 9 + (9 * 4 + 4)  # FC, BatchNorm (weight, bias), FC
    train, test = m.parameter_counts()
    assert train == emb + gru + text_fc + image
    assert test == train - emb


def test_vocabulary_keeps_languages_apart():
    v = Vocabulary.from_counts({"en": {"red": 3, "rare": 1}, "de": {"rot": 2}}, min_count=2)
    assert v.encode("red rare", "en") == [v.stoi[("en", "red")], v.stoi[("en", "<unk>")]]
    assert v.encode("rot", "de") != v.encode("red", "en")
    assert Vocabulary.from_state_dict(v.state_dict()).stoi == v.stoi
