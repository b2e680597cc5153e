"""The docs' blocks of the studies with bandwidth classes (docs/bandwidth-classes.md), written from their
committed summaries alone (report/summaries.py): latency by the receiver's and the publisher's class
beside the same network on one link, and the bytes a node of each class carries."""

from __future__ import annotations

import pandas as pd

from waku_shadow.report import tables as written
from waku_shadow.report.summaries import StudySummary
from waku_shadow.report.summary_tables import heading, joined, node_weighted_bytes

CLASS_STUDIES = {"bandwidth-classes": "bandwidth-classes-one-link"}  # a study with classes: its network on one link


def one_link(summarised: dict[str, StudySummary], name: str) -> StudySummary | None:
    """The summary of ``name``'s network at one bandwidth, when it is summarised."""
    return summarised.get(CLASS_STUDIES.get(name, ""))


def latency_table(summary: StudySummary, baseline: StudySummary | None) -> str:
    """Per point: each class's receipts as receiver and as publisher, and the one-link network's."""
    by_class = summary.latency_by_class
    rows = [[label, r["side"], r["bandwidth_class"], f"{r['node_runs']:.0f}", f"{r['receipts']:,.0f}",
             f"{r['p50_ms']:.0f}", f"{r['p95_ms']:.0f}", f"{r['max_ms']:.0f}", f"{r['hops_mean']:.2f}"]
            for label, (_, r) in zip(written.point_labels(by_class, summary.keys), by_class.iterrows())]
    if baseline is not None:
        hops = baseline.run_metrics.groupby(baseline.keys, as_index=False)["hops_mean"].mean()
        alone = baseline.latency_summary.merge(hops, on=baseline.keys)
        rows += [[label, "all", f"one link ({baseline.study})", "", f"{r['count']:,.0f}",
                  f"{r['p50']:.0f}", f"{r['p95']:.0f}", f"{r['max']:.0f}", f"{r['hops_mean']:.2f}"]
                 for label, (_, r) in zip(written.point_labels(alone, baseline.keys), alone.iterrows())]
    return written.table(rows, ["point", "by", "class", "nodes over the runs", "receipts", "p50 (ms)", "p95 (ms)", "max (ms)",
                                "hops (mean)"], "lllrrrrrr").markdown()


def bytes_per_class(summary: StudySummary) -> pd.DataFrame:
    """Per point and class, a node's mean bytes in and out from the first publish on, over every run."""
    carried = summary.bytes_by_class.merge(summary.run_metrics[["run", *summary.keys]], on="run")
    return node_weighted_bytes(carried, [*summary.keys, "bandwidth_class"])


def by_class(summarised: dict[str, StudySummary]) -> str | None:
    """Per study with classes: latency_table, and with a packet capture a node's bytes by class."""
    parts = []
    for name in CLASS_STUDIES:
        summary = summarised.get(name)
        if summary is None or not summary.classed:
            continue
        part = heading(summary) + latency_table(summary, one_link(summarised, name))
        if not summary.bytes_by_class.empty:
            carried = bytes_per_class(summary)
            rows = [[label, r["bandwidth_class"], f"{r['bytes_in']:,.0f}", f"{r['bytes_out']:,.0f}"]
                    for label, (_, r) in zip(written.point_labels(carried, summary.keys), carried.iterrows())]
            part += "\nA node's bytes from the first publish on, idle traffic subtracted, mean over the runs:\n\n" + written.table(
                rows, ["point", "class", "bytes in / node", "bytes out / node"], "llrr").markdown()
        parts.append(part)
    return joined(parts)


def answer(summarised: dict[str, StudySummary]) -> str | None:
    """The page's answer: per study with classes and per point, the fastest and the slowest class as
    receivers and as publishers, beside the same network on one link."""
    lines = []
    for name in CLASS_STUDIES:
        summary = summarised.get(name)
        if summary is None or not summary.classed:
            continue
        baseline = one_link(summarised, name)
        lines.append(f"- **`{summary.config}`** (nwaku {summary.nwaku['nwaku_tag']}, patch set {summary.nwaku['patch_set']}, "
                     f"seeds {', '.join(map(str, summary.seeds))}), p50 latency (p95):")
        for _, at_point in summary.latency_by_class.groupby(summary.keys, sort=True):
            cells = []
            for side in ("receiver", "publisher"):
                ranked = at_point[at_point["side"] == side].sort_values("p50_ms")
                cells.append(f"by the {side}'s class " + ", ".join(_class_cell(row) for _, row in ranked.iterrows()))
            line = f"  - {written.point_labels(at_point, summary.keys).iloc[0]}: " + "; ".join(cells)
            if baseline is not None:
                same = baseline.latency_summary.merge(at_point[summary.keys].drop_duplicates(), on=summary.keys)
                if not same.empty:
                    line += f"; every node on one link: {same['p50'].iloc[0]:.0f} ms ({same['p95'].iloc[0]:.0f})"
            lines.append(line + ".")
    return "\n".join(lines) + "\n" if lines else None


def by_location(summarised: dict[str, StudySummary]) -> str | None:
    """Per study with classes and its one-link network: per location, p50 (p95) latency of the receipts
    its nodes took and of the receipts of its publishers' messages, per point."""
    parts = []
    for name in [n for pair in CLASS_STUDIES.items() for n in pair]:
        summary = summarised.get(name)
        if summary is None or not summary.located:
            continue
        table = summary.latency_by_location
        points = table[summary.keys].drop_duplicates().sort_values(summary.keys)
        publishers = table[table["side"] == "publisher"].groupby("location")["node_runs"].max()
        rows = []
        for location, at_location in table.groupby("location", sort=True):
            cells = at_location.set_index(["side", *summary.keys])
            rows.append([location, f"{publishers.get(location, 0):.0f}", *(
                _latency_cell(cells, side, tuple(p)) for side in ("receiver", "publisher") for p in points.itertuples(index=False))])
        columns = ["location", "publishers over the runs", *(f"{side}'s, {label}" for side in ("receiver", "publisher")
                                                             for label in written.point_labels(points, summary.keys))]
        parts.append(heading(summary) + "p50 (p95) latency in ms by the receiver's location and by the publisher's:\n\n"
                     + written.table(rows, columns, "lr" + "r" * (len(columns) - 2)).markdown())
    return joined(parts)


def _latency_cell(cells: pd.DataFrame, side: str, at: tuple) -> str:
    if (side, *at) not in cells.index:
        return ""
    row = cells.loc[(side, *at)]
    return f"{row['p50_ms']:.0f} ({row['p95_ms']:.0f})"


def _class_cell(row: pd.Series) -> str:
    return f"{row['bandwidth_class']} {row['p50_ms']:.0f} ms ({row['p95_ms']:.0f})"
