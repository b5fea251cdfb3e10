"""The MT error model of the dictionary backend (polyvse/translate/errors.py)."""

import pytest

from polyvse.data.synthetic import build_dataset, realise, write_dictionaries
from polyvse.translate.dictionary import DictionaryBackend, translate_words
from polyvse.translate.errors import Confusions, ErrorRates, noisy_words, same_lemma, sentence_rng
from polyvse.text.muse import MuseDictionary
from polyvse.translate.quality import score

DEFAULTS = {"wrong_sense": 0.06, "wrong_agreement": 0.12, "drop": 0.06, "untranslated": 0.04, "reorder": 0.08}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """English test captions of a small m30k set, their German references, the dictionaries."""
    ds = build_dataset("m30k", 0, 0, 40, seed=3, langs=["en", "de"])
    en = ds.captions[ds.captions["lang"] == "en"]
    src = list(en["text"])
    refs = [realise(ds.plans[i, "en", c], "de") for i, c in zip(en["image_id"], en["cap_idx"])]
    d = tmp_path_factory.mktemp("dicts")
    write_dictionaries(d, ["en", "de"])
    return src, refs, d


def backend(d, errors=None, seed=0):
    return DictionaryBackend(directory=d, languages=["en", "de"], errors=errors, seed=seed)


def test_zero_rates_reproduce_the_clean_dictionary_output(corpus):
    src, _, d = corpus
    clean = backend(d).translate_batch(src, "en", "de")
    zero = backend(d, {k: 0.0 for k in DEFAULTS}, seed=7).translate_batch(src, "en", "de")
    assert zero == clean
    assert clean == [translate_words(t, backend(d).dictionary("en", "de")) for t in src]
    # the noisy path itself with every rate 0 is the clean word choice
    dic = backend(d).dictionary("en", "de")
    toks = ["a", "red", "circle", "unknownword"]
    assert noisy_words(toks, Confusions(dic), ErrorRates(), sentence_rng(0, "en", "de", "x")) == [
        dic.first("a"),
        dic.first("red"),
        dic.first("circle"),
        "unknownword",
    ]


def test_raising_error_rates_lowers_bleu(corpus):
    src, refs, d = corpus
    bleus = []
    for scale in (0.0, 0.5, 1.0, 2.0):
        rates = {k: v * scale for k, v in DEFAULTS.items()}
        bleus.append(score(backend(d, rates).translate_batch(src, "en", "de"), refs, "de")[0])
    assert bleus == sorted(bleus, reverse=True) and bleus[0] - bleus[-1] > 10, bleus


def test_errors_are_deterministic_per_sentence_and_depend_on_the_seed(corpus):
    src, _, d = corpus
    b = backend(d, DEFAULTS, seed=0)
    once = b.translate_batch(src, "en", "de")
    # same sentence twice in a batch, alone, in another order, in a fresh backend: same output
    assert b.translate_batch([src[5], src[5]], "en", "de") == [once[5], once[5]]
    assert backend(d, DEFAULTS, seed=0).translate_batch(src[::-1], "en", "de") == once[::-1]
    other = backend(d, DEFAULTS, seed=1).translate_batch(src, "en", "de")
    assert other != once and sum(a != b for a, b in zip(once, other)) > len(src) // 4


def test_cache_key_changes_with_rates_and_seed(corpus):
    _, _, d = corpus
    clean = backend(d).cache_key("en", "de")
    assert backend(d, {k: 0.0 for k in DEFAULTS}).cache_key("en", "de") == clean  # same output, same entries
    keys = {
        backend(d, DEFAULTS).cache_key("en", "de"),
        backend(d, DEFAULTS, seed=1).cache_key("en", "de"),
        backend(d, {**DEFAULTS, "drop": 0.07}).cache_key("en", "de"),
        clean,
    }
    assert len(keys) == 4
    assert backend(d, DEFAULTS).cache_key("en", "de").startswith(clean + ":errors=")


def test_each_error_kind_does_what_it_says():
    dic = MuseDictionary.from_pairs(
        [
            ("red", "rote"),
            ("red", "roter"),
            ("circle", "kreis"),
            ("circles", "kreise"),
            ("a", "ein"),
            ("one", "ein"),
            ("one", "eine"),
        ],
        "en",
        "de",
    )
    conf = Confusions(dic)
    toks = ["a", "red", "circle"]
    rng = lambda: sentence_rng(0, "en", "de", "a red circle")  # noqa: E731
    # every word drawn for dropping: the sentence keeps its last one, translated, and never comes back empty
    assert noisy_words(toks, conf, ErrorRates(drop=1.0), rng()) == ["kreis"]
    assert noisy_words(["circle"], conf, ErrorRates(drop=1.0), rng()) == ["kreis"]
    assert noisy_words([], conf, ErrorRates(drop=1.0), rng()) == []
    assert noisy_words(toks, conf, ErrorRates(untranslated=1.0), rng()) == toks
    # red has a second form; a and circle have one listed translation and stay correct
    assert noisy_words(toks, conf, ErrorRates(wrong_agreement=1.0), rng()) == ["ein", "roter", "kreis"]
    # a shares ein with one (→ eine); circle/circles are one lemma (→ kreise); red has no related word
    assert noisy_words(toks, conf, ErrorRates(wrong_sense=1.0), rng()) == ["eine", "rote", "kreise"]
    assert noisy_words(toks, conf, ErrorRates(reorder=1.0), rng()) == ["rote", "ein", "kreis"]
    assert same_lemma("kreis", "kreise") and same_lemma("rote", "roten")
    assert not same_lemma("there", "these") and not same_lemma("the", "there")


def test_bad_rates_fail_naming_the_key(corpus):
    _, _, d = corpus
    with pytest.raises(ValueError, match=r"translate.errors.drop: expected a probability in \[0, 1\], got 1.5"):
        backend(d, {"drop": 1.5})
    with pytest.raises(ValueError, match="must sum to at most 1, got 1.2"):
        ErrorRates(drop=0.6, untranslated=0.6)
    with pytest.raises(ValueError, match=r"unknown error kind\(s\) \['typo'\]"):
        backend(d, {"typo": 0.1})
    with pytest.raises(ValueError, match="translate.errors.seed: expected an integer"):
        backend(d, DEFAULTS, seed="0")


def test_pivot_routes_draw_errors_per_hop(tmp_path):
    write_dictionaries(tmp_path, ["en", "de", "fr"])
    b = DictionaryBackend(directory=tmp_path, languages=["en", "de", "fr"], errors=DEFAULTS, seed=0)
    text = "Es gibt einen kleinen roten Kreis und zwei blaue Sterne."
    assert b.translate_batch([text], "de", "fr") == [
        b.translate_one_hop(b.translate_one_hop(text, "de", "en"), "en", "fr")
    ]
