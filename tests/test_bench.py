"""The benchmark's measures, on the recorded real runs, and how it records and compares them."""

import gzip
import json

import pandas as pd
import pytest
import yaml
from conftest import CONFIGS, OVERLAYS, RECORDED, drawn
from recorded import CASCADE_RUNS, RUN_2KB, parsed_copies

from waku_shadow import cli, layout
from waku_shadow.analyse import study_tables
from waku_shadow.cost import bench, cost_model
from waku_shadow.errors import RunError


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    (run,) = parsed_copies([RUN_2KB], tmp_path_factory.mktemp("bench"))
    return run


def test_gzip_sizes_read_the_trailer(tmp_path):
    (tmp_path / "a").mkdir()
    for name, text in (("a/x.log.gz", "x" * 5000), ("y.gz", "hello\n")):
        with gzip.open(tmp_path / name, "wt") as handle:
            handle.write(text)
    raw, packed = bench.gzip_sizes(tmp_path)
    assert raw == 5006
    assert packed == sum(p.stat().st_size for p in tmp_path.rglob("*.gz"))


def test_measure_a_recorded_run(run_dir):
    row = bench.measure(run_dir, label="recorded")
    stats = json.loads((run_dir / "run_stats.json").read_text())
    # 16 nodes, 1 warm-up + 3 x 2 messages every 2 s after 10 s, 5 s drain: 27 simulated seconds
    assert (row["nodes"], row["simulated_s"], row["status"], row["validated"]) == (16, 27.0, "completed", True)
    assert row["wall_s"] == stats["wall_seconds"]
    assert row["node_seconds_per_wall_second"] == pytest.approx(16 * 27 / stats["wall_seconds"])
    assert row["mib_per_node"] == pytest.approx(stats["peak_memory_bytes"] / 2**20 / 16)
    assert row["log_mib"] > 5 * row["log_mib_gz"] > 0
    assert "memory_at_peak" not in stats and pd.isna(row["shadow_mib_per_node"])  # recorded before the breakdown


def test_measure_reads_the_memory_breakdown(run_dir, tmp_path):
    broken_down = tmp_path / run_dir.name
    broken_down.mkdir()
    (broken_down / "config.yaml").write_text((run_dir / "config.yaml").read_text())
    stats = json.loads((run_dir / "run_stats.json").read_text())
    stats["memory_at_peak"] = {"wall_seconds": 3.0, "taken_bytes": 2**30, "shadow_rss_bytes": 32 * 2**20, "processes": 16,
                               "processes_anon_bytes": 160 * 2**20, "processes_file_bytes": 0, "shmem_bytes": 16 * 2**20}
    (broken_down / "run_stats.json").write_text(json.dumps(stats))
    row = bench.measure(broken_down, label="broken down")
    assert (row["shadow_mib_per_node"], row["process_private_mib_per_node"], row["shmem_mib_per_node"]) == (2, 10, 1)
    assert row["merged_mib_per_node"] == 0  # a breakdown from before page merging was recorded
    stats["memory_at_peak"]["merged_bytes"] = 64 * 2**20
    (broken_down / "run_stats.json").write_text(json.dumps(stats))
    assert bench.measure(broken_down, label="merged")["merged_mib_per_node"] == 4


def test_a_run_the_guard_stopped_is_measured_from_its_last_attempt(run_dir, tmp_path):
    stopped = layout.run_dir(tmp_path / "study", run_dir.name)
    stopped.mkdir(parents=True)
    (stopped / "config.yaml").write_text((run_dir / "config.yaml").read_text())
    # a line of the attempts log is a whole run_stats.json (runner.RunStats.write)
    attempt = {**json.loads((run_dir / layout.RUN_STATS).read_text()), "status": "stopped by memory guard",
               "wall_seconds": 10.0, "peak_memory_bytes": 2**30, "simulated_reached": "00:00:13.500"}
    attempts = layout.attempts(tmp_path / "study", run_dir.name)
    attempts.parent.mkdir(parents=True)
    attempts.write_text(json.dumps({**attempt, "wall_seconds": 1.0}) + "\n" + json.dumps(attempt) + "\n")
    row = bench.measure(stopped, label="stopped")
    assert (row["status"], row["simulated_s"], row["validated"], row["log_mib"]) == ("stopped by memory guard", 13.5, False, 0)
    assert row["node_seconds_per_wall_second"] == pytest.approx(16 * 13.5 / 10)


