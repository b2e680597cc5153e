"""Equation 1's predictions beside every receipt, and the residuals (simulated - predicted)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from waku_shadow import layout
from waku_shadow.analyse import bandwidth, model, stats, study_tables
from waku_shadow.configuration import loader
from waku_shadow.configuration.study import Study

MODELS = {
    "eq1_ms": "Equation 1 as written",
    "eq1_uplink_ms": "+ uplink serialisation",
    "eq1_window_ms": "+ uplink + flow-control window",
}


def run_receipts(run_dir: Path) -> pd.DataFrame:
    """One run's receipts with Equation 1's predictions and their residuals (simulated - predicted)."""
    receipts = pd.read_parquet(run_dir / layout.RECEIPTS)
    sends = pd.read_parquet(run_dir / layout.SENDS)
    study = loader.load(run_dir / layout.RUN_CONFIG)
    uplink_bps, downlink_bps = edge_bandwidths_bps(run_dir, study, receipts)
    receipts = receipts.join(model.predict(receipts, sends, study, one_way_ns=edge_one_way_ns(run_dir, study, receipts),
                                           uplink_bps=uplink_bps, downlink_bps=downlink_bps))
    for column in MODELS:
        receipts[column.replace("_ms", "_residual_ms")] = receipts["latency_ms"] - receipts[column]
    return receipts.assign(**study_tables.run_columns(run_dir))


def edge_one_way_ns(run_dir: Path, study: Study, receipts: pd.DataFrame):
    """The one-way latency of every receipt's last edge (from-peer to receiver); None in a single place."""
    if study.locations is None:
        return None
    where = pd.read_csv(run_dir / layout.IDENTITIES).set_index("host")["location"]
    pairs = zip(where.reindex(receipts["from_host"]), where.reindex(receipts["receiver"]))
    return np.array([float(study.locations.one_way_ns(a, b)) for a, b in pairs])


def edge_bandwidths_bps(run_dir: Path, study: Study, receipts: pd.DataFrame):
    """The from-peer's uplink and the receiver's downlink of every receipt's last edge; (None, None)
    without bandwidth classes."""
    if not study.bandwidth_classes:
        return None, None
    uplinks, downlinks = bandwidth.host_bandwidths_bps(run_dir, study)
    return (uplinks.reindex(receipts["from_host"]).to_numpy(dtype=float),
            downlinks.reindex(receipts["receiver"]).to_numpy(dtype=float))


def residual_summary(receipts: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Median |residual|, p95 and worst residual (ms) of every model, warm-up excluded."""
    measured = stats.measured(receipts)
    rows = []
    for keys, group in measured.groupby(by):
        keys = keys if isinstance(keys, tuple) else (keys,)
        for column, name in MODELS.items():
            residual = group[column.replace("_ms", "_residual_ms")]
            worst = residual.loc[residual.abs().idxmax()]
            rows.append(
                {
                    **dict(zip(by, keys)),
                    "model": name,
                    "receipts": len(group),
                    "median_abs_residual_ms": residual.abs().median(),
                    "p95_residual_ms": residual.quantile(0.95),
                    "worst_residual_ms": worst,
                }
            )
    return pd.DataFrame(rows)
