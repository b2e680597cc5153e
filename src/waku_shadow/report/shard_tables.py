"""The docs' blocks of the studies on several shards (docs/shards.md), written from their committed
summaries alone (report/summaries.py): per point, each shard's size, latency, and the bytes a node
carries."""

from __future__ import annotations

import pandas as pd

from waku_shadow.analyse import stats
from waku_shadow.report import tables as written
from waku_shadow.report.summaries import StudySummary
from waku_shadow.report.summary_tables import heading, joined, node_weighted_bytes

SHARD_STUDIES = ("shards", "shards-every-node", "shards-per-node")  # docs/shards.md, in its order


def points(summary: StudySummary) -> pd.DataFrame:
    """Per point of a study on shards: nodes per shard (mean over the shards with measured messages, and
    seeds), latency p50 / p95 /
    max of every receipt, and a node's bytes in and out from the first publish on (mean over nodes)."""
    keys = summary.keys
    with_keys = summary.run_metrics[["run", *keys]]
    per_shard = summary.latency_by_shard.merge(with_keys, on=["run", *[k for k in keys if k != "size_bytes"]], how="left")
    means = per_shard.groupby(keys)[["nodes", "messages"]].mean().rename(
        columns={"nodes": "nodes_per_shard", "messages": "messages_per_shard"}).reset_index()
    table = summary.latency_summary[[*keys, "p50", "p95", "max"]].merge(means, on=keys)
    if not summary.bytes_by_shards_served.empty:
        served = summary.bytes_by_shards_served.merge(with_keys, on=["run", *[k for k in keys if k != "size_bytes"]], how="left")
        table = table.merge(node_weighted_bytes(served, keys), on=keys)
    return table


def by_point(summarised: dict[str, StudySummary], studies: tuple[str, ...] = SHARD_STUDIES) -> str | None:
    """Per study on shards and per point: the table of ``points``."""
    parts = []
    for name in studies:
        summary = summarised.get(name)
        if summary is None or not summary.sharded:
            continue
        swept = [k for k in summary.keys if k != "size_bytes"]
        rows = [[*(f"{row[k]:.0f}" for k in swept), f"{row['nodes_per_shard']:.0f}", f"{row['p50']:.0f}", f"{row['p95']:.0f}",
                 f"{row['max']:.0f}", *(f"{row[c]:,.0f}" for c in ("bytes_in", "bytes_out") if c in row)]
                for _, row in points(summary).iterrows()]
        has_bytes = not summary.bytes_by_shards_served.empty
        columns = [*swept, "nodes per shard", "p50 (ms)", "p95 (ms)", "max (ms)", *(["bytes in / node", "bytes out / node"]
                                                                                   if has_bytes else [])]
        parts.append(heading(summary) + written.table(rows, columns, "r" * len(columns)).markdown())
    return joined(parts)


READINGS = {"shards": "each node on one shard of the cluster",
            "shards-every-node": "every node on every shard, as nwaku v0.38.1 subscribes",
            "shards-per-node": "a node on more of a cluster's 8 shards"}


def answer(summarised: dict[str, StudySummary], studies: tuple[str, ...] = SHARD_STUDIES) -> str | None:
    """The page's answer: per study on shards, its first point against its last, latency and a node's bytes."""
    lines = []
    for name in studies:
        summary = summarised.get(name)
        swept = [k for k in summary.keys if k != "size_bytes"] if summary is not None else []
        if len(swept) != 1 or not summary.sharded or summary.bytes_by_shards_served.empty:
            continue
        (swept,) = swept
        table = points(summary).sort_values(swept)
        first, last = table.iloc[0], table.iloc[-1]
        label = "shards" if swept == "shards" else "shards per node"
        lines.append(
            f"- **{READINGS.get(name, name)}** (`{summary.config}`, nwaku {summary.nwaku['nwaku_tag']}, patch set "
            f"{summary.nwaku['patch_set']}): from {first[swept]:.0f} to {last[swept]:.0f} {label}, a shard of "
            f"{first['nodes_per_shard']:.0f} → {last['nodes_per_shard']:.0f} nodes, latency p50 {first['p50']:.0f} → "
            f"{last['p50']:.0f} ms and p95 {first['p95']:.0f} → {last['p95']:.0f} ms; a node received "
            f"{first['bytes_in']:,.0f} → {last['bytes_in']:,.0f} bytes (× {last['bytes_in'] / first['bytes_in']:.2f}) "
            f"and sent {first['bytes_out']:,.0f} → {last['bytes_out']:,.0f} (× {last['bytes_out'] / first['bytes_out']:.2f}).")
        on_one_shard = (summary.bytes_by_shards_served["shards_served"] == 1).all()
        if on_one_shard and table["messages_per_shard"].nunique() > 2:
            fit = stats.fit_line(table["messages_per_shard"], table["bytes_in"])
            lines.append(f"  Over its points, a node received {fit['intercept']:,.0f} bytes plus {fit['slope']:,.0f} per "
                         f"measured message of its shard (least squares, R² {fit['r2']:.3f}): the first part does not "
                         "shrink with the shard's traffic.")
    return "\n".join(lines) + "\n" if lines else None