def test_two_rows_are_recorded_with_their_ratios(run_dir, tmp_path):
    first = bench.measure(run_dir, label="baseline")
    second = {**first, "label": "ours", "wall_s": first["wall_s"] / 2, "peak_memory_gib": first["peak_memory_gib"] * 0.75}
    path = bench.record([first, second], tmp_path, "20260101T000000Z")
    document = json.loads(path.read_text())
    assert path.name == "20260101T000000Z-baseline-vs-ours.json"
    assert document["ratios_second_over_first"]["wall_s"] == pytest.approx(0.5)
    assert document["ratios_second_over_first"]["peak_memory_gib"] == pytest.approx(0.75)
    bench.record([{**first, "a_new_measure": 1.5}], tmp_path, "20260101T000100Z")
    table = pd.read_csv(tmp_path / bench.RESULTS_TABLE)
    assert list(table["label"]) == ["baseline", "ours", "baseline"]
    assert table["a_new_measure"].isna().tolist() == [True, True, False]  # earlier rows keep their columns
    assert "second / first: wall_s 0.500" in bench.to_text([first, second])


def test_workflow_command_overlays_configs_and_runs_one_size(tmp_path):
    files = bench.config_files(f"{CONFIGS / 'paper.yaml'}+{OVERLAYS / 'baseline.yaml'}")
    command, run_dir = bench.workflow_command(files, "10 KB", tmp_path, cores=2)
    assert run_dir == tmp_path / "paper" / "runs" / "n1000-size10000B-seed1"
    given = command[command.index("--configfile") + 1:]
    assert given[:2] == list(map(str, files))
    assert yaml.safe_load(open(given[2])) == {"traffic": {"message_sizes": ["10000 B"]}, "resources": {"results_dir": str(tmp_path)}}
    assert str(run_dir / "validation.json") in command
    command, run_dir = bench.workflow_command(files, "2 KB", tmp_path, cores=2, nodes=250)
    assert run_dir.name == "n250-size2000B-seed1"
    assert yaml.safe_load(open(command[-1]))["network"] == {"nodes": 250}


def test_receipts_of_two_runs_are_compared_one_by_one(run_dir, tmp_path):
    same = bench.compare_receipts(run_dir, run_dir)
    assert (same["identical_share"], same["same_parent_share"], same["max_abs_difference_ms"]) == (1.0, 1.0, 0.0)
    shifted = tmp_path / "shifted"
    shifted.mkdir()
    receipts = pd.read_parquet(run_dir / "receipts.parquet")
    sends = pd.read_parquet(run_dir / "sends.parquet")
    late = receipts.index[:10]
    receipts.loc[late, "received_ns"] += 3_000_000
    receipts.to_parquet(shifted / "receipts.parquet")
    sends.iloc[1:].to_parquet(shifted / "sends.parquet")
    moved = bench.compare_receipts(run_dir, shifted)
    assert moved["identical_share"] == pytest.approx(1 - 10 / len(receipts))
    assert moved["max_abs_difference_ms"] == pytest.approx(3.0)
    assert moved["receipts_in_both"] == len(receipts)
    assert moved["copies_sent"] == [len(sends), len(sends) - 1]
    assert same["latency_ks"] == 0 and same["latency_ks_pvalue"] == 1
    text = bench.to_text([bench.measure(run_dir, "a"), bench.measure(run_dir, "b")], moved)
    assert f"receipts: {1 - 10 / len(receipts):.1%} identical, 100.0% from the same parent" in text
    assert "within chance" in text  # ten receipts 3 ms late do not move the distribution
    slower = tmp_path / "slower"
    slower.mkdir()
    receipts.assign(latency_ms=receipts["latency_ms"] * 1.5).to_parquet(slower / "receipts.parquet")
    sends.to_parquet(slower / "sends.parquet")
    text = bench.to_text([bench.measure(run_dir, "a"), bench.measure(run_dir, "b")], bench.compare_receipts(run_dir, slower))
    assert "a different distribution" in text


