"""Reading a study config: YAML files merged over the schema's defaults (and, for the
machine-specific ``stack`` and ``resources`` sections, an untracked local config), validated,
units and cross-key rules checked, and turned into a typed ``Study``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from waku_shadow import checkout
from waku_shadow.configuration import bandwidth_classes, discovery, patched_settings, rln_platforms, rtt_matrix, schema, shards, units
from waku_shadow.configuration.study import (
    Gossipsub,
    LightClients,
    Locations,
    Resources,
    SHADOW_ALLOCATORS,
    Rln,
    RunPoint,
    Spam,
    Stack,
    Study,
    Sweep,
    merge,
    point_config,
    sweep_setting,
    with_sweep_value,
)
from waku_shadow.errors import ConfigError, ConfigProblems, Problem, describe, refused

# swept keys that may take 0: no churn, no spam
ZERO_SWEEPS = ("churn.leaves_per_minute", "spam.messages_per_epoch")
# topologies whose nodes draw no static peers, and why peers_per_node has no meaning there
UNDRAWN_TOPOLOGIES = {"cascade": "a cascade's nodes dial only their neighbour",
                      "discv5": "a discv5 network's nodes find their peers themselves"}
# a study config's list of overlays to lay under its own keys, and the folder they are in
OVERLAYS_KEY = "overlays"
OVERLAYS_DIR = "configs/overlays"
# a study config's one study config of configs/ to lay under it (with that one's overlays), by its file's stem
EXTENDS_KEY = "extends"
STUDIES_DIR = "configs"


def read_yaml(path: str | Path) -> dict:
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: no such config file")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys, not {type(data).__name__}")
    return data


@dataclass(frozen=True)
class Layer:
    """One source of a study's settings: a YAML file, the command line's --config, a shipped config."""

    source: str
    values: dict


def load(*paths: str | Path) -> Study:
    """Load a study from one or more YAML files, later ones overriding earlier ones."""
    return resolve_layers([Layer(str(path), read_yaml(path)) for path in paths])


def resolve(raw: dict, source: str = "config") -> Study:
    """Validate a raw config mapping against the schema and derive a ``Study``."""
    return resolve_layers([Layer(source, raw)])


def resolve_layers(layers: list[Layer]) -> Study:
    """The study the layers make, later ones overriding earlier ones; if it cannot be made,
    one ConfigError naming every problem with the source that set its key."""
    layers = with_overlays(with_extended(layers))
    raw: dict = {}
    for layer in layers:
        raw = merge(raw, layer.values)
    try:
        return _resolve(raw)
    except ConfigProblems as exc:
        raise ConfigError(describe(exc.problems, lambda key: source_of(key, layers))) from None


def with_overlays(layers: list[Layer]) -> list[Layer]:
    """The layers with the overlays each one names (its ``overlays`` key) laid under it, in the
    order named: what a layer sets itself wins over its overlays, and later layers over both."""
    expanded = []
    for layer in layers:
        if OVERLAYS_KEY not in layer.values:
            expanded.append(layer)
            continue
        expanded += [Layer(f"{OVERLAYS_DIR}/{name}.yaml", read_overlay(name)) for name in overlay_names(layer)]
        expanded.append(Layer(layer.source, {key: value for key, value in layer.values.items() if key != OVERLAYS_KEY}))
    return expanded


def overlay_names(layer: Layer) -> list[str]:
    """The overlays a layer names, each one a file of configs/overlays/."""
    named = layer.values[OVERLAYS_KEY]
    refused = [problem.text for problem in schema.problems({OVERLAYS_KEY: named}) if problem.key.startswith(OVERLAYS_KEY)]
    if refused:
        raise ConfigError(f"{layer.source}: {refused[0]}")
    shipped = sorted(path.stem for path in checkout.path(OVERLAYS_DIR).glob("*.yaml"))
    unknown = [name for name in named if name not in shipped]
    if unknown:
        raise ConfigError(f"{layer.source}: overlays: no overlay '{unknown[0]}' in {OVERLAYS_DIR}/ (there are: {', '.join(shipped)})")
    return named


def read_overlay(name: str) -> dict:
    path = checkout.path(OVERLAYS_DIR) / f"{name}.yaml"
    values = read_yaml(path)
    if OVERLAYS_KEY in values:
        raise ConfigError(f"{path}: an overlay is laid under a study and names no overlays itself; remove '{OVERLAYS_KEY}'")
    return values


def with_extended(layers: list[Layer]) -> list[Layer]:
    """The layers with the study config each one extends (its ``extends`` key) laid under it: what
    a layer sets itself wins over the config it extends and that config's overlays."""
    expanded = []
    for layer in layers:
        if EXTENDS_KEY in layer.values:
            extended = without_swept_key(extended_study(layer), layer.values.get("sweep"))
            expanded.append(without_unrun_sizes(extended, (layer.values.get("traffic") or {}).get("message_sizes")))
            layer = Layer(layer.source, {key: value for key, value in layer.values.items() if key != EXTENDS_KEY})
        expanded.append(layer)
    return expanded


