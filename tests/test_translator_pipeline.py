"""The Translator in the workflow: composed dictionaries, M with held-out
precision, word-vector tables, nested target examples, model files, the curve."""

from __future__ import annotations

import os
import numpy as np
import pandas as pd
import pytest
import torch

from polyvse.align.dictionaries import bilingual_pairs, compose
from polyvse.align.translator_matrix import fit_translator_matrix, prepare_vectors, split_by_target_word
from polyvse.config import ConfigError
from polyvse.errors import InputError
from polyvse.io import load_torch, save_torch
from polyvse.models.trained import load_model
from polyvse.report.translator_curve import COLUMNS, curve_table, initialisation_note, plot_curve
from polyvse.text.vocab import Vocabulary
from polyvse.train.data import encode_captions
from polyvse.train.translator import (
    cycling_batches,
    evaluate_target,
    target_examples,
    train_source,
    train_target,
    vocabulary_vectors,
)
from polyvse.train.translator_runs import (
    check_translator_config,
    needs_source_model,
    translator_block,
    translator_settings,
)

# POLYVSE_TEST_DEVICE=cuda runs these trainings on a GPU (bench/cuda_session.sh); CI has the CPU
DEVICE = os.environ.get("POLYVSE_TEST_DEVICE", "cpu")


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_dictionaries_are_composed_through_english_when_no_direct_one_exists(tmp_path):
    write(tmp_path / "fr-en.txt", "un a\nun one\nchat cat\nRouge red\n")
    write(tmp_path / "en-de.txt", "a ein\na eine\none eins\ncat katze\ndog hund\n")
    pairs, how = bilingual_pairs(tmp_path, "fr", "de")
    assert pairs == [("un", "ein"), ("un", "eine"), ("un", "eins"), ("chat", "katze")]
    assert "composed through en" in how
    # a direct dictionary wins, read in either direction
    write(tmp_path / "de-fr.txt", "katze chat\n")
    pairs, how = bilingual_pairs(tmp_path, "fr", "de")
    assert pairs == [("chat", "katze")] and how == "fr-de dictionary"
    with pytest.raises(InputError, match="no fr-cs dictionary"):
        bilingual_pairs(tmp_path, "fr", "cs")
    assert compose([("x", "y")], [("z", "w")]) == []


def test_held_out_words_take_all_their_pairs():
    pairs = np.array([[0, 0], [0, 1], [1, 1], [2, 2], [3, 3], [4, 4], [4, 0], [5, 5], [6, 6], [7, 7]])
    train, test = split_by_target_word(pairs, 0.25, seed=3)
    held = set(test[:, 0])
    assert len(held) == 2 and not held & set(train[:, 0])
    assert len(train) + len(test) == len(pairs)
    assert all((pairs[pairs[:, 0] == w] == test[test[:, 0] == w]).all() for w in held)
    with pytest.raises(InputError):
        split_by_target_word(np.array([[0, 0], [0, 1]]), 0.5, 0)


def test_a_rotated_vocabulary_is_recovered_and_scored_on_held_out_words():
    rng = np.random.default_rng(0)
    source = rng.normal(size=(40, 8))
    q, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    target = source @ q  # preparation (unit, centre, unit) commutes with a rotation
    words_s = [f"s{i}" for i in range(40)]
    words_t = [f"t{i}" for i in range(40)]
    dictionary = [(f"t{i}", f"s{i}") for i in range(40)]
    result = fit_translator_matrix(target, words_t, source, words_s, dictionary, k=5, n_iter=5, heldout=0.25)
    summary = result.summary()
    assert summary["n_heldout_pairs"] == 10 and summary["n_train_pairs"] == 30
    assert summary["p1_nn_svd"] == 100.0 and summary["p1_csls_rcsls"] == 100.0
    # SVD, learnt on the 30 training words, maps every word (held-out ones too) onto its translation
    assert np.allclose(prepare_vectors(target) @ result.svd_matrix.T, prepare_vectors(source), atol=1e-6)
    assert np.allclose(result.svd_matrix, q, atol=1e-6)  # rows t = s q: M = q (M t = s)
    assert (np.diff(result.rcsls_log["objective"]) <= 1e-12).all()


