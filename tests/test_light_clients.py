"""Light clients and service nodes (light_clients.*): the config's checks, who serves whom, and what
each role runs."""

import json
from collections import Counter

import pytest
from conftest import REPO

from waku_shadow.configuration import loader
from waku_shadow.configuration.study import merge
from waku_shadow.configuration.units import shadow_time
from waku_shadow.errors import ConfigError
from waku_shadow.render import light_clients, nwaku, plan, run_folder, schedule

LIGHT = {"light_clients": {"service_nodes": 2, "clients": 7, "publishers": 2}}


def _with(study, override):
    return loader.resolve(merge(study.resolved, override))


@pytest.fixture
def light_study(small_study):
    return _with(small_study, LIGHT)


@pytest.mark.parametrize("light, match", [
    ({"clients": 3}, "light_clients.clients: 3 light clients need a service node"),
    ({"service_nodes": 99}, r"light_clients.service_nodes: 99 service nodes are more than network.nodes"),
    ({"service_nodes": 1, "clients": 2, "publishers": 3}, "light_clients.publishers: 3 light publishers are more than"),
    ({"service_nodes": 1, "clients": 2, "subscribe_over": "12 s"}, "light_clients.subscribe_over: the clients' subscriptions run to 13 s: they must end before the second half"),
])
def test_impossible_roles_are_refused_by_key(small_study, light, match):
    with pytest.raises(ConfigError, match=match):
        _with(small_study, {"light_clients": light})


def test_a_build_without_the_light_client_patch_is_refused(small_study):
    with pytest.raises(ConfigError, match="light_clients.clients: nwaku v0.37.1-beta does not read it: .* no patch 0039"):
        _with(small_study, {**LIGHT, "stack": {"nwaku": {"tag": "v0.37.1-beta"}}})


def test_clients_are_dealt_evenly_to_seeded_service_nodes(light_study):
    roles = light_clients.choose(light_study)
    assert len(roles.service_nodes) == 2 and set(roles.service_nodes) < set(range(light_study.nodes))
    assert sorted(Counter(roles.client_service).values()) == [3, 4]
    assert len(roles.light_publishers) == 2 and all(roles.is_client(c) for c in roles.light_publishers)
    assert light_clients.choose(light_study) == roles
    spread = sorted(roles.subscribe_ns)  # one after the other over subscribe_over, from subscribe_at
    assert spread[0] == 1_000_000_000 and spread[-1] < 9_000_000_000 and len(set(spread)) == 7
    assert light_clients.choose(_with(light_study, {"seed": 2})) != roles


def test_a_service_node_has_room_for_its_clients_in_the_service_share():
    assert light_clients.service_connections(50, 3) == 50
    assert light_clients.service_connections(50, 100) == 260  # (100 + 4 headroom) / 40 %


def test_a_study_without_light_clients_renders_as_before(small_study):
    run = plan.plan(small_study, 2000)
    assert len(run.identities) == small_study.nodes
    assert all(m.light_client is None for m in run.messages)
    assert run.rest_hosts == run.publishers


def test_each_role_runs_its_own_nwaku_and_rest_calls(light_study, tmp_path):
    run = plan.plan(light_study, 2000)
    roles = run.roles
    hosts = run_folder.shadow_yaml(run, tmp_path, "wakunode2", "curl")["hosts"]
    service = run.identities[roles.service_nodes[0]]
    service_args = hosts[service.host]["processes"][0]["args"]
    assert {"--lightpush=true", "--filter=true", "--store=true"} <= set(service_args)
    assert not {"--lightpush=false", "--filter=false", "--store=false"} & set(service_args)

    client = run.identities[light_study.nodes]
    assert client.host == "client0000"
    client_processes = hosts[client.host]["processes"]
    mine = run.identities[roles.service_of(client.index)]
    assert "--relay=false" in client_processes[0]["args"]
    assert f"--filternode={nwaku.multiaddr_of(mine.ip, mine.peer_id)}" in client_processes[0]["args"]
    assert not any(a.startswith("--staticnode") for a in client_processes[0]["args"])
    subscribe = client_processes[1]
    assert subscribe["args"][-1].endswith(light_clients.FILTER_SUBSCRIBE_PATH) and subscribe["start_time"] == shadow_time(roles.subscribe_ns[0])
    assert json.loads(subscribe["args"][-2])["contentFilters"] == [nwaku.CONTENT_TOPIC]


