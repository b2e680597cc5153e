"""The paper's analytical model: Equation 2 (hops, also with a flooding publisher), Equation 1 (latency along a path)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def hmax_paper(nodes: int, degree: int) -> int:
    """Equation 2: best-topology hops to reach all nodes, ceil(log((N-1)(D-2)/D + 1) / log(D-1)); D=2 is a ring."""
    if degree < 2:
        raise ValueError("Equation 2 needs D >= 2")
    if degree == 2:
        return math.ceil((nodes - 1) / 2)
    return math.ceil(math.log((nodes - 1) * (degree - 2) / degree + 1) / math.log(degree - 1))


def best_topology(study) -> tuple[int, float]:
    """Equation 2's hops to reach all of a one-size study's nodes, and Equation 1's latency along a path
    of that many hops: L_g + hops x (one-way latency + S / bandwidth + L_v), in ms."""
    (size,) = study.message_sizes
    hops = hmax_paper(study.nodes, study.gossipsub.effective()["d"])
    bandwidth = min(study.bandwidth_up_bps, study.bandwidth_down_bps)
    per_hop_ns = transmission_ns(study.latency_ns, wire_bytes(size), bandwidth) + study.rln.verification_delay_ns(size)
    return hops, (study.rln.proof_generation_ns + hops * per_hop_ns) / 1e6


def hmax_writeup(nodes: int, degree: int) -> int:
    """The research write-up's ceil(log N / log D)."""
    return math.ceil(math.log(nodes) / math.log(degree))


def hmax_flood(nodes: int, degree: int, first_hop: int) -> int:
    """Equation 2 with the publisher's first hop reaching ``first_hop`` peers (flood publishing).

    After the first hop 1 + F nodes know the message and every later hop
    multiplies the newest ones by D-1: N_h = 1 + F((D-1)^h - 1)/(D-2). With
    F = D this is the paper's Equation 2.
    """
    if first_hop >= nodes - 1:
        return 1
    if degree == 2:
        return 1 + math.ceil((nodes - 1 - first_hop) / first_hop)
    return math.ceil(math.log((nodes - 1) * (degree - 2) / first_hop + 1) / math.log(degree - 1))


def bandwidth_amplification(degree: int) -> float:
    """The paper's approximation: each message crosses every mesh link once, so about D."""
    return float(degree)


def transmission_ns(one_way_ns, message_bytes: int, bandwidth_bps: int):
    """L_t = one-way latency + serialisation of the message at the link's bandwidth."""
    return one_way_ns + message_bytes * 8 / bandwidth_bps * 1e9


# What a WakuMessage of n payload bytes costs on the wire: the message's own fields, the
# gossipsub RPC, the stream muxer and Noise frames (about 100 bytes together), and TCP/IP
# headers of 40 bytes per 1460-byte segment.
WIRE_OVERHEAD_BYTES = 100
SEGMENT_PAYLOAD_BYTES = 1460
SEGMENT_BYTES = 1500


def wire_bytes(payload_bytes: int) -> float:
    return (payload_bytes + WIRE_OVERHEAD_BYTES) * SEGMENT_BYTES / SEGMENT_PAYLOAD_BYTES


# A TCP connection idle for longer than its retransmission timeout restarts slow start from
# the initial window (RFC 5681 section 4.1; Linux's tcp_slow_start_after_idle, on by default),
# 10 segments since RFC 6928, of 1448 payload bytes with TCP timestamps on (Linux's default).
# Shadow's TCP keeps the window open across idle periods.
INITIAL_WINDOW_SEGMENTS = 10
TIMESTAMPED_SEGMENT_PAYLOAD_BYTES = 1448


def slow_start_rounds(wire_bytes: float, initial_window_segments: int = INITIAL_WINDOW_SEGMENTS) -> int:
    """Extra round trips to send ``wire_bytes`` from the initial window, doubling every round."""
    window = initial_window_segments * TIMESTAMPED_SEGMENT_PAYLOAD_BYTES
    sent, rounds = window, 0
    while sent < wire_bytes:
        window *= 2
        sent += window
        rounds += 1
    return rounds