def test_vocabulary_vector_table_follows_the_vocabulary_ids():
    words = ["chat", "un", "rouge"]
    vectors = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]])
    vocab = Vocabulary.from_counts({"fr": {"un": 9, "chat": 5, "rouge": 1}})
    table = vocabulary_vectors(vocab, "fr", words, vectors)
    prepared = prepare_vectors(vectors)
    assert table.shape == (len(vocab), 3)
    assert not table[0].any() and not table[vocab.stoi[("fr", "<unk>")]].any()
    for w, r in (("chat", 0), ("un", 1), ("rouge", 2)):
        assert np.allclose(table[vocab.stoi[("fr", w)]], prepared[r])
    with pytest.raises(InputError, match="no vector for 1 vocabulary words"):
        vocabulary_vectors(vocab, "fr", words[:2], vectors[:2])


def synthetic_captions(n_img: int = 30, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray, list[str]]:
    """de: 2 human captions an image; fr: 1 human + 1 MT; the words name the image's class (6 classes)."""
    rng = np.random.default_rng(seed)
    classes = np.arange(n_img) % 6
    features = (np.eye(6)[classes] * 3 + rng.normal(scale=0.3, size=(n_img, 6))).astype(np.float32)
    rows = []
    for i in range(n_img):
        split = "train" if i < 18 else ("val" if i < 24 else "test")
        for c in range(2):
            rows.append(
                {
                    "image_id": f"i{i}",
                    "split": split,
                    "lang": "de",
                    "cap_idx": c,
                    "origin": "human",
                    "text": f"das d{classes[i]} ist d{(classes[i] + c) % 6}",
                }
            )
            rows.append(
                {
                    "image_id": f"i{i}",
                    "split": split,
                    "lang": "fr",
                    "cap_idx": c,
                    "origin": "human" if c == 0 else "mt",
                    "text": f"le f{classes[i]} est f{classes[i]}",
                }
            )
    return pd.DataFrame(rows), features, [f"i{i}" for i in range(n_img)]


def test_target_examples_are_nested_and_human_first():
    captions, _, _ = synthetic_captions()
    ten, five = (target_examples(captions, "fr", n, "human", seed=1) for n in (10, 5))
    assert (ten["origin"] == "human").all() and (ten["split"] == "train").all() and (ten["lang"] == "fr").all()
    pd.testing.assert_frame_equal(ten.iloc[:5], five)
    aug = target_examples(captions, "fr", 24, "augmented", seed=1)
    assert list(aug["origin"]) == ["human"] * 18 + ["mt"] * 6
    with pytest.raises(InputError, match="translator.examples"):
        target_examples(captions, "fr", 19, "human", seed=1)


def test_cycling_batches_show_every_example_equally_often():
    captions, _, ids = synthetic_captions()
    vocab = Vocabulary.from_counts({"fr": {"le": 1, "est": 1, **{f"f{c}": 1 for c in range(6)}}})
    enc = encode_captions(
        target_examples(captions, "fr", 6, "human", 0), vocab, {img: i for i, img in enumerate(ids)}, 10
    )
    features = torch.arange(len(ids), dtype=torch.float32).reshape(-1, 1)  # feature = the image's row
    batches = list(cycling_batches(enc, 4, 9, features, np.random.default_rng(0), torch.device("cpu")))
    assert len(batches) == 9 and all(len(b["tokens"]) == 4 for b in batches)
    seen = np.concatenate([b["images"][b["image_of_sentence"], 0].numpy().astype(int) for b in batches])
    counts = np.bincount(seen, minlength=len(ids))
    assert sorted(np.flatnonzero(counts)) == sorted(enc.image_row.tolist())  # only the 6 examples
    assert (counts[enc.image_row.numpy()] == 6).all()  # 36 draws: 6 each