def without_unrun_sizes(extended: Layer, sizes) -> Layer:
    """The study a layer extends, less its by_size settings of sizes the layer's own message_sizes leave out."""
    by_size = extended.values.get("by_size")
    if not isinstance(sizes, list) or not isinstance(by_size, dict):
        return extended
    try:
        run = {units.size_bytes(size, "traffic.message_sizes") for size in sizes}
        kept = {key: value for key, value in by_size.items() if units.size_bytes(key, f"by_size.{key}") in run}
    except ConfigError:
        return extended  # the study's own check names the bad size
    return Layer(extended.source, {**extended.values, "by_size": kept})


def without_swept_key(extended: Layer, sweep) -> Layer:
    """The study a layer extends, less the key the layer sweeps: the sweep sets it in every run."""
    if not isinstance(sweep, dict) or not isinstance(sweep.get("parameter"), str) or "." not in sweep["parameter"]:
        return extended
    section, key = sweep["parameter"].split(".", 1)
    if not isinstance(extended.values.get(section), dict) or key not in extended.values[section]:
        return extended
    values = {**extended.values, section: {k: v for k, v in extended.values[section].items() if k != key}}
    return Layer(extended.source, values)


def extended_study(layer: Layer) -> Layer:
    """The study config of configs/ a layer extends. One level: that config extends none itself. The
    layer names its own study, or its results would be taken for those of the study it extends."""
    name = layer.values[EXTENDS_KEY]
    refused = [problem.text for problem in schema.problems({EXTENDS_KEY: name}) if problem.key.startswith(EXTENDS_KEY)]
    if refused:
        raise ConfigError(f"{layer.source}: {refused[0]}")
    studies = {path.stem: path for path in sorted(checkout.path(STUDIES_DIR).glob("*.yaml")) if "study" in read_yaml(path)}
    if name not in studies:
        raise ConfigError(f"{layer.source}: extends: no study config '{name}' in {STUDIES_DIR}/ (there are: {', '.join(sorted(studies))})")
    if "study" not in layer.values:
        raise ConfigError(f"{layer.source}: a config that extends another names its own study; add 'study:' beside 'extends: {name}'")
    values = read_yaml(studies[name])
    if EXTENDS_KEY in values:
        raise ConfigError(f"{layer.source}: extends: {STUDIES_DIR}/{name}.yaml extends '{values[EXTENDS_KEY]}' itself; "
                          "a config extends one that extends none")
    return Layer(f"{STUDIES_DIR}/{name}.yaml", values)


def source_of(key: str, layers: list[Layer]) -> str:
    """The last layer that sets ``key``, else the layers that set keys under it, else "the default"
    (no layer sets it); for a problem of no one key, every layer."""
    path = [part for part in re.split(r"[.\[\]]+", key) if part]
    if not path:
        return " and ".join(dict.fromkeys(layer.source for layer in layers))
    setting = [layer.source for layer in layers if _sets(layer.values, path)]
    if setting:
        return setting[-1]
    beneath = [layer.source for layer in layers if _sets(layer.values, path, beneath=True)]
    return " and ".join(dict.fromkeys(beneath)) or "the default"


def _sets(values: dict, path: list[str], beneath: bool = False) -> bool:
    node = values
    for part in path:
        if isinstance(node, list) and part.isdigit():
            return True  # a list item: the layer sets the whole list
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return bool(node) if beneath else True


