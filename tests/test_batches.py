"""The image-grouped batch sampler and its language balancing (polyvse.train.data)."""

import numpy as np
import pytest
import torch

from polyvse.data.synthetic import build_dataset
from polyvse.text.vocab import counts_frame, training_counts
from polyvse.train import run
from polyvse.train.neighbours import ImageNeighbours, neighbour_count
from polyvse.train.data import (
    EncodedCaptions,
    EveryLanguageBatches,
    ImageGroupedBatches,
    batch_sampler,
    batch_on_device,
    collate,
    host_batch,
    in_background,
    language_shares,
    row_quotas,
)


def encoded(profile, langs, n_train, seed=1):
    """The training captions of a synthetic profile as EncodedCaptions (dummy tokens: the
    sampler reads image_row and lang only)."""
    # COCO-CN's share of the images for Chinese, as on a full-size set (no floor): the rare languages
    caps = build_dataset(profile, n_train, 0, 0, seed=seed, zh_min_images=0).captions
    caps = caps[caps["split"] == "train"].reset_index(drop=True)
    index = {img: i for i, img in enumerate(sorted(set(caps["image_id"])))}
    n = len(caps)
    return EncodedCaptions.from_padded(
        torch.zeros(n, 1, dtype=torch.long),
        torch.ones(n, dtype=torch.long),
        torch.tensor([index[i] for i in caps["image_id"]]),
        torch.tensor([langs.index(l) for l in caps["lang"]]),
        list(langs),
        caps,
    )


@pytest.fixture(scope="module")
def coco():
    return encoded("coco", ["en", "ja", "zh"], 600)


@pytest.fixture(scope="module")
def m30k():
    return encoded("m30k", ["en", "de", "fr", "cs"], 200)


def language_counts(enc, rows):
    return np.bincount(enc.lang[rows].numpy(), minlength=len(enc.langs))


def old_epoch(sampler, rng):
    """The sampler as it was before language balancing (images drawn uniformly)."""
    n_img = len(sampler.images)
    perm, cursor = rng.permutation(n_img), 0
    for _ in range(len(sampler)):
        if cursor + sampler.images_per_batch > n_img:
            perm, cursor = rng.permutation(n_img), 0
        chosen = perm[cursor : cursor + sampler.images_per_batch]
        cursor += sampler.images_per_batch
        yield np.concatenate(
            [
                rng.choice(
                    sampler.caption_rows[i],
                    size=min(sampler.captions_per_image, len(sampler.caption_rows[i])),
                    replace=False,
                )
                for i in chosen
            ]
        )


def test_row_quotas_by_hand():
    assert row_quotas(np.full(3, 1 / 3), 32).tolist() == [11, 11, 10]
    assert row_quotas(np.array([0.5, 0.25, 0.25]), 10).tolist() == [5, 3, 2]  # tie of remainders: lower index
    assert row_quotas(np.array([0.25] * 4), 32).tolist() == [8, 8, 8, 8]


def test_language_shares_forms_and_errors():
    assert language_shares("natural", ["en", "ja"]) is None
    assert language_shares("balanced", ["en", "ja", "zh"]).tolist() == pytest.approx([1 / 3] * 3)
    # weights are normalised over the variant's languages; others in the mapping are ignored
    assert language_shares({"en": 2, "ja": 1, "zh": 1, "de": 5}, ["en", "ja", "zh"]).tolist() == [0.5, 0.25, 0.25]
    with pytest.raises(ValueError, match=r"training.language_balance: 'even' is neither balanced nor natural"):
        language_shares("even", ["en"])
    with pytest.raises(
        ValueError,
        match=r"training.language_balance: no share for training language\(s\) zh "
        r"\(the mapping names en, ja\)",
    ):
        language_shares({"en": 1, "ja": 1}, ["en", "ja", "zh"])
    with pytest.raises(ValueError, match=r"training.language_balance.ja: a share must be a positive number, got 0"):
        language_shares({"en": 1, "ja": 0}, ["en", "ja"])
    with pytest.raises(ValueError, match=r"training.language_balance: expected balanced, natural or a mapping"):
        language_shares(["en"], ["en"])


