"""The transfer MT backend: plan lookup, target-side errors, fallback, calibration's direction."""

import numpy as np
import pytest

from polyvse.data.synthetic import build_dataset, plan_realisations, realise, reference_captions, write_dictionaries
from polyvse.translate import BACKENDS, make_backend
from polyvse.translate.dictionary import DictionaryBackend
from polyvse.translate.errors import TOKEN_ERRORS, ErrorRates, noisy_target_words
from polyvse.translate.quality import english_test_references, normalise, score
from polyvse.translate.stage import measure_quality, synthetic_references, synthetic_realisations
from polyvse.translate.transfer import REALISATION_COLUMNS, TransferBackend

LANGS = ["en", "de", "fr", "cs", "ja", "ar"]
SYN = {
    "adapter": "synthetic",
    "synthetic": {
        "profile": "m30k",
        "n_train": 3,
        "n_val": 1,
        "n_test": 6,
        "seed": 5,
        "captions_per_image": 2,
        "lexicon": "closed",
    },
}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("transfer")
    ds = build_dataset("m30k", 3, 1, 6, seed=5, captions_per_image=2, lexicon="closed")
    write_dictionaries(d / "dicts", LANGS, "closed")
    table = plan_realisations(ds, LANGS)
    table.to_parquet(d / "references.parquet")
    return ds, table, d


def backend(tiny, **errors) -> TransferBackend:
    _, _, d = tiny
    return TransferBackend(directory=d / "dicts", references=d / "references.parquet", languages=LANGS, errors=errors)


def test_table_has_every_caption_in_every_language_and_matches_the_references_rule(tiny):
    ds, table, _ = tiny
    assert list(table.columns) == REALISATION_COLUMNS
    assert len(table) == len(ds.captions) * len(LANGS)
    human = table[table["lang"] == table["src_lang"]].reset_index(drop=True)
    assert list(human["text"]) == list(ds.captions["text"])
    assert synthetic_realisations(SYN, LANGS).equals(table)  # regenerated from the config block, same seeds
    assert english_test_references(table).equals(reference_captions(ds, LANGS, "test"))
    assert english_test_references(table).equals(synthetic_references(SYN, LANGS))


def test_without_errors_a_caption_becomes_its_plan_realised_in_the_target(tiny):
    ds, _, _ = tiny
    b = backend(tiny)
    assert "transfer" in BACKENDS and isinstance(
        make_backend("transfer", directory=tiny[2] / "dicts", languages=LANGS), TransferBackend
    )
    caps = ds.captions
    for src in ("en", "de", "fr"):
        rows = caps[caps["lang"] == src]
        for tgt in LANGS:
            if tgt == src:
                continue
            want = [
                normalise(realise(ds.plans[i, src, int(k)], tgt), tgt)
                for i, k in rows[["image_id", "cap_idx"]].itertuples(index=False)
            ]
            assert b.translate_batch(list(rows["text"]), src, tgt) == want, (src, tgt)


def test_unknown_text_falls_back_to_word_by_word(tiny):
    _, _, d = tiny
    rates = {"drop": 0.2, "reorder": 0.2}
    b = backend(tiny, **rates)
    words = DictionaryBackend(directory=d / "dicts", languages=LANGS, errors=rates)
    texts = ["A red dog sleeps.", "zzz unknown words"]
    assert b.translate_batch(texts, "en", "de") == words.translate_batch(texts, "en", "de")
    assert b.translate_batch(texts, "de", "fr") == words.translate_batch(texts, "de", "fr")  # via the pivot
    # no table at all (real data): everything falls back
    nothing = TransferBackend(directory=d / "dicts", languages=LANGS, errors=rates)
    assert nothing.translate_batch(texts, "en", "ar") == words.translate_batch(texts, "en", "ar")


def test_translations_are_deterministic_across_calls_batches_and_instances(tiny):
    ds, _, _ = tiny
    texts = list(ds.captions.loc[ds.captions["lang"] == "en", "text"])
    a = backend(tiny, wrong_sense=0.1, wrong_agreement=0.1, drop=0.1, untranslated=0.1, reorder=0.2)
    first = a.translate_batch(texts, "en", "de")
    assert first == a.translate_batch(texts, "en", "de")
    assert a.translate_batch(texts[::-1], "en", "de")[::-1] == first
    assert [a.translate_batch([t], "en", "de")[0] for t in texts] == first
    b = backend(tiny, wrong_sense=0.1, wrong_agreement=0.1, drop=0.1, untranslated=0.1, reorder=0.2)
    assert b.translate_batch(texts, "en", "de") == first


def test_raising_an_error_rate_lowers_bleu(tiny):
    ds, table, _ = tiny
    refs = english_test_references(table)
    wide = refs.pivot_table(index=["image_id", "cap_idx"], columns="lang", values="text", aggfunc="first")

    def bleus(**errors):
        b = backend(tiny, **errors)
        out = []
        for l in ("de", "ja", "ar"):
            out.append(score(b.translate_batch(list(wide["en"]), "en", l), list(wide[l]), l)[0])
            out.append(score(b.translate_batch(list(wide[l]), l, "en"), list(wide["en"]), "en")[0])
        return np.array(out)

    clean = bleus()
    assert (clean == 100).all()
    for kind in ("wrong_sense", "drop", "reorder"):
        low, high = bleus(**{kind: 0.1}), bleus(**{kind: 0.4})
        assert (high < clean).all() and high.mean() < low.mean(), kind


