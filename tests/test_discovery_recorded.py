"""A network that found its peers by discv5, on the recorded real run (tests/data/recorded-discv5/):
20 nodes, no static peers, two bootstrap nodes, 2 shards; the graph is read back from the nodes' own
lines (nwaku patch 0041) and checked, measured, reported and summarised."""

import json

import pandas as pd
import pytest
from conftest import RECORDED
from recorded import DISCV5_RUN, parsed_copies, raw_records, rewrite_log

from waku_shadow import cli, layout
from waku_shadow.analyse import discovery
from waku_shadow.configuration import loader
from waku_shadow.paper.study_results import StudyResults
from waku_shadow.parse import topology_events
from waku_shadow.report import discovery_tables, study_report, summaries
from waku_shadow.validate.validation import VALIDATION_FAILED

CONFIG = RECORDED / "recorded-discv5.yaml"
BOOTSTRAP = ["node0000", "node0001"]


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    (run,) = parsed_copies([DISCV5_RUN], tmp_path_factory.mktemp("discv5"))
    assert cli.main(["traffic", "--run-dir", str(run)]) == 0
    return run


@pytest.fixture(scope="module")
def results(parsed):
    return StudyResults(loader.load(CONFIG), [parsed])


def test_every_topology_line_is_an_event_and_every_node_got_every_message(parsed):
    events = pd.read_parquet(parsed / layout.TOPOLOGY_EVENTS)
    for line, event in topology_events.EVENTS.items():
        assert (events["event"] == event).sum() == len(raw_records(parsed, line)) > 0
    checks = json.loads((parsed / layout.VALIDATION).read_text())
    assert checks["passed"] and checks["checks"]["meshes"] == "ok" and checks["checks"]["receipts"] == "ok"


def test_both_ends_log_every_link_and_the_graph_is_one_part(parsed):
    events = pd.read_parquet(parsed / layout.TOPOLOGY_EVENTS)
    at_publish = discovery.first_measured_publish_ns(parsed)
    links = discovery.connections_at(events, at_publish)
    seen_by = {}
    for e in events[(events["time_ns"] <= at_publish) & events["event"].isin(["connected", "disconnected"])].itertuples():
        peers = seen_by.setdefault(e.host, set())
        (peers.add if e.event == "connected" else peers.discard)(e.peer_host)
    assert all(a in seen_by.get(b, ()) and b in seen_by.get(a, ()) for a, b in links)
    (graph,) = discovery.run_graph(parsed).to_dict("records")
    assert graph["links"] == len(links) and graph["parts"] == 1 and graph["largest_part"] == 20
    assert 2 <= graph["diameter"] < 20 and graph["evictions"] == len(raw_records(parsed, "relay peer limit reached, evicting peer"))


def test_the_bootstrap_nodes_are_only_dialled_and_evict_above_their_inbound_target(parsed):
    """Everybody's discv5 starts from the two bootstrap nodes, which dial nobody: they take every peer
    in and evict those above nwaku's inbound relay target (20 connections: 10 relay, 7 inbound)."""
    events = pd.read_parquet(parsed / layout.TOPOLOGY_EVENTS)
    connected = events[events["event"] == "connected"]
    outbound = connected[connected["direction"] == "Outbound"]
    assert not outbound["host"].isin(BOOTSTRAP).any() and outbound["host"].nunique() == 18
    assert set(events.loc[events["event"] == "evicted", "host"]) <= set(BOOTSTRAP)
    nodes = discovery.run_nodes(parsed).set_index("host")
    assert nodes.loc[BOOTSTRAP, "outbound_target_s"].isna().all()
    others = nodes.drop(BOOTSTRAP)
    assert (others["first_peer_s"] < others["outbound_target_s"]).all()
    assert (nodes["discv5_bytes_in_per_min"] > 0).all() and (nodes["discv5_bytes_out_per_min"] > 0).all()


def test_a_node_whose_grafts_are_gone_fails_validation_by_name(tmp_path):
    (run,) = parsed_copies([DISCV5_RUN], tmp_path, validate=False)
    rewrite_log(run, "node0007", lambda lines: [line for line in lines if '"msg":"mesh peer grafted"' not in line])
    assert cli.main(["parse", "--run-dir", str(run)]) == 0
    assert cli.main(["validate", "--run-dir", str(run)]) != 0
    checks = json.loads((run / VALIDATION_FAILED).read_text())["checks"]
    assert checks["meshes"] == "1 nodes never had a mesh peer on a shard they serve: node0007 (shard 0), node0007 (shard 1)"


def test_the_report_and_the_summary_say_when_the_nodes_got_their_peers(results, tmp_path):
    summary_row = results.discovery.iloc[0]
    assert summary_row["nodes"] == 20 and summary_row["never_meshed"] == results.discovery_nodes["mesh_s"].isna().sum()
    assert summary_row["first_peer_p50_s"] <= summary_row["outbound_target_p50_s"]
    assert "## Discovery" in study_report.study_report(results)
    folder = summaries.write(results, tmp_path / "summaries", configs_dir=RECORDED)
    summary = summaries.read(folder)
    assert summary.discovered and not summary.discovery.empty and not summary.discovery_graph.empty
    answer = discovery_tables.answer({"discovery": summary, "discovery-static": summaries.read(folder)})
    assert "a mesh on every shard" in answer and "`data/recorded-discv5.yaml`" in answer
    assert "relay latency on a static graph" in answer
    block = discovery_tables.by_point({"discovery": summary})
    assert block.count("n20-size2000B-seed7") == 2  # the heading and the graph's row
