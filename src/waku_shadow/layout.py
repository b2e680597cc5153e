"""Where a study's files live: the study folder and the folder of each of its runs.

    results/<study>/
      study.yaml                               the resolved config (study_config)
      receipts.parquet  latency_summary.csv  runs.csv  points.csv  report.md ...   (summarize)
      figures/                                 Figure 3 and a sweep's or load study's figure (summarize)
      analysis/                                every other table and figure (analyse)
      report.ipynb  report.html                the notebook, showing the two (report)
      logs/<rule>/<run>.log                    every job's log
      logs/simulate/<run>.attempts.jsonl       every simulation attempt of a run, failed ones too
      failed/<run>/<UTC time>/                 what a failed simulation left behind
      runs/<run>/                              one Shadow run (the names below)

The logs, attempts and failures are outside the run folders, which a rerun renders anew,
and are no rule's outputs, which Snakemake removes when a job fails.
"""

from __future__ import annotations

from pathlib import Path

# a run folder: rendered
RUN_CONFIG = "config.yaml"
PROVENANCE = "provenance.json"
SHADOW_CONFIG = "shadow.yaml"
NETWORK_GRAPH = "network.gml"
IDENTITIES = "identities.csv"
LINKS = "links.csv"
SCHEDULE = "schedule.csv"
MESSAGES = "messages"
# simulated
SHADOW_DATA = "shadow.data"
SHADOW_LOG = "shadow.log"
SHADOW_STDERR = "shadow.stderr"
RUN_STATS = "run_stats.json"
LOGS = "logs"
# parsed, checked and measured
RECEIPTS = "receipts.parquet"
RECEIPTS_AGAIN = "receipts_again.parquet"  # messages nodes received again after they left and came back
PUBLISHES = "publishes.parquet"
SPAM_RECEIPTS = "spam_receipts.parquet"  # receipts of the spammers' messages (spam.*)
RLN_EVENTS = "rln_events.parquet"  # the RLN stand-in's rejections, gossipsub's prunes and disconnections for score
SENDS = "sends.parquet"
WITHHELD = "withheld.parquet"  # copies relays left unsent: the peer said IDONTWANT or IMRECEIVING (nwaku patch 0016)
TOPOLOGY_EVENTS = "topology_events.parquet"  # a discv5 network's connections and mesh changes (nwaku patch 0041)
FILTER_RECEIPTS = "filter_receipts.parquet"  # messages light clients got through their service node's filter
LIGHTPUSHES = "lightpushes.parquet"  # the lightpushes service nodes handled
STORE_QUERIES = "store_queries.parquet"  # returning light clients' store queries (light_clients.churn)
STORE_RETURNS = "store_returns.parquet"  # the message hashes each store query gave back
VALIDATION = "validation.json"
CHURN = "churn.csv"  # the nodes that leave and come back: host, leave_ns, rejoin_ns, dials
TRAFFIC = "traffic.parquet"
AMPLIFICATION = "amplification.parquet"

# the study folder
STUDY_CONFIG = "study.yaml"
STUDY_RECEIPTS = "receipts.parquet"
LATENCY_SUMMARY = "latency_summary.csv"
LATENCY_SUMMARY_MD = "latency_summary.md"
RUNS_TABLE = "runs.csv"
POINTS_TABLE = "points.csv"
LOAD_TABLE = "load.csv"  # a load study's latency and delivery per size and rate
KNEES_TABLE = "knees.csv"  # and where they break
REPORT_MD = "report.md"
REPORT_NOTEBOOK = "report.ipynb"
REPORT_HTML = "report.html"
FIGURES = "figures"
LATENCY_FIGURE = f"{FIGURES}/latency_distributions.png"  # the paper's Figure 3, ours
SWEEP_FIGURE = f"{FIGURES}/sweep.png"
LOAD_FIGURE = f"{FIGURES}/load.png"
ANALYSIS = "analysis"
RUNS = "runs"
JOB_LOGS = "logs"
FAILED = "failed"

