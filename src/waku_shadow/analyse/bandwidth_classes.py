"""Relay nodes in bandwidth classes (network.bandwidth_classes): latency by the receiver's class and by
the publisher's, and the bytes a node of each class carries."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.analyse import stats
from waku_shadow.analyse.light_clients import bytes_per_node
from waku_shadow.analyse.study_tables import run_columns

SIDES = ("receiver", "publisher")  # whose class a row groups the receipts by
HISTOGRAM_BIN_MS = 5.0


def classes_of(run_dir: Path) -> pd.Series:
    """Each relay node's bandwidth class, by host."""
    return pd.read_csv(run_dir / layout.IDENTITIES, keep_default_na=False).set_index("host")["bandwidth_class"]


def class_receipts(run_dir: Path) -> pd.DataFrame:
    """The measured receipts of one run with the receiver's and the publisher's bandwidth class, and the
    run's columns."""
    classes = classes_of(run_dir)
    receipts = stats.measured(pd.read_parquet(run_dir / layout.RECEIPTS))
    return receipts.assign(receiver_class=receipts["receiver"].map(classes), publisher_class=receipts["publisher"].map(classes),
                           **run_columns(run_dir))


def by_side(receipts: pd.DataFrame) -> pd.DataFrame:
    """The receipts twice, once with `side` receiver and `bandwidth_class` the receiver's, once with
    `side` publisher and the publisher's: the long form latency_by_class and the histogram group."""
    return pd.concat([receipts.assign(side=side, bandwidth_class=receipts[f"{side}_class"], node=receipts[side])
                      for side in SIDES], ignore_index=True)


def latency_by_class(receipts: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per point, side (the receiver's class or the publisher's) and class, the point's runs pooled: the
    (run, node) pairs of that side and class, the (run, message) pairs, the receipts, p50 / p95 / max
    latency and the mean hops a receipt took."""
    long = by_side(receipts)
    grouped = long.assign(run_node=long["run"] + "/" + long["node"], run_message=long["run"] + "/" + long["message"].astype(str)
                          ).groupby([*keys, "side", "bandwidth_class"], sort=False)
    table = grouped.agg(node_runs=("run_node", "nunique"), message_runs=("run_message", "nunique"),
                        receipts=("latency_ms", "size"), p50_ms=("latency_ms", "median"),
                        p95_ms=("latency_ms", lambda latency: latency.quantile(0.95)), max_ms=("latency_ms", "max"),
                        hops_mean=("hop", "mean"))
    return table.reset_index().sort_values([*keys, "side", "bandwidth_class"], key=_side_order, ignore_index=True)


def latency_histogram(receipts: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """stats.latency_histogram per point, side and class, to HISTOGRAM_BIN_MS (wider than the study's
    own 1 ms, to keep the summary small): enough to draw each class's latency ECDF."""
    return stats.latency_histogram(by_side(receipts), (*keys, "side", "bandwidth_class"), HISTOGRAM_BIN_MS)


def bytes_by_class(run_dir: Path) -> pd.DataFrame:
    """Per bandwidth class, in one run with a packet capture: its nodes, and the mean bytes a node
    received and sent from the first publish on (idle traffic subtracted)."""
    return bytes_per_node(run_dir, classes_of(run_dir).rename_axis("host").reset_index(), "bandwidth_class")


def _side_order(column: pd.Series) -> pd.Series:
    return column.map(SIDES.index) if column.name == "side" else column
