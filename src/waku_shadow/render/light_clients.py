"""Light clients and their service nodes (light_clients.*): who serves whom, and how each runs nwaku.

Service nodes are relay nodes that also serve lightpush, filter and store; light clients are the
hosts after the study's relay nodes, with relay off, each using one service node per protocol
(light_clients.service_nodes_per_client of them) and subscribed to its content topics.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from urllib.parse import urlencode

import pandas as pd

from waku_shadow.configuration.study import LightClients, Study
from waku_shadow.render import nwaku
from waku_shadow.render.identities import Identity
from waku_shadow.render.nwaku import SIMULATION_EPOCH_NS

SERVICE_FLAGS = ["--store=true", "--filter=true", "--lightpush=true", "--store-message-db-url=sqlite://store.sqlite3"]
# nwaku drops a filter subscription it has not heard of for this long; REST clients never ping
FILTER_SUBSCRIPTION_TIMEOUT_S = 300
SERVICE_PROTOCOLS = ("--store=", "--filter=", "--lightpush=")
LIGHTPUSH_PATH = "/lightpush/v3/message"
FILTER_SUBSCRIBE_PATH = "/filter/v2/subscriptions"
STORE_QUERY_PATH = "/store/v3/messages"
# curl's line after the store's answer: the query's window and how long the answer took
STORE_QUERY_WRITE_OUT = ('\n{{"store_query_ns": {query_ns}, "from_ns": {from_ns}, "to_ns": {to_ns}, '
                         '"seconds": %{{time_total}}, "http_code": "%{{http_code}}"}}\n')
WINDOW_COLUMNS = ["host", "leave_ns", "rejoin_ns", "from_ns", "to_ns", "query_ns"]


@dataclass(frozen=True)
class Roles:
    relay_nodes: int
    service_nodes: tuple[int, ...]  # relay node indices, sorted
    client_service: tuple[int, ...]  # client k (node index relay_nodes + k) -> its filter's service node (dealt)
    light_publishers: tuple[int, ...]  # node indices of the clients that publish, sorted
    subscribe_ns: tuple[int, ...]  # client k -> when it subscribes through its service node's filter
    client_lightpush: tuple[int, ...]  # client k -> its lightpush's service node
    client_store: tuple[int, ...]  # client k -> its store's service node
    client_topics: tuple[tuple[int, ...], ...]  # client k -> its content topics; it publishes on the first

    def service_of(self, index: int) -> int:
        """The service node whose filter the client subscribes to."""
        return self.client_service[index - self.relay_nodes]

    def lightpush_of(self, index: int) -> int:
        return self.client_lightpush[index - self.relay_nodes]

    def store_of(self, index: int) -> int:
        return self.client_store[index - self.relay_nodes]

    def topics_of(self, index: int) -> tuple[int, ...]:
        return self.client_topics[index - self.relay_nodes]

    def is_client(self, index: int) -> bool:
        return index >= self.relay_nodes

    def clients_of(self, service_node: int) -> int:
        """How many clients use the service node, for any protocol."""
        return sum(service_node in used for used in zip(self.client_service, self.client_lightpush, self.client_store))


def choose(study: Study) -> Roles:
    """Service nodes drawn from the seed among the relay nodes; the clients dealt to them in turn in
    a seeded order, so every service node serves as many clients' filters as another, give or take
    one. A client's other service nodes (service_nodes_per_client) and its content topics are drawn
    from seeds of their own, so a study that sets neither draws exactly as before they existed."""
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
    lightpush, store = _other_service_nodes(study, service_nodes, client_service)
    topic_rng = random.Random(f"waku-shadow content topics seed={study.seed}")
    topics = tuple(tuple(topic_rng.sample(range(light.content_topics), light.topics_per_client)) for _ in range(light.clients))
    return Roles(study.nodes, service_nodes, tuple(client_service), tuple(study.nodes + k for k in publishers),
                 tuple(subscribe_ns), lightpush, store, topics)


def _other_service_nodes(study: Study, service_nodes: tuple[int, ...],
                         client_service: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Each client's lightpush and store service nodes: its filter's with one service node per client;
    with two its lightpush moves to another, drawn from the seed; with three its store to a third."""
    extra = study.light_clients.service_nodes_per_client - 1
    if not extra:
        return tuple(client_service), tuple(client_service)
    rng = random.Random(f"waku-shadow service nodes per client seed={study.seed}")
    lightpush, store = [], []
    for filter_node in client_service:
        others = rng.sample([s for s in service_nodes if s != filter_node], extra)
        lightpush.append(others[0])
        store.append(others[1] if extra == 2 else filter_node)
    return tuple(lightpush), tuple(store)


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


