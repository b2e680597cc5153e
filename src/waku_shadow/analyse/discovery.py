"""A discv5 network's graph from its topology events (parse/topology_events.py): when each node
found its first peer, reached nwaku's outbound target and held a mesh on each of its shards, and
the graph of connections at a moment (degrees, parts, diameter)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.sparse import coo_array
from scipy.sparse.csgraph import connected_components, shortest_path

from waku_shadow import layout
from waku_shadow.analyse.shards import served as served_by
from waku_shadow.configuration import loader
from waku_shadow.configuration.study import point_columns
from waku_shadow.parse import pcap

# nwaku v0.38.1's peer manager aims at ceil(max_connections x 0.5) relay peers, a third of them
# dialled out (waku/node/peer_manager/peer_manager.nim; its --relay-service-ratio is not passed on)
RELAY_SHARE = 0.5
NODE_TIMES = ["host", "first_peer_ns", "outbound_target_ns"]
MESH_TIMES = ["host", "shard", "first_mesh_peer_ns", "mesh_ns", "mesh_peers_at_end"]


def outbound_target(max_connections: int) -> int:
    return math.ceil(max_connections * RELAY_SHARE) // 3


def shard_of(topic: str) -> int:
    """A pubsub topic's shard: /waku/2/rs/<cluster>/<shard>."""
    return int(topic.rsplit("/", 1)[1])


def node_times(events: pd.DataFrame, hosts: list[str], max_connections: int) -> pd.DataFrame:
    """Per node: when its first peer connected and when it first held nwaku's outbound target of
    peers it dialled (NaN: never)."""
    target = outbound_target(max_connections)
    first_peer, at_target = {}, {}
    outbound: dict[str, set[str]] = {}
    for e in events[events["event"].isin(["connected", "disconnected"])].itertuples():
        first_peer.setdefault(e.host, e.time_ns)
        mine = outbound.setdefault(e.host, set())
        if e.event == "connected" and e.direction == "Outbound":
            mine.add(e.peer_host)
        elif e.event == "disconnected":
            mine.discard(e.peer_host)
        if len(mine) >= target:
            at_target.setdefault(e.host, e.time_ns)
    return pd.DataFrame({"host": hosts, "first_peer_ns": [first_peer.get(h, np.nan) for h in hosts],
                         "outbound_target_ns": [at_target.get(h, np.nan) for h in hosts]})[NODE_TIMES]


def mesh_times(events: pd.DataFrame, served: dict[str, frozenset[int]], d_low: int) -> pd.DataFrame:
    """Per node and shard it serves: when its first mesh peer was grafted and when its mesh first held
    d_low peers (nwaku's "sufficiently healthy" topic; NaN: never), and its mesh at the end."""
    mesh: dict[tuple[str, int], set[str]] = {}
    first, full = {}, {}
    for e in events[events["event"].isin(["grafted", "pruned"])].itertuples():
        key = (e.host, shard_of(e.topic))
        peers = mesh.setdefault(key, set())
        if e.event == "grafted":
            peers.add(e.peer_host)
            first.setdefault(key, e.time_ns)
            if len(peers) >= d_low:
                full.setdefault(key, e.time_ns)
        else:
            peers.discard(e.peer_host)
    rows = [(host, shard, first.get((host, shard), np.nan), full.get((host, shard), np.nan),
             len(mesh.get((host, shard), ()))) for host in served for shard in sorted(served[host])]
    return pd.DataFrame(rows, columns=MESH_TIMES)


def connections_at(events: pd.DataFrame, time_ns: int) -> set[tuple[str, str]]:
    """The undirected links open at time_ns, as either end logged them."""
    open_: dict[str, set[str]] = {}
    for e in events[(events["time_ns"] <= time_ns) & events["event"].isin(["connected", "disconnected"])].itertuples():
        peers = open_.setdefault(e.host, set())
        (peers.add if e.event == "connected" else peers.discard)(e.peer_host)
    return {tuple(sorted((host, peer))) for host, peers in open_.items() for peer in peers}


