"""Model families in training: inputs each needs, how each is built and trained,
parameter counts, checkpoints that rebuild every family (polyvse.train.families)."""

import json
import os
from pathlib import Path
from types import SimpleNamespace
import numpy as np
import pandas as pd
import pytest
import torch

from polyvse.data.synthetic import build_dataset
from polyvse.models.embn import EmbN
from polyvse.io import load_torch, save_torch
from polyvse.models.trained import load_model
from polyvse.text.chars import CharVocabulary
from polyvse.text.joint_vectors import joint_vectors
from polyvse.text.reduction import DictionaryMappedVocabulary
from polyvse.text.vocab import Vocabulary, counts_frame, training_counts
from polyvse.train import families
from polyvse.train.families import FamilyInputs, variant_needs
from polyvse.train.objectives_mule import MULEObjective, MULEPretrainObjective
from polyvse.train.objectives_smalr import SMALRObjective
from polyvse.train.pretrain import latent_assignment_for, pretrain_latent_vocabulary, latent_usage
from polyvse.train.run import TrainingProgress, train_variant
from polyvse.text.muse import MuseDictionary

# POLYVSE_TEST_DEVICE=cuda runs these trainings on a GPU (bench/cuda_session.sh); CI has the CPU
DEVICE = os.environ.get("POLYVSE_TEST_DEVICE", "cpu")

LANGS = ["en", "de", "zh"]
TRAINING = dict(
    epochs=1,
    lr=1e-3,
    weight_decay=0.0,
    lazy_word_updates=True,
    images_per_batch=6,
    captions_per_image=2,
    margin=0.05,
    top_k=10,
    sentence_weight=1.5,
    neighbourhood_weight=0.05,
    grad_clip=2.0,
    device=DEVICE,
    batches_per_epoch=2,
    amp="off",
    loader_workers=None,
)
TEXT = dict(segmenter="chars", min_count=1, max_len=20)
OPTIONS = {
    "embn": dict(
        word_dim=6, gru_hidden=5, image_hidden=7, joint_dim=4, dropout=0.0, word_vectors="fasttext", pca_dim=3
    ),
    "parallel_embn": dict(word_dim=6, gru_hidden=5, image_hidden=7, joint_dim=4, dropout=0.0, word_vectors="fasttext"),
    "mule": dict(
        word_dim=6,
        universal_dim=8,
        gru_hidden=5,
        image_hidden=7,
        joint_dim=4,
        dropout=0.0,
        word_vectors="fasttext",
        pca_dim=3,
        final_nc=True,
        universal_nc=True,
        language_classifier=True,
        adversarial_weight=1e-6,
        lp_epochs=1,
    ),
    "liwe": dict(char_dim=3, gru_hidden=5, joint_dim=4, image_hidden=7, dropout=0.0, loss_margin=0.2, loss_top_k=1),
}
LATENT = dict(
    pretrain="latent",
    universal_dim=8,
    specific_words=4,
    specific_dim=3,
    gru_hidden=5,
    joint_dim=4,
    image_hidden=7,
    dropout=0.0,
    adversarial_weight=1e-6,
    mask_weight=1e-4,
    mask_rate=0.2,
    masked_multimodal=True,
)
OPTIONS.update(la=LATENT, hem=LATENT, smalr=LATENT)


@pytest.fixture(scope="module")
def data():
    ds = build_dataset("all", 12, 6, 6, seed=0, captions_per_image=2, langs=LANGS)
    captions = ds.captions
    ids = sorted(set(captions["image_id"]))
    features = np.random.default_rng(0).normal(size=(len(ids), 10)).astype(np.float32)
    counts = {l: dict(zip(*counts_frame(training_counts(captions, l)).T.values)) for l in LANGS}
    rng = np.random.default_rng(1)
    fasttext = {l: rng.normal(size=(len(c), 6)).astype(np.float32) for l, c in counts.items()}
    pca = {l: v[:, :3].copy() for l, v in fasttext.items()}
    return captions, features, ids, counts, fasttext, pca