def test_a_light_message_is_lightpushed_by_its_client_and_enters_relay_at_its_service_node(light_study, tmp_path):
    run = plan.plan(light_study, 2000)
    light = [m for m in run.messages if m.light_client is not None]
    assert len(light) == 2 * light_study.messages_per_publisher
    message = light[0]
    assert message.publisher == run.roles.service_of(message.light_client)
    body = json.loads(message.rest_body())
    assert body["pubsubTopic"] == nwaku.PUBSUB_TOPIC and body["message"]["contentTopic"] == nwaku.CONTENT_TOPIC
    hosts = run_folder.shadow_yaml(run, tmp_path, "wakunode2", "curl")["hosts"]
    client_calls = [p["args"][-1] for p in hosts[run.identities[message.light_client].host]["processes"][1:]]
    assert client_calls.count(f"http://127.0.0.1:{nwaku.REST_PORT}{light_clients.LIGHTPUSH_PATH}") == light_study.messages_per_publisher
    service_calls = [p for p in hosts[run.identities[message.publisher].host]["processes"][1:]
                     if p["args"][-1].endswith(light_clients.LIGHTPUSH_PATH)]
    assert service_calls == []
    frame = schedule.to_frame(run.messages, [i.host for i in run.identities])
    assert set(frame.loc[frame["light_client"] != "", "light_client"]) == {run.identities[c].host for c in run.roles.light_publishers}


def test_identities_name_each_role_and_client_service_node(light_study):
    frame = run_folder.identities_frame(plan.plan(light_study, 2000))
    assert Counter(frame["role"]) == {"relay": light_study.nodes - 2, "service": 2, "light": 7}
    clients = frame[frame["role"] == "light"]
    assert set(clients["service_node"]) == set(frame.loc[frame["role"] == "service", "host"])


def test_shipped_light_client_studies_load():
    for config in ("midscale.yaml", "clients-per-service-node.yaml"):
        study = loader.load(REPO / "configs" / config)
        assert study.light_clients.active


def test_light_clients_over_locations_are_refused(small_study):
    world = {"locations": {"rtt_matrix": "data/paper/table2_rtt_ms.csv", "names": ["Frankfurt", "New York"]}, "latency": None}
    with pytest.raises(ConfigError, match="light_clients.clients: light clients over network.locations are not built yet"):
        _with(small_study, {**LIGHT, "network": world})


def test_service_nodes_neither_leave_nor_spam(light_study):
    churning = _with(light_study, {"churn": {"leaves_per_minute": 120, "downtime": "2 s"}, "traffic": {"interval": "2 s"}})
    run = plan.plan(churning, 2000)
    assert run.outages and not {o.node for o in run.outages} & set(run.roles.service_nodes)
    spamming = _with(light_study, {"rln": {"epoch": "4 s", "messages_per_epoch": 4}, "traffic": {"interval": "2 s"},
                                   "spam": {"spammers": 5, "messages_per_epoch": 6, "duration": "8 s"}})
    spammers = {m.publisher for m in schedule.build(spamming, 2000) if m.spam}
    assert len(spammers) == 5 and not spammers & set(light_clients.choose(spamming).service_nodes)


def test_a_lightpush_is_tried_once_and_a_service_node_keeps_subscriptions_for_the_run(light_study, tmp_path):
    run = plan.plan(light_study, 2000)
    hosts = run_folder.shadow_yaml(run, tmp_path, "wakunode2", "curl")["hosts"]
    pushes = [p for h in hosts.values() for p in h["processes"] if p["args"][-1].endswith(light_clients.LIGHTPUSH_PATH)]
    assert pushes and not any("--retry" in p["args"] for p in pushes)
    service = hosts[run.identities[run.roles.service_nodes[0]].host]["processes"][0]["args"]
    assert "--filter-subscription-timeout=300" in service


CHURN = {"churn": {"leaves_per_minute": 60, "downtime": "6 s", "store_lookback": "2 s"}}