class Problems:
    """The problems of one config, collected as the checks go, so that one error names them all."""

    def __init__(self, found: list[Problem] | None = None):
        self.found = list(found or [])

    def add(self, key: str, message: str) -> None:
        self.found.append(Problem(key, f"{key}: {message}"))

    def parsed(self, parse, *args):
        """``parse(*args)``, or None with its ConfigError recorded."""
        try:
            return parse(*args)
        except ConfigProblems as exc:
            self.found.extend(exc.problems)
        except ConfigError as exc:
            self.found.append(Problem(exc.key or "", str(exc)))
        return None

    def raise_any(self) -> None:
        if self.found:
            raise ConfigProblems(self.found)


def _resolve(raw: dict) -> Study:
    refused = schema.problems(raw)
    if refused:
        # what the schema refused is named; the keys it left are checked further where they can be
        raw = schema.without_refused_keys(raw, refused)
        if schema.problems(raw):
            raise ConfigProblems(refused)
    found = Problems(refused)
    resolved = schema.with_defaults(raw, schema.schema())
    built = patched_settings.build_patch_numbers(resolved["stack"]["nwaku"], found)
    patched_settings.switch_off_without_their_patch(resolved, built)
    # keys another setting makes meaningless are refused when given and resolve to null
    raw_net = raw.get("network") or {}
    if resolved["network"]["topology"] in UNDRAWN_TOPOLOGIES:
        if raw_net.get("peers_per_node") is not None:
            found.add("network.peers_per_node", UNDRAWN_TOPOLOGIES[resolved["network"]["topology"]] + "; remove the key")
        resolved["network"]["peers_per_node"] = None
    if resolved["network"]["locations"] is not None:
        if raw_net.get("latency") is not None:
            found.add("network.latency", "with network.locations the latencies come from its rtt_matrix; remove the key")
        resolved["network"]["latency"] = None
    if resolved["network"]["bandwidth_classes"] is not None:
        for key in ("bandwidth_up", "bandwidth_down"):
            if raw_net.get(key) is not None:
                found.add(f"network.{key}", "network.bandwidth_classes gives each class its own; set it to null")
            resolved["network"][key] = None
    # a sweep study's own fields are those of its first value; each value is checked below
    cfg = with_sweep_value(resolved, resolved["sweep"] and resolved["sweep"]["values"][0])
    net, gs, traffic, rln, sh, res = (cfg[k] for k in ("network", "gossipsub", "traffic", "rln", "shadow", "resources"))

    nodes = net["nodes"]
    if net["topology"] == "random" and net["peers_per_node"] is None:
        found.add("network.peers_per_node", "a random topology needs it")
    if net["tcp_slow_start_after_idle"] and sh["experimental"].get("use_new_tcp"):
        found.add(
            "network.tcp_slow_start_after_idle",
            "only Shadow's legacy TCP has it, not the one shadow.experimental.use_new_tcp selects",
        )
    if net["locations"] is None and net["latency"] is None:
        found.add("network.latency", "needed unless network.locations is set")
    for key in ("bandwidth_up", "bandwidth_down"):
        if net["bandwidth_classes"] is None and net[key] is None:
            found.add(f"network.{key}", "needed unless network.bandwidth_classes is set")
    if net["topology"] == "random" and net["peers_per_node"] is not None and net["peers_per_node"] >= nodes:
        found.add("network.peers_per_node", f"{net['peers_per_node']} must be less than network.nodes ({nodes})")
    if traffic["publishers"] > nodes:
        found.add("traffic.publishers", f"{traffic['publishers']} is more than network.nodes ({nodes})")

    sizes = tuple(
        found.parsed(units.size_bytes, value, f"traffic.message_sizes[{i}]")
        for i, value in enumerate(traffic["message_sizes"])
    )
    read = [size for size in sizes if size is not None]
    if any(size == 0 for size in read):
        found.add("traffic.message_sizes", "a payload must have at least 1 byte")
    if len(set(read)) != len(read):
        found.add("traffic.message_sizes", f"{list(traffic['message_sizes'])} repeats a size")

    gossipsub = Gossipsub(**{key: gs[key] for key in Gossipsub.NWAKU_DEFAULTS})
    _check_mesh(gossipsub, nodes, net["topology"], found)

    interval = found.parsed(units.duration_ns, traffic["interval"], "traffic.interval")
    if interval is not None and interval <= 0:
        found.add("traffic.interval", "must be longer than 0")

    bootstrap = found.parsed(units.duration_ns, sh["bootstrap"], "shadow.bootstrap")
    drain = found.parsed(units.duration_ns, sh["drain"], "shadow.drain")
    stop = None if sh["stop_time"] is None else found.parsed(units.duration_ns, sh["stop_time"], "shadow.stop_time")

    sweep = None
    if cfg["sweep"] is not None:
        sweep = Sweep(cfg["sweep"]["parameter"], tuple(cfg["sweep"]["values"]))
        section, key = sweep.parameter.split(".")
        given = (raw.get(section) or {}).get(key)
        if given is not None and [sweep_setting(sweep.parameter, v) for v in sweep.values] != [given]:
            found.add(sweep.parameter, "sweep.values sets it; remove the key")
        resolved[section].pop(key, None)  # not a default either: the sweep sets it in every run
        if sweep.parameter not in ZERO_SWEEPS and min(sweep.values) < 1:
            found.add("sweep.values", f"{sweep.parameter} takes values of at least 1, got {min(sweep.values)}")
        if sweep.parameter == "network.peers_per_node" and net["topology"] == "cascade":
            found.add("sweep.parameter", "a cascade has no peers_per_node to sweep")
        if cfg["report"]["compare_with"] is not None:
            found.add("report.compare_with", "studies are compared size by size; a sweep has several points per size")

    latency = None if net["latency"] is None else found.parsed(units.duration_ns, net["latency"], "network.latency")
    locations = None if net["locations"] is None else found.parsed(_locations, net["locations"])
    bandwidth_up, bandwidth_down = (
        None if net[key] is None else found.parsed(_positive_quantity, units.bandwidth_bps, net[key], f"network.{key}")
        for key in ("bandwidth_up", "bandwidth_down"))
    host_classes = found.parsed(bandwidth_classes.parse, cfg)
    rln_settings = found.parsed(_rln, raw.get("rln") or {}, rln)
    mmap_threshold = found.parsed(_mmap_threshold, sh["nwaku_mmap_threshold"])
    traffic_interval = found.parsed(_positive_quantity, units.duration_ns, sh["traffic_interval"], "shadow.traffic_interval")
    churn_downtime = found.parsed(_positive_quantity, units.duration_ns, cfg["churn"]["downtime"], "churn.downtime")
    spam = found.parsed(_spam, cfg["spam"], cfg["rln"], traffic["publishers"], nodes)
    light_clients = found.parsed(_light_clients, cfg["light_clients"], nodes, bootstrap, interval)
    sharding = found.parsed(shards.parse, cfg)
    network_discovery = found.parsed(discovery.parse, cfg, built)
    if light_clients is not None and light_clients.active and net["locations"] is not None:
        found.add("light_clients.clients", "light clients over network.locations are not built yet: run them on one link")
    flood_bandwidth = None if gs["flood_publish_bandwidth"] is None else found.parsed(
        _positive_quantity, units.bandwidth_bps, gs["flood_publish_bandwidth"], "gossipsub.flood_publish_bandwidth")
    stack = found.parsed(_stack, cfg["stack"], gs["preamble"])
    memory_floor = found.parsed(units.size_bytes, res["memory_floor"], "resources.memory_floor")
    poll_interval = found.parsed(units.duration_ns, res["memory_poll_interval"], "resources.memory_poll_interval")
    stall_timeout = None if res["stall_timeout"] is None else found.parsed(
        _positive_quantity, units.duration_ns, res["stall_timeout"], "resources.stall_timeout")
    run_memory = None if res["run_memory"] is None else found.parsed(units.size_bytes, res["run_memory"], "resources.run_memory")
    run_runtime = None if res["run_runtime"] is None else found.parsed(units.duration_ns, res["run_runtime"], "resources.run_runtime")

    by_size = _check_by_size(resolved, cfg["by_size"], read, sweep, found)
    patched_settings.check(cfg, built, found)

    first_size = next((size for size in sizes if size), None)
    if sweep is not None and len(sweep.values) > 1 and first_size is not None:
        for value in sweep.values:
            # the first size and seed of each value stand for all its runs; by_size is checked on its own
            try:
                _resolve(point_config({**resolved, "by_size": {}}, RunPoint(f"{value}", first_size, cfg["seed"], value)))
            except ConfigProblems as exc:
                for problem in exc.problems:
                    found.add("sweep.values", f"{sweep.parameter} = {value}: {problem.text}")
    found.raise_any()

    study = Study(
        name=cfg["study"],
        seed=cfg["seed"],
        repetitions=cfg["repetitions"],
        sweep=sweep,
        nodes=nodes,
        topology=net["topology"],
        peers_per_node={"cascade": 1, "discv5": 0}.get(net["topology"], net["peers_per_node"]),
        latency_ns=latency,
        locations=locations,
        bandwidth_up_bps=bandwidth_up,
        bandwidth_down_bps=bandwidth_down,
        bandwidth_classes=host_classes,
        packet_loss=float(net["packet_loss"]),
        tcp_slow_start_after_idle=net["tcp_slow_start_after_idle"],
        shards=sharding,
        discovery=network_discovery,
        gossipsub=gossipsub,
        stream_muxer=cfg["libp2p"]["stream_muxer"],
        sequential_dials=cfg["libp2p"]["sequential_dials"],
        prune_only_removed=gs["prune_only_removed"],
        subscribe_before_dials=gs["subscribe_before_dials"],
        flood_publish=gs["flood_publish"],
        flood_publish_bandwidth_bps=flood_bandwidth,
        idontwant_on_publish=gs["idontwant_on_publish"],
        preamble=gs["preamble"],
        publishers=traffic["publishers"],
        messages_per_publisher=traffic["messages_per_publisher"],
        message_sizes=sizes,
        by_size=by_size,
        interval_ns=interval,
        warmup_messages=traffic["warmup_messages"],
        rln=rln_settings,
        bootstrap_ns=bootstrap,
        drain_ns=drain,
        stop_time_override_ns=stop,
        model_unblocked_syscall_latency=sh["model_unblocked_syscall_latency"],
        shim_memory_syscalls=sh["shim_memory_syscalls"],
        few_descriptors_per_process=sh["few_descriptors_per_process"],
        nwaku_log_level=sh["nwaku_log_level"],
        nwaku_services=sh["nwaku_services"],
        nwaku_copy_once=sh["nwaku_copy_once"],
        nwaku_hash_once=sh["nwaku_hash_once"],
        nwaku_poll_once_per_burst=sh["nwaku_poll_once_per_burst"],
        nwaku_select_only_to_wait=sh["nwaku_select_only_to_wait"],
        nwaku_rdhup_only_with_reader=sh["nwaku_rdhup_only_with_reader"],
        nwaku_null_cipher=sh["nwaku_null_cipher"],
        nwaku_stand_in_key_exchange=sh["nwaku_stand_in_key_exchange"],
        nwaku_without_health_loop=sh["nwaku_without_health_loop"],
        nwaku_without_exception_traces=sh["nwaku_without_exception_traces"],
        nwaku_mmap_threshold_bytes=mmap_threshold,
        traffic_capture=sh["traffic_capture"],
        traffic_interval_ns=traffic_interval,
        shadow_experimental=dict(sh["experimental"]),
        compare_with=cfg["report"]["compare_with"],
        churn_leaves_per_minute=cfg["churn"]["leaves_per_minute"],
        churn_downtime_ns=churn_downtime,
        spam=spam,
        light_clients=light_clients,
        min_delivery=float(cfg["validation"]["min_delivery"]),
        stack=stack,
        resources=Resources(
            memory_floor_bytes=memory_floor,
            memory_poll_interval_ns=poll_interval,
            stall_timeout_ns=stall_timeout,
            merge_identical_pages=res["merge_identical_pages"],
            cost_margin=res["cost_margin"],
            run_memory_bytes=run_memory,
            run_runtime_ns=run_runtime,
            threads_per_run=res["threads_per_run"],
            results_dir=str(Path(res["results_dir"]).expanduser()),
            build_dir=str(Path(res["build_dir"]).expanduser()),
        ),
        resolved=resolved,
    )
    if stop is not None and stop <= study.last_publish_ns:
        found.add("shadow.stop_time", f"{sh['stop_time']} ends before the last publish at {units.shadow_time(study.last_publish_ns)}")
    found.raise_any()
    return study


