"""How a study node runs nwaku: its command line, the patch settings, the message hash."""

from __future__ import annotations

import hashlib
import math

from waku_shadow import checkout
from waku_shadow.configuration.study import Study
from waku_shadow.render import enr
from waku_shadow.render.identities import Identity

SIMULATION_EPOCH_NS = 946_684_800 * 1_000_000_000  # Shadow's clock starts at 2000-01-01 00:00 UTC
TCP_PORT = 60000
DISCV5_UDP_PORT = 9000  # nwaku's default
REST_PORT = 8645
# a node leaving under churn: wakunode2's SIGTERM handler stops the node and quits with success
LEAVE_SIGNAL = "SIGTERM"
LEFT_STATE = {"exited": 0}
CLUSTER_ID = 42
SHARD = 0
PUBSUB_TOPIC = f"/waku/2/rs/{CLUSTER_ID}/{SHARD}"
CONTENT_TOPIC = "/waku-shadow/1/latency/proto"


def content_topic(index: int) -> str:
    """The study's content topic ``index`` (light_clients.content_topics); the first keeps the name
    every study had before there were more."""
    return CONTENT_TOPIC if index == 0 else f"/waku-shadow/1/topic-{index}/proto"


# Settings read by nwaku-patches/ (unset = nwaku's own behaviour).
ENV_PROOF_GENERATION_NS = "WAKU_SIM_PROOF_GENERATION_DELAY_NS"
ENV_VERIFICATION_NS = "WAKU_SIM_VALIDATION_DELAY_NS"
ENV_VERIFICATION_NS_PER_BYTE = "WAKU_SIM_VALIDATION_DELAY_NS_PER_BYTE"
ENV_RELAY_WITHOUT_REST = "WAKU_SIM_RELAY_WITHOUT_REST"
ENV_RELAY_SHARDS = "WAKU_SIM_RELAY_SHARDS"
# a discv5 network: its graph read from the logs (patch 0041), its nodes online without DNS (0042)
ENV_TOPOLOGY_LINES_AT_NOTICE = "WAKU_SIM_TOPOLOGY_LINES_AT_NOTICE"
ENV_ONLINE_WITHOUT_DNS = "WAKU_SIM_ONLINE_WITHOUT_DNS"
# the tags whose relays subscribe only while starting REST (v0.36.0, v0.37.1-beta) carry it
RELAY_WITHOUT_REST_PATCH = "0004"
ENV_MESSAGE_LINES_AT_NOTICE = "WAKU_SIM_MESSAGE_LINES_AT_NOTICE"
ENV_RLN_EPOCH_NS = "WAKU_SIM_RLN_EPOCH_NS"
ENV_SCORE_EVENTS_AT_NOTICE = "WAKU_SIM_SCORE_EVENTS_AT_NOTICE"
# glibc hands blocks of shadow.nwaku_mmap_threshold and more straight back to the kernel when they
# are freed, instead of keeping them for reuse (unset, its threshold grows to the largest block freed)
ENV_GLIBC_MMAP_THRESHOLD = "MALLOC_MMAP_THRESHOLD_"
ENV_COPY_ONCE = "WAKU_SIM_SHARED_SEND_ENCODING"
ENV_HASH_ONCE = "WAKU_SIM_HASH_ONCE"
ENV_POLL_ONCE_PER_BURST = "WAKU_SIM_SKIP_REPEATED_IDLE_SELECTS"
ENV_SELECT_ONLY_TO_WAIT = "WAKU_SIM_SELECT_ONLY_TO_WAIT"
ENV_RDHUP_ONLY_WITH_READER = "WAKU_SIM_RDHUP_ONLY_WITH_READER"
ENV_NULL_CIPHER = "WAKU_SIM_NULL_CIPHER"
ENV_STAND_IN_KEY_EXCHANGE = "WAKU_SIM_STAND_IN_KEY_EXCHANGE"
ENV_WITHOUT_HEALTH_LOOP = "WAKU_SIM_WITHOUT_HEALTH_LOOP"
ENV_WITHOUT_EXCEPTION_TRACES = "WAKU_SIM_WITHOUT_EXCEPTION_TRACES"
# a patch's switch (shadow.<key>, on by default): the variable is set to 1 while the key is true
PATCH_SWITCHES = {
    "nwaku_copy_once": ENV_COPY_ONCE,
    "nwaku_hash_once": ENV_HASH_ONCE,
    "nwaku_poll_once_per_burst": ENV_POLL_ONCE_PER_BURST,
    "nwaku_select_only_to_wait": ENV_SELECT_ONLY_TO_WAIT,
    "nwaku_rdhup_only_with_reader": ENV_RDHUP_ONLY_WITH_READER,
    "nwaku_null_cipher": ENV_NULL_CIPHER,
    "nwaku_stand_in_key_exchange": ENV_STAND_IN_KEY_EXCHANGE,
    "nwaku_without_health_loop": ENV_WITHOUT_HEALTH_LOOP,
    "nwaku_without_exception_traces": ENV_WITHOUT_EXCEPTION_TRACES,
}
ENV_STREAM_MUXER = "WAKU_SIM_STREAM_MUXER"
ENV_PRUNE_ONLY_REMOVED = "WAKU_SIM_PRUNE_ONLY_REMOVED"
ENV_SEQUENTIAL_DIALS = "WAKU_SIM_SEQUENTIAL_DIALS"
ENV_SUBSCRIBE_BEFORE_DIALS = "WAKU_SIM_SUBSCRIBE_BEFORE_DIALS"
ENV_FLOOD_PUBLISH = "WAKU_SIM_GOSSIPSUB_FLOOD_PUBLISH"
ENV_FLOOD_PUBLISH_BANDWIDTH_BPS = "WAKU_SIM_GOSSIPSUB_BANDWIDTH_ESTIMATE_BPS"
ENV_IDONTWANT_ON_PUBLISH = "WAKU_SIM_GOSSIPSUB_IDONTWANT_ON_PUBLISH"
ENV_WITHHELD_COPY_LINES = "WAKU_SIM_WITHHELD_COPY_LINES"
ENV_GOSSIPSUB = {
    "d": "WAKU_SIM_GOSSIPSUB_D",
    "d_low": "WAKU_SIM_GOSSIPSUB_D_LOW",
    "d_high": "WAKU_SIM_GOSSIPSUB_D_HIGH",
    "d_lazy": "WAKU_SIM_GOSSIPSUB_D_LAZY",
}

