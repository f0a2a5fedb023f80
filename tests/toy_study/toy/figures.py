"""The toy's one figure: the error of the release against epsilon."""

from __future__ import annotations

import pandas as pd


def draw_figure(table: pd.DataFrame, png: str, pdf: str) -> None:
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot(table["epsilon"], table["mean"], marker="o")
    ax.fill_between(table["epsilon"], table["lo"], table["hi"], alpha=0.3)
    ax.set(xscale="log", yscale="log", xlabel="epsilon", ylabel="|noisy mean - mean|")
    fig.savefig(png)
    fig.savefig(pdf)
    plt.close(fig)
