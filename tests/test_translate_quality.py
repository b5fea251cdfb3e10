"""MT quality against references of the same plan, and the tables' MT footnote."""

import pandas as pd
import pytest

from polyvse.data.synthetic import build_dataset, reference_captions, write_dictionaries
from polyvse.errors import InputError
from polyvse.report.tables import mule_mt_table, to_markdown
from polyvse.translate.quality import QUALITY_COLUMNS, bleu_tokenizer, mt_datasets, mt_footnote, read_mt_quality, score
from polyvse.translate.stage import measure_quality, synthetic_references

SYN = {
    "adapter": "synthetic",
    "synthetic": {
        "profile": "m30k",
        "n_train": 2,
        "n_val": 1,
        "n_test": 4,
        "seed": 5,
        "captions_per_image": 2,
        "image_size": 32,
    },
}
LANGS = ["en", "de", "fr"]


def settings(tmp_path, **errors):
    return {"backend": "dictionary", "cache": str(tmp_path / "cache.sqlite"), "batch_size": 8, "errors": errors}


@pytest.fixture
def tiny(tmp_path):
    ds = build_dataset("m30k", 2, 1, 4, seed=5, captions_per_image=2, langs=LANGS)
    write_dictionaries(tmp_path / "dicts", LANGS)
    return ds, synthetic_references(SYN, LANGS), tmp_path / "dicts"


def test_references_realise_english_test_plans_in_every_language(tiny):
    ds, refs, _ = tiny
    assert list(refs.columns) == ["image_id", "split", "cap_idx", "lang", "text"]
    en = ds.captions[(ds.captions["split"] == "test") & (ds.captions["lang"] == "en")]
    assert len(refs) == 3 * len(en) and set(refs["split"]) == {"test"}
    assert list(refs.loc[refs["lang"] == "en", "text"]) == list(en["text"])
    # fr captions of m30k realise the plan of English caption 0: they are references too
    fr = ds.captions[(ds.captions["split"] == "test") & (ds.captions["lang"] == "fr")]
    ref_fr = refs[(refs["lang"] == "fr") & (refs["cap_idx"] == 0)]
    assert list(ref_fr["text"]) == list(fr["text"])
    assert reference_captions(ds, LANGS).equals(refs)


def test_mt_quality_columns_and_scores_on_a_tiny_dataset(tiny, tmp_path):
    ds, refs, dicts = tiny
    q = measure_quality(ds.captions, refs, LANGS, settings(tmp_path), dicts)
    assert list(q.columns) == QUALITY_COLUMNS
    assert list(zip(q["src"], q["tgt"], q["direction"])) == [
        ("en", "de", "forward"),
        ("en", "fr", "forward"),
        ("de", "en", "back"),
        ("fr", "en", "back"),
    ]
    assert set(q["n"]) == {8} and set(q["backend"]) == {"dictionary[no errors]"}
    assert ((q["bleu"] > 0) & (q["bleu"] <= 100) & (q["chrf"] > 0)).all()
    noisy = measure_quality(ds.captions, refs, LANGS, settings(tmp_path, drop=0.3, untranslated=0.3), dicts)
    assert (noisy["bleu"] < q["bleu"]).all() and noisy["backend"].iloc[0].startswith("dictionary[ws=0,wa=0,dr=0.3")


def test_real_data_is_unmeasured_and_stale_references_fail(tiny, tmp_path):
    ds, refs, dicts = tiny
    q = measure_quality(ds.captions, None, ["en", "ja", "zh"], {"backend": "googletrans"}, None)
    assert list(q.columns) == QUALITY_COLUMNS and set(q["bleu"]) == {"unmeasured"} and set(q["n"]) == {0}
    assert list(q["tgt"]) == ["ja", "zh", "en", "en"]
    stale = refs.copy()
    stale.loc[stale.index[0], "text"] = "A red circle."
    with pytest.raises(InputError, match="English references differ from the dataset's captions"):
        measure_quality(ds.captions, stale, LANGS, settings(tmp_path), dicts)


