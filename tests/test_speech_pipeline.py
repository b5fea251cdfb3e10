"""The grounded-speech pipeline around the encoders: utterance tables and lists, view sets,
pairwise retrieval, training with resumable checkpoints, the thesis tables, config checks."""

from __future__ import annotations

import copy
import itertools
import os
import inspect

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
import torch
import yaml
from pathlib import Path

from polyvse.config import ConfigError, check_config
from polyvse.speech.settings import SPEECH_LOSS_OPTIONS, check_speech_config, speech_variant_settings
from polyvse.errors import InputError
from polyvse.speech.data import view_set
from polyvse.evaluate.retrieval import bidirectional_retrieval
from polyvse.io import load_torch, save_torch
from polyvse.models.trained import load_model
from polyvse.evaluate.speech import diagonal_ranks, diagonal_recalls, mean_recall, pair_retrieval
from polyvse.evaluate.views import view_pairs
from polyvse.models.grounded_speech import build_speech_model, parameter_groups
from polyvse.losses.speech_objectives import OBJECTIVES, make_objective
from polyvse.report.speech import block_columns, chance_note, speech_markdown, speech_table, table_notes
from polyvse.speech.store import extraction_processes, open_store, write_store
from polyvse.train.speech import (
    RECALIBRATION_STREAM,
    fit_multiview,
    steps_per_epoch,
    train_speech,
)
from polyvse.train.batch_norm import batch_norms, recalibrate_batch_norm
from polyvse.speech.utterances import read_utterance_list, synthetic_requests, validate_utterances
from polyvse.train.loop import run_epochs

# POLYVSE_TEST_DEVICE=cuda runs these trainings on a GPU (bench/cuda_session.sh); CI has the CPU
DEVICE = os.environ.get("POLYVSE_TEST_DEVICE", "cpu")

REPO = Path(__file__).resolve().parents[1]
LANGS = ["en", "hi", "ja"]


# ----------------------------------------------------------------------------- utterance tables


def _captions(n: int = 3) -> pd.DataFrame:
    rows = []
    for i in range(n):
        for lang in LANGS:
            for cap in (0, 1):
                rows.append(
                    {
                        "image_id": f"im{i}",
                        "split": "train" if i else "test",
                        "lang": lang,
                        "cap_idx": cap,
                        "text": f"{lang} caption {cap} of {i}",
                        "origin": "human",
                    }
                )
    return pd.DataFrame(rows)


def test_synthetic_requests_one_utterance_per_image_and_language(tmp_path):
    table, requests = synthetic_requests(_captions(), LANGS, tmp_path)
    assert list(table.columns) == ["image_id", "split", "lang", "path"]
    assert len(table) == 9 and table.groupby("lang").size().tolist() == [3, 3, 3]
    assert table["path"].iloc[4] == "wav/hi/im1.wav" and table["split"].iloc[3] == "test"
    assert [r.text for r in requests[:2]] == ["en caption 0 of 0", "en caption 0 of 1"]  # cap_idx 0 only
    assert requests[4].key == "hi/im1" and requests[4].path == str(tmp_path / "wav/hi/im1.wav")
    second, _ = synthetic_requests(_captions(), ["ja"], tmp_path, cap_idx=1)
    assert len(second) == 3
    no_hi = _captions()[lambda d: ~((d["lang"] == "hi") & (d["image_id"] == "im2"))]
    with pytest.raises(InputError, match="1 images have no hi caption 0"):
        synthetic_requests(no_hi, LANGS, tmp_path)


def test_validate_utterances_refuses_duplicates_and_split_changes():
    ok = pd.DataFrame({"image_id": ["a", "a"], "split": ["val", "val"], "lang": ["en", "hi"], "path": ["x", "y"]})
    assert validate_utterances(ok, "t").shape == (2, 4)
    with pytest.raises(InputError, match="second utterance"):
        validate_utterances(ok.assign(lang=["en", "en"]), "t")
    with pytest.raises(InputError, match="two splits"):
        validate_utterances(ok.assign(split=["val", "test"]), "t")
    with pytest.raises(InputError, match="split 'dev'"):
        validate_utterances(ok.assign(split=["dev", "dev"]), "t")


def _wav(path: Path, seconds: float = 0.2) -> str:
    sf.write(str(path), (0.1 * np.sin(np.arange(int(16000 * seconds)) / 5)).astype(np.float32), 16000, subtype="PCM_16")
    return path.name


def _write_list(path: Path, rows: list[list[str]], sep: str = "\t", header=("image_id", "split", "lang", "wav")):
    path.write_text("\n".join(sep.join(r) for r in [list(header), *rows]) + "\n", encoding="utf-8")
    return path


def test_utterance_list_skips_other_languages_and_incomplete_images(tmp_path):
    rows = []
    for i, split in enumerate(["train", "train", "test"]):
        for lang in ["en", "hi", "de"]:
            rows.append([f"p{i}", split, lang, _wav(tmp_path / f"p{i}_{lang}.wav")])
    rows.append(["p3", "val", "en", _wav(tmp_path / "p3_en.wav")])  # no Hindi: left out
    listed = _write_list(
        tmp_path / "list.csv",
        [r + [f"img/p{r[0][1:]}.jpg"] for r in rows],
        sep=",",
        header=("image_id", "split", "lang", "wav", "image"),
    )
    utt, images, counts = read_utterance_list(listed, ["en", "hi"], images_dir="/data/places")
    assert counts == {"rows": 10, "other_language_rows": 3, "incomplete_images": 1, "images": 3}
    assert utt["lang"].tolist() == ["en"] * 3 + ["hi"] * 3
    assert utt["path"].iloc[0] == str(tmp_path / "p0_en.wav")  # relative to the list
    assert images.to_dict("list") == {
        "image_id": ["p0", "p1", "p2"],
        "split": ["train", "train", "test"],
        "path": [f"/data/places/img/p{i}.jpg" for i in range(3)],
    }