def test_a_store_window_longer_than_one_page_is_refused(light_study):
    fits = _with(light_study, {"light_clients": {"churn": {"leaves_per_minute": 1, "downtime": "300 s", "store_lookback": "2 s"}},
                               "traffic": {"interval": "4 s"}})
    assert fits.light_clients.store_window_ns == 305_000_000_000  # up to 77 messages
    with pytest.raises(ConfigError, match=r"light_clients.churn.downtime: a returning client's store query spans 405 s "
                                          r"\(store_lookback \+ downtime \+ 3 s\), up to 102 messages at traffic.interval: "
                                          r"more than one store page \(100\); shorten it"):
        _with(light_study, {"light_clients": {"churn": {"leaves_per_minute": 1, "downtime": "400 s", "store_lookback": "2 s"}},
                            "traffic": {"interval": "4 s"}})


def test_clients_that_publish_never_leave_and_no_client_leaves_twice(light_study):
    churning = _with(light_study, {"light_clients": {**LIGHT["light_clients"], **CHURN}, "traffic": {"messages_per_publisher": 8}})
    run = plan.plan(churning, 2000)
    left = [o.node for o in run.outages]
    assert left and all(run.roles.is_client(n) for n in left) and len(set(left)) == len(left)
    assert not set(left) & set(run.roles.light_publishers)
    assert all(o.dials == () and o.rejoin_ns - o.leave_ns == 6_000_000_000 for o in run.outages)
    assert all(churning.bootstrap_ns < o.leave_ns <= churning.last_publish_ns for o in run.outages)
    assert plan.plan(churning, 2000).outages == run.outages


def test_a_returning_client_subscribes_again_then_asks_the_store_for_its_window(light_study, tmp_path):
    churning = _with(light_study, {"light_clients": {**LIGHT["light_clients"], **CHURN}, "traffic": {"messages_per_publisher": 8}})
    run = plan.plan(churning, 2000)
    outage = next(o for o in run.outages if o.rejoin_ns + 3_000_000_000 < churning.stop_time_ns)
    processes = run_folder.shadow_yaml(run, tmp_path, "wakunode2", "curl")["hosts"][run.identities[outage.node].host]["processes"]
    first, subscribe, again, resubscribe, query = processes
    assert first["shutdown_time"] == shadow_time(outage.leave_ns) and first["expected_final_state"] == nwaku.LEFT_STATE
    assert again["args"] == first["args"] and again["start_time"] == shadow_time(outage.rejoin_ns)
    assert resubscribe["args"] == subscribe["args"] and resubscribe["start_time"] == shadow_time(outage.rejoin_ns + 1_000_000_000)
    query_ns = outage.rejoin_ns + 3_000_000_000
    assert query["start_time"] == shadow_time(query_ns) and "--retry" not in query["args"]
    url = query["args"][-1]
    assert url.startswith(f"http://127.0.0.1:{nwaku.REST_PORT}/store/v3/messages?includeData=false&")
    assert f"startTime={nwaku.SIMULATION_EPOCH_NS + outage.leave_ns - 2_000_000_000}" in url
    assert f"endTime={nwaku.SIMULATION_EPOCH_NS + query_ns}" in url and "pageSize=100" in url
    timing = query["args"][query["args"].index("--write-out") + 1]
    assert json.loads(timing.replace("%{time_total}", "0.5").replace("%{http_code}", "000")) == {
        "store_query_ns": query_ns, "from_ns": outage.leave_ns - 2_000_000_000, "to_ns": query_ns,
        "seconds": 0.5, "http_code": "000"}  # curl's code when nothing answered: quoted, so still JSON
    assert "--fail-with-body" not in query["args"]  # an HTTP error is validation's to name


def test_a_client_not_back_before_the_end_may_miss_everything_from_its_lookback(light_study):
    from_ns, to_ns, query_ns = light_clients.store_window(light_study, light_study.stop_time_ns - 1_000_000_000,
                                                          light_study.stop_time_ns + 5_000_000_000)
    assert query_ns is None and to_ns == light_study.stop_time_ns
    assert from_ns == light_study.stop_time_ns - 1_000_000_000 - light_study.light_clients.store_lookback_ns
