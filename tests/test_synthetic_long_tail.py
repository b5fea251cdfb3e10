"""The long-tailed synthetic lexicon: Multi30K-like vocabulary statistics, glossary
coverage, plans, rendering of the new visual words, and the text-only corpus."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from polyvse.data.synthetic import lexicon as lex
from polyvse.data.adapters import make_dataset
from polyvse.data.synthetic import (
    CaptionPlan,
    Mention,
    ObjectGroup,
    Scene,
    build_dataset,
    glossary,
    make_scene,
    realise,
    render_scene,
    write_dictionaries,
)
from polyvse.data.synthetic.corpus import text_corpus
from polyvse.data.synthetic.scene import CHROMATIC
from polyvse.errors import InputError
from polyvse.text.tokenize import tokenize
from polyvse.translate.dictionary import segment_greedy
from polyvse.text.muse import read_muse

OTHERS = ["de", "fr", "cs", "zh", "ja", "ar", "af", "ko", "ru", "hi"]
SPACED = ["de", "fr", "cs", "ar", "af", "ko", "ru", "hi"]


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


@pytest.fixture(scope="module")
def m30k() -> pd.DataFrame:
    """The m30k profile's English captions: 1,000 training and 200 test images."""
    return build_dataset("m30k", 1000, 0, 200, seed=0, langs=["en"], lexicon="long_tail").captions


@pytest.fixture(scope="module")
def others() -> pd.DataFrame:
    """Five captions of 1,000 images in every other language."""
    return build_dataset("all", 1000, 0, 0, seed=0, langs=OTHERS, lexicon="long_tail").captions


def _segmented(texts, lang: str, words: set[str]) -> list[list[str]]:
    longest = max(map(len, words))
    return [
        [p for chunk in tokenize(t, lang, segmenter="spaces") for p in segment_greedy(chunk, words, longest)]
        for t in texts
    ]


# --- vocabulary statistics --------------------------------------------------------------------


def test_english_m30k_captions_have_a_multi30k_like_long_tail(m30k):
    train = m30k[m30k.split == "train"].text
    assert len(train) == 5000
    counts = Counter(w for t in train for w in _words(t))
    types, hapax = len(counts), sum(n == 1 for n in counts.values()) / len(counts)
    freq = np.array(sorted(counts.values(), reverse=True), dtype=float)
    ranks = np.arange(1, len(freq) + 1)
    sel = (ranks >= 10) & (ranks <= 5000)
    slope = np.polyfit(np.log(ranks[sel]), np.log(freq[sel]), 1)[0]
    test_tokens = [w for t in m30k[m30k.split == "test"].text for w in _words(t)]
    oov = sum(w not in counts for w in test_tokens) / len(test_tokens)
    assert types >= 2700 and hapax >= 0.30, (types, hapax)
    assert -1.6 <= slope <= -0.9, slope
    assert 0.003 <= oov <= 0.05, oov
    # Heaps' law: a fifth of the images has far fewer types
    fifth = Counter(w for t in train[:1000] for w in _words(t))
    assert 2.5 * len(fifth) < types
    # a quarter of the types or more name something the image shows: kinds of the shapes
    kinds = {lex.kind_word(s, k, "en") for s in lex.KIND_SHAPES for k in range(lex.KINDS_PER_SHAPE)}
    assert len(kinds & set(counts)) > 0.2 * types, len(kinds & set(counts))


def test_english_at_multi30k_size_has_between_ten_and_thirty_thousand_types():
    """Issue 13: the m30k profile at Multi30K's 29,000 training images (config/scale/m30k.yaml)."""
    from polyvse.data.stats import dataset_stats

    captions = build_dataset("m30k", 29000, 0, 1000, seed=0, langs=["en"], lexicon="long_tail").captions
    row = dataset_stats(captions, "m30k", ["en"], "m30k").iloc[0]
    assert row.captions == 145_000 and 10_000 <= row.types <= 30_000, row.types
    assert 0.30 <= row.hapax_share and -1.6 <= row.rank_freq_slope <= -0.9 and 0.003 <= row.test_oov_rate <= 0.05


