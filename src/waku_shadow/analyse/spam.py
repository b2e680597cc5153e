"""Spam against RLN (spam.*, nwaku patch 0011): how far the spammers' messages get, the bytes they
cost, and when gossipsub's scoring has the spammers' peers prune and disconnect them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.render.schedule import read as read_schedule

METRICS = [
    "spam_published", "spam_over_limit", "spam_reach_mean", "spam_reach_max", "spam_rejected",
    "spam_payload_bytes_sent", "spammer_peers", "pruned_share", "disconnected_share",
    "prune_s_median", "disconnect_s_median", "disconnect_s_max",
]


def over_limit(schedule: pd.DataFrame) -> pd.Series:
    """The spam messages beyond RLN's rate limit: those repeating a nullifier of their publisher's
    epoch (the first message with a nullifier is within the limit), or all of them when their proofs
    are invalid."""
    spam = schedule["spam"]
    repeated = schedule.duplicated(["publisher", "rln_proof"], keep="first")
    invalid = schedule["rln_proof"].str.startswith("rln:0:")
    return spam & (repeated | invalid)


def run_metrics(run_dir: Path) -> dict:
    """One run's spam: messages published and over the limit; the nodes an over-limit message
    reaches (mean, max); rejections by the RLN stand-in; the payload bytes the spammers' messages
    were sent with, over every link; and of the spammers' peers the share that pruned and that
    disconnected a spammer, and how long after its first over-limit message (median, max)."""
    schedule = read_schedule(run_dir)
    if not schedule["spam"].any():
        return {}
    publishes = pd.read_parquet(run_dir / layout.PUBLISHES)
    receipts = pd.read_parquet(run_dir / layout.SPAM_RECEIPTS)
    events = pd.read_parquet(run_dir / layout.RLN_EVENTS)
    sends = pd.read_parquet(run_dir / layout.SENDS)
    links = pd.read_csv(run_dir / layout.LINKS)

    spam = schedule[schedule["spam"]].assign(over_limit=over_limit(schedule))
    published = spam[spam["msg_hash"].isin(publishes.loc[publishes["publish_ns"].notna(), "msg_hash"])]
    over = published[published["over_limit"]]
    reach = receipts.groupby("msg_hash")["receiver"].nunique().reindex(over["msg_hash"], fill_value=0)
    spam_sends = sends[sends["msg_hash"].isin(spam["msg_hash"])].merge(spam[["msg_hash", "size_bytes"]], on="msg_hash")
    first_over = publishes.set_index("msg_hash")["publish_ns"].reindex(over["msg_hash"]).groupby(over["publisher"].to_numpy()).min()

    peers, pruned, disconnected = 0, [], []
    for spammer in spam["publisher"].unique():
        neighbours = set(links.loc[links["dialer"] == spammer, "dialed"]) | set(links.loc[links["dialed"] == spammer, "dialer"])
        peers += len(neighbours)
        start = first_over.get(spammer)
        about = events[(events["peer_host"] == spammer) & events["host"].isin(neighbours)]
        for kind, found in (("pruned", pruned), ("disconnected", disconnected)):
            first = about[about["event"] == kind].groupby("host")["time_ns"].min()
            found += [] if start is None else list((first - start) / 1e9)
    return {
        "spam_published": len(published),
        "spam_over_limit": len(over),
        "spam_reach_mean": reach.mean() if len(reach) else float("nan"),
        "spam_reach_max": reach.max() if len(reach) else float("nan"),
        "spam_rejected": int((events["event"] == "rejected").sum()),
        "spam_payload_bytes_sent": int(spam_sends["size_bytes"].sum()),
        "spammer_peers": peers,
        "pruned_share": len(pruned) / peers,
        "disconnected_share": len(disconnected) / peers,
        "prune_s_median": pd.Series(pruned, dtype=float).median(),
        "disconnect_s_median": pd.Series(disconnected, dtype=float).median(),
        "disconnect_s_max": pd.Series(disconnected, dtype=float).max(),
    }
