"""A light client's content topics and its service nodes (light_clients.content_topics,
topics_per_client, service_nodes_per_client): who uses what, what each runs, and what validation
expects of it."""

import json
from urllib.parse import parse_qs, urlparse

import pandas as pd
import pytest

from waku_shadow.configuration import loader
from waku_shadow.configuration.study import merge
from waku_shadow.errors import ConfigError
from waku_shadow.parse.light_clients import clients, subscribed
from waku_shadow.render import light_clients, nwaku, plan, run_folder, schedule
from waku_shadow.validate import light_clients as light_checks
from waku_shadow.validate.validation import Report

LIGHT = {"service_nodes": 3, "clients": 9, "publishers": 2}
SPREAD = {**LIGHT, "service_nodes_per_client": 3, "content_topics": 4, "topics_per_client": 2}


def _with(study, light):
    return loader.resolve(merge(study.resolved, {"light_clients": light}))


@pytest.mark.parametrize("light, match", [
    ({**LIGHT, "service_nodes_per_client": 4}, "light_clients.service_nodes_per_client: 4 is greater than the maximum of 3"),
    ({**LIGHT, "service_nodes": 1, "service_nodes_per_client": 2}, "light_clients.service_nodes_per_client: 2 service "
                                                                   r"nodes per client are more than light_clients.service_nodes \(1\)"),
    ({**LIGHT, "content_topics": 2, "topics_per_client": 3}, r"light_clients.topics_per_client: 3 topics per client are "
                                                             r"more than light_clients.content_topics \(2\)"),
    ({**LIGHT, "content_topics": 20, "topics_per_client": 11}, "light_clients.topics_per_client"),  # the store's 10
    ({"content_topics": 2}, r"light_clients.content_topics: 2 content topics without light clients"),
])
def test_more_service_nodes_or_topics_than_there_are_is_refused_by_key(small_study, light, match):
    with pytest.raises(ConfigError, match=match):
        _with(small_study, light)


def test_one_service_node_per_client_keeps_every_protocol_on_the_node_it_was_dealt(small_study):
    roles = light_clients.choose(_with(small_study, LIGHT))
    assert roles.client_lightpush == roles.client_store == roles.client_service
    assert roles.client_topics == ((0,),) * 9
    assert all(roles.clients_of(s) == roles.client_service.count(s) for s in roles.service_nodes)


def test_each_protocol_on_its_own_seeded_service_node_and_topics_drawn_without_repeats(small_study):
    study = _with(small_study, SPREAD)
    roles = light_clients.choose(study)
    one = light_clients.choose(_with(small_study, LIGHT))
    assert (roles.service_nodes, roles.client_service, roles.light_publishers, roles.subscribe_ns) == (
        one.service_nodes, one.client_service, one.light_publishers, one.subscribe_ns)  # drawn as before
    for used in zip(roles.client_lightpush, roles.client_service, roles.client_store):
        assert len(set(used)) == 3 and set(used) <= set(roles.service_nodes)
    assert all(len(set(t)) == 2 and set(t) <= set(range(4)) for t in roles.client_topics)
    assert len(set(roles.client_topics)) > 1
    assert sum(roles.clients_of(s) for s in roles.service_nodes) == 3 * 9
    two = light_clients.choose(_with(small_study, {**SPREAD, "service_nodes_per_client": 2}))
    assert two.client_store == two.client_service and all(a != b for a, b in zip(two.client_lightpush, two.client_service))


def test_a_client_runs_with_each_service_node_and_subscribes_and_asks_for_its_topics(small_study, tmp_path):
    study = _with(small_study, {**SPREAD, "churn": {"leaves_per_minute": 30, "downtime": "2 s", "store_lookback": "1 s"}})
    run = plan.plan(study, 2000)
    roles, hosts = run.roles, run_folder.shadow_yaml(run, tmp_path, "wakunode2", "curl")["hosts"]
    outage = next(o for o in run.outages if o.rejoin_ns + 3_000_000_000 < study.stop_time_ns)
    me = run.identities[outage.node]
    processes = hosts[me.host]["processes"]
    address = {i.index: nwaku.multiaddr_of(i.ip, i.peer_id) for i in run.identities}
    assert {f"--lightpushnode={address[roles.lightpush_of(me.index)]}", f"--filternode={address[roles.service_of(me.index)]}",
            f"--storenode={address[roles.store_of(me.index)]}"} <= set(processes[0]["args"])
    topics = [nwaku.content_topic(t) for t in roles.topics_of(me.index)]
    assert json.loads(processes[1]["args"][-2])["contentFilters"] == topics
    query = parse_qs(urlparse(processes[-1]["args"][-1]).query)
    assert query["contentTopics"] == [",".join(topics)]
    frame = run_folder.identities_frame(run).set_index("host")
    assert frame.at[me.host, "content_topics"] == ",".join(topics)
    assert frame.at[me.host, "store_node"] == run.identities[roles.store_of(me.index)].host