def test_config_check_names_the_key():
    block = {"model": {"gru_hidden": 8}, "target_training": {"epochs": 2}, "examples": [10]}
    variant = {"model": "translator", "dataset": "m30k", "train_langs": ["de", "fr"]}
    config = {"translator": block, "variants": {"t": variant}, "datasets": {"m30k": {"langs": ["en", "de"]}}}
    with pytest.raises(ConfigError, match="variants.t.train_langs: 'fr' is not in datasets.m30k.langs"):
        check_translator_config(config)
    config["datasets"]["m30k"]["langs"] = ["en", "de", "fr"]
    check_translator_config(config)
    for bad, key in (
        ({"train_langs": ["de"]}, "variants.t.train_langs"),
        ({"model_options": {"width": 3}}, "variants.t.model_options.width"),
        ({"training_options": {"target_training": {"epoch": 3}}}, "variants.t.training_options.target_training.epoch"),
        ({"training_options": {"speed": 3}}, "variants.t.training_options.speed"),
    ):
        config["variants"]["t"] = {**variant, **bad}
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            check_translator_config(config)


def test_a_variant_overrides_the_translator_block_key_by_key():
    block = {"model": {"gru_hidden": 8, "joint_dim": 4}, "target_training": {"epochs": 2, "lr": 0.1}, "examples": [10]}
    variant = {
        "model": "translator",
        "dataset": "m30k",
        "train_langs": ["de", "fr"],
        "model_options": {"joint_dim": 16},
        "training_options": {"target_training": {"epochs": 5}, "examples": [20, 40]},
    }
    got = translator_block({"translator": block, "variants": {"t": variant}, "seed": 2}, "t")
    assert got["model"] == {"gru_hidden": 8, "joint_dim": 16}
    assert got["target_training"] == {"epochs": 5, "lr": 0.1} and got["examples"] == [20, 40]
    assert (got["source"], got["target"], got["dataset"], got["seed"]) == ("de", "fr", "m30k", 2)
    assert block["target_training"] == {"epochs": 2, "lr": 0.1}  # the config is not changed


def test_target_settings_carry_the_image_branch_and_fs_reads_the_source_under_it():
    block = {
        "model": {},
        "source_training": {"epochs": 1},
        "target_training": {"epochs": 2},
        "margin": 0.2,
        "device": "cpu",
        "image_branch": "source",
    }
    variant = {"model": "translator", "dataset": "m30k", "train_langs": ["de", "fr"]}
    config = {"translator": block, "seed": 3, "variants": {"t": variant}}
    assert translator_settings(config, "t", "target")["image_branch"] == "source"
    assert "image_branch" not in translator_settings(config, "t", "source")  # the source run does not depend on it
    assert [needs_source_model(config, "t", p) for p in ("FS", "T1", "T2")] == [True, True, True]
    block["image_branch"] = "random"
    assert [needs_source_model(config, "t", p) for p in ("FS", "T1", "T2")] == [False, True, True]
    with pytest.raises(ConfigError, match="unknown training stage 'pretrain'"):
        translator_settings(config, "t", "pretrain")


SETTINGS = {
    "model": {"gru_hidden": 12, "joint_dim": 8, "dropout": 0.0, "freeze_embeddings": True},
    "training": {"epochs": 4, "lr": 0.02, "batch_size": 8, "grad_clip": 2.0, "min_batches_per_epoch": 3},
    "margin": 0.2,
    "text": {"min_count": 1, "segmenter": "chars", "max_len": 10},
    "seed": 0,
    "device": DEVICE,
    "image_branch": "source",
}


