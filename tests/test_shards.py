import pandas as pd
import pytest

from waku_shadow.configuration import loader
from waku_shadow.errors import ConfigError, TopologyError
from waku_shadow.render import nwaku, plan, run_folder, shards, topology
from waku_shadow.validate import validation


def sharded(per_node=2, count=4, nodes=20, **network):
    return loader.resolve({
        "study": "shards", "seed": 3,
        "network": {"nodes": nodes, "peers_per_node": 3, "latency": "50 ms", "shards": count,
                    "shards_per_node": per_node, **network},
        "traffic": {"publishers": 4, "messages_per_publisher": 2, "message_sizes": ["2 KB"]},
    })


@pytest.mark.parametrize(("application", "version", "shard"), [("toychat", "2", 3), ("toychat2", "2", 6), ("toychat", "4", 7)])
def test_autoshard_agrees_with_nwaku_on_eight_shards(application, version, shard):
    # the shards nwaku v0.38.1's own tests expect (tests/waku_core/topics/test_sharding.nim)
    assert shards.autoshard(application, version, 8) == shard


def test_each_shard_has_a_content_topic_that_autoshards_to_it():
    for count in (1, 2, 8):
        topics = [shards.content_topic(s, count) for s in range(count)]
        assert len(set(topics)) == count
        for shard, topic in enumerate(topics):
            _, application, version, _, _ = topic.split("/")
            assert shards.autoshard(application, version, count) == shard
    assert shards.content_topic(0, 1) == nwaku.CONTENT_TOPIC


def test_publishers_are_spread_over_the_shards_and_serve_their_own():
    run = plan.plan(sharded(), 2000)
    assert sorted(run.shards.publishing_on.values()) == [0, 1, 2, 3]
    for node, shard in run.shards.publishing_on.items():
        assert shard in run.shards.served[node]
    assert all(len(served) == 2 for served in run.shards.served)
    for message in run.messages:
        assert message.shard == run.shards.publishing_on[message.publisher]
        assert message.content_topic == shards.content_topic(message.shard, 4)
        assert message.msg_hash == nwaku.message_hash(shards.pubsub_topic(message.shard), message.payload,
                                                      message.content_topic, message.timestamp_ns)


def test_every_shard_gets_its_own_connected_graph():
    run = plan.plan(sharded(), 2000)
    adjacency = run.topology.neighbours()
    for shard in range(4):
        members = run.shards.members(shard)
        within = [adjacency[n] & set(members) if n in members else set() for n in range(20)]
        assert len(topology.components(20, within)) == 1 + 20 - len(members)  # its members joined, the rest alone
    assert run.topology == plan.plan(sharded(), 2000).topology  # seeded


def test_nodes_subscribe_to_their_shards_only_with_shard_lists(tmp_path):
    run = plan.plan(sharded(), 2000)
    hosts = run_folder.shadow_yaml(run, tmp_path, "bin/wakunode2", "curl")["hosts"]
    node = hosts["node0000"]["processes"][0]
    served = run.shards.served[0]
    assert node["environment"][nwaku.ENV_RELAY_SHARDS] == ",".join(map(str, served))
    assert [a for a in node["args"] if a.startswith("--shard=")] == [f"--shard={s}" for s in served]
    assert "--num-shards-in-network=4" in node["args"]
    every = run_folder.shadow_yaml(plan.plan(sharded(per_node=None), 2000), tmp_path, "bin/wakunode2", "curl")["hosts"]
    released = every["node0000"]["processes"][0]
    assert nwaku.ENV_RELAY_SHARDS not in released["environment"]
    assert [a for a in released["args"] if a.startswith("--shard=")] == [f"--shard={s}" for s in range(4)]


