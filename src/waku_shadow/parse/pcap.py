"""Bytes on the wire per node, and the connections each node closed, from the packet captures Shadow writes (shadow.traffic_capture).

Shadow 3 writes one pcap per host interface, timestamped in simulated time, with raw IP
packets (link type 101). A record's original length is the IP packet's: payload plus
IP and TCP headers. Only the headers are captured; the lengths are what is counted.
"""

from __future__ import annotations

import gzip
import struct
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from waku_shadow import layout
from waku_shadow.errors import LogError

CAPTURE = "eth0.pcap.gz"
PCAP_MAGIC_US = 0xA1B2C3D4
LINKTYPE_RAW = 101
GLOBAL_HEADER = struct.Struct("<IHHiIII")
RECORD_HEADER = struct.Struct("<IIII")
IPPROTO_TCP = 6
IPPROTO_UDP = 17
TCP_PORTS = struct.Struct(">HH")
TCP_FLAGS_OFFSET = 13
TCP_FIN = 0x01
TCP_SYN_FIN_RST = 0x07


def records(path: Path) -> Iterator[tuple[int, bytes, int]]:
    """Each packet of a capture: its simulated time (ns), the captured bytes (IP packet headers) and its
    original length."""
    with gzip.open(path, "rb") as handle:
        data = handle.read()
    if len(data) < GLOBAL_HEADER.size:
        raise LogError(f"{path}: too short for a pcap header ({len(data)} bytes)")
    magic, _, _, _, _, _, link = GLOBAL_HEADER.unpack_from(data)
    if magic != PCAP_MAGIC_US or link != LINKTYPE_RAW:
        raise LogError(f"{path}: not a little-endian raw-IP pcap (magic {magic:#x}, link type {link})")
    offset = GLOBAL_HEADER.size
    while offset < len(data):
        if offset + RECORD_HEADER.size > len(data):
            raise LogError(f"{path}: truncated packet record at byte {offset}")
        seconds, micros, captured, original = RECORD_HEADER.unpack_from(data, offset)
        packet = data[offset + RECORD_HEADER.size : offset + RECORD_HEADER.size + captured]
        if len(packet) < 20 or len(packet) < captured:
            raise LogError(f"{path}: truncated packet at byte {offset}")
        yield seconds * 1_000_000_000 + micros * 1000, packet, original
        offset += RECORD_HEADER.size + captured


def host_capture(run_dir: Path, host: str) -> Path:
    """A host's capture in a run folder; a run made without one is named."""
    capture = run_dir / layout.LOGS / host / CAPTURE
    if not capture.exists():
        raise LogError(f"{capture}: no packet capture; was the run made with shadow.traffic_capture: true?")
    return capture


def tcp_segment(packet: bytes) -> bytes | None:
    """The TCP header (and what was captured after it) of an IP packet; None for another protocol."""
    return packet[(packet[0] & 0x0F) * 4 :] if packet[9] == IPPROTO_TCP else None


def udp_bytes(path: Path, own_ip: str) -> tuple[int, int]:
    """The bytes of UDP packets (IP length) a host's capture holds: received, sent."""
    received = sent = 0
    for _, packet, original in records(path):
        if packet[9] != IPPROTO_UDP:
            continue
        if _ip(packet[12:16]) == own_ip:
            sent += original
        else:
            received += original
    return received, sent


def _ip(address: bytes) -> str:
    return ".".join(map(str, address))


def read_pcap(path: Path) -> pd.DataFrame:
    """One row per packet: time_ns, src, dst (dotted IPv4) and bytes (the IP packet's length)."""
    times, sources, destinations, lengths = [], [], [], []
    for time_ns, packet, original in records(path):
        times.append(time_ns)
        sources.append(packet[12:16])
        destinations.append(packet[16:20])
        lengths.append(original)
    return pd.DataFrame(
        {
            "time_ns": np.array(times, dtype="int64"),
            "src": [_ip(ip) for ip in sources],
            "dst": [_ip(ip) for ip in destinations],
            "bytes": np.array(lengths, dtype="int64"),
        }
    )


def closed_connections(path: Path, own_ip: str) -> pd.DataFrame:
    """The TCP connections in a host's capture that the host closed first (its FIN went out before
    the peer's): opened_ns (the connection's first packet), closed_ns (that FIN), peer_ip."""
    opened: dict[frozenset, int] = {}
    finished: set[frozenset] = set()
    rows = []
    for time_ns, packet, _ in records(path):
        tcp = tcp_segment(packet)
        if tcp is None:
            continue
        source, destination = _ip(packet[12:16]), _ip(packet[16:20])
        source_port, destination_port = TCP_PORTS.unpack_from(tcp)
        connection = frozenset({(source, source_port), (destination, destination_port)})
        opened.setdefault(connection, time_ns)
        if not tcp[TCP_FLAGS_OFFSET] & TCP_FIN or connection in finished:
            continue
        finished.add(connection)
        if source == own_ip:
            rows.append({"opened_ns": opened[connection], "closed_ns": time_ns, "peer_ip": destination})
    return pd.DataFrame(rows, columns=["opened_ns", "closed_ns", "peer_ip"])


def node_traffic(run_dir: Path, interval_ns: int) -> pd.DataFrame:
    """Tidy bytes per node and interval: node, time_s (the interval's start), bytes_in, bytes_out."""
    identities = pd.read_csv(run_dir / layout.IDENTITIES)
    frames = []
    for host, ip in zip(identities["host"], identities["ip"]):
        packets = read_pcap(host_capture(run_dir, host))
        bucket = packets["time_ns"] // interval_ns * interval_ns
        outgoing = packets["src"] == ip
        frames.append(
            pd.DataFrame(
                {
                    "node": host,
                    "time_s": bucket / 1e9,
                    "bytes_in": packets["bytes"].where(~outgoing, 0),
                    "bytes_out": packets["bytes"].where(outgoing, 0),
                }
            )
            .groupby(["node", "time_s"], as_index=False)
            .sum()
        )
    return pd.concat(frames, ignore_index=True)


def without_idle(traffic: pd.DataFrame, idle_from_s: float, first_publish_s: float, interval_s: float) -> pd.DataFrame:
    """Subtract each node's idle rate, measured between ``idle_from_s`` and the first publish.

    The idle rate per interval (gossipsub heartbeats, pings; zero for a node that sent and
    received nothing) is the node's bytes in that window over the number of intervals in
    it; what is left from the first publish on is what the messages cost.
    """
    intervals = (first_publish_s - idle_from_s) / interval_s
    if intervals < 1:
        raise LogError(
            f"no idle time to measure between {idle_from_s} s and the first publish at {first_publish_s} s; "
            f"give shadow.bootstrap more time"
        )
    idle_window = traffic[(traffic["time_s"] >= idle_from_s) & (traffic["time_s"] < first_publish_s)]
    idle = idle_window.groupby("node")[["bytes_in", "bytes_out"]].sum() / intervals
    busy = traffic[traffic["time_s"] >= first_publish_s].reset_index(drop=True)
    for column in ("bytes_in", "bytes_out"):
        busy[column] = busy[column] - busy["node"].map(idle[column]).fillna(0)
    return busy
