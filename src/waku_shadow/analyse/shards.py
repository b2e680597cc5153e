"""A cluster of several shards (network.shards): latency per shard, and what a node carries for the
number of shards it serves."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.analyse import stats
from waku_shadow.analyse.light_clients import bytes_per_node
from waku_shadow.analyse.study_tables import run_columns
from waku_shadow.render import shards


def served(run_dir: Path) -> dict[str, frozenset[int]]:
    """Each relay node of one run: the shards it serves."""
    identities = pd.read_csv(run_dir / layout.IDENTITIES, keep_default_na=False)
    return shards.served_by_host(identities, list(identities.loc[identities["role"] != "light", "host"]))


def latency_by_shard(run_dir: Path) -> pd.DataFrame:
    """Per shard of one run: the nodes that serve it, its measured messages and their receipts, and
    p50 / p95 / max latency."""
    members = pd.Series([shard for mine in served(run_dir).values() for shard in mine]).value_counts()
    publishes = pd.read_parquet(run_dir / layout.PUBLISHES)[["message", "shard"]]
    receipts = stats.measured(pd.read_parquet(run_dir / layout.RECEIPTS)).merge(publishes, on="message")
    table = receipts.groupby("shard").agg(messages=("message", "nunique"), receipts=("receiver", "size"),
                                          p50_ms=("latency_ms", "median"),
                                          p95_ms=("latency_ms", lambda latency: latency.quantile(0.95)),
                                          max_ms=("latency_ms", "max")).reset_index()
    table.insert(1, "nodes", table["shard"].map(members).astype(int))
    return table.assign(**run_columns(run_dir))


def bytes_by_shards_served(run_dir: Path) -> pd.DataFrame:
    """Per number of shards served, in one run with a packet capture: the relay nodes serving that
    many, and the mean bytes a node received and sent from the first publish on (idle traffic
    subtracted)."""
    by_host = served(run_dir)
    hosts = pd.DataFrame({"host": list(by_host), "shards_served": [len(mine) for mine in by_host.values()]})
    return bytes_per_node(run_dir, hosts, "shards_served")
