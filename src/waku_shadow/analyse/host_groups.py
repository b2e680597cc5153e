"""Relay nodes in groups that identities.csv names (GROUPS: the bandwidth class, the location): latency
by the receiver's group and by the publisher's, and the bytes a node of each group carries."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.analyse import stats
from waku_shadow.analyse.light_clients import bytes_per_node
from waku_shadow.analyse.study_tables import run_columns

GROUPS = ("bandwidth_class", "location")  # identities.csv's columns that group the relay nodes, when a study has them
SIDES = ("receiver", "publisher")  # whose group a row groups the receipts by
HISTOGRAM_BIN_MS = 5.0


def groups_of(run_dir: Path) -> pd.DataFrame:
    """Each relay node's groups of GROUPS that the run has, by host."""
    identities = pd.read_csv(run_dir / layout.IDENTITIES, keep_default_na=False).set_index("host")
    return identities[[group for group in GROUPS if group in identities]]


def group_receipts(run_dir: Path) -> pd.DataFrame:
    """The measured receipts of one run with the receiver's and the publisher's groups (receiver_location,
    publisher_bandwidth_class, ...) and the run's columns."""
    groups = groups_of(run_dir)
    receipts = stats.measured(pd.read_parquet(run_dir / layout.RECEIPTS))
    named = {f"{side}_{group}": receipts[side].map(groups[group]) for group in groups for side in SIDES}
    return receipts.assign(**named, **run_columns(run_dir))


def by_side(receipts: pd.DataFrame, group: str) -> pd.DataFrame:
    """The receipts twice, once with `side` receiver and ``group`` the receiver's, once with `side`
    publisher and the publisher's: the long form latency_by and latency_histogram group."""
    return pd.concat([receipts.assign(side=side, node=receipts[side], **{group: receipts[f"{side}_{group}"]})
                      for side in SIDES], ignore_index=True)


def latency_by(receipts: pd.DataFrame, keys: list[str], group: str) -> pd.DataFrame:
    """Per point, side (the receiver's group or the publisher's) and ``group``, the point's runs pooled:
    the (run, node) pairs of that side and group, the (run, message) pairs, the receipts, p50 / p95 /
    max latency and the mean hops a receipt took."""
    long = by_side(receipts, group)
    grouped = long.assign(run_node=long["run"] + "/" + long["node"], run_message=long["run"] + "/" + long["message"].astype(str)
                          ).groupby([*keys, "side", group], sort=False)
    table = grouped.agg(node_runs=("run_node", "nunique"), message_runs=("run_message", "nunique"),
                        receipts=("latency_ms", "size"), p50_ms=("latency_ms", "median"),
                        p95_ms=("latency_ms", lambda latency: latency.quantile(0.95)), max_ms=("latency_ms", "max"),
                        hops_mean=("hop", "mean"))
    return table.reset_index().sort_values([*keys, "side", group], key=_side_order, ignore_index=True)


def latency_histogram(receipts: pd.DataFrame, keys: list[str], group: str) -> pd.DataFrame:
    """stats.latency_histogram per point, side and ``group``, to HISTOGRAM_BIN_MS (wider than the study's
    own 1 ms, to keep the summary small): enough to draw each group's latency ECDF."""
    return stats.latency_histogram(by_side(receipts, group), (*keys, "side", group), HISTOGRAM_BIN_MS)


def bytes_by(run_dir: Path, group: str) -> pd.DataFrame:
    """Per value of ``group``, in one run with a packet capture: its nodes, and the mean bytes a node
    received and sent from the first publish on (idle traffic subtracted)."""
    return bytes_per_node(run_dir, groups_of(run_dir)[group].rename_axis("host").reset_index(), group)


def _side_order(column: pd.Series) -> pd.Series:
    return column.map(SIDES.index) if column.name == "side" else column