def _check_by_size(resolved: dict, by_size: dict, sizes: list[int], sweep: Sweep | None, found: Problems) -> dict[int, dict]:
    """by_size's settings by size, each size's run config resolved on its own (the first swept value
    and seed stand for the rest)."""
    settings = {}
    for key, values in by_size.items():
        where = f"by_size.{key}"
        size = found.parsed(units.size_bytes, key, where)
        if size is None:
            continue
        if size not in sizes:
            found.add(where, f"{key} is not one of traffic.message_sizes")
        elif size in settings:
            found.add(where, f"{key} is a size by_size already names")
        elif "nodes" in (values.get("network") or {}):
            found.add(where, "network.nodes is the study's, for every size")
        elif sweep is not None and sweep.parameter.split(".")[1] in (values.get(sweep.parameter.split(".")[0]) or {}):
            found.add(where, f"{sweep.parameter} is swept; it cannot also differ by size")
        else:
            settings[size] = values
            try:
                _resolve(point_config(resolved, RunPoint(key, size, resolved["seed"], sweep and sweep.values[0])))
            except ConfigProblems as exc:
                for problem in exc.problems:
                    found.add(where, problem.text)
    return settings


# nim-libp2p's switch for gossipsub v1.4 (PREAMBLE, IMRECEIVING), a compile-time define
PREAMBLE_NIMFLAGS = "NIMFLAGS=-d:libp2p_gossipsub_1_4"


