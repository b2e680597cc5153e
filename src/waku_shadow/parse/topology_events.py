"""A discv5 network's graph as its nodes logged it (nwaku patch 0041, topology: discv5):

* ``peer connected`` (with ``direction``, Inbound or Outbound) and ``peer disconnected``: nwaku's
  peer manager saw a peer join or leave;
* ``relay peer limit reached, evicting peer``: it dropped an inbound relay peer above its target;
* ``mesh peer grafted`` and ``mesh peer pruned``: gossipsub added a peer to a topic's mesh or took
  it out (pruned also for a peer that was not in that mesh).

Each line names the peer's full ID; its time is the record's timestamp (millisecond resolution).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from waku_shadow.errors import LogError

EVENTS = {
    "peer connected": "connected",
    "peer disconnected": "disconnected",
    "relay peer limit reached, evicting peer": "evicted",
    "mesh peer grafted": "grafted",
    "mesh peer pruned": "pruned",
}
READ = tuple(EVENTS)
TABLE = "topology_events"
COLUMNS = ["host", "event", "peer_id", "peer_host", "topic", "direction", "time_ns"]


def row(host: str, record: dict, time_ns: int) -> dict:
    return {"host": host, "event": EVENTS[record["msg"]], "peer_id": record["peer_id"], "topic": record.get("topic"),
            "direction": record.get("direction"), "time_ns": time_ns}


def table(rows: list[dict], identities: pd.DataFrame, run_dir: Path) -> pd.DataFrame:
    """The run's topology events in time order, each peer named by its host; a peer ID that is none
    of the run's nodes is an error (the graph would lose a node)."""
    events = pd.DataFrame(rows, columns=[c for c in COLUMNS if c != "peer_host"])
    host_of_peer = dict(zip(identities["peer_id"], identities["host"]))
    peer_host = events["peer_id"].map(host_of_peer)
    strangers = events.loc[peer_host.isna(), "peer_id"].unique()
    if len(strangers):
        raise LogError(f"{run_dir}: topology lines name {len(strangers)} peer IDs that are no node of the run, "
                       f"e.g. {strangers[0]}")
    return (events.assign(peer_host=peer_host)[COLUMNS]
            .sort_values(["time_ns", "host"], kind="stable", ignore_index=True))
