"""Rule image_features: images.parquet → (N, D) features + ids, in table order."""

from pathlib import Path

import numpy as np

from polyvse.data.tables import read_images
from polyvse.features.image import extract_features, load_backbone, load_precomputed, write_ids
from polyvse.io import write_npy
from polyvse.logs import job_log

with job_log(snakemake.log[0], "image_features") as log:
    s = snakemake.params.settings
    images = read_images(snakemake.input.images)
    ids = list(images["image_id"])
    if s["backbone"] == "precomputed":
        feats = load_precomputed(
            s["precomputed_features"],
            s["precomputed_ids"],
            ids,
            npy_key="image_features.precomputed_features",
            ids_key="image_features.precomputed_ids",
        )
    else:
        root = Path(snakemake.params.image_root)
        backbone = load_backbone(s["backbone"], weights_path=s.get("weights_path"))
        feats = extract_features(
            [root / p for p in images["path"]], backbone, batch_size=s["batch_size"], num_threads=snakemake.threads
        )
    feats = np.ascontiguousarray(feats, dtype=np.float32)
    log.info("%s features: %s", s["backbone"], feats.shape)
    write_npy(feats, snakemake.output.features)
    write_ids(ids, snakemake.output.ids)
