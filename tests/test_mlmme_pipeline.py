"""MLMME in the workflow: runs of Table 1, training tuples, contrastive draws,
sentence–sentence retrieval, the table layout, and a tiny training run."""

from __future__ import annotations

import os
import numpy as np
import pandas as pd
import pytest
import torch

from polyvse.config import ConfigError
from polyvse.evaluate.crosslingual import cross_lingual_ranks, sentence_retrieval
from polyvse.evaluate.mlmme import evaluate_mlmme
from polyvse.io import load_torch, save_torch
from polyvse.report.mlmme import beta_label, mlmme_markdown, mlmme_table
from polyvse.train.data import EncodedCaptions
from polyvse.models.trained import load_model
from polyvse.train.mlmme import MLMMEObjective, TupleSampler, train_mlmme, tuple_batches
from polyvse.train.mlmme_runs import check_mlmme_config, mlmme_runs, run_settings

# POLYVSE_TEST_DEVICE=cuda runs these trainings on a GPU (bench/cuda_session.sh); CI has the CPU
DEVICE = os.environ.get("POLYVSE_TEST_DEVICE", "cpu")

BLOCK = {
    "dataset": "m30k",
    "langs": ["en", "de"],
    "betas": [1.0, 0.75, 0.5, 0.25],
    "margin": 0.2,
    "contrastive": "random",
    "n_contrastive": 3,
    "contrastive_pool": "batch",
    "reduction": "sum",
    "caption": "t",
    "model": {"word_dim": 8, "gru_hidden": 8, "joint_dim": 8, "dropout": 0.0},
    "training": {"epochs": 2, "lr": 0.01, "batch_size": 8, "grad_clip": 2.0, "device": DEVICE},
}


def test_runs_are_vse_per_language_then_mlmme_per_beta():
    runs = mlmme_runs(BLOCK)
    assert list(runs) == ["vse_en", "vse_de", "b100", "b75", "b50", "b25"]
    assert runs["vse_de"] == {"langs": ["de"], "beta": 1.0}
    assert runs["b25"] == {"langs": ["en", "de"], "beta": 0.25}
    with pytest.raises(ConfigError, match="mlmme.betas"):
        mlmme_runs({**BLOCK, "betas": [0.5, 0.501]})


def test_config_check_names_the_key():
    variant = {"model": "mlmme", "dataset": "m30k", "train_langs": ["en", "de"]}
    config = {"mlmme": BLOCK, "variants": {"m": variant}, "datasets": {"m30k": {"langs": ["en", "fr"]}}}
    with pytest.raises(ConfigError, match="variants.m.train_langs: de not in datasets.m30k.langs"):
        check_mlmme_config(config)
    config["datasets"]["m30k"]["langs"] = ["en", "de"]
    check_mlmme_config(config)
    config["variants"]["m"] = {**variant, "model_options": {"size": 3}}
    with pytest.raises(ConfigError, match="variants.m.model_options.size: not a setting of mlmme.model"):
        check_mlmme_config(config)
    config["variants"]["m"] = {**variant, "training_options": {"epochs": 3}, "seed": 4}
    check_mlmme_config(config)
    assert run_settings(config, "m", "b50-s2")["training"]["epochs"] == 3  # the variant's override
    assert run_settings(config, "m", "b50-s2")["seed"] == 6  # the variant's seed + the replica's offset
    assert run_settings(config, "m", "b50")["langs"] == ["en", "de"]


def encoded(image_rows: list[int], tokens: list[list[int]] | None = None) -> EncodedCaptions:
    n = len(image_rows)
    toks = torch.tensor(tokens) if tokens else torch.arange(1, n + 1).reshape(n, 1)
    return EncodedCaptions.from_padded(
        toks,
        torch.full((n,), toks.shape[1]),
        torch.tensor(image_rows),
        torch.zeros(n, dtype=torch.long),
        ["xx"],
        pd.DataFrame({"i": range(n)}),
    )


