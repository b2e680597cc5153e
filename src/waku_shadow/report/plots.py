"""Figures. Matplotlib runs headless (Agg)."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from waku_shadow.analyse import stats
from waku_shadow.analyse.stats import SUMMARY_COLUMNS
from waku_shadow.configuration.units import human_size
from waku_shadow.report.tables import point_labels


def _save(fig, out: Path | list[Path], dpi: int) -> None:
    """Save to ``out``, or to each of several paths (one per format)."""
    fig.tight_layout()
    for path in [out] if isinstance(out, Path) else out:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=dpi)
    plt.close(fig)


def latency_distributions(
    receipts: pd.DataFrame,
    summary: pd.DataFrame,
    title: str,
    out: Path | list[Path],
    reference: dict[int, tuple[float, float]] | None = None,
) -> None:
    """One panel per message size, like the paper's Figure 3: share of receipts per latency bin.

    ``reference`` maps a size to the paper's multi-host best and worst latency, drawn as
    red dashed lines as in the paper.
    """
    measured = stats.measured(receipts)
    keys = [c for c in summary.columns if c not in SUMMARY_COLUMNS] + ["size_bytes"]
    panels = len(summary)
    columns = 2 if panels > 1 else 1
    rows = math.ceil(panels / columns)
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(rows, columns, figsize=(6 * columns, 3.6 * rows), squeeze=False)
    for ax, row in zip(axes.flat, summary.itertuples()):
        data = measured[(measured[keys] == [getattr(row, k) for k in keys]).all(axis=1)]
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
        for value in (reference or {}).get(int(row.size_bytes), ()):
            ax.axvline(value, color="crimson", linestyle="--", linewidth=1.2)
        point = "".join(f"{k} = {getattr(row, k)}, " for k in keys[:-1])
        ax.set_title(f"{point}message size = {human_size(int(row.size_bytes))} ({int(row.count)} receipts)")
        ax.set_xlabel("Latency (ms)")
        ax.set_ylabel("Message share")
    for ax in list(axes.flat)[panels:]:
        ax.set_visible(False)
    fig.suptitle(title)
    _save(fig, out, dpi=150)


def figure2(observed: pd.DataFrame, out: Path | list[Path], nodes=(1_000, 10_000, 100_000), degrees=range(3, 13)) -> None:
    """The paper's Figure 2: best-topology h_max and bandwidth amplification against D.

    Both published forms of Equation 2 are drawn, and ``observed`` (columns nodes,
    degree, max_hop, label) marks the hop counts our simulations reached.
    """
    from waku_shadow.analyse import model

    sns.set_theme(style="whitegrid")
    fig, (hops_ax, amp_ax) = plt.subplots(1, 2, figsize=(12, 4.2))
    palette = sns.color_palette("deep", len(nodes))
    for colour, n in zip(palette, nodes):
        ds = list(degrees)
        hops_ax.plot(ds, [model.hmax_paper(n, d) for d in ds], "-o", color=colour, label=f"Eq. 2 (paper), N={n:,}")
        hops_ax.plot(ds, [model.hmax_writeup(n, d) for d in ds], "--", color=colour, label=f"⌈log N / log D⌉, N={n:,}")
    for row in observed.itertuples():
        hops_ax.scatter([row.degree], [row.max_hop], marker="*", s=180, color="crimson", zorder=5)
        hops_ax.annotate(row.label, (row.degree, row.max_hop), textcoords="offset points", xytext=(6, 6), fontsize=8)
    hops_ax.set_xlabel("D")
    hops_ax.set_ylabel("h_max (hops)")
    hops_ax.set_title("Hops to reach every node (★ observed maximum)")
    hops_ax.legend(fontsize=7, ncol=2)
    ds = list(degrees)
    amp_ax.plot(ds, [model.bandwidth_amplification(d) for d in ds], "-o", color="black", label="paper: amplification ≈ D")
    amp_ax.set_xlabel("D")
    amp_ax.set_ylabel("bandwidth amplification")
    amp_ax.set_title("Bandwidth amplification (independent of N)")
    amp_ax.legend(fontsize=8)
    _save(fig, out, dpi=150)


def _ordered_labels(frame: pd.DataFrame, keys: list[str]) -> list[str]:
    points = frame[keys].drop_duplicates().sort_values(keys)
    return list(point_labels(points, keys))


def hop_histograms(histogram: pd.DataFrame, out: Path, keys: tuple[str, ...] = ("size_bytes",)) -> None:
    """Receipts per hop count, one bar group per point."""
    keys = list(keys)
    sns.set_theme(style="whitegrid")
    frame = histogram.assign(point=point_labels(histogram, keys))
    frame["share"] = frame["receipts"] / frame.groupby("point")["receipts"].transform("sum")
    fig, ax = plt.subplots(figsize=(7, 4))
    sns.barplot(frame, x="hop", y="share", hue="point", hue_order=_ordered_labels(histogram, keys), ax=ax)
    ax.set_xlabel("hops from the publisher")
    ax.set_ylabel("share of receipts")
    ax.set_title("Hop counts of the delivery trees")
    _save(fig, out, dpi=150)


def latency_by_path(receipts: pd.DataFrame, out: Path, keys: tuple[str, ...] = ("size_bytes",)) -> None:
    """The latency ECDF of each path (publisher's role → receiver's role), one panel per point."""
    latency_ecdfs(receipts.assign(path=receipts["path"].astype(str)), "path",
                  "Latency by path: relay and light publishers, relay and light receivers", out, keys)


def latency_by_class(receipts: pd.DataFrame, out: Path, keys: tuple[str, ...] = ("size_bytes",)) -> None:
    """The latency ECDF of the receipts of each receiver's bandwidth class, one panel per point."""
    latency_ecdfs(receipts.rename(columns={"receiver_bandwidth_class": "receiver's class"}), "receiver's class",
                  "Latency by the receiver's bandwidth class", out, keys)


