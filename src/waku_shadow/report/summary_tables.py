"""The docs' blocks written from the committed summaries alone (report/summaries.py).

Each block is rewritten whole, one section per summarised study in the order of their names: a
section whose study has no summary goes, so a fresh clone with no results writes them byte for byte.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import pandas as pd

from waku_shadow import checkout
from waku_shadow.analyse import hops, stats
from waku_shadow.configuration import schema
from waku_shadow.configuration.units import human_size
from waku_shadow.cost import cost_model
from waku_shadow.errors import ConfigError
from waku_shadow.paper import compare, published
from waku_shadow.report import tables as written
from waku_shadow.report.summaries import StudySummary
from waku_shadow.report.tables import number
from waku_shadow.run import run_stats
from waku_shadow.stack import builds

HEADLINE_STUDY = "paper-calibrated"  # the reading of the paper's setup its own data show (docs/paper.md)
CAPACITY_GIB = (22, 250)  # this 24 GiB machine less the guard's floor; a 256 GB host

MEMORY_MEASURES = (
    f"Peak memory: ({run_stats.RESIDENT_MEASURE}) the run's own, Shadow's resident set and its processes' private memory, "
    f"sampled every second; ({run_stats.OWN_MEASURE}) the proportional set size of Shadow and its processes, sampled "
    f"minutes apart (runs before 2026-12-08); ({run_stats.MACHINE_MEASURE}) the fall of the machine's available memory, "
    "the only measure of runs recorded before either, which counts whatever else ran beside the run."
)
MEMORY_MEASURES_BRIEF = (f"peak memory {run_stats.RESIDENT_MEASURE} or {run_stats.OWN_MEASURE}: the run's own; "
                         f"{run_stats.MACHINE_MEASURE}: the machine's fall, see docs/performance.md")


def measures(memory_measure: pd.Series) -> str:
    """The memory measures of a group of runs, e.g. "resident" or "machine/own"."""
    return "/".join(sorted(set(memory_measure)))


def joined(parts: list[str]) -> str | None:
    return "\n".join(parts) if parts else None


def heading(summary: StudySummary) -> str:
    return f"**{summary.study}** ({summary.config}; {', '.join(summary.runs)}):\n\n"


def node_weighted_bytes(carried: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """bytes_per_node tables (one row per group and run) pooled ``by``: a node's mean bytes in and out
    over every run, each run's mean weighted by its nodes."""
    weighted = carried.assign(bytes_in=carried["bytes_in_per_node"] * carried["nodes"],
                              bytes_out=carried["bytes_out_per_node"] * carried["nodes"]).groupby(by, sort=False)[
        ["bytes_in", "bytes_out", "nodes"]].sum()
    return weighted[["bytes_in", "bytes_out"]].div(weighted["nodes"], axis=0).reset_index()


def paper_network(summarised: dict[str, StudySummary]) -> dict[str, StudySummary]:
    return {name: summary for name, summary in summarised.items() if summary.paper_network}


def span_seconds(runs: pd.DataFrame) -> float | None:
    """The wall clock from a study's first run's start to its last run's finish (runs: started_utc,
    wall_s per run); None when a run has no start time."""
    if runs.empty or runs["started_utc"].isna().any():
        return None
    starts = runs["started_utc"].map(datetime.fromisoformat)
    ends = [start + timedelta(seconds=wall) for start, wall in zip(starts, runs["wall_s"])]
    return (max(ends) - min(starts)).total_seconds()


def simulation_span(runs: pd.DataFrame) -> str | None:
    """How a study's simulations shared the machine: their wall times summed against the wall clock
    from the first start to the last finish (span_seconds); None when a run has no start time."""
    span = span_seconds(runs)
    if span is None:
        return None
    summed = runs["wall_s"].sum()
    return (f"{len(runs)} simulations, {summed:.0f} s of run wall time in {span:.0f} s from the first start "
            f"to the last finish ({summed / span:.1f} at once on average)")


