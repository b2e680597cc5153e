"""Who closed the run's long-lived connections, and whether a failed keep-alive ping came first.

nwaku's keep-alive pings peers every 10 s over a new stream (`pingPeer`, nwaku's peer manager
gives the dial 10 s). nim-libp2p's dialer, when such a dial fails or is cancelled, closes the
connection it reused for the stream, not only the stream. So on a loaded connection, whose ping
waits behind a backlog for longer than the dial's timeout, the keep-alive closes the connection.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from waku_shadow import layout
from waku_shadow.errors import LogError
from waku_shadow.parse import node_logs, pcap

PING_DIAL_FAILED = "pingPeer: failed dialing peer"
COLUMNS = ["closer", "peer", "opened_s", "closed_s", "ping_dial_failed_s"]


def ping_dial_failures(log: Path, host_of: dict[str, str]) -> pd.DataFrame:
    """The keep-alive ping dials a node logged as failed: peer (host) and time_ns."""
    rows = [{"peer": host_of.get(record["peerId"], record["peerId"]), "time_ns": node_logs.record_time_ns(record["ts"])}
            for record in node_logs.events(log, (PING_DIAL_FAILED,))]
    return pd.DataFrame(rows, columns=["peer", "time_ns"])


def connection_closes(run_dir: Path, open_at_s: float, hosts: list[str] | None = None) -> pd.DataFrame:
    """Each connection open at ``open_at_s`` that a host (of ``hosts``, by default all)
    closed first: closer, peer, opened_s, closed_s (when the closer's FIN left it: after whatever it
    still had queued), and ping_dial_failed_s, the closer's latest failed ping dial of that peer
    while the connection was open (NaN if none)."""
    identities = pd.read_csv(run_dir / layout.IDENTITIES)
    unknown = sorted(set(hosts or []) - set(identities["host"]))
    if unknown:
        raise LogError(f"{run_dir}: no host {', '.join(unknown)} in {layout.IDENTITIES}")
    host_of_ip = dict(zip(identities["ip"], identities["host"]))
    host_of_peer = node_logs.short_id_map(identities)
    chosen = identities if hosts is None else identities[identities["host"].isin(hosts)]
    logs = node_logs.host_logs(run_dir, list(chosen["host"]))
    frames = []
    for host, ip in zip(chosen["host"], chosen["ip"]):
        closes = pcap.closed_connections(pcap.host_capture(run_dir, host), ip)
        closes = closes[(closes["opened_ns"] < open_at_s * 1e9) & (closes["closed_ns"] > open_at_s * 1e9)]
        failures = ping_dial_failures(logs[host], host_of_peer)
        peer = closes["peer_ip"].map(lambda address: host_of_ip.get(address, address))
        failed_ns = [
            failures.loc[(failures["peer"] == to) & failures["time_ns"].between(opened, closed), "time_ns"].max()
            for to, opened, closed in zip(peer, closes["opened_ns"], closes["closed_ns"])
        ]
        frames.append(pd.DataFrame({
            "closer": host, "peer": peer, "opened_s": closes["opened_ns"] / 1e9, "closed_s": closes["closed_ns"] / 1e9,
            "ping_dial_failed_s": np.array(failed_ns, dtype=float) / 1e9,
        }))
    closes = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    return closes.sort_values(["closed_s", "closer"], ignore_index=True)[COLUMNS]


def sent_after_last_receipt(run_dir: Path, first_publish_s: float) -> tuple[float, float, float]:
    """The run's last receipt (s), and the bytes all nodes sent in the capture's whole intervals after
    it, also as a share of what they sent from ``first_publish_s`` on: copies of messages every node
    already had, and control traffic."""
    last_receipt_s = pd.read_parquet(run_dir / layout.RECEIPTS, columns=["received_ns"])["received_ns"].max() / 1e9
    sent = pd.read_parquet(run_dir / layout.TRAFFIC, columns=["time_s", "bytes_out"]).groupby("time_s")["bytes_out"].sum()
    after = sent[sent.index >= np.ceil(last_receipt_s)].sum()
    return last_receipt_s, float(after), float(after / sent[sent.index >= first_publish_s].sum())


def summary(closes: pd.DataFrame, open_at_s: float) -> str:
    after_ping = closes["ping_dial_failed_s"].notna()
    text = (f"{len(closes)} connections open at {open_at_s:g} s were closed later by one of their ends; "
            f"{after_ping.sum()} of them right after the closer's keep-alive ping dial of that peer had failed")
    if after_ping.any():
        text += (f" (the first failure at {closes.loc[after_ping, 'ping_dial_failed_s'].min():.3f} s, "
                 f"the longest wait from failure to FIN {(closes['closed_s'] - closes['ping_dial_failed_s']).max():.3f} s)")
    return text
