"""CLC-A / CLC-C as evaluation protocols of a trained model (SMALR §3.4)."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from polyvse.evaluate.clc import clc_retrieval, clc_scores, evaluate_clc, version_texts
from polyvse.evaluate.retrieval import bidirectional_retrieval
from polyvse.text.vocab import Vocabulary

LANGS = ["en", "de", "fr", "cs", "zh", "ja", "ar", "af", "ko", "ru"]


class WordAngleModel(nn.Module):
    """Images and sentences on the unit circle: image i at angle i; a sentence at
    the angle its first word names ("a3" → 3 rad), whatever its language."""

    family = "test"

    def __init__(self, vocab: Vocabulary):
        super().__init__()
        self.vocab = vocab
        self.dummy = nn.Parameter(torch.zeros(1))

    def embed_images(self, features):
        a = features[:, 0]
        return torch.stack([torch.cos(a), torch.sin(a)], dim=1)

    def embed_sentences(self, tokens, lengths, langs=None):
        angles = torch.tensor([float(self.vocab.itos[int(t)][1][1:]) for t in tokens[:, 0]])
        return torch.stack([torch.cos(angles), torch.sin(angles)], dim=1)


def setup(langs):
    words = [f"a{i}" for i in range(6)]
    vocab = Vocabulary(langs, {l: words for l in langs})
    ids = [f"img{i}" for i in range(4)]
    features = np.array([[float(i)] for i in range(4)], dtype=np.float32)
    return vocab, ids, features


def captions(split, rows):
    return pd.DataFrame(
        [
            {"image_id": img, "split": split, "lang": lang, "cap_idx": k, "text": text, "origin": "human"}
            for img, lang, k, text in rows
        ]
    )


def test_version_texts_own_language_and_translations():
    queries = pd.DataFrame({"image_id": ["i0", "i1"], "lang": ["de", "de"], "cap_idx": [0, 0], "text": ["x", "y"]})
    tr = pd.DataFrame(
        {
            "image_id": ["i0", "i0", "i1"],
            "lang": ["de"] * 3,
            "cap_idx": [0, 0, 0],
            "tgt_lang": ["en", "fr", "en"],
            "text": ["x-en", "x-fr", "y-en"],
        }
    )
    assert version_texts(queries, tr, ["en", "de", "fr"]) == [["x-en", "x", "x-fr"], ["y-en", "y", None]]


def test_clc_scores_shape_nan_for_missing_and_average():
    vocab, ids, features = setup(["en", "de"])
    model = WordAngleModel(vocab)
    q = pd.DataFrame({"image_id": ["img0", "img1"], "lang": ["de", "de"], "cap_idx": [0, 0], "text": ["a0", "a1"]})
    tr = pd.DataFrame({"image_id": ["img0"], "lang": ["de"], "cap_idx": [0], "tgt_lang": ["en"], "text": ["a1"]})
    scores, column = clc_scores(model, vocab, q, tr, torch.from_numpy(features), {i: k for k, i in enumerate(ids)}, 5)
    assert scores.shape == (2, 2, 2) and column.tolist() == [0, 1]
    assert torch.isnan(scores[1, 0]).all()  # img1's query has no English translation
    assert scores[0, 1, 0] == pytest.approx(1.0)  # de "a0" vs image at angle 0
    assert scores[0, 0, 0] == pytest.approx(math.cos(1.0), abs=1e-6)  # its translation "a1" vs image 0
    res = clc_retrieval(scores, column, None)
    expected = bidirectional_retrieval(
        np.array([[(1 + math.cos(1)) / 2, (math.cos(1) + 1) / 2], [math.cos(1), 1.0]]), column
    )
    assert res.as_row() == expected.as_row()


def test_translations_that_agree_correct_a_wrong_query():
    # each de query names the wrong image; its translations into en and fr name the right one
    langs = ["en", "de", "fr"]
    vocab, ids, features = setup(langs)
    model = WordAngleModel(vocab)
    rows = [(f"img{i}", "de", 0, f"a{(i + 1) % 4}") for i in range(4)]
    caps = pd.concat([captions("test", rows), captions("val", rows)], ignore_index=True)
    tr = pd.DataFrame(
        [
            {"image_id": f"img{i}", "lang": "de", "cap_idx": 0, "tgt_lang": t, "text": f"a{i}"}
            for i in range(4)
            for t in ("en", "fr")
        ]
    )
    direct = bidirectional_retrieval(
        np.cos(np.subtract.outer([(i + 1) % 4 for i in range(4)], np.arange(4))), np.arange(4)
    )
    a, added_a = evaluate_clc(model, vocab, caps, features, ids, ["de"], 5, tr, "clc_a")
    c, added_c = evaluate_clc(model, vocab, caps, features, ids, ["de"], 5, tr, "clc_c", val_translations=tr)
    assert direct.as_row()["r1_t2i"] == 0.0
    assert a.loc[0, "r1_t2i"] == 100.0 and added_a == 0
    assert c.loc[0, "r1_t2i"] == 100.0 and added_c == 3 * 32 + 32
    assert list(a.columns[:4]) == ["lang", "test_source", "n_images", "n_sentences"]


def test_clc_c_adds_352_parameters_for_ten_languages():
    vocab, ids, features = setup(LANGS)
    model = WordAngleModel(vocab)
    rows = [(f"img{i}", "en", 0, f"a{i}") for i in range(4)]
    caps = pd.concat([captions("test", rows), captions("val", rows)], ignore_index=True)
    empty = pd.DataFrame(columns=["image_id", "lang", "cap_idx", "tgt_lang", "text"])
    _, added = evaluate_clc(model, vocab, caps, features, ids, ["en"], 5, empty, "clc_c", val_translations=empty)
    assert added == 352
    with pytest.raises(ValueError, match="validation"):
        evaluate_clc(model, vocab, caps, features, ids, ["en"], 5, empty, "clc_c")


def test_clc_c_on_uninformative_scores_does_not_collapse_to_ties():
    # a weak model: scores are noise. The fitted MLP must stay a positive weighting of
    # the languages (a constant output would tie every image and read as perfect recall)
    from polyvse.models.clc import CLCClassifier, fit_clc

    torch.manual_seed(0)
    scores = torch.rand(60, 10, 30) * 0.2 - 0.1
    truth = torch.arange(60) % 30
    clf = CLCClassifier(10)
    fit_clc(clf, scores, truth, iterations=30)
    with torch.no_grad():
        out = clf(torch.rand(20, 10, 30) * 0.2 - 0.1)
        assert float(out.std()) > 1e-4 and bool((clf.hidden_weight >= 0).all())
        assert torch.allclose(clf.hidden_weight.sum(dim=1), torch.ones(32))
        assert torch.allclose(clf.out_weight.sum(), torch.tensor(1.0))
    res = clc_retrieval(torch.rand(30, 10, 30), np.arange(30), clf)
    assert res.mean_recall < 60


def test_clc_c_weights_the_language_whose_translations_find_the_image():
    """SMALR §3.4: CLC-C learns a weighted ensemble. Language 0's scores single out the right
    image, language 1's a little, the other eight are noise: after the 30 iterations language 0
    weighs most and noise least, and CLC-C retrieves better than CLC-A's equal weights."""
    from polyvse.models.clc import CLCClassifier, fit_clc

    torch.manual_seed(0)
    q, n = 200, 100
    truth = torch.arange(q) % n

    def scores():
        s = torch.rand(q, 10, n) * 0.2 - 0.1
        s[torch.arange(q), 0, truth] += 0.15
        s[torch.arange(q), 1, truth] += 0.05
        return s

    clf = CLCClassifier(10)
    fit_clc(clf, scores(), truth)
    weight = clf.language_weights().detach()
    assert float(weight.sum()) == pytest.approx(1.0)
    assert weight[0] > weight[1] > weight[2:].max() and weight[0] > 0.2, weight
    test = scores()
    assert clc_retrieval(test, truth.numpy(), clf).mean_recall > clc_retrieval(test, truth.numpy(), None).mean_recall


def test_clc_c_moves_away_from_clc_a_when_every_language_helps_unequally():
    """Every language's scores point at the right image (all gradients share a sign), language 0's
    most: the learned weights must still differ (plain weights under Adam stay equal here)."""
    from polyvse.models.clc import CLCClassifier, fit_clc

    torch.manual_seed(1)
    q, n = 200, 100
    truth = torch.arange(q) % n
    s = torch.rand(q, 10, n) * 0.2 - 0.1
    s[torch.arange(q), :, truth] += torch.linspace(0.12, 0.02, 10)  # every language informative, less and less
    clf = CLCClassifier(10)
    losses = fit_clc(clf, s, truth)
    weight = clf.language_weights().detach()
    assert losses[-1] < losses[0] and weight[0] > 1.5 * weight[-1], weight
