"""results/described_queries.{tsv,md}: whether a trained model finds what a short English query names
("a red circle", "two blue stars"), read against the scene plans of the test images
(:mod:`polyvse.evaluate.described`): each description's relevant images and precision at k, and their
mean over the descriptions that enough images show."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from polyvse.evaluate.described import Description, mean_precision

COLUMNS = ("description", "colour", "shape", "count", "relevant_images", "precision", "counted")


def described_table(found: Sequence[tuple[Description, int, float]], min_relevant: int) -> pd.DataFrame:
    """One row per description of ``found`` (description, relevant images, precision at k); ``counted``:
    shown in ``min_relevant`` or more test images, so in the mean."""
    rows = [
        {
            "description": d.text,
            "colour": d.colour,
            "shape": d.shape,
            "count": "any" if d.count is None else str(d.count),
            "relevant_images": n,
            "precision": round(p, 4),
            "counted": n >= min_relevant,
        }
        for d, n, p in found
    ]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def described_markdown(
    found: Sequence[tuple[Description, int, float]], variant: str, k: int, min_relevant: int, n_images: int
) -> str:
    """The Markdown page: the mean precision at ``k`` first, then the five worst and every description."""
    mean, counted = mean_precision(found, min_relevant)
    table = described_table(found, min_relevant)
    worst = table[table["counted"]].sort_values(["precision", "description"]).head(5)
    lines = [
        f"# Short queries on `{variant}`",
        "",
        f"Mean precision at {k}: **{mean:.2f}** over the {counted} colour × shape descriptions that {min_relevant} "
        f"or more of the {n_images:,} test images show (relevance from the scene plans; "
        "`polyvse query MODEL --text '...' --lang en` ranks the same way).",
        "",
        "Worst: " + ", ".join(f"{r.description!r} {r.precision:.1f}" for r in worst.itertuples()) + ".",
        "",
        f"| description | relevant test images | precision at {k} | in the mean |",
        "|---|--:|--:|---|",
        *(
            f"| {r.description} | {r.relevant_images} | {r.precision:.1f} | {'yes' if r.counted else 'no'} |"
            for r in table.itertuples()
        ),
    ]
    return "\n".join(lines) + "\n"