def _ends(links: set[tuple[str, str]], hosts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The links' two ends as indices into hosts."""
    index = {host: i for i, host in enumerate(hosts)}
    return tuple(np.array([index[link[k]] for link in links], dtype=int) for k in (0, 1))


def degrees(links: set[tuple[str, str]], hosts: list[str]) -> np.ndarray:
    """Each host's number of links, in the order of hosts."""
    return np.bincount(np.concatenate(_ends(links, hosts)), minlength=len(hosts))


def graph_shape(links: set[tuple[str, str]], hosts: list[str]) -> dict:
    """Degrees, connected parts and diameter (in hops, of the largest part) of an undirected graph."""
    a, b = _ends(links, hosts)
    adjacency = coo_array((np.ones(len(links)), (a, b)), shape=(len(hosts), len(hosts))).tocsr()
    parts, label = connected_components(adjacency, directed=False)
    largest = np.flatnonzero(label == np.bincount(label).argmax())
    hops = shortest_path(adjacency[largest][:, largest], unweighted=True, directed=False)
    each = degrees(links, hosts)
    return {"links": len(links), "parts": int(parts), "largest_part": len(largest),
            "diameter": int(hops.max()) if len(largest) > 1 else 0,
            "degree_min": int(each.min()), "degree_mean": float(each.mean()), "degree_max": int(each.max()),
            "degrees": each}


# one run's tables, each row with its size and run columns (configuration.study.point_columns)

def run_nodes(run_dir: Path) -> pd.DataFrame:
    """Per relay node of one discv5 run, in seconds from the start: its first peer, nwaku's outbound
    target reached, a mesh of d_low on every shard it serves (NaN: never), its degree at the first
    measured publish, and (with a packet capture) discv5's bytes per minute, UDP in and out."""
    study = loader.load(run_dir / layout.RUN_CONFIG)
    events = pd.read_parquet(run_dir / layout.TOPOLOGY_EVENTS)
    served = served_by(run_dir)
    hosts = list(served)
    nodes = node_times(events, hosts, study.discovery.max_connections)
    meshes = mesh_times(events, served, study.gossipsub.effective()["d_low"])
    # a node's mesh is whole when every shard's is: the latest, NaN if one never was
    whole = meshes.groupby("host")["mesh_ns"].agg(lambda times: times.max(skipna=False))
    nodes["mesh_ns"] = nodes["host"].map(whole)
    table = nodes.assign(degree_at_publish=degrees(connections_at(events, first_measured_publish_ns(run_dir)), hosts))
    for column in ("first_peer_ns", "outbound_target_ns", "mesh_ns"):
        table[column.replace("_ns", "_s")] = table.pop(column) / 1e9
    if study.traffic_capture:
        identities = pd.read_csv(run_dir / layout.IDENTITIES).set_index("host")
        minutes = study.stop_time_ns / 60e9
        udp = [pcap.udp_bytes(pcap.host_capture(run_dir, host), identities.at[host, "ip"]) for host in hosts]
        table["discv5_bytes_in_per_min"] = [received / minutes for received, _ in udp]
        table["discv5_bytes_out_per_min"] = [sent / minutes for _, sent in udp]
    return table.assign(size_bytes=study.message_sizes[0], **point_columns(study))


def run_graph(run_dir: Path) -> pd.DataFrame:
    """One row for one discv5 run: the graph of connections at the first measured publish (links,
    parts, the largest part's diameter in hops, degrees) and the evictions nwaku made."""
    events = pd.read_parquet(run_dir / layout.TOPOLOGY_EVENTS)
    shape = graph_shape(connections_at(events, first_measured_publish_ns(run_dir)), list(served_by(run_dir)))
    shape.pop("degrees")
    study = loader.load(run_dir / layout.RUN_CONFIG)
    return pd.DataFrame([{**shape, "evictions": int((events["event"] == "evicted").sum()),
                          "size_bytes": study.message_sizes[0], **point_columns(study)}])


def first_measured_publish_ns(run_dir: Path) -> int:
    publishes = pd.read_parquet(run_dir / layout.PUBLISHES)
    return int(publishes.loc[~publishes["warmup"], "publish_ns"].min())


def summary(nodes: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per point, its runs' nodes pooled: how many, and p50 / p95 / max of the seconds until their
    first peer, their outbound target and a whole mesh (of the nodes that got there), how many never
    had a whole mesh, the mean degree at the first publish, and discv5's bytes per node per minute."""
    def p95(values: pd.Series) -> float:
        return values.quantile(0.95)

    aggregations = {"nodes": ("host", "size"), "never_meshed": ("mesh_s", lambda s: int(s.isna().sum())),
                    "degree_mean": ("degree_at_publish", "mean")}
    for column in ("first_peer_s", "outbound_target_s", "mesh_s"):
        name = column.removesuffix("_s")
        aggregations |= {f"{name}_p50_s": (column, "median"), f"{name}_p95_s": (column, p95),
                         f"{name}_max_s": (column, "max")}
    if "discv5_bytes_out_per_min" in nodes:
        aggregations |= {"discv5_bytes_in_per_min": ("discv5_bytes_in_per_min", "mean"),
                         "discv5_bytes_out_per_min": ("discv5_bytes_out_per_min", "mean")}
    return nodes.groupby(keys).agg(**aggregations).reset_index()
