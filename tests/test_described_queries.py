"""Short descriptions ("a red circle", "two blue stars") and the images that show them, from the scene
plans (polyvse.evaluate.described); after a default run, the English EmbN finds them (polyvse query)."""

import re
from pathlib import Path

import numpy as np
import pytest

from polyvse.data.synthetic import image_id, make_scene
from polyvse.data.synthetic.scene import ObjectGroup, Scene
from polyvse.evaluate.described import (
    Description,
    descriptions,
    mean_precision,
    precision_at_k,
    relevant_images,
    scene_plans,
)
from polyvse.report.described_queries import described_markdown, described_table
from conftest import default_run_test_scenes

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "results" / "m30k" / "models" / "embn_en"
PRECISION = 0.6  # the English EmbN's mean precision at 5 that a user's first queries must reach
MIN_RELEVANT = 5  # descriptions shown in fewer test images cannot fill a top 5


def scene(*groups: tuple[str, str, int]) -> Scene:
    return Scene(
        tuple(ObjectGroup(shape, colour, "small", f"p{i}", count) for i, (colour, shape, count) in enumerate(groups)),
        "plain",
        "grey",
    )


def test_a_description_says_its_group_and_finds_it_in_a_scene_plan():
    assert Description("red", "circle").text == "a red circle"
    assert Description("blue", "star", 2).text == "two blue stars"
    assert Description("orange", "star").text == "an orange star"  # the captions' article
    assert Description("black", "cross", 3).text == "three black crosses"  # the captions' plural
    scenes = {"a": scene(("red", "circle", 3)), "b": scene(("red", "square", 1), ("blue", "star", 2)), "c": scene()}
    assert relevant_images(Description("red", "circle"), scenes) == {"a"}  # any number of red circles
    assert relevant_images(Description("blue", "star", 2), scenes) == {"b"}
    assert relevant_images(Description("blue", "star", 3), scenes) == set()
    assert len(descriptions()) == 48 and len(descriptions((2, 3))) == 96
    with pytest.raises(ValueError, match="counts must be None or one of"):
        descriptions((4,))


def test_precision_at_k_by_hand():
    assert precision_at_k(["a", "b", "c", "d", "e", "f"], {"a", "c", "f"}) == 0.4
    with pytest.raises(ValueError, match="needs 5 ranked images, got 2"):
        precision_at_k(["a", "b"], {"a"})


def test_the_scene_plans_are_the_images_captions():
    """The relevance comes from the plans the captions were written from: a plan's colours are in its
    English captions."""
    from polyvse.data.synthetic import build_dataset

    ds = build_dataset("m30k", 20, 0, 0, seed=0, lexicon="long_tail")
    en = ds.captions[ds.captions["lang"] == "en"]
    for index in range(20):
        plan = make_scene(0, index, "long_tail")
        texts = " ".join(en[en["image_id"] == image_id(index)]["text"]).lower()
        assert all(g.colour in texts for g in plan.groups)


def test_scene_plans_are_the_generator_s_and_real_ids_have_none():
    plans = scene_plans(["syn-000003", "syn-000010"], 0, "long_tail")
    assert plans == {"syn-000003": make_scene(0, 3, "long_tail"), "syn-000010": make_scene(0, 10, "long_tail")}
    for bad in ("COCO_val2014_000000000042", "syn-42", "syn-00004x"):
        with pytest.raises(ValueError, match=re.escape(f"{bad!r} is not a synthetic image id")):
            scene_plans([bad], 0, "long_tail")


def test_the_mean_counts_only_descriptions_enough_images_show():
    red, blue = Description("red", "circle"), Description("blue", "star", 2)
    found = [(red, 7, 0.8), (blue, 2, 0.0), (Description("green", "ring"), 5, 0.4)]
    assert mean_precision(found, 5) == (pytest.approx(0.6), 2)
    with pytest.raises(ValueError, match="no description is shown in 9 or more images"):
        mean_precision(found, 9)
    table = described_table(found, 5)
    assert list(table["counted"]) == [True, False, True] and list(table["count"]) == ["any", "2", "any"]
    page = described_markdown(found, "embn_en", 5, 5, 128)
    assert "Mean precision at 5: **0.60** over the 2 colour × shape descriptions" in page
    assert "| two blue stars | 2 | 0.0 | no |" in page and "Worst: 'a green ring' 0.4, 'a red circle' 0.8." in page


def default_run_queries() -> tuple[float, float, int, str]:
    """After `snakemake --cores all` here: the English EmbN's mean precision at 5 on colour x shape
    queries through polyvse query (each description shown in MIN_RELEVANT or more test images), a random
    ranking's, how many descriptions, and the five worst; skips without a default run."""
    scenes = default_run_test_scenes(MODEL)
    from polyvse.query import described_precision, open_model

    found = described_precision(open_model(MODEL), scenes, descriptions((None, 2)))
    mean, counted = mean_precision(found, MIN_RELEVANT)
    kept = [(d, n, p) for d, n, p in found if n >= MIN_RELEVANT]
    base = float(np.mean([n / len(scenes) for _, n, _ in kept]))
    worst = ", ".join(f"{d.text!r} {p:.1f}" for d, _, p in sorted(kept, key=lambda x: x[2])[:5])
    return mean, base, counted, worst


def test_the_default_english_embn_ranks_what_a_short_query_names_above_chance():
    """The model learned something of what a short query names from its captions: twice a random
    ranking's precision at 5 (0.15 against 0.04 in the snapshot's run)."""
    mean, base, counted, worst = default_run_queries()
    assert mean >= 2 * base, f"mean precision at 5 {mean:.2f} over {counted} descriptions, chance {base:.2f}"


@pytest.mark.xfail(
    strict=True,
    reason="an open defect (docs/learning.md): the default English EmbN's precision at 5 is 0.15; classifiers told the "
    "answers reach 0.50-0.52 on the same image features (bench/described_ceiling.py), and on four times the "
    "training images 0.72 where the EmbN reaches 0.22 (docs/learning.md)",
)
def test_the_default_english_embn_finds_what_a_short_query_names():
    """The target: colour x shape queries through polyvse query reach a mean precision at 5 of PRECISION.
    Strict: when a default run reaches it, this fails until the mark is taken off."""
    mean, _, counted, worst = default_run_queries()
    assert mean >= PRECISION, f"mean precision at 5 {mean:.2f} over {counted} descriptions; worst: {worst}"
