"""Measure what makes a word model learn: one variant trained outside Snakemake with settings changed,
its validation curve and its test mR. The evidence of docs/learning.md was measured with it.

Reads the data stages of the default config from ``results/`` (``snakemake --cores all data`` first), trains
the variant as rule ``train`` would (polyvse.train.run.train_variant) with ``--set`` overrides of its
settings, prints one line per epoch and the test mR per language, and appends the epochs to ``--out``:

    .venv/bin/python bench/learning_curves.py smalr_10
    .venv/bin/python bench/learning_curves.py smalr_10 --set training.negatives_warmup_epochs=0 \\
        --set training.image_captions=quota --label before
    .venv/bin/python bench/learning_curves.py la_10 --pretrain results/m30k/pretrain/latent.pt
    .venv/bin/python bench/learning_curves.py embn_en --queries   # + rule described_queries' precision at k
    .venv/bin/python bench/learning_curves.py embn_en --queries --centre-vectors 3   # all-but-the-top vectors
    .venv/bin/python bench/learning_curves.py coco_embn_zh --set captions=augmented --images zh=500

A value is read as YAML (``3``, ``0.0015``, ``every_language``, ``null``). ``--threads`` sets the torch
threads (one, as a training job of the default run).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from snakemake.utils import validate  # noqa: E402

from polyvse.config import variant_settings  # noqa: E402
from polyvse.data.tables import read_captions  # noqa: E402
from polyvse.evaluate.run import evaluate_model  # noqa: E402
from polyvse.io import load_torch  # noqa: E402
from polyvse.models.trained import load_model  # noqa: E402
from polyvse.needs import mt_available  # noqa: E402
from polyvse.text.reduction import load_english_dictionaries  # noqa: E402
from polyvse.text.vocab import read_counts  # noqa: E402
from polyvse.train.families import FamilyInputs, variant_needs  # noqa: E402
from polyvse.train.run import train_variant  # noqa: E402


def overridden(settings: dict, assignments: list[str]) -> dict:
    """``settings`` with each ``a.b.c=value`` set (the value read as YAML)."""
    for assignment in assignments:
        key, _, value = assignment.partition("=")
        *path, last = key.split(".")
        node = settings
        for part in path:
            node = node.setdefault(part, {})
        node[last] = yaml.safe_load(value)
    return settings


def family_inputs(config: dict, settings: dict, dataset: str, results: Path, pretrain: Path | None) -> FamilyInputs:
    """What rule train reads for the variant's family (rules/common.smk, train_inputs)."""
    needs = variant_needs(settings)
    origin = "augmented" if mt_available(config, dataset) else "human"
    root = results / dataset
    tokens, fasttext, pca = {}, {}, {}
    for lang in needs.fasttext_langs:
        fasttext[lang] = np.load(root / "fasttext" / origin / f"{lang}.npy")
    for lang in needs.pca_langs:
        pca[lang] = np.load(root / "fasttext" / origin / f"{lang}.pca{needs.pca_dim}.npy")
    for lang in {*needs.fasttext_langs, *needs.pca_langs}:
        tokens[lang] = list(read_counts(root / "vocab" / origin / f"{lang}.tsv"))
    latent = None
    if needs.pretrain:
        latent = load_torch(pretrain or root / "pretrain" / f"{needs.pretrain}.pt")
    dictionaries = {}
    if needs.dictionaries:
        dictionaries = load_english_dictionaries(root / "dictionaries", settings["train_langs"])
    return FamilyInputs(tokens=tokens, fasttext=fasttext, pca=pca, latent=latent, dictionaries=dictionaries)


def all_but_the_top(vectors: np.ndarray, directions: int) -> np.ndarray:
    """``(V, D)`` word vectors with their mean and their ``directions`` top principal directions taken out
    (Mu & Viswanath's "all-but-the-top"; 0: the mean alone), rescaled to the same mean norm as before."""
    vectors = vectors.astype(np.float32)
    out = vectors - vectors.mean(0)
    if directions:
        top = np.linalg.svd(out, full_matrices=False)[2][:directions]
        out -= (out @ top.T) @ top
    return out * (np.linalg.norm(vectors, axis=1).mean() / np.linalg.norm(out, axis=1).mean())