def latency_ecdfs(receipts: pd.DataFrame, hue: str, title: str, out: Path, keys: tuple[str, ...]) -> None:
    """The latency ECDF of each value of ``hue``, one panel per point."""
    keys = list(keys)
    sns.set_theme(style="whitegrid")
    frame = receipts.assign(point=point_labels(receipts, keys))
    grid = sns.displot(frame, x="latency_ms", hue=hue, col="point", col_order=_ordered_labels(receipts, keys),
                       kind="ecdf", height=3.5, aspect=1.2, facet_kws={"sharex": False})
    grid.set_axis_labels("latency from the publisher's intent (ms)", "share of receipts")
    grid.figure.suptitle(title, y=1.03)
    grid.figure.savefig(out, dpi=150, bbox_inches="tight")
    plt.close(grid.figure)


def time_to_mesh(nodes: pd.DataFrame, out: Path, keys: tuple[str, ...] = ("size_bytes",)) -> None:
    """The ECDF of the nodes' seconds until their first peer, their outbound target and a mesh on
    every shard they serve (analyse/discovery.run_nodes), one panel per point."""
    keys = list(keys)
    sns.set_theme(style="whitegrid")
    milestones = {"first_peer_s": "first peer", "outbound_target_s": "outbound target", "mesh_s": "mesh on every shard"}
    frame = nodes.assign(point=point_labels(nodes, keys)).melt(
        id_vars=["point"], value_vars=list(milestones), var_name="milestone", value_name="seconds")
    frame["milestone"] = frame["milestone"].map(milestones)
    grid = sns.displot(frame.dropna(), x="seconds", hue="milestone", col="point", col_order=_ordered_labels(nodes, keys),
                       kind="ecdf", height=3.5, aspect=1.2)
    grid.set_axis_labels("seconds from the start", "share of nodes")
    grid.figure.suptitle("discv5: when each node got there", y=1.03)
    grid.figure.savefig(out, dpi=150, bbox_inches="tight")
    plt.close(grid.figure)


def residuals(receipts: pd.DataFrame, models: dict[str, str], out: Path, keys: tuple[str, ...] = ("size_bytes",)) -> None:
    """Simulated minus predicted latency per point and hop count, for every model."""
    keys = list(keys)
    measured = stats.measured(receipts)
    point = point_labels(measured, keys)
    long = pd.concat(
        [
            pd.DataFrame(
                {
                    "point": point,
                    "hop": measured["hop"],
                    "residual_ms": measured[column.replace("_ms", "_residual_ms")],
                    "model": name,
                }
            )
            for column, name in models.items()
        ],
        ignore_index=True,
    )
    order = _ordered_labels(measured, keys)
    sns.set_theme(style="whitegrid")
    grid = sns.catplot(long, x="hop", y="residual_ms", hue="model", col="point", col_order=order, kind="box",
                       col_wrap=min(2, len(order)), height=3.2, aspect=1.4, sharey=False, showfliers=False)
    grid.set_axis_labels("hops from the publisher", "simulated − predicted (ms)")
    grid.figure.suptitle("Equation 1 residuals", y=1.02)
    out.parent.mkdir(parents=True, exist_ok=True)
    grid.figure.savefig(out, dpi=150, bbox_inches="tight")
    plt.close(grid.figure)


