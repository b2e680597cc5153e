"""Spam against RLN: the rate limit's stand-in proofs, the spammers' schedule, what the nodes are
told, and (on a recorded real run) what the spam reached, cost, and when scoring cut the spammer off."""

import base64
import json

import pandas as pd
import pytest
from recorded import SPAM_RUN, parsed_copies, raw_records

from waku_shadow import layout
from waku_shadow.analyse import spam, study_tables
from waku_shadow.configuration import loader
from waku_shadow.configuration.study import merge
from waku_shadow.errors import ConfigError
from waku_shadow.render import nwaku, plan, run_folder, schedule
from waku_shadow.run import shadow_yaml


def _with(study, override):
    return loader.resolve(merge(study.resolved, override))


@pytest.fixture
def spam_study(small_study):
    return _with(small_study, {"rln": {"epoch": "4 s", "messages_per_epoch": 1},
                               "traffic": {"interval": "2 s"},
                               "spam": {"spammers": 1, "messages_per_epoch": 3, "duration": "12 s"}})


def test_without_an_epoch_messages_carry_no_proof_and_nodes_judge_nothing(small_study):
    messages = schedule.build(small_study, 2000)
    assert all(m.meta == b"" and not m.spam for m in messages)
    assert "meta" not in json.loads(messages[0].rest_body())
    assert nwaku.ENV_RLN_EPOCH_NS not in nwaku.environment(small_study)


def test_spam_needs_the_rate_limit_and_room(small_study):
    with pytest.raises(ConfigError, match="spam.spammers: .*set rln.epoch"):
        _with(small_study, {"spam": {"spammers": 1, "messages_per_epoch": 3}})
    with pytest.raises(ConfigError, match="spam.spammers: 10 spammers and .* publishers are more than network.nodes"):
        _with(small_study, {"rln": {"epoch": "4 s"}, "spam": {"spammers": 10, "messages_per_epoch": 3}})


def test_an_honest_publisher_above_the_limit_is_refused(small_study):
    # the default 4 s interval with 5 publishers: one publisher every 20 s, above 1 per 60 s
    study = _with(small_study, {"rln": {"epoch": "60 s"}})
    with pytest.raises(ConfigError, match="would publish 2 messages in one RLN epoch .*rln.messages_per_epoch = 1"):
        schedule.build(study, 2000)


def test_a_spammer_repeats_nullifiers_beyond_the_limit_and_honest_publishers_never_do(spam_study):
    messages = schedule.build(spam_study, 2000)
    frame = schedule.to_frame(messages, [f"node{i:04d}" for i in range(spam_study.nodes)])
    honest, spammed = frame[~frame["spam"]], frame[frame["spam"]]
    assert not honest.duplicated(["publisher", "rln_proof"]).any()
    assert spammed["publisher"].nunique() == 1 and spammed["publisher"].iloc[0] not in set(honest["publisher"])
    # 3 per 4 s epoch for 12 s: 9 messages, 3 fresh nullifiers, 6 over the limit
    assert len(spammed) == 9
    assert int(spam.over_limit(frame).sum()) == 6
    assert all(p.startswith("rln:1:") for p in frame["rln_proof"])
    # the hash covers the proof, as Waku's message hash covers meta
    first = messages[0]
    body = json.loads(first.rest_body())
    assert base64.b64decode(body["meta"]) == first.meta
    assert first.msg_hash == nwaku.message_hash(nwaku.PUBSUB_TOPIC, first.payload, nwaku.CONTENT_TOPIC, first.timestamp_ns, first.meta)
    assert spam_study.last_publish_ns >= spam_study.bootstrap_ns + spam_study.spam.duration_ns - spam_study.rln.epoch_ns


def test_invalid_proofs_are_all_over_the_limit(spam_study):
    study = _with(spam_study, {"spam": {"valid_proofs": False}})
    frame = schedule.to_frame(schedule.build(study, 2000), [f"node{i:04d}" for i in range(study.nodes)])
    spammed = frame[frame["spam"]]
    assert all(spammed["rln_proof"].str.startswith("rln:0:"))
    assert int(spam.over_limit(frame).sum()) == len(spammed)


def test_nodes_are_told_the_epoch_and_spam_is_published_once_without_failing_the_run(spam_study, tmp_path):
    run = plan.plan(spam_study, 2000)
    env = nwaku.environment(spam_study)
    assert env[nwaku.ENV_RLN_EPOCH_NS] == str(4 * 10**9) and env[nwaku.ENV_SCORE_EVENTS_AT_NOTICE] == "1"
    run_folder.render(run, tmp_path, "/opt/wakunode2", "curl")
    hosts = shadow_yaml.read(tmp_path)["hosts"]
    spammer = next(m for m in run.messages if m.spam).publisher
    curls = [p for p in hosts[run.identities[spammer].host]["processes"] if p["path"] == "curl"]
    assert curls and all("--retry" not in c["args"] and "--fail-with-body" not in c["args"] for c in curls)
    honest = next(m for m in run.messages if not m.spam).publisher
    honest_curls = [p for p in hosts[run.identities[honest].host]["processes"] if p["path"] == "curl"]
    assert all("--fail-with-body" in c["args"] for c in honest_curls)


