"""Bytes per node from Shadow's packet captures and each message's amplification, on the recorded five-city cascade."""

import gzip

import pandas as pd
import pytest
import yaml
from recorded import CASCADE_RUNS, copy_run, parsed_copies

from waku_shadow import cli
from waku_shadow.analyse import bandwidth, stats
from waku_shadow.configuration import loader
from waku_shadow.errors import LogError
from waku_shadow.parse import pcap
from waku_shadow.render import plan, run_folder

RUN_500KB = CASCADE_RUNS[1]
IDENTITIES = pd.read_csv(RUN_500KB / "identities.csv")


def test_a_capture_holds_only_the_nodes_own_packets_in_time_order():
    packets = pcap.read_pcap(RUN_500KB / "logs" / "node0001" / pcap.CAPTURE)
    ip = IDENTITIES.set_index("host").loc["node0001", "ip"]
    assert ((packets["src"] == ip) | (packets["dst"] == ip)).all()
    assert packets["time_ns"].is_monotonic_increasing
    assert packets["bytes"].between(40, 65535).all()


def test_bytes_sent_are_bytes_received_along_the_line():
    table = pcap.node_traffic(RUN_500KB, interval_ns=1_000_000_000)
    assert list(table.columns) == ["node", "time_s", "bytes_in", "bytes_out"]
    total = table.groupby("node")[["bytes_in", "bytes_out"]].sum()
    # what is sent arrives, but for packets still in flight when the run stopped
    assert 0 <= total["bytes_out"].sum() - total["bytes_in"].sum() < 1500 * len(total)
    # 3 messages of 500 KB leave Singapore once each and cross every link once: about 3 % of
    # headers and framing on top of the payload, and each node forwards what it receives
    payload = 3 * 500_000
    assert payload < total.loc["node0000", "bytes_out"] < 1.05 * payload
    for middle in ("node0001", "node0002", "node0003"):
        assert total.loc[middle, "bytes_out"] == pytest.approx(total.loc[middle, "bytes_in"], rel=0.01)
    assert total.loc["node0004", "bytes_out"] < 0.01 * total.loc["node0004", "bytes_in"]


def test_idle_traffic_is_subtracted_per_node():
    table = pd.DataFrame(
        {
            "node": ["a"] * 4 + ["b"] * 3,
            "time_s": [5.0, 6.0, 7.0, 8.0, 5.0, 6.0, 8.0],
            "bytes_in": [100, 300, 1200, 200, 10, 30, 500],
            "bytes_out": [50, 50, 900, 50, 0, 0, 0],
        }
    )
    busy = pcap.without_idle(table, idle_from_s=5.0, first_publish_s=7.0, interval_s=1.0).set_index(["node", "time_s"])
    assert busy.loc[("a", 7.0), ["bytes_in", "bytes_out"]].tolist() == [1000, 850]  # idle: 200 in, 50 out per interval
    assert busy.loc[("b", 8.0), ["bytes_in", "bytes_out"]].tolist() == [480, 0]  # idle: 20 in per interval
    # a node silent while idle has an idle rate of zero
    quiet = pcap.without_idle(table[table["time_s"] >= 7.0], idle_from_s=5.0, first_publish_s=7.0, interval_s=1.0)
    assert quiet["bytes_in"].tolist() == [1200, 200, 500]
    with pytest.raises(LogError, match="no idle time to measure between 6.5 s and the first publish at 7.0 s"):
        pcap.without_idle(table, idle_from_s=6.5, first_publish_s=7.0, interval_s=1.0)


def test_a_truncated_capture_is_named(tmp_path):
    run = copy_run(RUN_500KB, tmp_path)
    capture = run / "logs" / "node0002" / pcap.CAPTURE
    with gzip.open(capture, "rb") as handle:
        data = handle.read()
    with gzip.open(capture, "wb") as handle:
        handle.write(data[:-30])
    with pytest.raises(LogError, match=r"node0002/eth0.pcap.gz: truncated packet"):
        pcap.node_traffic(run, 1_000_000_000)


def test_a_missing_capture_is_named(tmp_path):
    run = copy_run(RUN_500KB, tmp_path)
    (run / "logs" / "node0003" / pcap.CAPTURE).unlink()
    with pytest.raises(LogError, match="node0003/eth0.pcap.gz: no packet capture; was the run made with shadow.traffic_capture: true"):
        pcap.node_traffic(run, 1_000_000_000)


def test_capture_is_switched_on_in_shadow_yaml(tmp_path, small_study):
    captured = loader.resolve({**small_study.study_config(), "shadow": {"traffic_capture": True}})
    for study, expected in ((small_study, None), (captured, {"pcap_enabled": True, "pcap_capture_size": "64 B"})):
        run = plan.plan(study, 2000)
        run_folder.render(run, tmp_path / str(study.traffic_capture), "bin/wakunode2", "curl")
        rendered = yaml.safe_load((tmp_path / str(study.traffic_capture) / "shadow.yaml").read_text())
        assert rendered.get("host_option_defaults") == expected


def test_amplification_on_the_line_is_the_headers_alone(tmp_path):
    small, large = parsed_copies(CASCADE_RUNS, tmp_path)
    rows = {}
    for run in (small, large):
        assert cli.main(["traffic", "--run-dir", str(run)]) == 0
        rows[run.name] = pd.read_parquet(run / "amplification.parquet").set_index("message")
    line = rows[large.name]
    # 4 receivers in a line: every copy sent is a receipt, none is a duplicate
    assert (line["receivers"] == 4).all() and (line["copies_sent"] == 4).all()
    assert (line["duplicates_per_receiver"] == 0).all()
    # each 500 KB message crosses 4 links with ~3 % of TCP/IP headers and framing
    assert line["amplification"].between(1.0, 1.05).all()
    assert line["wire_bytes"].between(4 * 500_000, 4 * 525_000).all()
    # at 2 KB the headers and gossip control around a payload weigh far more
    assert (rows[small.name]["amplification"] > line["amplification"].max()).all()


def test_a_line_is_fitted_exactly():
    fit = stats.fit_line(pd.Series([0.0, 1.0, 2.0, 4.0]), pd.Series([5.0, 8.0, 11.0, 17.0]))
    assert fit == pytest.approx({"slope": 3.0, "intercept": 5.0, "r2": 1.0})


def test_message_windows_follow_the_traffic_interval():
    busy = pd.DataFrame({"node": ["a"] * 4, "time_s": [20.0, 22.0, 24.0, 26.0], "bytes_out": [100, 10, 300, 30]})
    publishes = pd.DataFrame({"message": [0, 1], "publish_ns": [21_400_000_000, 25_100_000_000]})
    sent = bandwidth.message_wire_bytes(busy, publishes, stop_s=29.0, interval_s=2.0)
    # message 0 owns the 2 s intervals from 20 s up to 24 s, message 1 those from 24 s up to 28 s
    assert sent.to_dict() == {0: 110, 1: 330}