def settings(family, **kw):
    s = {
        "model": family,
        "model_options": dict(OPTIONS[family]),
        "training": dict(TRAINING),
        "train_langs": list(LANGS),
        "eval_langs": list(LANGS),
        "captions": "human",
        "text": dict(TEXT),
        "vocabulary": {},
        "seed": 0,
    }
    for k, v in kw.items():
        s[k] = {**s[k], **v} if isinstance(v, dict) and k != "vocabulary" else v
    return s


def reloaded(saved, path):
    """``saved`` written by save_torch and read back by load_torch (weights_only=True)."""
    save_torch(saved, path)
    return load_torch(path)


def latent_output(data, tmp_path):
    captions, _, _, counts, fasttext, _ = data
    cfg = dict(
        langs=LANGS,
        captions="human",
        n_tokens=12,
        dim=8,
        scorer_dim=4,
        explore_p=0.2,
        explore_m=3,
        temperature=1.0,
        epochs=1,
        lr=1e-2,
        images_per_batch=6,
        captions_per_image=2,
        batches_per_epoch=2,
        margin=0.05,
        top_k=10,
        device="cpu",
    )
    saved = pretrain_latent_vocabulary(
        captions,
        {l: list(c) for l, c in counts.items()},
        counts,
        fasttext,
        cfg,
        TEXT,
        tmp_path / "pretrain",
        progress=False,
    )
    return reloaded(saved, tmp_path / "latent.pt")  # what the train rule reads: pretrain/{name}.pt


def inputs_for(data, tmp_path=None, family="embn"):
    _, _, _, counts, fasttext, pca = data
    latent = latent_output(data, tmp_path) if family in ("la", "hem", "smalr") else None
    return FamilyInputs(fasttext=fasttext, pca=pca, latent=latent)


# -- what each family reads ---------------------------------------------------------------


def test_variant_needs_per_family():
    assert variant_needs(settings("embn")).fasttext_langs == LANGS
    pca = variant_needs(settings("mule", model_options={"word_vectors": "pca", "pca_dim": 3}))
    assert (pca.pca_dim, pca.pca_langs, pca.fasttext_langs) == (3, LANGS, [])
    assert variant_needs(settings("embn", model_options={"word_vectors": "random"})).fasttext_langs == []
    hem = variant_needs(settings("hem"))
    assert (hem.pretrain, hem.pca_dim, hem.fasttext_langs) == ("latent", 3, [])
    la = variant_needs(settings("la", model_options={"specific_words": 0}))
    assert la.pretrain == "latent" and la.pca_dim is None
    assert variant_needs(settings("liwe")) == families.VariantNeeds()
    assert variant_needs(settings("mule", vocabulary={"dictionary_threshold": 5})).dictionaries


# -- vocabularies -----------------------------------------------------------------------------


def test_vocabularies_words_thresholded_chars(data):
    captions, _, _, counts, _, _ = data
    train = captions[captions["split"] == "train"]
    full = families.build_vocabulary(settings("embn"), FamilyInputs(counts=counts), train)
    cut = families.build_vocabulary(settings("embn", vocabulary={"min_count": 10}), FamilyInputs(counts=counts), train)
    assert isinstance(full, Vocabulary) and len(cut) < len(full)
    kept = sum(1 for l in LANGS for c in counts[l].values() if c >= 10)
    assert len(cut) == 1 + len(LANGS) + kept  # padding, one <unk> a language, the words seen ≥ 10 times
    chars = families.build_vocabulary(settings("liwe"), FamilyInputs(counts=counts), train)
    assert isinstance(chars, CharVocabulary) and "年" not in chars.itos and len(chars) > 26


# -- initial word vectors ------------------------------------------------------------------


def test_fasttext_rows_initialise_the_embedding_table(data):
    _, _, _, counts, fasttext, _ = data
    vocab = Vocabulary.from_counts(counts)
    inputs = FamilyInputs(tokens={l: list(c) for l, c in counts.items()}, counts=counts, fasttext=fasttext)
    model = families.build_model(settings("embn"), vocab, 10, inputs)
    word = list(counts["de"])[3]
    row = vocab.stoi[("de", word)]
    assert torch.allclose(model.word_embeddings.weight[row], torch.from_numpy(fasttext["de"][3]))
    assert torch.allclose(
        model.word_embeddings.weight[vocab.stoi[("zh", "<unk>")]],
        torch.from_numpy(fasttext["zh"].mean(axis=0)),
        atol=1e-6,
    )
    assert float(model.word_embeddings.weight[0].detach().abs().sum()) == 0.0


