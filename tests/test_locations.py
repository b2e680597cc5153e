"""Location-aware networks: the RTT matrix, placing nodes, the graph, cascades and the Table 3 shape."""

import re

import pandas as pd
import pytest
import yaml
from conftest import CONFIGS, REPO
from recorded import CASCADE_RUNS, parsed_copies

from waku_shadow.analyse import model, residuals
from waku_shadow.configuration import loader, rtt_matrix
from waku_shadow.configuration.study import exact_counts
from waku_shadow.errors import ConfigError
from waku_shadow.paper import compare
from waku_shadow.render import locations, network_graph, plan, run_folder

TABLE2 = REPO / "data" / "paper" / "table2_rtt_ms.csv"
CITIES = ["Singapore", "Bangalore", "San Francisco", "New York", "Frankfurt"]


def test_table2_matrix_is_symmetric_in_ns_with_both_directions_averaged():
    matrix = rtt_matrix.read_rtt_matrix(TABLE2, same_location_rtt_ns=2_000_000)
    assert sorted(matrix.names) == sorted(CITIES)
    # Bangalore -> Frankfurt 136 ms, Frankfurt -> Bangalore 132 ms
    assert matrix.rtt("Bangalore", "Frankfurt") == matrix.rtt("Frankfurt", "Bangalore") == 134_000_000
    assert matrix.rtt("San Francisco", "New York") == 68_000_000
    assert matrix.rtt("Singapore", "Singapore") == 2_000_000
    for a in CITIES:
        for b in CITIES:
            assert matrix.rtt(a, b) > 0
    assert rtt_matrix.one_way_ns(matrix, "Singapore", "Frankfurt", 0.5) == 79_750_000


def write_matrix(tmp_path, rows: str):
    path = tmp_path / "matrix.csv"
    path.write_text("# a comment\nfrom,to,rtt_ms\n" + rows)
    return path


def test_a_missing_pair_is_named(tmp_path):
    path = write_matrix(tmp_path, "A,B,10\nB,C,20\n")
    with pytest.raises(ConfigError, match="no RTT between 'A' and 'C' in either direction"):
        rtt_matrix.read_rtt_matrix(path, 1_000_000)


@pytest.mark.parametrize(
    "rows, message",
    [("A,B,fast\n", "line 3: rtt_ms 'fast' is not a number"), ("A,B,0\n", "line 3: rtt_ms must be more than 0")],
)
def test_bad_rtts_are_named(tmp_path, rows, message):
    with pytest.raises(ConfigError, match=message):
        rtt_matrix.read_rtt_matrix(write_matrix(tmp_path, rows), 1_000_000)


def test_a_row_for_a_location_itself_overrides_the_default(tmp_path):
    matrix = rtt_matrix.read_rtt_matrix(write_matrix(tmp_path, "A,B,10\nA,A,4\n"), 1_000_000)
    assert (matrix.rtt("A", "A"), matrix.rtt("B", "B")) == (4_000_000, 1_000_000)


def test_nodes_are_placed_in_exact_proportions_by_seed():
    weights = [("A", 1.0), ("B", 2.0), ("C", 1.0)]
    assert sum(exact_counts(1001, [w for _, w in weights])) == 1001
    in_order = locations.assign(8, weights, "in_order", seed=1)
    assert in_order == ["A", "A", "B", "B", "B", "B", "C", "C"]
    shuffled = locations.assign(8, weights, "random", seed=1)
    assert sorted(shuffled) == in_order and shuffled == locations.assign(8, weights, "random", seed=1)
    assert shuffled != locations.assign(8, weights, "random", seed=2)


def test_quotas_give_remainders_to_the_largest_fractions():
    # 10 nodes over weights 1:2:1 -> exact 2.5, 5, 2.5: the tie goes to the first location
    assert exact_counts(10, [1.0, 2.0, 1.0]) == [3, 5, 2]
    assert exact_counts(5, [1.0]) == [5]


def test_graph_is_complete_with_self_loops_and_one_attribute_per_line():
    text = network_graph.gml(plan.plan(loader.resolve(location_study(bandwidth_up="50 Mbit")), 2000))
    assert text.count("node [") == 5 and text.count("edge [") == 15
    edges = re.findall(r"source (\d+)\n\s+target (\d+)\n\s+latency \"([^\"]+)\"", text)
    assert {(int(a), int(b)) for a, b, _ in edges} == {(i, j) for i in range(5) for j in range(i, 5)}
    assert ("0", "1", "29750 us") in edges  # Singapore - Bangalore: (60 + 59) / 2 / 2 ms
    assert ("0", "0", "1 ms") in edges
    assert 'host_bandwidth_up "50 Mbit"' in text
    for line in text.splitlines():
        stripped = line.strip()
        assert stripped in ("graph [", "node [", "edge [", "]") or re.fullmatch(r"\w+ (\"[^\"]*\"|[\d.]+)", stripped), line


def test_shipped_location_studies_resolve():
    multihost = loader.load(CONFIGS / "multihost.yaml")
    assert multihost.topology == "cascade" and multihost.nodes == 5
    assert plan.plan(multihost, 2000).node_locations == CITIES
    assert multihost.latency_ns is None and multihost.resolved["network"]["peers_per_node"] is None
    world = loader.load(CONFIGS / "world.yaml")
    assert sorted(pd.Series(plan.plan(world, 2000).node_locations).value_counts()) == [200] * 5


