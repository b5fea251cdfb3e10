"""The MSCOCO adapter on tiny files in the real formats: Karpathy's dataset_coco.json, YJ Captions
(COCO annotation JSON) and COCO-CN's human-written caption list."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pandas as pd
import pytest

from polyvse.config import ConfigError, check_config, human_langs
from polyvse.data.adapters import make_dataset
from polyvse.data.coco import load_coco
from polyvse.errors import InputError

N = 12  # images: 0-5 in val2014, 6-11 in train2014


def stem(i: int) -> str:
    folder = "val2014" if i < 6 else "train2014"
    return f"COCO_{folder}_{i + 100:012d}"


def write_coco(root: Path) -> dict[str, Path]:
    """12 images (Karpathy splits: 2 test, 2 val, 2 restval, 6 train); image 0 has 7 English
    sentences; Japanese for images 0-7 (five each, image 3's in a shuffled annotation order);
    Chinese for images 0-5 (image 1 has two captions, listed #1 first)."""
    root.mkdir(parents=True, exist_ok=True)
    splits = ["test", "test", "val", "val", "restval", "restval"] + ["train"] * 6
    images = []
    for i in range(N):
        folder = "val2014" if i < 6 else "train2014"
        n_sent = 7 if i == 0 else 5
        images.append(
            {
                "filepath": folder,
                "filename": stem(i) + ".jpg",
                "cocoid": i + 100,
                "split": splits[i],
                "imgid": i,
                "sentences": [{"raw": f"A photo {i} number {k}.", "tokens": ["a"]} for k in range(n_sent)],
            }
        )
    karpathy = root / "dataset_coco.json"
    karpathy.write_text(json.dumps({"images": images, "dataset": "coco"}), encoding="utf-8")
    anns = [{"image_id": i + 100, "id": 10 * i + k, "caption": f"写真{i}の説明{k}"} for i in range(8) for k in range(5)]
    yj = root / "yjcaptions26k_clean.json"
    yj.write_text(
        json.dumps({"images": [{"id": i + 100} for i in range(8)], "annotations": anns}, ensure_ascii=False),
        encoding="utf-8",
    )
    lines = [f"{stem(1)}#1\t第二句{1}", *(f"{stem(i)}#0\t图片{i}的描述" for i in range(6))]
    cn = root / "imageid.human-written-caption.txt"
    cn.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"captions_json": karpathy, "ja_json": yj, "zh_captions": cn}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return write_coco(tmp_path / "coco")


def test_captions_per_language_and_image_ids(files):
    captions, images = load_coco(
        files["captions_json"], ["en", "de", "ja", "zh"], files["ja_json"], files["zh_captions"], split="karpathy"
    )
    assert list(images["image_id"]) == [stem(i) for i in range(N)] and set(images["path"]) == {""}
    counts = captions.groupby("lang").size().to_dict()
    assert counts == {"en": 5 * N, "ja": 5 * 8, "zh": 7}  # de: not MSCOCO's, left to MT
    en0 = captions[(captions["lang"] == "en") & (captions["image_id"] == stem(0))]
    assert list(en0["cap_idx"]) == [0, 1, 2, 3, 4]  # the 6th and 7th sentences are dropped
    zh1 = captions[(captions["lang"] == "zh") & (captions["image_id"] == stem(1))]
    assert list(zh1["text"]) == ["图片1的描述", "第二句1"] and list(zh1["cap_idx"]) == [0, 1]  # ordered by #n
    assert (captions["origin"] == "human").all()


def test_karpathy_splits_put_restval_in_training(files):
    _, images = load_coco(files["captions_json"], ["en"], split="karpathy")
    assert images["split"].tolist() == ["test"] * 2 + ["val"] * 2 + ["train"] * 8


def test_mule_split_draws_val_and_test_from_images_with_every_language(files):
    captions, images = load_coco(
        files["captions_json"], ["en", "ja", "zh"], files["ja_json"], files["zh_captions"], n_val=2, n_test=3, seed=1
    )
    held = images[images["split"] != "train"]
    assert sorted(held["split"].value_counts().tolist()) == [2, 3]
    assert set(held["image_id"]) <= {stem(i) for i in range(6)}  # en + ja + zh: images 0-5
    again = load_coco(
        files["captions_json"], ["en", "ja", "zh"], files["ja_json"], files["zh_captions"], n_val=2, n_test=3, seed=1
    )[1]
    pd.testing.assert_frame_equal(images, again)
    split_of = dict(zip(images["image_id"], images["split"]))
    assert (captions["split"] == captions["image_id"].map(split_of)).all()
    with pytest.raises(InputError, match="6 images have captions in every language; split mule needs"):
        load_coco(files["captions_json"], ["en", "ja", "zh"], files["ja_json"], files["zh_captions"], n_val=4, n_test=3)


def test_images_dir_must_hold_every_image(files, tmp_path):
    images_dir = tmp_path / "images"
    for i in range(N):
        folder = images_dir / ("val2014" if i < 6 else "train2014")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{stem(i)}.jpg").write_bytes(b"jpg")
    _, images = load_coco(files["captions_json"], ["en"], images_dir=images_dir, split="karpathy")
    assert images["path"].iloc[7] == str(images_dir / "train2014" / f"{stem(7)}.jpg")
    (images_dir / "train2014" / f"{stem(9)}.jpg").unlink()
    with pytest.raises(InputError, match=f"{stem(9)}.jpg: image of .* not found in images_dir"):
        load_coco(files["captions_json"], ["en"], images_dir=images_dir, split="karpathy")


def test_errors_name_the_file_and_the_entry_or_line(files, tmp_path):
    with pytest.raises(InputError, match="dataset_coco.json: Karpathy captions JSON .* not found"):
        load_coco(tmp_path / "dataset_coco.json", ["en"])
    bad = tmp_path / "bad.json"
    bad.write_text('{"images": [\n{"cocoid": 1,\n}', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.json:3: not valid JSON"):
        load_coco(bad, ["en"])
    doc = json.loads(files["captions_json"].read_text())
    del doc["images"][4]["cocoid"]
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"images\[4\]: missing key 'cocoid'"):
        load_coco(bad, ["en"])
    doc = json.loads(files["ja_json"].read_text())
    doc["annotations"][7]["image_id"] = 999
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"annotations\[7\]: image_id 999 is not an MSCOCO image"):
        load_coco(files["captions_json"], ["en", "ja"], ja_json=bad)
    cn = tmp_path / "cn.txt"
    cn.write_text(f"{stem(0)}#0\t好\n{stem(1)} no number\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"cn.txt:2: expected 'COCO_<split>2014_<id>#<n><TAB><caption>'"):
        load_coco(files["captions_json"], ["en", "zh"], zh_captions=cn)
    cn.write_text(f"{stem(0)}#0\t好\nCOCO_val2014_000000000042#0\t好\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"cn.txt:2: image COCO_val2014_000000000042 is not an MSCOCO image"):
        load_coco(files["captions_json"], ["en", "zh"], zh_captions=cn)
    with pytest.raises(InputError, match="language ja is in the dataset's langs but no caption file"):
        load_coco(files["captions_json"], ["en", "ja"])


def _config(files) -> dict:
    return {
        "datasets": {
            "mscoco": {
                "adapter": "coco",
                "langs": ["en", "ja", "zh", "de"],
                "coco": {
                    "captions_json": str(files["captions_json"]),
                    "ja_json": str(files["ja_json"]),
                    "zh_captions": str(files["zh_captions"]),
                    "images_dir": None,
                    "split": "mule",
                    "n_val": 2,
                    "n_test": 2,
                    "seed": 0,
                    "max_captions": 5,
                },
            }
        },
        "variants": {},
        "reports": {},
        "figures": {},
        "speech": {},
    }


def test_make_dataset_and_config_checks(files, tmp_path):
    config = _config(files)
    captions, images = make_dataset("mscoco", config["datasets"]["mscoco"], tmp_path)
    assert images["split"].value_counts().to_dict() == {"train": 8, "val": 2, "test": 2}
    assert set(captions["lang"]) == {"en", "ja", "zh"}
    assert human_langs(config, "mscoco") == ["en", "ja", "zh"]
    for key, edit, reason in [
        ("zh_captions", lambda c: c.update(zh_captions=None), "needs this file for language zh"),
        ("ja_json", lambda c: c.update(ja_json=str(tmp_path / "nope.json")), "does not exist"),
        ("captions_json", lambda c: c.update(captions_json=None), "adapter coco needs this file"),
    ]:
        bad = copy.deepcopy(config)
        edit(bad["datasets"]["mscoco"]["coco"])
        with pytest.raises(ConfigError) as err:
            check_config(bad)
        assert err.value.key == f"datasets.mscoco.coco.{key}" and reason in str(err.value)
