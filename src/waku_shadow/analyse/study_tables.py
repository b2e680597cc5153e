"""A study's runs side by side: one row of metrics per run and, per point (swept value and
message size), the mean over its repetitions with a 95 % confidence interval."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
from scipy.stats import t as student_t

from waku_shadow import layout
from waku_shadow.analyse import bandwidth, gossip, spam, stats
from waku_shadow.configuration import loader
from waku_shadow.configuration.study import Study, point_columns
from waku_shadow.run.run_stats import read_stats

LATENCY_METRICS = ["latency_min_ms", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "latency_max_ms", "hops_mean",
                   "hops_max", "gossip_only_receivers", "delivery", "delivery_when_up"]
TRAFFIC_METRICS = ["relay_copies", "one_way_copies", "withheld_copies", "messages_published", "payload_bytes", "net_bytes",
                   "net_bytes_per_message", "amplification", "duplicates_per_receiver", "publisher_busy_ms"]
COST_METRICS = ["wall_s", "peak_memory_gib"]


def point_keys(study: Study) -> list[str]:
    """The columns that name a point of the study: the swept key, if any, and the message size."""
    return ([study.sweep.name] if study.sweep else []) + ["size_bytes"]


def run_columns(run_dir: Path) -> dict:
    return point_columns(loader.load(run_dir / layout.RUN_CONFIG))


def run_table(run_dir: Path, file: str) -> pd.DataFrame:
    """One of a run's tables (layout.RECEIPTS, PUBLISHES, SENDS, AMPLIFICATION) with its run columns."""
    return pd.read_parquet(run_dir / file).assign(**run_columns(run_dir))


def run_metrics(run_dir: Path) -> dict:
    """Latency, hops, cost and (with a packet capture) bandwidth of one validated run; warm-up
    messages are left out of latency and amplification and counted in the bytes published."""
    study = loader.load(run_dir / layout.RUN_CONFIG)
    receipts = pd.read_parquet(run_dir / layout.RECEIPTS)
    measured = stats.measured(receipts)
    sends = pd.read_parquet(run_dir / layout.SENDS)
    latency = measured["latency_ms"]
    cost = read_stats(run_dir)
    row = {
        **point_columns(study),
        "size_bytes": study.message_sizes[0],
        "messages": measured["msg_hash"].nunique(),
        "receipts": len(measured),
        "latency_min_ms": latency.min(),
        "latency_mean_ms": latency.mean(),
        "latency_p50_ms": latency.quantile(0.50),
        "latency_p95_ms": latency.quantile(0.95),
        "latency_max_ms": latency.max(),
        "hops_mean": measured["hop"].mean(),
        "hops_max": measured["hop"].max(),
        "gossip_only_receivers": len(gossip.gossip_only_receivers(run_dir)),
        "relay_copies": bandwidth.relay_copies(sends, measured),
        "one_way_copies": bandwidth.one_way_copies(sends, receipts, measured),
        "copies_to_publisher": bandwidth.copies_to_publisher(sends, measured),
        "withheld_copies": withheld_copies(run_dir, measured),
        **delivery(run_dir),
        "wall_s": cost.wall_seconds,
        "peak_memory_gib": cost.memory_bytes / 2**30,
        "memory_measure": cost.memory_measure,
    }
    if study.traffic_capture:
        row.update(bandwidth.run_cost(run_dir, study))
    if study.spam.active:
        row.update(spam.run_metrics(run_dir))
    return row


def withheld_copies(run_dir: Path, measured: pd.DataFrame) -> float:
    """Copies withheld per measured message; NaN for a build that does not log them (without nwaku
    patch 0016), where none logged does not mean none withheld."""
    patches = json.loads((run_dir / layout.PROVENANCE).read_text())["nwaku"]["patches"] or []
    if not any(patch["file"].startswith("0016") for patch in patches):
        return math.nan
    return bandwidth.withheld_copies(pd.read_parquet(run_dir / layout.WITHHELD), measured)


def delivery(run_dir: Path) -> dict:
    """Of every message's expected receipts (validation.json): the share delivered, and the share
    delivered to nodes that were up and back in the network (churn leaves some away or rejoining)."""
    counts = json.loads((run_dir / layout.VALIDATION).read_text())["counts"]
    expected = counts["receipts_expected"]
    excused = counts.get("receipts_missed_away", 0) + counts.get("receipts_missed_rejoining", 0)
    lost = counts.get("receipts_lost", expected - counts["receipts"])  # runs validated before churn
    return {"delivery": counts["receipts"] / expected, "delivery_when_up": (expected - excused - lost) / (expected - excused)}


def runs_table(run_dirs: list[Path], keys: list[str]) -> pd.DataFrame:
    return pd.DataFrame([run_metrics(run_dir) for run_dir in run_dirs]).sort_values(keys + ["seed"], ignore_index=True)


def ci95_half_width(values: pd.Series) -> float:
    """Half the width of the 95 % confidence interval of the mean; NaN for a single value."""
    n = values.count()
    if n < 2:
        return math.nan
    return student_t.ppf(0.975, n - 1) * values.std(ddof=1) / math.sqrt(n)


def points_table(runs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Tidy: per point and metric, the number of runs, their mean and its 95 % confidence interval."""
    # a metric none of the runs has (withheld copies of builds that do not log them) is left out
    metrics = [m for m in LATENCY_METRICS + TRAFFIC_METRICS + spam.METRICS + COST_METRICS if m in runs and runs[m].notna().any()]
    rows = []
    for point, group in runs.groupby(keys):
        at = stats.point_at(keys, point)
        for metric in metrics:
            values = group[metric].astype(float)
            half = ci95_half_width(values)
            rows.append({**at, "metric": metric, "runs": int(values.count()),
                         "mean": values.mean(), "ci95_low": values.mean() - half, "ci95_high": values.mean() + half})
    return pd.DataFrame(rows)


def wide(points: pd.DataFrame, keys: list[str], metrics: list[str]) -> pd.DataFrame:
    """One row per point: each metric's mean and '± half width' of its interval (NaN with one repetition)."""
    table = points[points["metric"].isin(metrics)].set_index([*keys, "metric"])[["mean", "ci95_high"]].unstack("metric")
    out = pd.DataFrame(index=table.index)
    for metric in metrics:
        if ("mean", metric) in table:
            out[metric] = table[("mean", metric)]
            out[f"{metric} ±"] = table[("ci95_high", metric)] - table[("mean", metric)]
    return out.reset_index()