def single_host_tables(summarised: dict[str, StudySummary]) -> tuple[str | None, str | None, str | None]:
    """Table 5 beside ours, the distances from the paper's raw latencies and how long relayed hops took,
    one section per summary of a study of the paper's network."""
    table5, distances, hop_times = [], [], []
    for summary in paper_network(summarised).values():
        table5.append(heading(summary) + written.table5(summary.table5).markdown())
        distances.append(heading(summary) + written.distances(summary.distances, summary.distances_by_seed, summary.keys,
                                                              summary.distances_between_seeds).markdown())
        hop_times.append(heading(summary) + written.relay_hop_times(summary.relay_hop_times).markdown())
    return joined(table5), joined(distances), joined(hop_times)


def default_nwaku_build() -> dict:
    """The nwaku build a study makes when it names none: its tag and patch set (every tier)."""
    nwaku = schema.with_defaults({}, schema.schema())["stack"]["nwaku"]
    patches = checkout.build_patches(nwaku["tag"], nwaku["memory_manager"])
    return {"nwaku_tag": nwaku["tag"], "patch_set": builds.patch_set_hash([patch.path for patch in patches])}


def headline(summarised: dict[str, StudySummary], default_build: dict) -> str | None:
    """The README's result: HEADLINE_STUDY's Table 5 and distances per size. Refused when its summary is
    not of the default nwaku build: the headline must be what the build we ship gives."""
    summary = summarised.get(HEADLINE_STUDY)
    if summary is None:
        return None
    ran_on = {key: summary.nwaku.get(key) for key in default_build}
    if ran_on != default_build:
        raise ConfigError(
            f"summaries/{HEADLINE_STUDY}: its runs are of nwaku {ran_on['nwaku_tag']} with patch set "
            f"{ran_on['patch_set']}, not of the default build ({default_build['nwaku_tag']}, patch set "
            f"{default_build['patch_set']}); rerun {summary.config} on the default build before the docs quote it")
    seeds = f"seeds {', '.join(map(str, summary.seeds))}" if len(summary.seeds) > 1 else f"seed {summary.seeds[0]}"
    return (f"**{summary.study}** ({summary.config}, {seeds}; nwaku {summary.nwaku['nwaku_tag']}, patch set "
            f"{summary.nwaku['patch_set']}):\n\n"
            + written.headline(summary.table5, summary.distances, summary.distances_by_seed).markdown())


def nwaku_build(summary: StudySummary) -> str:
    nwaku = summary.nwaku
    return f"{nwaku['nwaku_tag']} {nwaku.get('memory_manager') or 'refc'}/{nwaku.get('allocator') or 'nim'}"


def runs(summarised: dict[str, StudySummary]) -> str | None:
    """Every summarised study's validated runs: wall time and peak memory, and how its simulations
    shared the machine."""
    parts = []
    for summary in summarised.values():
        rows = [[row["run"], number(row["wall_s"], "{:.0f} s"),
                 f"{number(row['peak_memory_gib'], '{:.2f} GiB')} ({row['memory_measure']})", nwaku_build(summary)]
                for row in summary.run_metrics.to_dict("records")]
        span = simulation_span(summary.run_metrics)
        parts.append(f"**{summary.study}** ({summary.config}){': ' + span if span else ''}:\n\n{MEMORY_MEASURES}\n\n"
                     + written.table(rows, ["run", "wall time", "peak memory", "nwaku build"], "lrrl").markdown())
    return joined(parts)


def largest_nodes_cells(law: cost_model.CostLaw, size: int) -> list[str]:
    """Table cells: the largest N of this message size whose predicted memory fits each of CAPACITY_GIB."""
    return [f"{cost_model.largest_nodes(law, size, gib):,}" for gib in CAPACITY_GIB]