def compared_distributions(studies: dict[str, pd.DataFrame], out: Path) -> None:
    """Latency ECDFs of several studies, one panel per message size they all have."""
    measured = {name: stats.measured(r) for name, r in studies.items()}
    sizes = sorted(set.intersection(*(set(r["size_bytes"]) for r in measured.values())))
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 3.6), squeeze=False)
    for ax, size in zip(axes.flat, sizes):
        for name, receipts in measured.items():
            sns.ecdfplot(receipts[receipts["size_bytes"] == size], x="latency_ms", ax=ax, label=name)
        ax.set_title(f"Message size = {human_size(int(size))}")
        ax.set_xlabel("Latency (ms)")
        ax.set_ylabel("Share of receipts")
        ax.legend()
    _save(fig, out, dpi=120)


def scaling(runs: pd.DataFrame, fitted: pd.DataFrame, law: dict, x: str, xlabel: str, title: str, out: Path) -> None:
    """Wall time and peak memory against ``x`` (nodes or message size), with the fitted laws evaluated
    at ``fitted``'s rows; runs the guard stopped are crosses, labelled with the simulated time they reached."""
    sns.set_theme(style="whitegrid")
    fig, (wall_ax, memory_ax) = plt.subplots(1, 2, figsize=(11, 4))
    scale = 1000 if x == "size_bytes" else 1
    done = runs[runs["status"] == "completed"]
    stopped = runs[runs["status"] != "completed"]
    wall_ax.plot(done[x] / scale, done["wall_s"], "o", color="#4c72b0")
    wall_ax.plot(fitted[x] / scale, fitted["wall_s"], "--", color="gray", label=law["wall_s"])
    memory_ax.plot(done[x] / scale, done["peak_memory_gib"], "o", color="#4c72b0", label="completed")
    memory_ax.plot(stopped[x] / scale, stopped["peak_memory_gib"], "x", color="crimson", markersize=9,
                   label="stopped by the memory guard")
    for _, row in stopped.iterrows():
        memory_ax.annotate(f"at {row['simulated_s']:.0f} s simulated", (row[x] / scale, row["peak_memory_gib"]),
                           fontsize=7, xytext=(-10, -12), textcoords="offset points", ha="right")
    memory_ax.plot(fitted[x] / scale, fitted["peak_memory_gib"], "--", color="gray", label=law["peak_memory_gib"])
    wall_ax.set(xlabel=xlabel, ylabel="wall time (s)", title="Wall time")
    memory_ax.set(xlabel=xlabel, ylabel="peak memory (GiB)", title="Peak memory")
    wall_ax.legend(fontsize=8)
    memory_ax.legend(fontsize=8)
    fig.suptitle(title)
    _save(fig, out, dpi=120)


def net_bandwidth(runs: pd.DataFrame, x: str, xlabel: str, label: str, fit: dict, title: str, out: Path) -> None:
    """Net bytes on the network against what was published (payload or messages), one point per
    run, labelled by ``label``'s column, with the fitted line."""
    sns.set_theme(style="whitegrid")
    fig, ax = plt.subplots(figsize=(6, 4))
    scale = 1e6 if x == "payload_bytes" else 1
    ax.plot(runs[x] / scale, runs["net_bytes"] / 1e6, "o", color="#4c72b0", alpha=0.8)
    for value, group in runs.groupby(label):
        if group[x].max() < 0.03 * runs[x].max():
            continue  # bunched up at the origin, where labels would overlap
        text = human_size(int(value)) if label == "size_bytes" else f"{label} = {value}"
        ax.annotate(text, (group[x].max() / scale, group["net_bytes"].mean() / 1e6), fontsize=7,
                    xytext=(4, -8), textcoords="offset points")
    grid = np.linspace(0, runs[x].max(), 50)
    unit = "payload byte" if x == "payload_bytes" else "message"
    ax.plot(grid / scale, (fit["slope"] * grid + fit["intercept"]) / 1e6, "--", color="gray",
            label=f"{fit['slope']:,.2f} B per {unit} + {fit['intercept'] / 1e6:.3f} MB (R² {fit['r2']:.4f})")
    ax.set(xlabel=xlabel, ylabel="net bytes in + out, all nodes (MB)", title=title)
    ax.legend(fontsize=8)
    _save(fig, out, dpi=120)


