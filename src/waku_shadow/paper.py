"""The paper's published numbers (data/paper/) and our results beside them."""

from __future__ import annotations

import pandas as pd

from .config import PAPER_DATA
from .units import human_size

STATISTICS = ["min", "mean", "p95", "max"]


def read_table(name: str) -> pd.DataFrame:
    return pd.read_csv(PAPER_DATA / name, comment="#")


def table5() -> pd.DataFrame:
    """Table 5 as size_bytes, setup (s-h / m-h), statistic, latency_ms."""
    table = read_table("table5_latency_ms.csv")
    table["size_bytes"] = table.pop("size_kb") * 1000
    return table


def table5_comparison(summary: pd.DataFrame) -> pd.DataFrame:
    """Our min/mean/p95/max beside the paper's single-host ones, with ours / paper per cell.

    Only sizes the paper measured are compared; an empty frame when there are none.
    """
    paper = table5()
    paper = paper[paper["setup"] == "s-h"].pivot(index="size_bytes", columns="statistic", values="latency_ms")
    ours = summary.set_index("size_bytes")[STATISTICS]
    sizes = [size for size in ours.index if size in paper.index]
    rows = []
    for size in sizes:
        for statistic in STATISTICS:
            rows.append(
                {
                    "size_bytes": size,
                    "statistic": statistic,
                    "paper_ms": float(paper.loc[size, statistic]),
                    "ours_ms": float(ours.loc[size, statistic]),
                }
            )
    table = pd.DataFrame(rows, columns=["size_bytes", "statistic", "paper_ms", "ours_ms"])
    table["ratio"] = table["ours_ms"] / table["paper_ms"]
    return table


def table5_markdown(comparison: pd.DataFrame) -> str:
    """One row per size: paper / ours (ratio) for min, avg, p95, max."""
    lines = [
        "| size | min: paper / ours | avg: paper / ours | p95: paper / ours | max: paper / ours |",
        "|---|---:|---:|---:|---:|",
    ]
    for size, group in comparison.groupby("size_bytes", sort=True):
        cells = [
            f"{r.paper_ms:.0f} / {r.ours_ms:.0f} ({r.ratio:.2f})"
            for r in group.set_index("statistic").loc[STATISTICS].itertuples()
        ]
        lines.append(f"| {human_size(int(size))} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def multihost_extremes() -> dict[int, tuple[float, float]]:
    """size_bytes -> the multi-host deployment's best and worst latency (Table 5, m-h)."""
    table = table5()
    mh = table[table["setup"] == "m-h"].pivot(index="size_bytes", columns="statistic", values="latency_ms")
    return {int(size): (float(row["min"]), float(row["max"])) for size, row in mh.iterrows()}
