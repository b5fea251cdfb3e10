"""FastText vectors: training, alignment with the vocabulary, pretrained files,
config errors (polyvse.text.fasttext_vectors)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from polyvse.config import ConfigError, check_config, check_pretrained_paths
from polyvse.errors import InputError
from polyvse.text.fasttext_vectors import (
    FastTextVectors,
    VecFileVectors,
    load_pretrained,
    train_fasttext,
    vocabulary_vectors,
    write_corpus,
)
from polyvse.text.tokenize import tokenize
from polyvse.text.vocab import counts_frame, training_counts

COLOURS = ["red", "blue", "green", "white", "black"]
SHAPES = ["circles", "squares", "stars", "triangles"]
TINY = dict(dim=16, epochs=2, threads=1, bucket=5000)


def _sentences(n: int = 300) -> list[list[str]]:
    rng = np.random.default_rng(0)
    return [
        [
            "the",
            "picture",
            "shows",
            str(rng.choice(COLOURS)),
            str(rng.choice(SHAPES)),
            "on",
            "a",
            str(rng.choice(COLOURS)),
            "background",
        ]
        for _ in range(n)
    ]


@pytest.fixture(scope="module")
def model() -> FastTextVectors:
    return train_fasttext(_sentences(), **TINY)


def test_write_corpus_one_sentence_a_line_tokens_joined_by_spaces(tmp_path):
    path = tmp_path / "c.txt"
    n = write_corpus([["一", "只", "猫"], [], ["a", "cat"]], path)
    assert n == 2
    assert path.read_text(encoding="utf-8") == "一 只 猫\na cat\n"


def test_vectors_align_with_vocabulary_rows(model):
    vocab = list(
        counts_frame(
            training_counts(
                pd.DataFrame({"split": "train", "lang": "en", "text": [" ".join(s) for s in _sentences()]}), "en"
            )
        ).token
    )
    vectors, unknown = model.lookup(vocab)
    assert vectors.shape == (len(vocab), 16) and vectors.dtype == np.float32
    assert unknown == []  # min_count 1 on the same corpus: every vocabulary word has its own vector
    for i in (0, len(vocab) // 2, len(vocab) - 1):
        np.testing.assert_allclose(vectors[i], model.model.get_word_vector(vocab[i]), rtol=1e-6)
    # reordering the vocabulary reorders the rows
    np.testing.assert_array_equal(model.vectors_for(vocab[::-1]), vectors[::-1])
    assert len({tuple(np.round(v, 6)) for v in vectors}) == len(vocab)


def test_oov_word_gets_a_nonzero_subword_vector(model):
    vectors, unknown = model.lookup(["circle", "red"])
    assert unknown == ["circle"]
    assert np.linalg.norm(vectors[0]) > 0
    # FastText's subword vector: the mean of the word's n-gram rows
    _, ids = model.model.get_subwords("circle")
    expected = np.mean([model.model.get_input_vector(i) for i in ids], axis=0)
    np.testing.assert_allclose(vectors[0], expected, rtol=1e-5, atol=1e-7)


def test_one_thread_is_reproducible_in_one_process_after_other_allocations(model):
    # FastText leaves most input-matrix rows uninitialised: without the zero-fill
    # workaround, memory freed here would seed the next run (or abort it with NaN).
    junk = [np.full(40_000, np.nan, dtype=np.float32) for _ in range(20)]
    del junk
    words = ["red", "stars", "background", "circle"]
    for _ in range(2):
        again = train_fasttext(_sentences(), **TINY)
        np.testing.assert_array_equal(again.vectors_for(words), model.vectors_for(words))
        np.testing.assert_array_equal(again.model.get_input_matrix(), model.model.get_input_matrix())


def test_training_refuses_an_empty_corpus():
    with pytest.raises(ValueError, match="no tokens"):
        train_fasttext([[], []], **TINY)


def test_pretrained_bin_round_trip(model, tmp_path):
    path = tmp_path / "cc.en.16.bin"
    model.model.save_model(str(path))
    loaded = load_pretrained(path, "fasttext.pretrained.en")
    assert loaded.dim == 16
    words = ["red", "circle"]
    np.testing.assert_allclose(loaded.vectors_for(words), model.vectors_for(words), rtol=1e-6)


def _write_vec(path: Path, rows: list[tuple[str, list[float]]], dim: int = 3) -> None:
    text = f"{len(rows)} {dim}\n" + "".join(f"{w} {' '.join(map(str, v))} \n" for w, v in rows)
    if path.suffix == ".gz":
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf-8")


VEC_ROWS = [
    ("The", [1.0, 0.0, 0.0]),
    ("the", [0.5, 0.5, 0.0]),
    ("Hund", [0.0, 2.0, 0.0]),
    ("HUND", [9.0, 9.0, 9.0]),
    ("große", [0.0, 0.0, -1.5]),
]


@pytest.mark.parametrize("name", ["de.vec", "de.vec.gz"])
def test_vec_file_exact_row_first_then_case_folded_oov_zeros(tmp_path, name):
    path = tmp_path / name
    _write_vec(path, VEC_ROWS)
    vecs = load_pretrained(path, "fasttext.pretrained.de")
    assert isinstance(vecs, VecFileVectors) and vecs.dim == 3 and vecs.n_words == 5
    out, unknown = vecs.lookup(["the", "hund", "große", "katze"])
    np.testing.assert_array_equal(out, np.array([[0.5, 0.5, 0], [0, 2, 0], [0, 0, -1.5], [0, 0, 0]], np.float32))
    assert unknown == ["katze"]


def test_vec_file_errors_name_file_and_line(tmp_path):
    bad_header = tmp_path / "a.vec"
    bad_header.write_text("hello 1 2\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"a\.vec:1: expected a \.vec header"):
        VecFileVectors(bad_header)
    short = tmp_path / "b.vec"
    short.write_text("2 3\nok 1 2 3\ncat 1 2\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"b\.vec:3: word 'cat' has 2 values; the header says 3"):
        VecFileVectors(short).lookup(["cat"])


def test_vocabulary_vectors_uses_pretrained_vec_and_counts_unknown(tmp_path):
    path = tmp_path / "de.vec"
    _write_vec(path, VEC_ROWS)
    vectors, summary = vocabulary_vectors(["hund", "katze"], "de", {"dim": 3, "pretrained": {"de": str(path)}})
    assert vectors.shape == (2, 3) and not vectors[1].any()
    assert summary["source"] == "vec" and summary["unknown"] == 1 and summary["unknown_filled_with"] == "zeros"


def test_vocabulary_vectors_rejects_a_pretrained_file_of_another_dimension(tmp_path):
    path = tmp_path / "de.vec"
    _write_vec(path, VEC_ROWS)
    with pytest.raises(ConfigError, match=r"fasttext\.pretrained\.de: .* 3-D vectors but fasttext\.dim is 300"):
        vocabulary_vectors(["hund"], "de", {"dim": 300, "pretrained": {"de": str(path)}})


def test_vocabulary_vectors_trains_when_nothing_pretrained():
    sentences = [tokenize(" ".join(s), "en") for s in _sentences(100)]
    vectors, summary = vocabulary_vectors(["red", "zebra"], "en", {"dim": 8, "epochs": 1, "bucket": 2000}, sentences)
    assert vectors.shape == (2, 8) and summary["source"] == "trained"
    assert summary["unknown"] == 1 and summary["unknown_examples"] == ["zebra"]
    assert summary["seconds"] >= 0


MINIMAL = {"datasets": {"m30k": {"adapter": "synthetic", "langs": ["en", "de"]}}}


def test_missing_pretrained_file_fails_at_config_check_naming_key_and_path(tmp_path):
    missing = tmp_path / "cc.de.300.bin"
    config = {**MINIMAL, "fasttext": {"pretrained": {"de": str(missing)}}}
    with pytest.raises(ConfigError) as err:
        check_config(config)
    assert err.value.key == "fasttext.pretrained.de"
    assert str(missing) in str(err.value) and "does not exist" in str(err.value)


def test_pretrained_check_accepts_existing_files_and_rejects_other_kinds(tmp_path):
    vec = tmp_path / "cc.en.300.vec"
    _write_vec(vec, VEC_ROWS)
    check_pretrained_paths({"fasttext": {"pretrained": {"en": str(vec)}}})
    check_pretrained_paths({})  # no fasttext block at all
    packed = tmp_path / "cc.en.300.bin.gz"
    packed.write_bytes(b"\x1f\x8b")
    with pytest.raises(ConfigError, match=r"fasttext\.pretrained\.en: .*gunzip"):
        check_pretrained_paths({"fasttext": {"pretrained": {"en": str(packed)}}})
    with pytest.raises(ConfigError, match="is not a file"):
        check_pretrained_paths({"fasttext": {"pretrained": {"en": str(tmp_path)}}})