# nwaku's peer manager keeps relay_service_ratio of max-connections for relay and
# two thirds of that for inbound peers; it disconnects inbound relay peers above
# that target. Room is made for every inbound link of the graph at 60:40, the ratio passed.
# v0.38.1's node builder does not hand the ratio to its peer manager, which keeps 50:50
# (analyse/discovery.RELAY_SHARE): there a node with more inbound links than that leaves room
# for may evict some (nwaku patch 0041 logs each eviction, in a discv5 network).
RELAY_SERVICE_RATIO = (60, 40)
INBOUND_RELAY_SHARE = RELAY_SERVICE_RATIO[0] / 100 * (1 - 1 / 3)
CONNECTION_HEADROOM = 4


DISCV5_OFF = "--discv5-discovery=false"
RELAY_ONLY_FLAGS = [
    DISCV5_OFF,
    "--dns-discovery=false",
    "--peer-exchange=false",
    "--relay-peer-exchange=false",
    "--rendezvous=false",
    "--store=false",
    "--filter=false",
    "--lightpush=false",
    "--metrics-server=false",
    "--keep-alive=false",
]


def node_record(me: Identity, shards: tuple[int, ...]) -> str:
    """The ENR a relay node of ours announces (as nwaku builds it at start): its address, ports and shards."""
    return enr.node_record(me.nodekey, me.ip, TCP_PORT, DISCV5_UDP_PORT, cluster_id=CLUSTER_ID, shards=shards)


def max_connections(max_in_degree: int, max_out_degree: int) -> int:
    needed_for_inbound = math.ceil((max_in_degree + CONNECTION_HEADROOM) / INBOUND_RELAY_SHARE)
    return max(50, needed_for_inbound, max_in_degree + max_out_degree + CONNECTION_HEADROOM)


def multiaddr_of(ip: str, peer_id: str) -> str:
    return f"/ip4/{ip}/tcp/{TCP_PORT}/p2p/{peer_id}"


