"""A resolved study: its typed settings and the runs they expand to (sizes, seeds, a sweep's values)."""

from __future__ import annotations

import copy
import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import ClassVar

from waku_shadow.configuration import rtt_matrix, units
from waku_shadow.errors import ConfigError

MACHINE_SECTIONS = ("stack", "resources")


@dataclass(frozen=True)
class Gossipsub:
    d: int | None = None
    d_low: int | None = None
    d_high: int | None = None
    d_lazy: int | None = None

    NWAKU_DEFAULTS = {"d": 6, "d_low": 4, "d_high": 8, "d_lazy": 6}

    def effective(self) -> dict[str, int]:
        """The values nwaku will run with: configured ones over nwaku's defaults."""
        return {
            name: default if getattr(self, name) is None else getattr(self, name)
            for name, default in self.NWAKU_DEFAULTS.items()
        }


@dataclass(frozen=True)
class Rln:
    platform: str | None
    proof_generation_ns: int
    verification_ns: int
    verification_ns_per_byte: float
    epoch_ns: int | None = None  # RLN's rate limit is enforced (patch 0011) only when set
    messages_per_epoch: int = 1

    def verification_delay_ns(self, payload_bytes: int) -> int:
        return round(self.verification_ns + self.verification_ns_per_byte * payload_bytes)


@dataclass(frozen=True)
class Spam:
    spammers: int = 0
    messages_per_epoch: int = 0
    duration_ns: int = 0
    valid_proofs: bool = True

    @property
    def active(self) -> bool:
        return self.spammers > 0 and self.messages_per_epoch > 0


@dataclass(frozen=True)
class LightClients:
    # a client that came back subscribes again after RESUBSCRIBE_AFTER_NS and asks the store after
    # STORE_QUERY_AFTER_NS, for one page: nwaku's MaxPageSize (waku/waku_store/common.nim)
    RESUBSCRIBE_AFTER_NS: ClassVar[int] = 1_000_000_000
    STORE_QUERY_AFTER_NS: ClassVar[int] = 3_000_000_000
    STORE_PAGE: ClassVar[int] = 100

    service_nodes: int = 0
    clients: int = 0
    publishers: int = 0
    subscribe_at_ns: int = 0
    subscribe_over_ns: int = 0
    service_nodes_per_client: int = 1
    content_topics: int = 1
    topics_per_client: int = 1
    churn_leaves_per_minute: int = 0
    churn_downtime_ns: int = 0
    store_lookback_ns: int = 0

    @property
    def active(self) -> bool:
        return self.clients > 0

    @property
    def store_window_ns(self) -> int:
        """How long a returning client's store query reaches back: from store_lookback before it left."""
        return self.store_lookback_ns + self.churn_downtime_ns + self.STORE_QUERY_AFTER_NS


@dataclass(frozen=True)
class Shards:
    count: int = 1  # shards in the cluster
    per_node: int | None = None  # None: every relay node on every shard, as nwaku is released

    @property
    def own_lists(self) -> bool:
        """Whether nodes serve only some of the shards: k of them, fewer than the cluster's."""
        return self.per_node is not None and self.per_node < self.count


@dataclass(frozen=True)
class Discovery:
    """topology: discv5: the nodes find their peers by discv5 from the first bootstrap_nodes nodes."""
    bootstrap_nodes: int
    max_connections: int  # nwaku's --max-connections


def exact_counts(nodes: int, weights: list[float]) -> list[int]:
    """Nodes per weight (a location's, a bandwidth class's share) in proportion, remainders to the largest
    fractions, the first on a tie."""
    exact = [nodes * weight / sum(weights) for weight in weights]
    counts = [math.floor(x) for x in exact]
    for i in sorted(range(len(weights)), key=lambda i: (counts[i] - exact[i], i))[: nodes - sum(counts)]:
        counts[i] += 1
    return counts


@dataclass(frozen=True)
class BandwidthClass:
    name: str
    share: float  # of the relay nodes
    up_bps: int
    down_bps: int


@dataclass(frozen=True)
class Locations:
    matrix: rtt_matrix.RttMatrix
    matrix_path: str
    one_way_fraction: float
    weights: tuple[tuple[str, float], ...]
    assignment: str

    def one_way_ns(self, a: str, b: str) -> int:
        return rtt_matrix.one_way_ns(self.matrix, a, b, self.one_way_fraction)


SHADOW_ALLOCATORS = ("auto", "glibc", "jemalloc")  # stack.shadow.allocator's names; anything else is a path


