"""The text-only corpus FastText trains on: SMALR §3.1/§4 and MULE §Experiments start
from FastText vectors trained on Wikipedia, not on the captions; the synthetic stand-in is the
captions' grammar and long-tailed lexicon run on unrendered scenes (rule corpus)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml

from polyvse.data.adapters import make_dataset
from polyvse.data.stats import dataset_stats
from polyvse.data.synthetic import build_dataset
from polyvse.data.synthetic.corpus import english_share_for, text_corpus, write_text_corpus
from polyvse.data.synthetic.languages.base import EN_NOUN
from polyvse.data.synthetic.lexicon import EN_NOUN_VARIANTS
from polyvse.errors import InputError
from polyvse.text.fasttext_vectors import read_corpus, vocabulary_vectors
from polyvse.text.tokenize import tokenize

REPO = Path(__file__).resolve().parents[1]


def _synonyms() -> dict[str, set[str]]:
    """English one-word shape nouns -> the forms of the *other* words for the same concept
    (synonyms and hyponyms of synthetic.lexicon.EN_NOUN_VARIANTS; a word's own plural is no synonym)."""
    out: dict[str, set[str]] = {}
    for concept, forms in EN_NOUN.items():
        lexemes = [set(forms)] + [set(v) for v in EN_NOUN_VARIANTS.get(concept, ()) if " " not in v[0]]
        for lexeme in lexemes:
            others = set().union(*(o for o in lexemes if o is not lexeme))
            out.update({w: others for w in lexeme})
    return out


def _neighbours(vectors: np.ndarray, words: list[str], word: str, k: int) -> list[str]:
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    i = words.index(word)
    return [words[j] for j in np.argsort(-(unit @ unit[i])) if j != i][:k]


def test_a_word_seen_once_in_the_captions_gets_its_synonyms_as_neighbours_from_the_corpus():
    # 100 captions of 20 images: "disc" (a synonym of "circle"), "loop" and "loops" (of "ring" and
    # "hoop") are seen once each, with a synonym elsewhere in the captions
    captions = build_dataset("m30k", 20, 0, 0, seed=0, langs=["en"], lexicon="long_tail").captions
    sentences = [tokenize(t, "en") for t in captions.text]
    counts = Counter(w for s in sentences for w in s)
    vocab = sorted(counts)
    synonyms = _synonyms()
    once = [w for w in vocab if counts[w] == 1 and synonyms.get(w, set()) & set(vocab)]
    assert once == ["disc", "loop", "loops"], once
    settings = {"dim": 64, "epochs": 5, "min_count": 1, "bucket": 50_000}  # small: a few seconds
    # the default config's corpus size (datasets.<ds>.synthetic.corpus_sentences)
    corpus = [tokenize(t, "en") for t in text_corpus("en", 30_000, seed=0, lexicon="long_tail")]
    vectors, summary = vocabulary_vectors(vocab, "en", settings, corpus)
    assert summary["source"] == "trained"
    for word in once:
        near = _neighbours(vectors, vocab, word, 5)
        assert synonyms[word] & set(near), (word, near)
    # trained on the captions alone (the old input), a word seen once has no such neighbours
    from_captions, _ = vocabulary_vectors(vocab, "en", settings, sentences)
    for word in once:
        assert not synonyms[word] & set(_neighbours(from_captions, vocab, word, 5)), word


def test_corpus_file_round_trip_tokenised_like_the_captions(tmp_path):
    path = tmp_path / "corpus" / "ja.txt"
    path.parent.mkdir()
    summary = write_text_corpus(path, "ja", 30, seed=4, lexicon="long_tail")
    lines = text_corpus("ja", 30, seed=4, lexicon="long_tail")
    assert path.read_text(encoding="utf-8") == "".join(line + "\n" for line in lines)
    assert summary["lines"] == 30 and summary["tokens"] > 0 and summary["types"] > 0
    assert read_corpus(path, "ja") == [tokenize(line, "ja") for line in lines]
    with pytest.raises(InputError, match="not found"):
        read_corpus(tmp_path / "nope.txt", "en")


@pytest.fixture(scope="module")
def default_config() -> dict:
    from snakemake.utils import validate

    c = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    validate(c, str(REPO / "config" / "schema.yaml"))  # fills the schema's defaults, as at DAG build
    return c


def test_default_synthetic_datasets_are_long_tailed_and_train_fasttext_on_a_corpus(default_config, tmp_path):
    for name in ("m30k", "coco"):  # the text datasets; spoken keeps the closed lexicon (config.yaml says why)
        ds = default_config["datasets"][name]
        assert ds["synthetic"]["lexicon"] == "long_tail", name
        assert ds["synthetic"]["corpus_sentences"] > 0, name
    # m30k as configured, with fewer training images (Heaps' law: fewer types), through the adapter
    settings = {**default_config["datasets"]["m30k"]}
    settings["synthetic"] = {**settings["synthetic"], "n_train": 400, "n_val": 2, "n_test": 200, "image_size": 32}
    captions, _ = make_dataset("m30k", settings, tmp_path)
    stats = dataset_stats(captions, "m30k", ["en", "de", "fr", "cs"], "test").set_index("lang")
    en = stats.loc["en"]
    assert en["types"] >= 1200 and en["hapax_share"] >= 0.30, en
    assert -1.6 <= en["rank_freq_slope"] <= -0.9 and 0.003 <= en["test_oov_rate"] <= 0.06, en
    for lang in ("de", "fr", "cs"):
        assert stats.loc[lang, "hapax_share"] >= 0.30 and stats.loc[lang, "types"] >= 400, stats.loc[lang]


def test_english_lines_in_a_non_latin_corpus_leave_its_other_lines_as_they_were():
    plain = text_corpus("ar", 400, 3, "long_tail")
    mixed = text_corpus("ar", 400, 3, "long_tail", english_share=english_share_for("ar", 0.25))
    english = [i for i, (a, b) in enumerate(zip(plain, mixed)) if a != b]
    assert 60 <= len(english) <= 140  # a quarter of 400, drawn
    assert all(re.fullmatch(r"[A-Za-z0-9 .,'-]+", mixed[i]) for i in english)  # English, in Latin letters
    assert not any(re.search(r"[A-Za-z]", plain[i]) for i in english)  # where Arabic was
    # a Latin-script language gets none: its corpus (and its FastText) do not change
    assert english_share_for("de", 0.25) == 0.0 and english_share_for("ko", 0.25) == 0.25
    with pytest.raises(InputError, match="english_share"):
        text_corpus("ar", 3, 3, "long_tail", english_share=1.5)


def test_the_dataset_depends_on_no_corpus_setting():
    from polyvse.data.adapters import dataset_settings

    settings = {"adapter": "synthetic", "synthetic": {"n_train": 5, "corpus_sentences": 9, "corpus_english_share": 0.1}}
    assert dataset_settings(settings) == {"adapter": "synthetic", "synthetic": {"n_train": 5}}
    assert settings["synthetic"]["corpus_sentences"] == 9  # the config itself is left as it was
    assert dataset_settings({"adapter": "multi30k", "multi30k": {"root": "x"}}) == {
        "adapter": "multi30k",
        "multi30k": {"root": "x"},
    }
