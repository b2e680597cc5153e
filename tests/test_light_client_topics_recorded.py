"""Light clients on several content topics and service nodes, on the recorded real run
(tests/data/recorded-light-topics/): each client's filter delivers its topics and nothing else, each
protocol goes to its own service node, and the store answers a returning client for its topics."""

import json
import re

import pandas as pd
import pytest
from recorded import LIGHT_RUN, LIGHT_TOPICS_RUN, copy_run, parsed_copies, rewrite_log

from waku_shadow import cli, layout
from waku_shadow.analyse import light_clients
from waku_shadow.parse.light_clients import clients


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    (run,) = parsed_copies([LIGHT_TOPICS_RUN], tmp_path_factory.mktemp("topics"))
    return run


@pytest.fixture(scope="module")
def light():
    return clients(pd.read_csv(LIGHT_TOPICS_RUN / layout.IDENTITIES, keep_default_na=False)).set_index("host")


def test_each_client_got_exactly_the_messages_on_its_topics_and_the_run_passes(parsed, light):
    report = json.loads((parsed / layout.VALIDATION).read_text())
    assert report["passed"] and report["checks"]["filter receipts"] == "ok"
    receipts = pd.read_parquet(parsed / layout.FILTER_RECEIPTS)
    topic_of = pd.read_parquet(parsed / layout.PUBLISHES).set_index("message")["content_topic"]
    assert topic_of.nunique() == 3
    subscribed = receipts["receiver"].map(light["content_topics"].str.split(","))
    assert all(topic in topics for topic, topics in zip(receipts["message"].map(topic_of), subscribed))
    expected = sum(topic_of.isin(topics.split(",")).sum() for topics in light["content_topics"])
    assert report["counts"]["filter_receipts_expected"] == expected < 11 * 20
    assert report["counts"]["filter_receipts"] + report["counts"]["filter_receipts_missed_away"] == expected


def test_each_protocol_reached_the_clients_service_node_for_it(parsed, light):
    assert (light[["lightpush_node", "service_node", "store_node"]].nunique(axis=1) == 3).all()
    receipts = pd.read_parquet(parsed / layout.FILTER_RECEIPTS)
    assert (receipts["from_host"] == receipts["receiver"].map(light["service_node"])).all()
    pushes = pd.read_parquet(parsed / layout.LIGHTPUSHES)
    assert len(pushes) == 6 and (pushes["service_node"] == pushes["client"].map(light["lightpush_node"])).all()
    queries = pd.read_parquet(parsed / layout.STORE_QUERIES)
    assert len(queries) == 3 and (queries["service_node"] == queries["client"].map(light["store_node"])).all()


def test_the_store_gave_a_returning_client_its_topics_and_everything_it_missed(parsed, light):
    returns = pd.read_parquet(parsed / layout.STORE_RETURNS)
    topic_of = pd.read_parquet(parsed / layout.PUBLISHES).set_index("message")["content_topic"]
    assert all(topic_of[m] in light.at[c, "content_topics"].split(",") for c, m in zip(returns["client"], returns["message"]))
    recovery = light_clients.store_recovery(parsed)
    assert len(recovery) == 3 and (recovery["missed"] > 0).all() and (recovery["recovered"] == recovery["missed"]).all()
    schedule = pd.read_parquet(parsed / layout.PUBLISHES)
    measured = schedule[~schedule["warmup"]]
    for row in recovery.itertuples():  # the window's measured messages on the client's two topics only
        window = measured[measured["scheduled_ns"].between(row.leave_ns - 2_000_000_000, row.rejoin_ns + 3_000_000_000)]
        mine = window["content_topic"].isin(light.at[row.client, "content_topics"].split(","))
        assert row.window_messages == mine.sum() < len(window)


def test_a_clients_first_call_to_a_service_node_it_has_no_connection_to_waits_for_the_dial(parsed, tmp_path):
    """What docs/light-clients.md reads in this run: a client subscribed through its filter's service
    node has no connection to its lightpush's or its store's; its first lightpush reached that node
    1.3 s after the intent, its second 0.3 s; its store query took 1.4 s, against 0.4 s in
    recorded-light, where the store is its filter's service node."""
    pushes = pd.read_parquet(parsed / layout.LIGHTPUSHES)
    intents = pd.read_parquet(parsed / layout.PUBLISHES).set_index("message")["intent_ns"]
    pushes["hop_s"] = (pushes["received_ns"] - pushes["message"].map(intents)) / 1e9
    first, second = (pushes.groupby("client")["hop_s"].nth(n) for n in (0, 1))
    assert first.round(1).unique().tolist() == [1.3] and second.round(1).unique().tolist() == [0.3]
    (one_node,) = parsed_copies([LIGHT_RUN], tmp_path)
    seconds = [pd.read_parquet(run / layout.STORE_QUERIES)["seconds"].unique().tolist() for run in (parsed, one_node)]
    assert seconds == [[1.4], [0.4]]


def test_a_receipt_of_a_topic_the_client_did_not_subscribe_to_fails_by_name(tmp_path, light):
    run = copy_run(LIGHT_TOPICS_RUN, tmp_path)
    schedule = pd.read_csv(run / layout.SCHEDULE, keep_default_na=False)
    client = "client0000"
    theirs = schedule[~schedule["content_topic"].isin(light.at[client, "content_topics"].split(","))].iloc[0]

    def pushed_theirs_too(lines):
        push = next(line for line in lines if '"received filter push"' in line)
        return lines + [re.sub(r'"msg_hash":"0x[0-9a-f]+"', f'"msg_hash":"{theirs["msg_hash"]}"', push)]

    rewrite_log(run, client, pushed_theirs_too)
    assert cli.main(["parse", "--run-dir", str(run)]) == 0
    assert cli.main(["validate", "--run-dir", str(run)]) != 0
    failed = json.loads((run / "validation.failed.json").read_text())
    assert failed["checks"]["filter receipts"] == (
        "1 filter receipts of a content topic the client did not subscribe to: "
        f"{client} got message {theirs['message']} ({theirs['content_topic']})")