# How many bytes a stream may have in flight before the receiver's flow-control credit
# returns. The muxer's window is the limit in these runs: yamux's default receive window is
# 256 000 bytes (nim-libp2p YamuxDefaultWindowSize), and W = 256 KiB reproduces the one
# extra round trip that 500 KB messages (513 KB on the wire) take per hop.
WINDOW_BYTES = 256 * 1024


def predict(
    receipts: pd.DataFrame,
    sends: pd.DataFrame,
    study,
    window_bytes: int = WINDOW_BYTES,
    one_way_ns: np.ndarray | None = None,
    uplink_bps: np.ndarray | None = None,
    downlink_bps: np.ndarray | None = None,
) -> pd.DataFrame:
    """Equation 1 for every receipt along its reconstructed path: as written and with two terms added.

    For the edge parent -> child of a path, with S the message's wire bytes:
    - ``eq1_ms`` (the paper): L_t = one-way latency + S / bandwidth, plus L_v;
    - ``eq1_uplink_ms``: the parent's uplink carries the copies it handed to earlier peers
      first, so L_t = one-way + rank x S / upload bandwidth, rank being the child's place in
      the parent's send order (a flooding publisher's first hop is bandwidth-bound);
    - ``eq1_window_ms``: also a message larger than the flow-control window W waits
      ceil(S / W) - 1 round trips: L_t = one-way + max(rank x S / B, S / B + rounds x RTT).
    A receipt's prediction is L_g plus the sum over the edges of its path. ``one_way_ns``
    gives each receipt's edge (from-peer to receiver) its own latency, and ``uplink_bps`` /
    ``downlink_bps`` its sender's uplink and receiver's downlink (bandwidth classes); by default
    every edge has the study's.
    """
    size = study.message_sizes[0]
    wire = wire_bytes(size)
    if uplink_bps is None:
        uplink_bps = np.full(len(receipts), float(study.bandwidth_up_bps))
    if downlink_bps is None:
        downlink_bps = np.full(len(receipts), float(study.bandwidth_down_bps))
    link_bps = np.minimum(uplink_bps, downlink_bps)
    copy_ns = wire * 8 / uplink_bps * 1e9
    validation_ns = study.rln.verification_delay_ns(size)
    extra_round_trips = math.ceil(wire / window_bytes) - 1
    if one_way_ns is None:
        one_way_ns = np.full(len(receipts), float(study.latency_ns))

    rank = sends.drop_duplicates(["sender", "msg_hash", "to_host"]).set_index(["msg_hash", "sender", "to_host"])["send_rank"]
    edge_rank = rank.reindex(list(zip(receipts["msg_hash"], receipts["from_host"], receipts["receiver"]))).to_numpy()
    up_to_rank = edge_rank * copy_ns
    edges = np.stack(
        [
            transmission_ns(one_way_ns, wire, link_bps),
            one_way_ns + up_to_rank,
            one_way_ns + np.maximum(up_to_rank, copy_ns + extra_round_trips * 2 * one_way_ns),
        ],
        axis=1,
    ) + validation_ns

    # sum the edges along each path, one hop level at a time: parents are one level up
    row = {key: i for i, key in enumerate(zip(receipts["msg_hash"], receipts["receiver"]))}
    parent_row = np.array([row.get(key, -1) for key in zip(receipts["msg_hash"], receipts["from_host"])])
    hops = receipts["hop"].to_numpy()
    totals = np.zeros_like(edges)
    for level in range(1, int(hops.max()) + 1):
        at = np.flatnonzero(hops == level)
        totals[at] = edges[at] + (totals[parent_row[at]] if level > 1 else 0)
    return pd.DataFrame(
        (totals + study.rln.proof_generation_ns) / 1e6,
        columns=["eq1_ms", "eq1_uplink_ms", "eq1_window_ms"],
        index=receipts.index,
    )