def test_two_runs_with_a_packet_capture_are_compared_by_their_bytes_too(run_dir, tmp_path):
    (captured,) = parsed_copies([CASCADE_RUNS[0]], tmp_path)
    assert cli.main(["traffic", "--run-dir", str(captured)]) == 0
    compared = bench.compare_receipts(captured, captured)
    expected = study_tables.run_metrics(captured)["net_bytes_per_message"]
    assert compared["bytes_per_message"] == [expected, expected] and expected > 0
    text = bench.to_text([bench.measure(captured, "a"), bench.measure(captured, "b")], compared)
    assert f"bytes on the wire per message: {expected / 1e6:.2f} -> {expected / 1e6:.2f} MB" in text
    uncaptured = bench.to_text([bench.measure(run_dir, "a")] * 2, bench.compare_receipts(run_dir, run_dir))
    assert "bytes on the wire: not measured (a run without shadow.traffic_capture)" in uncaptured
    # with a capture the benchmark asks the workflow for the traffic tables as well
    files = bench.config_files(str(RECORDED / "recorded-cascade.yaml"))
    command, run = bench.workflow_command(files, "2 KB", tmp_path / "results", cores=2)
    assert str(run / layout.AMPLIFICATION) in command


def test_scaling_fits_a_power_law_for_time_and_a_line_for_memory():
    nodes = [100, 200, 400, 800]
    rows = [{"label": "paper", "size_bytes": 10000, "nodes": n, "status": "completed", "wall_s": 0.5 * n**1.2,
             "peak_memory_gib": 1.0 + 12 * n / 1024, "simulated_s": 85.0, "node_seconds_per_wall_second": 1.0,
             "mib_per_node": 1.0} for n in nodes]
    rows.append({**rows[-1], "nodes": 1600, "status": "stopped by memory guard", "wall_s": 10.0})
    rows.append({**rows[0], "label": "paper+baseline", "wall_s": 1e6})
    runs, law = bench.scaling(pd.DataFrame(rows), "paper", 10000)
    assert list(runs["nodes"]) == [100, 200, 400, 800, 1600]
    assert law["wall_exponent"] == pytest.approx(1.2) and law["wall_coefficient_s"] == pytest.approx(0.5)
    assert law["memory_base_gib"] == pytest.approx(1.0) and law["memory_per_node_mib"] == pytest.approx(12.0)
    assert bench.predict(law, 10_000)["peak_memory_gib"] == pytest.approx(1.0 + 120_000 / 1024)
    # the cost model's one "largest N": (25 - 1) GiB / 12 MiB
    assert cost_model.nodes_within(25.0, law["memory_base_gib"], law["memory_per_node_mib"] / 1024) == 2048
    curve = bench.fitted_curve(law, runs, points=3)
    assert list(curve["nodes"]) == pytest.approx([100, 930, 1760]) and curve["wall_s"].iloc[0] == pytest.approx(0.5 * 100**1.2)


