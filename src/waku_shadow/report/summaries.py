"""A study's committed summary: the small tables the docs quote, with the provenance of the runs.

`waku-shadow docs-tables` writes summaries/<study>/ from a study's validated runs where they are on
the machine, and writes the docs' tables of the paper's network from summaries/ alone, so that a
fresh clone, with no results at all, rewrites those tables byte for byte. A summary names the config
under configs/ that regenerates it: a study without one is refused, since nobody could rerun it.

    summaries/<study>/provenance.json         the config, the runs and seeds, the builds they ran on
                      latency_summary.csv      stats.latency_summary per point
                      distances.csv            compare.distances, repetitions pooled
                      distances_by_seed.csv    compare.distances per point and seed
                      distances_between_seeds.csv  stats.largest_distance_between
                      relay_hop_times.csv      hops.relay_hop_times per point
                      run_metrics.csv          study_tables.runs_table per run, with its cost (run_cost)
                      hop_shares.csv           compare.hop_shares per point
                      distances_by_round.csv   per size and round of the paper's runs, KS over our seeds
                      latency_histogram.csv    stats.latency_histogram: receipts per point, seed and ms
                      relay_hop_time_histogram.csv  hops.relay_hop_time_histogram per point
                      latency_by_path.csv, light_decomposition.csv, service_load.csv, bytes_by_role.csv,
                      store_recovery.csv, memory_by_role.csv  with light clients
                      latency_by_shard.csv, bytes_by_shards_served.csv  on a cluster of several shards
                      latency_by_class.csv, bytes_by_class.csv, latency_by_class_histogram.csv  with bandwidth classes
                      latency_by_location.csv  over locations
                      discovery.csv, discovery_graph.csv  a network found by discv5

Every study with validated runs here and a config is summarised; the tables that set a study beside
the paper's data are empty for one that does not run the paper's network (compare.network_differences).
"""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from waku_shadow import checkout, layout
from waku_shadow.analyse import hops, stats
from waku_shadow.configuration import loader
from waku_shadow.errors import ConfigError
from waku_shadow.paper import compare, published
from waku_shadow.paper.study_results import StudyResults, table5_sizes
from waku_shadow.run import run_stats
from waku_shadow.run.memory import GIB

SUMMARIES = "summaries"
PROVENANCE = "provenance.json"
TABLES = ("latency_summary", "distances", "distances_by_seed", "distances_between_seeds", "relay_hop_times", "run_metrics",
          "hop_shares", "distances_by_round", "latency_histogram", "relay_hop_time_histogram")
OWN_TABLES = ("latency_summary", "run_metrics", "relay_hop_times", "latency_histogram", "relay_hop_time_histogram")  # the rest set a study beside the paper
LIGHT_TABLES = ("latency_by_path", "light_decomposition", "service_load", "bytes_by_role", "store_recovery",
                "memory_by_role")  # of a study with light clients
SHARD_TABLES = ("latency_by_shard", "bytes_by_shards_served")  # of a study on several shards
CLASS_TABLES = ("latency_by_class", "bytes_by_class", "latency_by_class_histogram")  # of a study with bandwidth classes
LOCATION_TABLES = ("latency_by_location",)  # of a study over locations
DISCOVERY_TABLES = ("discovery", "discovery_graph")  # of a study whose nodes find their peers by discv5


@dataclass
class StudySummary:
    """What a summary holds: each table as StudyResults computes it, and where it came from."""

    study: str
    config: str  # the config under configs/ that regenerates the study
    runs: list[str]
    seeds: list[int]
    keys: list[str]
    nwaku: dict  # the runs' nwaku build: tag, patch set, tiers, memory manager, allocator
    shadow: str
    waku_shadow: list[str]  # the project's versions that rendered the runs
    paper_network: bool  # whether the study runs the paper's network, so is set beside the paper's data
    latency_summary: pd.DataFrame
    distances: pd.DataFrame
    distances_by_seed: pd.DataFrame
    distances_between_seeds: pd.DataFrame
    relay_hop_times: pd.DataFrame
    run_metrics: pd.DataFrame
    hop_shares: pd.DataFrame
    distances_by_round: pd.DataFrame
    latency_histogram: pd.DataFrame
    relay_hop_time_histogram: pd.DataFrame
    light_clients: bool = False  # whether the study has light clients, so LIGHT_TABLES
    latency_by_path: pd.DataFrame = field(default_factory=pd.DataFrame)
    light_decomposition: pd.DataFrame = field(default_factory=pd.DataFrame)
    service_load: pd.DataFrame = field(default_factory=pd.DataFrame)
    bytes_by_role: pd.DataFrame = field(default_factory=pd.DataFrame)
    store_recovery: pd.DataFrame = field(default_factory=pd.DataFrame)
    memory_by_role: pd.DataFrame = field(default_factory=pd.DataFrame)
    sharded: bool = False  # whether any run is on several shards, so SHARD_TABLES
    latency_by_shard: pd.DataFrame = field(default_factory=pd.DataFrame)
    bytes_by_shards_served: pd.DataFrame = field(default_factory=pd.DataFrame)
    classed: bool = False  # whether the study has bandwidth classes, so CLASS_TABLES
    latency_by_class: pd.DataFrame = field(default_factory=pd.DataFrame)
    bytes_by_class: pd.DataFrame = field(default_factory=pd.DataFrame)
    latency_by_class_histogram: pd.DataFrame = field(default_factory=pd.DataFrame)
    located: bool = False  # whether the study spreads its nodes over locations, so LOCATION_TABLES
    latency_by_location: pd.DataFrame = field(default_factory=pd.DataFrame)
    discovered: bool = False  # whether the nodes find their peers by discv5, so DISCOVERY_TABLES
    discovery: pd.DataFrame = field(default_factory=pd.DataFrame)
    discovery_graph: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def table5(self) -> pd.DataFrame:
        return compare.table5_comparison(self.latency_summary)