def args(
    study: Study,
    me: Identity,
    static_peers: list[Identity],
    *,
    rest: bool,
    max_msg_size: int,
    connections: int,
    shards: tuple[int, ...] = (SHARD,),
    bootstrap_enrs: tuple[str, ...] = (),
) -> list[str]:
    """wakunode2 flags for one node: relay on its shards of the study's cluster, and unless the
    study keeps nwaku's defaults, everything a relay study does not use off; in a discv5 network,
    discv5 on, started from bootstrap_enrs."""
    services = RELAY_ONLY_FLAGS if study.nwaku_services == "relay_only" else []
    if study.discovery is not None:
        services = [flag for flag in services if flag != DISCV5_OFF]
        services += ["--discv5-discovery=true", f"--discv5-udp-port={DISCV5_UDP_PORT}",
                     *(f"--discv5-bootstrap-node={enr}" for enr in bootstrap_enrs)]
    flags = [
        f"--nodekey={me.nodekey}",
        "--listen-address=0.0.0.0",
        f"--tcp-port={TCP_PORT}",
        f"--nat=extip:{me.ip}",
        "--relay=true",
        f"--cluster-id={CLUSTER_ID}",
        *(f"--shard={shard}" for shard in shards),
        f"--num-shards-in-network={study.shards.count}",
        f"--max-msg-size={max_msg_size}B",
        f"--max-connections={connections}",
        f"--relay-service-ratio={RELAY_SERVICE_RATIO[0]}:{RELAY_SERVICE_RATIO[1]}",
        "--ip-colocation-limit=0",
        *services,
        f"--log-level={study.nwaku_log_level}",
        "--log-format=JSON",
        f"--rest={'true' if rest else 'false'}",
    ]
    if rest:
        flags += ["--rest-address=127.0.0.1", f"--rest-port={REST_PORT}"]
    flags += [f"--staticnode={multiaddr_of(peer.ip, peer.peer_id)}" for peer in static_peers]
    return flags


def environment(study: Study) -> dict[str, str]:
    env = {
        **({ENV_RELAY_WITHOUT_REST: "1"}
           if RELAY_WITHOUT_REST_PATCH in checkout.patch_numbers(study.stack.nwaku_tag, study.stack.nwaku_patches) else {}),
        ENV_MESSAGE_LINES_AT_NOTICE: "1",
        ENV_WITHHELD_COPY_LINES: "1",
        ENV_PROOF_GENERATION_NS: str(study.rln.proof_generation_ns),
        ENV_VERIFICATION_NS: str(study.rln.verification_ns),
        ENV_VERIFICATION_NS_PER_BYTE: repr(float(study.rln.verification_ns_per_byte)),
    }
    for name, value in vars(study.gossipsub).items():
        if value is not None:
            env[ENV_GOSSIPSUB[name]] = str(value)
    if study.stream_muxer:
        env[ENV_STREAM_MUXER] = study.stream_muxer
    if study.prune_only_removed:
        env[ENV_PRUNE_ONLY_REMOVED] = "1"
    if study.sequential_dials:
        env[ENV_SEQUENTIAL_DIALS] = "1"
    if study.subscribe_before_dials:
        env[ENV_SUBSCRIBE_BEFORE_DIALS] = "1"
    if study.flood_publish is not None:
        env[ENV_FLOOD_PUBLISH] = "1" if study.flood_publish else "0"
    if study.flood_publish_bandwidth_bps is not None:
        env[ENV_FLOOD_PUBLISH_BANDWIDTH_BPS] = str(study.flood_publish_bandwidth_bps)
    if study.idontwant_on_publish:
        env[ENV_IDONTWANT_ON_PUBLISH] = "1"
    if study.discovery is not None:
        env[ENV_TOPOLOGY_LINES_AT_NOTICE] = "1"
        env[ENV_ONLINE_WITHOUT_DNS] = "1"
    if study.rln.epoch_ns:
        env[ENV_RLN_EPOCH_NS] = str(study.rln.epoch_ns)
        env[ENV_SCORE_EVENTS_AT_NOTICE] = "1"
    if study.stack.nwaku_allocator == "malloc":
        env[ENV_GLIBC_MMAP_THRESHOLD] = str(study.nwaku_mmap_threshold_bytes)
    for key, variable in PATCH_SWITCHES.items():
        if getattr(study, key):
            env[variable] = "1"
    return env


def relay_shards_environment(study: Study, shards: tuple[int, ...]) -> dict[str, str]:
    """What makes a node subscribe to its own shards only (nwaku patch 0040), when it serves fewer than all."""
    return {ENV_RELAY_SHARDS: ",".join(str(s) for s in shards)} if study.shards.own_lists else {}


def message_hash(pubsub_topic: str, payload: bytes, content_topic: str, timestamp_ns: int, meta: bytes = b"") -> str:
    """Waku's deterministic message hash (RFC 14), as nwaku logs it in msg_hash."""
    digest = hashlib.sha256()
    digest.update(pubsub_topic.encode())
    digest.update(payload)
    digest.update(content_topic.encode())
    digest.update(meta)
    digest.update(timestamp_ns.to_bytes(8, "big"))
    return "0x" + digest.hexdigest()