def test_utterance_list_bad_wavs_name_the_file_and_line(tmp_path):
    good = [_wav(tmp_path / "a_en.wav"), _wav(tmp_path / "a_hi.wav")]
    cases = {"missing.wav": "does not exist", "empty.wav": "empty", "text.wav": "not a WAV", "short.wav": "truncated"}
    (tmp_path / "empty.wav").write_bytes(b"")
    (tmp_path / "text.wav").write_text("hello")
    data = (tmp_path / "a_en.wav").read_bytes()
    (tmp_path / "short.wav").write_bytes(data[: len(data) // 2])  # header promises twice the audio
    for name, reason in cases.items():
        listed = _write_list(
            tmp_path / "l.tsv",
            [
                ["a", "train", "en", good[0]],
                ["a", "train", "hi", good[1]],
                ["b", "train", "en", good[0]],
                ["b", "train", "hi", name],
            ],
        )
        with pytest.raises(InputError, match=reason) as err:
            read_utterance_list(listed, ["en", "hi"])
        assert err.value.where == str(tmp_path / name)
        assert f"{listed}, line 5" in str(err.value)


def test_utterance_list_format_errors_name_the_line(tmp_path):
    wav = _wav(tmp_path / "a.wav")
    with pytest.raises(InputError, match="missing column"):
        read_utterance_list(
            _write_list(tmp_path / "l.tsv", [["a", "train", "en"]], header=("image_id", "split", "lang")), ["en"]
        )
    bad = _write_list(tmp_path / "l.tsv", [["a", "train", "en", wav], ["b", "dev", "en", wav]])
    with pytest.raises(InputError, match="split 'dev'") as err:
        read_utterance_list(bad, ["en"])
    assert err.value.line == 3
    dup = _write_list(tmp_path / "l.tsv", [["a", "train", "en", wav], ["a", "train", "en", wav]])
    with pytest.raises(InputError, match="second utterance") as err:
        read_utterance_list(dup, ["en"])
    assert err.value.line == 3
    with pytest.raises(InputError, match="does not exist"):
        read_utterance_list(tmp_path / "nope.tsv", ["en"])


# ----------------------------------------------------------------------------- view sets


def _toy_stores(tmp_path: Path, ids: list[str], langs=LANGS, seed: int = 0) -> dict:
    """Per-language stores whose utterance i has a length and frames that encode its image."""
    rng = np.random.default_rng(seed)
    stores = {}
    for li, lang in enumerate(langs):
        feats = []
        for i, _ in enumerate(ids):
            t = 20 + int(rng.integers(0, 30))
            base = np.zeros((t, 40), np.float32)
            base[:, i % 40] = 5.0 + li  # the image index is readable from the frames
            feats.append(base + rng.normal(0, 0.1, (t, 40)).astype(np.float32))
        # store order differs from the image order: the view set must look rows up by key
        order = rng.permutation(len(ids))
        write_store(tmp_path / f"{lang}.npz", [ids[j] for j in order], [feats[j] for j in order])
        stores[lang] = open_store(tmp_path / f"{lang}.npz")
    return stores


def _toy_utterances(ids: list[str], splits: list[str], langs=LANGS) -> pd.DataFrame:
    return pd.DataFrame(
        [{"image_id": i, "split": s, "lang": l, "path": f"wav/{l}/{i}.wav"} for l in langs for i, s in zip(ids, splits)]
    )


def test_view_set_aligns_stores_by_image_and_truncates(tmp_path):
    ids = [f"im{i}" for i in range(40)]
    stores = _toy_stores(tmp_path, ids)
    utt = _toy_utterances(ids, ["train"] * 30 + ["val"] * 10)
    index = {i: 39 - k for k, i in enumerate(ids)}  # feature rows reversed
    train = view_set(utt, "train", stores, index, LANGS)
    assert len(train) == 30 and train.image_rows[:3].tolist() == [39, 38, 37]
    assert np.array_equal(stores["hi"][train.store_rows["hi"][7]], stores["hi"][stores["hi"].row("im7")])
    cut = train.truncated(0.05)  # ⌊0.05·30⌋ = 1 utterance cut per language
    for lang in LANGS:
        lengths = np.sort(train.lengths(lang))
        assert cut.max_frames[lang] == lengths[-2]
    features = torch.arange(40, dtype=torch.float32).unsqueeze(1).repeat(1, 3)
    batch = cut.batch([7, 2], features)
    assert batch["image"][:, 0].tolist() == [32.0, 37.0]
    x, lengths = batch["speech"]["ja"]
    assert x.shape[0] == 2 and int(lengths.max()) <= cut.max_frames["ja"]
    assert int(x[0, 0].argmax()) == 7  # the utterance of image 7
    with pytest.raises(KeyError, match="no image features"):
        view_set(utt, "val", stores, {i: 0 for i in ids[:35]}, LANGS)
    with pytest.raises(ValueError, match="no test image"):
        view_set(utt, "test", stores, index, LANGS)


# ----------------------------------------------------------------------------- retrieval


def test_view_pairs_follow_the_thesis_columns():
    assert [p[0] for p in view_pairs(LANGS)] == ["E&I", "H&I", "J&I", "H&E", "J&E", "J&H"]
    assert view_pairs(LANGS)[3][1:] == ("hi", "en", "cross")
    assert block_columns(LANGS, "image")[:4] == ["E&I.R1", "H&I.R1", "J&I.R1", "E&I.R5"]
    assert block_columns(LANGS, "cross")[-1] == "J&H.R10"


def test_pair_retrieval_by_hand():
    n = 12
    eye = np.eye(n, dtype=np.float32)
    # en retrieves the image perfectly; hi points mostly at the previous datapoint's image
    emb = {"image": eye, "en": 2 * eye, "hi": np.roll(eye, 1, axis=0) + 0.5 * eye, "ja": eye + 0.1}
    table = pair_retrieval(emb, LANGS).set_index("pair")
    assert table.loc["E&I", ["r1", "r5", "r10"]].tolist() == [100.0, 100.0, 100.0]
    # hi row i scores 1 with image i-1, 0.5 with its own image and 0 with the rest: exactly one
    # score is higher than the truth's, so the truth ranks 2 in both directions
    assert table.loc["H&I", "r1_ab"] == 0.0 and table.loc["H&I", "r5_ab"] == 100.0
    assert table.loc["H&I", "medr_ab"] == 2.0 and table.loc["H&I", "medr_ba"] == 2.0
    assert table.loc["J&H", "r1"] == 0.0
    assert table.loc["H&E", "n"] == n
    # a dot product favours long vectors; normalising (hypersphere, §3.1.3) removes that
    skew = {"image": eye, "en": eye.copy(), "hi": eye, "ja": eye}
    skew["en"][0] = 3.0  # a long en vector: with dot products it outscores every image's own utterance
    dot = pair_retrieval(skew, LANGS).set_index("pair")
    cos = pair_retrieval(skew, LANGS, normalize=True).set_index("pair")
    assert dot.loc["E&I", "r1_ba"] == pytest.approx(100 / 12) and cos.loc["E&I", "r1_ba"] == 100.0
    assert mean_recall(table, "image") == pytest.approx(
        table.loc[["E&I", "H&I", "J&I"], ["r1", "r5", "r10"]].to_numpy().mean()
    )


def test_ties_count_against_the_truth_as_in_the_text_metric():
    """One convention (polyvse.evaluate.retrieval.pessimistic_ranks): rank = 1 + others scoring >= the truth."""
    scores = np.array(
        [
            [0.5, 0.5, 0.5, 0.1],  # two others tie with the truth → rank 3
            [0.2, 0.9, 0.3, 0.9],  # one other ties → rank 2
            [0.0, 0.0, 0.7, 0.0],  # alone at the top → rank 1
            [0.4, 0.4, 0.4, 0.4],
        ],  # everything ties → rank 4 (last)
        dtype=np.float32,
    )
    assert diagonal_ranks(scores).tolist() == [3, 2, 1, 4]
    recalls, medr = diagonal_recalls(scores, (1, 2, 3))
    assert recalls == {1: 25.0, 2: 50.0, 3: 75.0} and medr == 2.5
    # the columns as queries: only column 3's truth (0.4) has an other at or above it (0.9)
    assert diagonal_ranks(scores.T).tolist() == [1, 1, 1, 2]
    recalls, medr = diagonal_recalls(scores.T, (1, 2))
    assert recalls == {1: 75.0, 2: 100.0} and medr == 1.0
    # a collapsed model ranks every truth last: 0 %, never a free hit
    n = 20
    same = {v: np.ones((n, 4), np.float32) for v in ["image", *LANGS]}
    table = pair_retrieval(same, LANGS)
    assert (table[["r1", "r5", "r10"]].to_numpy() == 0.0).all()
    assert (table[["medr_ab", "medr_ba"]].to_numpy() == n).all()
    # the same ranks as the text metric (one caption per image), ties or not
    rng = np.random.default_rng(0)
    tied = rng.integers(0, 3, size=(30, 30)).astype(np.float32)  # many ties
    backbone = bidirectional_retrieval(tied, np.arange(30))
    assert diagonal_recalls(tied)[0] == pytest.approx(backbone.t2i)
    assert diagonal_recalls(tied.T)[0] == pytest.approx(backbone.i2t)
    assert diagonal_recalls(tied)[1] == backbone.medr_t2i and diagonal_recalls(tied.T)[1] == backbone.medr_i2t
    with pytest.raises(ValueError, match="square"):
        diagonal_ranks(np.zeros((3, 4)))


# ----------------------------------------------------------------------------- model, training, resume

SMALL_MODEL = {
    "widths": [8, 8, 8],
    "kernel": 3,
    "convs_per_stage": 2,
    "convs_per_residual": 2,
    "pooling": "avg",
    "length_rule": "strides",
    "heads": 2,
    "dropout": 0.1,
    "use_cls": True,
    "ff_dim": 16,
    "internal_attention": False,
    "sharing": "none",
    "lang_dim": 4,
}
TRAINING = {
    "epochs": 3,
    "batch_size": 8,
    "lr": 0.01,
    "attention_lr": None,
    "weight_decay": 0.0,
    "warmup_fraction": 0.1,
    "decay": 0.99,
    "decay_every": 2,
    "grad_clip": 0.0,
    "truncate_fraction": 0.05,
    "loss": "mms_sched",
    "loss_options": {},
    "framework": "full_graph",
    "eval_batch_size": 5,
    "bn_recalibration_batches": 4,
    "device": DEVICE,
    "amp": "off",
}


def test_parameter_groups_give_attention_layers_their_rate():
    model = build_speech_model({**SMALL_MODEL, "pooling": "mhsa"}, LANGS, 6)
    groups = parameter_groups(model, 1e-3, 1e-4)
    attention = {id(p) for p in model.attention_parameters()}
    assert groups[1]["lr"] == 1e-4 and {id(p) for p in groups[1]["params"]} == attention and attention
    assert sum(len(g["params"]) for g in groups) == len(list(model.parameters()))
    assert len(parameter_groups(model, 1e-3, None)) == 1
    views = model.views(
        {"image": torch.zeros(2, 6), "speech": {l: (torch.zeros(2, 10, 40), torch.tensor([10, 4])) for l in LANGS}}
    )
    assert len(views) == 4 and all(v.shape == (2, 8) for v in views)


def test_steps_per_epoch_drops_a_lone_datapoint():
    assert steps_per_epoch(10, 4) == 3 and steps_per_epoch(9, 4) == 2 and steps_per_epoch(8, 4) == 2


def _toy_data(tmp_path):
    ids = [f"im{i}" for i in range(30)]
    stores = _toy_stores(tmp_path, ids)
    utt = _toy_utterances(ids, ["train"] * 20 + ["val"] * 10)
    index = {i: k for k, i in enumerate(ids)}
    features = np.eye(30, 6, dtype=np.float32) + np.random.default_rng(1).normal(0, 0.1, (30, 6)).astype(np.float32)
    return (view_set(utt, "train", stores, index, LANGS), view_set(utt, "val", stores, index, LANGS), features)


def test_training_resumes_where_it_stopped(tmp_path):
    torch.set_num_threads(1)
    train, val, features = _toy_data(tmp_path)
    settings = {"model": SMALL_MODEL, "training": TRAINING, "seed": 3}
    whole = train_speech(train, val, features, settings, tmp_path / "whole", progress=False)
    assert list(whole.fit.log["epoch"]) == [1, 2, 3] and 1 <= whole.fit.best_epoch <= 3
    assert {"loss", "val_recall", "val_image_recall", "val_cross_recall"} <= set(whole.fit.log.columns)
    # the scheduled margin advanced once per optimiser step (3 steps an epoch)
    last = load_torch(tmp_path / "whole" / "last.pt")  # weights_only=True: plain data only
    assert int(last["state"]["objective"]["steps"]) == 9 and last["state"]["scheduler"]["last_epoch"] == 9

    # a run killed after its second epoch: the checkpoint of epoch 2 is what remains
    calls = {"n": 0}
    import polyvse.train.speech as speech_train

    original = speech_train.retrieval_scores

    def dying(table):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt("killed")
        return original(table)

    speech_train.retrieval_scores = dying
    try:
        with pytest.raises(KeyboardInterrupt):
            train_speech(train, val, features, settings, tmp_path / "killed", progress=False)
    finally:
        speech_train.retrieval_scores = original
    resumed = train_speech(train, val, features, settings, tmp_path / "killed", progress=False)
    assert resumed.fit.resumed_from == 2
    cols = ["epoch", "loss", "val_recall"]
    pd.testing.assert_frame_equal(resumed.fit.log[cols], whole.fit.log[cols])
    for k, v in whole.model.state_dict().items():
        assert torch.allclose(v.float(), resumed.model.state_dict()[k].float(), atol=1e-6), k
    # other settings: the old checkpoint is not resumed
    other = train_speech(train, val, features, {**settings, "seed": 4}, tmp_path / "killed", progress=False)
    assert other.fit.resumed_from == 0
    save_torch(whole.saved(), tmp_path / "model.pt")
    rebuilt, _ = load_model(load_torch(tmp_path / "model.pt"))
    x = (torch.randn(2, 30, 40), torch.tensor([30, 12]))
    assert torch.allclose(rebuilt.embed_speech("hi", *x), whole.model.embed_speech("hi", *x))


def test_bf16_amp_trains_the_audio_trunk_in_bfloat16_and_validates_in_float32(tmp_path, monkeypatch):
    """speech.training.amp: the training steps' trunks run in bfloat16, validation in float32,
    and the trained weights stay float32 (other numbers than float32 training, all finite)."""
    import polyvse.train.speech as speech_train
    from polyvse.models.speech_encoders import AudioCNN

    torch.set_num_threads(1)
    train, val, features = _toy_data(tmp_path)
    seen: list[tuple[bool, torch.dtype]] = []  # (training mode, trunk output dtype) of each forward
    build = speech_train.build_speech_model

    def recorded(*args, **kwargs):
        model = build(*args, **kwargs)
        for m in model.modules():
            if isinstance(m, AudioCNN):
                m.register_forward_hook(lambda module, _, out: seen.append((module.training, out[0].dtype)))
        return model

    monkeypatch.setattr(speech_train, "build_speech_model", recorded)
    trained, dtypes = {}, {}
    for amp in ("off", "bf16"):
        seen.clear()
        training = {**TRAINING, "epochs": 1, "amp": amp}
        trained[amp] = train_speech(
            train,
            val,
            features,
            {"model": SMALL_MODEL, "training": training, "seed": 3},
            tmp_path / amp,
            progress=False,
        )
        dtypes[amp] = {mode: {d for t, d in seen if t == mode} for mode in (True, False)}
    assert dtypes["off"] == {True: {torch.float32}, False: {torch.float32}}
    assert dtypes["bf16"] == {True: {torch.bfloat16}, False: {torch.float32}}  # validation: float32
    off, bf16 = trained["off"], trained["bf16"]
    assert all(v.dtype == off.model.state_dict()[k].dtype for k, v in bf16.model.state_dict().items())
    assert np.isfinite(bf16.fit.log["loss"]).all() and bf16.fit.log["loss"].iloc[0] != off.fit.log["loss"].iloc[0]


def _keyword_data(tmp_path: Path, n: int, seed: int):
    """Datapoints naming 2 of 6 concepts: the image a noisy multi-hot vector, each utterance
    the two concept "words" (a burst in the concept's 6 mel bins, 6-10 frames, random loudness)
    among filler words and silence, in random order and timing, per language a different band
    layout (another "language"), so only the words link the views."""
    rng = np.random.default_rng(seed)
    concepts = np.array([rng.choice(6, 2, replace=False) for _ in range(n)])
    features = np.zeros((n, 6), np.float32)
    features[np.arange(n)[:, None], concepts] = 1.0
    features += rng.normal(0, 0.05, features.shape).astype(np.float32)
    ids = [f"s{seed}-{i}" for i in range(n)]
    stores = {}
    for li, lang in enumerate(LANGS):
        bands = np.roll(np.arange(6), 2 * li)  # the language's word for concept c lives in band bands[c]
        frames = []
        for i in range(n):
            words = [int(bands[c]) for c in concepts[i]] + [6] * int(rng.integers(1, 3))  # band 6: filler
            chunks = []
            for w in rng.permutation(words):
                chunks.append(np.zeros((int(rng.integers(2, 8)), 40), np.float32))
                word = np.zeros((int(rng.integers(6, 11)), 40), np.float32)
                word[:, 6 * w : 6 * w + 4] = rng.uniform(2.0, 4.0)
                chunks.append(word)
            chunks.append(np.zeros((int(rng.integers(2, 8)), 40), np.float32))
            frames.append(np.concatenate(chunks) + rng.normal(0, 0.3, (sum(len(c) for c in chunks), 40)))
        write_store(tmp_path / f"{lang}-{seed}.npz", ids, [f.astype(np.float32) for f in frames])
        stores[lang] = open_store(tmp_path / f"{lang}-{seed}.npz")
    return ids, stores, features


def test_speech_models_learn_words_that_generalise(tmp_path):
    """Held-out datapoints (new utterances of the concepts) are retrieved far above chance: the
    encoders, masks, loss and schedule together learn content, not the training set by heart."""
    torch.set_num_threads(1)
    parts = [_keyword_data(tmp_path, n, seed) for n, seed in ((96, 0), (32, 1), (32, 2))]
    ids = [i for p in parts for i in p[0]]
    features = np.concatenate([p[2] for p in parts])
    stores = {lang: parts[0][1][lang] for lang in LANGS}
    utt = _toy_utterances(parts[0][0], ["train"] * 96)
    index = {i: k for k, i in enumerate(ids)}
    train = view_set(utt, "train", stores, index, LANGS)
    held_out = []
    for split, (p_ids, p_stores, _) in zip(("val", "test"), parts[1:]):
        held_out.append(view_set(_toy_utterances(p_ids, [split] * 32), split, p_stores, index, LANGS))
    model = {**SMALL_MODEL, "widths": [16, 16, 32], "kernel": 5}
    training = {**TRAINING, "epochs": 8, "batch_size": 16, "lr": 0.003, "loss": "infonce", "decay_every": 50}
    trained = train_speech(
        train,
        held_out[0],
        features,
        {"model": model, "training": training, "seed": 0},
        tmp_path / "ckpt",
        progress=False,
    )
    from polyvse.evaluate.speech import evaluate_views, retrieval_scores

    test = retrieval_scores(evaluate_views(trained.model, held_out[1], torch.from_numpy(features), False, 16, "cpu"))
    chance = 100 * (1 + 5 + 10) / 3 / 32  # mean of R@1, R@5, R@10 over 32 candidates
    assert test["val_image_recall"] > 2 * chance and test["val_cross_recall"] > 2 * chance, (test, chance)


def test_run_epochs_validates_with_a_mapping_and_keeps_the_best(tmp_path):
    model = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scores = iter([1.0, 3.0, 2.0])
    result = run_epochs(
        model,
        opt,
        lambda rng: [torch.ones(4, 2)],
        1,
        lambda b: {"loss": model(b).pow(2).mean()},
        lambda m: {"score": next(scores), "other": 0.5},
        epochs=3,
        seed=0,
        checkpoint_dir=tmp_path,
        run_id="x",
        device=torch.device("cpu"),
        score_name="score",
        progress=False,
    )
    assert result.best_epoch == 2 and result.best_score == 3.0
    assert list(result.log.columns[:4]) == ["epoch", "loss", "score", "other"]
    # the best epoch's weights, not the last one's (epoch 3 stepped on)
    assert not torch.equal(result.best_state["weight"], model.state_dict()["weight"])
    assert model.weight.grad is None  # the last step's gradients went before validation


def test_run_epochs_without_a_finite_score_keeps_the_last_state(tmp_path):
    model = torch.nn.Linear(2, 1)
    result = run_epochs(
        model,
        torch.optim.SGD(model.parameters(), lr=0.1),
        lambda rng: [torch.ones(4, 2)],
        1,
        lambda b: {"loss": model(b).pow(2).mean()},
        lambda m: float("nan"),
        epochs=2,
        seed=0,
        checkpoint_dir=tmp_path,
        run_id="x",
        device=torch.device("cpu"),
        progress=False,
    )
    assert result.best_epoch == 0 and torch.equal(result.best_state["weight"], model.state_dict()["weight"])


def test_run_epochs_runs_the_step_under_autocast_and_logs_the_mean_loss(tmp_path):
    """autocast: the step's forward pass in the lower precision (bf16 also works on the CPU, which
    is where this test can run it), the weights stay float32; the epoch's logged loss is the mean
    of its steps' losses (summed on the device, read once an epoch)."""
    model = torch.nn.Linear(2, 1)
    seen, losses = [], []

    def step(batch):
        out = model(batch)
        seen.append(out.dtype)
        loss = out.float().pow(2).mean()
        losses.append(float(loss.detach()))
        return {"loss": loss}

    result = run_epochs(
        model,
        torch.optim.SGD(model.parameters(), lr=0.01),
        lambda rng: [torch.ones(4, 2), torch.full((4, 2), 2.0), torch.full((4, 2), 3.0)],
        3,
        step,
        lambda m: 1.0,
        epochs=1,
        seed=0,
        checkpoint_dir=tmp_path,
        run_id="x",
        device=torch.device("cpu"),
        progress=False,
        autocast=torch.bfloat16,
    )
    assert seen == [torch.bfloat16] * 3 and model.weight.dtype == torch.float32
    assert result.log["loss"].iloc[0] == sum(losses) / 3


# ----------------------------------------------------------------------------- tables


def test_speech_table_layout_and_markdown():
    pairs = [p[0] for p in view_pairs(LANGS)]
    evals = {
        v: pd.DataFrame(
            {
                "pair": pairs,
                "r1": np.arange(6) + off,
                "r5": np.arange(6) + 10 + off,
                "r10": np.arange(6) + 20 + off,
                "best_epoch": ep,
                "n": 64,
            }
        )
        for v, off, ep in (("a", 0.0, 3), ("b", 0.5, 7))
    }
    params = {"a": {"params": 1234}, "b": {"params": 99}}
    table = speech_table(
        [{"name": "Avg. Pool", "variant": "a"}, {"name": "MHSA", "variant": "b"}, {"name": "again", "variant": "a"}],
        evals,
        params,
        LANGS,
    )
    assert list(table.columns) == [
        "model",
        *block_columns(LANGS, "image"),
        *block_columns(LANGS, "cross"),
        "Ep",
        "params",
    ]
    assert table.shape == (3, 1 + 18 + 2)
    row = table.iloc[1]
    assert (row["E&I.R1"], row["J&I.R5"], row["H&E.R1"], row["J&H.R10"], row["Ep"]) == (0.5, 12.5, 3.5, 25.5, 7)
    assert table.iloc[2]["params"] == 1234
    md = speech_markdown(table, LANGS, "Table X", [chance_note(64)])
    assert "| Image Ret | E&I.R1 | H&I.R1 | J&I.R1 | E&I.R5" in md and "| Cross-Ling | H&E.R1 | J&E.R1 | J&H.R1" in md
    assert "| MHSA | 0.50% | 1.50% | 2.50% | 10.50%" in md
    assert "chance level R@1 1.56%, R@5 7.81%, R@10 15.62%" in md


def test_speech_table_footnotes_follow_the_chance_line_as_paragraphs():
    report = {"rows": [], "notes": ["Hyper is Table 3.1's run.", "  † an ablation.  "]}
    notes = [chance_note(64), *table_notes(report, "speech_table3_2")]
    assert notes[1:] == ["Hyper is Table 3.1's run.", "† an ablation."]
    table = pd.DataFrame(
        [
            {
                "model": "a",
                **{c: 1.0 for c in block_columns(LANGS, "image") + block_columns(LANGS, "cross")},
                "Ep": 1,
                "params": 5,
            }
        ]
    )
    md = speech_markdown(table, LANGS, "T", notes)
    assert md.endswith(
        "chance level R@1 1.56%, R@5 7.81%, R@10 15.62%.\n\nHyper is Table 3.1's run.\n\n† an ablation.\n"
    )
    assert table_notes({"rows": []}, "t") == []
    for bad in ("one string", ["ok", ""], [3]):
        with pytest.raises(ValueError, match="reports.t.notes: expected a list of non-empty strings"):
            table_notes({"notes": bad}, "t")


def test_default_config_footnotes_table_3_2_hyper_and_marks_the_schedule_ablation():
    """Thesis §3.2: Table 3.2's Hyper row is the λ_u = .75 setting of Table 3.1 (no other setting is named)."""
    full = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config = full["speech"]
    t31, t32 = full["reports"]["speech_table3_1"], full["reports"]["speech_table3_2"]
    hyper = next(r["variant"] for r in t32["rows"] if r["name"] == "Hyper")
    assert hyper == next(r["variant"] for r in t31["rows"] if r["name"] == "Unif. .75")
    assert any("Table 3.1" in n and "Hyper" in n for n in t32["notes"])
    ablation = next(r for r in t32["rows"] if r["name"].endswith("†"))
    options = full["variants"][ablation["variant"]]["training_options"]
    assert options["loss"] == "mms_sched" and any("†" in n for n in t32["notes"])
    # the default run (epochs x steps an epoch) sees about as many margin increments as the thesis' 75 x 774 steps
    n_train = full["datasets"]["spoken"]["synthetic"]["n_train"]
    steps = config["training"]["epochs"] * steps_per_epoch(n_train, config["training"]["batch_size"])
    thesis = (75 * steps_per_epoch(99_000, 128) - 1) // 1000
    assert abs((steps - 1) // options["loss_options"]["every"] - thesis) <= 0.1 * thesis
    paper = yaml.safe_load((REPO / "config" / "paper" / "speech.yaml").read_text())["reports"]
    assert any("Table 3.1" in n for n in paper["speech_table3_2"]["notes"])


# ----------------------------------------------------------------------------- config


def test_loss_options_match_the_objectives():
    assert set(SPEECH_LOSS_OPTIONS) == set(OBJECTIVES)
    for name, cls in OBJECTIVES.items():
        taken = set(inspect.signature(cls.__init__).parameters) - {"self"}
        assert SPEECH_LOSS_OPTIONS[name] == taken, name
    make_objective("hypersphere", **{k: v for k, v in {"lambda_u": 0.5}.items()})


def _default_config() -> dict:
    """The default config with the schema's defaults filled in, as snakemake's validate does."""
    validate = pytest.importorskip("snakemake.utils").validate  # the GPU machine has no Snakemake

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    validate(config, str(REPO / "config" / "schema.yaml"))
    return config


def test_speech_config_checks_name_the_key():
    import copy

    schema = yaml.safe_load((REPO / "config" / "schema.yaml").read_text())
    base = _default_config()
    check_config(base)
    check_speech_config(base, schema)
    s = speech_variant_settings(base, "mhsa_lr1e4_d1")
    assert s["model"]["pooling"] == "mhsa" and s["training"]["attention_lr"] == 1e-4 and s["langs"] == LANGS
    assert s["model"]["widths"] == base["speech"]["model"]["widths"]  # global settings under the override

    def fails(edit, key, reason):
        config = copy.deepcopy(base)
        edit(config)
        with pytest.raises(ConfigError, match=reason) as err:
            check_config(config)
            check_speech_config(config, schema)
        assert err.value.key == key

    v = lambda c: c["variants"]  # noqa: E731
    tr = "training_options"
    fails(lambda c: v(c)["mms"][tr].update(epoch=3), "variants.mms.training_options.epoch", "not a setting")
    fails(lambda c: v(c)["mms"][tr].update(lr="fast"), "variants.mms.training_options.lr", "not of type")
    # (variants without overrides share snakemake's default {}: replace it, never update it)
    fails(
        lambda c: v(c)["mms"].update(model_options={"pooling": "max"}),
        "variants.mms.model_options.pooling",
        "is not one of",
    )
    fails(
        lambda c: v(c)["infonce"][tr].update(loss_options={"lambda_u": 1}),
        "variants.infonce.training_options.loss_options.lambda_u",
        "loss infonce takes similarity",
    )
    fails(
        lambda c: c["reports"]["speech_table3_1"]["rows"].append({"name": "x", "variant": "nope"}),
        "reports.speech_table3_1.rows[4]",
        "unknown variant",
    )
    fails(
        lambda c: c["reports"]["speech_table3_1"]["rows"].append({"name": "x", "variant": "embn_en"}),
        "reports.speech_table3_1.rows[4]",
        "a speech report reads speech",
    )
    fails(lambda c: v(c)["mms"].update(train_langs=["en"]), "variants.mms.train_langs", "every language")
    fails(
        lambda c: c["datasets"]["spoken"]["synthetic"].update(profile="coco"),
        "datasets.spoken.synthetic.profile",
        "profile all",
    )
    fails(lambda c: v(c)["mms"].update(dataset="m30k"), "datasets.m30k.synthetic.profile", "speech variant mms")
    fails(lambda c: v(c)["mms"].update(dataset="nope"), "variants.mms.dataset", "unknown dataset")
    fails(
        lambda c: c["datasets"]["spoken"].update(langs=["en", "hi", "ja", "de"]),
        "datasets.spoken.langs",
        "espeak-ng voice",
    )
    fails(
        lambda c: v(c)["mms"].update(model_options={"pooling": "mhsa", "heads": 3}),
        "variants.mms.model_options.heads",
        "do not divide",
    )


def test_extraction_processes_only_when_worth_it():
    assert extraction_processes(300, 2) == 1 and extraction_processes(5000, 2) == 2 and extraction_processes(0, 4) == 1


def test_places_speech_adapter_gives_images_and_no_captions(tmp_path):
    from polyvse.data.adapters import make_dataset

    rows = [
        [f"p{i}", "train" if i else "test", lang, _wav(tmp_path / f"p{i}_{lang}.wav"), f"p{i}.jpg"]
        for i in range(3)
        for lang in ("en", "hi")
    ]
    listed = _write_list(tmp_path / "list.tsv", rows, header=("image_id", "split", "lang", "wav", "image"))
    settings = {
        "adapter": "places_speech",
        "langs": ["en", "hi"],
        "places_speech": {"utterances": str(listed), "images_dir": None},
    }
    captions, images = make_dataset("places", settings, tmp_path / "out")
    assert captions.empty and list(captions.columns[:6]) == ["image_id", "split", "lang", "cap_idx", "text", "origin"]
    assert images["image_id"].tolist() == ["p0", "p1", "p2"] and images["split"].tolist() == ["test", "train", "train"]
    assert images["path"].iloc[1] == str(tmp_path / "p1.jpg")


def test_run_epochs_resumes_its_own_layout_and_starts_afresh_on_another(tmp_path):
    """A checkpoint of the same run resumes after its epoch; one whose model holds other tensors
    (same settings, another version of the model's code) is not loaded: the run starts afresh."""
    validated = []

    def run(model, epochs):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        return run_epochs(
            model,
            opt,
            lambda rng: [torch.ones(4, 2)],
            1,
            lambda b: {"loss": model(b).pow(2).mean()},
            lambda m: validated.append(1) or 1.0,
            epochs=epochs,
            seed=0,
            checkpoint_dir=tmp_path,
            run_id="x",
            device=torch.device("cpu"),
            progress=False,
        )

    run(torch.nn.Linear(2, 1), 1)
    validated.clear()
    assert len(run(torch.nn.Linear(2, 1), 2).log) == 2 and len(validated) == 1  # resumed: epoch 2 only
    other = torch.nn.Linear(2, 1)
    other.register_buffer("extra", torch.zeros(1))  # a layout the checkpoint does not have
    validated.clear()
    result = run(other, 2)
    assert len(validated) == 2 and list(result.log["epoch"]) == [1, 2] and "extra" in result.best_state


@pytest.mark.parametrize("recalibration", [4, 0])
def test_validation_scores_the_encoders_with_the_statistics_of_their_weights(tmp_path, recalibration):
    """Before each validation the batch norms' running statistics are recomputed from training
    batches with the weights as they are (bn_recalibration_batches): the validated model, the kept
    epoch's state and the test see the encoders as trained. Without it (0) they see running averages
    that lag behind a short training's weights (validation recall 12.0 against 17.5 for a default
    InfoNCE model)."""
    torch.set_num_threads(1)
    train, val, features = _toy_data(tmp_path)
    training = {**TRAINING, "loss": "infonce", "lr": 0.05, "bn_recalibration_batches": recalibration}
    torch.manual_seed(0)
    model = build_speech_model(SMALL_MODEL, LANGS, features.shape[1]).to(DEVICE)
    feats = torch.from_numpy(features)
    gaps = []

    def validate(m):
        seen = [bn.running_mean.clone() for bn in batch_norms(m)]
        fresh = copy.deepcopy(m)
        rng = np.random.default_rng([3, RECALIBRATION_STREAM])
        chosen = itertools.islice(train.batches(training["batch_size"], rng), 4)
        recalibrate_batch_norm(fresh, (train.batch(i, feats, DEVICE) for i in chosen if len(i) >= 2), fresh.views)
        gaps.append(max(float((a - bn.running_mean).abs().max()) for a, bn in zip(seen, batch_norms(fresh))))
        return {"val_recall": 0.0}

    fit_multiview(
        model,
        train,
        feats,
        training,
        validate,
        seed=3,
        checkpoint_dir=tmp_path / "c",
        run_id="r",
        device=torch.device(DEVICE),
        progress=False,
    )
    if recalibration:
        assert max(gaps) < 1e-5, gaps
    else:
        assert max(gaps) > 1e-2, gaps


def test_a_training_does_not_depend_on_the_one_before_it_in_the_process(tmp_path):
    """Rule speech_train_seeds trains a variant's seeds one after the other in one process, on views
    read once: a seed's model must be the one a job of its own trains (nothing carried over from the
    training before it, nothing written into the shared views or features)."""
    torch.set_num_threads(1)
    train, val, features = _toy_data(tmp_path)
    before = features.copy()
    first = {"model": SMALL_MODEL, "training": TRAINING, "seed": 5}
    second = {**first, "seed": 6}
    train_speech(train, val, features, first, tmp_path / "a", progress=False)
    after_another = train_speech(train, val, features, second, tmp_path / "b", progress=False)
    np.testing.assert_array_equal(features, before)
    fresh_train, fresh_val, fresh_features = _toy_data(tmp_path / "fresh")
    alone = train_speech(fresh_train, fresh_val, fresh_features, second, tmp_path / "c", progress=False)
    timings = ["seconds", "seconds_validating"]
    pd.testing.assert_frame_equal(after_another.fit.log.drop(columns=timings), alone.fit.log.drop(columns=timings))
    for k, v in alone.model.state_dict().items():
        assert torch.equal(v, after_another.model.state_dict()[k]), k