def test_pca_vectors_go_through_an_fc_and_count_as_lookup(data):
    _, _, _, counts, _, pca = data
    vocab = Vocabulary.from_counts(counts)
    inputs = FamilyInputs(tokens={l: list(c) for l, c in counts.items()}, counts=counts, pca=pca)
    model = families.build_model(settings("embn", model_options={"word_vectors": "pca"}), vocab, 10, inputs)
    assert isinstance(model, EmbN) and model.word_embeddings.weight.shape == (len(vocab), 3)
    assert model.input_fc.in_features == 3 and model.input_fc.out_features == 6
    # hand count: table V×3, FC 3→6, GRU(6→5), FC 5→4, image 10→7 (+BN) →4
    v = len(vocab)
    gru = 3 * (6 * 5 + 5 * 5 + 2 * 5)
    text = gru + 5 * 4 + 4
    image = 10 * 7 + 7 + 2 * 7 + 7 * 4 + 4
    lookup = v * 3 + 3 * 6 + 6
    assert model.parameter_counts() == (lookup + text + image, text + image)
    mule = families.build_model(settings("mule", model_options={"word_vectors": "pca"}), vocab, 10, inputs)
    assert mule.language_fc[0].in_features == 3 and mule.word_embeddings.weight.shape == (len(vocab), 3)


def test_fasttext_size_must_match_word_dim(data):
    _, _, _, counts, fasttext, _ = data
    vocab = Vocabulary.from_counts(counts)
    inputs = FamilyInputs(tokens={l: list(c) for l, c in counts.items()}, counts=counts, fasttext=fasttext)
    with pytest.raises(ValueError, match="word_dim"):
        families.build_model(settings("embn", model_options={"word_dim": 7}), vocab, 10, inputs)


# -- latent vocabulary ----------------------------------------------------------------------


def test_pretraining_assigns_every_word_and_drops_unused_tokens(data, tmp_path):
    saved = latent_output(data, tmp_path)
    n_words = len(saved["entries"]) - 1
    assert saved["word_to_token"].shape == (n_words + 1,) and int(saved["word_to_token"][0]) == -1
    assert bool((saved["word_to_token"][1:] >= 0).all())
    used = torch.unique(saved["word_to_token"][1:])
    assert torch.equal(used, torch.arange(saved["embeddings"].shape[0]))  # renumbered 0..N_used-1, none unused
    assert saved["embeddings"].shape[1] == 8 and saved["embeddings"].shape[0] <= 12
    assert (tmp_path / "pretrain" / "last.pt").exists()


def test_latent_assignment_for_another_vocabulary(data, tmp_path):
    _, _, _, counts, _, _ = data
    saved = latent_output(data, tmp_path)
    entries = {tuple(e): i for i, e in enumerate(saved["entries"])}
    vocab = Vocabulary.from_counts({"de": counts["de"]})  # one language of the pretraining
    words = torch.ones(len(vocab), dtype=torch.bool)
    words[2] = False  # a word with a language-specific embedding
    a = latent_assignment_for(vocab, saved, words)
    assert int(a.word_to_token[0]) == -1 and int(a.word_to_token[2]) == -1
    for j in (1, 3, 4):
        row = entries[vocab.itos[j]]
        token = int(saved["word_to_token"][row])
        assert torch.equal(a.embeddings[int(a.word_to_token[j])], saved["embeddings"][token])
    assert a.n_tokens == len(torch.unique(a.word_to_token[a.word_to_token >= 0]))