def test_size_scaling_fits_lines_against_message_size():
    sizes = [2_000, 10_000, 25_000, 100_000]
    rows = [{"label": "paper", "size_bytes": s, "nodes": 1000, "status": "completed", "wall_s": 200 + 0.5 * s / 1000,
             "peak_memory_gib": 8.0 + 0.04 * s / 1000, "simulated_s": 85.0, "node_seconds_per_wall_second": 1.0,
             "mib_per_node": 1.0} for s in sizes]
    rows.append({**rows[-1], "size_bytes": 500_000, "status": "stopped by memory guard", "peak_memory_gib": 21.0, "simulated_s": 29.3})
    rows.append({**rows[0], "nodes": 500, "wall_s": 1e6})
    runs, law = bench.size_scaling(pd.DataFrame(rows), "paper", 1000)
    assert list(runs["size_bytes"]) == sizes + [500_000]
    assert law["wall_base_s"] == pytest.approx(200) and law["wall_per_kb_s"] == pytest.approx(0.5)
    assert law["memory_base_gib"] == pytest.approx(8.0) and law["memory_per_kb_mib"] == pytest.approx(0.04 * 1024)
    predicted = bench.predict(law, 500_000)
    assert (predicted["size_bytes"], predicted["peak_memory_gib"]) == (500_000, pytest.approx(28.0))


def test_scaling_needs_two_completed_points():
    row = {"label": "paper", "size_bytes": 10000, "nodes": 100, "status": "completed", "wall_s": 1.0, "peak_memory_gib": 1.0,
           "simulated_s": 85.0, "node_seconds_per_wall_second": 1.0, "mib_per_node": 1.0}
    with pytest.raises(RunError, match="at least two values of N"):
        bench.scaling(pd.DataFrame([row]), "paper", 10000)
    stopped = {**row, "size_bytes": 500_000, "status": "stopped by memory guard"}
    with pytest.raises(RunError, match="at least two message sizes"):
        bench.size_scaling(pd.DataFrame([row, stopped]), "paper", 100)


def test_bench_scaling_writes_table_laws_and_figure_against_nodes_and_size(tmp_path):
    from waku_shadow import cli

    base = {"label": "paper", "status": "completed", "simulated_s": 85.0, "node_seconds_per_wall_second": 1.0, "mib_per_node": 1.0}
    rows = [{**base, "nodes": n, "size_bytes": 10_000, "wall_s": 0.25 * n, "peak_memory_gib": 8 * n / 1024} for n in (100, 1000)]
    rows += [{**base, "nodes": 1000, "size_bytes": s, "wall_s": 240 + s / 1000,
              "peak_memory_gib": 7.8125 + (s - 10_000) / 10_000} for s in (2_000, 100_000)]  # on the line through the 10 KB run
    rows.append({**base, "nodes": 1000, "size_bytes": 500_000, "status": "stopped by memory guard", "wall_s": 233.0,
                 "peak_memory_gib": 20.9, "simulated_s": 29.3})
    pd.DataFrame(rows).to_csv(tmp_path / bench.RESULTS_TABLE, index=False)

    assert cli.main(["bench-scaling", "--label", "paper", "--size", "10 KB", "--out", str(tmp_path), "--memory-gib", "22"]) == 0
    by_nodes = json.loads((tmp_path / "scaling-paper-10000B.json").read_text())
    assert by_nodes["largest_n_in_gib"] == {"22.0": 2816}  # 22 GiB / 8 MiB
    assert list(pd.read_csv(tmp_path / "scaling-paper-10000B.csv")["nodes"]) == [100, 1000]

    assert cli.main(["bench-scaling", "--label", "paper", "--against", "size", "--nodes", "1000", "--out", str(tmp_path)]) == 0
    by_size = json.loads((tmp_path / "scaling-paper-n1000-by-size.json").read_text())
    (predicted,) = by_size["predictions"]  # only where a run was stopped: what the line says it would have needed
    assert predicted["size_bytes"] == 500_000 and predicted["peak_memory_gib"] == pytest.approx(7.8125 + 49)
    table = pd.read_csv(tmp_path / "scaling-paper-n1000-by-size.csv")
    assert list(table["size_bytes"]) == [2_000, 10_000, 100_000, 500_000]
    assert drawn(tmp_path / "scaling-paper-10000B.png") and drawn(tmp_path / "scaling-paper-n1000-by-size.png")