# the study's analysis/ folder: the analyse rule's tables and figures (report.study_analysis.outputs
# says which of them a study has)
RECEIPTS_WITH_MODEL = "receipts_with_model.parquet"
RUN_CHECKS = "run_checks.csv"
PROVENANCE_TABLE = "provenance.csv"
TABLE5_COMPARISON = "table5_comparison.csv"
PAPER_DISTANCES = "paper_distances.csv"
PAPER_DISTANCES_BY_SEED = "paper_distances_by_seed.csv"
PAPER_HOP_SHARES = "paper_hop_shares.csv"
PAPER_DISTRIBUTIONS = "paper_distributions.png"
FIRST_HOPS = "first_hops.csv"
FIRST_HOPS_SUMMARY = "first_hops_summary.csv"
EQUATION2 = "equation2.csv"
FIGURE2 = "figure2.png"
HOP_HISTOGRAM = "hop_histogram.csv"
HOP_HISTOGRAMS = "hop_histograms.png"
RESIDUALS_BY_SIZE = "residuals_by_size.csv"
RESIDUALS_BY_HOP = "residuals_by_hop.csv"
RESIDUALS_FIGURE = "residuals.png"
PER_HOP = "per_hop.csv"
TABLE3_COMPARISON = "table3_comparison.csv"
BANDWIDTH_BY_RUN = "bandwidth_by_run.csv"
BANDWIDTH_FIT = "bandwidth_fit.json"
BANDWIDTH_FIGURE = "bandwidth.png"
SWEEP_POINTS = "sweep_points.csv"
LATENCY_BY_PATH = "latency_by_path.csv"  # light clients: relay/light publisher -> relay/light receiver
LATENCY_BY_PATH_FIGURE = "latency_by_path.png"
LIGHT_DECOMPOSITION = "light_decomposition.csv"  # a light -> light latency's parts
SERVICE_LOAD = "service_load.csv"  # per service node: clients, lightpushes, filter pushes, bytes
BYTES_BY_ROLE = "bytes_by_role.csv"  # mean bytes per node of each role (with a packet capture)
MEMORY_BY_ROLE = "memory_by_role.csv"  # per run and role: nwaku processes and their private memory at the peak
DISCOVERY_NODES = "discovery_nodes.csv"  # discv5: per node of every run, when it found peers and a mesh
DISCOVERY = "discovery.csv"  # discv5: per point, time to first peer, outbound target and mesh; degree; discv5 bytes
DISCOVERY_GRAPH = "discovery_graph.csv"  # discv5: per run, the graph at the first publish: parts, diameter, degrees
DISCOVERY_FIGURE = "time_to_mesh.png"  # discv5: ECDF of the nodes' time to a mesh on every shard
LATENCY_BY_SHARD = "latency_by_shard.csv"  # several shards: per shard, its nodes, messages and latency
BYTES_BY_SHARDS_SERVED = "bytes_by_shards_served.csv"  # several shards: mean bytes per node by how many it serves
LATENCY_BY_CLASS = "latency_by_class.csv"  # bandwidth classes: per class as receiver and as publisher, latency
LATENCY_BY_CLASS_FIGURE = "latency_by_class.png"
BYTES_BY_CLASS = "bytes_by_class.csv"  # bandwidth classes: mean bytes per node of each class
LATENCY_BY_LOCATION = "latency_by_location.csv"  # locations: per location as receiver and as publisher, latency
STORE_RECOVERY = "store_recovery.csv"  # per returning light client: messages missed, recovered from the store, when


def compared_with(other_study_dir: str | Path, suffix: str) -> str:
    """The analysis/ file that sets another study beside this one: .csv (the statistics) or .png (the ECDFs)."""
    return f"compared_with_{Path(other_study_dir).name}{suffix}"


def run_dir(study_dir: Path, run_id: str) -> Path:
    return study_dir / RUNS / run_id


def job_log(study_dir: Path, rule: str, run_id: str) -> Path:
    return study_dir / JOB_LOGS / rule / f"{run_id}.log"


def attempts(study_dir: Path, run_id: str) -> Path:
    return study_dir / JOB_LOGS / "simulate" / f"{run_id}.attempts.jsonl"


def failures(study_dir: Path, run_id: str) -> Path:
    return study_dir / FAILED / run_id


def study_dir_of(run_dir: Path) -> Path:
    return run_dir.parent.parent
