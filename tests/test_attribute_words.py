"""The corpus's world (typical shapes and places of each colour), the words that say an attribute in each
language, and how far apart word vectors put them (polyvse.text.attribute_words)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from polyvse.data.synthetic.corpus import text_corpus
from polyvse.data.synthetic.languages import ATTRIBUTES, REALISERS, attribute_tokens
from polyvse.data.synthetic.scene import COLOURS, SHAPES, sample_scene
from polyvse.data.synthetic.world import COLOUR_POSITION, COLOUR_SHAPES, SHAPE_COUNT, SHAPE_SIZE
from polyvse.errors import InputError
from polyvse.text.attribute_words import (
    ATTRIBUTE_COLUMNS,
    attribute_separation,
    attribute_words_markdown,
    pairwise_cosines,
    read_attribute_words,
    value_vectors,
)

# --- the corpus's world ----------------------------------------------------------------------


def test_the_world_names_every_colour_and_shape_and_no_two_colours_share_both_shapes():
    assert set(COLOUR_SHAPES) == set(COLOURS) == set(COLOUR_POSITION)
    assert set(SHAPE_SIZE) == set(SHAPES) == set(SHAPE_COUNT)
    pairs = [frozenset(shapes) for shapes in COLOUR_SHAPES.values()]
    assert len(set(pairs)) == len(pairs) and all(len(p) == 2 for p in pairs)


def test_a_fully_typical_world_draws_every_group_as_usual_where_it_can():
    for seed in range(300):
        scene = sample_scene(np.random.default_rng(seed), "long_tail", typicality=1.0)
        positions = [g.position for g in scene.groups]
        assert len(set(positions)) == len(positions)
        assert len({(g.shape, g.colour) for g in scene.groups}) == len(scene.groups)
        taken = set()
        for g in scene.groups:
            if any((s, g.colour) not in taken for s in COLOUR_SHAPES[g.colour]):
                assert g.shape in COLOUR_SHAPES[g.colour]
            taken.add((g.shape, g.colour))
            assert g.size == SHAPE_SIZE[g.shape] and g.count == SHAPE_COUNT[g.shape]
            assert g.kind is None or g.kind % len(COLOURS) == COLOURS.index(g.colour)  # the colour's own kinds
        first = scene.groups[0]  # the first group's place is always free
        assert first.position == COLOUR_POSITION[first.colour]


def test_typicality_zero_is_the_images_world_and_out_of_range_is_refused():
    for seed in range(50):
        assert sample_scene(np.random.default_rng(seed), "long_tail") == sample_scene(
            np.random.default_rng(seed), "long_tail", typicality=0.0
        )
    assert text_corpus("de", 40, 3, "long_tail") == text_corpus("de", 40, 3, "long_tail", typicality=0.0)
    assert text_corpus("de", 40, 3, "long_tail") != text_corpus("de", 40, 3, "long_tail", typicality=0.75)
    with pytest.raises(ValueError, match="typicality"):
        sample_scene(np.random.default_rng(0), typicality=1.5)
    with pytest.raises(InputError, match="typicality"):
        text_corpus("en", 5, 0, typicality=-0.1)


def test_a_typical_corpus_puts_each_colour_mostly_on_its_usual_shapes():
    """What gives the colour words contexts of their own: in English, a colour word stands before one
    of its two usual shapes far more often than the 2 in 6 of a uniform world."""
    lines = text_corpus("en", 2000, 0, "closed", typicality=0.75)
    usual = {c: 0 for c in COLOURS}
    said = {c: 0 for c in COLOURS}
    for line in lines:
        words = line.lower().replace(",", " ").replace(".", " ").split()
        for w, nxt in zip(words, words[1:]):
            shape = nxt.rstrip("s").replace("crosse", "cross")
            if w in said and shape in SHAPES:
                said[w] += 1
                usual[w] += shape in COLOUR_SHAPES[w]
    for colour in COLOURS:
        assert said[colour] > 50 and usual[colour] / said[colour] > 0.7, (colour, usual[colour], said[colour])


# --- the words of an attribute -----------------------------------------------------------------


def test_attribute_tokens_are_each_value_s_own_words_in_every_language():
    assert attribute_tokens("en", "colour")["red"] == ["red"]
    assert attribute_tokens("en", "shape")["cross"] == ["cross", "crosses"]
    assert {"rote", "roter", "rotes"} <= set(attribute_tokens("de", "colour")["red"])
    assert attribute_tokens("zh", "colour")["red"] == ["红"]  # not the 色 every colour has
    for lang in REALISERS:
        for attribute, values in ATTRIBUTES.items():
            tokens = attribute_tokens(lang, attribute)
            assert list(tokens) == list(values)
            assert all(tokens[v] for v in values), (lang, attribute, tokens)


def test_attribute_tokens_refuses_an_unknown_attribute_or_language():
    with pytest.raises(ValueError, match="attribute"):
        attribute_tokens("en", "texture")
    with pytest.raises(ValueError, match="grammar"):
        attribute_tokens("xx", "colour")


# --- how far apart the vectors put them ---------------------------------------------------------


def test_one_vector_for_every_value_is_cosine_one_and_orthogonal_values_zero():
    rng = np.random.default_rng(0)
    common = rng.normal(size=8)
    others = rng.normal(size=(20, 8))
    vocab = [f"w{i}" for i in range(20)] + ["red", "blue", "green"]
    same = np.vstack([others, common, common, common])
    tokens = {"red": ["red"], "blue": ["blue"], "green": ["green"]}
    assert attribute_separation(same, vocab, tokens)["mean_cosine"] == pytest.approx(1.0)
    # three orthogonal rows and their opposites: the vocabulary's mean is zero, the centred values orthogonal
    table = np.vstack([np.eye(3, 8) * 3, -np.eye(3, 8) * 3])
    found = attribute_separation(table, ["red", "blue", "green", "x", "y", "z"], tokens)
    assert found["values"] == 3 and found["mean_cosine"] == pytest.approx(0.0, abs=1e-12)
    assert found["min_cosine"] == pytest.approx(0.0, abs=1e-12) and found["max_cosine"] == pytest.approx(0.0, abs=1e-12)


def test_a_value_is_the_mean_of_its_forms_and_one_without_a_known_form_is_left_out():
    vocab = ["a", "b", "c", "d"]
    table = np.array([[1.0, 0.0], [3.0, 0.0], [0.0, 2.0], [0.0, 2.0]])
    by_value = value_vectors(table, vocab, {"x": ["a", "b"], "y": ["c", "zz"], "z": ["nowhere"]})
    assert list(by_value) == ["x", "y"]
    np.testing.assert_allclose(by_value["x"], [2.0 - 1.0, 0.0 - 1.0])
    assert pairwise_cosines(by_value).shape == (1,)
    with pytest.raises(ValueError, match="vocabulary of 3"):
        value_vectors(table, vocab[:3], {"x": ["a"]})
    weighted = value_vectors(table, vocab, {"x": ["a", "b"]}, counts={"a": 3, "b": 1, "c": 0})
    np.testing.assert_allclose(weighted["x"], [(3 * 1.0 + 3.0) / 4 - 1.0, -1.0])
    assert value_vectors(table, vocab, {"y": ["c"]}, counts={"c": 0}) == {}  # in no caption: no vector
    lone = attribute_separation(table, vocab, {"x": ["a"]})
    assert lone["values"] == 1 and np.isnan(lone["mean_cosine"])


def test_the_table_is_read_back_checked_and_shown_per_language(tmp_path):
    table = pd.DataFrame(
        [
            ["m30k", "en", "colour", 8, 0.58, 0.21, 0.93],
            ["m30k", "en", "shape", 6, 0.42, 0.04, 0.91],
            ["m30k", "de", "colour", 8, 0.61, 0.30, 0.90],
            ["m30k", "de", "shape", 1, np.nan, np.nan, np.nan],
        ],
        columns=list(ATTRIBUTE_COLUMNS),
    )
    path = tmp_path / "attribute_words.tsv"
    table.to_csv(path, sep="\t", index=False, na_rep="")
    back = read_attribute_words(path)
    pd.testing.assert_frame_equal(back, table)
    text = attribute_words_markdown(back)
    assert "| m30k | en | 0.58 (0.21–0.93; 8 words) | 0.42 (0.04–0.91; 6 words) |" in text
    assert "| m30k | de | 0.61 (0.30–0.90; 8 words) | – |" in text
    table.drop(columns="max_cosine").to_csv(path, sep="\t", index=False)
    with pytest.raises(InputError, match="max_cosine") as err:
        read_attribute_words(path)
    assert str(path) in str(err.value)
    with pytest.raises(InputError, match="not found"):
        read_attribute_words(tmp_path / "missing.tsv")
