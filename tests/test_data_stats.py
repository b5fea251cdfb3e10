"""Vocabulary statistics of the human captions (polyvse.data.stats): hand-computed
values on tiny corpora, the per-dataset table, the reference file, the Markdown, and the
workflow planning the jobs."""

from __future__ import annotations

import math
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from polyvse.data.stats import (
    STATS_COLUMNS,
    characters,
    check_stats_table,
    corpus_stats,
    count_tokens,
    dataset_stats,
    oov_rate,
    rank_frequency_slope,
    read_reference,
    read_stats,
    stats_markdown,
    top_types_share,
    words,
)
from polyvse.data.tables import validate_captions
from polyvse.errors import InputError

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))

# a3 dog3 runs2 sits1 the1 cat1: 11 tokens, 6 types
TRAIN = ["A dog runs.", "a dog sits", "The cat runs", "a DOG"]
# a bird runs the cat flies: 6 tokens, bird and flies unseen
TEST = ["A bird runs", "the cat flies!"]


# --- tokens -----------------------------------------------------------------------------------


def test_words_are_lowercase_word_character_runs():
    assert words("A dog's Ball, 2 cats.") == ["a", "dog", "s", "ball", "2", "cats"]
    assert words("犬が走る。赤いボール") == ["犬が走る", "赤いボール"]  # no spaces: one run per clause


def test_characters_are_the_characters_of_the_runs():
    assert characters("犬が走る。赤い") == ["犬", "が", "走", "る", "赤", "い"]
    assert characters("Ab, c") == ["a", "b", "c"]


def test_count_tokens_rejects_an_unknown_unit():
    assert count_tokens(["a b a"]) == {"a": 2, "b": 1}
    with pytest.raises(ValueError, match=r"unit 'bytes': expected one of word, char"):
        count_tokens(["a"], unit="bytes")


# --- one corpus -------------------------------------------------------------------------------


def test_tiny_corpus_by_hand():
    s = corpus_stats(TRAIN, TEST)
    assert (s["captions"], s["train_tokens"], s["types"]) == (4, 11, 6)
    assert s["hapax_share"] == pytest.approx(3 / 6)  # sits, the, cat
    assert s["at_most_2_share"] == pytest.approx(4 / 6)  # and runs
    assert s["test_oov_rate"] == pytest.approx(2 / 6)  # bird, flies
    assert math.isnan(s["rank_freq_slope"])  # 6 types: no rank 10
    assert s["top5000_token_share"] == 1.0
    assert top_types_share(count_tokens(TRAIN), k=2) == pytest.approx(6 / 11)  # a, dog


def test_characters_of_an_unspaced_language_by_hand():
    train, test = ["犬が走る。", "犬"], ["猫が走る"]
    chars = corpus_stats(train, test, unit="char")  # 犬2 が1 走1 る1
    assert (chars["train_tokens"], chars["types"]) == (5, 4)
    assert chars["hapax_share"] == pytest.approx(3 / 4)
    assert chars["test_oov_rate"] == pytest.approx(1 / 4)  # 猫
    runs = corpus_stats(train, test)  # 犬が走る1 犬1; the test's one run 猫が走る is unseen
    assert (runs["train_tokens"], runs["types"], runs["test_oov_rate"]) == (2, 2, 1.0)


def test_no_test_captions_and_no_training_tokens_give_nan_not_zero():
    assert math.isnan(corpus_stats(TRAIN, [])["test_oov_rate"])
    assert math.isnan(oov_rate({"a"}, []))
    empty = corpus_stats(["…"], TEST)
    assert (empty["train_tokens"], empty["types"], empty["test_oov_rate"]) == (0, 0, 1.0)
    assert math.isnan(empty["hapax_share"]) and math.isnan(empty["top5000_token_share"])


def test_top_5000_share_counts_the_5000_most_frequent_types():
    assert top_types_share([1.0] * 6000) == pytest.approx(5000 / 6000)
    assert top_types_share([10.0] * 10 + [1.0] * 5000) == pytest.approx((100 + 4990) / 5100)


# --- rank-frequency slope ---------------------------------------------------------------------


def test_exact_zipf_frequencies_give_slope_minus_one():
    zipf = [1 / r for r in range(1, 6001)]
    assert rank_frequency_slope(zipf) == pytest.approx(-1, abs=1e-6)
    assert rank_frequency_slope([r**-2.0 for r in range(1, 6001)]) == pytest.approx(-2, abs=1e-6)
    shuffled = zipf[:]
    random.Random(0).shuffle(shuffled)
    assert rank_frequency_slope(shuffled) == pytest.approx(-1, abs=1e-6)  # ranks come from sorting


def test_slope_window_is_ranks_10_to_5000():
    # ranks 1-9 and beyond 5000 break the law; only 10..5000 are fitted
    freq = [1e9] * 9 + [1 / r for r in range(10, 5001)] + [1e-12] * 500
    assert rank_frequency_slope(freq) == pytest.approx(-1, abs=1e-6)
    # ranks 1..9 at 1/r and the rest flat: the fit sees only the flat part
    assert rank_frequency_slope([1 / r for r in range(1, 10)] + [0.01] * 100) == pytest.approx(0, abs=1e-9)