def paper_cost(summarised: dict[str, StudySummary], law: cost_model.CostLaw | None) -> str | None:
    """Per summarised study of the paper's network: what its validated runs cost per size (the mean over
    seeds), how long its simulations took end to end, and the largest N of each size the cost law fits
    on this machine and on a 256 GB host."""
    parts = []
    for summary in paper_network(summarised).values():
        by_size = summary.run_metrics.groupby("size_bytes").agg(runs=("run", "size"), wall_s=("wall_s", "mean"),
                                                         memory=("peak_memory_gib", "mean"),
                                                         measure=("memory_measure", measures))
        columns = ["size", "runs", "wall time", "peak memory"]
        if law:
            columns += [f"largest N here ({CAPACITY_GIB[0]} GiB)", *(f"largest N in {gib} GiB" for gib in CAPACITY_GIB[1:])]
        rows = [[human_size(int(size)), f"{int(row.runs)}", f"{row.wall_s:.0f} s", f"{row.memory:.1f} GiB ({row.measure})",
                 *(largest_nodes_cells(law, int(size)) if law else [])]
                for size, row in by_size.iterrows()]
        span = simulation_span(summary.run_metrics) or f"{summary.run_metrics['wall_s'].sum():.0f} s of simulation in all"
        parts.append(f"**{summary.study}** ({len(summary.run_metrics)} validated runs; {span}; {MEMORY_MEASURES_BRIEF}):\n\n"
                     + written.table(rows, columns, "l" + "r" * (len(columns) - 1)).markdown())
    return joined(parts)


def memory_split(summarised: dict[str, StudySummary]) -> str | None:
    """Per summarised study of the paper's network and size (the mean over seeds): the run's own peak
    beside the machine's fall, and where the memory was at the peak: Shadow's resident memory against
    the nodes' private memory, and (resident measure) how much the kernel's own memory had grown."""
    parts = []
    for summary in paper_network(summarised).values():
        split = summary.run_metrics.dropna(subset=["shadow_rss_gib_at_peak"])
        split = split[split["memory_measure"].isin([run_stats.RESIDENT_MEASURE, run_stats.OWN_MEASURE])]
        if split.empty:
            continue
        split = split.reindex(columns=[*split.columns, *(c for c in ("machine_fall_gib", "kernel_gib_at_peak")
                                                          if c not in split.columns)])
        by_size = split.groupby("size_bytes").agg(
            peak_memory_gib=("peak_memory_gib", "mean"), measure=("memory_measure", measures),
            machine_fall_gib=("machine_fall_gib", "mean"), kernel_gib_at_peak=("kernel_gib_at_peak", "mean"),
            shadow_rss_gib_at_peak=("shadow_rss_gib_at_peak", "mean"), processes_at_peak=("processes_at_peak", "mean"),
            node_private_mib_at_peak=("node_private_mib_at_peak", "mean"))
        rows = [[human_size(int(size)), f"{row.peak_memory_gib:.1f} GiB ({row.measure})",
                 number(row.machine_fall_gib, "{:.1f} GiB"), number(row.kernel_gib_at_peak, "{:.2f} GiB"),
                 f"{row.shadow_rss_gib_at_peak:.1f} GiB", f"{row.processes_at_peak:.0f}",
                 f"{row.node_private_mib_at_peak:.1f} MiB"] for size, row in by_size.iterrows()]
        parts.append(f"**{summary.study}** ({len(split)} validated runs):\n\n" + written.table(
            rows, ["size", "own peak", "machine's fall", "kernel's growth", "Shadow's resident memory", "nodes sampled",
                   "a node's private memory"], "lrrrrrr").markdown())
    return joined(parts)


def open_files(summarised: dict[str, StudySummary]) -> str | None:
    """Per summarised run whose open files were counted: its nodes, the most descriptors Shadow held
    at once, and that per node, with shadow.few_descriptors_per_process off and on."""
    rows = []
    for summary in summarised.values():
        if "shadow_open_files_peak" not in summary.run_metrics:  # summarised before it was counted
            continue
        for row in summary.run_metrics.dropna(subset=["shadow_open_files_peak"]).to_dict("records"):
            rows.append([f"`{summary.study}`", row["run"], f"{int(row['nodes']):,}", "on" if row["few_descriptors_per_process"] else "off",
                         f"{int(row['shadow_open_files_peak']):,}", f"{row['shadow_open_files_peak'] / row['nodes']:.2f}"])
    if not rows:
        return None
    return written.table(rows, ["study", "run", "nodes", "few descriptors per process", "most files Shadow held open",
                                "per node"], "llrlrr").markdown()


