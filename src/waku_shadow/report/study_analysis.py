"""The analyse stage: every table and figure of a study, as paper.study_results computes them, in its
analysis/ folder (the names are layout's).

``outputs`` names what ``write`` writes for a study, exactly: the analyse rule declares those files,
and the report notebook reads them (and the summarize rule's) and nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.analyse import bandwidth, residuals
from waku_shadow.configuration.study import Study
from waku_shadow.paper import compare, published
from waku_shadow.paper.compare import is_located_cascade
from waku_shadow.paper.study_results import StudyResults, paper_sizes, table5_sizes
from waku_shadow.report import plots

# what every study has, whatever its setup
ALWAYS = [layout.RECEIPTS_WITH_MODEL, layout.RUN_CHECKS, layout.PROVENANCE_TABLE, layout.FIRST_HOPS,
          layout.FIRST_HOPS_SUMMARY, layout.EQUATION2, layout.FIGURE2, layout.HOP_HISTOGRAM, layout.HOP_HISTOGRAMS,
          layout.RESIDUALS_BY_SIZE, layout.RESIDUALS_BY_HOP, layout.RESIDUALS_FIGURE, layout.PER_HOP]
LIGHT_CLIENTS = [layout.LATENCY_BY_PATH, layout.LATENCY_BY_PATH_FIGURE, layout.LIGHT_DECOMPOSITION, layout.SERVICE_LOAD,
                 layout.STORE_RECOVERY, layout.MEMORY_BY_ROLE]
SHARDS = [layout.LATENCY_BY_SHARD]
DISCOVERY = [layout.DISCOVERY_NODES, layout.DISCOVERY, layout.DISCOVERY_GRAPH, layout.DISCOVERY_FIGURE]
BANDWIDTH_CLASSES = [layout.LATENCY_BY_CLASS, layout.LATENCY_BY_CLASS_FIGURE]
PAPER_COMPARISON = [layout.PAPER_DISTANCES, layout.PAPER_DISTANCES_BY_SEED, layout.PAPER_HOP_SHARES,
                    layout.PAPER_DISTRIBUTIONS]


def outputs(study: Study, compare_with: str | Path | None = None) -> list[str]:
    """The files (names under analysis/) that ``write`` writes for ``study``, set beside the study
    in ``compare_with`` (its folder) when there is one."""
    names = list(ALWAYS)
    if table5_sizes(study):
        names.append(layout.TABLE5_COMPARISON)
    if paper_sizes(study):
        names += PAPER_COMPARISON
    if is_located_cascade(study):
        names.append(layout.TABLE3_COMPARISON)
    if study.traffic_capture:
        names.append(layout.BANDWIDTH_BY_RUN)
        if bandwidth.fit_axis(study):
            names += [layout.BANDWIDTH_FIT, layout.BANDWIDTH_FIGURE]
    if study.sweep:
        names.append(layout.SWEEP_POINTS)
    if study.light_clients.active:
        names += LIGHT_CLIENTS + ([layout.BYTES_BY_ROLE] if study.traffic_capture else [])
    if study.sharded:
        names += SHARDS + ([layout.BYTES_BY_SHARDS_SERVED] if study.traffic_capture else [])
    if study.discovery is not None:
        names += DISCOVERY
    if study.bandwidth_classes:
        names += BANDWIDTH_CLASSES + ([layout.BYTES_BY_CLASS] if study.traffic_capture else [])
    if study.locations is not None:
        names.append(layout.LATENCY_BY_LOCATION)
    if compare_with:
        names += [layout.compared_with(compare_with, ".csv"), layout.compared_with(compare_with, ".png")]
    return names


def figure3(results: StudyResults, out: Path | list[Path]) -> None:
    """The paper's Figure 3 of the study: its latency distributions per point, the paper's multi-host
    best and worst case dashed."""
    study = results.study
    plots.latency_distributions(results.receipts, results.summary, f"{study.name}: {study.nodes} nwaku nodes in Shadow",
                                out, reference=published.multihost_extremes())


def bandwidth_figure(results: StudyResults, out: Path) -> None:
    """Net bytes of every run against what they were fitted to, with the line (results.bandwidth_fit)."""
    fit = results.bandwidth_fit
    by_payload = fit["x"] == "payload_bytes"
    plots.net_bandwidth(results.runs, fit["x"], "payload published (MB)" if by_payload else "messages published, all nodes",
                        "size_bytes" if by_payload else results.study.sweep.name, fit,
                        "Message size vs bandwidth" if by_payload else "Number of messages vs bandwidth", out)


def write(results: StudyResults, out: Path, compare_with: str | Path | None = None) -> list[Path]:
    """Write every file ``outputs`` names into ``out``; return their paths. Another study with no
    results yet (no receipts.parquet) gives an empty comparison, and a figure of ours alone."""
    keys = results.keys
    other = Path(compare_with) if compare_with else None
    other_receipts = (pd.read_parquet(other / layout.STUDY_RECEIPTS)
                      if other is not None and (other / layout.STUDY_RECEIPTS).exists() else None)
    frames = {
        layout.RUN_CHECKS: lambda: results.run_checks,
        layout.FIRST_HOPS: lambda: results.first_hops,
        layout.FIRST_HOPS_SUMMARY: lambda: results.first_hops_summary,
        layout.EQUATION2: lambda: results.equation2,
        layout.HOP_HISTOGRAM: lambda: results.hop_histogram,
        layout.RESIDUALS_BY_SIZE: lambda: results.residuals_by_size,
        layout.RESIDUALS_BY_HOP: lambda: results.residuals_by_hop,
        layout.PER_HOP: lambda: results.per_hop,
        layout.TABLE5_COMPARISON: lambda: results.table5,
        layout.PAPER_DISTANCES: lambda: results.distances,
        layout.PAPER_DISTANCES_BY_SEED: lambda: results.distances_by_seed,
        layout.PAPER_HOP_SHARES: lambda: results.hop_shares,
        layout.TABLE3_COMPARISON: lambda: results.table3,
        layout.BANDWIDTH_BY_RUN: lambda: results.bandwidth_by_run,
        layout.SWEEP_POINTS: lambda: results.sweep_points,
        layout.LATENCY_BY_PATH: lambda: results.latency_by_path,
        layout.LIGHT_DECOMPOSITION: lambda: results.light_decomposition,
        layout.SERVICE_LOAD: lambda: results.service_load,
        layout.BYTES_BY_ROLE: lambda: results.bytes_by_role,
        layout.STORE_RECOVERY: lambda: results.store_recovery,
        layout.MEMORY_BY_ROLE: lambda: results.memory_by_role,
        layout.LATENCY_BY_SHARD: lambda: results.latency_by_shard,
        layout.BYTES_BY_SHARDS_SERVED: lambda: results.bytes_by_shards_served,
        layout.LATENCY_BY_CLASS: lambda: results.latency_by_class,
        layout.BYTES_BY_CLASS: lambda: results.bytes_by_class,
        layout.LATENCY_BY_LOCATION: lambda: results.latency_by_location,
        layout.DISCOVERY_NODES: lambda: results.discovery_nodes,
        layout.DISCOVERY: lambda: results.discovery,
        layout.DISCOVERY_GRAPH: lambda: results.discovery_graph,
    }
    figures = {
        layout.FIGURE2: lambda path: plots.figure2(results.figure2, path),
        layout.HOP_HISTOGRAMS: lambda path: plots.hop_histograms(results.hop_histogram, path, keys),
        layout.RESIDUALS_FIGURE: lambda path: plots.residuals(results.receipts_with_model, residuals.MODELS, path, keys),
        layout.PAPER_DISTRIBUTIONS: lambda path: plots.paper_distributions(
            results.receipts, published.shadow_receipts(), results.distances, results.hop_shares, compare.HOP_SOURCES,
            path, keys),
        layout.BANDWIDTH_FIGURE: lambda path: bandwidth_figure(results, path),
        layout.LATENCY_BY_PATH_FIGURE: lambda path: plots.latency_by_path(results.path_receipts, path, keys),
        layout.LATENCY_BY_CLASS_FIGURE: lambda path: plots.latency_by_class(results.group_receipts, path, keys),
        layout.DISCOVERY_FIGURE: lambda path: plots.time_to_mesh(results.discovery_nodes, path, keys),
    }
    if other is not None:
        frames[layout.compared_with(other, ".csv")] = lambda: results.compared_with(other_receipts)
        figures[layout.compared_with(other, ".png")] = lambda path: plots.compared_distributions(
            {results.study.name: results.receipts, **({other.name: other_receipts} if other_receipts is not None else {})},
            path)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in outputs(results.study, compare_with):
        path = out / name
        if name in frames:
            frames[name]().to_csv(path, index=False)
        elif name in figures:
            figures[name](path)
        elif name == layout.RECEIPTS_WITH_MODEL:
            results.receipts_with_model.to_parquet(path, index=False)
        elif name == layout.PROVENANCE_TABLE:
            results.provenance.to_csv(path, index_label="entry")
        elif name == layout.BANDWIDTH_FIT:
            path.write_text(json.dumps(results.bandwidth_fit, indent=2))
        else:
            raise AssertionError(f"{name}: outputs names it, write has no way to write it")
        written.append(path)
    return written