def _check_mesh(gossipsub: Gossipsub, nodes: int, topology: str, found: Problems) -> None:
    eff = gossipsub.effective()
    if not eff["d_low"] <= eff["d"] <= eff["d_high"]:
        found.add(
            "gossipsub",
            "need d_low <= d <= d_high, got "
            f"d_low={eff['d_low']}, d={eff['d']}, d_high={eff['d_high']} (unset values are nwaku's 6/4/8)",
        )
    # a D the study sets (d_low <= d above) must be one a node can reach: no node has more peers than this
    most_peers = 2 if topology == "cascade" else nodes - 1
    if gossipsub.d is not None and gossipsub.d > most_peers:
        where = "a cascade's node has 2" if topology == "cascade" else f"a node of {nodes} has at most {most_peers}"
        found.add("gossipsub.d", f"{gossipsub.d} mesh peers cannot exist: {where} peers")


def _locations(locations: dict) -> Locations:
    path = Path(locations["rtt_matrix"])
    if not path.is_absolute():
        path = checkout.root() / path
    same_location = units.duration_ns(locations["same_location_rtt"], "network.locations.same_location_rtt")
    try:
        matrix = rtt_matrix.read_rtt_matrix(path, same_location)
    except ConfigError as exc:
        raise refused("network.locations.rtt_matrix", str(exc)) from None
    names = locations["names"]
    unknown = [name for name in names if name not in matrix.names]
    if unknown:
        raise refused(
            "network.locations.names",
            f"{unknown[0]!r} is not in {locations['rtt_matrix']}; its locations: {', '.join(matrix.names)}",
        )
    weights = locations["weights"] or [1] * len(names)
    if len(weights) != len(names):
        raise refused("network.locations.weights", f"{len(weights)} weights for {len(names)} names; give one per name")
    return Locations(
        matrix=matrix,
        matrix_path=locations["rtt_matrix"],
        one_way_fraction=float(locations["one_way_fraction"]),
        weights=tuple((name, float(weight)) for name, weight in zip(names, weights)),
        assignment=locations["assignment"],
    )