def test_sampler_rejects_shares_it_cannot_use():
    rows = torch.tensor([0, 0, 1, 1])
    with pytest.raises(ValueError, match="language balancing needs the language of every caption row"):
        ImageGroupedBatches(rows, 2, 2, lang=None, shares=np.array([1.0]))
    with pytest.raises(ValueError, match=r"language shares must be non-negative and sum to 1, got \[0.5, 0.6\]"):
        ImageGroupedBatches(rows, 2, 2, lang=torch.tensor([0, 1, 0, 1]), shares=np.array([0.5, 0.6]))
    with pytest.raises(ValueError, match=r"caption language index 2 has no share \(2 shares given\)"):
        ImageGroupedBatches(rows, 2, 2, lang=torch.tensor([0, 2, 0, 1]), shares=np.array([0.5, 0.5]))


@pytest.mark.parametrize(
    "balance, shares", [("balanced", [1 / 3, 1 / 3, 1 / 3]), ({"en": 2, "ja": 1, "zh": 1}, [0.5, 0.25, 0.25])]
)
@pytest.mark.parametrize("per_image", [1, 2, 3])
def test_every_coco_batch_holds_the_languages_in_the_asked_shares(coco, balance, shares, per_image):
    sampler = ImageGroupedBatches.for_captions(coco, 16, per_image, balance)
    total = 16 * per_image
    n = 0
    for rows in sampler.epoch(np.random.default_rng(0)):
        n += 1
        counts = language_counts(coco, rows)
        # within the rounding of one batch: each language's rows are its share of the batch, rounded
        assert np.all(np.abs(counts - np.asarray(shares) * total) < 1), counts
        assert counts.sum() == total and len(np.unique(rows)) == len(rows)
        images, per = np.unique(coco.image_row[rows].numpy(), return_counts=True)
        assert len(images) >= 16 and per.max() <= per_image
    assert n == len(sampler) == -(-len(coco) // total)


def test_natural_coco_batches_miss_the_balance(coco):
    # what balancing is for: drawn uniformly, ja and zh are rare, zh often absent from a batch
    counts = np.array(
        [
            language_counts(coco, rows)
            for rows in ImageGroupedBatches.for_captions(coco, 16, 2, "natural").epoch(np.random.default_rng(0))
        ]
    )
    assert counts[:, 0].mean() > 24 and (counts[:, 2] == 0).mean() > 0.2


def test_natural_reproduces_the_uniform_sampler(coco):
    for sampler in (
        ImageGroupedBatches.for_captions(coco, 16, 2, "natural"),
        ImageGroupedBatches(coco.image_row, 16, 2),
    ):
        got = list(sampler.epoch(np.random.default_rng(3)))
        want = list(old_epoch(sampler, np.random.default_rng(3)))
        assert len(got) == len(want) and all(np.array_equal(a, b) for a, b in zip(got, want))


def test_balanced_batches_are_seeded(coco):
    sampler = ImageGroupedBatches.for_captions(coco, 16, 2)
    a = list(sampler.epoch(np.random.default_rng(5)))
    b = list(sampler.epoch(np.random.default_rng(5)))
    c = list(sampler.epoch(np.random.default_rng(6)))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_balancing_keeps_multi30k_batches_whole(m30k):
    # every image has every language: balanced batches keep images_per_batch images x captions_per_image
    # sentences (the same-image pairs the neighbourhood constraints need), now in equal language shares,
    # and an epoch still reaches every image
    sampler = ImageGroupedBatches.for_captions(m30k, 16, 2)
    drawn = np.zeros(len(sampler.images), dtype=int)
    for rows in sampler.epoch(np.random.default_rng(0)):
        images, per = np.unique(m30k.image_row[rows].numpy(), return_counts=True)
        assert len(images) == 16 and np.all(per == 2)
        assert language_counts(m30k, rows).tolist() == [8, 8, 8, 8]
        drawn[images] += 1
    assert drawn.min() >= 1


def test_monolingual_balanced_batches_match_the_natural_layout():
    en = encoded("m30k", ["en", "de", "fr", "cs"], 60)
    keep = np.flatnonzero(en.lang.numpy() == 0)
    mono = en.subset(keep)
    sampler = ImageGroupedBatches.for_captions(mono, 8, 2)
    for rows in sampler.epoch(np.random.default_rng(0)):
        _, per = np.unique(mono.image_row[rows].numpy(), return_counts=True)
        assert len(per) == 8 and np.all(per == 2)


# -- every language of an image in the batch ---------------------------------------------------

TEN = ["en", "de", "fr", "cs", "zh", "ja", "ar", "af", "ko", "ru"]


def test_at_ten_languages_quota_batches_starve_each_language_and_every_language_batches_do_not():
    ds = build_dataset("all", 40, 0, 0, seed=0, captions_per_image=2, langs=TEN)
    caps = ds.captions
    index = {img: i for i, img in enumerate(sorted(set(caps["image_id"])))}
    enc = EncodedCaptions.from_padded(
        torch.zeros(len(caps), 1, dtype=torch.long),
        torch.ones(len(caps), dtype=torch.long),
        torch.tensor([index[i] for i in caps["image_id"]]),
        torch.tensor([TEN.index(l) for l in caps["lang"]]),
        TEN,
        caps,
    )

    def images_per_language(rows):
        return [len(set(enc.image_row[rows][enc.lang[rows] == l].tolist())) for l in range(len(TEN))]

    rng = np.random.default_rng(0)
    # the quota split: 32 rows over ten languages, so a language's same-language triplet ranks 3-4 images
    for rows in ImageGroupedBatches.for_captions(enc, 16, 2).epoch(rng):
        assert max(images_per_language(rows)) <= 4
    # every language of each image: each language's sub-batch holds the batch's 16 images
    sampler = EveryLanguageBatches.for_captions(enc, 16, 2)
    assert len(sampler) == 3  # 40 images, 16 a batch
    for rows in sampler.epoch(rng):
        assert len(rows) == 160 and len(set(rows.tolist())) == 160
        assert images_per_language(rows) == [16] * 10


def test_every_language_batches_on_multi30k_coco_and_one_language(m30k, coco):
    rng = np.random.default_rng(0)
    for rows in EveryLanguageBatches.for_captions(m30k, 16, 2).epoch(rng):
        images, per = np.unique(m30k.image_row[rows].numpy(), return_counts=True)
        assert len(images) == 16 and np.all(per == 4)  # one caption in each of the four languages
        assert language_counts(m30k, rows).tolist() == [16, 16, 16, 16]
    # MSCOCO-like: every image has English, few ja or zh; balanced, the rarer languages' images are drawn
    # as often as the English-only ones, each with its English caption too
    counts = np.array(
        [language_counts(coco, rows) for rows in EveryLanguageBatches.for_captions(coco, 16, 2).epoch(rng)]
    )
    natural = np.array(
        [language_counts(coco, r) for r in EveryLanguageBatches.for_captions(coco, 16, 2, "natural").epoch(rng)]
    )
    assert np.all(counts[:, 0] >= 16) and counts[:, 1].mean() > 2 * natural[:, 1].mean()
    assert counts[:, 2].mean() > 2 * natural[:, 2].mean()
    # one language: captions_per_image captions of each image, as the quota batches have
    en = coco.subset(np.flatnonzero(coco.lang.numpy() == 0))
    for rows in EveryLanguageBatches.for_captions(en, 8, 2).epoch(rng):
        _, per = np.unique(en.image_row[rows].numpy(), return_counts=True)
        assert len(per) == 8 and np.all(per == 2)


def test_every_language_batches_are_seeded_and_chosen_by_name(m30k):
    sampler = batch_sampler(m30k, 16, 2, "balanced", "every_language")
    assert isinstance(sampler, EveryLanguageBatches)
    assert isinstance(batch_sampler(m30k, 16, 2, "balanced", "quota"), ImageGroupedBatches)
    a, b = (list(sampler.epoch(np.random.default_rng(5))) for _ in range(2))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    with pytest.raises(ValueError, match=r"training.image_captions: 'all' is neither quota nor every_language"):
        batch_sampler(m30k, 16, 2, "balanced", "all")


# -- neighbour batches: after a batch's first image, the images most like it ----------------------


def clustered_features(n_images: int, n_clusters: int = 8, seed: int = 0) -> np.ndarray:
    """Features of ``n_images`` images in tight clusters: image i belongs to cluster i % n_clusters."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_clusters, 12)) * 10
    return (centres[np.arange(n_images) % n_clusters] + rng.normal(size=(n_images, 12))).astype(np.float32)


def test_image_neighbours_rank_by_centred_cosine():
    feats = np.array([[10.0, 1.0, 0.0], [10.0, 0.9, 0.1], [10.0, -1.0, 0.0], [10.0, 0.0, 1.0]])
    near = ImageNeighbours(feats)
    # uncentred, every row is alike (cosines > 0.98); centred, row 1 is row 0's neighbour and row 2 its opposite
    assert near.nearest(0, np.array([2, 3, 1]), 3).tolist() == [2, 1, 0]
    assert near.similarity(0, np.array([2]))[0] < -0.5
    assert near.nearest(0, np.array([1]), 0).tolist() == []
    # centred by the training images' mean alone: a test image far off does not move the centre
    far = np.vstack([feats, [[-1000.0, 0.0, 0.0]]])
    np.testing.assert_allclose(ImageNeighbours(far, training_rows=np.arange(4)).unit[:4], near.unit, atol=1e-6)
    assert not np.allclose(ImageNeighbours(far).unit[:4], near.unit, atol=1e-3)
    assert neighbour_count(0.5, 16) == 8 and neighbour_count(1.0, 16) == 15 and neighbour_count(0.0, 16) == 0
    with pytest.raises(ValueError, match="neighbour_share"):
        neighbour_count(1.5, 16)
    with pytest.raises(ValueError, match=r"\(N, D\)"):
        ImageNeighbours(np.zeros(5))


@pytest.mark.parametrize("balance", ["balanced", "natural"])
def test_neighbour_batches_gather_each_first_image_s_cluster_and_cover_every_image(m30k, balance):
    n_img = int(m30k.image_row.max()) + 1
    feats = clustered_features(n_img)
    near = ImageNeighbours(feats)
    sampler = batch_sampler(m30k, 16, 2, balance, "every_language", neighbours=near, neighbour_share=0.5)
    random = batch_sampler(m30k, 16, 2, balance, "every_language")
    rng = np.random.default_rng(3)
    seen = []
    same, same_random = [], []
    for rows, random_rows in zip(sampler.epoch(rng), random.epoch(np.random.default_rng(3))):
        images = list(dict.fromkeys(m30k.image_row[rows].tolist()))  # in the order drawn
        assert len(images) == 16 and language_counts(m30k, rows).tolist() == [16, 16, 16, 16]
        seen += images
        first = images[0] % 8
        same.append(np.mean([i % 8 == first for i in images[1:9]]))
        random_images = list(dict.fromkeys(m30k.image_row[random_rows].tolist()))
        same_random.append(np.mean([i % 8 == random_images[0] % 8 for i in random_images[1:9]]))
    # the 8 images after the first are its cluster's (25 images a cluster, fewer left late in a pass)
    assert np.mean(same) > 0.8 and np.mean(same_random) < 0.3
    assert len(set(seen)) == n_img  # one epoch: every image (the last batch starts another pass)


def test_neighbour_share_zero_draws_the_random_batches_and_needs_every_language(m30k):
    near = ImageNeighbours(clustered_features(int(m30k.image_row.max()) + 1))
    plain = batch_sampler(m30k, 16, 2, "balanced", "every_language")
    zero = batch_sampler(m30k, 16, 2, "balanced", "every_language", neighbours=near, neighbour_share=0.0)
    a, b = (list(s.epoch(np.random.default_rng(1))) for s in (plain, zero))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    with pytest.raises(ValueError, match="every_language"):
        batch_sampler(m30k, 16, 2, "balanced", "quota", neighbours=near, neighbour_share=0.5)
    with pytest.raises(ValueError, match="needs the images' features"):
        batch_sampler(m30k, 16, 2, "balanced", "every_language", neighbour_share=0.5)


# -- wiring: train_variant builds its sampler from training.language_balance ---------------------

LANGS = ["en", "de", "zh"]


@pytest.fixture(scope="module")
def tiny():
    ds = build_dataset("all", 12, 6, 6, seed=0, captions_per_image=2, langs=LANGS)
    ids = sorted(set(ds.captions["image_id"]))
    features = np.random.default_rng(0).normal(size=(len(ids), 10)).astype(np.float32)
    counts = {l: dict(zip(*counts_frame(training_counts(ds.captions, l)).T.values)) for l in LANGS}
    return ds.captions, features, ids, counts


def embn_settings(**training):
    return {
        "model": "embn",
        "train_langs": list(LANGS),
        "eval_langs": list(LANGS),
        "captions": "human",
        "text": dict(segmenter="chars", min_count=1, max_len=20),
        "vocabulary": {},
        "seed": 0,
        "model_options": dict(
            word_dim=6, gru_hidden=5, image_hidden=7, joint_dim=4, dropout=0.0, word_vectors="random", pca_dim=3
        ),
        "training": {
            "epochs": 1,
            "lr": 1e-3,
            "weight_decay": 0.0,
            "lazy_word_updates": True,
            "images_per_batch": 6,
            "captions_per_image": 2,
            "margin": 0.05,
            "top_k": 10,
            "sentence_weight": 1.5,
            "neighbourhood_weight": 0.05,
            "grad_clip": 2.0,
            "device": "cpu",
            "batches_per_epoch": 1,
            "amp": "off",
            "loader_workers": None,
            **training,
        },
    }


class Stop(Exception):
    pass


@pytest.mark.parametrize(
    "training, expected",
    [
        ({}, "balanced"),
        ({"language_balance": "natural"}, "natural"),
        ({"language_balance": {"en": 1, "de": 1, "zh": 2}}, {"en": 1, "de": 1, "zh": 2}),
    ],
)
def test_train_variant_samples_with_the_configured_balance(tiny, tmp_path, monkeypatch, training, expected):
    seen = []

    def spy(captions, images_per_batch, captions_per_image=2, balance=None, image_captions="quota", **neighbours):
        assert neighbours == {"neighbours": None, "neighbour_share": 0.0}
        seen.append((images_per_batch, captions_per_image, balance))
        raise Stop

    monkeypatch.setattr(run, "batch_sampler", spy)
    with pytest.raises(Stop):
        run.train_variant(*tiny, embn_settings(**training), tmp_path, progress=False)
    assert seen == [(6, 2, expected)]


def test_train_variant_rejects_a_balance_without_a_training_language(tiny, tmp_path):
    with pytest.raises(ValueError, match=r"training.language_balance: no share for training language\(s\) zh"):
        run.train_variant(*tiny, embn_settings(language_balance={"en": 1, "de": 1}), tmp_path, progress=False)


def test_encoded_captions_keep_ragged_ids_and_hand_out_padded_batches():
    import pandas as pd

    from polyvse.text.encoded import encode_captions
    from polyvse.text.vocab import Vocabulary

    caps = pd.DataFrame(
        {
            "image_id": ["a", "b", "a", "b"],
            "lang": ["en", "en", "de", "en"],
            "text": ["a red ball", "dog", "ein hund auf dem gras", ""],
        }
    )
    vocab = Vocabulary.from_counts(
        {"en": {"a": 2, "red": 1, "ball": 1, "dog": 1}, "de": {"ein": 1, "hund": 1, "auf": 1, "dem": 1}}, 1
    )
    enc = encode_captions(caps, vocab, {"a": 0, "b": 1}, max_len=4)
    assert enc.lengths.tolist() == [3, 1, 4, 1]  # cut at max_len; an empty sentence is one <unk>
    assert enc.ids.dtype == torch.int32 and enc.ids.numel() == 9  # no padding stored
    expected = [vocab.encode(t, l, 4) for t, l in zip(caps["text"], caps["lang"])]
    tokens, lengths = enc.take([2, 0])
    assert tokens.dtype == torch.long and lengths.tolist() == [4, 3]
    assert tokens.tolist() == [expected[2], expected[0] + [0]]
    assert enc.take([1, 3])[0].tolist() == [expected[1], expected[3]]  # as wide as its longest row
    sub = enc.subset([2, 1])
    assert len(sub) == 2 and sub.take([0, 1])[0].tolist() == [expected[2], expected[1] + [0, 0, 0]]
    assert sub.frame["text"].tolist() == ["ein hund auf dem gras", "dog"]


def test_a_loader_process_draws_the_batches_this_process_would(m30k):
    """in_background with 1 worker: the same batches in the same order (the worker forks with the
    sampler's generator), each split into its host part and the device part as collate makes it."""
    sampler = ImageGroupedBatches.for_captions(m30k, 8, 2)
    features = torch.randn(int(m30k.image_row.max()) + 1, 5)

    def drawn(rng):
        return lambda: (host_batch(m30k, rows) for rows in sampler.epoch(rng))

    here = list(in_background(drawn(np.random.default_rng([0, 1])), 0))
    there = list(in_background(drawn(np.random.default_rng([0, 1])), 1))
    assert len(here) == len(there) == len(sampler)
    for a, b in zip(here, there):
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    rows = next(sampler.epoch(np.random.default_rng(3)))
    whole = collate(m30k, rows, features, torch.device("cpu"))
    split = batch_on_device(host_batch(m30k, rows), features, torch.device("cpu"))
    assert whole.keys() == split.keys() and all(torch.equal(whole[k], split[k]) for k in whole)
    with pytest.raises(ValueError, match="0 or 1 loader workers"):
        next(in_background(drawn(np.random.default_rng(0)), 2))


def test_training_with_a_loader_process_trains_the_same_model(tiny, tmp_path):
    models = [
        run.train_variant(
            *tiny, embn_settings(loader_workers=w, epochs=2, batches_per_epoch=3), tmp_path / str(w), progress=False
        ).model
        for w in (0, 1)
    ]
    a, b = (m.state_dict() for m in models)
    assert all(torch.equal(a[k], b[k]) for k in a)
