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


# ----------------------------------------------------------------------------- labels


def _labels_clear(monkeypatch):
    """Wrap the figures' label placement: every placed label must be clear of the others and
    inside its axes."""
    import polyvse.report.figures as figures
    from polyvse.report.labels import overlapping_labels, place_labels, text_box

    checked = []

    def checking(ax, points, texts, styles=None, radii=None):
        labels = place_labels(ax, points, texts, styles, radii)
        renderer = ax.figure.canvas.get_renderer()
        frame = ax.get_window_extent(renderer)
        assert overlapping_labels(ax, labels) == []
        for label in labels:
            box = text_box(label, renderer)
            assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
        checked.append(len(labels))
        return labels

    monkeypatch.setattr(figures, "place_labels", checking)
    return checked


def test_crowded_labels_do_not_overlap(tmp_path, monkeypatch):
    """Four series at ten languages within a few mR of each other, one of them a large marker (as
    the default run's Figure 1(b)): their labels used to be drawn on top of each other."""
    checked = _labels_clear(monkeypatch)
    frame = pd.DataFrame(
        {
            "series": ["S-LIWE", "S-LIWE", "L-LIWE", "MULE", "MULE", "MULE", "SMALR"],
            "label": [""] * 7,
            "n_langs": [1, 10, 10, 1, 2, 10, 10],
            "mR": [16.1, 2.9, 3.6, 52.0, 38.5, 4.1, 3.8],
            "params_train": [413_088, 550_000, 1_130_000, 1_400_000, 2_400_000, 10_660_000, 1_180_000],
            "variants": ["a"] * 7,
        }
    )
    plot_languages(frame, "crowded", tmp_path / "f.png")
    assert checked == [7] and (tmp_path / "f.png").stat().st_size > 0


def test_vocabulary_reduction_labels_do_not_overlap(tmp_path, monkeypatch):
    checked = _labels_clear(monkeypatch)
    rows = [
        ("Frequency thresholding", "100", 1.12e6, 4.41),
        ("Frequency thresholding", "1000", 0.86e6, 4.31),
        ("PCA", "10", 0.75e6, 4.50),
        ("PCA", "25", 1.26e6, 4.85),
        ("PCA", "50", 2.10e6, 6.28),
        ("Dictionary mapping", "100", 2.03e6, 3.99),
        ("Dictionary mapping", "1000", 1.80e6, 4.27),
        ("MULE", "", 10.66e6, 4.10),
        ("LA", "", 0.50e6, 3.37),
        ("SMALR", "", 1.18e6, 3.82),
        ("S-LIWE", "", 0.55e6, 2.87),
        ("L-LIWE", "", 1.13e6, 3.62),
    ]
    frame = pd.DataFrame(
        [
            {"method": m, "setting": s, "dataset": "m30k", "params_train": p, "A": a, "n_langs": 10, "variant": "v"}
            for m, s, p, a in rows
        ]
    )
    plot_vocab_reduction(frame, ["m30k"], {"m30k": "Multi30K-like"}, "crowded", tmp_path / "f.png")
    assert checked == [12]


def test_overlapping_labels_finds_labels_drawn_on_each_other():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from polyvse.report.labels import overlapping_labels, place_labels

    fig, ax = plt.subplots()
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    same = [ax.annotate(t, (5, 5), textcoords="offset points", xytext=(4, 4)) for t in ("1.13M", "1.18M")]
    assert overlapping_labels(ax, same) == [("1.13M", "1.18M")]
    placed = place_labels(ax, [(5, 5), (5, 5.05), (5.05, 5)], ["1.13M", "1.18M", "0.55M"])
    assert overlapping_labels(ax, placed) == []
    plt.close(fig)
