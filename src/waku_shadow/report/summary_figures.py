"""The docs' figures, drawn from the committed summaries alone (report/summaries.py), beside the
paper's raw latencies: <study>-latency.png/.svg per summarised study of the paper's network, and
<study>-latency-by-class.png/.svg per study with bandwidth classes.

Per size, a row: our latency ECDF (each seed thin, pooled thick; to the summary's 1 ms bins) over
the paper's, and how long our relayed hops took. The files carry no date, so a rewrite from the same
summaries changes nothing."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from waku_shadow.analyse import stats  # noqa: E402
from waku_shadow.configuration.units import human_size  # noqa: E402
from waku_shadow.paper import published  # noqa: E402
from waku_shadow.report import class_tables  # noqa: E402
from waku_shadow.report.summaries import StudySummary  # noqa: E402

FORMATS = (".png", ".svg")
OURS, PAPER = "#4c72b0", "black"


def binned_ecdf(histogram: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Latencies (ms, to the summary's bin) and the share of receipts at or below each."""
    counts = histogram.groupby("latency_ms")["receipts"].sum().sort_index()
    return counts.index.to_numpy(), counts.cumsum().to_numpy() / counts.sum()


def latency_figure(summary: StudySummary, out_stem: Path) -> list[Path]:
    """<out_stem>.png and .svg: per size, our latency ECDF over the paper's and our relayed hop times."""
    theirs = stats.measured(published.shadow_receipts())
    sizes = sorted(summary.latency_histogram["size_bytes"].unique())
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(len(sizes), 2, figsize=(13, 3.4 * len(sizes)), squeeze=False)
    ks = summary.distances.set_index("size_bytes")["ks"]
    for (ecdf_ax, hop_ax), size_bytes in zip(axes, sizes):
        ours = summary.latency_histogram[summary.latency_histogram["size_bytes"] == size_bytes]
        paper = theirs.loc[theirs["size_bytes"] == size_bytes, "latency_ms"]
        ecdf_ax.ecdf(paper, color=PAPER, linewidth=2, label=f"paper ({len(paper)} receipts)")
        for index, (_, one_seed) in enumerate(ours.groupby("seed")):
            ecdf_ax.step(*binned_ecdf(one_seed), where="post", color=OURS, linewidth=0.8, alpha=0.6,
                         label="ours, each seed" if index == 0 else None)
        ecdf_ax.step(*binned_ecdf(ours), where="post", color=OURS, linewidth=2,
                     label=f"ours, seeds {', '.join(str(s) for s in sorted(ours['seed'].unique()))} ({ours['receipts'].sum()} receipts)")
        ecdf_ax.set(xlabel="latency (ms)", ylabel="share of receipts",
                    title=f"{human_size(int(size_bytes))}: KS {ks.get(size_bytes, np.nan):.3f}")
        ecdf_ax.legend(fontsize=8, loc="lower right")
        hops = summary.relay_hop_time_histogram[summary.relay_hop_time_histogram["size_bytes"] == size_bytes]
        share = hops["relayed_hops"] / hops["relayed_hops"].sum()
        before, after = share.cumsum() - share, share.cumsum()
        middle = hops["hop_ms"][(after >= 0.005) & (before < 0.995)]  # the tail's few hops would hide the rest
        low, high = middle.min() - 1, middle.max() + 1
        width = max(0.5, (high - low) / 150)  # bars a reader can see however wide the spread
        drawn = share.groupby((hops["hop_ms"] / width).round() * width).sum()
        hop_ax.bar(drawn.index, drawn.to_numpy(), width=width, color=OURS)
        hop_ax.set_xlim(low, high)
        hop_ax.set(xlabel="a relayed hop's time: parent's receipt to child's (ms)", ylabel="share of relayed hops",
                   title=f"{human_size(int(size_bytes))}: our relayed hops")
    fig.suptitle(f"{summary.study} ({summary.config}; nwaku {summary.nwaku['nwaku_tag']}) beside the paper's raw Shadow latencies")
    fig.tight_layout()
    return _saved(fig, out_stem)


def class_latency_figure(summary: StudySummary, baseline: StudySummary | None, out_stem: Path) -> list[Path]:
    """<out_stem>.png and .svg: per size, the latency ECDF of each receiver's class and of each publisher's
    class, the runs pooled, over the same network on one link (``baseline``) when it is summarised."""
    histogram = summary.latency_by_class_histogram
    sizes = sorted(histogram["size_bytes"].unique())
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(len(sizes), 2, figsize=(13, 3.4 * len(sizes)), squeeze=False)
    for row, size_bytes in zip(axes, sizes):
        for ax, side in zip(row, ("receiver", "publisher")):
            at = histogram[(histogram["size_bytes"] == size_bytes) & (histogram["side"] == side)]
            for name, one_class in at.groupby("bandwidth_class", sort=False):
                ax.step(*binned_ecdf(one_class), where="post", linewidth=1.8, label=f"{name} ({one_class['receipts'].sum()} receipts)")
            if baseline is not None:
                alone = baseline.latency_histogram[baseline.latency_histogram["size_bytes"] == size_bytes]
                ax.step(*binned_ecdf(alone), where="post", color=PAPER, linestyle="--", linewidth=1.2,
                        label=f"every node on one link ({baseline.study})")
            ax.set(xlabel="latency (ms)", ylabel="share of receipts", title=f"{human_size(int(size_bytes))}: by the {side}'s class")
            ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(f"{summary.study} ({summary.config}; nwaku {summary.nwaku['nwaku_tag']}): latency by bandwidth class")
    fig.tight_layout()
    return _saved(fig, out_stem)


def _saved(fig, out_stem: Path) -> list[Path]:
    paths = [out_stem.parent / f"{out_stem.name}{suffix}" for suffix in FORMATS]  # a study name may hold dots
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=110, metadata={"Date": None} if path.suffix == ".svg" else {"Software": None})
    plt.close(fig)
    return paths


def write(summarised: dict[str, StudySummary], out: Path) -> list[Path]:
    """The figures of every summarised study of the paper's network and of every study with bandwidth
    classes, under out (docs/figures/)."""
    plt.rcParams["svg.hashsalt"] = "waku-shadow"  # fixed ids: the same summaries draw the same file
    return ([path for name, summary in summarised.items() if summary.paper_network
             for path in latency_figure(summary, out / f"{name}-latency")]
            + [path for name, summary in summarised.items() if summary.classed
               for path in class_latency_figure(summary, class_tables.one_link(summarised, name), out / f"{name}-latency-by-class")])
