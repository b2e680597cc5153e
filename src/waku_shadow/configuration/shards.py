"""network.shards and network.shards_per_node: what a cluster of several shards can be run with."""

from __future__ import annotations

from waku_shadow.configuration.study import Shards
from waku_shadow.errors import refused


def parse(cfg: dict) -> Shards:
    """The study's shards, refused by key where a setting beside them is not built for several shards."""
    net = cfg["network"]
    found = Shards(count=net["shards"], per_node=net["shards_per_node"])
    if found.per_node is not None:
        if found.per_node > found.count:
            raise refused("network.shards_per_node", f"{found.per_node} shards per node are more than network.shards ({found.count})")
        if net["topology"] != "random":
            raise refused("network.shards_per_node", "a cascade is one line of nodes; shard lists need topology: random")
        if cfg["churn"]["leaves_per_minute"]:
            raise refused("network.shards_per_node", "churn with shard lists is not built yet: a returning node "
                           "would dial peers of any shard; run churn with every node on every shard")
    if found.count > 1:
        if cfg["light_clients"]["clients"]:
            raise refused("network.shards", "light clients on a cluster of several shards are not built yet")
        if cfg["spam"]["spammers"]:
            raise refused("network.shards", "spam on a cluster of several shards is not built yet")
    return found
