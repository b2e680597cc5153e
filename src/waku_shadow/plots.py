"""Figures. Matplotlib runs headless (Agg)."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from .units import human_size  # noqa: E402


def latency_distributions(receipts: pd.DataFrame, summary: pd.DataFrame, title: str, out: Path) -> None:
    """One panel per message size, like the paper's Figure 3: share of receipts per latency bin."""
    measured = receipts[~receipts["warmup"].astype(bool)]
    sizes = list(summary["size_bytes"])
    columns = 2 if len(sizes) > 1 else 1
    rows = math.ceil(len(sizes) / columns)
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(rows, columns, figsize=(6 * columns, 3.6 * rows), squeeze=False)
    for ax, row in zip(axes.flat, summary.itertuples()):
        data = measured[measured["size_bytes"] == row.size_bytes]
        sns.histplot(data, x="latency_ms", stat="probability", bins=40, ax=ax, color="#4c72b0")
        for value, label, style in (
            (row.min, "min", ":"),
            (row.mean, "avg", "-"),
            (row.p95, "p95", "--"),
            (row.max, "max", ":"),
        ):
            ax.axvline(value, color="black", linestyle=style, linewidth=1)
            ax.annotate(
                f"{label} {value:.0f}",
                xy=(value, 1),
                xycoords=("data", "axes fraction"),
                rotation=90,
                va="top",
                ha="right",
                fontsize=8,
            )
        ax.set_title(f"Message size = {human_size(int(row.size_bytes))} ({int(row.count)} receipts)")
        ax.set_xlabel("Latency (ms)")
        ax.set_ylabel("Message share")
    for ax in list(axes.flat)[len(sizes):]:
        ax.set_visible(False)
    fig.suptitle(title)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=150)
    plt.close(fig)
