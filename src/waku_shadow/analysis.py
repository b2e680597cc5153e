"""Why the latencies look as they do: hops, the model's residuals, per-hop times, first hops."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import config as cfg
from . import model, paper

MODELS = {
    "eq1_ms": "Equation 1 as written",
    "eq1_uplink_ms": "+ uplink serialisation",
    "eq1_window_ms": "+ uplink + flow-control window",
}


def run_receipts(run_dir: Path) -> pd.DataFrame:
    """One run's receipts with Equation 1's predictions and their residuals (simulated - predicted)."""
    receipts = pd.read_parquet(run_dir / "receipts.parquet")
    sends = pd.read_parquet(run_dir / "sends.parquet")
    study = cfg.load(run_dir / "config.yaml")
    receipts = receipts.join(model.predict(receipts, sends, study, one_way_ns=edge_one_way_ns(run_dir, study, receipts)))
    for column in MODELS:
        receipts[column.replace("_ms", "_residual_ms")] = receipts["latency_ms"] - receipts[column]
    return receipts.assign(run=run_dir.name)


def edge_one_way_ns(run_dir: Path, study: cfg.Study, receipts: pd.DataFrame):
    """The one-way latency of every receipt's last edge (from-peer to receiver); None in a single place."""
    if study.locations is None:
        return None
    where = pd.read_csv(run_dir / "identities.csv").set_index("host")["location"]
    pairs = zip(where.reindex(receipts["from_host"]), where.reindex(receipts["receiver"]))
    return np.array([float(study.locations.one_way_ns(a, b)) for a, b in pairs])


def residual_summary(receipts: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Median |residual|, p95 and worst residual (ms) of every model, warm-up excluded."""
    measured = receipts[~receipts["warmup"]]
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


def per_hop_table(receipts: pd.DataFrame, publishes: pd.DataFrame, verification_ms: dict[int, float]) -> pd.DataFrame:
    """The paper's Table 3 for a simulated network: mean L_g, and per hop position mean L_t and L_v.

    A hop's time is the child's receipt minus its parent's (the publish, for the first
    hop); L_v is the configured validation delay of the size and L_t the rest.
    ``verification_ms`` maps a size to its L_v in ms.
    """
    measured = receipts[~receipts["warmup"]].copy()
    received = measured.set_index(["msg_hash", "receiver"])["received_ns"]
    parent_received = received.reindex(list(zip(measured["msg_hash"], measured["from_host"]))).to_numpy()
    first = (measured["from_host"] == measured["publisher"]).to_numpy()
    parent_ns = pd.Series(parent_received, index=measured.index).where(~first, measured["publish_ns"])
    measured["hop_ms"] = (measured["received_ns"] - parent_ns) / 1e6
    rows = []
    generation = publishes[~publishes["warmup"]]
    for size, group in measured.groupby("size_bytes"):
        lg = ((generation.loc[generation["size_bytes"] == size, "publish_ns"]
               - generation.loc[generation["size_bytes"] == size, "intent_ns"]) / 1e6).mean()
        rows.append({"size_bytes": size, "component": "L_g", "hop": 0, "mean_ms": lg})
        lv = verification_ms[size]
        for hop, at_hop in group.groupby("hop"):
            rows.append({"size_bytes": size, "component": "L_t", "hop": hop, "mean_ms": at_hop["hop_ms"].mean() - lv})
            rows.append({"size_bytes": size, "component": "L_v", "hop": hop, "mean_ms": lv})
        rows.append({"size_bytes": size, "component": "total", "hop": int(group["hop"].max()), "mean_ms": group["latency_ms"].mean()})
    return pd.DataFrame(rows)


def first_hops(receipts: pd.DataFrame, sends: pd.DataFrame) -> pd.DataFrame:
    """Per message: peers the publisher sent to (flood publish) and receivers whose first copy came from it."""
    publisher_sends = sends.merge(
        receipts[["msg_hash", "publisher", "message", "size_bytes", "warmup"]].drop_duplicates("msg_hash"),
        left_on=["msg_hash", "sender"],
        right_on=["msg_hash", "publisher"],
    )
    sent = publisher_sends.groupby(["msg_hash", "message", "size_bytes", "warmup"]).size().rename("publisher_sent_to")
    direct = receipts[receipts["hop"] == 1].groupby("msg_hash").size().rename("first_hop_receivers")
    return sent.reset_index().join(direct, on="msg_hash")


def multihost_table3(run_dirs: list[Path]) -> pd.DataFrame:
    """The paper's Table 3 beside a cascade over locations; empty for any other study.

    A cascade's node i is the line's i-th node, so the locations of the nodes in
    index order are the path a message travels.
    """
    study = cfg.load(run_dirs[0] / "config.yaml")
    if study.topology != "cascade" or study.locations is None:
        return pd.DataFrame()
    path = list(pd.read_csv(run_dirs[0] / "identities.csv")["location"])
    receipts = pd.concat([pd.read_parquet(run / "receipts.parquet") for run in run_dirs], ignore_index=True)
    publishes = pd.concat([pd.read_parquet(run / "publishes.parquet") for run in run_dirs], ignore_index=True)
    return paper.table3_comparison(receipts, publishes, path, study)
