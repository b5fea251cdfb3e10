"""Rule pca: one language's FastText vectors reduced by PCA to {dim} dimensions."""

import numpy as np

from polyvse.io import write_npy
from polyvse.logs import job_log
from polyvse.text.pca import fit_pca

with job_log(snakemake.log[0], "pca") as log:
    dim = int(snakemake.wildcards.dim)
    vectors = np.load(snakemake.input[0])
    projection = fit_pca(vectors, dim, seed=snakemake.params.seed)
    reduced = projection.project(vectors)
    log.info(
        "%s: %d words, %d-D → %d-D (%d fitted components), explained variance %.3f",
        snakemake.wildcards.lang,
        vectors.shape[0],
        vectors.shape[1],
        dim,
        projection.n_fitted,
        float(projection.explained_variance_ratio.sum()),
    )
    projection.save(snakemake.output.projection)
    write_npy(reduced, snakemake.output.vectors)