def _positive(value: int, key: str) -> int:
    if value <= 0:
        raise refused(key, "must be more than 0")
    return value


def _positive_quantity(parse, value: object, key: str) -> int:
    return _positive(parse(value, key), key)


GLIBC_MMAP_THRESHOLD_MAX = 32 * 1024 * 1024  # glibc ignores a larger MALLOC_MMAP_THRESHOLD_ on 64-bit


def _mmap_threshold(value: object) -> int:
    key = "shadow.nwaku_mmap_threshold"
    threshold = _positive(units.size_bytes(value, key), key)
    if threshold > GLIBC_MMAP_THRESHOLD_MAX:
        raise refused(key, f"{value} is more than glibc accepts ({GLIBC_MMAP_THRESHOLD_MAX // 2**20} MiB)")
    return threshold


def _light_clients(light: dict, nodes: int, bootstrap_ns: int | None, interval_ns: int | None) -> LightClients:
    churn = light["churn"]
    found = LightClients(
        service_nodes=light["service_nodes"],
        clients=light["clients"],
        publishers=light["publishers"],
        subscribe_at_ns=units.duration_ns(light["subscribe_at"], "light_clients.subscribe_at"),
        subscribe_over_ns=units.duration_ns(light["subscribe_over"], "light_clients.subscribe_over"),
        service_nodes_per_client=light["service_nodes_per_client"],
        content_topics=light["content_topics"],
        topics_per_client=light["topics_per_client"],
        churn_leaves_per_minute=churn["leaves_per_minute"],
        churn_downtime_ns=_positive_quantity(units.duration_ns, churn["downtime"], "light_clients.churn.downtime"),
        store_lookback_ns=units.duration_ns(churn["store_lookback"], "light_clients.churn.store_lookback"),
    )
    if found.churn_leaves_per_minute and interval_ns:
        most = found.store_window_ns // interval_ns + 1
        if most > found.STORE_PAGE:
            raise refused("light_clients.churn.downtime", f"a returning client's store query spans "
                          f"{found.store_window_ns / 1e9:g} s (store_lookback + downtime + 3 s), up to {most} messages "
                          f"at traffic.interval: more than one store page ({found.STORE_PAGE}); shorten it")
    if found.clients and not found.service_nodes:
        raise refused("light_clients.clients", f"{found.clients} light clients need a service node; set light_clients.service_nodes")
    if found.service_nodes > nodes:
        raise refused("light_clients.service_nodes", f"{found.service_nodes} service nodes are more than network.nodes ({nodes})")
    if found.clients and found.service_nodes_per_client > found.service_nodes:
        raise refused("light_clients.service_nodes_per_client", f"{found.service_nodes_per_client} service nodes per client "
                      f"are more than light_clients.service_nodes ({found.service_nodes})")
    if found.content_topics > 1 and not found.clients:
        raise refused("light_clients.content_topics", f"{found.content_topics} content topics without light clients: "
                      "relay nodes carry every topic alike; set light_clients.clients")
    if found.topics_per_client > found.content_topics:
        raise refused("light_clients.topics_per_client", f"{found.topics_per_client} topics per client are more than "
                      f"light_clients.content_topics ({found.content_topics})")
    if found.publishers > found.clients:
        raise refused("light_clients.publishers", f"{found.publishers} light publishers are more than light_clients.clients ({found.clients})")
    last = found.subscribe_at_ns + found.subscribe_over_ns
    if found.clients and bootstrap_ns is not None and last >= bootstrap_ns / 2:
        raise refused("light_clients.subscribe_over", f"the clients' subscriptions run to {last / 1e9:g} s: they must "
                      f"end before the second half of shadow.bootstrap ({bootstrap_ns / 2e9:g} s), where each node's "
                      "idle traffic is measured")
    return found


