"""network.bandwidth_classes: relay nodes in classes with their own uplink, downlink and share."""

import re

import pandas as pd
import pytest
import yaml
from conftest import CONFIGS

from waku_shadow.analyse import load_study
from waku_shadow.configuration import loader
from waku_shadow.errors import ConfigError
from waku_shadow.paper import compare
from waku_shadow.render import network_graph, plan, run_folder

CLASSES = [{"name": "fast", "share": 0.25, "up": "1 Gbit", "down": "1 Gbit"},
           {"name": "home", "share": 0.75, "up": "10 Mbit", "down": "100 Mbit"}]


def study_with(classes=CLASSES, nodes=20, **network):
    return {"study": "classes", "seed": 3,
            "network": {"nodes": nodes, "peers_per_node": 3, "latency": "50 ms", "bandwidth_classes": classes, **network},
            "traffic": {"publishers": 4, "messages_per_publisher": 2, "message_sizes": ["2 KB"]}}


def test_nodes_fall_into_the_classes_in_exact_counts_drawn_by_the_seed():
    run = plan.plan(loader.resolve(study_with()), 2000)
    assert pd.Series(run.node_classes).value_counts().to_dict() == {"home": 15, "fast": 5}
    assert run.node_classes == plan.plan(loader.resolve(study_with()), 2000).node_classes
    assert run.node_classes != plan.plan(loader.resolve({**study_with(), "seed": 4}), 2000).node_classes


def test_classes_move_no_node_graph_or_publisher_of_the_same_network_at_one_bandwidth():
    cities = {"rtt_matrix": "data/paper/table2_rtt_ms.csv", "names": ["Frankfurt", "New York", "Singapore"]}
    with_classes = plan.plan(loader.resolve(study_with(locations=cities, latency=None)), 2000)
    one_link = {**study_with(locations=cities, latency=None)}
    one_link["network"] = {k: v for k, v in one_link["network"].items() if k != "bandwidth_classes"}
    alone = plan.plan(loader.resolve(one_link), 2000)
    assert with_classes.node_locations == alone.node_locations
    assert with_classes.topology == alone.topology and with_classes.messages == alone.messages


def test_each_class_is_a_network_node_with_its_bandwidth_and_every_pair_has_an_edge(tmp_path):
    cities = {"rtt_matrix": "data/paper/table2_rtt_ms.csv", "names": ["Frankfurt", "New York"]}
    run = plan.plan(loader.resolve(study_with(locations=cities, latency=None)), 2000)
    text = network_graph.gml(run)
    assert re.findall(r'label "([^"]+)"', text) == ["Frankfurt fast", "Frankfurt home", "New York fast", "New York home"]
    assert re.findall(r'host_bandwidth_up "([^"]+)"', text) == ["1 Gbit", "10 Mbit"] * 2
    assert text.count("edge [") == 10  # 4 nodes, every pair and every self-loop
    assert 'latency "1 ms"' in text  # two nodes of one city, whatever their classes
    run_folder.render(run, tmp_path, "bin/wakunode2", "curl")
    rendered = yaml.safe_load((tmp_path / "shadow.yaml").read_text())
    assert rendered["network"]["use_shortest_path"] is False
    identities = pd.read_csv(tmp_path / "identities.csv")
    nodes = network_graph.graph_nodes(run)
    for host, spec in rendered["hosts"].items():
        me = identities.set_index("host").loc[host]
        node = nodes[spec["network_node_id"]]
        assert (node.place, node.bandwidth_class) == (me["location"], me["bandwidth_class"])


def test_one_place_with_classes_gives_every_pair_of_classes_the_studys_latency():
    text = network_graph.gml(plan.plan(loader.resolve(study_with()), 2000))
    assert text.count("node [") == 2 and text.count("edge [") == 3
    assert text.count('latency "50 ms"') == 3


def test_the_load_studys_uplink_is_the_mean_of_the_nodes_classes():
    study = loader.resolve(study_with())
    assert load_study.mean_uplink_bps(study) == (5 * 1e9 + 15 * 10e6) / 20


