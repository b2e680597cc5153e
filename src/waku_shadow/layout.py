"""Where a study's files live: the study folder and the folder of each of its runs.

    results/<study>/
      study.yaml  receipts.parquet  latency_summary.csv  runs.csv  points.csv  report.md ...
      figures/  analysis/
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
ANALYSIS = "analysis"
RUNS = "runs"
JOB_LOGS = "logs"
FAILED = "failed"


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