def paper_first_group(size_bytes: int) -> float | None:
    """The receivers per message in the fastest latency group of the paper's raw latencies at a size
    (its publisher's direct peers, hops.hops_from_latency_steps); None where they show no steps."""
    theirs = stats.measured(published.shadow_receipts())
    theirs = theirs[theirs["size_bytes"] == size_bytes]
    hop = hops.hops_from_latency_steps(theirs["latency_ms"])
    return None if hop is None else float((hop == 1).sum() / theirs["seq"].nunique())


def per_seed(values: pd.Series, form: str = "{:.0f}") -> str:
    return " / ".join("" if isinstance(v, float) and math.isnan(v) else form.format(v) for v in values)


def reach_and_tail(summarised: dict[str, StudySummary]) -> str | None:
    """Per summarised study of the paper's network and size: how many receivers the publisher reached
    directly and how many copies it sent, per message, beside the paper's fastest latency group; the
    receivers reached only by gossip; and the slowest receipt, beside the paper's. One value per seed."""
    paper_max = published.table5().query("setup == 's-h'").set_index(["size_bytes", "statistic"])["latency_ms"]
    parts = []
    for summary in paper_network(summarised).values():
        rows = []
        for size_bytes, group in summary.run_metrics.groupby("size_bytes"):
            group = group.sort_values("seed")
            rows.append([human_size(int(size_bytes)), ", ".join(str(s) for s in group["seed"]),
                         number(paper_first_group(int(size_bytes)), "{:.0f}"), per_seed(group["first_hop_receivers"]),
                         per_seed(group["publisher_sent_to"]), per_seed(group["gossip_only_receivers"]),
                         f"{paper_max[(size_bytes, 'max')]:.0f}", per_seed(group["latency_max_ms"])])
        parts.append(f"**{summary.study}** (ours: one value per seed):\n\n" + written.table(
            rows, ["size", "seeds", "direct receivers: paper", "ours", "our publisher's copies", "reached only by gossip",
                   "max (ms): paper", "ours"], "lrrrrrrr").markdown())
    return joined(parts)


def tree_shape(summarised: dict[str, StudySummary]) -> str | None:
    """Per summarised study of the paper's network and size whose paper latencies show hop steps: the
    share of receipts per hop, the paper's (read off its steps) beside ours (from the delivery trees, all
    seeds pooled), and the copies our relays send per message, one value per seed."""
    paper, ours = compare.HOP_SOURCES[0], compare.HOP_SOURCES[1]
    parts = []
    for summary in paper_network(summarised).values():
        shares = summary.hop_shares.pivot_table(index=["size_bytes", "hop"], columns="source", values="share")
        runs = summary.run_metrics.sort_values("seed")
        rows = []
        for size_bytes, group in shares.groupby(level="size_bytes"):
            if paper not in group or group[paper].isna().all():
                continue
            by_hop = 100 * group.droplevel("size_bytes").fillna(0)
            by_hop = by_hop.reindex(range(1, max(5, int(by_hop.index.max()) + 1)), fill_value=0)
            cells = [f"{by_hop.at[hop, paper]:.1f} / {by_hop.at[hop, ours]:.1f}" for hop in range(1, 5)]
            beyond = by_hop.loc[by_hop.index > 4].sum()
            rows.append([human_size(int(size_bytes)), *cells, f"{beyond[paper]:.1f} / {beyond[ours]:.1f}",
                         per_seed(runs.loc[runs["size_bytes"] == size_bytes, "relay_copies"], "{:.1f}")])
        if rows:
            parts.append(f"**{summary.study}** (receipts per hop, %: paper / ours):\n\n" + written.table(
                rows, ["size", "hop 1", "hop 2", "hop 3", "hop 4", "hop 5+", "copies per relay, per seed"],
                "lrrrrrr").markdown())
    return joined(parts)


def paper_rounds(summarised: dict[str, StudySummary]) -> str | None:
    """Which setup each round of the paper's runs used (compare.round_evidence), and how far each
    summarised study of the paper's network lies from each round: the mean KS over its seeds, per size."""
    rounds = [summary.distances_by_round.assign(study=name) for name, summary in paper_network(summarised).items()]
    if not rounds:
        return None
    return (written.round_evidence(compare.round_evidence()).markdown() + "\n"
            + written.distances_by_round(pd.concat(rounds, ignore_index=True), list(published.ROUNDS)).markdown())