@pytest.mark.parametrize("kind", [*TOKEN_ERRORS, "reorder"])
def test_every_kind_of_error_happens_at_rate_one(tiny, kind):
    ds, table, _ = tiny
    en = list(ds.captions.loc[ds.captions["lang"] == "en", "text"])
    clean = [t.split() for t in backend(tiny).translate_batch(en, "en", "de")]
    noisy = [t.split() for t in backend(tiny, **{kind: 1.0}).translate_batch(en, "en", "de")]
    assert all(n != c for n, c in zip(noisy, clean))
    b = backend(tiny)
    conf = b.confusions("en", "de")
    if kind == "drop":
        assert all(len(n) == 1 and n[0] in c for n, c in zip(noisy, clean))  # never empty
    elif kind == "reorder":
        assert all(sorted(n) == sorted(c) and len(n) == len(c) for n, c in zip(noisy, clean))
    elif kind == "untranslated":  # the English word of each German word's gloss
        assert all(n == [conf.untranslated(w) or w for w in c] for n, c in zip(noisy, clean))
        assert "the" in {w for n in noisy for w in n}
    else:
        assert all(len(n) == len(c) for n, c in zip(noisy, clean))
        changed = [(w, x) for n, c in zip(noisy, clean) for w, x in zip(c, n) if w != x]
        assert changed
        first = conf.sense if kind == "wrong_sense" else conf.agreement
        assert any(x in first(w) for w, x in changed)
    # the back direction errs too: an untranslated German word in the English output
    back = backend(tiny, **{kind: 1.0})
    de = list(table.loc[(table["src_lang"] == "en") & (table["lang"] == "de"), "text"])
    assert back.translate_batch(de, "de", "en") != backend(tiny).translate_batch(de, "de", "en")


def test_target_errors_count_characters_in_unsegmented_scripts(tiny):
    conf = backend(tiny).confusions("en", "ja")
    tokens = ["ねこ"] * 2000
    rates = ErrorRates(drop=0.1)
    per_word = len(noisy_target_words(tokens, conf, rates, np.random.default_rng(0)))
    per_char = len(noisy_target_words(tokens, conf, rates, np.random.default_rng(0), units=[2] * len(tokens)))
    assert abs(2000 - per_word - 200) < 50 and abs(2000 - per_char - 380) < 60  # 1 - 0.9**2 = 0.19


def test_cache_key_follows_table_dictionaries_and_rates(tiny, tmp_path):
    ds, table, d = tiny
    a = backend(tiny).cache_key("en", "de")
    assert a.startswith("transfer:plans=") and ":errors" not in a
    noisy = backend(tiny, drop=0.1).cache_key("en", "de")
    assert noisy.startswith(a) and "dr=0.1" in noisy and noisy != backend(tiny, drop=0.2).cache_key("en", "de")
    other = table.copy()
    other.loc[other.index[1], "text"] = "Anders."
    assert TransferBackend(directory=d / "dicts", references=other, languages=LANGS).cache_key("en", "de") != a
    import shutil

    shutil.copytree(d / "dicts", tmp_path / "dicts")
    with open(tmp_path / "dicts" / "en-de.txt", "a", encoding="utf-8") as f:
        f.write("zebra zebra\n")
    assert (
        TransferBackend(directory=tmp_path / "dicts", references=d / "references.parquet", languages=LANGS).cache_key(
            "en", "de"
        )
        != a
    )


def test_measure_quality_with_the_transfer_backend_and_the_realisation_table(tiny, tmp_path):
    ds, table, d = tiny
    settings = {
        "backend": "transfer",
        "cache": str(tmp_path / "c.sqlite"),
        "batch_size": 8,
        "errors": {"drop": 0.1, "wrong_agreement": 0.1, "seed": 3},
    }
    q = measure_quality(ds.captions, table, ["en", "de", "ar"], settings, d / "dicts")
    assert list(q["tgt"]) == ["de", "ar", "en", "en"] and set(q["n"]) == {12}
    assert q["backend"].iloc[0] == "transfer[ws=0,wa=0.1,dr=0.1,un=0,ro=0,seed=3]"
    assert ((q["bleu"] > 20) & (q["bleu"] < 100)).all()
    clean = measure_quality(ds.captions, table, ["en", "de"], {**settings, "errors": {}}, d / "dicts")
    assert set(clean["bleu"]) == {100.0} and set(clean["backend"]) == {"transfer[no errors]"}


def test_the_segmenters_window_is_the_longest_target_word(tiny):
    """translate_known segments zh/ja with the window TargetConfusions measured once: the longest
    target word, whose segmentation differs from a narrower window's."""
    ds, _, _ = tiny
    b = backend(tiny)
    conf = b.confusions("en", "ja")
    assert conf.longest_word == max(len(w) for w in conf.words) > 1
    for plan in list(ds.plans.values())[:6]:
        said = realise(plan, "ja")
        assert b.target_tokens(said, "ja", conf.words, conf.longest_word) == b.target_tokens(
            said, "ja", conf.words, max(len(w) for w in conf.words)
        )
