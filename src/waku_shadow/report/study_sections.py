"""The report's sections of a network with several shards, found by discv5, in bandwidth classes or over locations."""

from __future__ import annotations

import pandas as pd

from waku_shadow import layout
from waku_shadow.configuration.units import human_size
from waku_shadow.paper.study_results import StudyResults
from waku_shadow.report import discovery_tables, tables


def shards_section(results: StudyResults) -> list[str]:
    """On a cluster of several shards: each shard's nodes, receipts and latency, and what a node carries
    for the number of shards it serves (with a packet capture)."""
    if not results.study.sharded:
        return []
    by_shard = [[r["run"], f"{r['shard']:.0f}", f"{r['nodes']:.0f}", f"{r['messages']:.0f}", f"{r['receipts']:.0f}",
                 f"{r['p50_ms']:.0f}", f"{r['p95_ms']:.0f}", f"{r['max_ms']:.0f}"]
                for r in results.latency_by_shard.to_dict("records")]
    lines = ["## Shards", "",
             tables.table(by_shard, ["run", "shard", "nodes", "messages", "receipts", "p50 (ms)", "p95 (ms)", "max (ms)"],
                          "lrrrrrrr").markdown()]
    served = results.bytes_by_shards_served
    if not served.empty:
        rows = [[r["run"], f"{r['shards_served']:.0f}", f"{r['nodes']:.0f}", f"{r['bytes_in_per_node']:,.0f}",
                 f"{r['bytes_out_per_node']:,.0f}"] for r in served.to_dict("records")]
        lines += ["Bytes per node from the first publish on, idle traffic subtracted, by the shards it serves:", "",
                  tables.table(rows, ["run", "shards served", "nodes", "bytes in", "bytes out"], "lrrrr").markdown()]
    return lines


def discovery_section(results: StudyResults) -> list[str]:
    """A network that finds its peers by discv5: when its nodes got their first peer, nwaku's outbound
    target and a mesh on every shard, and the graph of connections at the first measured publish."""
    found = results.study.discovery
    if found is None:
        return []
    summary = results.discovery
    points = tables.point_labels(summary, results.keys)
    per_point = []
    for point, r in zip(points, summary.to_dict("records")):
        per_point.append([point, f"{r['nodes']:.0f}", *discovery_tables.milestone_cells(r), f"{r['never_meshed']:.0f}",
                          f"{r['degree_mean']:.1f}"])
    graphs = [[r["run"], f"{r['links']:.0f}", f"{r['parts']:.0f}", f"{r['diameter']:.0f}",
               f"{r['degree_min']:.0f} / {r['degree_mean']:.1f} / {r['degree_max']:.0f}", f"{r['evictions']:.0f}"]
              for r in results.discovery_graph.to_dict("records")]
    lines = ["## Discovery", "",
             f"Nodes found their peers by discv5 from {found.bootstrap_nodes} bootstrap nodes, nwaku keeping up to "
             f"{found.max_connections} connections. Seconds from the start, p50 / p95 / max over the nodes of a point's "
             f"runs (of those that got there); a mesh is d_low peers on every shard a node serves. Figure "
             f"{layout.DISCOVERY_FIGURE}.", "",
             tables.table(per_point, ["point", "nodes", "first peer (s)", "outbound target (s)", "mesh (s)",
                                      "never meshed", "mean degree at publish"], "lrrrrrr").markdown(), "",
             "The graph of connections at the first measured publish:", "",
             tables.table(graphs, ["run", "links", "parts", "diameter (hops)", "degree min / mean / max",
                                   "evictions"], "lrrrrr").markdown()]
    if "discv5_bytes_out_per_min" in summary:
        rows = [[point, f"{r['discv5_bytes_in_per_min']:,.0f}", f"{r['discv5_bytes_out_per_min']:,.0f}"]
                for point, r in zip(points, summary.to_dict("records"))]
        lines += ["", "discv5's own traffic (UDP) per node per minute of the run:", "",
                  tables.table(rows, ["point", "bytes in", "bytes out"], "lrr").markdown()]
    return lines


def classes_section(results: StudyResults) -> list[str]:
    """With bandwidth classes: latency by the receiver's class and by the publisher's, and the bytes a node
    of each class carries (with a packet capture)."""
    if not results.study.bandwidth_classes:
        return []
    lines = ["## Bandwidth classes", "", latency_by_group_lines("class")
             + f" Figure {layout.LATENCY_BY_CLASS_FIGURE}.", "",
             latency_by_group_table(results, results.latency_by_class, "bandwidth_class", "class")]
    carried = results.bytes_by_class
    if not carried.empty:
        rows = [[r["run"], r["bandwidth_class"], f"{r['nodes']:.0f}", f"{r['bytes_in_per_node']:,.0f}",
                 f"{r['bytes_out_per_node']:,.0f}"] for r in carried.to_dict("records")]
        lines += ["Bytes per node from the first publish on, idle traffic subtracted, by class:", "",
                  tables.table(rows, ["run", "class", "nodes", "bytes in", "bytes out"], "llrrr").markdown()]
    return lines


def locations_section(results: StudyResults) -> list[str]:
    """Over locations: latency by the receiver's location and by the publisher's."""
    if results.study.locations is None:
        return []
    return ["## Locations", "", latency_by_group_lines("location"), "",
            latency_by_group_table(results, results.latency_by_location, "location", "location")]


def latency_by_group_lines(name: str) -> str:
    return (f"Latency by the receiver's {name} (its nodes and the receipts they took) and by the publisher's (its "
            "publishers and the receipts of their messages), each point's runs pooled; nodes are counted once per run.")


def latency_by_group_table(results: StudyResults, table: pd.DataFrame, group: str, name: str) -> str:
    """host_groups.latency_by ``group`` as the report's table."""
    keys = results.keys
    rows = [[*(point_cell(k, r[k]) for k in keys), r["side"], r[group], f"{r['node_runs']:.0f}",
             f"{r['receipts']:.0f}", f"{r['p50_ms']:.0f}", f"{r['p95_ms']:.0f}", f"{r['max_ms']:.0f}"]
            for r in table.to_dict("records")]
    return tables.table(rows, [*("size" if k == "size_bytes" else k for k in keys), "by", name, "nodes", "receipts",
                               "p50 (ms)", "p95 (ms)", "max (ms)"], "l" * (len(keys) + 2) + "rrrrr").markdown()


def point_cell(key: str, value) -> str:
    return human_size(int(value)) if key == "size_bytes" else str(value)
