"""The peer graph: which nodes each node dials, drawn at random from a seed or laid out as a line."""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

from waku_shadow.errors import TopologyError

MAX_ATTEMPTS = 100


@dataclass(frozen=True)
class Topology:
    nodes: int
    dials: tuple[tuple[int, ...], ...]  # dials[i]: the peers node i dials, in dial order
    seed: int
    attempt: int  # 0 when the first draw was connected; the draw used is seeded by (seed, attempt)

    def edges(self) -> set[tuple[int, int]]:
        """Undirected links, each as (smaller index, larger index)."""
        return {(min(a, b), max(a, b)) for a, peers in enumerate(self.dials) for b in peers}

    def neighbours(self) -> list[set[int]]:
        adjacency: list[set[int]] = [set() for _ in range(self.nodes)]
        for a, b in self.edges():
            adjacency[a].add(b)
            adjacency[b].add(a)
        return adjacency

    def in_degrees(self) -> list[int]:
        """How many nodes dial each node; a link dialled both ways counts on both sides."""
        counts = [0] * self.nodes
        for peers in self.dials:
            for peer in peers:
                counts[peer] += 1
        return counts


def components(nodes: int, adjacency: list[set[int]]) -> list[list[int]]:
    unseen = set(range(nodes))
    found = []
    while unseen:
        start = min(unseen)
        unseen.discard(start)
        queue, members = deque([start]), [start]
        while queue:
            for peer in adjacency[queue.popleft()]:
                if peer in unseen:
                    unseen.discard(peer)
                    queue.append(peer)
                    members.append(peer)
        found.append(sorted(members))
    return found


def draw(nodes: int, peers_per_node: int, seed: int, attempt: int) -> Topology:
    rng = random.Random(f"waku-shadow topology seed={seed} attempt={attempt}")
    dials = []
    for node in range(nodes):
        picks = rng.sample(range(nodes - 1), peers_per_node)
        dials.append(tuple(peer + (peer >= node) for peer in picks))
    return Topology(nodes, tuple(dials), seed, attempt)


def random_dials(nodes: int, peers_per_node: int, seed: int) -> Topology:
    """Every node dials ``peers_per_node`` distinct random others.

    A draw whose links leave the network partitioned is discarded and the next
    attempt is drawn; the attempt used is recorded. After MAX_ATTEMPTS
    partitioned draws the topology is reported impossible.
    """
    if not 0 < peers_per_node < nodes:
        raise TopologyError(
            f"peers_per_node={peers_per_node} is impossible with {nodes} nodes: "
            f"each node can dial between 1 and {nodes - 1} others"
        )
    largest = 0
    for attempt in range(MAX_ATTEMPTS):
        topology = draw(nodes, peers_per_node, seed, attempt)
        parts = components(nodes, topology.neighbours())
        if len(parts) == 1:
            return topology
        largest = max(largest, max(len(p) for p in parts))
    raise TopologyError(
        f"every one of {MAX_ATTEMPTS} seeded draws of {nodes} nodes dialling {peers_per_node} "
        f"peers each left the network partitioned (largest part: {largest} nodes); "
        f"raise network.peers_per_node"
    )


def cascade(nodes: int, seed: int) -> Topology:
    """The nodes in a line, each dialling the next: node i's only peers are i-1 and i+1."""
    return Topology(nodes, tuple((i + 1,) if i + 1 < nodes else () for i in range(nodes)), seed, 0)


def by_shard(served: tuple[tuple[int, ...], ...], peers_per_node: int, seed: int) -> Topology:
    """A node dials, shard by shard of those it serves (``served[node]``), random others of that shard
    until peers_per_node of its dialled peers serve it: a peer that serves several of its shards
    counts for each, so a node on every shard dials peers_per_node in all. A draw that leaves any
    shard's nodes partitioned among themselves is discarded, as in random_dials."""
    nodes, shards = len(served), max((s for node in served for s in node), default=0) + 1
    members = [[node for node in range(nodes) if shard in served[node]] for shard in range(shards)]
    for attempt in range(MAX_ATTEMPTS):
        rng = random.Random(f"waku-shadow topology by shard seed={seed} attempt={attempt}")
        dials: list[list[int]] = [[] for _ in range(nodes)]
        for node in range(nodes):
            for shard in served[node]:
                have = sum(1 for peer in dials[node] if shard in served[peer])
                candidates = [peer for peer in members[shard] if peer != node and peer not in dials[node]]
                dials[node] += rng.sample(candidates, min(len(candidates), max(0, peers_per_node - have)))
        topology = Topology(nodes, tuple(tuple(d) for d in dials), seed, attempt)
        adjacency = topology.neighbours()
        parted = [shard for shard, nodes_of in enumerate(members) if nodes_of and len(components(
            nodes, [adjacency[n] & set(nodes_of) if n in nodes_of else set() for n in range(nodes)])) != 1 + nodes - len(nodes_of)]
        if not parted:
            return topology
    raise TopologyError(
        f"every one of {MAX_ATTEMPTS} seeded draws left the nodes of shard {parted[0]} partitioned among themselves; "
        "raise network.peers_per_node or network.shards_per_node"
    )


def undrawn(nodes: int, seed: int) -> Topology:
    """No static dials: the nodes find their peers themselves (topology discv5)."""
    return Topology(nodes, ((),) * nodes, seed, 0)


def build(kind: str, nodes: int, peers_per_node: int, seed: int) -> Topology:
    if kind == "cascade":
        return cascade(nodes, seed)
    if kind == "discv5":
        return undrawn(nodes, seed)
    return random_dials(nodes, peers_per_node, seed)


def choose_publishers(kind: str, nodes: int, publishers: int, seed: int) -> list[int]:
    """A cascade publishes from its head, so messages travel the whole line; otherwise at random."""
    if kind == "cascade":
        return list(range(publishers))
    rng = random.Random(f"waku-shadow publishers seed={seed}")
    return sorted(rng.sample(range(nodes), publishers))
