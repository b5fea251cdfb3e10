"""The joint text + speech + image family: model views, the datapoints of a split,
any-to-any retrieval, training with resumable checkpoints, and its config checks."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from polyvse.config import ConfigError
from polyvse.plan import check_references
from polyvse.models.joint import build_joint_model
from polyvse.speech.data import view_set
from polyvse.evaluate.speech import ordered_pair_retrieval, pair_retrieval
from polyvse.evaluate.views import ordered_from_view_pairs
from polyvse.speech.store import open_store, write_store
from polyvse.text.vocab import Vocabulary
from polyvse.data.tables import spoken_captions
from polyvse.models.trained import load_model
from polyvse.train.joint import embed_joint_views, joint_views, train_joint
from polyvse.train.joint_settings import joint_variant_settings

# the speech tests' tiny audio encoders and their training settings (tests/ is on the path under pytest)
from test_speech_pipeline import SMALL_MODEL as SPEECH_MODEL
from test_speech_pipeline import TRAINING as SPEECH_TRAINING

REPO = Path(__file__).resolve().parents[1]
LANGS = ["en", "hi", "ja"]
TEXT = {"word_dim": 6, "universal_dim": 8, "gru_hidden": 8, "text_dropout": 0.0, "word_vectors": "random"}
TRAINING = {**SPEECH_TRAINING, "epochs": 2, "loss": "infonce"}


def _captions(ids: list[str], splits: list[str]) -> pd.DataFrame:
    """Two captions an image in en, hi and ja: caption 0 names the image, caption 1 does not."""
    rows = []
    for k, (image_id, split) in enumerate(zip(ids, splits)):
        for lang in LANGS:
            rows.append(dict(image_id=image_id, split=split, lang=lang, cap_idx=0, text=f"w{k} {lang}", origin="human"))
            rows.append(dict(image_id=image_id, split=split, lang=lang, cap_idx=1, text="other", origin="human"))
    return pd.DataFrame(rows)


def _stores(tmp_path: Path, ids: list[str]) -> dict:
    rng = np.random.default_rng(0)
    stores = {}
    for li, lang in enumerate(LANGS):
        frames = []
        for i in range(len(ids)):
            f = rng.normal(0, 0.1, (10 + int(rng.integers(0, 20)), 40)).astype(np.float32)
            f[:, i % 40] += 4.0 + li
            frames.append(f)
        write_store(tmp_path / f"{lang}.npz", ids, frames)
        stores[lang] = open_store(tmp_path / f"{lang}.npz")
    return stores


def _utterances(ids: list[str], splits: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"image_id": i, "split": s, "lang": l, "path": f"wav/{l}/{i}.wav"} for l in LANGS for i, s in zip(ids, splits)]
    )


def _vocab(n: int) -> Vocabulary:
    return Vocabulary(LANGS, {l: [f"w{k}" for k in range(n)] + [l, "other"] for l in LANGS})


# ----------------------------------------------------------------------------- the model


def test_joint_model_embeds_every_view_in_one_space():
    model = build_joint_model({**SPEECH_MODEL, "text": TEXT}, LANGS, ["en", "ja"], image_dim=5, vocab_size=20).eval()
    assert model.view_names == ["image", "speech-en", "speech-hi", "speech-ja", "text-en", "text-ja"]
    batch = {
        "image": torch.randn(3, 5),
        "speech": {l: (torch.randn(3, 30, 40), torch.tensor([30, 12, 20])) for l in LANGS},
        "text": {l: (torch.randint(1, 20, (3, 4)), torch.tensor([4, 2, 3])) for l in ("en", "ja")},
    }
    views = model.views(batch)
    assert [tuple(v.shape) for v in views] == [(3, 8)] * 6
    # a sentence's embedding ignores the padding after it
    tokens, lengths = batch["text"]["en"]
    alone = model.embed_text("en", tokens[1:2, :2], lengths[1:2])
    assert torch.allclose(alone, views[4][1:2], atol=1e-6)
    # the language's own FC: the same token ids read as Japanese embed differently
    assert not torch.allclose(model.embed_text("ja", tokens, lengths), views[4])
    with pytest.raises(KeyError, match="no written language 'hi'"):
        model.embed_text("hi", tokens, lengths)


def test_text_only_and_speech_only_joint_models():
    text_only = build_joint_model({**SPEECH_MODEL, "text": TEXT}, [], LANGS, image_dim=5, vocab_size=20)
    assert text_only.view_names == ["image", "text-en", "text-hi", "text-ja"] and text_only.audio is None
    assert text_only.embed_dim == SPEECH_MODEL["widths"][-1]
    speech_only = build_joint_model({**SPEECH_MODEL, "text": TEXT}, LANGS, [], image_dim=5, vocab_size=0)
    assert speech_only.view_names == ["image", "speech-en", "speech-hi", "speech-ja"] and speech_only.text is None
    with pytest.raises(ValueError, match="needs spoken or written languages"):
        build_joint_model({**SPEECH_MODEL, "text": TEXT}, [], [], image_dim=5, vocab_size=0)


# ----------------------------------------------------------------------------- datapoints


def test_spoken_captions_prefer_the_spoken_caption():
    caps = _captions(["a", "b"], ["train", "test"])
    chosen = spoken_captions(caps, "train", ["en", "ja"], cap_idx=0)
    assert chosen["text"].tolist() == ["w0 en", "w0 ja"]
    assert spoken_captions(caps, "train", ["en"], cap_idx=1)["text"].tolist() == ["other"]
    # an image without the spoken caption index gets its first one
    assert spoken_captions(caps, "train", ["en"], cap_idx=7)["text"].tolist() == ["w0 en"]


def test_joint_views_align_speech_and_text_and_drop_incomplete_images(tmp_path):
    ids = [f"im{i}" for i in range(6)]
    stores = _stores(tmp_path, ids)
    index = {i: 5 - k for k, i in enumerate(ids)}  # feature rows reversed
    speech = view_set(_utterances(ids, ["train"] * 6), "train", stores, index, LANGS)
    caps = _captions(ids, ["train"] * 6)
    caps = caps[~((caps["image_id"] == "im2") & (caps["lang"] == "hi"))]  # im2 has no Hindi caption
    vocab = _vocab(6)
    views = joint_views(caps, "train", ["en", "hi"], vocab, 10, 0, index, speech)
    assert views.image_ids == ["im0", "im1", "im3", "im4", "im5"] and views.speech.image_ids == views.image_ids
    assert views.image_rows.tolist() == [5, 4, 2, 1, 0]
    batch = views.batch([2, 0], torch.arange(6, dtype=torch.float32).unsqueeze(1), "cpu")
    assert batch["image"][:, 0].tolist() == [2.0, 5.0]
    tokens, lengths = batch["text"]["hi"]
    assert [vocab.itos[int(t)][1] for t in tokens[0, : int(lengths[0])]] == ["w3", "hi"]
    x, _ = batch["speech"]["ja"]
    assert int(x[0].mean(0).argmax()) == 3  # the utterance of im3
    text_only = joint_views(caps, "train", ["en"], vocab, 10, 0, index, None)
    assert text_only.image_ids == ids and text_only.speech is None
    with pytest.raises(ValueError, match="no val image has every view"):
        joint_views(caps, "val", ["en"], vocab, 10, 0, index, None)


# ----------------------------------------------------------------------------- any-to-any retrieval


def test_ordered_pair_retrieval_by_hand():
    a = np.eye(4, dtype=np.float32)
    b = np.eye(4, dtype=np.float32)[[1, 0, 2, 3]]  # items 0 and 1 swapped
    table = ordered_pair_retrieval({"image": a, "text-en": b}, ["image", "text-en"])
    assert table[["query", "target"]].values.tolist() == [["image", "text-en"], ["text-en", "image"]]
    assert table["r1"].tolist() == [50.0, 50.0] and table["r5"].tolist() == [100.0, 100.0]
    assert table["mr"].iloc[0] == pytest.approx((50 + 100 + 100) / 3) and (table["n"] == 4).all()
    three = ordered_pair_retrieval({v: a for v in ("image", "x", "y")}, ["image", "x", "y"])
    assert len(three) == 6 and (three["r1"] == 100.0).all()


def test_ordered_rows_of_a_thesis_evaluation_read_each_direction():
    rng = np.random.default_rng(0)
    emb = {k: rng.normal(size=(12, 4)).astype(np.float32) for k in ("image", "en", "hi")}
    thesis = pair_retrieval(emb, ["en", "hi"])
    ordered = ordered_from_view_pairs(thesis, {"image": "image", "en": "speech-en", "hi": "speech-hi"})
    direct = ordered_pair_retrieval(
        {"image": emb["image"], "speech-en": emb["en"], "speech-hi": emb["hi"]}, ["image", "speech-en", "speech-hi"]
    )
    merged = direct.merge(ordered, on=["query", "target"], suffixes=("", "_thesis"))
    assert len(merged) == 6
    for col in ("r1", "r5", "r10", "mr", "medr"):
        assert np.allclose(merged[col], merged[f"{col}_thesis"]), col


# ----------------------------------------------------------------------------- training


def _joint_data(tmp_path: Path):
    ids = [f"im{i}" for i in range(24)]
    splits = ["train"] * 16 + ["val"] * 8
    stores = _stores(tmp_path, ids)
    index = {i: k for k, i in enumerate(ids)}
    features = np.random.default_rng(1).normal(size=(24, 5)).astype(np.float32)
    caps, vocab = _captions(ids, splits), _vocab(24)
    speech = {s: view_set(_utterances(ids, splits), s, stores, index, LANGS) for s in ("train", "val")}
    views = {s: joint_views(caps, s, LANGS, vocab, 10, 0, index, speech[s]) for s in ("train", "val")}
    return views, features, vocab


def _settings(**training) -> dict:
    return {"model": {**SPEECH_MODEL, "text": TEXT}, "training": {**TRAINING, **training}, "seed": 0}


def test_train_joint_saves_a_model_that_embeds_the_same_and_resumes(tmp_path):
    torch.set_num_threads(1)
    views, features, vocab = _joint_data(tmp_path)
    trained = train_joint(
        views["train"], views["val"], features, vocab, None, _settings(), tmp_path / "a", progress=False
    )
    assert len(trained.fit.log) == 2 and trained.summary()["views"][-1] == "text-ja"
    model, vocab_back = load_model(copy.deepcopy(trained.saved()))
    assert vocab_back.itos == vocab.itos
    feats = torch.from_numpy(features)
    before = embed_joint_views(trained.model, views["val"], feats, 3)
    after = embed_joint_views(model, views["val"], feats, 5)  # another batching: the same embeddings
    for view in before:
        assert np.allclose(before[view], after[view], atol=1e-5), view
    # a run stopped after epoch 2 of 3 resumes from its checkpoint and ends where an uninterrupted one does
    whole = train_joint(
        views["train"], views["val"], features, vocab, None, _settings(epochs=3), tmp_path / "b", progress=False
    )
    train_joint(
        views["train"], views["val"], features, vocab, None, _settings(epochs=3), tmp_path / "c", progress=False
    )
    resumed = train_joint(
        views["train"], views["val"], features, vocab, None, _settings(epochs=3), tmp_path / "c", progress=False
    )
    assert resumed.fit.resumed_from == 3
    for key, value in whole.model.state_dict().items():
        assert torch.equal(value, resumed.model.state_dict()[key]), key


def test_a_text_only_joint_model_trains_without_speech(tmp_path):
    torch.set_num_threads(1)
    ids = [f"im{i}" for i in range(24)]
    splits = ["train"] * 16 + ["val"] * 8
    index = {i: k for k, i in enumerate(ids)}
    caps, vocab = _captions(ids, splits), _vocab(24)
    views = {s: joint_views(caps, s, LANGS, vocab, 10, 0, index, None) for s in ("train", "val")}
    vectors = torch.randn(len(vocab), TEXT["word_dim"])
    trained = train_joint(
        views["train"],
        views["val"],
        np.eye(24, 5, dtype=np.float32),
        vocab,
        vectors,
        _settings(),
        tmp_path,
        progress=False,
    )
    assert trained.model.view_names == ["image", "text-en", "text-hi", "text-ja"]
    assert trained.max_frames == {}


# ----------------------------------------------------------------------------- config


def _default() -> dict:
    """The default config as snakemake sees it after the schema filled its defaults."""
    from snakemake.utils import validate

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    validate(config, str(REPO / "config" / "schema.yaml"))
    return config


def test_default_joint_settings_merge_speech_and_text_settings():
    config = _default()
    settings = joint_variant_settings(config, "joint")
    assert settings["speech_langs"] == settings["text_langs"] == LANGS
    assert settings["model"]["widths"] == config["speech"]["model"]["widths"]
    assert settings["model"]["text"]["universal_dim"] == config["models"]["joint"]["universal_dim"]
    assert settings["training"]["epochs"] == config["speech"]["training"]["epochs"]
    assert joint_variant_settings(config, "joint_text")["speech_langs"] == []


@pytest.mark.parametrize(
    "change, key",
    [
        (lambda c: c["variants"]["joint"].update(model_options={"lr": 1}), "variants.joint.model_options.lr"),
        (lambda c: c["variants"]["joint"].update(training_options={"gru_hidden": 1}), "training_options.gru_hidden"),
        (lambda c: c["variants"]["joint"].update(training_options={"loss_options": {"margin": 1}}), "loss_options"),
        (lambda c: c["variants"]["embn_en"].update(speech_langs=["en"]), "variants.embn_en.speech_langs"),
        (
            lambda c: c["variants"]["joint"].update(dataset="m30k", train_langs=["en"], speech_langs=["en"]),
            "datasets.m30k.synthetic.profile",
        ),
        (lambda c: c["reports"]["any_to_any"]["rows"].reverse(), "reports.any_to_any.rows[0]"),
        (lambda c: c["reports"]["any_to_any"]["rows"][1].update(variant="embn_en"), "reports.any_to_any.rows[1]"),
        (lambda c: c["reports"]["table2"]["rows"][0].update(variant="joint"), "reports.table2.rows[0]"),
    ],
)
def test_joint_config_errors_name_their_key(change, key):
    config, schema = _default(), yaml.safe_load((REPO / "config" / "schema.yaml").read_text())
    check_references(config, schema)  # the default is valid
    change(config)
    with pytest.raises(ConfigError) as err:
        check_references(config, schema)
    assert key in str(err.value)