def test_hem_keeps_top_k_words_specific_and_la_none(data, tmp_path):
    _, _, _, counts, _, pca = data
    inputs = FamilyInputs(
        tokens={l: list(c) for l, c in counts.items()}, counts=counts, pca=pca, latent=latent_output(data, tmp_path)
    )
    vocab = Vocabulary.from_counts(counts)
    hem = families.build_model(settings("hem"), vocab, 10, inputs)
    assert hem.config.n_specific == 4 * len(LANGS)
    top_de = list(counts["de"])[0]
    slot = int(hem.specific_of_word[vocab.stoi[("de", top_de)]])
    assert torch.allclose(hem.specific_embeddings.weight[slot], torch.from_numpy(pca["de"][0]))
    assert bool(((hem.latent_of_word >= 0) ^ (hem.specific_of_word >= 0))[1:].all())  # each word exactly one
    la = families.build_model(settings("la"), vocab, 10, inputs)
    assert la.config.n_specific == 0 and bool((la.latent_of_word[1:] >= 0).all())
    assert hem.config.n_latent <= la.config.n_latent  # tokens used only by specific words are dropped


# -- objectives and phases ------------------------------------------------------------------


def test_objectives_and_phases_per_family(data):
    model = families.build_model(
        settings("mule", model_options={"word_vectors": "random"}),
        Vocabulary.from_counts(data[3]),
        10,
        FamilyInputs(counts=data[3]),
    )
    ph = families.phases(settings("mule"), model)
    assert [p.name for p in ph] == ["lp", "main"] and isinstance(ph[0].objective, MULEPretrainObjective)
    assert {id(p) for p in ph[0].parameters} == {id(p) for p in model.universal_parameters()}
    assert ph[0].select_by == "loss" and ph[0].epochs == 1
    ablation = families.make_objective(
        settings("mule", model_options={"universal_nc": False, "language_classifier": False})
    )
    assert isinstance(ablation, MULEObjective) and not ablation.universal_nc and not ablation.language_classifier
    assert [p.name for p in families.phases(settings("mule", model_options={"lp_epochs": 0}), model)] == ["main"]
    smalr, hem = families.make_objective(settings("smalr")), families.make_objective(settings("hem"))
    assert isinstance(smalr, SMALRObjective) and smalr.mclm and not hem.mclm
    assert (smalr.mask_weight, smalr.adversarial_weight, smalr.neighbourhood_weight) == (1e-4, 1e-6, 0.05)


def test_progress_drives_the_objective_and_resumes():
    objective = MULEObjective()
    tracker = TrainingProgress(objective, total_steps=4)
    assert objective.progress == 0.0
    tracker.step()
    tracker.step()
    assert objective.progress == 0.5
    again = TrainingProgress(MULEObjective(), total_steps=4)
    again.load_state_dict(tracker.state_dict())
    assert again.objective.progress == 0.5


# -- training every family, and rebuilding it from its checkpoint -----------------------------


@pytest.mark.parametrize("family", ["embn", "parallel_embn", "mule", "la", "hem", "smalr", "liwe"])
def test_every_family_trains_and_rebuilds_from_its_checkpoint(data, tmp_path, family):
    captions, features, ids, counts, _, _ = data
    s = settings(family)
    trained = train_variant(
        captions, features, ids, counts, s, tmp_path / "ckpt", progress=False, inputs=inputs_for(data, tmp_path, family)
    )
    saved = reloaded(trained.saved(), tmp_path / "model.pt")  # through the file, loaded with weights_only=True
    model, vocab = load_model(saved)
    assert type(vocab) is type(trained.vocab) and model.family == family
    frame = captions[(captions["split"] == "test") & (captions["lang"] == "de")].head(4)
    from polyvse.train.data import encode_captions

    enc = encode_captions(frame, vocab, {img: i for i, img in enumerate(ids)}, 20)
    model.eval(), trained.model.eval()
    tokens, lengths = enc.take(torch.arange(len(enc)))
    with torch.no_grad():
        a = model.embed_sentences(tokens, lengths, enc.lang)
        b = trained.model.embed_sentences(tokens, lengths, enc.lang)
    assert torch.allclose(a, b) and torch.allclose(a.norm(dim=1), torch.ones(4), atol=1e-5)
    summary = trained.summary()
    assert (summary["params_train"], summary["params_test"]) == trained.model.parameter_counts()
    expected_phases = ["lp"] if family == "mule" else []
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir() if p.is_dir()) == expected_phases