@pytest.mark.parametrize(("classes", "network", "message"), [
    ([{**CLASSES[0], "share": 0.5}, CLASSES[1]], {}, r"network.bandwidth_classes: the shares sum to 1.25, not 1"),
    ([CLASSES[0], {**CLASSES[1], "name": "fast"}], {}, r"network.bandwidth_classes: fast named twice"),
    (CLASSES, {"bandwidth_up": "50 Mbit"}, r"network.bandwidth_up: network.bandwidth_classes gives each class its own"),
    ([CLASSES[0], {**CLASSES[1], "up": "fast"}], {}, r"network.bandwidth_classes\[1\].up"),
    ([CLASSES[0], {**CLASSES[1], "up": "0 Mbit"}], {}, r"network.bandwidth_classes\[1\].up: must be more than 0"),
    ([{k: v for k, v in CLASSES[0].items() if k != "share"}], {}, r"'share' is a required property"),
])
def test_bad_classes_are_refused_by_key(classes, network, message):
    with pytest.raises(ConfigError, match=message):
        loader.resolve(study_with(classes, **network))


def test_a_bandwidth_is_needed_without_classes_and_light_clients_are_refused_with_them():
    with pytest.raises(ConfigError, match="network.bandwidth_up: needed unless network.bandwidth_classes is set"):
        loader.resolve(study_with(None, bandwidth_up=None))
    light = {**study_with(), "light_clients": {"clients": 4, "service_nodes": 2}}
    with pytest.raises(ConfigError, match="light clients in bandwidth classes are not built yet"):
        loader.resolve(light)


def test_the_shipped_class_study_and_its_one_link_twin_differ_only_in_the_links():
    classes = loader.load(CONFIGS / "bandwidth-classes.yaml")
    one_link = loader.load(CONFIGS / "experiments" / "bandwidth-classes-one-link.yaml")
    assert [c.name for c in classes.bandwidth_classes] == ["supernode", "fullnode", "home"]
    assert classes.bandwidth_up_bps is None and one_link.bandwidth_up_bps == 100_000_000 and not one_link.bandwidth_classes
    assert classes.run_ids() == one_link.run_ids()
    for run in classes.runs()[:1]:
        a = plan.plan(loader.resolve(classes.run_config(run.run_id)), run.size_bytes)
        b = plan.plan(loader.resolve(one_link.run_config(run.run_id)), run.size_bytes)
        assert a.topology == b.topology and a.messages == b.messages and a.node_locations == b.node_locations


def test_a_class_too_small_to_hold_a_node_is_refused_by_name():
    tiny = [{**CLASSES[0], "share": 0.05}, {**CLASSES[1], "share": 0.95}]
    with pytest.raises(ConfigError, match="network.bandwidth_classes: fast would hold none of 8 nodes"):
        loader.resolve(study_with(tiny, nodes=8))


def test_classes_laid_over_the_default_config_need_its_bandwidth_set_to_null(tmp_path):
    over_default = tmp_path / "classes.yaml"
    over_default.write_text(yaml.safe_dump({"network": {"bandwidth_classes": CLASSES}}))
    with pytest.raises(ConfigError, match="network.bandwidth_up: .* set it to null"):
        loader.load(CONFIGS / "default.yaml", over_default)
    over_default.write_text(yaml.safe_dump({"network": {"bandwidth_classes": CLASSES, "bandwidth_up": None, "bandwidth_down": None}}))
    study = loader.load(CONFIGS / "default.yaml", over_default)
    assert [c.name for c in study.bandwidth_classes] == ["fast", "home"]


def test_a_cascade_over_locations_in_classes_is_not_set_beside_table3():
    cities = {"rtt_matrix": "data/paper/table2_rtt_ms.csv", "names": ["Frankfurt", "New York"], "assignment": "in_order"}
    network = {"topology": "cascade", "locations": cities, "latency": None, "peers_per_node": None}
    assert compare.is_located_cascade(loader.resolve(study_with(None, nodes=4, **network)))
    assert not compare.is_located_cascade(loader.resolve(study_with(nodes=4, **network)))
