"""The benchmark's measures, on the recorded real runs, and how it records and compares them."""

import gzip
import json

import pandas as pd
import pytest
import yaml

from waku_shadow import bench
from waku_shadow.errors import RunError

from conftest import CONFIGS
from recorded import RUN_2KB, parsed_copies


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


def test_a_run_the_guard_stopped_is_measured_from_its_last_attempt(run_dir, tmp_path):
    stopped = tmp_path / run_dir.name
    stopped.mkdir()
    (stopped / "config.yaml").write_text((run_dir / "config.yaml").read_text())
    attempt = {"status": "stopped by memory guard", "wall_seconds": 10.0, "peak_memory_bytes": 2**30,
               "simulated_reached": "00:00:13.500"}
    (stopped / "simulation_attempts.jsonl").write_text(json.dumps({**attempt, "wall_seconds": 1.0}) + "\n" + json.dumps(attempt) + "\n")
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
    files = bench.config_files(f"{CONFIGS / 'paper.yaml'}+{CONFIGS / 'baseline.yaml'}")
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
    late = receipts.index[:10]
    receipts.loc[late, "received_ns"] += 3_000_000
    receipts.to_parquet(shifted / "receipts.parquet")
    moved = bench.compare_receipts(run_dir, shifted)
    assert moved["identical_share"] == pytest.approx(1 - 10 / len(receipts))
    assert moved["max_abs_difference_ms"] == pytest.approx(3.0)
    assert moved["receipts_in_both"] == len(receipts)
    text = bench.to_text([bench.measure(run_dir, "a"), bench.measure(run_dir, "b")], moved)
    assert f"receipts: {1 - 10 / len(receipts):.1%} identical, 100.0% from the same parent" in text


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
    assert bench.largest_fitting(law, 25.0) == 2048  # (25 - 1) GiB / 12 MiB


def test_scaling_needs_two_completed_sizes_of_network():
    row = {"label": "paper", "size_bytes": 10000, "nodes": 100, "status": "completed", "wall_s": 1.0, "peak_memory_gib": 1.0}
    with pytest.raises(RunError, match="at least two values of N"):
        bench.scaling(pd.DataFrame([row]), "paper", 10000)
