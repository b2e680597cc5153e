"""The docs' blocks of the studies whose nodes find their peers by discv5 (docs/discovery.md), written
from their committed summaries alone (report/summaries.py): how long the nodes took to a peer, nwaku's
outbound target and a mesh on every shard, the graph they built, discv5's own traffic, and relay
latency beside the same nodes on a static graph."""

from __future__ import annotations

from waku_shadow.report import tables as written
from waku_shadow.report.summaries import StudySummary
from waku_shadow.report.summary_tables import heading, joined

DISCOVERY_STUDIES = {"discovery": "discovery-static"}  # a discv5 study: its nodes on a static graph
MILESTONES = {"first_peer": "first peer", "outbound_target": "outbound target", "mesh": "mesh on every shard"}


def _seconds(row, milestone: str) -> str:
    return f"{row[f'{milestone}_p50_s']:.1f} / {row[f'{milestone}_p95_s']:.1f} / {row[f'{milestone}_max_s']:.1f}"


def milestone_cells(row) -> list[str]:
    """A discovery.csv row's p50 / p95 / max seconds of each milestone, in MILESTONES' order."""
    return [_seconds(row, milestone) for milestone in MILESTONES]


def _span(values) -> str:
    """A run column's value, or its range over the runs."""
    low, high = values.min(), values.max()
    return f"{low:.0f}" if low == high else f"{low:.0f}–{high:.0f}"


def _studies(summarised: dict[str, StudySummary]):
    for name, static in DISCOVERY_STUDIES.items():
        summary = summarised.get(name)
        if summary is not None and summary.discovered:
            yield summary, summarised.get(static)


def by_point(summarised: dict[str, StudySummary]) -> str | None:
    """Per discv5 study: per point the milestones' p50 / p95 / max, the graph of every run at its first
    publish, discv5's bytes, and latency beside the static graph's."""
    parts = []
    for summary, static in _studies(summarised):
        times = summary.discovery
        rows = [[label, f"{r['nodes']:.0f}", *milestone_cells(r), f"{r['never_meshed']:.0f}",
                 f"{r['degree_mean']:.1f}", f"{r['discv5_bytes_in_per_min']:,.0f} / {r['discv5_bytes_out_per_min']:,.0f}"]
                for label, (_, r) in zip(written.point_labels(times, summary.keys), times.iterrows())]
        part = heading(summary) + written.table(
            rows, ["point", "nodes over the runs", *(f"{m} (s)" for m in MILESTONES.values()), "never meshed",
                   "mean degree at publish", "discv5 bytes in / out per node per minute"], "lrrrrrrr").markdown()
        graphs = [[r["run"], f"{r['links']:.0f}", f"{r['parts']:.0f}", f"{r['largest_part']:.0f}", f"{r['diameter']:.0f}",
                   f"{r['degree_min']:.0f} / {r['degree_mean']:.1f} / {r['degree_max']:.0f}", f"{r['evictions']:.0f}"]
                  for _, r in summary.discovery_graph.iterrows()]
        part = part.rstrip() + "\n\nThe graph of connections at each run's first measured publish:\n\n" + written.table(
            graphs, ["run", "links", "parts", "largest part", "diameter (hops)", "degree min / mean / max",
                     "evictions"], "lrrrrrr").markdown()
        part = part.rstrip() + "\n\nRelay latency from the publisher's intent, the seeds pooled:\n\n" + latency_table(summary, static)
        parts.append(part)
    return joined(parts)


def latency_table(summary: StudySummary, static: StudySummary | None) -> str:
    rows = []
    for study in (summary, static):
        if study is None:
            continue
        hops = study.run_metrics.groupby(study.keys, as_index=False)["hops_mean"].mean()
        latency = study.latency_summary.merge(hops, on=study.keys)
        graph = "discv5" if study is summary else "static"
        rows += [[label, f"{study.study} ({graph})", f"{r['count']:,.0f}", f"{r['p50']:.0f}", f"{r['p95']:.0f}",
                  f"{r['max']:.0f}", f"{r['hops_mean']:.2f}"]
                 for label, (_, r) in zip(written.point_labels(latency, study.keys), latency.iterrows())]
    return written.table(rows, ["point", "study", "receipts", "p50 (ms)", "p95 (ms)", "max (ms)", "hops (mean)"],
                         "llrrrrr").markdown()


def answer(summarised: dict[str, StudySummary]) -> str | None:
    """The page's answer: per discv5 study and point, the time to a mesh on every shard, the graph, discv5's
    bytes and the latency beside the static graph's."""
    lines = []
    for summary, static in _studies(summarised):
        lines.append(f"- **`{summary.config}`** (nwaku {summary.nwaku['nwaku_tag']}, patch set {summary.nwaku['patch_set']}, "
                     f"seed{'s' if len(summary.seeds) > 1 else ''} {', '.join(map(str, summary.seeds))}; "
                     "seconds p50 / p95 / max over the nodes):")
        graph = summary.discovery_graph
        for label, (_, r) in zip(written.point_labels(summary.discovery, summary.keys), summary.discovery.iterrows()):
            lines.append(
                f"  - {label}: first peer {_seconds(r, 'first_peer')} s, nwaku's outbound target "
                f"{_seconds(r, 'outbound_target')} s, a mesh on every shard {_seconds(r, 'mesh')} s "
                f"({r['never_meshed']:.0f} of {r['nodes']:.0f} nodes never); at the first publish the graph has at most "
                f"{graph['parts'].max():.0f} part{'s' if graph['parts'].max() > 1 else ''}, diameter {_span(graph['diameter'])} "
                f"hops, mean degree {r['degree_mean']:.1f}, {_span(graph['evictions'])} evictions; discv5 sends "
                f"{r['discv5_bytes_out_per_min']:,.0f} bytes per node per minute.")
        for study in (summary, static):
            if study is None:
                continue
            cells = [f"{label} p50 {r['p50']:.0f} ms (p95 {r['p95']:.0f})"
                     for label, (_, r) in zip(written.point_labels(study.latency_summary, study.keys),
                                              study.latency_summary.iterrows())]
            graph_kind = "found by discv5" if study is summary else "on a static graph"
            lines.append(f"  - relay latency {graph_kind} (`{study.config}`): " + "; ".join(cells) + ".")
    return joined(lines)