def test_identities_name_each_nodes_shards(tmp_path):
    run = plan.plan(sharded(), 2000)
    run_folder.render(run, tmp_path, "bin/wakunode2", "curl")
    identities = pd.read_csv(tmp_path / "identities.csv", keep_default_na=False)
    served = shards.served_by_host(identities, list(identities["host"]))
    assert served["node0000"] == frozenset(run.shards.served[0])
    schedule = pd.read_csv(tmp_path / "schedule.csv")
    assert sorted(schedule["shard"].unique()) == [0, 1, 2, 3]


@pytest.mark.parametrize(("settings", "key"), [
    ({"network": {"nodes": 20, "peers_per_node": 3, "shards": 2, "shards_per_node": 3}}, "network.shards_per_node"),
    ({"network": {"nodes": 20, "topology": "cascade", "shards": 2, "shards_per_node": 1}}, "network.shards_per_node"),
    ({"network": {"nodes": 20, "peers_per_node": 3, "shards": 2, "shards_per_node": 1},
      "churn": {"leaves_per_minute": 2}}, "network.shards_per_node"),
    ({"network": {"nodes": 20, "peers_per_node": 3, "shards": 2},
      "light_clients": {"service_nodes": 1, "clients": 2}}, "network.shards"),
    ({"network": {"nodes": 20, "peers_per_node": 3, "shards": 0}}, "network.shards"),
    ({"network": {"nodes": 20, "peers_per_node": 3, "shards": 2, "shards_per_node": 1},
      "stack": {"nwaku": {"tag": "v0.37.1-beta"}}}, "network.shards_per_node"),
])
def test_settings_shards_cannot_run_with_are_refused_by_key(settings, key):
    with pytest.raises(ConfigError) as refused:
        loader.resolve({"study": "shards", **settings})
    assert f"config: {key}:" in str(refused.value)


def test_a_shard_too_small_for_its_graph_is_refused_by_name():
    with pytest.raises(TopologyError, match="shard .* is served by"):
        plan.plan(sharded(per_node=1, count=8, nodes=12), 2000)


def test_validation_expects_exactly_the_messages_of_a_nodes_shards():
    schedule = pd.DataFrame({"message": [0, 1], "publisher": ["a", "c"], "shard": [0, 1]})
    served = {"a": frozenset({0}), "b": frozenset({0, 1}), "c": frozenset({1}), "d": frozenset({1})}
    expected = validation.expected_receipts(schedule, list(served), served)
    assert sorted(expected) == [(0, "b"), (1, "b"), (1, "d")]
    assert len(validation.expected_receipts(schedule, list(served), None)) == 6


def test_a_peer_on_several_of_a_nodes_shards_counts_for_each():
    two = plan.plan(sharded(per_node=2, count=4), 2000)
    for node, dials in enumerate(two.topology.dials):
        for shard in two.shards.served[node]:
            assert sum(shard in two.shards.served[peer] for peer in dials) >= 3


def test_one_shard_renders_as_before_and_every_shard_of_a_cluster_needs_no_list(tmp_path):
    one = plan.plan(loader.resolve({"study": "one", "network": {"nodes": 12, "peers_per_node": 3}}), 2000)
    node = run_folder.shadow_yaml(one, tmp_path, "bin/wakunode2", "curl")["hosts"]["node0000"]["processes"][0]
    assert [a for a in node["args"] if "shard" in a] == ["--shard=0", "--num-shards-in-network=1"]
    assert nwaku.ENV_RELAY_SHARDS not in node["environment"]
    every = plan.plan(sharded(per_node=4, count=4), 2000)
    assert every.topology == plan.plan(sharded(per_node=None, count=4), 2000).topology  # the study's one graph
    assert nwaku.relay_shards_environment(every.study, every.shards.served[0]) == {}


def test_spam_on_several_shards_is_refused_by_key():
    with pytest.raises(ConfigError, match="network.shards: spam on a cluster of several shards"):
        loader.resolve({"study": "shards", "network": {"nodes": 20, "peers_per_node": 3, "shards": 2},
                        "rln": {"epoch": "10 s"}, "spam": {"spammers": 1}})
