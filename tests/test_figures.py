"""SMALR Figure 1(b) and Figure 3 from evaluations and parameter counts."""

import pandas as pd
import pytest

from polyvse.report.figures import (
    languages_frame,
    plot_languages,
    plot_vocab_reduction,
    point_areas,
    vocab_reduction_frame,
)

LANGS = ["en", "de", "fr", "cs", "zh", "ja", "ar", "af", "ko", "ru"]


def ev(scores):
    return pd.DataFrame({"lang": list(scores), "mR": list(scores.values()), "test_source": "human"})


EVALS = {
    ("en1", "direct"): ev({"en": 70.0}),
    ("de1", "direct"): ev({"de": 60.0}),
    ("two", "direct"): ev({"en": 66.0, "de": 58.0}),
    ("ten", "direct"): ev({l: 50.0 + i for i, l in enumerate(LANGS)}),
    ("coco_ten", "direct"): ev({l: 40.0 for l in LANGS}),
}
PARAMS = {
    "en1": {"params_train": 1_000_000, "params_test": 1},
    "de1": {"params_train": 3_000_000, "params_test": 1},
    "two": {"params_train": 4_000_000, "params_test": 1},
    "ten": {"params_train": 9_000_000, "params_test": 1},
    "coco_ten": {"params_train": 16_000_000, "params_test": 1},
}
TRAIN = {"en1": ["en"], "de1": ["de"], "two": ["en", "de"], "ten": LANGS, "coco_ten": LANGS}


def test_languages_frame_means_over_models_and_languages():
    points = [
        {"series": "S-LIWE", "variants": ["en1", "de1"]},
        {"series": "S-LIWE", "variants": ["two"]},
        {"series": "SMALR", "variants": ["ten"]},
    ]
    f = languages_frame(points, EVALS, PARAMS, TRAIN)
    assert list(f["n_langs"]) == [1, 2, 10]
    assert list(f["mR"]) == [65.0, 62.0, 54.5]
    assert list(f["params_train"]) == [2_000_000, 4_000_000, 9_000_000]  # one model of the point
    with pytest.raises(ValueError, match="different numbers"):
        languages_frame([{"series": "x", "variants": ["en1", "two"]}], EVALS, PARAMS, TRAIN)


def test_point_area_is_proportional_to_params_to_the_three_halves():
    areas = point_areas([1e6, 4e6, 9e6], max_area=270.0)
    assert areas == pytest.approx([10.0, 80.0, 270.0])  # 1 : 8 : 27


def test_vocab_reduction_frame_one_row_per_point_and_dataset():
    points = [
        {"series": "PCA", "label": "50", "per_dataset": {"m30k": "ten", "coco": "coco_ten"}},
        {"series": "SMALR", "per_dataset": {"m30k": "ten"}},
    ]
    f = vocab_reduction_frame(points, EVALS, PARAMS, ["coco", "m30k"])
    assert list(zip(f["method"], f["dataset"])) == [("PCA", "coco"), ("PCA", "m30k"), ("SMALR", "m30k")]
    assert list(f["A"]) == [40.0, 54.5, 54.5] and list(f["setting"]) == ["50", "50", ""]
    assert list(f["params_train"]) == [16_000_000, 9_000_000, 9_000_000]


def test_plots_write_pngs(tmp_path):
    f = languages_frame(
        [{"series": "MULE", "variants": ["en1"]}, {"series": "MULE", "variants": ["ten"]}], EVALS, PARAMS, TRAIN
    )
    plot_languages(f, "t", tmp_path / "a.png")
    g = vocab_reduction_frame(
        [
            {"series": "PCA", "label": "50", "per_dataset": {"m30k": "ten", "coco": "coco_ten"}},
            {"series": "PCA", "label": "100", "per_dataset": {"m30k": "two"}},
            {"series": "LA", "per_dataset": {"m30k": "ten"}},
        ],
        EVALS,
        PARAMS,
        ["coco", "m30k"],
    )
    plot_vocab_reduction(g, ["coco", "m30k"], {"coco": "MSCOCO-like"}, "t", tmp_path / "b.png")
    for name in ("a.png", "b.png"):
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