def _with_ci(ax, points: pd.DataFrame, metric: str, x: str, **style) -> None:
    """A metric's mean against x per message size, with its 95 % interval as error bars."""
    for size, group in points[points["metric"] == metric].groupby("size_bytes"):
        group = group.sort_values(x)
        error = (group["mean"] - group["ci95_low"]).fillna(0)
        ax.errorbar(group[x], group["mean"], yerr=error, marker="o", capsize=3,
                    label=f"{human_size(int(size))} {style.get('suffix', '')}".strip(), linestyle=style.get("linestyle", "-"))


def sweep_tradeoff(points: pd.DataFrame, name: str, out: Path, model_lines: pd.DataFrame | None = None) -> None:
    """What a sweep trades: amplification (beside the paper's Figure 2 line when D is swept),
    latency and hops against the swept value, and latency against bandwidth per value. With
    ``model_lines`` (a sweep of N: scaling.model_lines) N is on a log axis, the largest hop count
    beside the mean, and Equation 1's latency and Equation 2's hops are drawn dotted."""
    sns.set_theme(style="whitegrid")
    has_traffic = "amplification" in set(points["metric"])
    fig, axes = plt.subplots(2, 2, figsize=(11, 8)) if has_traffic else plt.subplots(1, 2, figsize=(11, 4))
    axes = list(np.ravel(axes))
    latency_ax, hops_ax = axes[0], axes[1]
    _with_ci(latency_ax, points, "latency_mean_ms", name, suffix="mean")
    _with_ci(latency_ax, points, "latency_p95_ms", name, suffix="p95", linestyle="--")
    latency_ax.set(xlabel=name, ylabel="latency (ms)", title="Latency")
    _with_ci(hops_ax, points, "hops_mean", name)
    hops_ax.set(xlabel=name, ylabel="mean hops from the publisher", title="Hops")
    if model_lines is not None:
        _with_ci(hops_ax, points, "hops_max", name, suffix="max", linestyle="--")
        hops_ax.set(ylabel="hops from the publisher")
        for size, line in model_lines.groupby("size_bytes"):
            line = line.sort_values(name)
            label = human_size(int(size))
            latency_ax.plot(line[name], line["eq1_latency_ms"], ":", color="crimson", label=f"{label} Eq. 1 on Eq. 2's path")
            hops_ax.step(line[name], line["eq2_hops"], ":", where="mid", color="crimson", label=f"{label} Eq. 2")
        for ax in axes[:3]:  # the fourth, latency against bytes, is not against N
            ax.set_xscale("log")
    if has_traffic:
        amp_ax, trade_ax = axes[2], axes[3]
        _with_ci(amp_ax, points, "amplification", name)
        if name == "d":
            values = np.array(sorted(points[name].unique()))
            amp_ax.plot(values, values, ":", color="crimson", label="paper: amplification = D")
        amp_ax.set(xlabel=name, ylabel="wire bytes / (payload x receivers)", title="Bandwidth amplification")
        means = points.pivot_table(index=[name, "size_bytes"], columns="metric", values="mean").reset_index()
        for size, group in means.groupby("size_bytes"):
            group = group.sort_values(name)
            trade_ax.plot(group["net_bytes_per_message"] / 1e6, group["latency_mean_ms"], "o-", label=human_size(int(size)))
            for row in group.itertuples():
                trade_ax.annotate(f"{name}={getattr(row, name)}", (row.net_bytes_per_message / 1e6, row.latency_mean_ms),
                                  fontsize=7, xytext=(4, 4), textcoords="offset points")
        trade_ax.set(xlabel="net bytes per message, all nodes (MB)", ylabel="mean latency (ms)",
                     title="Latency against bandwidth")
    for ax in axes:
        ax.legend(fontsize=8)
    fig.suptitle(f"Sweep of {name}: means over repetitions, 95 % confidence intervals")
    _save(fig, out, dpi=120)


