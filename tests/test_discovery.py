"""network.topology: discv5: nodes that find their peers themselves, and the graph read back from their logs."""

import json

import pandas as pd
import pytest
import yaml

from waku_shadow.analyse import discovery
from waku_shadow.configuration import loader
from waku_shadow.errors import ConfigError, LogError
from waku_shadow.parse import node_logs, topology_events
from waku_shadow.render import enr, nwaku, plan, run_folder
from waku_shadow.validate import discovery as discovery_check
from waku_shadow.validate.validation import Report


def study_with(nodes=12, discovery_settings=None, **sections):
    network = {"nodes": nodes, "topology": "discv5", "peers_per_node": None, "latency": "50 ms", "shards": 2,
               "discovery": discovery_settings or {"bootstrap_nodes": 2, "max_connections": 20}}
    return {"study": "discv5", "seed": 3, "network": network,
            "traffic": {"publishers": 2, "messages_per_publisher": 2, "message_sizes": ["2 KB"]}, **sections}


def test_a_discv5_network_dials_no_static_peer_and_starts_from_the_bootstrap_nodes_enrs(tmp_path):
    run = plan.plan(loader.resolve(study_with()), 2000)
    assert all(dials == () for dials in run.topology.dials)
    run_folder.render(run, tmp_path, "bin/wakunode2", "curl")
    hosts = yaml.safe_load((tmp_path / "shadow.yaml").read_text())["hosts"]
    records = [nwaku.node_record(node, run.shards.served[node.index]) for node in run.bootstrap_nodes]
    for host, expected in (("node0000", records[1:]), ("node0001", records[:1]), ("node0007", records)):
        process = hosts[host]["processes"][0]
        args = process["args"]
        assert [a.split("=", 1)[1] for a in args if a.startswith("--discv5-bootstrap-node=")] == expected
        assert "--discv5-discovery=true" in args and "--discv5-discovery=false" not in args
        assert not any(a.startswith("--staticnode=") for a in args)
        assert "--max-connections=20" in args
        assert process["environment"][nwaku.ENV_TOPOLOGY_LINES_AT_NOTICE] == "1"
        assert process["environment"][nwaku.ENV_ONLINE_WITHOUT_DNS] == "1"
    # the record is node0000's own: its key, address, discv5 port and both shards
    fields = enr.decode(records[0])
    assert fields["udp"] == nwaku.DISCV5_UDP_PORT and fields["tcp"] == nwaku.TCP_PORT
    assert pd.read_csv(tmp_path / "links.csv").empty


def test_a_static_network_renders_no_discovery_setting(tmp_path):
    static = study_with()
    static["network"] = {**static["network"], "topology": "random", "peers_per_node": 3}
    run = plan.plan(loader.resolve(static), 2000)
    run_folder.render(run, tmp_path, "bin/wakunode2", "curl")
    process = yaml.safe_load((tmp_path / "shadow.yaml").read_text())["hosts"]["node0003"]["processes"][0]
    assert "--discv5-discovery=false" in process["args"]
    assert nwaku.ENV_TOPOLOGY_LINES_AT_NOTICE not in process["environment"]


@pytest.mark.parametrize(("change", "key", "words"), [
    ({"network": {"peers_per_node": 4}}, "network.peers_per_node", "find their peers themselves"),
    ({"network": {"discovery": {"bootstrap_nodes": 12}}}, "network.discovery.bootstrap_nodes", "leave no other node"),
    ({"light_clients": {"service_nodes": 1, "clients": 2}}, "network.topology", "light clients"),
    ({"churn": {"leaves_per_minute": 2}}, "network.topology", "churn"),
    ({"stack": {"nwaku": {"tag": "v0.37.1-beta"}}}, "network.topology", "has no 0041, 0042"),
    ({"network": {"discovery": {"bootstrap": 2}}}, "network.discovery.bootstrap", "unknown key"),
])
def test_what_a_discv5_network_cannot_run_with_is_refused_by_key(change, key, words):
    config = study_with()
    for section, values in change.items():
        config[section] = {**config.get(section, {}), **values}
    with pytest.raises(ConfigError) as refused:
        loader.resolve(config)
    assert key in str(refused.value) and words in str(refused.value)