@pytest.mark.parametrize("family", ["embn", "parallel_embn", "mule", "la", "hem", "smalr", "liwe"])
def test_every_family_trains_under_bf16_autocast(data, tmp_path, family):
    """training.amp: bf16 (meant for CUDA; autocast runs on the CPU too, which is where CI can
    check that no family mixes a bfloat16 result into a float32 tensor)."""
    captions, features, ids, counts, _, _ = data
    s = settings(family)
    s["training"]["amp"] = "bf16"
    trained = train_variant(
        captions, features, ids, counts, s, tmp_path / "ckpt", progress=False, inputs=inputs_for(data, tmp_path, family)
    )
    assert np.isfinite(trained.fit.log["loss"]).all()
    assert all(p.dtype == torch.float32 for p in trained.model.parameters())


def test_dictionary_mapped_variant_reads_rare_words_as_english(data, tmp_path):
    captions, features, ids, counts, fasttext, _ = data
    # de words seen fewer than 4 times map to the English word of the same rank (a made-up dictionary)
    de_words, en_words = list(counts["de"]), list(counts["en"])
    dictionary = MuseDictionary.from_pairs(list(zip(de_words, en_words)), "de", "en")
    zh = MuseDictionary.from_pairs([], "zh", "en")
    inputs = FamilyInputs(fasttext=fasttext, dictionaries={"de": dictionary, "zh": zh})
    s = settings("mule", vocabulary={"dictionary_threshold": 4})
    trained = train_variant(captions, features, ids, counts, s, tmp_path, progress=False, inputs=inputs)
    vocab = trained.vocab
    assert isinstance(vocab, DictionaryMappedVocabulary)
    rare = [w for w in de_words if counts["de"][w] < 4]
    assert rare and all(("de", w) not in vocab.stoi for w in rare)
    w = rare[0]
    english = en_words[de_words.index(w)]
    assert vocab.encode(w, "de") == [vocab.stoi[("en", english)]]
    again, v2 = load_model(reloaded(trained.saved(), tmp_path / "model.pt"))
    assert v2.encode(w, "de") == vocab.encode(w, "de") and v2.mapping == vocab.mapping


def test_joint_vectors_rows_and_errors():
    vocab = Vocabulary.from_counts({"en": {"a": 3, "b": 1}, "de": {"x": 2}}, min_count=2)  # drops en "b"
    tables = {"en": np.array([[1.0, 0.0], [0.0, 1.0]]), "de": np.array([[5.0, 5.0]])}
    out = joint_vectors(vocab, {"en": ["a", "b"], "de": ["x"]}, tables)
    assert out.shape == (len(vocab), 2) and out.dtype == np.float32
    assert out[vocab.stoi[("en", "a")]].tolist() == [1.0, 0.0]
    assert out[vocab.stoi[("en", "<unk>")]].tolist() == [0.5, 0.5]  # mean of the language's vectors
    assert out[0].tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="vectors"):
        joint_vectors(vocab, {"en": ["a"], "de": ["x"]}, tables)


def test_cross_lingual_recall_counts_ties_against_the_query():
    from polyvse.train.pretrain import cross_lingual_recall

    image, lang = torch.tensor([0, 0, 1, 1]), torch.tensor([0, 1, 0, 1])
    apart = torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    assert cross_lingual_recall(apart, image, lang, ks=(1,)) == 100.0
    collapsed = torch.ones(4, 2)  # every sentence equal: no retrieval, not perfect retrieval
    assert cross_lingual_recall(collapsed, image, lang, ks=(1,)) == 0.0