def load_curves(points: pd.DataFrame, knees: pd.DataFrame, out: Path) -> None:
    """The load study: p50 and p95 latency against messages per second per size, the knee dotted;
    delivery and (with a capture) uplink demand beside."""
    sns.set_theme(style="whitegrid")
    rate = "messages_per_second"
    fig, (latency_ax, share_ax) = plt.subplots(1, 2, figsize=(11, 4.2))
    colors = dict(zip(sorted(points["size_bytes"].unique()), sns.color_palette(n_colors=points["size_bytes"].nunique())))
    for size, group in points.groupby("size_bytes"):
        label, color = human_size(int(size)), colors[size]
        latency_ax.plot(group[rate], group["latency_p50_ms"], "o-", color=color, label=f"{label} p50")
        latency_ax.plot(group[rate], group["latency_p95_ms"], "s--", color=color, label=f"{label} p95")
        share_ax.plot(group[rate], group["delivery"], "o-", color=color, label=f"{label} delivery")
        if "uplink_demand" in group:
            share_ax.plot(group[rate], group["uplink_demand"], "^:", color=color, label=f"{label} uplink demand")
    for row in knees.dropna(subset=["knee_rate"]).itertuples():
        for ax in (latency_ax, share_ax):
            ax.axvline(row.knee_rate, color=colors[row.size_bytes], linestyle=":", linewidth=1)
    share_ax.axhline(1, color="gray", linewidth=0.8)
    latency_ax.set(xscale="log", yscale="log", xlabel="messages per second, whole network", ylabel="latency (ms)",
                   title="Latency against load (knee dotted)")
    share_ax.set(xscale="log", xlabel="messages per second, whole network", ylabel="share",
                 title="Delivery, and uplink demand over capacity")
    for ax in (latency_ax, share_ax):
        ax.legend(fontsize=7)
    _save(fig, out, dpi=120)


def paper_distributions(receipts: pd.DataFrame, paper_receipts: pd.DataFrame, pooled: pd.DataFrame,
                        hop_shares: pd.DataFrame, hop_sources: list[str], out: Path,
                        keys: tuple[str, ...] = ("size_bytes",)) -> None:
    """One row per point in ``pooled`` (points whose size the paper simulated): our latency ECDF
    over the paper's (with several seeds each seed thin, all pooled thick), our latency quantiles
    against the paper's (QQ), and the share of receipts per hop count by ``hop_sources``."""
    keys = list(keys)
    measured = stats.measured(receipts)
    theirs = stats.measured(paper_receipts)
    several_seeds = measured["seed"].nunique() > 1
    quantiles = np.linspace(0.01, 0.99, 99)
    sns.set_theme(style="whitegrid")
    fig, axes = plt.subplots(len(pooled), 3, figsize=(16, 3.8 * len(pooled)), squeeze=False)
    for (ecdf_ax, qq_ax, hop_ax), row, label in zip(axes, pooled.to_dict("records"), point_labels(pooled, keys)):
        ours = measured[(measured[keys] == [row[k] for k in keys]).all(axis=1)]
        paper = theirs.loc[theirs["size_bytes"] == row["size_bytes"], "latency_ms"]
        paper_q = np.quantile(paper, quantiles)
        ecdf_ax.ecdf(paper, color="black", linewidth=2, label=f"paper ({len(paper)} receipts)")
        if several_seeds:
            for index, (seed, one) in enumerate(ours.groupby("seed")):
                style = dict(color="#4c72b0", linewidth=0.8, alpha=0.6)
                ecdf_ax.ecdf(one["latency_ms"], **style, label="ours, each seed" if index == 0 else None)
                qq_ax.plot(paper_q, np.quantile(one["latency_ms"], quantiles), **style)
        ecdf_ax.ecdf(ours["latency_ms"], color="#4c72b0", linewidth=2,
                     label=f"ours{', seeds pooled' if several_seeds else ''} ({len(ours)} receipts)")
        ecdf_ax.set(xlabel="Latency (ms)", ylabel="Share of receipts",
                    title=f"{label}: KS {row['ks']:.2f}, Wasserstein {row['wasserstein_ms']:.0f} ms")
        ecdf_ax.legend(fontsize=8)
        qq_ax.plot(paper_q, np.quantile(ours["latency_ms"], quantiles), "o", color="#4c72b0", markersize=3)
        low, high = min(paper_q[0], ours["latency_ms"].min()), max(paper_q[-1], ours["latency_ms"].max())
        qq_ax.plot([low, high], [low, high], "--", color="gray", linewidth=1)
        qq_ax.set(xlabel="paper's latency quantile (ms)", ylabel="our latency quantile (ms)",
                  title=f"{label}: quantiles 1 % … 99 %")
        shares = hop_shares[(hop_shares[keys] == [row[k] for k in keys]).all(axis=1)]
        sns.barplot(shares, x="hop", y="share", hue="source", hue_order=hop_sources, ax=hop_ax)
        unread = [source.split(",")[0] for source in hop_sources if source not in set(shares["source"])]
        note = f"\n(no latency steps to read hops from: {', '.join(unread)})" if unread else ""
        hop_ax.set(xlabel="hops from the publisher", ylabel="share of receipts", title=f"{label}: hop counts{note}")
        hop_ax.legend(fontsize=8)
    fig.suptitle("Ours beside the paper's raw Shadow latencies")
    _save(fig, out, dpi=120)