def test_every_other_language_is_long_tailed_too(others):
    for lang in SPACED:
        texts = others[others.lang == lang].text
        assert len(texts) == 5000
        counts = Counter(w for t in texts for w in tokenize(t, lang))
        hapax = sum(n == 1 for n in counts.values()) / len(counts)
        assert len(counts) >= 1500 and hapax >= 0.30, (lang, len(counts), hapax)
    for lang in ("zh", "ja"):  # no spaces: distinct dictionary words used, as captions accumulate
        words = {w for _, w in glossary(lang, "long_tail")}
        seen = _segmented(others[others.lang == lang].text, lang, words)
        first = set().union(*seen[:500])
        every = set().union(*seen)
        assert len(every) >= 1500 and len(every) > 3 * len(first), (lang, len(first), len(every))


def test_closed_lexicon_has_no_long_tail(m30k):
    closed = build_dataset("m30k", 200, 0, 0, seed=0, langs=["en"]).captions
    assert len({w for t in closed.text for w in _words(t)}) < 100
    long_tail_first = m30k[m30k.image_id.isin(closed.image_id)]
    assert len({w for t in long_tail_first.text for w in _words(t)}) > 600


# --- glossary ---------------------------------------------------------------------------------


def test_glossary_covers_every_word_of_every_language(m30k, others):
    english = {w for t in m30k.text for w in tokenize(t, "en")}
    for lang in OTHERS:
        pairs = glossary(lang, "long_tail")
        assert pairs[: len(glossary(lang))] == glossary(lang)  # closed pairs first, unchanged
        glosses, words = {e for e, _ in pairs}, {w for _, w in pairs}
        missing = english - glosses
        assert not missing, (lang, sorted(missing)[:20])
        texts = others[others.lang == lang].text
        if lang in ("zh", "ja"):
            used = {p for pieces in _segmented(texts, lang, words) for p in pieces}
        else:
            used = {w for t in texts for w in tokenize(t, lang)}
        assert used <= words, (lang, sorted(used - words)[:20])


def test_names_are_glossed_by_their_english_transliteration(tmp_path):
    ru = dict((w, e) for e, w in glossary("ru", "long_tail"))
    for pool in lex.POOLS:
        for rank in (0, 17, lex.POOL_SIZE - 1):
            assert ru[lex.name(pool, rank, "ru").lower()] == lex.name_gloss(pool, rank)
            assert len(lex.name(pool, rank, "ko")) == 3 and len(lex.name(pool, rank, "zh")) == 3
    names = {lex.name_gloss(p, r) for p in lex.POOLS for r in range(lex.POOL_SIZE)}
    assert len(names) == len(lex.POOLS) * lex.POOL_SIZE  # distinct across pools
    write_dictionaries(tmp_path, ["en", "hi"], lexicon="long_tail")
    hi = dict(read_muse(tmp_path / "en-hi.txt"))
    assert hi[lex.name_gloss("place", 5)] == lex.name("place", 5, "hi")
    with pytest.raises(InputError, match="lexicon"):
        write_dictionaries(tmp_path, ["de"], lexicon="open")


# --- plans and realisers ----------------------------------------------------------------------


def _say(lang: str, *mentions: Mention, extras=None) -> str:
    return realise(CaptionPlan("list", tuple(mentions), extras=extras), lang)


def test_variant_ranks_and_shades_are_said_by_every_realiser():
    disc = Mention("circle", 1, colour="red", variant=1)
    assert _say("en", disc) == "A red disc."
    assert _say("de", disc) == "Eine rote Scheibe."  # the synonym's gender decides the agreement
    assert _say("fr", disc) == "Un disque rouge."
    assert _say("ru", disc) == "Красный круг."  # no Russian synonym: the usual word
    assert _say("en", Mention("circle", 2, variant=2)) == "Round shapes."
    assert _say("de", Mention("circle", 2, variant=2)) == "Scheiben."  # fewer words: the rarest
    light = Mention("star", 1, colour="blue", shade="light")
    assert _say("en", light) == "A light blue star."
    assert _say("en", Mention("star", 1, colour="blue", shade="light", shade_variant=1)) == "A pale blue star."
    assert _say("de", light) == "Ein hellblauer Stern."
    assert _say("de", Mention("star", 1, colour="red", shade="dark", shade_variant=1)) == "Ein tiefroter Stern."
    assert _say("af", light) == "'n Ligblou ster."
    assert _say("fr", light) == "Une étoile bleu clair."
    assert _say("cs", light) == "Světle modrá hvězda."
    assert _say("ru", light) == "Светло-синяя звезда."
    assert _say("zh", light) == "一颗浅蓝色的星星。"
    assert _say("hi", Mention("star", 2, colour="blue", shade="dark", say_count=True)) == "दो गहरे नीले तारे।"


