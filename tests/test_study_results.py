"""Every result of a study, where it is computed (paper.study_results), against the recorded real runs:
each expected value is read off the runs' own files or the paper's published numbers, or worked by hand."""

import json

import numpy as np
import pandas as pd
import pytest
from conftest import RECORDED, RECORDED_NETWORK
from recorded import CASCADE_RUNS, RUNS, ecdf_distances, parsed_copies

from waku_shadow import cli
from waku_shadow.configuration import loader
from waku_shadow.paper import compare
from waku_shadow.paper.study_results import StudyResults

SWEEP_RUNS = sorted((RECORDED / "recorded-sweep").iterdir())
T_975_1 = 12.706204736174707  # Student's t, 97.5 % quantile, one degree of freedom (two repetitions)


def study_results(base, name, runs, traffic=False) -> StudyResults:
    copies = parsed_copies(runs, base / name)
    for run in copies if traffic else []:
        assert cli.main(["traffic", "--run-dir", str(run)]) == 0
    return StudyResults(loader.load(RECORDED / f"{name}.yaml"), copies)


@pytest.fixture(scope="module", autouse=True)
def recorded_network_stands_for_the_papers():
    """The recorded runs' network stands in for the paper's (conftest.RECORDED_NETWORK), for every
    result of this module's studies, which are computed on first use."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compare, "PAPER_NETWORK", RECORDED_NETWORK)
        yield


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    return study_results(tmp_path_factory.mktemp("single"), "recorded", RUNS)


@pytest.fixture(scope="module")
def cascade(tmp_path_factory):
    return study_results(tmp_path_factory.mktemp("cascade"), "recorded-cascade", CASCADE_RUNS, traffic=True)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return study_results(tmp_path_factory.mktemp("sweep"), "recorded-sweep", SWEEP_RUNS, traffic=True)


def measured_latency(run, **where) -> np.ndarray:
    receipts = pd.read_parquet(run / "receipts.parquet")
    receipts = receipts[~receipts["warmup"]]
    for column, value in where.items():
        receipts = receipts[receipts[column] == value]
    return receipts["latency_ms"].to_numpy()


def test_latency_summary_and_table5_beside_the_papers(single):
    summary = single.summary.set_index("size_bytes")
    table5 = single.table5.set_index(["size_bytes", "statistic"])
    # Table 5 of the paper, single-host (ms)
    paper = {2000: {"min": 356, "mean": 497, "p95": 597, "max": 604}, 100000: {"min": 439, "mean": 900, "p95": 1076, "max": 1221}}
    for run, size in zip(single.run_dirs, (2000, 100000)):
        latency = measured_latency(run)
        assert len(latency) == summary.loc[size, "count"] == 15 * 6  # 15 receivers of 6 measured messages
        ours = {"min": latency.min(), "mean": latency.mean(), "p95": np.percentile(latency, 95), "max": latency.max()}
        for statistic, value in ours.items():
            assert summary.loc[size, statistic] == pytest.approx(value)
            row = table5.loc[(size, statistic)]
            assert (row["paper_ms"], row["ours_ms"]) == pytest.approx((paper[size][statistic], value))
            assert row["ratio"] == pytest.approx(value / paper[size][statistic])
    assert len(table5) == 8


def test_a_sweep_sets_no_table5_and_its_4kb_no_distances(sweep):
    assert list(sweep.summary["d"]) == [2, 5] and (sweep.summary["count"] == 72).all()  # 2 seeds x 36 receipts
    assert sweep.table5.empty and list(sweep.table5.columns) == ["size_bytes", "statistic", "paper_ms", "ours_ms", "ratio"]
    assert sweep.distances.empty and sweep.hop_shares.empty  # the paper simulated no 4 KB


def test_distances_from_the_papers_raw_latencies(single):
    theirs = pd.read_csv(RECORDED.parent.parent / "data" / "paper" / "shadow_latency_receipts.csv.gz", comment="#")
    theirs = theirs[theirs["seq"] != 0]  # the paper's analysis left out seq 0
    pooled = single.distances.set_index("size_bytes")
    by_seed = single.distances_by_seed.set_index("size_bytes")
    for run, size in zip(single.run_dirs, (2000, 100000)):
        ks, wasserstein = ecdf_distances(measured_latency(run), theirs.loc[theirs["size_kb"] * 1000 == size, "latency_ms"].to_numpy(float))
        assert (pooled.loc[size, "ks"], pooled.loc[size, "wasserstein_ms"]) == pytest.approx((ks, wasserstein))
        assert (pooled.loc[size, "ours_n"], pooled.loc[size, "paper_n"]) == (90, 8991)
        assert by_seed.loc[size, "seed"] == 11 and by_seed.loc[size, "ks"] == pytest.approx(ks)  # one seed


def test_hops_first_hops_equation2_and_figure2(single, cascade):
    histogram = single.hop_histogram.pivot(index="hop", columns="size_bytes", values="receipts").fillna(0)
    assert histogram[2000].to_dict() == {1: 38, 2: 52, 3: 0} and histogram[100000].to_dict() == {1: 35, 2: 53, 3: 2}
    equation2 = single.equation2.set_index("size")
    # N = 16, D = 6: ⌈log(15·4/6 + 1) / log 5⌉ = ⌈1.49⌉ = 2 and ⌈log 16 / log 6⌉ = ⌈1.55⌉ = 2
    assert list(equation2["Eq. 2 (paper)"]) == [2, 2] and list(equation2["⌈log N / log D⌉"]) == [2, 2]
    assert equation2["observed max"].to_dict() == {"2 KB": 2, "100 KB": 3}
    assert single.figure2.to_dict("records") == [{"nodes": 16, "degree": 6, "max_hop": 3, "label": "recorded"}]
    # a line of five: the publisher sends to its one neighbour, which is the only first hop
    summary = cascade.first_hops_summary.set_index("size_bytes")
    assert list(summary["publisher_sent_to count"]) == [2, 2]  # two measured messages per size
    for column in ("publisher_sent_to", "first_hop_receivers"):
        assert (summary[f"{column} min"] == 1).all() and (summary[f"{column} max"] == 1).all()
    assert list(single.first_hops_summary["publisher_sent_to count"]) == [6, 6]


def test_per_hop_and_table3(single, cascade):
    per_hop = single.per_hop[single.per_hop["size_bytes"] == 2000].set_index(["component", "hop"])["mean_ms"]
    publishes = pd.read_parquet(single.run_dirs[0] / "publishes.parquet")
    publishes = publishes[~publishes["warmup"]]
    assert per_hop[("L_g", 0)] == pytest.approx(((publishes["publish_ns"] - publishes["intent_ns"]) / 1e6).mean())
    assert per_hop[("L_v", 1)] == per_hop[("L_v", 2)] == 12.0  # rln.verification, nothing per byte
    assert per_hop[("total", 2)] == pytest.approx(measured_latency(single.run_dirs[0]).mean())
    assert single.table3.empty  # not a cascade
    table3 = cascade.table3[cascade.table3["size_bytes"] == 2000].set_index(["component", "from", "to"])
    # the paper's Table 3 at 2 KB, ms
    assert table3.loc[("L_g", "Singapore", ""), "paper_ms"] == 236 and table3.loc[("total", "Singapore", "Frankfurt"), "paper_ms"] == 477
    assert table3.loc[("L_v", "", "Bangalore"), "ours_ms"] == pytest.approx(7.16 + 22.47e-6 * 2000)  # 7.16 ms + 22.47 ns/byte
    last = measured_latency(cascade.run_dirs[0], hop=4)
    assert len(last) == 2 and table3.loc[("total", "Singapore", "Frankfurt"), "ours_ms"] == pytest.approx(last.mean())
    links = table3.xs("L_t", level="component")
    assert len(links) == 4 and links["paper_over_restart"].notna().all()
    assert table3.drop(index="L_t", level="component")["paper_over_restart"].isna().all()


def test_bandwidth_by_run_and_its_line(cascade, single):
    by_run = cascade.bandwidth_by_run
    assert list(by_run["size_bytes"]) == [2000, 500000] and list(by_run["messages_published"]) == [3, 3]
    assert list(by_run["payload_bytes"]) == [3 * 2000, 3 * 500000]
    # two runs: the line through them
    (x0, x1), (y0, y1) = by_run["payload_bytes"], by_run["net_bytes"]
    fit = cascade.bandwidth_fit
    assert fit["x"] == "payload_bytes"
    assert (fit["slope"], fit["intercept"], fit["r2"]) == pytest.approx(((y1 - y0) / (x1 - x0), y0 - (y1 - y0) / (x1 - x0) * x0, 1))
    assert single.bandwidth_by_run.empty and single.bandwidth_fit is None  # no packet capture


def test_sweep_points_are_the_mean_over_seeds_with_their_interval(sweep):
    points = sweep.sweep_points.set_index("d")
    for d in (2, 5):
        means = [measured_latency(run).mean() for run in sweep.run_dirs if run.name.startswith(f"d{d}-")]
        assert len(means) == 2
        assert points.loc[d, "latency_mean_ms"] == pytest.approx(sum(means) / 2)
        # t(0.975, 1) x s / sqrt(2), s = |a - b| / sqrt(2)
        assert points.loc[d, "latency_mean_ms ±"] == pytest.approx(T_975_1 * abs(means[0] - means[1]) / 2)


def test_run_checks_and_provenance_are_the_runs_own(single):
    checks = single.run_checks.set_index("run")
    for run in single.run_dirs:
        counts = json.loads((run / "validation.json").read_text())["counts"]
        wall = json.loads((run / "run_stats.json").read_text())["wall_seconds"]
        assert (checks.loc[run.name, "receipts"], checks.loc[run.name, "receipts_expected"]) == (counts["receipts"], 105)
        assert checks.loc[run.name, "passed"] and checks.loc[run.name, "wall_s"] == wall
    assert list(checks["size_bytes"]) == [2000, 100000]
    assert all(column in checks for column in ("check: delivery trees", "memory_measure", "peak_memory_gib"))
    assert list(single.provenance.columns) == [run.name for run in single.run_dirs]
    assert set(single.provenance.loc["study"]) == {"recorded"}


def test_beside_another_study_only_the_sizes_both_ran(single, cascade):
    compared = cascade.compared_with(single.receipts).set_index("statistic")
    assert set(compared["size_bytes"]) == {2000}  # the cascade ran 2 and 500 KB, the other 2 and 100 KB
    ours, other = measured_latency(cascade.run_dirs[0]).min(), measured_latency(single.run_dirs[0]).min()
    assert compared.loc["min", ["ours_ms", "other_ms", "ratio"]].tolist() == pytest.approx([ours, other, ours / other])
    assert cascade.compared_with(None).empty


def test_no_runs_no_results(single):
    with pytest.raises(ValueError, match="no runs"):
        StudyResults(single.study, [])


def test_each_result_is_computed_once(single):
    assert single.table5 is single.table5 and single.receipts is single.receipts