def _spam(spam: dict, rln: dict, publishers: int, nodes: int) -> Spam:
    found = Spam(
        spammers=spam["spammers"],
        messages_per_epoch=spam["messages_per_epoch"],
        duration_ns=units.duration_ns(spam["duration"], "spam.duration"),
        valid_proofs=spam["valid_proofs"],
    )
    if found.spammers and rln["epoch"] is None:
        raise refused("spam.spammers", "spam is judged against RLN's rate limit; set rln.epoch")
    if found.spammers and found.spammers + publishers > nodes:
        raise refused(
            "spam.spammers", f"{found.spammers} spammers and {publishers} publishers are more than network.nodes ({nodes})"
        )
    if found.active and found.duration_ns <= 0:
        raise refused("spam.duration", "must be longer than 0")
    return found


def _rln(raw_rln: dict, rln: dict) -> Rln:
    platform = rln["platform"]
    if platform is not None:
        explicit = [k for k in ("proof_generation", "verification") if raw_rln.get(k) is not None]
        if explicit:
            raise refused("rln.platform", f"{platform!r} sets the delays; remove rln.{explicit[0]} or the platform")
        platforms = rln_platforms.platforms()
        if platform not in platforms:
            raise refused(
                "rln.platform",
                f"{platform!r} is not in the paper's Table 1; known platforms: " + ", ".join(map(repr, platforms)),
            )
        generation_ms, verification_ms = platforms[platform]
        generation, verification = round(generation_ms * 1e6), round(verification_ms * 1e6)
    else:
        generation = units.duration_ns(rln["proof_generation"] or 0, "rln.proof_generation")
        verification = units.duration_ns(rln["verification"] or 0, "rln.verification")
    per_byte = rln["verification_per_byte"]
    try:
        number, unit = per_byte.split()
        per_byte_ns = float(number) * units.duration_ns(f"1 {unit}", "rln.verification_per_byte")
    except (ValueError, ConfigError):
        raise refused("rln.verification_per_byte", f"cannot read {per_byte!r}; use a duration per byte such as '25 ns'") from None
    if per_byte_ns < 0:
        raise refused("rln.verification_per_byte", "must not be negative")
    epoch = None if rln["epoch"] is None else _positive(units.duration_ns(rln["epoch"], "rln.epoch"), "rln.epoch")
    return Rln(platform, generation, verification, per_byte_ns, epoch, rln["messages_per_epoch"])


