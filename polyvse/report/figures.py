"""Paper figures from per-variant evaluations and parameter counts.

- ``languages`` (SMALR Fig. 1(b)): mean mR against the number of training
  languages, one series per method (S-LIWE, L-LIWE, MULE, SMALR); the area of a
  point is proportional to (P / 10⁶)^{3/2}, P the trainable parameters of one
  model of the point ("their area is (P/10⁶)^{3/2}"; scaled by one constant so
  that the largest point stays readable).
- ``vocab_reduction`` (SMALR Fig. 3): average mR over the ten languages (A)
  against trainable parameters, one panel per dataset (MSCOCO left, Multi30K
  right): frequency thresholding, PCA and dictionary mapping as labelled series
  (t, or the PCA dimension), LA / SMALR / MULE / LIWE as standalone points.

The frames written beside the PNGs hold exactly the plotted numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from pathlib import Path

import numpy as np
import pandas as pd

from polyvse.report.labels import place_labels

MAX_AREA = 900.0  # points², the largest marker of a languages figure
# the papers' colours where they name them (Fig. 1(b): L-LIWE orange, SMALR yellow; Fig. 3: SMALR green)
LANGUAGES_COLOURS = {"S-LIWE": "tab:blue", "L-LIWE": "tab:orange", "MULE": "tab:red", "SMALR": "gold"}
REDUCTION_COLOURS = {
    "Frequency thresholding": "tab:blue",
    "PCA": "tab:purple",
    "Dictionary mapping": "tab:brown",
    "MULE": "tab:red",
    "LA": "tab:gray",
    "SMALR": "tab:green",
    "S-LIWE": "tab:cyan",
    "L-LIWE": "tab:orange",
}


def _mean_mr(ev: pd.DataFrame) -> float:
    return float(ev["mR"].mean())


def _params(params: Mapping[str, Mapping], ev: pd.DataFrame, variant: str, kind: str) -> int:
    extra = int(ev["added_params"].max()) if "added_params" in ev.columns and len(ev) else 0
    return int(params[variant][kind]) + extra


def languages_frame(
    points: Sequence[Mapping],
    evals: Mapping[tuple[str, str], pd.DataFrame],
    params: Mapping[str, Mapping],
    train_langs: Mapping[str, Sequence[str]],
) -> pd.DataFrame:
    """One row a point: series, label, n_langs, mR, params_train, variants.

    mR: the mean over the point's variants of each variant's mean mR over the
    languages it is evaluated on; n_langs: their number of training languages
    (equal for every variant of a point); params_train: the mean over them (one
    model's parameters).
    """
    rows = []
    for i, point in enumerate(points):
        variants = list(point["variants"])
        n = {len(train_langs[v]) for v in variants}
        if len(n) != 1:
            raise ValueError(
                f"point {i} ({point['series']}): its variants train on different numbers of languages {sorted(n)}"
            )
        evs = [evals[(v, "direct")] for v in variants]
        rows.append(
            {
                "series": point["series"],
                "label": point.get("label", ""),
                "n_langs": n.pop(),
                "mR": round(float(np.mean([_mean_mr(e) for e in evs])), 2),
                "params_train": int(np.mean([_params(params, e, v, "params_train") for v, e in zip(variants, evs)])),
                "variants": "+".join(variants),
            }
        )
    return pd.DataFrame(rows, columns=["series", "label", "n_langs", "mR", "params_train", "variants"])


def vocab_reduction_frame(
    points: Sequence[Mapping],
    evals: Mapping[tuple[str, str], pd.DataFrame],
    params: Mapping[str, Mapping],
    datasets: Sequence[str],
) -> pd.DataFrame:
    """One row a (point, dataset): method, setting, dataset, params_train, A, variant.

    A is the mean mR over the languages the variant is evaluated on (all ten for
    the figure's variants, SMALR Fig. 3's "average mR")."""
    rows = []
    for point in points:
        for ds in datasets:
            variant = (point.get("per_dataset") or {}).get(ds)
            if variant is None:
                continue
            ev = evals[(variant, "direct")]
            rows.append(
                {
                    "method": point["series"],
                    "setting": point.get("label", ""),
                    "dataset": ds,
                    "params_train": _params(params, ev, variant, "params_train"),
                    "A": round(_mean_mr(ev), 2),
                    "n_langs": int(len(ev)),
                    "variant": variant,
                }
            )
    return pd.DataFrame(rows, columns=["method", "setting", "dataset", "params_train", "A", "n_langs", "variant"])


def point_areas(params: Sequence[float], max_area: float = MAX_AREA) -> np.ndarray:
    """Marker areas ∝ (P / 10⁶)^1.5, the largest ``max_area`` points²."""
    raw = (np.asarray(params, dtype=float) / 1e6) ** 1.5
    return raw * (max_area / raw.max()) if len(raw) and raw.max() > 0 else raw


def _colour(palette: Mapping[str, str], series: str, i: int) -> str:
    import matplotlib.pyplot as plt

    return palette.get(series, plt.rcParams["axes.prop_cycle"].by_key()["color"][i % 10])


def plot_languages(frame: pd.DataFrame, caption: str, path: str | Path) -> None:
    """SMALR Fig. 1(b): mR vs number of training languages, marker area ∝ (P/1e6)^1.5."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from polyvse.io import atomic_path

    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    areas = point_areas(frame["params_train"])
    points: list[tuple[float, float]] = []
    texts: list[str] = []
    radii: list[float] = []
    for i, (series, group) in enumerate(frame.groupby("series", sort=False)):
        colour = _colour(LANGUAGES_COLOURS, series, i)
        g = group.sort_values("n_langs")
        if len(g) > 1:
            ax.plot(g["n_langs"], g["mR"], "-", color=colour, alpha=0.6, zorder=1)
        ax.scatter(
            g["n_langs"],
            g["mR"],
            s=areas[g.index],
            color=colour,
            alpha=0.75,
            edgecolors="black",
            linewidths=0.6,
            zorder=2,
            label=series,
        )
        for i_row, r in g.iterrows():
            points.append((r["n_langs"], r["mR"]))
            texts.append(f"{r['params_train'] / 1e6:.2f}M")
            radii.append(float(np.sqrt(areas[i_row])) / 2)  # a scatter marker's size is its area, points²
    ticks = sorted(frame["n_langs"].unique())
    ax.set_xscale("log")
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    pad = 0.15
    # room on the right for the labels of the points at the most languages, which crowd together
    ax.set_xlim(min(ticks) / (1 + pad) ** 2, max(ticks) * (1 + pad) ** 4)
    lo, hi = frame["mR"].min(), frame["mR"].max()
    ax.set_ylim(lo - 0.12 * (hi - lo + 1), hi + 0.12 * (hi - lo + 1))
    ax.set_xlabel("Number of training languages")
    ax.set_ylabel("mR (mean over the languages trained on)")
    ax.set_title(caption or "Performance vs number of training languages", fontsize=10)
    legend = ax.legend(loc="best", fontsize=8, markerscale=0.5, title="area ∝ (params/1e6)^1.5", title_fontsize=7)
    for handle in legend.legend_handles:
        handle.set_sizes([40])
    ax.grid(alpha=0.3)
    fig.tight_layout()
    place_labels(ax, points, texts, [{"fontsize": 7, "color": "dimgray"}] * len(points), radii)
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=150)
    plt.close(fig)


