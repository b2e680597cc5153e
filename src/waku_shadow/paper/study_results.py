"""Every result of a study, each computed in one place, as a frame, from the study's runs.

report.md, the analyse stage's files under analysis/ (and through them the notebook), the paper's
page and the docs' generated blocks write what these compute and compute none of their own. The
study's workflow hands it every run (each one validated, or the rules stop before); the page and
the docs hand it the runs that validated. Each result is computed on first use, once.
"""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.analyse import bandwidth, discovery, hops, host_groups, light_clients, residuals, scaling, shards, stats, study_tables
from waku_shadow.configuration.study import Study
from waku_shadow.paper import compare, published

# what bandwidth_by_run keeps of a run, beside its point and seed
BANDWIDTH_COLUMNS = ["messages_published", "payload_bytes", "net_bytes", "net_bytes_per_message", "amplification",
                     "duplicates_per_receiver"]
# the metrics of a sweep's points, in the order they are shown
POINT_METRICS = ["latency_mean_ms", "latency_p95_ms", "hops_mean", "amplification", "duplicates_per_receiver",
                 "net_bytes_per_message", "delivery", "delivery_when_up"]
FIRST_HOP_COLUMNS = ["publisher_sent_to", "first_hop_receivers"]
COST_COLUMNS = ["wall_s", "peak_memory_gib", "memory_measure"]  # of the runs table


def paper_sizes(study: Study) -> set[int]:
    """The study's message sizes that the paper simulated (its raw Shadow latencies): none unless the
    study runs the paper's network (compare.network_differences)."""
    if compare.network_differences(study):
        return set()
    return set(study.message_sizes) & published.simulated_sizes()


def table5_sizes(study: Study) -> set[int]:
    """The study's message sizes beside which Table 5 is set: none for a sweep (Table 5 is per size, not
    per point) or a study that does not run the paper's network."""
    return set() if study.sweep else paper_sizes(study) & published.table5_sizes()