def test_extras_say_the_same_people_and_places_in_every_script():
    extras = lex.Extras(evaluative=0, degree=1, given=3, family=4, place=5)
    given, family, place = (lex.name(p, r, "en") for p, r in (("given", 3), ("family", 4), ("place", 5)))
    assert (
        _say("en", Mention("ring", 1), extras=extras)
        == f"A ring. The picture is very nice. Photo by {given} {family}. Taken in {place}."
    )
    assert _say("de", Mention("ring", 1), extras=lex.Extras(evaluative=2)) == "Ein Ring. Das Bild ist hübsch."
    zh = _say("zh", Mention("ring", 1), extras=lex.Extras(evaluative=0))
    assert zh == "一个圆环。这张图片很漂亮。"  # a bare predicative adjective takes 很
    ja = _say("ja", Mention("ring", 1), extras=extras)
    assert lex.name("given", 3, "ja") + "・" + lex.name("family", 4, "ja") in ja
    # ja writes its words in kana and only its names in characters (kanji), which no other word shares
    assert set(re.findall(r"[一-鿿]", ja)) == set(
        lex.name("given", 3, "ja") + lex.name("family", 4, "ja") + lex.name("place", 5, "ja")
    )


def test_zh_and_ja_names_draw_on_a_long_tail_of_characters():
    hanzi = set("".join(lex._HANZI.values()))  # zh's transliteration characters, one a syllable
    for lang in ("zh", "ja"):
        names = [lex.name(pool, rank, lang) for pool in lex.POOLS for rank in range(lex.POOL_SIZE)]
        assert all(re.fullmatch(r"[一-鿿]{3}", n) for n in names)
        assert len(set(names)) == len(names)  # one writing per name, distinct across pools
        chars = Counter(ch for n in names for ch in n)
        assert len(chars) > 0.9 * lex.N_SYLLABLES * lex.IDEOGRAPHS_PER_SYLLABLE, (lang, len(chars))
        counts = sorted(chars.values(), reverse=True)
        assert counts[0] > 10 * counts[len(counts) // 2], (lang, counts[0], counts[len(counts) // 2])
        top = {ch for ch, _ in chars.most_common(lex.N_SYLLABLES)}
        assert (len(top & hanzi) > 0.8 * lex.N_SYLLABLES) == (lang == "zh")


def test_coco_zh_and_ja_are_long_tailed_per_character():
    """The coco profile's human zh and ja training captions, character by character, as
    ``data_stats.tsv`` counts them: many types, many seen once, a Zipf-like slope."""
    from polyvse.data.stats import dataset_stats

    captions = build_dataset("coco", 1000, 0, 200, seed=1, lexicon="long_tail").captions
    stats = dataset_stats(captions, "coco", ["zh", "ja"], "coco").set_index(["lang", "unit"])
    for lang, min_types in (("zh", 400), ("ja", 1000)):
        row = stats.loc[(lang, "char")]
        assert row.types >= min_types and row.hapax_share >= 0.30, (lang, row.types, row.hapax_share)
        assert -1.6 <= row.rank_freq_slope <= -0.9, (lang, row.rank_freq_slope)


def test_long_tail_plans_extend_the_closed_plan_and_scene():
    from polyvse.data.synthetic import caption_plan

    for index in range(30):
        closed, long_tail = make_scene(3, index), make_scene(3, index, "long_tail")
        assert closed.groups == tuple(replace(g, shade=None, kind=None) for g in long_tail.groups)
        assert (closed.texture, closed.bg_colour) == (long_tail.texture, long_tail.bg_colour)
        assert all(g.shade is None for g in long_tail.groups if g.colour not in CHROMATIC)
        # the long-tail draws come after the closed plan's: the same facts, template and order
        a = caption_plan(closed, np.random.default_rng(index))
        b = caption_plan(long_tail, np.random.default_rng(index), "long_tail")
        assert (a.template, a.texture, a.bg_colour) == (b.template, b.texture, b.bg_colour)
        assert a.mentions == tuple(replace(m, variant=0, shade=None, shade_variant=0, kind=None) for m in b.mentions)
        shades = {(g.shape, g.colour): g.shade for g in long_tail.groups}
        assert all(m.shade is None or shades[m.shape, m.colour] == m.shade for m in b.mentions)
        kinds = {g.shape: {h.kind for h in long_tail.groups if h.shape == g.shape} for g in long_tail.groups}
        assert all(m.kind is None or m.kind in kinds[m.shape] for m in b.mentions)
    groups = [g for i in range(400) for g in make_scene(3, i, "long_tail").groups]
    assert {g.shade for g in groups if g.shade} == {"light", "dark"}
    kinds = Counter(g.kind for g in groups if g.kind is not None)
    assert 0.6 < sum(kinds.values()) / len(groups) < 0.8  # KIND_P
    assert kinds[0] > kinds[50] and len(kinds) > 200  # Zipf-weighted ranks, a long tail of them
    with pytest.raises(ValueError, match="lexicon"):
        caption_plan(make_scene(3, 0), np.random.default_rng(0), "open")


def test_kinds_are_said_in_every_language_as_it_forms_such_words():
    star = Mention("star", 1, colour="red", kind=0)
    word = {lang: lex.kind_word("star", 0, lang) for lang in ("en", "hi", "ko", "ru", "ar", "zh", "ja")}
    assert _say("en", star) == f"A red {word['en']} star."
    assert _say("de", star) == f"Ein roter {word['en'].capitalize()}stern."  # a compound
    assert _say("de", replace(star, count=2, say_count=True)) == f"Zwei rote {word['en'].capitalize()}sterne."
    assert _say("af", star) == f"'n Rooi {word['en']}ster."
    assert _say("fr", star) == f"Une étoile {word['en']} rouge."  # after the noun, invariable
    assert _say("cs", star) == f"Červená hvězda {word['en']}."
    assert _say("ru", star) == f"Красная звезда {word['ru']}."
    assert _say("ar", star) == f"نجمة {word['ar']} حمراء."
    assert _say("hi", star) == f"एक लाल {word['hi']} तारा।"
    assert _say("ko", star) == f"빨간 {word['ko']} 별."
    assert _say("zh", star) == f"一颗红色的{word['zh']}星星。"
    assert _say("ja", star) == f"あかい{word['ja']}ほし。"
    assert re.fullmatch(r"[ァ-ヺ]{2}", word["ja"]) and re.fullmatch(r"[一-鿿]{2}", word["zh"])
    # distinct, two-syllable words that no other word of any language's captions spells
    en = [lex.kind_word(s, k, "en") for s in lex.KIND_SHAPES for k in range(lex.KINDS_PER_SHAPE)]
    assert len(set(en)) == len(en) == len(lex.KIND_SHAPES) * lex.KINDS_PER_SHAPE
    closed = {w for lang in OTHERS for pair in glossary(lang) for w in pair}
    assert not closed & set(en), sorted(closed & set(en))[:5]
    de = set(glossary("de", "long_tail"))
    assert (word["en"], word["en"] + "stern") in de and ("stars", word["en"] + "sterne") in de
    assert (word["en"], word["ru"]) in set(glossary("ru", "long_tail"))
    with pytest.raises(ValueError, match="kind"):
        lex.kind_word("star", lex.KINDS_PER_SHAPE, "en")


def test_kinds_are_visible_in_the_image():
    """A kind is drawn with its own geometry: a different silhouette from its shape's and from
    another kind's, in the same place and colour."""
    from polyvse.data.synthetic.scene import SHAPES, kind_geometry

    assert lex.KIND_SHAPES == SHAPES  # the lexicon's copy (the scene module imports the lexicon)

    def mask(shape, kind):
        group = ObjectGroup(shape, "red", "large", "centre", 1, kind=kind)
        img = render_scene(Scene((group,), "plain", "grey"), 128, np.random.default_rng(0))
        rgb = np.asarray(img).astype(int)
        return (rgb[..., 0] > 150) & (rgb[..., 1] < 120)  # red pixels

    for shape in lex.KIND_SHAPES:
        plain, first, other = mask(shape, None), mask(shape, 0), mask(shape, 7)
        assert first.sum() > 30 and other.sum() > 30, shape
        assert (plain ^ first).sum() > 0.15 * plain.sum(), shape
        if kind_geometry(shape, 0) != kind_geometry(shape, 7):
            assert (first ^ other).sum() > 0.1 * first.sum(), shape
    assert kind_geometry("star", 3) == kind_geometry("star", 3)
    assert len({kind_geometry("star", k).points for k in range(40)}) == 4  # 4, 6, 7 or 8 points
    with pytest.raises(ValueError, match="kind"):
        kind_geometry("star", -1)


def test_shades_are_visible_in_the_image():
    def centre(shade):
        scene = Scene(
            groups=(ObjectGroup("circle", "blue", "large", "centre", 1, shade=shade),),
            texture="plain",
            bg_colour="grey",
        )
        return np.asarray(render_scene(scene, 100, np.random.default_rng(0))).astype(int)[50, 50]

    light, base, dark = centre("light"), centre(None), centre("dark")
    assert light.sum() > base.sum() + 150 and dark.sum() < base.sum() - 100
    assert light[2] > light[0] and dark[2] > dark[0]  # still blue


def test_long_tail_is_deterministic_and_the_adapter_threads_the_setting(tmp_path):
    a = build_dataset("m30k", 6, 2, 2, seed=1, lexicon="long_tail")
    b = build_dataset("m30k", 6, 2, 2, seed=1, lexicon="long_tail")
    pd.testing.assert_frame_equal(a.captions, b.captions)
    with pytest.raises(InputError, match="lexicon"):
        build_dataset("m30k", 2, 2, 2, seed=1, lexicon="open")
    settings = {
        "adapter": "synthetic",
        "langs": ["en"],
        "synthetic": {
            "profile": "all",
            "n_train": 6,
            "n_val": 2,
            "n_test": 2,
            "captions_per_image": 5,
            "seed": 1,
            "image_size": 32,
            "lexicon": "long_tail",
        },
    }
    captions, _ = make_dataset("syn", settings, tmp_path)
    expected = build_dataset("all", 6, 2, 2, seed=1, langs=["en"], lexicon="long_tail").captions
    assert captions.text.tolist() == expected.text.tolist()
    settings["synthetic"]["lexicon"] = "closed"
    closed, _ = make_dataset("syn", settings, tmp_path / "closed")
    assert closed.text.tolist() == build_dataset("all", 6, 2, 2, seed=1, langs=["en"]).captions.text.tolist()
    assert closed.text.tolist() != captions.text.tolist()


# --- the text-only corpus ---------------------------------------------------------------------


def test_corpus_is_deterministic_and_independent_of_its_length():
    a = text_corpus("ko", 40, seed=2, lexicon="long_tail")
    assert a == text_corpus("ko", 40, seed=2, lexicon="long_tail")
    assert text_corpus("ko", 15, seed=2, lexicon="long_tail") == a[:15]
    assert sum(x != y for x, y in zip(a, text_corpus("ko", 40, seed=3, lexicon="long_tail"))) > 30
    closed = text_corpus("de", 200, seed=2)
    words = {w for _, w in glossary("de")}
    assert {w for t in closed for w in tokenize(t, "de")} <= words
    with pytest.raises(InputError, match="'xx'"):
        text_corpus("xx", 3, seed=0)
    with pytest.raises(InputError, match="n_sentences"):
        text_corpus("en", -1, seed=0)


def test_corpus_vocabulary_holds_the_captions_rare_words(m30k):
    captions = m30k[m30k.image_id.isin(m30k.image_id.unique()[:200])].text
    counts = Counter(w for t in captions for w in _words(t))
    names = {lex.name_gloss(p, r) for p in lex.POOLS for r in range(lex.POOL_SIZE)}
    small, large = (text_corpus("en", n, seed=0, lexicon="long_tail") for n in (2000, 10000))
    vocab_small, vocab = ({w for t in c for w in _words(t)} for c in (small, large))
    kinds = {lex.kind_word(s, k, "en") for s in lex.KIND_SHAPES for k in range(lex.KINDS_PER_SHAPE)}
    # every word that is neither a generated name nor a kind is there, and most rare words
    assert {w for w in counts if w not in names | kinds} <= vocab
    assert sum(w in vocab for w in counts if w in kinds) > 0.8 * len(kinds & set(counts))
    rare = [w for w, n in counts.items() if n == 1]
    share = sum(w in vocab for w in rare) / len(rare)
    assert len(rare) > 400 and share >= 0.4, share
    assert share > sum(w in vocab_small for w in rare) / len(rare) + 0.1  # a bigger corpus covers more
    assert len(vocab) > 5 * len(counts)  # much larger than the captions' vocabulary