def plot_vocab_reduction(
    frame: pd.DataFrame, datasets: Sequence[str], titles: Mapping[str, str], caption: str, path: str | Path
) -> None:
    """SMALR Fig. 3: A vs trainable parameters (M), one panel per dataset; series
    with several points are joined and each point labelled with its setting;
    single-point methods are standalone labelled markers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from polyvse.io import atomic_path

    fig, axes = plt.subplots(1, len(datasets), figsize=(6.2 * len(datasets), 4.8), squeeze=False)
    markers = ["s", "D", "^", "v", "P", "X", "*", "h"]
    methods = list(dict.fromkeys(frame["method"]))
    # per panel: (point, text, style, marker radius in points), placed once the layout is final
    labels: dict[Any, list[tuple[tuple[float, float], str, dict[str, Any], float]]] = {ax: [] for ax in axes[0]}
    for ax, ds in zip(axes[0], datasets):
        sub = frame[frame["dataset"] == ds]
        lone = 0
        for i, method in enumerate(methods):
            g = sub[sub["method"] == method]
            if g.empty:
                continue
            colour = _colour(REDUCTION_COLOURS, method, i)
            x = g["params_train"] / 1e6
            if len(g) > 1:
                order = np.argsort(x.to_numpy())
                ax.plot(
                    x.to_numpy()[order],
                    g["A"].to_numpy()[order],
                    "-o",
                    color=colour,
                    label=method,
                    markersize=5,
                    zorder=2,
                )
                for xi, yi, text in zip(x, g["A"], g["setting"]):
                    labels[ax].append(((xi, yi), str(text), {"fontsize": 8, "color": colour}, 2.5))
            else:
                marker = markers[lone % len(markers)]
                lone += 1
                ax.scatter(
                    x,
                    g["A"],
                    marker=marker,
                    s=70,
                    color=colour,
                    edgecolors="black",
                    linewidths=0.6,
                    label=method,
                    zorder=3,
                )
                text = g["setting"].iloc[0] or method
                labels[ax].append(
                    ((x.iloc[0], g["A"].iloc[0]), str(text), {"fontsize": 8, "fontweight": "bold"}, np.sqrt(70) / 2)
                )
        ax.set_title(titles.get(ds, ds), fontsize=10)
        ax.set_xlabel("Trainable parameters (M)")
        ax.set_ylabel("Average mR over ten languages (A)")
        ax.grid(alpha=0.3)
        ax.margins(x=0.12, y=0.12)
        ax.legend(fontsize=7, loc="best")
    if caption:
        fig.suptitle(caption, fontsize=11)
    fig.tight_layout()
    for ax, items in labels.items():
        points, texts, styles, radii = zip(*items) if items else ((), (), (), ())
        place_labels(ax, points, texts, styles, radii)
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=150)
    plt.close(fig)
