"""The long-tailed lexicon of the synthetic caption languages (``lexicon: long_tail``).

SMALR §1/§3 motivates its design with real vocabularies being too large and too
long-tailed to learn from captions alone (Multi30K's first 1,000 training images:
4,042 English types, 44 % of them seen once). The closed synthetic grammars have
50–90 words; this module adds what makes a vocabulary long-tailed, while keeping
the two steps of :mod:`polyvse.data.synthetic.plan` and :mod:`~polyvse.data.synthetic.languages` (a language-independent plan,
then one realiser per language):

* **Choice of variants is in the plan.** A plan carries concept ids and *variant
  ranks* (drawn Zipf-like, :func:`zipf_rank`), never words. Rank ``r`` means "the
  ``r``-th most preferred word of the language for this concept"; a language with
  fewer words for the concept says its rarest one. So the same plan says a
  synonym in every language where one exists (fr/cs captions that translate
  English caption 1 stay translations).
* **Visual words** (seen in the image): shades of a colour (light/pale,
  dark/deep; German and Afrikaans compounds ``hellrot``, ``ligblou``, Russian
  ``светло-красный``, Chinese ``浅红色``) drawn by the long-tail scene sampler and
  rendered; synonyms and hyponyms of the shape nouns (disc, tile, hoop,
  pentagram, plus sign ...) where the language has them.
* **Kinds of shapes** (visual hyponyms): each shape has :data:`KINDS_PER_SHAPE` named
  kinds, a star with six thin points, a long flat rectangle, a saltire, an oval
  ring... A group of a long-tail scene is a kind of its shape with probability
  :data:`KIND_P` (its rank Zipf-weighted, :data:`KIND_ZIPF`), drawn with the kind's
  own geometry (:func:`polyvse.data.synthetic.scene.kind_geometry`), and a caption
  says its kind with probability :data:`SAY_KIND_P` (else the shape, its hypernym).
  A kind's word is generated (two syllables, :func:`kind_word`), like a loanword,
  in every language's script, and joins the noun as that language forms such words:
  a modifier before the noun (en "a kobi star", hi, ko), after it (fr "une étoile
  kobi", cs, ru, ar), or a compound (de "ein Kobistern", af "'n kobister", zh, ja).
  These are rare words that name something visible: learning one from the
  captions is possible, but it takes the image's detail, and the text-only corpus
  puts it beside its shape.
* **Non-visual words**: an evaluative sentence ("The picture is quite nice.")
  with Zipf-weighted adjectives and degree adverbs, a photographer ("Photo by
  Kabito Seramu.") and a place ("Taken in Nodaki."). Names come from three
  procedurally generated pools (given names, family names, places) of
  :data:`POOL_SIZE` three-syllable names each, Zipf-weighted by rank
  (exponent :data:`NAME_ZIPF`), and are written in every language's own script
  by transliterating one language-independent syllable sequence (Latin, Cyrillic,
  Arabic, Devanagari, Hangul, Chinese and Japanese characters), so the glossary
  pairs a name with its English (Latin) transliteration. The pools are fixed by
  :data:`LEXICON_SEED`, independent of a dataset's seed.
* **Characters of Chinese and Japanese names.** zh and ja are written, tokenised
  and learned character by character, so their long tail is one of characters:
  each syllable of a name is written with one of :data:`IDEOGRAPHS_PER_SYLLABLE`
  characters of that reading, chosen per name and Zipf-weighted
  (:data:`IDEOGRAPH_ZIPF`), as Chinese given names and Japanese names choose among
  many characters of one sound. One fixed character per syllable gave every zh/ja
  name out of 60 characters, and a few hundred character types in all. A kind's
  word is written the same way in zh; in ja in katakana.

Pool sizes, draw rates and exponents are calibrated so that the m30k profile's
5,000 English training captions of 1,000 images have ~3,000 types (Multi30K:
4,042) with a rank–frequency slope near real text's, and 145,000 captions of
29,000 images have ~20,000 (Heaps' law; the pools bound it at 3 × POOL_SIZE +
6 × KINDS_PER_SHAPE). Measured (seed 0, :func:`polyvse.data.stats.dataset_stats`):
3,147 types (2,334 names, 723 kinds, 90 words of the grammar), 59 % seen once,
slope −1.17, test OOV 3.5 % (200 test images); at 29,000 images 23,200 types, 36 %
seen once, test OOV 0.30 % (the scale config's splits; real Multi30K: 17,712, 34 %, 0.35 %).
The kinds are seldom seen once (72 of the 723): the five captions of an image
name its kinds again, as Multi30K's annotators name an image's rare objects.
This is the workflow's default lexicon; FastText learns its vectors from
a text-only corpus of the same lexicon (:mod:`polyvse.data.synthetic.corpus`), as
SMALR §3.1 and MULE §Experiments learn theirs from Wikipedia, not from the captions.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

LEXICONS: tuple[str, ...] = ("closed", "long_tail")
LEXICON_SEED = 20240613  # fixes the name pools: the same names whatever the dataset seed
POOL_SIZE = 10_000  # names per pool
POOLS: tuple[str, ...] = ("given", "family", "place")
NAME_ZIPF = 1.0  # exponent of the names' rank-frequency law
VARIANT_ZIPF = 1.6  # preference of a concept's first word over its synonyms
MAX_VARIANTS = 3
SHADE_P = 0.5  # share of (chromatic) object groups drawn light or dark
SAY_SHADE_P = 0.75  # a caption that says a group's colour says its shade this often
PERSON_P, PLACE_P, EVALUATIVE_P, DEGREE_P = 0.35, 0.3, 0.35, 0.5
KINDS_PER_SHAPE = 500  # named kinds (visual hyponyms) of each shape
KIND_ZIPF = 0.9  # exponent of the kinds' rank-frequency law within a shape
KIND_P = 0.7  # share of a long-tail scene's groups drawn as a kind of their shape
SAY_KIND_P = 0.6  # a caption names a kind group's kind this often (else only its shape)

# --- syllables and scripts ----------------------------------------------------------------------

ONSETS: tuple[str, ...] = ("", "k", "g", "s", "t", "d", "n", "h", "b", "p", "m", "r")
VOWELS: tuple[str, ...] = ("a", "i", "u", "e", "o")
N_SYLLABLES = len(ONSETS) * len(VOWELS)

_CYR_C = dict(zip(ONSETS, ("", "к", "г", "с", "т", "д", "н", "х", "б", "п", "м", "р")))
_CYR_V = dict(zip(VOWELS, ("а", "и", "у", "е", "о")))
_AR_C = dict(zip(ONSETS, ("", "ك", "غ", "س", "ت", "د", "ن", "ه", "ب", "ب", "م", "ر")))
_AR_V = dict(zip(VOWELS, ("ا", "ي", "و", "ي", "و")))
_AR_INITIAL_V = dict(zip(VOWELS, ("ا", "إي", "أو", "إي", "أو")))
_DEV_C = dict(zip(ONSETS, ("", "क", "ग", "स", "त", "द", "न", "ह", "ब", "प", "म", "र")))
_DEV_MATRA = dict(zip(VOWELS, ("ा", "ि", "ु", "े", "ो")))
_DEV_V = dict(zip(VOWELS, ("आ", "इ", "उ", "ए", "ओ")))
_HANGUL_INITIAL = dict(zip(ONSETS, (11, 15, 0, 9, 16, 3, 2, 18, 7, 17, 6, 5)))
_HANGUL_VOWEL = dict(zip(VOWELS, (0, 20, 13, 5, 8)))
_HANZI = dict(
    zip(
        ONSETS,
        (
            "阿伊乌埃奥",
            "卡基库克科",
            "加吉古格戈",
            "萨西苏塞索",
            "塔蒂图特托",
            "达迪杜德多",
            "纳尼努内诺",
            "哈希胡赫霍",
            "巴比布贝博",
            "帕皮普佩波",
            "马米穆梅莫",
            "拉里鲁雷罗",
        ),
    )
)


# Chinese and Japanese names: IDEOGRAPHS_PER_SYLLABLE characters for each syllable (zh's first is the
# transliteration character of _HANZI, still the most frequent), a fixed draw from the CJK Unified
# Ideographs block that leaves out every character of the languages' other words, so that a name never
# shares a character with a word that names something else.
IDEOGRAPHS_PER_SYLLABLE = 80
IDEOGRAPH_ZIPF = 1.0
_CJK_BLOCK = (0x4E00, 0x9FA5)


Glossary = Sequence[tuple[str, str]]
"""``(english, word)`` pairs of one language."""

# Every language's (closed, long-tail) glossary: the words of the realisers, which the generated words (the
# kinds' words, the names' characters) must not be. The realisers use this module, so they hand their
# glossaries over once they exist (polyvse.data.synthetic.languages calls use_glossaries on import).
_GLOSSARIES: dict[str, tuple[Glossary, Glossary]] = {}


def use_glossaries(glossaries: Mapping[str, tuple[Glossary, Glossary]]) -> None:
    """Take every language's ``(closed glossary, long-tail glossary)``: the words the generated words must
    not collide with. English's closed glossary is empty (English glosses the others)."""
    _GLOSSARIES.clear()
    _GLOSSARIES.update({lang: (tuple(closed), tuple(long_tail)) for lang, (closed, long_tail) in glossaries.items()})
    _ideographs.cache_clear()
    _kind_codes.cache_clear()