def test_a_light_publisher_publishes_on_its_first_topic_and_relay_messages_take_the_topics_in_turn(small_study):
    study = _with(small_study, SPREAD)
    run = plan.plan(study, 2000)
    relayed = [m for m in run.messages if m.light_client is None]
    assert [m.content_topic for m in relayed] == [nwaku.content_topic(k % 4) for k in range(len(relayed))]
    for message in run.messages:
        if message.light_client is not None:
            assert message.content_topic == nwaku.content_topic(run.roles.topics_of(message.light_client)[0])
            assert message.publisher == run.roles.lightpush_of(message.light_client)
        body = json.loads(message.rest_body())
        assert body.get("message", body)["contentTopic"] == message.content_topic
        assert message.msg_hash == nwaku.message_hash(nwaku.PUBSUB_TOPIC, message.payload, message.content_topic,
                                                      message.timestamp_ns, message.meta)
    assert nwaku.content_topic(0) == nwaku.CONTENT_TOPIC  # the name every earlier study used
    frame = schedule.to_frame(run.messages, [i.host for i in run.identities])
    assert frame["content_topic"].nunique() == 4


def test_every_topic_gets_relay_messages_whatever_the_number_of_publishers(small_study):
    """Two relay publishers and one light one over three topics: a topic per message index would leave
    the relay messages on two topics, each publisher stuck on one."""
    study = _with(small_study, {**LIGHT, "publishers": 1, "content_topics": 3})
    study = loader.resolve(merge(study.resolved, {"traffic": {"publishers": 2, "messages_per_publisher": 3}}))
    relayed = {m.content_topic for m in plan.plan(study, 2000).messages if m.light_client is None}
    assert relayed == {nwaku.content_topic(t) for t in range(3)}


def test_clients_of_a_run_rendered_before_topics_use_one_service_node_and_the_first_topic():
    identities = pd.DataFrame({"host": ["node0000", "client0000"], "role": ["service", "light"],
                               "service_node": ["", "node0000"]})
    (row,) = clients(identities).to_dict("records")
    assert (row["lightpush_node"], row["store_node"], row["content_topics"]) == ("node0000", "node0000", nwaku.CONTENT_TOPIC)


def _validated(receipts: list[tuple[int, str]]) -> Report:
    topic = [nwaku.content_topic(t) for t in range(3)]
    light = pd.DataFrame({"host": ["client0000", "client0001"], "service_node": ["node0001", "node0002"],
                          "lightpush_node": ["node0002", "node0001"], "store_node": ["node0001", "node0002"],
                          "content_topics": [f"{topic[0]},{topic[1]}", topic[2]]})
    plan_ = pd.DataFrame({"message": [0, 1, 2], "spam": False, "light_client": "", "publisher": "node0000",
                          "scheduled_ns": [0, 1, 2], "content_topic": topic})
    assert list(subscribed(plan_, light)) == [(0, "client0000"), (1, "client0000"), (2, "client0001")]
    service = dict(zip(light["host"], light["service_node"]))
    filter_receipts = pd.DataFrame({"message": [m for m, _ in receipts], "receiver": [r for _, r in receipts],
                                    "from_host": [service[r] for _, r in receipts]})
    report = Report("unit", checks={}, counts={})
    empty = pd.DataFrame(columns=light_clients.WINDOW_COLUMNS)
    light_checks.check(report, light, plan_, filter_receipts, pd.DataFrame(columns=["message", "service_node", "client"]),
                       empty, pd.DataFrame(columns=["client", "query_ns", "http_code", "status_code", "more_pages"]))
    return report


def test_a_client_gets_exactly_the_messages_on_its_topics():
    report = _validated([(0, "client0000"), (1, "client0000"), (2, "client0001")])
    assert report.checks["filter receipts"] == "ok" and report.counts["filter_receipts_expected"] == 3
    report = _validated([(0, "client0000"), (2, "client0000"), (2, "client0001")])
    assert report.checks["filter receipts"] == (
        "1 of 3 filter receipts missing: client0000 (service node node0001) never got message 1; "
        "1 filter receipts of a content topic the client did not subscribe to: "
        "client0000 got message 2 (/waku-shadow/1/topic-2/proto)")
