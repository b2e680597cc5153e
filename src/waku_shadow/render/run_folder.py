"""Rendering one run's folder: network graph, identities, links, schedule and shadow.yaml."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

from waku_shadow import layout
from waku_shadow.configuration.study import Study
from waku_shadow.configuration.units import shadow_time
from waku_shadow.render import churn_plan, light_clients, network_graph, nwaku, schedule
from waku_shadow.render.plan import RunPlan
from waku_shadow.stack.shadow_options import (
    FEW_DESCRIPTORS_PER_PROCESS,
    SHIM_MEMORY_SYSCALLS,
    TCP_SLOW_START_AFTER_IDLE,
)

REST_PUBLISH_PATH = "/relay/v1/auto/messages"
MIN_MAX_MSG_SIZE = 150 * 1024  # nwaku's default maximum message size
MSG_SIZE_HEADROOM = 16 * 1024  # room for the WakuMessage fields around the payload
PUBLISH_RETRIES = 3
PCAP_CAPTURE_BYTES = 64  # an IPv4 header and a TCP header with options


def shadow_yaml(run: RunPlan, run_dir: Path, wakunode2: str, curl: str) -> dict:
    study = run.study
    connections = (study.discovery.max_connections if study.discovery is not None
                   else nwaku.max_connections(max(run.topology.in_degrees()), max(len(d) for d in run.topology.dials)))
    bootstrap_enrs = {node.index: nwaku.node_record(node, run.shards.served[node.index]) for node in run.bootstrap_nodes}
    max_msg_size = max(MIN_MAX_MSG_SIZE, run.size_bytes + MSG_SIZE_HEADROOM)
    env = nwaku.environment(study)
    publish_url = f"http://127.0.0.1:{nwaku.REST_PORT}{REST_PUBLISH_PATH}"
    lightpush_url = f"http://127.0.0.1:{nwaku.REST_PORT}{light_clients.LIGHTPUSH_PATH}"
    graph_node = network_graph.node_ids(run)

    roles = run.roles
    service_nodes = set(roles.service_nodes)
    hosts = {}
    for me in run.identities:

        def nwaku_process(dials: tuple[int, ...], start_ns: int) -> dict:
            if roles.is_client(me.index):
                args = light_clients.client_args(study, me, run.identities[roles.lightpush_of(me.index)],
                                                 run.identities[roles.service_of(me.index)],
                                                 run.identities[roles.store_of(me.index)], max_msg_size)
            else:
                serves = me.index in service_nodes
                args = nwaku.args(
                    study,
                    me,
                    [run.identities[p] for p in dials],
                    rest=me.index in run.rest_hosts,
                    max_msg_size=max_msg_size,
                    connections=light_clients.service_connections(connections, roles.clients_of(me.index)) if serves else connections,
                    shards=run.shards.served[me.index],
                    bootstrap_enrs=tuple(enr for index, enr in bootstrap_enrs.items() if index != me.index),
                )
                args = light_clients.service_args(args, study.stop_time_ns) if serves else args
            own_shards = {} if roles.is_client(me.index) else nwaku.relay_shards_environment(study, run.shards.served[me.index])
            return {
                "path": wakunode2,
                "args": args,
                "environment": {**env, **own_shards},
                "start_time": shadow_time(start_ns),
                "expected_final_state": "running",
            }

        def subscribe(at_ns: int) -> dict:
            return curl_process(curl, light_clients.subscribe_body(me.index - roles.relay_nodes, roles.topics_of(me.index)),
                                f"http://127.0.0.1:{nwaku.REST_PORT}{light_clients.FILTER_SUBSCRIBE_PATH}",
                                at_ns, retried=True, inline=True)

        node = nwaku_process(() if roles.is_client(me.index) else run.topology.dials[me.index], 0)
        processes = [node]
        if roles.is_client(me.index):
            processes.append(subscribe(roles.subscribe_ns[me.index - roles.relay_nodes]))
        for outage in (o for o in run.outages if o.node == me.index):
            node.update(
                shutdown_time=shadow_time(outage.leave_ns),
                shutdown_signal=nwaku.LEAVE_SIGNAL,
                expected_final_state=nwaku.LEFT_STATE,
            )
            if outage.rejoin_ns < study.stop_time_ns:
                node = nwaku_process(outage.dials, outage.rejoin_ns)
                processes.append(node)
            if roles.is_client(me.index):
                processes.extend(returning_client(study, curl, outage, subscribe, roles.topics_of(me.index)))
        for message in run.messages:
            if me.index != (message.publisher if message.light_client is None else message.light_client):
                continue
            body = (run_dir / layout.MESSAGES / schedule.body_name(message)).resolve()
            url = publish_url if message.light_client is None else lightpush_url
            # a retried lightpush would log a second intent; a failed one is the processes check's to name
            retried = not message.spam and message.light_client is None
            processes.append(curl_process(curl, str(body), url, message.publish_at_ns, retried=retried))
        hosts[me.host] = {
            "network_node_id": graph_node[me.index],
            "ip_addr": me.ip,
            "processes": processes,
        }

    general = {
        "stop_time": shadow_time(study.stop_time_ns),
        "seed": study.seed,
        "progress": True,
        "model_unblocked_syscall_latency": study.model_unblocked_syscall_latency,
        "data_directory": layout.SHADOW_DATA,
    }
    network = {"graph": {"type": "gml", "file": {"path": layout.NETWORK_GRAPH}}}
    if network_graph.routed_directly(run):
        network["use_shortest_path"] = False
    config = {"general": general, "network": network}
    experimental = dict(study.shadow_experimental)
    if study.tcp_slow_start_after_idle:
        # only when asked: an unpatched Shadow refuses the option
        experimental[TCP_SLOW_START_AFTER_IDLE] = True
    if study.shim_memory_syscalls:
        experimental[SHIM_MEMORY_SYSCALLS] = True
    if study.few_descriptors_per_process:
        experimental[FEW_DESCRIPTORS_PER_PROCESS] = True
    if experimental:
        config["experimental"] = experimental
    if study.traffic_capture:
        # headers only: the traffic table counts packet lengths, not contents
        config["host_option_defaults"] = {"pcap_enabled": True, "pcap_capture_size": f"{PCAP_CAPTURE_BYTES} B"}
    return {**config, "hosts": hosts}


def returning_client(study: Study, curl: str, outage: churn_plan.Outage, subscribe, topics: tuple[int, ...]) -> list[dict]:
    """A light client back from an outage subscribes again, then asks its store's service node for
    what it missed on its content topics; nothing when it is not back before the run ends."""
    from_ns, to_ns, query_ns = light_clients.store_window(study, outage.leave_ns, outage.rejoin_ns)
    if query_ns is None:
        return []
    resubscribe_ns = outage.rejoin_ns + study.light_clients.RESUBSCRIBE_AFTER_NS
    store_query = {"path": curl, "args": light_clients.store_query_args(from_ns, to_ns, query_ns, topics),
                   "start_time": shadow_time(query_ns), "expected_final_state": {"exited": 0}}
    return [subscribe(resubscribe_ns), store_query]


def curl_process(curl: str, body: str, url: str, start_ns: int, *, retried: bool, inline: bool = False) -> dict:
    """A REST call by curl: the body is a file's path, or with ``inline`` the JSON itself.

    nwaku v0.36.0's REST server sometimes answered HTTP 400 ("could not decode") to a body it
    received whole (CHANGELOG.md, 2026-11-24); a retry is logged and counted by validation. A spam
    publish is tried once and may fail: a spammer its peers have disconnected has no one to publish
    to, and its node says so.
    """
    retries = ["--fail-with-body", "--retry", str(PUBLISH_RETRIES), "--retry-all-errors", "--retry-delay", "1"]
    return {
        "path": curl,
        "args": [
            "--no-progress-meter",
            "--show-error",
            *(retries if retried else []),
            "--max-time",
            "120",
            "--header",
            "Content-Type: application/json",
            # no "Expect: 100-continue": nwaku's REST server would read an empty body
            "--header",
            "Expect:",
            "--data-binary",
            body if inline else f"@{body}",
            url,
        ],
        "start_time": shadow_time(start_ns),
        "expected_final_state": {"exited": 0},
    }


def render(run: RunPlan, run_dir: Path, wakunode2: str, curl: str) -> None:
    """Write everything Shadow needs for this run into ``run_dir``."""
    run_dir.mkdir(parents=True, exist_ok=True)
    hosts = [i.host for i in run.identities]
    schedule.write(run.messages, hosts, run_dir)
    identities_frame(run).to_csv(run_dir / layout.IDENTITIES, index=False)
    links_frame(run).to_csv(run_dir / layout.LINKS, index=False)
    churn_plan.frame(run.outages, hosts).to_csv(run_dir / layout.CHURN, index=False)
    (run_dir / layout.NETWORK_GRAPH).write_text(network_graph.gml(run))
    config = shadow_yaml(run, run_dir, wakunode2, curl)
    (run_dir / layout.SHADOW_CONFIG).write_text(yaml.dump(config, Dumper=_PlainDumper, sort_keys=False, width=1000))


class _PlainDumper(yaml.SafeDumper):
    """Writes every host's settings out in full: no YAML anchors a hand edit could change for all."""

    def ignore_aliases(self, data) -> bool:
        return True