class StudyResults:
    """The results of ``run_dirs``, runs of ``study``."""

    def __init__(self, study: Study, run_dirs: list[Path]):
        if not run_dirs:
            raise ValueError(f"{study.name}: no runs to compute results from")
        self.study = study
        self.run_dirs = [Path(run_dir) for run_dir in run_dirs]
        self.keys = study_tables.point_keys(study)  # a point: the message size, and the swept value in a sweep

    @cached_property
    def paper_receipts(self) -> pd.DataFrame:
        """The receipts of the sizes set beside the paper's data (paper_sizes): none unless the study runs
        the paper's network."""
        return self.receipts[self.receipts["size_bytes"].isin(paper_sizes(self.study))]

    def _pooled(self, file: str) -> pd.DataFrame:
        return self._per_run(lambda run_dir: study_tables.run_table(run_dir, file))

    def _per_run(self, table) -> pd.DataFrame:
        """``table(run_dir)`` of every run, one frame."""
        return pd.concat([table(run_dir) for run_dir in self.run_dirs], ignore_index=True)

    # every run's tables, pooled, each row with its run, seed and swept value

    @cached_property
    def receipts(self) -> pd.DataFrame:
        return self._pooled(layout.RECEIPTS)

    @cached_property
    def publishes(self) -> pd.DataFrame:
        return self._pooled(layout.PUBLISHES)

    @cached_property
    def sends(self) -> pd.DataFrame:
        return self._pooled(layout.SENDS)

    @cached_property
    def receipts_with_model(self) -> pd.DataFrame:
        """The receipts with Equation 1's predictions and residuals (residuals.run_receipts)."""
        return self._per_run(residuals.run_receipts)

    # per run and per point

    @cached_property
    def runs(self) -> pd.DataFrame:
        """study_tables.runs_table: a row of metrics per run."""
        return study_tables.runs_table(self.run_dirs, self.keys)

    @cached_property
    def points(self) -> pd.DataFrame:
        """study_tables.points_table: per point and metric, the mean over repetitions and its 95 % interval."""
        return study_tables.points_table(self.runs, self.keys)

    @cached_property
    def sweep_points(self) -> pd.DataFrame:
        """study_tables.wide of the points: one row per point, each metric's mean and ± half its interval;
        in a sweep of N, the paper's model beside them (scaling.model_lines)."""
        wide = study_tables.wide(self.points, self.keys, [m for m in POINT_METRICS if m in set(self.points["metric"])])
        if scaling.is_nodes_sweep(self.study):
            wide = wide.merge(scaling.model_lines(self.study), on=["nodes", "size_bytes"], how="left")
        return wide

    @cached_property
    def run_checks(self) -> pd.DataFrame:
        """Per run, in the order of run_dirs: its size, wall time and peak memory (how it was measured:
        the runs table's), whether it passed validation, validation's counts, and each check's verdict
        ('check: <name>')."""
        cost = self.runs.set_index("run")[["size_bytes", *COST_COLUMNS]]
        rows = []
        for run_dir in self.run_dirs:
            checks = json.loads((run_dir / layout.VALIDATION).read_text())
            rows.append({"run": run_dir.name, **cost.loc[run_dir.name], "passed": checks["passed"], **checks["counts"],
                         **{f"check: {name}": verdict for name, verdict in checks["checks"].items()}})
        return pd.DataFrame(rows)

    @cached_property
    def provenance(self) -> pd.DataFrame:
        """Every run's provenance.json, one column per run, one row per entry (nested ones as text)."""
        return pd.DataFrame({run_dir.name: json.loads((run_dir / layout.PROVENANCE).read_text())
                             for run_dir in self.run_dirs}).astype(str)

    # latency, and the paper's Table 5, raw latencies and Figure 3

    @cached_property
    def summary(self) -> pd.DataFrame:
        """stats.latency_summary per point: what Figure 3 marks and Table 5 sets beside the paper's."""
        return stats.latency_summary(self.receipts, self.keys)

    @cached_property
    def table5(self) -> pd.DataFrame:
        """compare.table5_comparison; empty for a sweep (Table 5 is per size) or without a size of Table 5."""
        return compare.table5_comparison(self.summary if table5_sizes(self.study) else self.summary.iloc[:0])

    @cached_property
    def distances(self) -> pd.DataFrame:
        """compare.distances per point, the repetitions pooled; empty without a size the paper simulated."""
        return compare.distances(self.paper_receipts, self.keys)

    @cached_property
    def distances_by_seed(self) -> pd.DataFrame:
        return compare.distances(self.paper_receipts, [*self.keys, "seed"])

    @cached_property
    def distances_between_seeds(self) -> pd.DataFrame:
        """Per point, the largest KS distance between two of our seeds: the spread the draws alone make."""
        return stats.largest_distance_between(self.receipts, self.keys)

    @cached_property
    def hop_shares(self) -> pd.DataFrame:
        """compare.hop_shares: receipts per hop count, ours beside the paper's, per point."""
        return compare.hop_shares(self.paper_receipts, self.keys)

    # delivery trees, Equation 2 and Figure 2

    @cached_property
    def first_hops(self) -> pd.DataFrame:
        """hops.first_hops: per message, the peers its publisher flooded and the receivers it reached first."""
        return hops.first_hops(self.receipts, self.sends, self.keys)

    @cached_property
    def first_hops_summary(self) -> pd.DataFrame:
        """Per point, count, mean, std, min, quartiles and max of first_hops over measured messages."""
        table = stats.measured(self.first_hops).groupby(self.keys)[FIRST_HOP_COLUMNS].describe()
        table.columns = [f"{column} {statistic}" for column, statistic in table.columns]
        return table.reset_index()

    @cached_property
    def equation2(self) -> pd.DataFrame:
        """compare.equation2_table: Equation 2's hops beside the deepest observed, per D and size."""
        return compare.equation2_table(self.study, self.receipts, self.first_hops)

    @cached_property
    def figure2(self) -> pd.DataFrame:
        """Figure 2's marks of this study: per N and D, the deepest hop any receipt took
        (nodes, degree, max_hop, label: the study's name)."""
        deepest = self.equation2.groupby(["N", "D"], as_index=False)["observed max"].max()
        return pd.DataFrame({"nodes": deepest["N"], "degree": deepest["D"], "max_hop": deepest["observed max"],
                             "label": self.study.name})

    @cached_property
    def relay_hop_times(self) -> pd.DataFrame:
        """hops.relay_hop_times per point: how long relayed hops took, and how alike they were."""
        return hops.relay_hop_times(self.receipts, self.keys)

    @cached_property
    def hop_histogram(self) -> pd.DataFrame:
        return hops.hop_histogram(self.receipts, self.keys)

    # Equation 1 and the per-hop decomposition (Table 3 of the simulated network, and beside the paper's)

    @cached_property
    def residuals_by_size(self) -> pd.DataFrame:
        """residuals.residual_summary per point."""
        return residuals.residual_summary(self.receipts_with_model, self.keys)

    @cached_property
    def residuals_by_hop(self) -> pd.DataFrame:
        return residuals.residual_summary(self.receipts_with_model, [*self.keys, "hop"])

    @cached_property
    def per_hop(self) -> pd.DataFrame:
        """hops.per_hop_table with each size's own L_v."""
        return hops.per_hop_table(self.receipts, self.publishes, hops.verification_ms(self.run_dirs), self.keys)

    @cached_property
    def table3(self) -> pd.DataFrame:
        """compare.multihost_table3: the paper's Table 3 beside a cascade over locations; empty otherwise."""
        return compare.multihost_table3(self.run_dirs)

    # bandwidth (with a packet capture)

    @cached_property
    def bandwidth_by_run(self) -> pd.DataFrame:
        """Per run, what its messages cost the network (bandwidth.run_cost); empty without a packet capture."""
        if not self.study.traffic_capture:
            return pd.DataFrame(columns=[*self.keys, "seed", *BANDWIDTH_COLUMNS])
        return self.runs[[*self.keys, "seed", *BANDWIDTH_COLUMNS]]

    @cached_property
    def bandwidth_fit(self) -> dict | None:
        """The least-squares line of net bytes against what bandwidth.fit_axis names (x): slope,
        intercept, r2; None without a packet capture or an axis to fit against."""
        x = bandwidth.fit_axis(self.study)
        if not self.study.traffic_capture or x is None:
            return None
        return {"x": x, **stats.fit_line(self.runs[x], self.runs["net_bytes"])}

    # light clients (light_clients.*)

    @cached_property
    def path_receipts(self) -> pd.DataFrame:
        """light_clients.path_receipts of every run: relay and filter receipts with their path."""
        return self._per_run(light_clients.path_receipts)

    @cached_property
    def latency_by_path(self) -> pd.DataFrame:
        return light_clients.latency_by_path(self.path_receipts, self.keys)

    @cached_property
    def light_decomposition(self) -> pd.DataFrame:
        """light_clients.decomposition_summary per point, every run's light → light receipts pooled."""
        return light_clients.decomposition_summary(self._per_run(light_clients.decomposition), self.keys)

    @cached_property
    def service_load(self) -> pd.DataFrame:
        return self._per_run(light_clients.service_load)

    @cached_property
    def memory_by_role(self) -> pd.DataFrame:
        """light_clients.memory_by_role of every run: each role's private memory at the run's peak."""
        return self._per_run(light_clients.memory_by_role)

    @cached_property
    def store_recovery(self) -> pd.DataFrame:
        """light_clients.store_recovery of every run: each returning client's misses and recoveries."""
        return self._per_run(light_clients.store_recovery)

    @cached_property
    def bytes_by_role(self) -> pd.DataFrame:
        """light_clients.bytes_by_role of every run; empty without a packet capture."""
        return self._per_captured_run(light_clients.bytes_by_role, "role")

    # a cluster of several shards (network.shards)

    @cached_property
    def latency_by_shard(self) -> pd.DataFrame:
        """shards.latency_by_shard of every run."""
        return self._per_run(shards.latency_by_shard)

    @cached_property
    def bytes_by_shards_served(self) -> pd.DataFrame:
        """shards.bytes_by_shards_served of every run; empty without a packet capture."""
        return self._per_captured_run(shards.bytes_by_shards_served, "shards_served")

    # a network that finds its peers by discv5 (network.topology: discv5)

    @cached_property
    def discovery_nodes(self) -> pd.DataFrame:
        """discovery.run_nodes of every run: each node's times to its first peer, target and mesh."""
        return self._per_run(discovery.run_nodes)

    @cached_property
    def discovery(self) -> pd.DataFrame:
        """discovery.summary per point, its runs' nodes pooled."""
        return discovery.summary(self.discovery_nodes, self.keys)

    @cached_property
    def discovery_graph(self) -> pd.DataFrame:
        """discovery.run_graph of every run: the graph at its first measured publish."""
        return self._per_run(discovery.run_graph)

    # relay nodes in bandwidth classes (network.bandwidth_classes) and over locations (network.locations)

    @cached_property
    def group_receipts(self) -> pd.DataFrame:
        """host_groups.group_receipts of every run."""
        return self._per_run(host_groups.group_receipts)

    @cached_property
    def latency_by_class(self) -> pd.DataFrame:
        """host_groups.latency_by the bandwidth class, per point, its runs pooled."""
        return host_groups.latency_by(self.group_receipts, self.keys, "bandwidth_class")

    @cached_property
    def latency_by_class_histogram(self) -> pd.DataFrame:
        """host_groups.latency_histogram by the bandwidth class, per point, its runs pooled."""
        return host_groups.latency_histogram(self.group_receipts, self.keys, "bandwidth_class")

    @cached_property
    def bytes_by_class(self) -> pd.DataFrame:
        """host_groups.bytes_by the bandwidth class, of every run; empty without a packet capture."""
        return self._per_captured_run(lambda run_dir: host_groups.bytes_by(run_dir, "bandwidth_class"), "bandwidth_class")

    @cached_property
    def latency_by_location(self) -> pd.DataFrame:
        """host_groups.latency_by the location, per point, its runs pooled."""
        return host_groups.latency_by(self.group_receipts, self.keys, "location")

    def _per_captured_run(self, table, by: str) -> pd.DataFrame:
        """``table(run_dir)`` of every run, a light_clients.bytes_per_node table grouped ``by``; empty
        without a packet capture."""
        if not self.study.traffic_capture:
            return pd.DataFrame(columns=[by, *light_clients.BYTES_PER_NODE_COLUMNS])
        return self._per_run(table)

    # beside another study

    def compared_with(self, other_receipts: pd.DataFrame | None) -> pd.DataFrame:
        """stats.compare: our statistics beside another study's per size (ours ÷ theirs); empty when
        the other has no receipts (None)."""
        if other_receipts is None:
            return pd.DataFrame(columns=["size_bytes", "statistic", "ours_ms", "other_ms", "ratio"])
        return stats.compare(self.summary, stats.latency_summary(other_receipts))