def config_of(study: str, configs_dir: Path | None = None) -> Path:
    """The config under configs/ or configs/experiments/ (not its overlays) whose study is ``study``,
    as a path from the folder that holds configs/, the repository: configs/experiments/<study>.yaml."""
    configs_dir = configs_dir or checkout.path("configs")
    for path in [*sorted(configs_dir.glob("*.yaml")), *sorted(configs_dir.glob("experiments/*.yaml"))]:
        if (yaml.safe_load(path.read_text()) or {}).get("study") == study:
            return path.relative_to(configs_dir.parent)
    raise ConfigError(f"study {study!r} has no config under {configs_dir}: a study the docs report must be one "
                      "anybody can rerun; add its config there")


def is_paper_network(study) -> bool:
    """Whether a study is set beside the paper's data: one run per size (no sweep) of the paper's network
    (compare.network_differences) at a size of Table 5."""
    return not study.sweep and not compare.network_differences(study) and bool(table5_sizes(study))


def one_build(run_provenance: list[dict], study: str) -> tuple[dict, str]:
    """The nwaku build and the Shadow all of a study's runs ran on; a study whose runs mixed builds is
    refused, since its summary could not say which one its numbers are of."""
    builds = {json.dumps(nwaku_build(p["nwaku"]), sort_keys=True) for p in run_provenance}
    shadows = {p["shadow"] for p in run_provenance}
    if len(builds) > 1 or len(shadows) > 1:
        raise ConfigError(f"{study}: its runs ran on {len(builds)} nwaku builds and {len(shadows)} Shadow builds; "
                          "rerun it on one before it is summarised")
    return json.loads(builds.pop()), shadows.pop()


def nwaku_build(nwaku: dict) -> dict:
    """What names a run's nwaku build in its provenance: tag, patch set, tiers, memory manager, allocator."""
    return {key: nwaku.get(key) for key in ("nwaku_tag", "patch_set", "patch_tiers", "memory_manager", "allocator")}


def run_cost(run_dir: Path) -> dict:
    """A run's nodes, the most files Shadow held open (and whether with few descriptors per process),
    when it started, and where its memory was at its peak (run_stats.memory_at_peak: the sample of the
    run's own peak; in runs before 2026-12-08 the sample where the machine had least available); NaN for
    runs recorded before one was."""
    stats = run_stats.read_stats(run_dir)
    study = loader.load(run_dir / layout.RUN_CONFIG)
    at_peak = stats.memory_at_peak or {}
    processes = at_peak.get("processes")
    return {"run": run_dir.name, "nodes": study.nodes, "few_descriptors_per_process": study.few_descriptors_per_process,
            "shadow_open_files_peak": stats.shadow_open_files_peak, "started_utc": stats.started_utc,
            "machine_fall_gib": stats.peak_memory_bytes / GIB,
            # the kernel's growth is recorded beside the resident measure only (memory.MemoryBreakdown.kernel_bytes)
            "kernel_gib_at_peak": at_peak["kernel_bytes"] / GIB if stats.resident_peak_bytes else math.nan,
            "shadow_rss_gib_at_peak": at_peak["shadow_rss_bytes"] / GIB if at_peak else math.nan,
            "processes_at_peak": processes if at_peak else math.nan,
            "node_private_mib_at_peak": at_peak["processes_anon_bytes"] / max(processes, 1) / 2**20 if at_peak else math.nan}


def runs_with_cost(results: StudyResults) -> pd.DataFrame:
    """The study's runs table with each run's cost (run_cost) and, per run, the mean over measured
    messages of the receivers its publisher reached directly and the copies it sent (hops.first_hops)."""
    first_hops = results.first_hops[~results.first_hops["warmup"]].groupby("run")[
        ["first_hop_receivers", "publisher_sent_to"]].mean().reset_index()
    cost = pd.DataFrame([run_cost(run_dir) for run_dir in results.run_dirs])
    cost = cost.drop(columns=[c for c in cost.columns if c != "run" and c in results.runs.columns])  # a sweep of N has nodes
    return results.runs.merge(cost, on="run", how="left").merge(first_hops, on="run", how="left")


