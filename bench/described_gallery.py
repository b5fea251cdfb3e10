"""Does the size of the searched collection limit the short colour × shape queries?

Rule ``described_queries`` reads a word model's precision at k on "a red circle", "two blue stars"...
over its 200 test images, where most descriptions are shown in 5 to 15 of them. This script asks the same
trained models to search a collection of ``--images`` fresh images of the same generator (indices past
every split of the dataset, so that no model saw them), rendered into ``--gallery`` once and searched
with ``polyvse query``'s own code (its folder index and feature cache). If precision rose with the
collection, the test split's size would be what limits it; if it stays, the model is.

    .venv/bin/python bench/described_gallery.py results/m30k/models/embn_en --images 1000

Seeded by the dataset's generator: the same models give the same numbers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from polyvse import query  # noqa: E402
from polyvse.config_files import read_schema, with_schema_defaults  # noqa: E402
from polyvse.data.synthetic import make_scene, render_image  # noqa: E402
from polyvse.evaluate.described import descriptions, mean_precision  # noqa: E402


def render_gallery(folder: Path, first: int, n: int, seed: int, lexicon: str) -> dict:
    """Render images ``first .. first + n - 1`` of the generator under ``seed`` into ``folder`` (kept
    where already there): each file name → its scene plan."""
    folder.mkdir(parents=True, exist_ok=True)
    scenes = {}
    for index in range(first, first + n):
        scene, name = make_scene(seed, index, lexicon), f"{index:06d}.png"
        if not (folder / name).is_file():
            render_image(seed, index, scene).save(folder / name)
        scenes[name] = scene
    return scenes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path, help="trained word models' directories")
    parser.add_argument("--config", type=Path, default=REPO / "config" / "config.yaml")
    parser.add_argument("--dataset", default="m30k")
    parser.add_argument("--images", type=int, default=1000, help="how many fresh images to search")
    parser.add_argument("--first", type=int, default=100_000, help="the first fresh image's index")
    parser.add_argument("--gallery", type=Path, default=Path("/tmp/polyvse_described_gallery"))
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--min-relevant", type=int, default=5)
    args = parser.parse_args(argv)

    config = with_schema_defaults(yaml.safe_load(args.config.read_text()), read_schema(REPO / "config" / "schema.yaml"))
    synthetic = config["datasets"][args.dataset]["synthetic"]
    split_images = synthetic["n_train"] + synthetic["n_val"] + synthetic["n_test"]
    if args.first < split_images:
        parser.error(f"--first {args.first} falls in the dataset's splits (images 0 to {split_images - 1})")
    folder = args.gallery / f"{args.dataset}_{synthetic['seed']}_{args.first}_{args.images}"
    scenes = render_gallery(folder, args.first, args.images, synthetic["seed"], synthetic["lexicon"])
    for model_dir in args.models:
        model = query.open_model(model_dir)
        index = query.folder_images(model, folder)
        found = query.described_precision(model, scenes, descriptions(), args.k, index)
        precision, kept = mean_precision(found, args.min_relevant)
        base = np.mean([n / len(scenes) for _, n, _ in found if n >= args.min_relevant])
        print(
            f"{model_dir}: {args.images} fresh images, precision at {args.k} {precision:.3f} over {kept} "
            f"descriptions (a random ranking's {base:.3f})",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
