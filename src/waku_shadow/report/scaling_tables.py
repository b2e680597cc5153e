"""The docs' blocks of a sweep of N (docs/scaling.md), written from its committed summary alone and
the paper's model for its config (analyse/scaling.py): per N, relay latency and hops beside Equation
1 and Equation 2, the copies relayed, and what the run cost."""

from __future__ import annotations

import pandas as pd

from waku_shadow import checkout
from waku_shadow.analyse import scaling
from waku_shadow.configuration import loader
from waku_shadow.configuration.units import human_size
from waku_shadow.report import tables as written
from waku_shadow.report.summaries import StudySummary
from waku_shadow.report.summary_tables import heading, joined, measures


def _sweeps(summarised: dict[str, StudySummary]):
    for summary in summarised.values():
        if "nodes" in summary.keys:
            yield summary


def points(summary: StudySummary) -> pd.DataFrame:
    """Per N and size: the latency of the seeds' receipts pooled, the runs' mean hops, largest hop
    count, relayed copies per receipt, wall time and own peak memory, and the model's two lines."""
    keys = ["nodes", "size_bytes"]
    runs = summary.run_metrics.groupby(keys).agg(
        runs=("run", "count"), hops_mean=("hops_mean", "mean"), hops_max=("hops_max", "max"),
        relay_copies=("relay_copies", "mean"), wall_s=("wall_s", "mean"), peak_memory_gib=("peak_memory_gib", "mean"),
        memory_measure=("memory_measure", measures),
        node_private_mib=("node_private_mib_at_peak", "mean"), shadow_rss_gib=("shadow_rss_gib_at_peak", "mean"),
        machine_fall_gib=("machine_fall_gib", "mean"), kernel_gib=("kernel_gib_at_peak", "mean"))
    model = scaling.model_lines(loader.load(checkout.path(summary.config)))
    return summary.latency_summary.merge(runs.reset_index(), on=keys).merge(model, on=keys).sort_values(["size_bytes", "nodes"])


def by_n(summarised: dict[str, StudySummary]) -> str | None:
    parts = []
    for summary in _sweeps(summarised):
        rows = [[f"{r.nodes:,.0f}", human_size(int(r.size_bytes)), f"{r.runs:.0f}", f"{r['count']:,.0f}",
                 f"{r.p50:.0f} / {r.p95:.0f} / {r['max']:.0f}", f"{r.eq1_latency_ms:.0f}",
                 f"{r.hops_mean:.2f} / {r.hops_max:.0f}", f"{r.eq2_hops:.0f}", f"{r.relay_copies:.2f}",
                 f"{r.wall_s:.0f}", f"{r.peak_memory_gib:.2f} ({r.memory_measure})", f"{r.node_private_mib:.2f}",
                 f"{r.shadow_rss_gib:.2f}"]
                for _, r in points(summary).iterrows()]
        parts.append(heading(summary) + written.table(
            rows, ["N", "size", "runs", "receipts", "latency p50 / p95 / max (ms)", "Eq. 1 on Eq. 2's path (ms)",
                   "hops mean / max", "Eq. 2 hops", "copies relayed per receipt", "wall time (s)", "peak memory (GiB)",
                   "a node's private memory (MiB)", "Shadow's resident memory (GiB)"], "lllrrrrrrrrrr").markdown())
    return joined(parts)


def answer(summarised: dict[str, StudySummary]) -> str | None:
    """Per sweep of N and size: how latency and hops moved from the smallest N to the largest, against the model."""
    lines = []
    for summary in _sweeps(summarised):
        for size, group in points(summary).groupby("size_bytes"):
            if len(group) < 2:
                continue
            small, large = group.iloc[0], group.iloc[-1]
            lines.append(
                f"- **{summary.study}**, {human_size(int(size))}: from N = {small.nodes:,.0f} to {large.nodes:,.0f} "
                f"({large.nodes / small.nodes:.0f} times as many nodes) the median latency went from {small.p50:.0f} to {large.p50:.0f} ms, the p95 "
                f"from {small.p95:.0f} to {large.p95:.0f} ms and the largest from {small['max']:.0f} to "
                f"{large['max']:.0f} ms; the mean hop count from {small.hops_mean:.2f} to {large.hops_mean:.2f} and the "
                f"deepest receipt from {small.hops_max:.0f} to {large.hops_max:.0f} hops. Equation 2's best topology "
                f"needs {small.eq2_hops:.0f} to {large.eq2_hops:.0f} hops, and Equation 1 along them gives "
                f"{small.eq1_latency_ms:.0f} to {large.eq1_latency_ms:.0f} ms. A node relayed {small.relay_copies:.2f} "
                f"copies per receipt at N = {small.nodes:,.0f} and {large.relay_copies:.2f} at {large.nodes:,.0f}, and held "
                f"{small.node_private_mib:.2f} and {large.node_private_mib:.2f} MiB of private memory at the run's peak. "
                f"At N = {large.nodes:,.0f} the run's own peak was {large.peak_memory_gib:.2f} GiB, the kernel's memory had "
                f"grown by {large.kernel_gib:.2f} GiB, and the machine's available memory fell by {large.machine_fall_gib:.2f} GiB.")
    return "\n".join(lines) if lines else None