def log_line(msg, ts, **fields):
    return json.dumps({"lvl": "NTC", "ts": ts, "msg": msg, **fields}, separators=(",", ":")) + "\n"


def test_topology_lines_become_events_naming_both_hosts(tmp_path):
    identities = pd.DataFrame({"host": ["node0000", "node0001"], "peer_id": ["16Uiu2Aaaaa", "16Uiu2Abbbb"]})
    path = tmp_path / "nwaku.log"
    path.write_text(log_line("peer connected", "2000-01-01 00:00:02.500+00:00", peer_id="16Uiu2Abbbb", direction="Outbound")
                    + log_line("mesh peer grafted", "2000-01-01 00:00:03.000+00:00", topic="/waku/2/rs/42/1", peer_id="16Uiu2Abbbb"))
    tables, _ = node_logs.parse_host(path, "node0000")
    events = topology_events.table(tables[topology_events.TABLE], identities, tmp_path)
    assert events[["event", "peer_host", "topic", "direction", "time_ns"]].fillna("-").values.tolist() == [
        ["connected", "node0001", "-", "Outbound", 2_500_000_000], ["grafted", "node0001", "/waku/2/rs/42/1", "-", 3_000_000_000]]
    stranger = [{"host": "node0000", "event": "connected", "peer_id": "16Uiu2Azzzz", "topic": None, "direction": "Inbound", "time_ns": 1}]
    with pytest.raises(LogError, match="no node of the run"):
        topology_events.table(stranger, identities, tmp_path)


def events_frame(rows):
    return pd.DataFrame([dict(zip(["host", "event", "peer_host", "topic", "direction", "time_ns"], r)) for r in rows])


def test_a_mesh_is_whole_at_d_low_peers_and_a_pruned_peer_leaves_it():
    topic = "/waku/2/rs/42/0"
    events = events_frame([("a", "grafted", "b", topic, None, 1), ("a", "grafted", "c", topic, None, 2),
                           ("a", "pruned", "b", topic, None, 3), ("a", "pruned", "x", topic, None, 4),
                           ("a", "grafted", "d", topic, None, 5), ("a", "grafted", "b", topic, None, 6)])
    meshes = discovery.mesh_times(events, {"a": frozenset({0, 1}), "b": frozenset({0})}, d_low=3).set_index(["host", "shard"])
    assert meshes.loc[("a", 0)].tolist() == [1, 6, 3]  # first peer at 1, three at 6 (b came back), three at the end
    assert meshes.loc[("a", 1)].isna()[["first_mesh_peer_ns", "mesh_ns"]].all()
    report = Report("run")
    discovery_check.check(report, meshes.reset_index())
    assert report.checks["meshes"] == "2 nodes never had a mesh peer on a shard they serve: a (shard 1), b (shard 0)"


def test_outbound_target_and_graph_shape_follow_the_connections():
    assert discovery.outbound_target(50) == 8 and discovery.outbound_target(20) == 3
    events = events_frame([("a", "connected", "b", None, "Outbound", 1), ("b", "connected", "a", None, "Inbound", 1),
                           ("a", "connected", "c", None, "Outbound", 2), ("c", "connected", "d", None, "Outbound", 3),
                           ("a", "connected", "d", None, "Outbound", 4), ("a", "disconnected", "d", None, None, 5)])
    times = discovery.node_times(events, ["a", "b", "c", "d", "e"], max_connections=20).set_index("host")
    assert times.loc["a"].tolist() == [1, 4]  # three outbound peers at 4, the target of 20 connections
    assert pd.isna(times.loc["e", "first_peer_ns"])
    shape = discovery.graph_shape(discovery.connections_at(events, 5), ["a", "b", "c", "d", "e"])
    assert (shape["links"], shape["parts"], shape["largest_part"], shape["diameter"]) == (3, 2, 4, 3)
    assert shape["degrees"].tolist() == [2, 1, 2, 1, 0]