@dataclass(frozen=True)
class Stack:
    shadow_binary: str | None
    shadow_repository: str
    shadow_tag: str
    shadow_allocator: str  # "auto", "glibc", "jemalloc" or the path of a malloc library (run/allocator.py)
    nwaku_binary: str | None
    nwaku_source: str | None
    nwaku_repository: str
    nwaku_tag: str
    nwaku_patches: str  # stack.nwaku.patches: the tiers of the tag's patches the build applies (checkout.PATCH_CHOICES)
    nwaku_make_flags: tuple[str, ...]
    nwaku_memory_manager: str
    nwaku_allocator: str
    nwaku_path_prepend: tuple[str, ...]
    curl: str


@dataclass(frozen=True)
class Sweep:
    parameter: str  # a dotted config key, e.g. gossipsub.d
    values: tuple[int, ...]

    @property
    def name(self) -> str:
        """The key's last part (with its unit, for traffic.interval): the run id's prefix and the tables' column."""
        return self.parameter.rsplit(".", 1)[1] + ("_ms" if self.parameter == LOAD_PARAMETER else "")


LOAD_PARAMETER = "traffic.interval"  # swept in milliseconds
NODES_PARAMETER = "network.nodes"


def sweep_setting(parameter: str, value: int):
    """What a swept value sets its key to in a run's config."""
    return f"{value} ms" if parameter == LOAD_PARAMETER else value


@dataclass(frozen=True)
class RunPoint:
    """One Shadow run of a study: a message size, a seed and, in a sweep, the swept value."""

    run_id: str
    size_bytes: int
    seed: int
    value: int | None


@dataclass(frozen=True)
class Resources:
    memory_floor_bytes: int
    memory_poll_interval_ns: int
    stall_timeout_ns: int | None
    merge_identical_pages: bool
    cost_margin: float
    run_memory_bytes: int | None
    run_runtime_ns: int | None
    threads_per_run: int | None
    results_dir: str
    build_dir: str


