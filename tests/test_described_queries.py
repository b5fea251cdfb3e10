"""Short descriptions ("a red circle", "two blue stars") and the images that show them, from the scene
plans (polyvse.evaluate.described); after a default run, the English EmbN finds them (polyvse query)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

from polyvse.data.synthetic import image_id, make_scene
from polyvse.data.synthetic_scene import ObjectGroup, Scene
from polyvse.evaluate.described import Description, descriptions, precision_at_k, relevant_images

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


def test_the_default_english_embn_finds_what_a_short_query_names():
    """After `snakemake --cores all` here: colour x shape queries through polyvse query reach a mean
    precision at 5 of PRECISION on the test images (each description shown in MIN_RELEVANT or more)."""
    if not (MODEL / "model.pt").is_file():
        pytest.skip("no default run in results/: its English EmbN is not trained here")
    from polyvse.query import described_precision, open_model

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    validate(config, str(REPO / "config" / "schema.yaml"))  # the schema's defaults: the dataset's seed, lexicon
    synthetic = config["datasets"]["m30k"]["synthetic"]
    images = pd.read_parquet(REPO / "results" / "m30k" / "images.parquet")
    index = {image_id(i): i for i in range(len(images))}
    scenes = {
        image: make_scene(synthetic["seed"], index[image], synthetic["lexicon"])
        for image in images.loc[images["split"] == "test", "image_id"]
    }
    found = described_precision(open_model(MODEL), scenes, descriptions((None, 2)))
    kept = [(d, p) for d, n, p in found if n >= MIN_RELEVANT]
    mean = float(np.mean([p for _, p in kept]))
    worst = ", ".join(f"{d.text!r} {p:.1f}" for d, p in sorted(kept, key=lambda x: x[1])[:5])
    assert mean >= PRECISION, f"mean precision at 5 {mean:.2f} over {len(kept)} descriptions; worst: {worst}"