def test_usage_term_is_zero_for_a_uniform_assignment_and_positive_for_a_collapsed_one():
    from polyvse.models.latent_vocab import LatentVocabulary, LatentVocabularyConfig
    from polyvse.train.objectives_smalr import LatentVocabularyObjective

    model = LatentVocabulary(LatentVocabularyConfig(vocab_size=5, word_dim=3, n_tokens=4, dim=2, scorer_dim=3)).eval()
    batch = {
        "tokens": torch.tensor([[1, 2], [3, 4]]),
        "lengths": torch.tensor([2, 2]),
        "image_of_sentence": torch.tensor([0, 0]),
    }
    base, usage = LatentVocabularyObjective(), LatentVocabularyObjective(usage_weight=1.0)
    with torch.no_grad():
        model.query.weight.zero_(), model.query.bias.zero_()  # equal scores: π uniform, entropy maximal
        uniform, plain = usage(model, batch), base(model, batch)
        assert float(uniform["loss"]) == pytest.approx(float(plain["loss"]), abs=1e-6)
        model.query.bias.copy_(torch.tensor([50.0, 0.0, 0.0]))
        model.keys.zero_(), model.keys[0, 0].fill_(1.0)  # every word scores token 0 highest
        collapsed, plain = usage(model, batch), base(model, batch)
    assert float(collapsed["usage_entropy"]) < 0.01
    assert float(collapsed["loss"]) - float(plain["loss"]) == pytest.approx(1.0, abs=0.01)


def test_latent_usage_by_hand():
    entries = [("", "<pad>"), ("en", "a"), ("en", "b"), ("en", "c"), ("de", "x")]
    usage = latent_usage(entries, torch.tensor([-1, 0, 0, 1, 2]), n_tokens=8).set_index("scope")
    assert list(usage.index) == ["all", "en", "de"]
    # all: 4 words over tokens {0: 2, 1: 1, 2: 1} → H = 1.5 bits, ceiling log2(4) = 2
    assert usage.loc["all", ["words", "tokens_used", "largest_token_words"]].tolist() == [4, 3, 2]
    assert usage.loc["all", "largest_token_share"] == 0.5 and usage.loc["all", "entropy_bits"] == 1.5
    assert usage.loc["all", "normalised_entropy"] == 0.75 and usage.loc["all", "effective_tokens"] == 2.8
    # en: {0: 2, 1: 1} → H = 0.918 bits over log2(3)
    assert usage.loc["en", "entropy_bits"] == 0.918 and usage.loc["en", "normalised_entropy"] == round(
        0.9183 / 1.585, 4
    )
    assert usage.loc["de", ["words", "tokens_used", "normalised_entropy"]].tolist() == [1, 1, 0.0]
    collapsed = latent_usage(entries, torch.tensor([-1, 3, 3, 3, 3]), n_tokens=8).set_index("scope")
    assert collapsed.loc["all", "largest_token_share"] == 1.0 and collapsed.loc["all", "entropy_bits"] == 0.0


def test_pretraining_does_not_collapse_onto_a_few_tokens(data, tmp_path):
    """The pretraining's assignment spreads its words: a degenerate run (one token holding most
    words: SMALR §3.1's hard assignment at a bad temperature) fails here."""
    saved = latent_output(data, tmp_path)
    usage = latent_usage(saved["entries"], saved["word_to_token"], 12).set_index("scope")
    assert usage.loc["all", "largest_token_share"] < 0.5, usage
    assert usage.loc["all", "normalised_entropy"] > 0.5, usage


def test_cross_lingual_recall_is_the_same_in_chunks():
    from polyvse.train.pretrain import cross_lingual_recall

    g = torch.Generator().manual_seed(0)
    sentences = torch.randn(60, 8, generator=g)
    image, lang = torch.arange(60) // 3, torch.arange(60) % 3
    whole = cross_lingual_recall(sentences, image, lang, chunk=1000)
    assert 0.0 < whole < 100.0
    assert cross_lingual_recall(sentences, image, lang, chunk=7) == whole