def role(run: RunPlan, index: int) -> str:
    if run.roles.is_client(index):
        return "light"
    return "service" if index in run.roles.service_nodes else "relay"


def identities_frame(run: RunPlan) -> pd.DataFrame:
    hosts = [i.host for i in run.identities]
    frame = pd.DataFrame(
        {
            "host": hosts,
            "ip": [i.ip for i in run.identities],
            "peer_id": [i.peer_id for i in run.identities],
            "short_peer_id": [i.short_peer_id for i in run.identities],
            "nodekey": [i.nodekey for i in run.identities],
            "publisher": [i.index in run.publishers for i in run.identities],
            "role": [role(run, i.index) for i in run.identities],
            "service_node": client_column(run, lambda i: hosts[run.roles.service_of(i)]),
            "lightpush_node": client_column(run, lambda i: hosts[run.roles.lightpush_of(i)]),
            "store_node": client_column(run, lambda i: hosts[run.roles.store_of(i)]),
            "content_topics": client_column(run, lambda i: ",".join(nwaku.content_topic(t) for t in run.roles.topics_of(i))),
            "shards": [" ".join(str(s) for s in run.shards.served[i.index]) if not run.roles.is_client(i.index) else ""
                       for i in run.identities],
        }
    )
    if run.node_locations is not None:
        frame["location"] = run.node_locations
    if run.node_classes is not None:
        frame["bandwidth_class"] = run.node_classes
    return frame


def client_column(run: RunPlan, value) -> list[str]:
    """identities.csv's column of a client's ``value(index)``, empty for relay nodes."""
    return [value(i.index) if run.roles.is_client(i.index) else "" for i in run.identities]


def links_frame(run: RunPlan) -> pd.DataFrame:
    hosts = [i.host for i in run.identities]
    rows = [(hosts[a], hosts[b]) for a, peers in enumerate(run.topology.dials) for b in peers]
    return pd.DataFrame(rows, columns=["dialer", "dialed"])