def test_tuples_pair_every_caption_once_an_epoch_with_a_caption_of_the_same_image():
    # image 0: en ×3, de ×1; image 1: en ×2, de ×2; image 2 has no de caption and is left out
    en = encoded([0, 0, 0, 1, 1, 2])
    de = encoded([1, 0, 1])
    sampler = TupleSampler({"en": en, "de": de})
    assert list(sampler.images) == [0, 1] and len(sampler) == 5
    images, rows = sampler.epoch(np.random.default_rng(0))
    assert list(images) == [0, 0, 0, 1, 1]
    assert sorted(rows["en"]) == [0, 1, 2, 3, 4]  # every en caption of images 0, 1 once
    assert list(rows["de"][:3]) == [1, 1, 1]  # image 0's only de caption, cycled
    assert sorted(rows["de"][3:]) == [0, 2]
    for lang, enc in (("en", en), ("de", de)):
        assert (enc.image_row[torch.from_numpy(rows[lang])].numpy() == images).all()


@pytest.mark.parametrize("pool", ["batch", "training_set"])
def test_random_contrastive_tuples_are_other_images_and_change_every_epoch(pool):
    en = encoded([i // 2 for i in range(24)])
    de = encoded([i // 2 for i in range(24)])
    sampler = TupleSampler({"en": en, "de": de})
    features = torch.arange(12, dtype=torch.float32).reshape(12, 1).repeat(1, 3)
    draws = []
    for epoch in (1, 2):
        batches = list(
            tuple_batches(
                sampler,
                {"en": en, "de": de},
                features,
                8,
                "random",
                3,
                pool,
                np.random.default_rng([0, epoch]),
                torch.device("cpu"),
            )
        )
        assert [b["size"] for b in batches] == [8, 8, 8]
        for b in batches:
            pick = b["contrastive_index"]
            assert pick.shape == (8, 3)
            own = b["image_ids"][: b["size"]].reshape(-1, 1)
            assert (b["image_ids"][pick] != own).all()  # never the tuple's own image
            assert (b["images"][:, 0] == b["image_ids"].float()).all()
            if pool == "batch":
                assert len(b["image_ids"]) == 8 and int(pick.max()) < 8
            else:
                assert len(b["image_ids"]) == 8 * 4 and int(pick.min()) >= 8
        draws.append(torch.cat([b["image_ids"] for b in batches]))
    assert not torch.equal(draws[0], draws[1])


def test_objective_at_beta_one_with_one_language_is_the_vse_hinge():
    torch.manual_seed(0)
    from polyvse.models.mlmme import MLMME, MLMMEConfig

    model = MLMME(
        MLMMEConfig(
            vocab_sizes={"en": 6}, image_dim=3, word_dim=4, gru_hidden=4, joint_dim=4, dropout=0.0, init_std=0.5
        )
    )
    tokens = torch.tensor([[1, 2], [3, 4], [5, 1]])
    batch = {
        "size": 3,
        "images": torch.randn(3, 3),
        "image_ids": torch.tensor([0, 1, 2]),
        "sentences": {"en": (tokens, torch.tensor([2, 2, 2]))},
        "contrastive_index": torch.tensor([[1, 2], [2, 0], [0, 1]]),
    }
    out = MLMMEObjective(1.0, 0.2, "random", "sum")(model, batch)
    with torch.no_grad():
        d, v = model.embed_images(batch["images"]), model.encode("en", tokens, torch.tensor([2, 2, 2]))
    expected = 0.0
    for b in range(3):
        for r in batch["contrastive_index"][b].tolist():
            expected += max(0.0, 0.2 - float(d[b] @ v[b]) + float(d[b] @ v[r]))
            expected += max(0.0, 0.2 - float(v[b] @ d[b]) + float(v[b] @ d[r]))
    assert float(out["loss"].detach()) == pytest.approx(expected, abs=1e-5)
    assert float(out["S_S"]) == 0.0


def test_cross_lingual_ranks_by_hand():
    # queries: q0 (image a), q1 (image b); candidates: c0 (a), c1 (b), c2 (a)
    scores = np.array(
        [
            [0.1, 0.9, 0.5],  # best gt of q0 is c2 (0.5); c1 (0.9) above it → rank 2
            [0.3, 0.2, 0.8],
        ]
    )  # gt of q1 is c1 (0.2); c0 and c2 above → rank 3
    ranks = cross_lingual_ranks(scores, np.array(["a", "b"]), np.array(["a", "b", "a"]))
    assert list(ranks) == [2, 3]
    k_to_l, l_to_k = sentence_retrieval(np.eye(2), np.array([0, 1]), np.eye(2), np.array([0, 1]))
    assert k_to_l.recall[1] == 100.0 and l_to_k.medr == 1.0 and k_to_l.n_queries == 2
    assert cross_lingual_ranks(np.zeros((1, 2)), np.array([5]), np.array([1, 2]))[0] == 3  # no match: C + 1


def test_cross_lingual_ranks_count_ties_against_the_match():
    # q0 (image a): its match c0 ties with c1 and c2 (0.5) → both rank above it: 3;
    # q1 (image b): its matches c1 (0.5), c3 (0.7); c2 ties with c3 → rank 2
    scores = np.array([[0.5, 0.5, 0.5, 0.1], [0.2, 0.5, 0.7, 0.7]])
    ranks = cross_lingual_ranks(scores, np.array(["a", "b"]), np.array(["a", "b", "c", "b"]))
    assert list(ranks) == [3, 2]
    collapsed = cross_lingual_ranks(np.zeros((3, 3)), np.arange(3), np.arange(3))
    assert list(collapsed) == [3, 3, 3]  # a collapsed model retrieves nothing


def fake_eval(shift: float, langs=("en", "de")) -> pd.DataFrame:
    rows = []
    for i, lang in enumerate(langs):
        rows.append(
            {
                "task": "image_sentence",
                "query": lang,
                "target": "image",
                "r1": 10 + shift + i,
                "r5": 30 + shift,
                "r10": 50 + shift,
                "medr": 8 - shift,
                "n_queries": 5,
            }
        )
        rows.append(
            {
                "task": "image_sentence",
                "query": "image",
                "target": lang,
                "r1": 20 + shift,
                "r5": 40 + shift,
                "r10": 60 + shift,
                "medr": 4.0,
                "n_queries": 5,
            }
        )
    if len(langs) == 2:
        for q, t in (langs, langs[::-1]):
            rows.append(
                {
                    "task": "sentence_sentence",
                    "query": q,
                    "target": t,
                    "r1": 5 + shift,
                    "r5": 15,
                    "r10": 25,
                    "medr": 12.0,
                    "n_queries": 5,
                }
            )
    return pd.DataFrame(rows)


def test_table_has_the_paper_layout_and_gains_over_vse():
    runs = mlmme_runs(BLOCK)
    evals = {
        "vse_en": fake_eval(0, ("en",)),
        "vse_de": fake_eval(0, ("de",)),
        "b100": fake_eval(2),
        "b75": fake_eval(3),
        "b50": fake_eval(-1),
        "b25": fake_eval(1),
    }
    table = mlmme_table(evals, runs, ["en", "de"])
    assert list(table.columns) == [
        "section",
        "metric",
        "en VSE",
        "en β=1",
        "en β=.75",
        "en β=.5",
        "en β=.25",
        "de VSE",
        "de β=1",
        "de β=.75",
        "de β=.5",
        "de β=.25",
    ]
    assert list(table["section"].unique()) == ["Sentence to image", "Image to sentence", "Sentence to sentence"]
    assert list(table["metric"][:4]) == ["r@1", "r@5", "r@10", "mrank"]
    r1 = table.iloc[0]
    assert r1["en VSE"] == 10 and r1["en β=.75"] == 13 and r1["de VSE"] == 10 and r1["de β=1"] == 13
    assert table.iloc[3]["en β=1"] == 6  # mrank 8 − 2
    s2s = table[table["section"] == "Sentence to sentence"].iloc[0]
    assert np.isnan(s2s["en VSE"]) and s2s["en β=.75"] == 8
    md = mlmme_markdown(table, runs, ["en", "de"], "caption")
    assert "| r@1 | 10.0 | 12.0 (+2.0) | **13.0 (+3.0)** | 9.0 (-1.0) | 11.0 (+1.0) |" in md
    assert "| mrank | 8 | 6 | **5** | 9 | 7 |" in md  # ranks: no gain, lowest in bold
    assert "English β=.75" in md and "German VSE" in md and "en→de r@1" in md
    assert beta_label(1.0) == "β=1" and beta_label(0.25) == "β=.25"


def tiny_two_languages(epochs: int) -> tuple[pd.DataFrame, np.ndarray, dict, dict]:
    """Two tiny languages where every word names the image: captions, features, vocabulary counts, settings."""
    rng = np.random.default_rng(0)
    n_img = 24
    features = rng.normal(size=(n_img, 6)).astype(np.float32)
    rows = []
    for i in range(n_img):
        split = "train" if i < 16 else ("val" if i < 20 else "test")
        for lang, prefix in (("en", "w"), ("de", "v")):
            for c in range(2):
                rows.append(
                    {
                        "image_id": f"i{i}",
                        "split": split,
                        "lang": lang,
                        "cap_idx": c,
                        "origin": "human",
                        "text": f"{prefix}{i} {prefix}{(i + c) % n_img}",
                    }
                )
    captions = pd.DataFrame(rows)
    counts = {lang: {f"{p}{i}": 4 for i in range(n_img)} for lang, p in (("en", "w"), ("de", "v"))}
    settings = {
        "langs": ["en", "de"],
        "beta": 0.5,
        "model": BLOCK["model"],
        "training": {**BLOCK["training"], "epochs": epochs},
        "contrastive": "random",
        "n_contrastive": 3,
        "contrastive_pool": "batch",
        "margin": 0.2,
        "reduction": "sum",
        "text": {"min_count": 1, "segmenter": "chars", "max_len": 10},
        "seed": 0,
    }
    return captions, features, counts, settings


def test_tiny_training_run_learns_and_reloads(tmp_path):
    """Two tiny languages where every word names the image: a trained MLMME beats chance."""
    captions, features, counts, settings = tiny_two_languages(epochs=6)
    n_img = len(features)
    torch.set_num_threads(1)
    trained = train_mlmme(
        captions, features, [f"i{i}" for i in range(n_img)], counts, settings, tmp_path / "ckpt", progress=False
    )
    assert list(trained.fit.log["epoch"]) == [1, 2, 3, 4, 5, 6]
    assert trained.fit.log["loss"].iloc[-1] < trained.fit.log["loss"].iloc[0]
    save_torch(trained.saved(), tmp_path / "model.pt")
    model, vocab = load_model(load_torch(tmp_path / "model.pt"))  # weights_only=True: plain data only
    ev = evaluate_mlmme(model, vocab, captions, features, [f"i{i}" for i in range(n_img)], ["en", "de"], 10)
    assert list(ev["task"]) == ["image_sentence"] * 4 + ["sentence_sentence"] * 2
    assert list(ev["n_queries"]) == [8, 4, 8, 4, 8, 8]
    assert (ev["r10"] == 100.0).all()  # 4 test images: every rank ≤ 4
    assert ev.loc[4, "r1"] > 25.0  # en→de above chance (2 of 8)


@pytest.mark.parametrize(("schedule", "reason"), [("constant", "ceiling"), ("cosine", "schedule")])
def test_a_cosine_schedule_runs_to_its_end_and_says_so(tmp_path, schedule, reason):
    """mlmme.training.lr_schedule: under the cosine the rate is 0 at the ceiling, so the training is over
    there (stop_reason schedule), not cut short (ceiling); the rate the optimiser ends at says which ran."""
    captions, features, counts, settings = tiny_two_languages(epochs=3)
    settings["training"] = {**settings["training"], "lr_schedule": schedule, "lr_warmup_epochs": 1}
    torch.set_num_threads(1)
    ids = [f"i{i}" for i in range(len(features))]
    trained = train_mlmme(captions, features, ids, counts, settings, tmp_path / "ckpt", progress=False)
    assert trained.fit.stop_reason == reason
    assert list(trained.fit.log["epoch"]) == [1, 2, 3]
    last = load_torch(tmp_path / "ckpt" / "last.pt")["optimiser"]["param_groups"][0]["lr"]
    assert last == pytest.approx(0.0 if schedule == "cosine" else 0.01, abs=1e-12)
