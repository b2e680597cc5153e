"""The study report notebook, executed on the recorded real runs as the workflow executes it."""

import json
import shutil

import nbformat
import pandas as pd
import pytest
from conftest import RECORDED, REPO
from recorded import CASCADE_RUNS, RUNS, ecdf_distances, parsed_copies, raw_first_hops, raw_latencies_ms, raw_records

from waku_shadow import cli
from waku_shadow.paper import compare, published


SWEEP_RUNS = sorted((RECORDED / "recorded-sweep").iterdir())


def summarized_study(base, name, recorded_runs, traffic=False):
    """A study folder as the workflow leaves it before the report: parsed, validated, (with
    packet captures) traffic counted, summarized."""
    study_dir = base / name
    runs = parsed_copies(recorded_runs, study_dir / "runs")
    for run in runs if traffic else []:
        assert cli.main(["traffic", "--run-dir", str(run)]) == 0
    shutil.copy(RECORDED / f"{name}.yaml", study_dir / "study.yaml")
    assert cli.main(["summarize", "--study-config", str(study_dir / "study.yaml"), "--out", str(study_dir),
                     "--runs", *map(str, runs)]) == 0
    return study_dir, runs


def report(study_dir, runs, *extra):
    """The analyse rule's command, then the report rule's, as the workflow runs them."""
    assert cli.main(["analyse", "--study-dir", str(study_dir), "--runs", *map(str, runs), *extra]) == 0
    assert cli.main([
        "report", "--notebook", str(REPO / "analysis" / "study_report.ipynb"), "--study-dir", str(study_dir),
        "--out-notebook", str(study_dir / "report.ipynb"), "--out-html", str(study_dir / "report.html"), *extra,
    ]) == 0
    executed = nbformat.read(study_dir / "report.ipynb", as_version=4)
    assert not [o for c in executed.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    return (study_dir / "report.html").read_text()


def test_report_notebook_renders_every_section(tmp_path):
    study_dir, runs = summarized_study(tmp_path, "recorded", RUNS)
    html = report(study_dir, runs, "--compare-with", str(tmp_path / "never-run"))

    html = (study_dir / "report.html").read_text()
    for section in ("Figure 3", "Whole distributions beside the paper", "Figure 2", "Delivery trees",
                    "Equation 1 along every receipt", "Per-hop decomposition", "Validation and cost", "Provenance"):
        assert section in html, section
    assert "Not a cascade over locations" in html and "No packet capture in this study" in html
    assert "never-run has no results yet, or no message size in common with this study: run its study first" in html
    # 16 nodes are not the paper's network: no ratios, no distances, and the report says why
    assert "this study does not run the paper's network (16 nodes, not 1000; 4 dials per node, not 25;" in html
    assert "Beside the paper's Table 5" not in html
    # figures 3 and 2, hop histogram, residuals: embedded, so the file stands alone
    assert html.count("<img alt=") == 4 and html.count("src=\"data:image/png;base64") == 4
    analysis = study_dir / "analysis"
    residuals = pd.read_csv(analysis / "residuals_by_size.csv")
    assert len(residuals) == 2 * 3 and (residuals["receipts"] == 90).all()  # 2 sizes x 3 models, 15 x 6 receipts
    assert pd.read_csv(analysis / "residuals_by_hop.csv").groupby(["size_bytes", "model"])["receipts"].sum().eq(90).all()
    first_hops = pd.read_csv(analysis / "first_hops.csv")
    raw = {**raw_first_hops(RUNS[0]), **raw_first_hops(RUNS[1])}
    assert dict(zip(first_hops["msg_hash"], zip(first_hops["publisher_sent_to"], first_hops["first_hop_receivers"]))) == raw
    histogram = pd.read_csv(analysis / "hop_histogram.csv").set_index(["size_bytes", "hop"])["receipts"]
    measured = first_hops[~first_hops["warmup"]]
    for size in (2000, 100000):
        assert histogram[size].sum() == 90
        assert histogram[(size, 1)] == measured.loc[measured["size_bytes"] == size, "first_hop_receivers"].sum()
    per_hop = pd.read_csv(analysis / "per_hop.csv").set_index(["size_bytes", "component", "hop"])["mean_ms"]
    assert (per_hop.xs("L_v", level="component") == 12.0).all()  # the study's verification delay
    for run, size in zip(RUNS, (2000, 100000)):
        assert per_hop[(size, "L_g", 0)] == pytest.approx(raw_proof_generation_ms(run))


def raw_proof_generation_ms(run) -> float:
    """The mean time from publish intent to the publish of a run's measured messages, in its raw logs."""
    warmup = set(pd.read_csv(run / "schedule.csv").query("warmup")["msg_hash"])
    intent = {r["msg_hash"]: r["intentTime"] for _, r in raw_records(run, "publish intent")}
    gaps = [(r["receivedTime"] - intent[r["msg_hash"]]) / 1e6 for _, r in raw_records(run, "received relay message")
            if r["from_peer_id"] == "rest" and r["msg_hash"] not in warmup]
    return sum(gaps) / len(gaps)


def test_report_sets_whole_distributions_beside_the_papers(tmp_path, recorded_stands_for_the_paper):
    study_dir, runs = summarized_study(tmp_path, "recorded", RUNS)
    markdown = (study_dir / "report.md").read_text()
    assert "Traffic: 3 publishers, the reading of the paper's text (\"ten nodes are designated as publishers\")" in markdown
    assert "## Beside the paper's raw Shadow latencies (whole distributions)" in markdown
    assert "| size | KS | KS, ours 1 ms earlier / later | Wasserstein (ms) | ours n | paper n |" in markdown
    html = report(study_dir, runs)
    assert "Traffic: 3 publishers, the reading of the paper's text" in html
    analysis = study_dir / "analysis"
    distances = pd.read_csv(analysis / "paper_distances.csv").set_index("size_bytes")
    by_seed = pd.read_csv(analysis / "paper_distances_by_seed.csv")
    assert list(distances.index) == [2000, 100000]  # the recorded sizes the paper simulated
    assert list(by_seed["seed"]) == [11, 11] and (distances["paper_n"] == 8991).all() and (distances["ours_n"] == 90).all()
    receipts = pd.read_parquet(study_dir / "receipts.parquet")
    theirs = published.shadow_receipts()
    for size, row in distances.iterrows():
        ours = receipts.query("size_bytes == @size and not warmup")["latency_ms"].to_numpy()
        paper = theirs.query("size_bytes == @size and not warmup")["latency_ms"].to_numpy()
        ks, wasserstein = ecdf_distances(ours, paper)
        assert row["ks"] == pytest.approx(ks) and row["wasserstein_ms"] == pytest.approx(wasserstein)
        earlier, later = (ecdf_distances(ours + shift, paper)[0] for shift in (-1, 1))
        assert row["ks_minus_1ms"] == pytest.approx(earlier) and row["ks_plus_1ms"] == pytest.approx(later)
        assert f"| {size // 1000} KB | {ks:.3f} | {earlier:.3f} / {later:.3f} | {wasserstein:.1f} | 90 | 8991 |" in markdown
    shares = pd.read_csv(analysis / "paper_hop_shares.csv")
    sources = shares.groupby("size_bytes")["source"].unique().map(set)
    assert sources[2000] == set(compare.HOP_SOURCES)
    assert sources[100000] == {"ours, from delivery trees"}  # neither latency distribution falls into steps at 100 KB
    ours_2kb = shares.query("size_bytes == 2000 and source != 'paper, from latency steps'")
    assert ours_2kb.pivot(index="hop", columns="source", values="receipts").eq(pd.Series({1: 38, 2: 52}), axis=0).all().all()
    assert (analysis / "paper_distributions.png").stat().st_size > 50_000


def test_cascade_report_shows_table3_bandwidth_and_the_compared_study(tmp_path):
    summarized_study(tmp_path, "recorded", RUNS)
    study_dir, runs = summarized_study(tmp_path, "recorded-cascade", CASCADE_RUNS, traffic=True)
    html = report(study_dir, runs, "--compare-with", str(tmp_path / "recorded"))
    cost = pd.read_csv(study_dir / "analysis" / "bandwidth_by_run.csv")
    assert list(cost["size_bytes"]) == [2000, 500000] and "Net bytes = " in html
    fit = json.loads((study_dir / "analysis" / "bandwidth_fit.json").read_text())
    # two runs: the line through them, net bytes against the payload each published
    slope = (cost["net_bytes"].iloc[1] - cost["net_bytes"].iloc[0]) / (cost["payload_bytes"].iloc[1] - cost["payload_bytes"].iloc[0])
    assert fit["x"] == "payload_bytes"
    assert (fit["slope"], fit["intercept"]) == pytest.approx((slope, cost["net_bytes"].iloc[0] - slope * cost["payload_bytes"].iloc[0]))
    assert "No sweep in this study" in html
    assert "Singapore → Bangalore" in html and "New York → Frankfurt" in html
    compared = pd.read_csv(study_dir / "analysis" / "compared_with_recorded.csv")
    assert set(compared["size_bytes"]) == {2000}  # the only size both studies ran
    table3 = pd.read_csv(study_dir / "analysis" / "table3_comparison.csv").query("component == 'total'").set_index("size_bytes")
    assert table3["paper_ms"].to_dict() == {2000: 477, 500000: 2468}  # Table 3's totals, Singapore to Frankfurt
    for run, size in zip(CASCADE_RUNS, (2000, 500000)):  # ours: the mean latency at Frankfurt (node0004) in the raw logs
        at_frankfurt = [ms for (_, receiver), ms in raw_latencies_ms(run, measured_only=True).items() if receiver == "node0004"]
        assert table3.loc[size, "ours_ms"] == pytest.approx(sum(at_frankfurt) / len(at_frankfurt))
    # figures 3 and 2, hop histogram, residuals, bandwidth and the comparison; a cascade is not the paper's network
    assert html.count("src=\"data:image/png;base64") == 6


def test_sweep_report_shows_every_point_and_the_trade_off(tmp_path):
    study_dir, runs = summarized_study(tmp_path, "recorded-sweep", SWEEP_RUNS, traffic=True)
    summary = pd.read_csv(study_dir / "latency_summary.csv")
    assert list(summary["d"]) == [2, 5] and (summary["count"] == 72).all()  # 2 seeds x 36 receipts
    markdown = (study_dir / "report.md").read_text()
    assert "Sweep of gossipsub.d (d_low and d_high follow it unless set) over 2, 5" in markdown
    assert "| d | size | latency_mean_ms |" in markdown and "![sweep](figures/sweep.png)" in markdown
    assert "Beside the paper's single-host study" not in markdown  # Table 5 is per size, not per point
    html = report(study_dir, runs)
    assert "this study does not run the paper's network (10 nodes, not 1000;" in html
    assert not (study_dir / "analysis" / "paper_distances.csv").exists()
    assert "Sweep of d" not in html  # the figure's title is in the image, not the page
    assert "No sweep in this study" not in html and "no line to fit (a D sweep is under Sweep)" in html
    histogram = pd.read_csv(study_dir / "analysis" / "hop_histogram.csv")
    assert set(histogram["d"]) == {2, 5}
    per_hop = pd.read_csv(study_dir / "analysis" / "per_hop.csv")
    assert set(per_hop["d"]) == {2, 5}
    # figures 3 and 2, hop histogram, residuals and the sweep
    assert html.count("src=\"data:image/png;base64") == 5