@dataclass(frozen=True)
class Study:
    name: str
    seed: int
    repetitions: int
    sweep: Sweep | None
    nodes: int
    topology: str
    peers_per_node: int  # 1 in a cascade: a node dials only the next one; 0 with discv5: no static peers
    latency_ns: int | None  # None when the latencies come from locations
    locations: Locations | None
    bandwidth_up_bps: int | None  # None when bandwidth_classes set each class's
    bandwidth_down_bps: int | None
    bandwidth_classes: tuple[BandwidthClass, ...]  # empty: every node at bandwidth_up / bandwidth_down
    packet_loss: float
    tcp_slow_start_after_idle: bool
    shards: Shards
    discovery: Discovery | None  # None: static dials (topology random or cascade)
    gossipsub: Gossipsub
    stream_muxer: str | None  # None: nwaku's own order (yamux first)
    sequential_dials: bool  # nwaku patch 0015
    prune_only_removed: bool  # nwaku patch 0014
    subscribe_before_dials: bool  # nwaku patch 0038
    flood_publish: bool | None  # None: nwaku's own (true); nwaku patch 0016
    flood_publish_bandwidth_bps: int | None  # None: nim-libp2p's 100 Mbit/s
    idontwant_on_publish: bool
    preamble: bool  # an nwaku build with -d:libp2p_gossipsub_1_4
    publishers: int
    messages_per_publisher: int
    message_sizes: tuple[int, ...]
    by_size: dict[int, dict]  # settings that differ for a size's runs (run_config applies them)
    interval_ns: int
    warmup_messages: int
    rln: Rln
    bootstrap_ns: int
    drain_ns: int
    stop_time_override_ns: int | None
    model_unblocked_syscall_latency: bool
    shim_memory_syscalls: bool
    few_descriptors_per_process: bool
    nwaku_log_level: str
    nwaku_services: str
    nwaku_copy_once: bool
    nwaku_hash_once: bool
    nwaku_poll_once_per_burst: bool
    nwaku_select_only_to_wait: bool
    nwaku_rdhup_only_with_reader: bool
    nwaku_null_cipher: bool
    nwaku_stand_in_key_exchange: bool
    nwaku_without_health_loop: bool
    nwaku_without_exception_traces: bool
    nwaku_mmap_threshold_bytes: int
    traffic_capture: bool
    traffic_interval_ns: int
    shadow_experimental: dict
    compare_with: str | None
    churn_leaves_per_minute: int
    churn_downtime_ns: int
    spam: Spam
    light_clients: LightClients
    min_delivery: float
    stack: Stack
    resources: Resources
    resolved: dict = field(compare=False, repr=False)

    @property
    def sharded(self) -> bool:
        """Whether any of its runs is on a cluster of several shards."""
        return self.shards.count > 1 or (self.sweep is not None and self.sweep.parameter == "network.shards"
                                         and max(self.sweep.values) > 1)

    @property
    def hosts(self) -> int:
        """Shadow's hosts, each running one nwaku: the relay nodes and the light clients."""
        return self.nodes + self.light_clients.clients

    @property
    def messages_per_run(self) -> int:
        return self.warmup_messages + (self.publishers + self.light_clients.publishers) * self.messages_per_publisher

    @property
    def last_publish_ns(self) -> int:
        honest = self.bootstrap_ns + (self.messages_per_run - 1) * self.interval_ns
        return max(honest, self.bootstrap_ns + self.spam.duration_ns) if self.spam.active else honest

    @property
    def stop_time_ns(self) -> int:
        if self.stop_time_override_ns is not None:
            return self.stop_time_override_ns
        return self.last_publish_ns + self.drain_ns

    @property
    def seeds(self) -> tuple[int, ...]:
        return tuple(range(self.seed, self.seed + self.repetitions))

    def runs(self) -> list[RunPoint]:
        """Every run, swept value outermost, then size, then seed."""
        values = self.sweep.values if self.sweep else (None,)
        return [
            RunPoint(self._run_id(size, seed, value), size, seed, value)
            for value in values
            for size in self.message_sizes
            for seed in self.seeds
        ]

    def _run_id(self, size: int, seed: int, value: int | None) -> str:
        if self.sweep is not None and self.sweep.parameter == NODES_PARAMETER:
            return f"n{value}-size{size}B-seed{seed}"  # a run id names its N already
        prefix = f"{self.sweep.name}{value}-" if self.sweep else ""
        return f"{prefix}n{self.nodes}-size{size}B-seed{seed}"

    def run_ids(self) -> list[str]:
        return [run.run_id for run in self.runs()]

    def run(self, run_id: str) -> RunPoint:
        for run in self.runs():
            if run.run_id == run_id:
                return run
        raise ConfigError(f"run {run_id!r} is not part of study {self.name!r}")

    def run_config(self, run_id: str) -> dict:
        """The resolved study config of one run (one size, one seed and, in a sweep, one value),
        without the machine-specific sections."""
        return point_config(self.study_config(), self.run(run_id))

    def study_config(self) -> dict:
        """The resolved study sections, without the machine-specific ones."""
        return {k: v for k, v in self.resolved.items() if k not in MACHINE_SECTIONS}

    def config_hash(self) -> str:
        text = json.dumps(self.study_config(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def point_columns(study: Study) -> dict:
    """What tells a run's rows apart in the study's tables: run, seed and swept value
    (``study`` is the run's own config, a study of one run)."""
    (point,) = study.runs()
    return {"run": point.run_id, "seed": point.seed, **({study.sweep.name: point.value} if study.sweep else {})}


def point_config(resolved: dict, run: RunPoint) -> dict:
    point = with_sweep_value(merge(resolved, {"seed": run.seed, "repetitions": 1}), run.value)
    point["traffic"]["message_sizes"] = [run.size_bytes]
    if point["sweep"] is not None:
        point["sweep"]["values"] = [run.value]
    # the run takes its own size's settings (by_size), and keeps no other size's
    own = size_settings(point.pop("by_size", None) or {}).get(run.size_bytes)
    return {**(merge(point, own) if own else point), "by_size": {}}


def size_settings(by_size: dict) -> dict[int, dict]:
    """by_size's settings by size in bytes."""
    return {units.size_bytes(key, f"by_size.{key}"): settings for key, settings in by_size.items()}


def with_sweep_value(resolved: dict, value: int | None) -> dict:
    """The config with the swept key set to ``value`` (and, for gossipsub.d, d_low and d_high
    following it unless the study sets them); unchanged without a sweep."""
    sweep = resolved["sweep"]
    if sweep is None:
        return resolved
    config = merge(resolved, {})
    section, key = sweep["parameter"].split(".")
    config[section][key] = sweep_setting(sweep["parameter"], value)
    if sweep["parameter"] == "gossipsub.d":
        gossipsub = config["gossipsub"]
        if gossipsub["d_low"] is None:
            gossipsub["d_low"] = max(1, value - 2)
        if gossipsub["d_high"] is None:
            gossipsub["d_high"] = value + 2
    return config


def merge(base: dict, override: dict) -> dict:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged
