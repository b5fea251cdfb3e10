"""The Translator poster's Figure 3: recall against the number of
target-language training examples, one line per protocol (FS, T1, T2).

"First row is text→image R@1, R@5, R@10 respectively; second row is
image→text R@1, R@5, R@10." The TSV beside the PNG holds the plotted numbers
(one row per protocol and number of examples) with median ranks, mR, the best
epoch and parameter counts. The title states the image branch every protocol
started from (``translator.image_branch``, :func:`initialisation_note`): the
protocols differ only in the text branch (poster §3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from polyvse.errors import InputError
from polyvse.evaluate.retrieval import KS

PANELS: tuple[tuple[str, ...], ...] = (tuple(f"r{k}_t2i" for k in KS), tuple(f"r{k}_i2t" for k in KS))
ROW_TITLES: tuple[str, ...] = ("text→image", "image→text")
COLUMNS: tuple[str, ...] = (
    "protocol",
    "n_examples",
    *PANELS[0],
    *PANELS[1],
    "medr_t2i",
    "medr_i2t",
    "mR",
    "best_epoch",
    "params_train",
    "params_test",
)
STYLE: dict[str, tuple[str, str]] = {"FS": ("tab:gray", "o"), "T1": ("tab:blue", "s"), "T2": ("tab:red", "^")}


def curve_table(results: Sequence[Mapping]) -> pd.DataFrame:
    """One row per (protocol, n_examples) in :data:`COLUMNS` order, sorted by
    protocol (as given) then n. ``results``: the target runs' evaluation rows."""
    if not results:
        raise InputError("translator_curve", "no evaluated target model")
    frame = pd.DataFrame(list(results))
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise InputError("translator_curve", f"evaluation rows lack {', '.join(missing)}")
    order = {p: i for i, p in enumerate(dict.fromkeys(frame["protocol"]))}
    frame = frame.assign(_p=frame["protocol"].map(order)).sort_values(["_p", "n_examples"], kind="stable")
    return frame[list(COLUMNS)].reset_index(drop=True)


def initialisation_note(image_branch: str, source: str) -> str:
    """One line on how every protocol's image branch started (``translator.image_branch``)."""
    hows = {"source": f"the trained {source} source model's", "random": "one seeded random initialisation"}
    if image_branch not in hows:
        raise InputError("translator.image_branch", f"{image_branch!r} is not one of {', '.join(hows)}")
    how = hows[image_branch]
    return (
        f"Image branch of every protocol (FS, T1, T2) at the start: {how}; the protocols differ in the text branch only"
    )


def plot_curve(
    table: pd.DataFrame, path: str | Path, title: str, target: str, subtitle: str = "", *, initialisation: str
) -> None:
    """2 × 3 panels (rows: text→image, image→text; columns: R@1, R@5, R@10),
    x = number of ``target`` training examples (log scale), one line per protocol.
    ``initialisation`` (:func:`initialisation_note`) is printed under the title."""
    if not initialisation:
        raise InputError("translator_curve", "the figure must state the protocols' initialisation")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from polyvse.io import atomic_path

    fig, axes = plt.subplots(2, 3, figsize=(11, 6.4), sharex=True)
    ticks = sorted(table["n_examples"].unique())
    for r, (columns, row_title) in enumerate(zip(PANELS, ROW_TITLES)):
        for c, column in enumerate(columns):
            ax = axes[r, c]
            for i, (protocol, group) in enumerate(table.groupby("protocol", sort=False)):
                colour, marker = STYLE.get(protocol, (f"C{i}", "o"))
                g = group.sort_values("n_examples")
                ax.plot(
                    g["n_examples"], g[column], marker=marker, color=colour, label=protocol, linewidth=1.6, markersize=5
                )
            ax.set_xscale("log")
            ax.set_xticks(ticks, [str(t) for t in ticks])
            ax.minorticks_off()
            ax.set_title(f"{row_title} R@{KS[c]}", fontsize=10)
            ax.grid(alpha=0.3)
            if c == 0:
                ax.set_ylabel("recall (%)")
            if r == 1:
                ax.set_xlabel(f"number of {target} training examples")
    axes[0, 0].legend(loc="best", fontsize=9)
    fig.suptitle("\n".join(line for line in (title, initialisation, subtitle) if line), fontsize=10)
    fig.tight_layout()
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=150)
    plt.close(fig)


def alignment_note(summary: Mapping, source: str, target: str) -> str:
    """One line on M for the figure: held-out dictionary-induction precision@1 (CSLS)."""
    p1 = summary.get("p1_csls_rcsls", np.nan)
    svd = summary.get("p1_csls_svd", np.nan)
    return (
        f"M ({target}→{source}): held-out dictionary induction P@1 (CSLS) {p1:.1f}% after SVD+RCSLS, "
        f"{svd:.1f}% after SVD alone ({summary.get('heldout_queries', '?')} {target} words)"
    )