def location_study(**network):
    cities = {"rtt_matrix": "data/paper/table2_rtt_ms.csv", "names": CITIES, "assignment": "in_order"}
    base = {"nodes": 5, "topology": "cascade", "locations": cities}
    return {"study": "cities", "network": {**base, **network}, "traffic": {"publishers": 1}}


@pytest.mark.parametrize(
    "network, message",
    [
        ({"latency": "100 ms"}, "network.latency: with network.locations the latencies come from its rtt_matrix"),
        ({"peers_per_node": 2}, "network.peers_per_node: a cascade's nodes dial only their neighbour"),
        (
            {"locations": {"rtt_matrix": "data/paper/table2_rtt_ms.csv", "names": ["Singapore", "Tokyo"]}},
            "network.locations.names: 'Tokyo' is not in data/paper/table2_rtt_ms.csv",
        ),
        (
            {"locations": {"rtt_matrix": "data/paper/table2_rtt_ms.csv", "names": CITIES, "weights": [1, 2]}},
            "network.locations.weights: 2 weights for 5 names",
        ),
        (
            {"locations": {"rtt_matrix": "data/paper/no-such.csv", "names": CITIES}},
            "network.locations.rtt_matrix: .*no-such.csv: no such latency matrix",
        ),
        ({"locations": {"names": CITIES}}, "missing key: 'rtt_matrix' is a required property"),
    ],
)
def test_location_config_errors_name_the_key(network, message):
    with pytest.raises(ConfigError, match=message):
        loader.resolve(location_study(**network))


def test_cascade_renders_a_line_over_the_cities(tmp_path):
    study = loader.resolve(location_study())
    run = plan.plan(study, 2000)
    assert {m.publisher for m in run.messages} == {0}
    run_folder.render(run, tmp_path, "bin/wakunode2", "curl")
    rendered = yaml.safe_load((tmp_path / "shadow.yaml").read_text())
    assert rendered["network"]["use_shortest_path"] is False
    graph_ids = [host["network_node_id"] for host in rendered["hosts"].values()]
    assert graph_ids == [0, 1, 2, 3, 4]
    node_labels = re.findall(r'label "([^"]+)"', (tmp_path / "network.gml").read_text())
    assert node_labels == CITIES
    assert list(pd.read_csv(tmp_path / "identities.csv")["location"]) == CITIES
    links = pd.read_csv(tmp_path / "links.csv")
    assert list(zip(links["dialer"], links["dialed"])) == [(f"node{i:04d}", f"node{i + 1:04d}") for i in range(4)]


@pytest.fixture(scope="module")
def cascade_runs(tmp_path_factory):
    return parsed_copies(CASCADE_RUNS, tmp_path_factory.mktemp("cascade"))


def test_recorded_cascade_travels_the_line(cascade_runs):
    receipts = pd.read_parquet(cascade_runs[0] / "receipts.parquet")
    assert sorted(receipts["hop"].unique()) == [1, 2, 3, 4]
    assert (receipts.groupby("receiver")["hop"].nunique() == 1).all()
    assert dict(zip(receipts["receiver"], receipts["hop"])) == {f"node{i:04d}": i for i in range(1, 5)}


def test_table3_shape_from_the_recorded_cascade(cascade_runs):
    table = compare.multihost_table3(cascade_runs)
    assert set(table["size_bytes"]) == {2000, 500000}
    small = table[table["size_bytes"] == 2000].set_index(["component", "from", "to"])
    assert list(small.index.get_level_values("component")) == ["L_g"] + ["L_t", "L_v"] * 4 + ["total"]
    assert small.loc[("L_g", "Singapore", ""), "paper_ms"] == 236
    assert small.loc[("L_g", "Singapore", ""), "ours_ms"] == pytest.approx(276.3, abs=1.0)
    # a 2 KB hop in Shadow is the link's RTT/2 plus serialisation, to within a millisecond
    hop = small.loc[("L_t", "Bangalore", "San Francisco")]
    assert hop["ours_ms"] == pytest.approx(hop["expected_ms"], abs=1.0)
    assert hop["paper_ms"] == 105 and hop["ratio"] == pytest.approx(hop["ours_ms"] / 105)
    # the total is the mean latency at Frankfurt: the sum of the parts along the line
    parts = small.loc[small.index.get_level_values("component") != "total", "ours_ms"].sum()
    assert small.loc[("total", "Singapore", "Frankfurt"), "ours_ms"] == pytest.approx(parts, abs=0.01)


def test_model_uses_each_edges_latency_on_the_cascade(cascade_runs):
    receipts = pd.concat([residuals.run_receipts(run) for run in cascade_runs])
    summary = residuals.residual_summary(receipts, ["size_bytes"]).set_index(["size_bytes", "model"])
    assert summary.loc[(2000, "Equation 1 as written"), "median_abs_residual_ms"] < 5
    # 500 KB: the flow-control window costs a round trip per hop that Equation 1 misses
    assert summary.loc[(500000, "Equation 1 as written"), "median_abs_residual_ms"] > 100
    assert summary.loc[(500000, "+ uplink + flow-control window"), "median_abs_residual_ms"] < 10


def test_slow_start_restart_rounds():
    # from 10 segments of 1448 B, doubling: 14.5 KB, then 43.4, 101.4, 217.2, 449.0, 912.5 KB in all
    assert [model.slow_start_rounds(b) for b in (14_480, 14_481, 43_440, 101_360, 104_800, 513_000)] == [0, 1, 1, 2, 3, 5]
