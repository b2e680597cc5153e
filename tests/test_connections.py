"""Who closed a run's long-lived connections, replayed on two nodes of a recorded mplex load run.

The fixture is nodes node0017 and node0019 of results/load-mplex-v0.38.1's 15.2 messages/s run
(100 nodes, 100 KB): their nwaku logs, and their captures cut to the SYN, FIN and RST packets by
scripts/trim_capture.py.
"""

import gzip

import pandas as pd
import pytest
from conftest import RECORDED
from recorded import CASCADE_RUNS, copy_run

from waku_shadow import cli
from waku_shadow.analyse import connections
from waku_shadow.errors import LogError
from waku_shadow.parse import pcap

LOAD_RUN = RECORDED / "recorded-closes" / "interval_ms66-n100-size100000B-seed1"
HOSTS = ["node0017", "node0019"]


def test_every_close_under_load_follows_a_failed_keepalive_ping_of_that_peer():
    closes = connections.connection_closes(LOAD_RUN, open_at_s=20.0, hosts=HOSTS)
    assert list(zip(closes["closer"], closes["peer"])) == [
        ("node0017", "node0019"), ("node0019", "node0018"), ("node0019", "node0015"),
        ("node0019", "node0005"), ("node0017", "node0007")]
    assert closes["ping_dial_failed_s"].round(3).tolist() == [33.301, 34.5, 34.5, 34.5, 36.722]
    # the FIN leaves after what the closer still had queued for that peer
    assert (closes["closed_s"] >= closes["ping_dial_failed_s"]).all()
    assert closes["closed_s"].round(3).tolist() == [33.617, 34.5, 38.092, 39.493, 44.245]


def test_a_connection_the_peer_closed_first_is_the_peers_close():
    only_19 = connections.connection_closes(LOAD_RUN, open_at_s=20.0, hosts=["node0019"])
    assert "node0017" not in set(only_19["peer"])  # node0017 closed it, seen in node0019's capture too
    fins = pcap.closed_connections(LOAD_RUN / "logs" / "node0019" / pcap.CAPTURE, "10.0.0.20")
    assert len(fins) >= len(only_19)


def test_without_the_ping_failure_in_the_log_a_close_is_unexplained(tmp_path):
    run = copy_run(LOAD_RUN, tmp_path)
    log = run / "logs" / "node0017" / "wakunode2.log.gz"
    with gzip.open(log, "rt") as handle:
        lines = [line for line in handle if connections.PING_DIAL_FAILED not in line]
    with gzip.open(log, "wt") as handle:
        handle.writelines(lines)
    closes = connections.connection_closes(run, open_at_s=20.0, hosts=HOSTS)
    unexplained = closes[closes["ping_dial_failed_s"].isna()]
    assert list(unexplained["closer"]) == ["node0017", "node0017"]
    assert connections.summary(closes, 20.0).startswith("5 connections open at 20 s were closed later by one of their ends; 3 of them")


def test_only_connections_open_at_the_cut_count():
    early = connections.connection_closes(LOAD_RUN, open_at_s=0.1, hosts=HOSTS)
    assert list(early["peer"]) == ["node0019", "node0018"]
    assert (early["opened_s"] < 0.1).all()
    assert connections.connection_closes(LOAD_RUN, open_at_s=40.0, hosts=HOSTS)["closed_s"].round(3).tolist() == [44.245]


def test_a_quiet_recorded_run_closes_none_of_its_startup_connections():
    run = CASCADE_RUNS[1]
    assert connections.connection_closes(run, open_at_s=1.0).empty


def test_a_missing_capture_or_unknown_host_is_named(tmp_path):
    run = copy_run(LOAD_RUN, tmp_path)
    (run / "logs" / "node0019" / pcap.CAPTURE).unlink()
    with pytest.raises(LogError, match="node0019/eth0.pcap.gz: no packet capture"):
        connections.connection_closes(run, 20.0, hosts=HOSTS)
    with pytest.raises(LogError, match="no host node9999 in identities.csv"):
        connections.connection_closes(run, 20.0, hosts=["node9999"])


def test_the_command_prints_the_table_and_the_summary(tmp_path, capsys):
    out = tmp_path / "closes.csv"
    args = ["closes", "--run-dir", str(LOAD_RUN), "--host", "node0017", "--host", "node0019", "--out", str(out)]
    assert cli.main(args) == 0
    printed = capsys.readouterr().out
    assert "open at 20 s" in printed  # the first scheduled message, from schedule.csv
    assert "5 of them right after the closer's keep-alive ping dial of that peer had failed" in printed
    assert out.read_text().count("\n") == 6
    assert "after the last receipt (29.511 s) the nodes still sent 1618 MB, 18.8% of what they sent from 20 s on" in printed


def test_what_is_sent_after_the_last_receipt_is_counted_from_the_next_whole_interval(tmp_path):
    run = copy_run(LOAD_RUN, tmp_path)
    last_receipt_s, after, share = connections.sent_after_last_receipt(run, first_publish_s=20.0)
    traffic = pd.read_parquet(run / "traffic.parquet")
    assert after == traffic.loc[traffic["time_s"] >= 30.0, "bytes_out"].sum()
    assert share == pytest.approx(after / traffic.loc[traffic["time_s"] >= 20.0, "bytes_out"].sum())
    # a run whose receipts end later leaves less after them
    receipts = pd.read_parquet(run / "receipts.parquet")
    receipts.loc[receipts.index[0], "received_ns"] = 40_500_000_000
    receipts.to_parquet(run / "receipts.parquet")
    assert connections.sent_after_last_receipt(run, 20.0)[1] == traffic.loc[traffic["time_s"] >= 41.0, "bytes_out"].sum() < after