def _glossaries() -> dict[str, tuple[Glossary, Glossary]]:
    if not _GLOSSARIES:
        raise RuntimeError(
            "the languages' glossaries are not known: import polyvse.data.synthetic.languages before drawing words"
        )
    return _GLOSSARIES


@lru_cache(maxsize=2)
def _ideographs(lang: str) -> tuple[tuple[str, ...], ...]:
    """For each of the N_SYLLABLES syllables, its IDEOGRAPHS_PER_SYLLABLE characters in ``lang`` (zh or ja),
    most frequent first."""
    closed, long_tail = _glossaries()[lang]
    words = [w for _, w in (*closed, *long_tail)]
    words += [*FRAMES[lang], *EVALUATIVE_WORDS[lang], *DEGREE_WORDS[lang], ZH_DEFAULT_DEGREE]
    reserved = {ch for w in words for ch in w} | {ch for chars in _HANZI.values() for ch in chars}
    rng = np.random.default_rng([LEXICON_SEED, ("zh", "ja").index(lang)])
    pool = [
        chr(c) for c in rng.permutation(np.arange(_CJK_BLOCK[0], _CJK_BLOCK[1] + 1)).tolist() if chr(c) not in reserved
    ]
    fresh = IDEOGRAPHS_PER_SYLLABLE - (lang == "zh")
    out = []
    for s in range(N_SYLLABLES):
        chars = tuple(pool[s * fresh : (s + 1) * fresh])
        if lang == "zh":
            onset, vowel = ONSETS[s // len(VOWELS)], s % len(VOWELS)
            chars = (_HANZI[onset][vowel], *chars)
        out.append(chars)
    return tuple(out)


def _ideograph_ranks(stream: int, shape: tuple[int, ...]) -> np.ndarray:
    """``shape`` ranks among a syllable's characters, Zipf-weighted (:data:`IDEOGRAPH_ZIPF`): a fixed
    draw of the lexicon's random ``stream``."""
    rng = np.random.default_rng([LEXICON_SEED, stream])
    cdf = np.cumsum(1.0 / np.arange(1, IDEOGRAPHS_PER_SYLLABLE + 1) ** IDEOGRAPH_ZIPF)
    ranks = np.searchsorted(cdf / cdf[-1], rng.random(shape), side="right")
    return np.minimum(ranks, IDEOGRAPHS_PER_SYLLABLE - 1)


@lru_cache(maxsize=1)
def _ideograph_choices() -> np.ndarray:
    """(len(POOLS), POOL_SIZE, 3) ranks among a syllable's characters, one per syllable of every name,
    the same in zh and ja."""
    return _ideograph_ranks(2, (len(POOLS), POOL_SIZE, 3))


def _syllable(index: int, lang: str, first: bool) -> str:
    onset, vowel = ONSETS[index // len(VOWELS)], VOWELS[index % len(VOWELS)]
    if lang in ("en", "de", "fr", "cs", "af"):
        return onset + vowel
    if lang == "ru":
        return _CYR_C[onset] + ("э" if (vowel == "e" and not onset) else _CYR_V[vowel])
    if lang == "ar":
        return _AR_C[onset] + _AR_V[vowel] if onset else (_AR_INITIAL_V[vowel] if first else "ي" + _AR_V[vowel])
    if lang == "hi":
        return _DEV_C[onset] + _DEV_MATRA[vowel] if onset else _DEV_V[vowel]
    if lang == "ko":
        return chr(0xAC00 + (_HANGUL_INITIAL[onset] * 21 + _HANGUL_VOWEL[vowel]) * 28)
    raise ValueError(f"no syllable script for language {lang!r} (zh and ja write names in characters)")


@lru_cache(maxsize=1)
def _pool_codes() -> np.ndarray:
    """(len(POOLS), POOL_SIZE) distinct three-syllable codes: a fixed draw from all 60³."""
    rng = np.random.default_rng(LEXICON_SEED)
    codes = rng.permutation(N_SYLLABLES**3)[: len(POOLS) * POOL_SIZE]
    return codes.reshape(len(POOLS), POOL_SIZE)


def name_syllables(pool: str, rank: int) -> tuple[int, int, int]:
    """The syllable indices of the name of ``rank`` (0 = most frequent) in ``pool``."""
    if pool not in POOLS:
        raise ValueError(f"unknown name pool {pool!r}; expected one of {POOLS}")
    if not 0 <= rank < POOL_SIZE:
        raise ValueError(f"name rank {rank} outside 0..{POOL_SIZE - 1}")
    code = int(_pool_codes()[POOLS.index(pool), rank])
    return code // N_SYLLABLES**2, (code // N_SYLLABLES) % N_SYLLABLES, code % N_SYLLABLES


def name(pool: str, rank: int, lang: str) -> str:
    """The name in ``lang``'s script (capitalised in Latin and Cyrillic; zh and ja in characters chosen
    per name, :func:`_ideographs`)."""
    syllables = name_syllables(pool, rank)
    if lang in ("zh", "ja"):
        choices = _ideograph_choices()[POOLS.index(pool), rank]
        return "".join(_ideographs(lang)[s][c] for s, c in zip(syllables, choices))
    word = "".join(_syllable(s, lang, i == 0) for i, s in enumerate(syllables))
    return word[:1].upper() + word[1:]


@lru_cache(maxsize=None)  # every language's glossary glosses every name
def name_gloss(pool: str, rank: int) -> str:
    """The English transliteration of a name, lower case (its gloss in every glossary)."""
    return name(pool, rank, "en").lower()


@lru_cache(maxsize=8)
def _zipf_cdf(n: int, exponent: float) -> list[float]:
    """The cumulative distribution as Python floats: :func:`bisect.bisect_right` on a list is
    several times faster than ``np.searchsorted`` for one value, and gives the same index."""
    w = 1.0 / np.arange(1, n + 1) ** exponent
    c = np.cumsum(w)
    return (c / c[-1]).tolist()


def zipf_rank(rng: np.random.Generator, n: int, exponent: float) -> int:
    """A rank in 0..n-1 with P(r) ∝ (r+1)^-exponent (one uniform draw of ``rng``)."""
    return zipf_rank_of(rng.random(), n, exponent)


def zipf_rank_of(u: float, n: int, exponent: float) -> int:
    """The rank of :func:`zipf_rank` for the uniform draw ``u`` in [0, 1)."""
    return min(bisect_right(_zipf_cdf(n, exponent), float(u)), n - 1)


# --- the words of the kinds --------------------------------------------------------------------

_KATAKANA = dict(
    zip(
        ONSETS,
        (
            "アイウエオ",
            "カキクケコ",
            "ガギグゲゴ",
            "サシスセソ",
            "タチツテト",
            "ダヂヅデド",
            "ナニヌネノ",
            "ハヒフヘホ",
            "バビブベボ",
            "パピプペポ",
            "マミムメモ",
            "ラリルレロ",
        ),
    )
)
KIND_SCRIPTS = ("en", "ru", "ar", "hi", "ko", "zh", "ja")  # en: every language written in Latin letters


@lru_cache(maxsize=1)
def _kind_ideograph_choices() -> np.ndarray:
    """(N_SYLLABLES², 2) ranks among a syllable's characters, one per syllable of every two-syllable
    code, as :func:`_ideograph_choices` for the names."""
    return _ideograph_ranks(5, (N_SYLLABLES**2, 2))


def _kind_syllables(code: int, lang: str) -> str:
    """A two-syllable code written in ``lang``'s script, lower case: zh in characters of the
    syllables' readings chosen per word (as for the names), ja in katakana (as a loanword is written)."""
    syllables = (code // N_SYLLABLES, code % N_SYLLABLES)
    if lang == "zh":
        choices = _kind_ideograph_choices()[code]
        return "".join(_ideographs("zh")[s][c] for s, c in zip(syllables, choices))
    if lang == "ja":
        return "".join(_KATAKANA[ONSETS[s // len(VOWELS)]][s % len(VOWELS)] for s in syllables)
    script = "en" if lang in ("en", "de", "fr", "cs", "af") else lang
    return "".join(_syllable(s, script, i == 0) for i, s in enumerate(syllables))


@lru_cache(maxsize=1)
def _kind_codes() -> tuple[int, ...]:
    """The two-syllable codes of the kinds, ``KINDS_PER_SHAPE`` a shape in shape order: a fixed draw
    from all 60², leaving out every code whose word is already a word of some language's captions
    (``rote`` is German for red). Distinct codes are distinct words in every script but Arabic's,
    whose letters merge some vowels (and b with p): there, as in real loanwords, two kinds may share one."""
    reserved: dict[str, set[str]] = {script: set() for script in KIND_SCRIPTS}
    for lang, (closed, long_tail) in _glossaries().items():
        pairs = [*long_tail, *closed]
        texts = [w for pair in pairs for w in pair] + [*FRAMES[lang], *EVALUATIVE_WORDS[lang], *DEGREE_WORDS[lang]]
        # a frame's words lose its {placeholders}; the English glosses go to the Latin script's words
        words = {t for text in texts for t in text.lower().replace("{", " ").replace("}", " ").split()}
        reserved[lang if lang in KIND_SCRIPTS else "en"] |= words
        reserved["en"] |= {t for text in texts for t in text.lower().split()}
    rng = np.random.default_rng([LEXICON_SEED, 3])
    codes: list[int] = []
    for code in rng.permutation(N_SYLLABLES**2).tolist():
        if all(_kind_syllables(code, script) not in reserved[script] for script in KIND_SCRIPTS):
            codes.append(code)
            if len(codes) == len(KIND_SHAPES) * KINDS_PER_SHAPE:
                return tuple(codes)
    raise AssertionError("too few two-syllable codes for the kinds")


KIND_SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "star", "cross", "ring")  # scene.SHAPES


def kind_word(shape: str, kind: int, lang: str) -> str:
    """The word of kind ``kind`` (0 = most frequent) of ``shape`` in ``lang``'s script, lower case: the
    modifier the realisers put before or after the noun, or compound with it."""
    if shape not in KIND_SHAPES:
        raise ValueError(f"unknown shape {shape!r}; expected one of {KIND_SHAPES}")
    if not 0 <= kind < KINDS_PER_SHAPE:
        raise ValueError(f"kind {kind} outside 0..{KINDS_PER_SHAPE - 1}")
    return _kind_syllables(_kind_codes()[KIND_SHAPES.index(shape) * KINDS_PER_SHAPE + kind], lang)


# --- the language-independent part of a long-tail plan ------------------------------------------

EVALUATIVES: tuple[str, ...] = (
    "nice",
    "simple",
    "lovely",
    "neat",
    "pleasant",
    "striking",
    "elegant",
    "cheerful",
    "calm",
    "odd",
)
DEGREES: tuple[str, ...] = ("quite", "very", "rather", "really", "fairly", "somewhat")
EN_SHADE: dict[str, tuple[str, ...]] = {"light": ("light", "pale"), "dark": ("dark", "deep")}
# English variants of the shape nouns after the base word (synonyms and hyponyms): (singular, plural)
EN_NOUN_VARIANTS: dict[str, tuple[tuple[str, str], ...]] = {
    "circle": (("disc", "discs"), ("round shape", "round shapes")),
    "square": (("tile", "tiles"),),
    "triangle": (("wedge", "wedges"),),
    "star": (("pentagram", "pentagrams"),),
    "cross": (("plus sign", "plus signs"),),
    "ring": (("hoop", "hoops"), ("loop", "loops")),
}


@dataclass(frozen=True)
class Extras:
    """What a long-tail caption says beyond the scene's facts (None: not said).

    ``evaluative``/``degree`` index :data:`EVALUATIVES`/:data:`DEGREES` (their
    Zipf rank); ``given``/``family``/``place`` are name ranks in their pools.
    """

    evaluative: int | None = None
    degree: int | None = None
    given: int | None = None
    family: int | None = None
    place: int | None = None


def sample_extras(rng: np.random.Generator) -> Extras:
    """Draw the non-visual part of one long-tail caption (always 7 draws of ``rng``)."""
    u = rng.random(3)
    evaluative = zipf_rank(rng, len(EVALUATIVES), 1.1)
    degree = zipf_rank(rng, len(DEGREES), 1.1)
    say_degree = rng.random() < DEGREE_P
    given, family, place = (zipf_rank(rng, POOL_SIZE, NAME_ZIPF) for _ in range(3))
    return Extras(
        evaluative=evaluative if u[0] < EVALUATIVE_P else None,
        degree=degree if (u[0] < EVALUATIVE_P and say_degree) else None,
        given=given if u[1] < PERSON_P else None,
        family=family if u[1] < PERSON_P else None,
        place=place if u[2] < PLACE_P else None,
    )


# --- the language-specific words of the extras --------------------------------------------------

# language -> (evaluative sentence, person sentence, place sentence); {deg} is the degree word and a
# space (empty when unsaid; zh says 很 then), {adj} the evaluative, {person} and {place} names.
FRAMES: dict[str, tuple[str, str, str]] = {
    "en": ("The picture is {deg}{adj}.", "Photo by {person}.", "Taken in {place}."),
    "de": ("Das Bild ist {deg}{adj}.", "Foto von {person}.", "Aufgenommen in {place}."),
    "fr": ("Cette image est {deg}{adj}.", "Photo de {person}.", "Prise à {place}."),
    "cs": ("Obrázek je {deg}{adj}.", "Fotografoval {person}.", "Pořízeno v {place}."),
    "ru": ("Картинка {deg}{adj}.", "Снимок сделал {person}.", "Снято в {place}."),
    "ar": ("الصورة {adj}{deg}.", "تصوير {person}.", "التقطت في {place}."),
    "af": ("Die prent is {deg}{adj}.", "Foto deur {person}.", "Geneem in {place}."),
    "hi": ("तस्वीर {deg}{adj} है।", "फ़ोटो {person} ने ली।", "यह {place} में ली गई।"),
    "ko": ("{deg}{adj} 그림입니다.", "{person} 작가의 사진입니다.", "{place} 지역에서 찍었습니다."),
    "zh": ("这张图片{deg}{adj}。", "摄影师：{person}。", "拍摄于{place}。"),
    "ja": ("このえは{deg}{adj}です。", "しゃしん：{person}。", "{place}でさつえい。"),
}
# gloss pairs of the frames' fixed words; every English frame word has a pair in every language
FRAME_GLOSS: dict[str, tuple[tuple[str, str], ...]] = {
    "de": (
        ("the", "das"),
        ("picture", "bild"),
        ("is", "ist"),
        ("photo", "foto"),
        ("by", "von"),
        ("taken", "aufgenommen"),
        ("in", "in"),
    ),
    "fr": (
        ("the", "cette"),
        ("picture", "image"),
        ("is", "est"),
        ("photo", "photo"),
        ("by", "de"),
        ("taken", "prise"),
        ("in", "à"),
    ),
    "cs": (
        ("the", "obrázek"),
        ("picture", "obrázek"),
        ("is", "je"),
        ("photo", "fotografoval"),
        ("by", "fotografoval"),
        ("taken", "pořízeno"),
        ("in", "v"),
    ),
    "ru": (
        ("the", "картинка"),
        ("picture", "картинка"),
        ("is", "есть"),
        ("photo", "снимок"),
        ("by", "сделал"),
        ("taken", "снято"),
        ("in", "в"),
    ),
    "ar": (
        ("the", "الصورة"),
        ("picture", "الصورة"),
        ("is", "هناك"),
        ("photo", "تصوير"),
        ("by", "تصوير"),
        ("taken", "التقطت"),
        ("in", "في"),
    ),
    "af": (
        ("the", "die"),
        ("picture", "prent"),
        ("is", "is"),
        ("photo", "foto"),
        ("by", "deur"),
        ("taken", "geneem"),
        ("in", "in"),
    ),
    "hi": (
        ("the", "यह"),
        ("picture", "तस्वीर"),
        ("is", "है"),
        ("photo", "फ़ोटो"),
        ("by", "ने"),
        ("taken", "ली"),
        ("taken", "गई"),
        ("in", "में"),
        ("this", "यह"),
    ),
    "ko": (
        ("the", "그림입니다"),
        ("picture", "그림입니다"),
        ("is", "입니다"),
        ("photo", "사진입니다"),
        ("by", "작가의"),
        ("taken", "찍었습니다"),
        ("in", "지역에서"),
    ),
    "zh": (
        ("the", "这张"),
        ("picture", "图片"),
        ("is", "很"),
        ("photo", "摄影师"),
        ("by", "摄影师"),
        ("taken", "拍摄于"),
        ("in", "于"),
    ),
    "ja": (
        ("the", "この"),
        ("picture", "え"),
        ("is", "です"),
        ("is", "は"),
        ("photo", "しゃしん"),
        ("by", "しゃしん"),
        ("taken", "さつえい"),
        ("in", "で"),
    ),
}
EVALUATIVE_WORDS: dict[str, tuple[str, ...]] = {  # agreeing with the language's word for "picture"
    "en": EVALUATIVES,
    "de": (
        "schön",
        "einfach",
        "hübsch",
        "ordentlich",
        "angenehm",
        "auffällig",
        "elegant",
        "fröhlich",
        "ruhig",
        "seltsam",
    ),
    "fr": ("belle", "simple", "jolie", "soignée", "agréable", "frappante", "élégante", "gaie", "calme", "étrange"),
    "cs": (
        "pěkný",
        "jednoduchý",
        "roztomilý",
        "úhledný",
        "příjemný",
        "nápadný",
        "elegantní",
        "veselý",
        "klidný",
        "zvláštní",
    ),
    "ru": (
        "красивая",
        "простая",
        "милая",
        "аккуратная",
        "приятная",
        "яркая",
        "элегантная",
        "весёлая",
        "спокойная",
        "странная",
    ),
    "ar": ("جميلة", "بسيطة", "لطيفة", "مرتبة", "ممتعة", "لافتة", "أنيقة", "مبهجة", "هادئة", "غريبة"),
    "af": ("mooi", "eenvoudig", "lieflik", "netjies", "aangenaam", "opvallend", "elegant", "vrolik", "kalm", "vreemd"),
    "hi": ("सुंदर", "सरल", "प्यारी", "साफ़", "सुखद", "आकर्षक", "शानदार", "खुशनुमा", "शांत", "अजीब"),
    "ko": ("멋진", "단순한", "사랑스러운", "깔끔한", "편안한", "인상적인", "우아한", "발랄한", "차분한", "이상한"),
    "zh": ("漂亮", "简单", "可爱", "整齐", "舒服", "醒目", "优雅", "欢快", "安静", "奇怪"),
    "ja": (
        "きれい",
        "シンプル",
        "かわいい",
        "すっきり",
        "ここちよい",
        "あざやか",
        "じょうひん",
        "たのしい",
        "しずか",
        "ふしぎ",
    ),
}
DEGREE_WORDS: dict[str, tuple[str, ...]] = {
    "en": DEGREES,
    "de": ("ziemlich", "sehr", "recht", "wirklich", "eher", "etwas"),
    "fr": ("assez", "très", "plutôt", "vraiment", "bien", "fort"),
    "cs": ("docela", "velmi", "dost", "opravdu", "celkem", "poněkud"),
    "ru": ("довольно", "очень", "весьма", "действительно", "вполне", "слегка"),
    "ar": ("جدا", "حقا", "للغاية", "فعلا", "تماما", "كثيرا"),
    "af": ("nogal", "baie", "taamlik", "regtig", "redelik", "effens"),
    "hi": ("काफ़ी", "बहुत", "बड़ी", "सचमुच", "थोड़ी", "ज़रा"),
    "ko": ("꽤", "아주", "제법", "정말", "상당히", "조금"),
    "zh": ("相当", "非常", "挺", "真", "比较", "有点"),
    "ja": ("かなり", "とても", "なかなか", "ほんとうに", "わりと", "すこし"),
}
ZH_DEFAULT_DEGREE = "很"  # a bare Chinese predicative adjective needs one


def realise_extras(extras: Extras, lang: str) -> str:
    """The sentences that say ``extras`` in ``lang`` ("" when nothing is said)."""
    evaluative_frame, person_frame, place_frame = FRAMES[lang]
    sentences = []
    if extras.evaluative is not None:
        deg = DEGREE_WORDS[lang][extras.degree] if extras.degree is not None else ""
        if lang == "ar":
            deg = " " + deg if deg else ""
        elif lang == "zh":
            deg = deg or ZH_DEFAULT_DEGREE
        elif deg and lang != "ja":
            deg += " "
        sentences.append(evaluative_frame.format(deg=deg, adj=EVALUATIVE_WORDS[lang][extras.evaluative]))
    if extras.given is not None and extras.family is not None:
        sep = {"zh": "·", "ja": "・"}.get(lang, " ")
        person = name("given", extras.given, lang) + sep + name("family", extras.family, lang)
        sentences.append(person_frame.format(person=person))
    if extras.place is not None:
        sentences.append(place_frame.format(place=name("place", extras.place, lang)))
    sentences = [s[:1].upper() + s[1:] for s in sentences]
    return ("" if lang in ("zh", "ja") else " ").join(sentences)


def extras_glossary(lang: str) -> list[tuple[str, str]]:
    """``(english, word)`` pairs of every word :func:`realise_extras` can write in ``lang`` (not en)."""
    pairs = list(FRAME_GLOSS[lang])
    pairs += list(zip(EVALUATIVES, EVALUATIVE_WORDS[lang]))
    pairs += list(zip(DEGREES, DEGREE_WORDS[lang]))
    if lang == "zh":
        pairs.append(("very", ZH_DEFAULT_DEGREE))
    for pool in POOLS:
        pairs += [(name_gloss(pool, r), name(pool, r, lang)) for r in range(POOL_SIZE)]
    return pairs