@pytest.mark.parametrize("family", ["embn", "mule", "smalr", "liwe"])
def test_a_training_does_not_depend_on_the_one_before_it_in_the_process(data, tmp_path, family):
    """Rule train_seeds trains a variant's seeds one after the other in one process, on inputs read
    once: a seed's model must be the one a job of its own trains (nothing carried over from the
    training before it, nothing written into the shared captions, features or word vectors)."""
    captions, features, ids, counts, _, _ = data
    inputs = inputs_for(data, tmp_path, family)
    snapshot = (captions.copy(), features.copy(), {k: v.copy() for k, v in inputs.fasttext.items()})
    first, second = settings(family, seed=5), settings(family, seed=6)
    train_variant(captions, features, ids, counts, first, tmp_path / "a", progress=False, inputs=inputs)
    after_another = train_variant(
        captions, features, ids, counts, second, tmp_path / "b", progress=False, inputs=inputs
    )
    pd.testing.assert_frame_equal(captions, snapshot[0])
    np.testing.assert_array_equal(features, snapshot[1])
    for lang, table in inputs.fasttext.items():
        np.testing.assert_array_equal(table, snapshot[2][lang])
    alone = train_variant(
        captions,
        features,
        ids,
        counts,
        second,
        tmp_path / "c",
        progress=False,
        inputs=inputs_for(data, tmp_path, family),
    )
    timings = ["seconds", "seconds_validating"]
    pd.testing.assert_frame_equal(after_another.fit.log.drop(columns=timings), alone.fit.log.drop(columns=timings))
    for k, v in alone.model.state_dict().items():
        assert torch.equal(v, after_another.model.state_dict()[k]), k


def test_per_training_reads_a_job_of_one_training_and_a_seed_group_alike():
    from polyvse.train.groups import first_of, per_training

    one = per_training({"seed": 0}, "ckpt", "model.pt")
    assert one == [({"seed": 0}, "ckpt", "model.pt")]
    group = per_training([{"seed": 0}, {"seed": 1}], ["a", "b"], ["a.pt", "b.pt"])
    assert group == [({"seed": 0}, "a", "a.pt"), ({"seed": 1}, "b", "b.pt")]
    assert first_of([{"seed": 0}, {"seed": 1}]) == {"seed": 0} and first_of({"seed": 3}) == {"seed": 3}
    with pytest.raises(ValueError, match="different lengths"):
        per_training([{"seed": 0}, {"seed": 1}], ["a"])


def test_job_trainings_claims_each_checkpoint_as_its_training_comes_up_and_write_trained_writes_its_files(tmp_path):
    from polyvse.train.groups import job_trainings, write_trained
    from polyvse.train.loop import FitResult

    data = tmp_path / "captions.parquet"
    data.write_text("x")
    folders = [tmp_path / "v" / "checkpoint", tmp_path / "v-s1" / "checkpoint"]
    models = [str(f.parent / "model.pt") for f in folders]
    files = [[str(f.parent / name) for f in folders] for name in ("epochs.tsv", "params.json", "eval.tsv")]
    params = SimpleNamespace(settings=[{"seed": 0}, {"seed": 1}], checkpoint_dir=[str(f) for f in folders])
    outputs = SimpleNamespace(model=models, epochs=files[0], params=files[1], evaluation=files[2])
    members = job_trainings(params, outputs, [str(data)])
    first = next(members)
    assert (first.name, first.settings, first.checkpoint_dir) == ("v", {"seed": 0}, folders[0])
    assert (folders[0] / "inputs.json").exists() and not folders[1].exists()  # the second is claimed when it comes up

    class Trained:
        fit = FitResult({}, 2, 0.5, pd.DataFrame({"epoch": [1, 2], "val_mR": [0.25, 0.5]}))

        def saved(self) -> dict:
            return {"family": "x", "best_epoch": 2}

        def summary(self) -> dict:
            return {"best_epoch": 2}

    saved = write_trained(Trained(), first, {"variant": first.name, **Trained().summary()})
    assert saved == load_torch(models[0]) == {"family": "x", "best_epoch": 2}
    assert pd.read_csv(first.epochs, sep="\t")["val_mR"].tolist() == [0.25, 0.5]
    assert json.loads(Path(first.params).read_text()) == {"variant": "v", "best_epoch": 2}
    second = next(members)
    assert (second.name, second.evaluation) == ("v-s1", files[2][1]) and (folders[1] / "inputs.json").exists()
    assert next(members, None) is None


def test_load_model_names_a_file_that_is_no_trained_model():
    with pytest.raises(KeyError, match="not a trained model \\(family 'nope'\\)"):
        load_model({"family": "nope"})
    with pytest.raises(KeyError, match="family None"):
        load_model({"state_dict": {}})
