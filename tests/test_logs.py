"""Parsing real nwaku logs recorded from a 16-node Shadow run (tests/data/recorded/)."""

import gzip

import pandas as pd
import pytest
from conftest import RECORDED
from recorded import RUN_2KB, RUN_100KB, copy_run, raw_latencies_ms, raw_records, rewrite_log

from waku_shadow.errors import LogError
from waku_shadow.parse import node_logs
from waku_shadow.run import collect
from waku_shadow.validate import publish_retries


@pytest.fixture(scope="module")
def tables_2kb():
    return node_logs.parse_run(RUN_2KB)


def test_every_receipt_becomes_a_row(tables_2kb):
    receipts = tables_2kb["receipts"]
    schedule = pd.read_csv(RUN_2KB / "schedule.csv")
    assert len(receipts) == 15 * len(schedule)
    assert receipts.groupby("message")["receiver"].nunique().eq(15).all()
    assert set(receipts["msg_hash"]) == set(schedule["msg_hash"])
    assert receipts["from_host"].notna().all()
    assert (receipts["payload_bytes"] == 2000).all()


def test_latency_is_intent_to_acceptance(tables_2kb):
    receipts, publishes = tables_2kb["receipts"], tables_2kb["publishes"]
    assert publishes["intent_logged"].all()
    # L_g = 150 ms between the intent and the publish
    gap_ms = (publishes["publish_ns"] - publishes["intent_ns"]) / 1e6
    assert gap_ms.between(150, 152).all()
    # one hop at 100 ms with L_g 150 ms and L_v 12 ms is the fastest possible receipt
    assert receipts["latency_ms"].min() >= 262


@pytest.mark.parametrize("run", [RUN_2KB, RUN_100KB], ids=lambda r: r.name)
def test_receipts_and_latencies_are_the_raw_logs(run):
    """Every receipt the logs hold, and its latency: receivedTime less the publisher's intentTime."""
    receipts = node_logs.parse_run(run)["receipts"]
    parsed = dict(zip(zip(receipts["msg_hash"], receipts["receiver"]), receipts["latency_ms"]))
    assert parsed == pytest.approx(raw_latencies_ms(run))


def test_sends_are_the_raw_logs(tables_2kb):
    sends = tables_2kb["sends"]
    identities = pd.read_csv(RUN_2KB / "identities.csv")
    host_of = dict(zip(identities["short_peer_id"], identities["host"]))
    raw = sorted((host, r["msg_hash"], host_of[r["to_peer_id"]]) for host, r in raw_records(RUN_2KB, "sent relay message"))
    assert len(raw) == 560
    assert sorted(zip(sends["sender"], sends["msg_hash"], sends["to_host"])) == raw


def test_publisher_sends_and_receivers_relay(tables_2kb):
    sends = tables_2kb["sends"]
    receipts = tables_2kb["receipts"]
    assert sends["to_host"].notna().all()
    first = receipts[receipts["from_host"] == receipts["publisher"]]
    for message, group in first.groupby("message"):
        publisher = group["publisher"].iloc[0]
        sent = sends[(sends["sender"] == publisher) & (sends["msg_hash"] == group["msg_hash"].iloc[0])]
        assert set(group["receiver"]) <= set(sent["to_host"])


def test_truncated_log_is_named(tmp_path):
    run = copy_run(RUN_2KB, tmp_path)
    path = rewrite_log(run, "node0003", lambda lines: lines[:-1] + [lines[-1][:40]])
    with pytest.raises(LogError, match=rf"{path}: line \d+ is cut off \(the log is truncated\)"):
        node_logs.parse_run(run)


def test_truncated_compressed_log_is_named(tmp_path):
    run = copy_run(RUN_2KB, tmp_path)
    path = run / "logs" / "node0004" / "wakunode2.log.gz"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(LogError, match=f"{path}: the compressed log is truncated or corrupt"):
        node_logs.parse_run(run)


def test_foreign_line_is_named(tmp_path):
    run = copy_run(RUN_2KB, tmp_path)
    rewrite_log(run, "node0001", lambda lines: lines[:3] + ["Traceback (most recent call last):\n"] + lines[3:])
    with pytest.raises(LogError, match="line 4 is not a JSON log record: 'Traceback"):
        node_logs.parse_run(run)


