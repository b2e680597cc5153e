"""Light clients and their service nodes (light_clients.*): who serves whom, and how each runs nwaku.

Service nodes are relay nodes that also serve lightpush, filter and store; light clients are the
hosts after the study's relay nodes, with relay off, each attached to one service node.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

from waku_shadow.configuration.study import Study
from waku_shadow.render import nwaku
from waku_shadow.render.identities import Identity

SERVICE_FLAGS = ["--store=true", "--filter=true", "--lightpush=true", "--store-message-db-url=sqlite://store.sqlite3"]
# nwaku drops a filter subscription it has not heard of for this long; REST clients never ping
FILTER_SUBSCRIPTION_TIMEOUT_S = 300
SERVICE_PROTOCOLS = ("--store=", "--filter=", "--lightpush=")
LIGHTPUSH_PATH = "/lightpush/v3/message"
FILTER_SUBSCRIBE_PATH = "/filter/v2/subscriptions"


@dataclass(frozen=True)
class Roles:
    relay_nodes: int
    service_nodes: tuple[int, ...]  # relay node indices, sorted
    client_service: tuple[int, ...]  # client k (node index relay_nodes + k) -> its service node's index
    light_publishers: tuple[int, ...]  # node indices of the clients that publish, sorted
    subscribe_ns: tuple[int, ...]  # client k -> when it subscribes through its service node's filter

    def service_of(self, index: int) -> int:
        return self.client_service[index - self.relay_nodes]

    def is_client(self, index: int) -> bool:
        return index >= self.relay_nodes

    def clients_of(self, service_node: int) -> int:
        return self.client_service.count(service_node)


def choose(study: Study) -> Roles:
    """Service nodes drawn from the seed among the relay nodes; the clients dealt to them in turn in
    a seeded order, so every service node serves as many clients as another, give or take one."""
    light = study.light_clients
    rng = random.Random(f"waku-shadow light clients seed={study.seed}")
    service_nodes = tuple(sorted(rng.sample(range(study.nodes), light.service_nodes)))
    order = list(range(light.clients))
    rng.shuffle(order)
    client_service = [0] * light.clients
    for turn, k in enumerate(order):
        client_service[k] = service_nodes[turn % len(service_nodes)]
    publishers = sorted(rng.sample(range(light.clients), light.publishers))
    subscribe_order = list(range(light.clients))
    rng.shuffle(subscribe_order)
    subscribe_ns = [0] * light.clients
    for turn, k in enumerate(subscribe_order):
        subscribe_ns[k] = light.subscribe_at_ns + turn * light.subscribe_over_ns // max(light.clients, 1)
    return Roles(study.nodes, service_nodes, tuple(client_service), tuple(study.nodes + k for k in publishers),
                 tuple(subscribe_ns))


def service_args(relay_args: list[str], stop_time_ns: int) -> list[str]:
    """A relay node's flags with lightpush, filter and store served, its clients' subscriptions kept
    for the whole run."""
    timeout_s = max(FILTER_SUBSCRIPTION_TIMEOUT_S, -(-stop_time_ns // 1_000_000_000))
    return ([flag for flag in relay_args if not flag.startswith(SERVICE_PROTOCOLS)] + SERVICE_FLAGS
            + [f"--filter-subscription-timeout={timeout_s}"])


def service_connections(relay_connections: int, clients: int) -> int:
    """Room for the relay links and, in the service share of max-connections (relay_service_ratio's
    second part), for every client."""
    return max(relay_connections, -(-(clients + nwaku.CONNECTION_HEADROOM) * 100 // nwaku.RELAY_SERVICE_RATIO[1]))


def client_args(study: Study, me: Identity, service: Identity, max_msg_size: int) -> list[str]:
    """A light client: relay off, lightpush, filter and store through its service node, REST on."""
    service_address = nwaku.multiaddr_of(service.ip, service.peer_id)
    return [
        f"--nodekey={me.nodekey}",
        "--listen-address=0.0.0.0",
        f"--tcp-port={nwaku.TCP_PORT}",
        f"--nat=extip:{me.ip}",
        "--relay=false",
        f"--cluster-id={nwaku.CLUSTER_ID}",
        f"--shard={nwaku.SHARD}",
        "--num-shards-in-network=1",
        f"--max-msg-size={max_msg_size}B",
        *nwaku.RELAY_ONLY_FLAGS,
        f"--lightpushnode={service_address}",
        f"--filternode={service_address}",
        f"--storenode={service_address}",
        f"--log-level={study.nwaku_log_level}",
        "--log-format=JSON",
        "--rest=true",
        "--rest-address=127.0.0.1",
        f"--rest-port={nwaku.REST_PORT}",
    ]


def subscribe_body(k: int) -> str:
    return json.dumps({"requestId": f"subscribe-{k}", "contentFilters": [nwaku.CONTENT_TOPIC],
                       "pubsubTopic": nwaku.PUBSUB_TOPIC})
