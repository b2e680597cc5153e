"""Copies pulled by gossip (IHAVE at a heartbeat, then IWANT) rather than pushed by a mesh peer."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.analyse import stats

# An eager push leaves a node in the same instant its copy arrived; a copy pulled by gossip (IHAVE at
# a heartbeat, IWANT, the reply) leaves its sender a round trip or more later.
GOSSIP_WAIT_MS = 50.0


def pulled_by_gossip(receipts: pd.DataFrame, sends: pd.DataFrame) -> pd.Series:
    """Whether each receipt's copy was pulled by gossip: its sender (the receipt's from_host) sent it
    more than GOSSIP_WAIT_MS after it had the message itself (its own receipt, or the publish).
    Aligned with ``receipts``; both tables of one run."""
    received = receipts.set_index(["msg_hash", "receiver"])["received_ns"]
    had = pd.Series(received.reindex(list(zip(receipts["msg_hash"], receipts["from_host"]))).to_numpy(), index=receipts.index)
    had = had.where(receipts["from_host"] != receipts["publisher"], receipts["publish_ns"])
    sent = sends.groupby(["msg_hash", "sender", "to_host"])["sent_ns"].min()
    sent_ns = pd.Series(sent.reindex(list(zip(receipts["msg_hash"], receipts["from_host"], receipts["receiver"]))).to_numpy(),
                        index=receipts.index)
    return (sent_ns - had) / 1e6 > GOSSIP_WAIT_MS


def gossip_only_receivers(run_dir: Path) -> pd.DataFrame:
    """The receivers of a run that got every measured message by gossip, none by a mesh peer's push
    (a node in no peer's mesh): receiver, messages, and their fastest and slowest latency (ms)."""
    receipts = stats.measured(pd.read_parquet(run_dir / layout.RECEIPTS))
    pulled = pulled_by_gossip(receipts, pd.read_parquet(run_dir / layout.SENDS))
    by_receiver = receipts.assign(pulled=pulled).groupby("receiver").agg(
        messages=("msg_hash", "size"), pulled=("pulled", "sum"),
        fastest_ms=("latency_ms", "min"), slowest_ms=("latency_ms", "max"))
    only = by_receiver[by_receiver["pulled"] == by_receiver["messages"]]
    return only.drop(columns="pulled").reset_index()