def test_nwaku_start_up_echo_is_not_a_foreign_line(tmp_path):
    run = copy_run(RUN_2KB, tmp_path)
    before = node_logs.parse_run(run)["receipts"]
    rewrite_log(run, "node0001", lambda lines: ["bSubscribeShards: some(@[0])\n"] + lines)
    pd.testing.assert_frame_equal(node_logs.parse_run(run)["receipts"], before)


def test_a_record_with_an_unquoted_timestamp_is_read(tmp_path):
    """nwaku v0.37.1-beta's chronicles writes "ts" unquoted (a real line of such a run)."""
    line = (
        '{"lvl":"NTC","ts":2000-01-01 00:00:20.475+00:00,"msg":"received relay message","topics":"waku relay",'
        '"tid":1000,"file":"protocol.nim:243","my_peer_id":"16U*YW2z3M","msg_hash":"0xfc0c","msg_id":"12e3...9aa",'
        '"from_peer_id":"16U*A8dh6e","topic":"/waku/2/rs/42/0","receivedTime":946684820475000064,"payloadSizeBytes":2000.0}\n'
    )
    log = tmp_path / "wakunode2.log.gz"
    with gzip.open(log, "wt") as handle:
        handle.write(line)
    tables, _ = node_logs.parse_host(log, "node0000")
    assert tables["receipts"] == [{"receiver": "node0000", "from_peer": "16U*A8dh6e", "msg_hash": "0xfc0c",
                         "time_ns": 20_475_000_064, "payload_bytes": 2000}]


def test_missing_host_log_is_named(tmp_path):
    run = copy_run(RUN_2KB, tmp_path)
    (run / "logs" / "node0009" / "wakunode2.log.gz").unlink()
    with pytest.raises(LogError, match="no nwaku log for 1 of 16 hosts: node0009"):
        node_logs.parse_run(run)


def test_unknown_message_is_named(tmp_path):
    run = copy_run(RUN_2KB, tmp_path)
    schedule = pd.read_csv(run / "schedule.csv")
    schedule.iloc[1:].to_csv(run / "schedule.csv", index=False)
    with pytest.raises(LogError, match=f"received message hashes are not in the schedule, e.g. {schedule['msg_hash'][0]}"):
        node_logs.parse_run(run)


def test_repeated_msg_key_keeps_the_message():
    line = '{"lvl":"WRN","msg":"Could not retrieve localIp","file":"waku_node.nim:1388","msg":"Connection refused"}'
    import json

    assert json.loads(line, object_pairs_hook=node_logs._first_key_wins)["msg"] == "Could not retrieve localIp"


@pytest.mark.parametrize("binary", ["wakunode2", "wakunode2-v0.37.1-orc"])
def test_collect_gzips_and_names_nwaku_stdout(tmp_path, binary):
    """nwaku's output is named after its binary, whatever the configured binary is called."""
    (tmp_path / "shadow.yaml").write_text(
        f"hosts:\n  node0000:\n    processes:\n    - path: /opt/nwaku/{binary}\n    - path: /usr/bin/curl\n"
    )
    host = tmp_path / "shadow.data" / "hosts" / "node0000"
    host.mkdir(parents=True)
    (host / f"{binary}.1000.stdout").write_text('{"msg":"x"}\n')
    (host / "curl.1001.stdout").write_text("OK")
    out = collect.collect(tmp_path)
    assert gzip.open(out / "node0000" / "wakunode2.log.gz", "rt").read() == '{"msg":"x"}\n'
    assert gzip.open(out / "node0000" / "curl.1001.stdout.gz", "rt").read() == "OK"
    assert not host.exists()


def test_both_recorded_sizes_parse():
    receipts = node_logs.parse_run(RUN_100KB)["receipts"]
    assert (receipts["payload_bytes"] == 100_000).all()
    assert len(receipts) == 15 * 7


def test_retried_publishes_are_counted(tmp_path):
    """curl's stderr of a real publish that nwaku's REST server first answered with HTTP 400."""
    retried = (RECORDED / "curl-retried-publish.stderr").read_bytes()
    for host, name, text in (
        ("node0003", "curl.1001", retried),
        ("node0003", "curl.1002", retried),
        ("node0007", "curl.1001", retried),
        ("node0001", "curl.1001", b""),
    ):
        (tmp_path / "logs" / host).mkdir(parents=True, exist_ok=True)
        with gzip.open(tmp_path / "logs" / host / f"{name}.stderr.gz", "wb") as out:
            out.write(text)
    assert publish_retries.publish_retries(tmp_path) == {"node0003": 2, "node0007": 1}