def on_images(captions: pd.DataFrame, lang: str, n: int, seed: int = 0) -> pd.DataFrame:
    """``captions`` (human and machine-translated) with ``lang``'s training captions on ``n`` training images:
    the images ``lang`` has human captions of first (all of those captions), then images of one seeded order
    with one machine-translated caption each: how many captioned images a language needs."""
    rows = captions[(captions["lang"] == lang) & (captions["split"] == "train")]
    human = sorted(set(rows.loc[rows["origin"] == "human", "image_id"]))
    others = sorted(set(rows["image_id"]) - set(human))
    extra = set(np.random.default_rng(seed).permutation(others)[: max(0, n - len(human))])
    mt = rows[rows["origin"] != "human"]
    first = mt.groupby("image_id")["cap_idx"].transform("min")
    kept = rows.index[rows["origin"] == "human"].union(mt.index[mt["image_id"].isin(extra) & (mt["cap_idx"] == first)])
    dropped = rows.index.difference(kept)
    return captions.drop(index=dropped)


def described_line(config: dict, root: Path, trained, model, vocab) -> str:
    """Rule described_queries' mean precision at k on the trained model, and the share of its top k that
    show the query's colour and its shape (in any group)."""
    from polyvse.evaluate.described import descriptions, mean_precision, scene_plans
    from polyvse.query import TrainedModel, described_precision, test_images, top_k, embed_text

    queries, synthetic = config["described_queries"], config["datasets"][root.name]["synthetic"]
    tm = TrainedModel(root, model.eval(), vocab, trained.max_len, root, int(trained.saved()["config"]["image_dim"]))
    images = pd.read_parquet(root / "images.parquet")
    scenes = scene_plans(images.loc[images["split"] == "test", "image_id"], synthetic["seed"], synthetic["lexicon"])
    wanted = descriptions(queries["counts"])
    found = described_precision(tm, scenes, wanted, queries["k"])
    mean, counted = mean_precision(found, queries["min_relevant"])
    index = test_images(tm, cache_beside_model=False)
    colour = shape = 0.0
    kept = [d for d, n, _ in found if n >= queries["min_relevant"]]
    for d in kept:
        hits = [scenes[h.id] for h in top_k(embed_text(tm, d.text, "en"), index, queries["k"])]
        colour += np.mean([any(g.colour == d.colour for g in s.groups) for s in hits]) / len(kept)
        shape += np.mean([any(g.shape == d.shape for g in s.groups) for s in hits]) / len(kept)
    k = queries["k"]
    return (
        f"short queries' precision at {k} {mean:.3f} over {counted} descriptions; of the top {k}, "
        f"{colour:.2f} show the colour, {shape:.2f} the shape"
    )