def _stack(stack: dict, preamble: bool) -> Stack:
    shadow, nwaku = stack["shadow"], stack["nwaku"]
    if nwaku["binary"] and nwaku["source"]:
        raise refused("stack.nwaku", "give either binary or source, not both")
    if preamble and nwaku["binary"]:
        raise refused(
            "gossipsub.preamble", "it is a build of its own; a prebuilt stack.nwaku.binary cannot have it: give a source or a tag"
        )
    if nwaku["allocator"] == "malloc" and nwaku["memory_manager"] == "refc":
        raise refused(
            "stack.nwaku.allocator", "malloc needs memory_manager orc (Nim's refc collector ignores it); use allocator nim"
        )
    if shadow["allocator"] not in SHADOW_ALLOCATORS and "/" not in shadow["allocator"]:
        raise refused("stack.shadow.allocator",
                      f"{shadow['allocator']!r} is none of {', '.join(SHADOW_ALLOCATORS)} and not a path to a malloc library")
    curl = stack["curl"]
    return Stack(
        shadow_binary=local_path(shadow["binary"]),
        shadow_repository=shadow["repository"],
        shadow_tag=shadow["tag"],
        shadow_allocator=local_path(shadow["allocator"]) if "/" in shadow["allocator"] else shadow["allocator"],
        nwaku_binary=local_path(nwaku["binary"]),
        nwaku_source=local_path(nwaku["source"]),
        nwaku_repository=nwaku["repository"],
        nwaku_tag=nwaku["tag"],
        nwaku_patches=nwaku["patches"],
        nwaku_make_flags=tuple(nwaku["make_flags"]) + ((PREAMBLE_NIMFLAGS,) if preamble else ()),
        nwaku_memory_manager=nwaku["memory_manager"],
        nwaku_allocator=nwaku["allocator"],
        nwaku_path_prepend=tuple(local_path(d) for d in nwaku["path_prepend"]),
        # a command name is looked up on PATH where it runs; a path is a path
        curl=local_path(curl) if "/" in curl or curl.startswith("~") else curl,
    )


def local_path(value: str | None) -> str | None:
    """A configured path of this machine, absolute: ``~`` expanded, a relative path taken from
    the directory the workflow runs in. Processes start elsewhere (Shadow in its run folder),
    so a relative path would name another file there."""
    return None if value is None else str(Path(value).expanduser().absolute())


def dump_study(study: Study) -> str:
    """The resolved study sections as YAML: what identifies the study, without the machine's."""
    return yaml.safe_dump(study.study_config(), sort_keys=False)