def client_args(study: Study, me: Identity, lightpush: Identity, filter_node: Identity, store: Identity,
                max_msg_size: int) -> list[str]:
    """A light client: relay off, lightpush, filter and store each through its service node, REST on."""
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
        f"--lightpushnode={nwaku.multiaddr_of(lightpush.ip, lightpush.peer_id)}",
        f"--filternode={nwaku.multiaddr_of(filter_node.ip, filter_node.peer_id)}",
        f"--storenode={nwaku.multiaddr_of(store.ip, store.peer_id)}",
        f"--log-level={study.nwaku_log_level}",
        "--log-format=JSON",
        "--rest=true",
        "--rest-address=127.0.0.1",
        f"--rest-port={nwaku.REST_PORT}",
    ]


def subscribe_body(k: int, topics: tuple[int, ...]) -> str:
    return json.dumps({"requestId": f"subscribe-{k}", "contentFilters": [nwaku.content_topic(t) for t in topics],
                       "pubsubTopic": nwaku.PUBSUB_TOPIC})


def store_window(study: Study, leave_ns: int, rejoin_ns: int) -> tuple[int, int, int | None]:
    """A client that left at ``leave_ns``: the messages it may miss, from store_lookback before it left
    to its store query after it came back (or the run's end), and when it queries (None: it is not
    back in time)."""
    light = study.light_clients
    query_ns = rejoin_ns + light.STORE_QUERY_AFTER_NS
    if query_ns >= study.stop_time_ns:
        return leave_ns - light.store_lookback_ns, study.stop_time_ns, None
    return leave_ns - light.store_lookback_ns, query_ns, query_ns


def in_window(scheduled_ns: pd.Series, from_ns, to_ns) -> pd.Series:
    """Which messages a store query for [from_ns, to_ns] covers: nwaku's store takes both ends."""
    return (scheduled_ns >= from_ns) & (scheduled_ns <= to_ns)


def away_windows(study: Study, outages: pd.DataFrame, clients: set[str]) -> pd.DataFrame:
    """The light clients' outages (churn.csv's rows of ``clients``) with their store windows."""
    mine = outages[outages["host"].isin(clients)]
    windows = [(host, leave, rejoin, *store_window(study, leave, rejoin))
               for host, leave, rejoin in zip(mine["host"], mine["leave_ns"], mine["rejoin_ns"])]
    return pd.DataFrame(windows, columns=WINDOW_COLUMNS).astype({"query_ns": "Int64"})


def store_query_args(from_ns: int, to_ns: int, query_ns: int, topics: tuple[int, ...]) -> list[str]:
    """curl's arguments for a returning client's store query: the hashes of every message on its
    content topics in the window, one page; the answer and then a line with its timing on stdout. An
    HTTP error is not curl's failure: validation names it (curl writes http_code 000 when it got no
    answer at all, and exits non-zero, which Shadow reports as the process's failure)."""
    query = urlencode({"includeData": "false", "pubsubTopic": nwaku.PUBSUB_TOPIC, "contentTopics": ",".join(nwaku.content_topic(t) for t in topics),
                       "startTime": SIMULATION_EPOCH_NS + from_ns, "endTime": SIMULATION_EPOCH_NS + to_ns,
                       "pageSize": LightClients.STORE_PAGE, "ascending": "true"})
    return ["--no-progress-meter", "--show-error", "--max-time", "60",
            "--write-out", STORE_QUERY_WRITE_OUT.format(query_ns=query_ns, from_ns=from_ns, to_ns=to_ns),
            f"http://127.0.0.1:{nwaku.REST_PORT}{STORE_QUERY_PATH}?{query}"]