def test_tokenizers_and_score_checks():
    assert (bleu_tokenizer("zh"), bleu_tokenizer("ja"), bleu_tokenizer("de")) == ("zh", "char", "13a")
    assert score(["Es gibt einen roten Kreis."], ["es gibt einen roten kreis"], "de")[0] == pytest.approx(
        100.0
    )  # case, punctuation
    with pytest.raises(ValueError, match="1 hypotheses for 2 references"):
        score(["a"], ["a", "b"], "en")


def test_footnote_appears_in_a_table_built_from_a_tiny_eval_fixture(tiny, tmp_path):
    ds, refs, dicts = tiny
    path = tmp_path / "mt_quality.tsv"
    measure_quality(ds.captions, refs, LANGS, settings(tmp_path, drop=0.1), dicts).to_csv(path, sep="\t", index=False)
    real = tmp_path / "real.tsv"
    measure_quality(ds.captions, None, ["en", "ja"], {"backend": "googletrans"}, None).to_csv(
        real, sep="\t", index=False
    )
    q = read_mt_quality(str(path))
    evals = {
        ("v", "to_en"): pd.DataFrame({"lang": ["en", "de"], "mR": [70.0, 50.0], "test_source": "human"}),
        ("w", "direct"): pd.DataFrame({"lang": ["en", "ja"], "mR": [60.0, 40.0], "test_source": "human"}),
    }
    params = {"v": {"params_train": 10, "params_test": 10}, "w": {"params_train": 5, "params_test": 5}}
    rows = [
        {
            "name": "Trans. to En",
            "per_dataset": {"m30k": {"variant": "v", "protocol": "to_en"}, "coco": {"variant": "w"}},
        }
    ]
    table = mule_mt_table(rows, evals, params, {"m30k": ["en", "de"], "coco": ["en", "ja"]})
    note = mt_footnote({"m30k": q, "coco": read_mt_quality(str(real))})
    md = to_markdown(table, "Table 4", [], [note])
    de = q[(q["src"] == "en") & (q["tgt"] == "de")]["bleu"].iloc[0]
    back = q[(q["src"] == "de") & (q["tgt"] == "en")]["bleu"].iloc[0]
    assert (
        f"`m30k`: backend dictionary[ws=0,wa=0,dr=0.1,un=0,ro=0,seed=0]; BLEU en→xx / xx→en: "
        f"de {float(de):.1f} / {float(back):.1f}, fr " in md
    )
    assert "`coco`: backend googletrans; BLEU en→xx / xx→en: ja unmeasured / unmeasured." in md
    with pytest.raises(InputError, match="lacks columns"):
        pd.DataFrame({"src": ["en"]}).to_csv(tmp_path / "bad.tsv", sep="\t", index=False)
        read_mt_quality(str(tmp_path / "bad.tsv"))


def test_only_datasets_with_mt_rows_get_the_footnote():
    langs = ["en", "de", "fr", "cs"]
    config = {
        "datasets": {
            "m30k": {"adapter": "synthetic", "langs": langs, "synthetic": {"profile": "m30k"}},
            "other": {"adapter": "synthetic", "langs": langs, "synthetic": {"profile": "m30k"}},
        },
        "variants": {
            "h": {"model": "embn", "dataset": "m30k", "train_langs": ["en", "de"]},
            "mt": {"model": "embn", "dataset": "other", "train_langs": ["fr"], "captions": "augmented"},
            "en": {"model": "embn", "dataset": "m30k", "train_langs": ["en"]},
        },
        "reports": {
            "human": {"rows": [{"name": "H", "variant": "h"}]},
            "mixed": {
                "rows": [
                    {"name": "H", "variant": "h"},
                    {"name": "MT", "variant": "mt"},
                    {"name": "T", "variant": "en", "protocol": "to_en"},
                ]
            },
        },
    }
    assert mt_datasets(config, "human") == []
    assert mt_datasets(config, "mixed") == ["other", "m30k"]