def test_exact_zipf_corpus_of_words_gives_slope_minus_one():
    # word r appears 2520 / r times (2520 = lcm(1..10)): frequencies exactly ∝ 1/r
    texts = [" ".join([f"w{r}"] * (2520 // r)) for r in range(1, 11)]
    counts = count_tokens(texts)
    assert counts["w7"] == 360
    assert rank_frequency_slope(counts, first=1, last=10, min_ranks=10) == pytest.approx(-1, abs=1e-9)


def test_fewer_than_20_ranks_in_the_window_is_nan():
    assert math.isnan(rank_frequency_slope([1 / r for r in range(1, 29)]))  # ranks 10..28: 19
    assert rank_frequency_slope([1 / r for r in range(1, 30)]) == pytest.approx(-1, abs=1e-9)  # 10..29: 20
    assert math.isnan(rank_frequency_slope([]))


def test_slope_rejects_bad_windows_and_frequencies():
    with pytest.raises(ValueError, match=r"rank window 10\.\.5: expected 1 <= first <= last"):
        rank_frequency_slope([1.0] * 30, first=10, last=5)
    with pytest.raises(ValueError, match="frequencies must be positive, got 0.0"):
        rank_frequency_slope([3.0, 0.0])


# --- a dataset's table ------------------------------------------------------------------------


def _captions() -> pd.DataFrame:
    rows = [  # (image_id, split, lang, cap_idx, text, origin)
        ("1", "train", "en", 0, "A dog runs.", "human"),
        ("1", "train", "en", 1, "a dog sits", "human"),
        ("2", "train", "en", 0, "The cat runs", "human"),
        ("2", "train", "en", 1, "a DOG", "human"),
        ("1", "train", "en", 2, "zebra zebra zebra", "mt"),  # MT: never counted
        ("3", "test", "en", 0, "A bird runs", "human"),
        ("3", "test", "en", 1, "the cat flies!", "human"),
        ("1", "train", "ja", 0, "犬が走る。", "human"),
        ("2", "train", "ja", 0, "犬", "human"),
        ("3", "test", "ja", 0, "猫が走る", "human"),
        ("2", "train", "de", 0, "ein Hund", "mt"),
    ]
    return validate_captions(
        pd.DataFrame(rows, columns=["image_id", "split", "lang", "cap_idx", "text", "origin"]), "test"
    )


def test_dataset_table_has_a_row_per_language_and_a_char_row_for_japanese():
    table = dataset_stats(_captions(), "tiny", ["en", "ja"], "tiny/captions.parquet")
    assert list(table.columns) == list(STATS_COLUMNS)
    assert table[["dataset", "lang", "unit"]].values.tolist() == [
        ["tiny", "en", "word"],
        ["tiny", "ja", "word"],
        ["tiny", "ja", "char"],
    ]
    en = table.iloc[0]
    assert (en["captions"], en["train_tokens"], en["types"]) == (4, 11, 6)  # the MT zebras are not there
    assert en["test_oov_rate"] == pytest.approx(2 / 6)
    ja_chars = table.iloc[2]
    assert (ja_chars["captions"], ja_chars["train_tokens"], ja_chars["types"]) == (2, 5, 4)
    assert ja_chars["test_oov_rate"] == pytest.approx(1 / 4)


def test_a_language_without_human_training_captions_fails_naming_file_and_language():
    with pytest.raises(
        InputError,
        match=r"^tiny/captions\.parquet: dataset tiny: no human training captions in "
        r"language 'de' \(human training captions exist in: en, ja\)$",
    ):
        dataset_stats(_captions(), "tiny", ["en", "de"], "tiny/captions.parquet")


# --- tables on disk and the Markdown ----------------------------------------------------------


def test_stats_round_trip_through_tsv_keeps_nan(tmp_path):
    table = dataset_stats(_captions(), "tiny", ["en", "ja"], "x")
    path = tmp_path / "data_stats.tsv"
    table.to_csv(path, sep="\t", index=False, na_rep="")
    back = read_stats(path)
    assert math.isnan(back.loc[0, "rank_freq_slope"])
    pd.testing.assert_frame_equal(back, table, check_dtype=False)


def test_bad_stats_tables_fail_naming_the_file(tmp_path):
    table = dataset_stats(_captions(), "tiny", ["en"], "x")
    with pytest.raises(InputError, match=r"^t\.tsv: data statistics table: missing column\(s\) types; needs"):
        check_stats_table(table.drop(columns="types"), "t.tsv")
    with pytest.raises(InputError, match=r"^t\.tsv: data statistics table row 0: unit 'bpe' is not one of word\|char"):
        check_stats_table(table.assign(unit="bpe"), "t.tsv")
    with pytest.raises(InputError, match=r"^t\.tsv: data statistics table row 0: hapax_share 'many' is not a number"):
        check_stats_table(table.assign(hapax_share="many"), "t.tsv")
    with pytest.raises(InputError, match="data statistics table not found"):
        read_stats(tmp_path / "missing.tsv")


def test_reference_file_needs_a_caption_first(tmp_path):
    table = dataset_stats(_captions(), "Ref", ["en"], "x").to_csv(sep="\t", index=False, na_rep="")
    good = tmp_path / "ref.tsv"
    good.write_text("# Where these come from,\n# measured so.\n" + table)
    caption, ref = read_reference(good)
    assert caption == "Where these come from, measured so."
    assert ref.loc[0, "types"] == 6
    bare = tmp_path / "bare.tsv"
    bare.write_text(table)
    with pytest.raises(InputError, match=r"bare\.tsv: reference statistics file must start with '# ' lines"):
        read_reference(bare)
    headless = tmp_path / "headless.tsv"
    headless.write_text("# caption only\n" + table.splitlines()[0] + "\n")
    with pytest.raises(InputError, match=r"headless\.tsv: reference statistics file has no rows"):
        read_reference(headless)


def test_committed_multi30k_reference_reads_and_is_long_tailed():
    caption, ref = read_reference(REPO / "docs" / "multi30k_stats.tsv")
    assert "issue 13" in caption and "not our results" in caption
    assert ref[["lang", "unit", "captions"]].values.tolist() == [
        ["en", "word", 145000],
        ["de", "word", 145000],
        ["fr", "word", 29000],
        ["cs", "word", 29000],
    ]
    assert (ref["types"] > 10_000).all() and (ref["rank_freq_slope"] < -1).all()


def test_markdown_puts_each_language_s_reference_row_after_ours():
    ours = pd.concat(
        [dataset_stats(_captions(), "tiny", ["en", "ja"], "x"), dataset_stats(_captions(), "other", ["en"], "x")],
        ignore_index=True,
    )
    ref = ours[ours["lang"] == "en"].head(1).assign(dataset="Multi30K (real)", types=17712)
    md = stats_markdown(ours, ref, "Reference data, measured on real captions.")
    rows = [line for line in md.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [r.split(" | ")[0] for r in rows] == ["| tiny", "| other", "| *Multi30K (real)* ²", "| tiny", "| tiny"]
    # 4 captions, 11 tokens, 6 types, 50 % once, 66.7 % at most twice, 33.3 % OOV, no slope, 100 %
    assert rows[0] == "| tiny | en | word | 4 | 11 | 6 | 50.0 | 66.7 | 33.3 | – | 100.0 |"
    assert "| 17,712 |" in rows[2]
    assert "ja: written without spaces" in md and "`char` rows" in md
    assert "Devanagari" not in md  # no hi rows
    assert md.endswith("\n\n² Reference data, measured on real captions.\n")


def test_markdown_notes_hindi_tokens_keep_combining_marks():
    ours = dataset_stats(_captions(), "tiny", ["en"], "x").assign(lang="hi")
    md = stats_markdown(ours, ours.iloc[:0], "ref.")
    assert "hi: Python's `\\w` excludes combining marks" in md and "whole words" in md
    assert "written without spaces" not in md


def test_hindi_words_keep_their_vowel_signs_other_languages_plain_w():
    text = "दो त्रिभुज बाईं ओर हैं।"
    assert words(text, marks=True) == ["दो", "त्रिभुज", "बाईं", "ओर", "हैं"]
    assert words(text) == ["द", "त", "र", "भ", "ज", "ब", "ई", "ओर", "ह"]  # \\w+ alone: fragments
    assert words("Ein Café.", marks=True) == words("Ein Café.") == ["ein", "café"]
    captions = pd.DataFrame(
        {
            "image_id": ["a", "b"],
            "split": ["train", "test"],
            "lang": ["hi", "hi"],
            "cap_idx": [0, 0],
            "text": [text, "दो हैं।"],
            "origin": ["human", "human"],
        }
    )
    row = dataset_stats(captions, "tiny", ["hi"], "x").iloc[0]
    assert row["types"] == 5 and row["test_oov_rate"] == 0.0


# --- the workflow -----------------------------------------------------------------------------


def test_dry_run_plans_every_dataset_s_statistics_from_another_directory(tmp_path):
    """The default config from a working directory that is not the repository: the
    reference file is found beside the Snakefile, each dataset is built once, and the
    attribute words are measured on the FastText tables of every language the run trains."""
    args = [
        SNAKEMAKE,
        "-s",
        str(REPO / "Snakefile"),
        "--configfile",
        str(REPO / "config" / "config.yaml"),
        "-n",
        "--cores",
        "1",
        "results/data_stats.md",
    ]
    out = subprocess.run(
        args, cwd=tmp_path, capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    assert out.returncode == 0, out.stdout + out.stderr
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", out.stdout, flags=re.M))
    assert {k: counts[k] for k in ("dataset", "data_stats", "attribute_words", "data_stats_table", "fasttext")} == {
        "dataset": "3",
        "data_stats": "3",
        "attribute_words": "3",
        "data_stats_table": "1",
        "fasttext": "23",  # m30k's and coco's ten languages (MT-augmented), spoken's three
    }
    assert f"{REPO}/docs/multi30k_stats.tsv" in out.stdout
    for dataset in ("m30k", "coco", "spoken"):
        assert f"results/{dataset}/data_stats.tsv" in out.stdout