def test_the_spam_rate_can_be_swept_from_zero():
    study = loader.resolve({
        "study": "unit", "network": {"nodes": 12, "peers_per_node": 3, "latency": "50 ms"},
        "traffic": {"publishers": 3, "messages_per_publisher": 2, "message_sizes": ["2 KB"], "interval": "2 s"},
        "rln": {"epoch": "4 s"}, "spam": {"spammers": 1, "duration": "12 s"},
        "sweep": {"parameter": "spam.messages_per_epoch", "values": [0, 3]},
    })
    none, some = (loader.resolve(study.run_config(r)) for r in study.run_ids())
    assert not any(m.spam for m in schedule.build(none, 2000))
    assert sum(m.spam for m in schedule.build(some, 2000)) == 9


@pytest.fixture(scope="module")
def spam_run(tmp_path_factory):
    """The recorded real run: 16 nodes, one spammer at 5 messages per 2 s epoch against a limit of 1."""
    (run,) = parsed_copies([SPAM_RUN], tmp_path_factory.mktemp("spam"))
    return run


def test_the_recorded_spam_is_rejected_by_the_stand_in_and_kept_apart(spam_run):
    scheduled = schedule.read(spam_run)
    over = scheduled[spam.over_limit(scheduled)]
    events = pd.read_parquet(spam_run / layout.RLN_EVENTS)
    rejected = events[events["event"] == "rejected"]
    assert set(rejected["reason"]) == {"spam"}
    assert set(rejected["msg_hash"]) <= set(over["msg_hash"])  # only what is over the limit is refused
    spam_receipts = pd.read_parquet(spam_run / layout.SPAM_RECEIPTS)
    assert not spam_receipts["msg_hash"].isin(over["msg_hash"]).any()  # nothing over the limit got through
    assert spam_receipts["msg_hash"].isin(scheduled.loc[scheduled["spam"].astype(bool), "msg_hash"]).all()
    receipts = pd.read_parquet(spam_run / layout.RECEIPTS)
    assert not receipts["msg_hash"].isin(scheduled.loc[scheduled["spam"].astype(bool), "msg_hash"]).any()


def test_the_recorded_spammer_is_pruned_then_disconnected_by_its_peers(spam_run):
    events = pd.read_parquet(spam_run / layout.RLN_EVENTS)
    spammer = pd.read_csv(spam_run / layout.SCHEDULE).query("spam")["publisher"].iloc[0]
    scored = events[events["event"].isin(["pruned", "disconnected"])]
    assert set(scored["peer_host"]) == {spammer}  # scoring singles out the spammer, nobody else
    first = scored.groupby("event")["time_ns"].min()
    assert first["pruned"] < first["disconnected"]
    found = spam.run_metrics(spam_run)
    assert found["spam_reach_mean"] == 0 and found["spam_over_limit"] == 60
    assert found["pruned_share"] == 1 and found["disconnected_share"] == 1
    assert 0 < found["prune_s_median"] < found["disconnect_s_median"] <= found["disconnect_s_max"]
    # disconnection waits for a score update (every 12 s) with more than 10 invalid deliveries counted
    assert found["disconnect_s_median"] < 2 * 12


def test_the_spammer_cut_off_is_counted_not_failed(spam_run):
    checks = json.loads((spam_run / layout.VALIDATION).read_text())
    assert checks["passed"]
    counts = checks["counts"]
    assert counts["receipts"] == counts["receipts_expected"] == 14 * 13  # 13 honest messages at the 14 other honest nodes
    assert counts["spam_scheduled"] == counts["spam_published"] == 75
    # what the raw logs hold: the honest messages the spammer itself received, and the stand-in's rejections
    scheduled = pd.read_csv(SPAM_RUN / layout.SCHEDULE)
    spammer = scheduled.query("spam")["publisher"].iloc[0]
    honest = set(scheduled.query("not spam")["msg_hash"])
    received = raw_records(SPAM_RUN, "received relay message")
    at_spammer = sum(host == spammer and r["from_peer_id"] != "rest" and r["msg_hash"] in honest for host, r in received)
    assert counts["receipts_at_spammers"] == at_spammer and 0 < at_spammer < 13  # cut off before the last messages
    row = study_tables.run_metrics(spam_run)
    assert row["delivery"] == 1 and row["spam_rejected"] == len(raw_records(SPAM_RUN, "rln stand-in rejected message"))


def test_a_score_event_without_its_peer_is_named(tmp_path):
    import gzip

    from waku_shadow.errors import LogError
    from waku_shadow.parse import node_logs

    line = ('{"lvl":"NTC","ts":"2000-01-01 00:00:24.001+00:00","msg":"disconnecting bad score peer",'
            '"topics":"libp2p gossipsub","score":-12345.0}\n')
    log = tmp_path / "wakunode2.log.gz"
    with gzip.open(log, "wt") as handle:
        handle.write(line)
    with pytest.raises(LogError, match="line 1 \\('disconnecting bad score peer'\\) lacks a usable field: 'peer_id'"):
        node_logs.parse_host(log, "node0000")