def with_colour_words_swapped(captions: pd.DataFrame, lang: str = "en", seed: int = 0) -> pd.DataFrame:
    """``captions`` with every colour word of ``lang``'s test captions replaced by another colour drawn at random
    (seeded): their test mR against the captions' as written tells how much a model reads the colour words."""
    import re

    from polyvse.data.synthetic.scene import COLOURS

    colour_word = re.compile(r"\b(" + "|".join(COLOURS) + r")\b", re.IGNORECASE)
    rng = np.random.default_rng(seed)

    def swapped(text: str) -> str:
        return colour_word.sub(lambda m: str(rng.choice([c for c in COLOURS if c != m.group(0).lower()])), text)

    out = captions.copy()
    rows = (out["split"] == "test") & (out["lang"] == lang)
    out.loc[rows, "text"] = [swapped(t) for t in out.loc[rows, "text"]]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variant")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="e.g. training.lr=0.0015")
    parser.add_argument("--config", type=Path, default=REPO / "config" / "config.yaml")
    parser.add_argument("--results", type=Path, default=REPO / "results")
    parser.add_argument("--pretrain", type=Path, default=None, help="another latent pretraining's .pt")
    parser.add_argument("--label", default="", help="a name for this setting in --out")
    parser.add_argument("--out", type=Path, default=None, help="a TSV to append the epochs to")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--images",
        action="append",
        default=[],
        metavar="LANG=N",
        help="LANG's training captions on N images: its human-captioned ones, then one MT caption each",
    )
    parser.add_argument(
        "--centre-vectors",
        type=int,
        default=None,
        metavar="N",
        help="take the FastText vectors' mean and N top principal directions out (0: the mean alone)",
    )
    parser.add_argument(
        "--queries", action="store_true", help="also the colour x shape queries' precision (rule described_queries)"
    )
    args = parser.parse_args(argv)

    config = yaml.safe_load(args.config.read_text(encoding="utf-8"))
    validate(config, str(REPO / "config" / "schema.yaml"))  # fills the schema's defaults
    settings = overridden(variant_settings(config, args.variant), args.set)
    dataset = config["variants"][args.variant]["dataset"]
    root = args.results / dataset
    augmented = settings["captions"] == "augmented" or (root / "captions_augmented.parquet").is_file()
    captions = read_captions(root / ("captions_augmented.parquet" if augmented else "captions.parquet"))
    for assignment in args.images:
        lang, _, n = assignment.partition("=")
        captions = on_images(captions, lang, int(n))
    origin = "augmented" if settings["captions"] == "augmented" else "human"
    counts = {lang: read_counts(root / "vocab" / origin / f"{lang}.tsv") for lang in settings["train_langs"]}
    backbone = config["image_features"]["backbone"]
    ids = (root / "image_features" / f"{backbone}.ids.txt").read_text(encoding="utf-8").split()
    features = np.load(root / "image_features" / f"{backbone}.npy")
    inputs = family_inputs(config, settings, dataset, args.results, args.pretrain)
    if args.centre_vectors is not None:
        inputs.fasttext.update({lang: all_but_the_top(v, args.centre_vectors) for lang, v in inputs.fasttext.items()})

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as checkpoints:
        trained = train_variant(
            captions, features, ids, counts, settings, Path(checkpoints), args.threads, False, inputs
        )
    seconds = time.perf_counter() - started
    model, vocab = load_model(trained.saved())
    test = evaluate_model(model, vocab, captions, features, ids, settings["eval_langs"], trained.max_len)
    curve = trained.fit.log
    score = "val_mR" if "val_mR" in curve else "val_score"
    for row in curve.itertuples(index=False):
        print(
            f"epoch {row.epoch:3d}  loss {row.loss:.4f}  {score} {getattr(row, score):6.2f}  {row.seconds:6.2f} s"
            f" ({row.seconds_validating:.2f} s validating)"
        )
    fit = trained.fit
    per_lang = "  ".join(f"{lang} {mr:.1f}" for lang, mr in zip(test["lang"], test["mR"]))
    print(
        f"{args.variant} {args.label or '-'}: best epoch {fit.best_epoch} of {fit.epochs_run} ({fit.stop_reason}), "
        f"validation mR {fit.best_score:.2f}, test mR {test['mR'].mean():.2f} ({per_lang}), {seconds:.0f} s"
    )
    if args.queries:
        print(f"{args.variant} {args.label or '-'}: {described_line(config, root, trained, model, vocab)}")
        if "en" in settings["eval_langs"]:
            swapped = evaluate_model(
                model, vocab, with_colour_words_swapped(captions), features, ids, ["en"], trained.max_len
            )
            print(
                f"{args.variant} {args.label or '-'}: English test mR {test.set_index('lang').loc['en', 'mR']:.2f}, "
                f"{swapped['mR'].iloc[0]:.2f} with every colour word swapped for another"
            )
    if args.out is not None:
        rows = curve[["epoch", "loss", score, "seconds", "seconds_validating"]].rename(columns={score: "val"})
        rows.insert(0, "label", args.label)
        rows.insert(0, "variant", args.variant)
        rows["test_mR"] = round(float(test["mR"].mean()), 2)
        rows["stop_reason"] = fit.stop_reason
        new = not args.out.is_file()
        rows.to_csv(args.out, sep="\t", index=False, mode="a", header=new, float_format="%.4g")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