def test_source_and_protocol_models_train_reload_and_evaluate(tmp_path):
    torch.set_num_threads(1)
    captions, features, ids = synthetic_captions()
    rng = np.random.default_rng(1)
    counts = {
        lang: {w: 1 for w in [art, verb, *[f"{p}{c}" for c in range(6)]]}
        for lang, art, verb, p in (("de", "das", "ist", "d"), ("fr", "le", "est", "f"))
    }
    vectors = {lang: rng.normal(size=(len(c), 5)) for lang, c in counts.items()}
    source = train_source(
        captions, features, ids, "de", counts["de"], vectors["de"], SETTINGS, tmp_path / "src", progress=False
    )
    assert list(source.fit.log["epoch"]) == [1, 2, 3, 4]
    before = {k: v.clone() for k, v in source.model.state_dict().items()}
    matrix = np.linalg.qr(rng.normal(size=(5, 5)))[0]
    reference = None
    for protocol in ("FS", "T1", "T2"):
        trained = train_target(
            protocol,
            12,
            captions,
            features,
            ids,
            "fr",
            counts["fr"],
            vectors["fr"],
            SETTINGS,
            tmp_path / protocol,
            source=source.model,
            matrix=matrix,
            progress=False,
        )
        assert len(trained.fit.log) == 4
        # 12 examples, batches of 8, at least 3 batches an epoch
        save_torch(trained.saved(), tmp_path / protocol / "model.pt")
        model, vocab = load_model(load_torch(tmp_path / protocol / "model.pt"))  # weights_only=True
        assert model.protocol == protocol
        for a, b in zip(model.state_dict().values(), trained.model.state_dict().values()):
            assert torch.equal(a, b)
        row = evaluate_target(model, vocab, captions, features, ids, "fr", 10)
        assert row["n_images"] == 6 and row["n_sentences"] == 6 and 0 <= row["r1_t2i"] <= 100
        if protocol == "T1":
            reference = trained.model.text.encoder.gru.weight_hh_l0.detach().clone()
    # training the target models left the source model untouched, though T1 trained its copy
    assert all(torch.equal(before[k], v) for k, v in source.model.state_dict().items())
    assert not torch.equal(reference, before["text.encoder.gru.weight_hh_l0"])
    save_torch(source.saved(), tmp_path / "source.pt")
    src_model, _ = load_model(load_torch(tmp_path / "source.pt"))
    assert all(torch.equal(before[k], v) for k, v in src_model.state_dict().items())
    with pytest.raises(InputError, match="translator.image_branch"):  # FS copies the source's image branch
        train_target(
            "FS",
            12,
            captions,
            features,
            ids,
            "fr",
            counts["fr"],
            vectors["fr"],
            SETTINGS,
            tmp_path / "FS-none",
            source=None,
            progress=False,
        )


def test_curve_table_and_figure(tmp_path):
    rows = []
    for protocol in ("T2", "FS"):
        for n in (100, 50):
            rows.append({**{c: float(n) / 10 for c in COLUMNS[2:]}, "protocol": protocol, "n_examples": n, "extra": 1})
    table = curve_table(rows)
    assert list(table.columns) == list(COLUMNS)
    assert list(zip(table["protocol"], table["n_examples"])) == [("T2", 50), ("T2", 100), ("FS", 50), ("FS", 100)]
    plot_curve(table, tmp_path / "c.png", "title", "fr", "subtitle", initialisation=initialisation_note("random", "de"))
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(InputError, match="must state the protocols' initialisation"):
        plot_curve(table, tmp_path / "d.png", "title", "fr", initialisation="")
    assert "trained de source model's" in initialisation_note("source", "de")
    assert "seeded random" in initialisation_note("random", "de")
    with pytest.raises(InputError, match="translator.image_branch"):
        initialisation_note("imagenet", "de")
    with pytest.raises(InputError, match="lack r1_t2i"):
        curve_table([{"protocol": "FS", "n_examples": 1}])