def distances_by_round(results: StudyResults) -> pd.DataFrame:
    """Per size and round of the paper's runs (published.ROUNDS): the KS distance of each of our seeds
    from that round's latencies, as mean, min and max over the seeds."""
    parts = []
    for round_name in published.ROUNDS:
        by_seed = compare.distances(results.receipts, ["size_bytes", "seed"], round_name)
        ks = by_seed.groupby("size_bytes")["ks"].agg(ks_mean="mean", ks_min="min", ks_max="max", seeds="count")
        parts.append(ks.reset_index().assign(round=round_name))
    return pd.concat(parts, ignore_index=True)


def write(results: StudyResults, out: Path, configs_dir: Path | None = None) -> Path:
    """summaries/<study>/ of the study's (validated) runs, replacing what was there."""
    study = results.study.name
    config = config_of(study, configs_dir)
    provenance = [json.loads((run_dir / layout.PROVENANCE).read_text()) for run_dir in results.run_dirs]
    nwaku, shadow = one_build(provenance, study)
    paper_network = is_paper_network(results.study)
    flags = {"light_clients": results.study.light_clients.active, "sharded": results.study.sharded,
             "classed": bool(results.study.bandwidth_classes), "located": results.study.locations is not None,
             "discovered": results.study.discovery is not None}
    folder = out / study
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / PROVENANCE).write_text(json.dumps({
        "study": study,
        "config": config.as_posix(),
        "runs": [run_dir.name for run_dir in results.run_dirs],
        "seeds": sorted({int(p["seed"]) for p in provenance}),
        "keys": results.keys,
        "nwaku": nwaku,
        "shadow": shadow,
        "waku_shadow": sorted({p["waku_shadow"] for p in provenance}),
        "paper_network": paper_network,
        **flags,
    }, indent=2) + "\n")
    computed = {"latency_summary": lambda: results.summary, "run_metrics": lambda: runs_with_cost(results),
                "distances_by_round": lambda: distances_by_round(results),
                "latency_histogram": lambda: stats.latency_histogram(results.receipts, results.keys),
                "relay_hop_time_histogram": lambda: hops.relay_hop_time_histogram(results.receipts, results.keys)}
    for table in TABLES:
        if table not in OWN_TABLES and not paper_network:
            continue
        (computed.get(table) or (lambda: getattr(results, table)))().to_csv(folder / f"{table}.csv", index=False)
    for table in optional_tables(**flags):
        getattr(results, table).to_csv(folder / f"{table}.csv", index=False)
    return folder


def optional_tables(light_clients: bool, sharded: bool, classed: bool, located: bool, discovered: bool) -> tuple[str, ...]:
    """The tables a study has for its light clients, its shards, its bandwidth classes, its locations and
    its discovery."""
    return ((LIGHT_TABLES if light_clients else ()) + (SHARD_TABLES if sharded else ()) + (CLASS_TABLES if classed else ())
            + (LOCATION_TABLES if located else ()) + (DISCOVERY_TABLES if discovered else ()))


def read(folder: Path) -> StudySummary:
    """summaries/<study>/ as write left it; one written by an earlier waku-shadow, without a table this
    one reads, is refused by name."""
    provenance = json.loads((folder / PROVENANCE).read_text())
    expected = ((TABLES if provenance.get("paper_network") else OWN_TABLES)
                + optional_tables(provenance.get("light_clients"), provenance.get("sharded"), provenance.get("classed"),
                                  provenance.get("located"),
                                  # a summary written before discovery had none
                                  provenance.get("discovered", False)))
    missing = [f"{table}.csv" for table in expected if not (folder / f"{table}.csv").exists()]
    if "paper_network" not in provenance or missing:
        raise ConfigError(f"{folder}: written by an earlier waku-shadow (no {', '.join(missing) or 'paper_network'}); "
                          "run `waku-shadow docs-tables` where its study's results are")
    tables = {table: pd.read_csv(folder / f"{table}.csv") if (folder / f"{table}.csv").exists() else pd.DataFrame()
              for table in TABLES + LIGHT_TABLES + SHARD_TABLES + CLASS_TABLES + LOCATION_TABLES + DISCOVERY_TABLES}
    return StudySummary(**provenance, **tables)


def read_all(summaries_dir: Path) -> dict[str, StudySummary]:
    """Every summary under summaries_dir, by study name, in the order of the names."""
    return {summary.study: summary for summary in
            (read(p.parent) for p in sorted(summaries_dir.glob(f"*/{PROVENANCE}")))}
