"""Relay nodes in two bandwidth classes over two cities, on the recorded real run
(tests/data/recorded-classes/): each host ran on its class's network node, the home uplinks' copies
queued, and the analysis, report, summary and docs split latency and bytes by class."""

import pandas as pd
import pytest
from conftest import RECORDED
from recorded import CLASSES_RUN, parsed_copies

from waku_shadow import cli, layout
from waku_shadow.analyse import bandwidth, host_groups, model, residuals
from waku_shadow.configuration import loader
from waku_shadow.errors import ConfigError
from waku_shadow.paper.study_results import StudyResults
from waku_shadow.report import class_tables, study_analysis, study_report, summaries, summary_figures

CONFIG = RECORDED / "recorded-classes.yaml"


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    (run,) = parsed_copies([CLASSES_RUN], tmp_path_factory.mktemp("classes"))
    assert cli.main(["traffic", "--run-dir", str(run)]) == 0
    return run


@pytest.fixture(scope="module")
def results(parsed):
    return StudyResults(loader.load(CONFIG), [parsed])


def test_a_home_publishers_first_copies_leave_at_its_uplinks_pace(parsed):
    """A 20 KB message is 0.16 Mbit: on a 5 Mbit uplink each copy takes 32 ms, on 1 Gbit a fraction of one."""
    classes = host_groups.groups_of(parsed)["bandwidth_class"]
    receipts = pd.read_parquet(parsed / layout.RECEIPTS).query("~warmup")
    first_hop = receipts[receipts["from_host"] == receipts["publisher"]]
    spread = first_hop.groupby("msg_hash").agg(publisher=("publisher", "first"),
                                               spread_ms=("latency_ms", lambda latency: latency.max() - latency.min()))
    spread["publisher_class"] = spread["publisher"].map(classes)
    by_class = spread.groupby("publisher_class")["spread_ms"].min()
    assert by_class["home"] > 2 * 32 > by_class["supernode"]


def test_latency_is_split_by_the_receivers_and_the_publishers_class(results, parsed):
    table = results.latency_by_class
    receivers = table[table["side"] == "receiver"].set_index("bandwidth_class")
    assert receivers["node_runs"].to_dict() == {"home": 15, "supernode": 5}
    measured = len(pd.read_parquet(parsed / layout.RECEIPTS).query("~warmup"))
    assert receivers["receipts"].sum() == table.loc[table["side"] == "publisher", "receipts"].sum() == measured
    publishers = table[table["side"] == "publisher"].set_index("bandwidth_class")
    assert publishers["node_runs"].sum() == 4 and publishers["message_runs"].sum() == 8
    assert (table["p50_ms"] <= table["p95_ms"]).all() and (table["p95_ms"] <= table["max_ms"]).all()
    histogram = results.latency_by_class_histogram
    assert histogram.groupby("side")["receipts"].sum().to_dict() == {"publisher": measured, "receiver": measured}


def test_latency_is_split_by_the_receivers_and_the_publishers_city(results, parsed):
    table = results.latency_by_location
    receivers = table[table["side"] == "receiver"].set_index("location")
    cities = host_groups.groups_of(parsed)["location"].value_counts().to_dict()
    assert receivers["node_runs"].to_dict() == cities and set(cities) == {"Frankfurt", "New York"}
    assert receivers["receipts"].sum() == table.loc[table["side"] == "publisher", "receipts"].sum()


def test_bytes_and_the_publishers_busy_uplink_are_by_class(results, parsed):
    carried = results.bytes_by_class.set_index("bandwidth_class")
    assert carried["nodes"].to_dict() == {"home": 15, "supernode": 5}
    assert (carried["bytes_in_per_node"] > 8 * 20_000 / 2).all()
    uplinks, downlinks = bandwidth.host_bandwidths_bps(parsed, results.study)
    classes = host_groups.groups_of(parsed)["bandwidth_class"]
    assert set(uplinks[classes == "home"]) == {5_000_000} and set(downlinks[classes == "supernode"]) == {1_000_000_000}


def test_equation1_takes_each_edges_own_bandwidth(parsed):
    """A first hop's L_t is one-way + wire bytes / min(sender's uplink, receiver's downlink)."""
    study = loader.load(CONFIG)
    receipts = pd.read_parquet(parsed / layout.RECEIPTS)
    sends = pd.read_parquet(parsed / layout.SENDS)
    uplink, downlink = residuals.edge_bandwidths_bps(parsed, study, receipts)
    classes = host_groups.groups_of(parsed)["bandwidth_class"]
    home_sender = (receipts["from_host"].map(classes) == "home").to_numpy()
    assert set(uplink[home_sender]) == {5e6} and set(uplink[~home_sender]) == {1e9}
    one_way = residuals.edge_one_way_ns(parsed, study, receipts)
    as_classed = model.predict(receipts, sends, study, one_way_ns=one_way, uplink_bps=uplink, downlink_bps=downlink)
    at_one_gbit = model.predict(receipts, sends, study, one_way_ns=one_way, uplink_bps=uplink * 0 + 1e9,
                                downlink_bps=downlink * 0 + 1e9)
    first = (receipts["hop"] == 1).to_numpy()
    wire_bits = model.wire_bytes(20_000) * 8
    expected_ms = wire_bits / pd.Series(uplink).clip(upper=downlink) * 1e3 - wire_bits / 1e9 * 1e3
    difference = (as_classed["eq1_ms"] - at_one_gbit["eq1_ms"]).to_numpy()
    assert difference[first] == pytest.approx(expected_ms.to_numpy()[first])
    assert difference[first & home_sender].min() > 30


def test_the_report_analysis_summary_and_docs_split_by_class(results, tmp_path):
    report = study_report.study_report(results)
    assert "bandwidth classes supernode (0.25 of the nodes, 1 Gbit up / 1 Gbit down)" in report
    assert "## Bandwidth classes" in report and "| 20 KB | receiver | home | 15 |" in report
    written = {path.name for path in study_analysis.write(results, tmp_path / "analysis")}
    assert {layout.LATENCY_BY_CLASS, layout.LATENCY_BY_CLASS_FIGURE, layout.BYTES_BY_CLASS} <= written
    folder = summaries.write(results, tmp_path / "summaries", configs_dir=RECORDED)
    summary = summaries.read(folder)
    assert summary.classed
    pd.testing.assert_frame_equal(summary.latency_by_class, results.latency_by_class, check_dtype=False)
    rows = class_tables.bytes_per_class(summary).set_index("bandwidth_class")
    assert rows.loc["home", "bytes_in"] == pytest.approx(results.bytes_by_class.set_index("bandwidth_class").loc["home", "bytes_in_per_node"])
    assert summary.located and len(summary.latency_by_location) == 4  # 2 cities, 2 sides, 1 point
    by_city = class_tables.by_location({"bandwidth-classes": summary})
    assert "| Frankfurt |" in by_city and "| New York |" in by_city and "receiver's, 20 KB" in by_city
    beside_itself = class_tables.latency_table(summary, summary)
    assert "| 20 KB | receiver | home | 15 |" in beside_itself and "| 20 KB | all | one link (recorded-classes) |" in beside_itself
    figure = summary_figures.class_latency_figure(summary, summary, tmp_path / "figures" / "recorded-classes-latency-by-class")
    assert all(path.stat().st_size > 0 for path in figure)
    (folder / "latency_by_class.csv").unlink()
    with pytest.raises(ConfigError, match="latency_by_class.csv"):
        summaries.read(folder)
