"""Statistics, figure and report from the recorded runs."""

import pandas as pd
import pytest
from recorded import RUNS, parsed_copies

from waku_shadow import cli
from waku_shadow.analyse import stats
from waku_shadow.parse import node_logs
from waku_shadow.report import tables


@pytest.fixture(scope="module")
def receipts():
    return pd.concat([node_logs.parse_run(run)["receipts"] for run in RUNS], ignore_index=True)


def test_summary_columns_and_values(receipts):
    summary = stats.latency_summary(receipts)
    assert list(summary.columns) == ["size_bytes", "count", "min", "mean", "p50", "p95", "max"]
    assert list(summary["size_bytes"]) == [2000, 100000]
    measured = receipts[~receipts["warmup"]]
    for row in summary.itertuples():
        latencies = measured.loc[measured["size_bytes"] == row.size_bytes, "latency_ms"]
        assert row.count == 15 * 6  # the warm-up message is left out
        assert row.min == latencies.min() and row.max == latencies.max()
        assert row.mean == pytest.approx(latencies.mean())
        assert row.p50 == pytest.approx(latencies.median())


def test_hand_computed_percentiles():
    frame = pd.DataFrame({"size_bytes": 10, "warmup": [True] + [False] * 5, "latency_ms": [1000.0, 1, 2, 3, 4, 5]})
    row = stats.latency_summary(frame).iloc[0]
    assert (row["count"], row["min"], row["mean"], row["p50"], row["max"]) == (5, 1, 3, 3, 5)
    assert row["p95"] == pytest.approx(4.8)


def test_markdown_table(receipts):
    text = tables.latency_summary(stats.latency_summary(receipts)).markdown()
    assert text.splitlines()[0].startswith("| size | count | min (ms)")
    assert "| 2 KB | 90 |" in text and "| 100 KB | 90 |" in text


def test_summarize_writes_tables_figure_and_report(tmp_path):
    runs = parsed_copies(RUNS, tmp_path / "runs")
    out = tmp_path / "study"
    out.mkdir()
    assert cli.main(["summarize", "--study-config", str(runs[0] / "config.yaml"), "--out", str(out),
                     "--runs", *map(str, runs)]) == 0
    summary = pd.read_csv(out / "latency_summary.csv")
    assert list(summary["count"]) == [90, 90]
    assert (out / "figures" / "latency_distributions.png").stat().st_size > 20_000
    report = (out / "report.md").read_text()
    assert "| n16-size2000B-seed11 | 2 KB |" in report and "passed" in report


def test_two_studies_compare_on_the_sizes_both_have():
    ours = pd.DataFrame({"size_bytes": [2000, 25000], "count": [10, 10], "min": [100.0, 110.0], "mean": [200.0, 220.0],
                         "p50": [190.0, 210.0], "p95": [300.0, 330.0], "max": [400.0, 440.0]})
    other = pd.DataFrame({"size_bytes": [2000], "count": [20], "min": [50.0], "mean": [400.0],
                          "p50": [380.0], "p95": [600.0], "max": [800.0]})
    table = stats.compare(ours, other).set_index("statistic")
    assert list(table["size_bytes"]) == [2000] * 5
    assert table.loc["min", "ratio"] == 2.0 and table.loc["max", "ratio"] == 0.5
    assert table.loc["p95", ["ours_ms", "other_ms"]].tolist() == [300.0, 600.0]


def test_distances_on_samples_worked_by_hand():
    def frame(size, latencies, warmup=()):
        return pd.DataFrame({"size_bytes": size, "latency_ms": [*warmup, *latencies],
                             "warmup": [True] * len(warmup) + [False] * len(latencies)})

    # the reference is ours moved 2 ms later: every receipt moves 2 ms (Wasserstein 2); from 2 to
    # 5 ms the ECDFs are 2/4 apart (2/4 against 0/4, 3/4 against 1/4, 4/4 against 2/4): KS 0.5.
    # Ours 1 ms earlier, [0, 1, 2, 3]: at 3 ms 4/4 against 1/4, KS 0.75; 1 ms later, [2, 3, 4, 5]:
    # one step apart everywhere, KS 0.25
    ours = pd.concat([frame(2000, [1, 2, 3, 4]), frame(9000, [1, 2])])  # the reference has no 9 KB
    reference = frame(2000, [3, 4, 5, 6], warmup=[500.0])  # its warm-up receipt is left out
    table = stats.distribution_distances(ours, reference, ["size_bytes"])
    assert table.to_dict("records") == [
        {"size_bytes": 2000, "ks": 0.5, "ks_minus_1ms": 0.75, "ks_plus_1ms": 0.25, "wasserstein_ms": pytest.approx(2.0),
         "ours_n": 4, "reference_n": 4}]
    # unequal sizes: on [0, 1) the ECDFs are 2/3 and 1/2 apart by 1/6, equal elsewhere: KS = W = 1/6
    table = stats.distribution_distances(frame(2000, [0, 0, 1]), frame(2000, [0, 1]), ["size_bytes"])
    assert table.loc[0, "ks"] == pytest.approx(1 / 6) and table.loc[0, "wasserstein_ms"] == pytest.approx(1 / 6)
    # identical samples are at distance 0
    same = stats.distribution_distances(frame(2000, [5, 7, 7]), frame(2000, [7, 5, 7]), ["size_bytes"])
    assert same.loc[0, "ks"] == 0 and same.loc[0, "wasserstein_ms"] == 0


def test_the_largest_distance_between_seeds_of_a_point():
    def receipts(seed, latencies, size=2000):
        return pd.DataFrame({"size_bytes": size, "seed": seed, "latency_ms": latencies, "warmup": False})
    table = pd.concat([receipts(1, [1, 2, 3, 4]), receipts(2, [3, 4, 5, 6]), receipts(3, [1, 2, 3, 4]),
                       receipts(1, [10, 20], size=25000)])
    between = stats.largest_distance_between(table, ["size_bytes"]).set_index("size_bytes")["ks_between"]
    # seeds 1 and 2: at 2 ms seed 1's ECDF is 0.5, seed 2's 0; seeds 1 and 3 are the same sample
    assert between.to_dict() == {2000: 0.5}  # 25 KB has one seed: no distance between seeds
