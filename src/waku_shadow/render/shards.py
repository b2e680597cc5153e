"""Which shards each relay node serves, which shard each publisher publishes on, and the content
topics that nwaku's autosharding puts on each shard."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

import pandas as pd

from waku_shadow.configuration.study import Study
from waku_shadow.errors import TopologyError
from waku_shadow.render import nwaku

# the application names tried, in order, for a shard's content topic: the first is the study's own
APPLICATION = "waku-shadow"
VERSION = "1"
MOST_APPLICATIONS_TRIED = 10_000


@dataclass(frozen=True)
class ShardPlan:
    count: int
    served: tuple[tuple[int, ...], ...]  # served[i]: the shards relay node i serves, ascending
    publishing_on: dict[int, int]  # each relay publisher's node, in node order -> the shard it publishes on

    def members(self, shard: int) -> list[int]:
        return [node for node, shards in enumerate(self.served) if shard in shards]


def autoshard(application: str, version: str, count: int) -> int:
    """nwaku's autosharding (generation zero): the last 8 bytes of sha256(application + version),
    big-endian, modulo the shards of the cluster."""
    digest = hashlib.sha256((application + version).encode()).digest()
    return int.from_bytes(digest[24:], "big") % count


def content_topic(shard: int, count: int) -> str:
    """The study's content topic on ``shard``: the first application name, waku-shadow, waku-shadow-1,
    ..., that autoshards to it (on one shard, the study's one content topic)."""
    for k in range(MOST_APPLICATIONS_TRIED):
        application = APPLICATION if k == 0 else f"{APPLICATION}-{k}"
        if autoshard(application, VERSION, count) == shard:
            return f"/{application}/{VERSION}/latency/proto"
    raise AssertionError(f"no application name of {MOST_APPLICATIONS_TRIED} autoshards to shard {shard} of {count}")


def pubsub_topic(shard: int) -> str:
    return f"/waku/2/rs/{nwaku.CLUSTER_ID}/{shard}"


def served_by_host(identities: pd.DataFrame, relay_hosts: list[str]) -> dict[str, frozenset[int]]:
    """Each relay host's shards, from identities.csv; a run rendered before shards served shard 0."""
    if "shards" not in identities:
        return {host: frozenset({nwaku.SHARD}) for host in relay_hosts}
    served = dict(zip(identities["host"], identities["shards"].astype(str)))
    return {host: frozenset(int(s) for s in served[host].split()) for host in relay_hosts}


def choose(study: Study, publishers: list[int]) -> ShardPlan:
    """The j-th publisher (in node order) publishes on shard j mod count. Every relay node serves
    every shard unless network.shards_per_node (fewer than all) draws each node's shards from the
    seed, a publisher's own shard among them."""
    count, per_node = study.shards.count, study.shards.per_node
    publishing_on = {node: j % count for j, node in enumerate(publishers)}
    if not study.shards.own_lists:
        return ShardPlan(count, tuple(tuple(range(count)) for _ in range(study.nodes)), publishing_on)
    rng = random.Random(f"waku-shadow shards seed={study.seed}")
    served = []
    for node in range(study.nodes):
        own = publishing_on.get(node)
        others = [s for s in range(count) if s != own]
        drawn = rng.sample(others, per_node - (own is not None))
        served.append(tuple(sorted(drawn + ([own] if own is not None else []))))
    plan = ShardPlan(count, tuple(served), publishing_on)
    for shard in range(count):
        members = len(plan.members(shard))
        if study.discovery is None and members <= study.peers_per_node:
            raise TopologyError(
                f"shard {shard} is served by {members} of {study.nodes} nodes (network.shards_per_node = {per_node} "
                f"of {count}): too few for each to dial network.peers_per_node = {study.peers_per_node} others of it; "
                "add nodes, raise shards_per_node or lower peers_per_node"
            )
    return plan
