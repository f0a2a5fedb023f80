"""Writing figures: one style for every study, PNG and PDF written atomically."""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")  # files only; no display is ever needed

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from dpdl.io import atomic_path  # noqa: E402

DPI = 150


def new_figure(
    n_rows: int = 1, n_cols: int = 1, *, width: float = 4.2, height: float = 3.2, **kwargs
) -> tuple[Figure, object]:
    """A figure of ``n_rows x n_cols`` panels of ``width x height`` inches each, in the dpdl style."""
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
    return plt.subplots(n_rows, n_cols, figsize=(width * n_cols, height * n_rows), squeeze=False, **kwargs)


def save_figure(fig: Figure, png: str | os.PathLike, pdf: str | os.PathLike) -> None:
    """Write ``fig`` as PNG and PDF through temporary names, then close it."""
    try:
        fig.tight_layout()
        for path, fmt in ((png, "png"), (pdf, "pdf")):
            with atomic_path(path) as tmp:
                fig.savefig(tmp, format=fmt, dpi=DPI, metadata={"CreationDate": None} if fmt == "pdf" else None)
    finally:
        plt.close(fig)
