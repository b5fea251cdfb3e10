"""Rule pca: one language's FastText vectors reduced by PCA to each of the config's dimensions."""

import numpy as np

from polyvse.io import write_npy
from polyvse.logs import job_log
from polyvse.text.pca import fit_pca

with job_log(snakemake.log[0], "pca") as log:
    vectors = np.load(snakemake.input[0])
    for dim, out_vectors, out_projection in zip(
        snakemake.params.dims, snakemake.output.vectors, snakemake.output.projections, strict=True
    ):
        projection = fit_pca(vectors, int(dim), seed=snakemake.params.seed)
        log.info(
            "%s: %d words, %d-D → %d-D (%d fitted components), explained variance %.3f",
            snakemake.wildcards.lang,
            vectors.shape[0],
            vectors.shape[1],
            dim,
            projection.n_fitted,
            float(projection.explained_variance_ratio.sum()),
        )
        projection.save(out_projection)
        write_npy(projection.project(vectors), out_vectors)
