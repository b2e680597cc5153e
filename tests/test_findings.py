"""The docs' generated tables, written from recorded real runs and the committed benchmark records."""

import csv
import json
import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import RECORDED, REPO
from recorded import CASCADE_RUNS, RUN_2KB, RUN_100KB, RUNS, ecdf_distances, parsed_copies, raw_first_hops, raw_latencies_ms
from test_paper_page import study_in

from waku_shadow import cli, layout
from waku_shadow.analyse import study_tables
from waku_shadow.errors import ConfigError
from waku_shadow.report import docs_tables, summaries, summary_figures, summary_tables

DOC = """# Findings

Intro kept.

<!-- generated: table5 -->
old table
<!-- /generated -->

<!-- generated: table3 -->
old cascade table
<!-- /generated -->

<!-- generated: runs -->
<!-- /generated -->

<!-- generated: scaling -->
<!-- /generated -->
"""


def measured_latencies(run) -> np.ndarray:
    return np.array(list(raw_latencies_ms(run, measured_only=True).values()))


def papers_latencies(size_kb: int) -> np.ndarray:
    """The paper's raw single-host latencies of a size, read directly; seq 0 is its warm-up."""
    receipts = pd.read_csv(REPO / "data" / "paper" / "shadow_latency_receipts.csv.gz")
    return receipts.query("size_kb == @size_kb and seq != 0")["latency_ms"].to_numpy()


def table5_row(size_kb: int, run, paper: tuple[int, int, int, int]) -> str:
    """The Table 5 row of a size: paper / ours (ours / paper) for min, mean, p95 and max."""
    latencies = measured_latencies(run)
    ours = (latencies.min(), latencies.mean(), np.percentile(latencies, 95), latencies.max())
    return f"| {size_kb} KB | " + " | ".join(f"{p:.0f} / {o:.0f} ({o / p:.2f})" for p, o in zip(paper, ours)) + " |"


@pytest.fixture
def recorded_results(tmp_path):
    results = tmp_path / "results"
    study = study_in("recorded", results)
    parsed_copies(RUNS, results / study.name / layout.RUNS)
    (results / study.name / layout.STUDY_CONFIG).write_text((REPO / "tests/data/recorded.yaml").read_text())
    return results


@pytest.fixture
def results(recorded_results, recorded_stands_for_the_paper):
    """The recorded results, their network standing in for the paper's."""
    return recorded_results


def test_tables_come_from_the_runs_and_blocks_without_results_are_kept(results, tmp_path, monkeypatch):
    doc = tmp_path / "findings.md"
    doc.write_text(DOC)
    figures = tmp_path / "figures"
    assert cli.main(["docs-tables", str(doc), "--results", str(results), "--summaries", str(tmp_path / "summaries"), "--configs", str(RECORDED), "--bench", str(REPO / "bench"), "--figures", str(figures)]) == 0
    # the figures come from the summary alone, and the same summary draws the same files
    drawn = {path.name: path.read_bytes() for path in figures.iterdir()}
    assert sorted(drawn) == ["recorded-latency.png", "recorded-latency.svg"]
    summary = summaries.read(tmp_path / "summaries" / "recorded")
    assert summary.latency_histogram["receipts"].sum() == sum(len(measured_latencies(run)) for run in RUNS)
    summary_figures.write({"recorded": summary}, figures)
    assert {path.name: path.read_bytes() for path in figures.iterdir()} == drawn
    dotted = summary_figures.write({"recorded-v0.37.1-beta": summary}, tmp_path / "dotted")  # a tag's dots stay in the name
    assert sorted(path.name for path in dotted) == ["recorded-v0.37.1-beta-latency.png", "recorded-v0.37.1-beta-latency.svg"]
    text = doc.read_text()
    assert "Intro kept." in text and "old table" not in text
    assert "**recorded** (data/recorded.yaml; n16-size2000B-seed11, n16-size100000B-seed11):" in text
    # Table 5's single-host min, mean, p95 and max beside ours, from the raw logs
    assert table5_row(2, RUN_2KB, (356, 497, 597, 604)) in text
    assert table5_row(100, RUN_100KB, (439, 900, 1076, 1221)) in text
    ks = [ecdf_distances(measured_latencies(run), papers_latencies(size_kb))[0] for run, size_kb in ((RUN_2KB, 2), (RUN_100KB, 100))]
    distances = docs_tables.tables(results, REPO / "bench", configs_dir=RECORDED)["distances"]
    assert f"| 2 KB | {ks[0]:.3f} |" in distances and f"| 100 KB | {ks[1]:.3f} |" in distances
    assert "old cascade table" in text  # no cascade study in these results
    assert "**recorded** (data/recorded.yaml):" in text
    for run in RUNS:
        assert f"| {run.name} |" in text
    assert "scaling-paper-10000B" in text  # bench/scaling-*.json
    again, kept = docs_tables.fill(text, docs_tables.tables(results, REPO / "bench", configs_dir=RECORDED), "doc")
    assert again == text and kept == ["table3"]


def test_a_cascade_fills_table3_and_a_study_without_results_here_keeps_its_section(tmp_path):
    results = tmp_path / "results"
    study = study_in("recorded-cascade", results)
    parsed_copies(CASCADE_RUNS, results / study.name / layout.RUNS)
    (results / study.name / layout.STUDY_CONFIG).write_text((REPO / "tests/data/recorded-cascade.yaml").read_text())
    # no configs: its recording keeps no packet capture, which a summary's bandwidth columns would need
    generated = docs_tables.tables(results, tmp_path, configs_dir=tmp_path)
    table = generated["table3"]["recorded-cascade"]
    assert table.startswith("**recorded-cascade** (TCP slow start after idle off;")
    assert "| L_t |" in table
    doc = ("<!-- generated: table3 -->\n**another** (n5-size2000B-seed1):\n\n| L_t | 1 |\n\n"
           "**recorded-cascade** (stale):\n\n| stale row |\n<!-- /generated -->\n")
    text, kept = docs_tables.fill(doc, generated, "doc")
    assert kept == ["table3: another"]
    assert "**another** (n5-size2000B-seed1):\n\n| L_t | 1 |" in text  # another machine's study, as it was
    assert "stale row" not in text and "**recorded-cascade** (TCP" in text
    assert text.index("**another**") < text.index("**recorded-cascade**")  # the block's order is kept
    assert docs_tables.fill(text, generated, "doc")[0] == text


def test_the_paper_networks_tables_come_from_the_summaries_alone(results, tmp_path):
    """The tables of the paper's network are written from summaries/: the run's summary is written
    first, a section with no summary goes, and with the results gone the summaries rewrite the doc
    byte for byte."""
    doc = tmp_path / "paper.md"
    doc.write_text("<!-- generated: table5 -->\n**gone** (stale):\n\n| stale row |\n<!-- /generated -->\n\n"
                   "<!-- generated: distances -->\n<!-- /generated -->\n")
    summaries_dir = tmp_path / "summaries"
    text, kept = docs_tables.fill(doc.read_text(), docs_tables.tables(results, REPO / "bench", summaries_dir, RECORDED),
                                  str(doc))
    assert kept == [] and "stale row" not in text and "**gone**" not in text
    provenance = json.loads((summaries_dir / "recorded" / "provenance.json").read_text())
    assert provenance["config"] == "data/recorded.yaml" and provenance["seeds"] == [11]
    assert provenance["runs"] == [run.name for run in RUNS] and provenance["nwaku"]["nwaku_tag"] == "v0.36.0"
    no_results = tmp_path / "elsewhere" / "results"
    no_results.mkdir(parents=True)
    again, _ = docs_tables.fill(text, docs_tables.tables(no_results, REPO / "bench", summaries_dir, RECORDED), str(doc))
    assert again == text


def test_a_study_with_only_some_of_its_runs_here_keeps_its_summary(results, tmp_path, capsys):
    summaries_dir = tmp_path / "summaries"
    docs_tables.tables(results, REPO / "bench", summaries_dir, RECORDED)
    written = {path.name: path.read_bytes() for path in (summaries_dir / "recorded").iterdir()}
    shutil.rmtree(results / "recorded" / layout.RUNS / RUNS[0].name)
    docs_tables.tables(results, REPO / "bench", summaries_dir, RECORDED)
    assert {path.name: path.read_bytes() for path in (summaries_dir / "recorded").iterdir()} == written
    assert "recorded: 1 of its 2 runs are validated here; its summary is left as it was" in capsys.readouterr().err


def test_a_summary_of_an_earlier_waku_shadow_is_refused_by_name(results, tmp_path):
    summaries_dir = tmp_path / "summaries"
    docs_tables.tables(results, REPO / "bench", summaries_dir, RECORDED)
    (summaries_dir / "recorded" / "run_metrics.csv").unlink()
    with pytest.raises(ConfigError, match=r"summaries/recorded: written by an earlier waku-shadow \(no run_metrics.csv\)"):
        summaries.read(summaries_dir / "recorded")


def test_a_study_without_a_config_is_not_summarised(results, tmp_path):
    with pytest.raises(ConfigError, match="study 'recorded' has no config under"):
        docs_tables.tables(results, REPO / "bench", tmp_path / "summaries", configs_dir=tmp_path)


def test_the_headline_must_be_of_the_default_build(results, tmp_path):
    summaries_dir = tmp_path / "summaries"
    docs_tables.tables(results, REPO / "bench", summaries_dir, RECORDED)
    summarised = {summary_tables.HEADLINE_STUDY: summaries.read(summaries_dir / "recorded")}
    with pytest.raises(ConfigError, match="its runs are of nwaku v0.36.0 .* not of the default build"):
        summary_tables.headline(summarised, summary_tables.default_nwaku_build())
    recorded_build = {key: summarised[summary_tables.HEADLINE_STUDY].nwaku[key] for key in ("nwaku_tag", "patch_set")}
    block = summary_tables.headline(summarised, recorded_build)
    assert block.startswith("**recorded** (data/recorded.yaml, seed 11; nwaku v0.36.0, patch set 145ae3193797):")
    assert "| 2 KB | 1 | 356 / " in block and "KS, ours 1 ms earlier / later" in block


def test_the_paper_rounds_table_is_written_whole_from_the_summaries(results):
    """One table holds every summarised study's distances from both rounds; a study with no summary goes."""
    doc = ("<!-- generated: paper-rounds -->\nold evidence\n\n| study | size | seeds | KS |\n|---|---|---:|---:|\n"
           "| `zebra` | 2 KB | 3 | 0.1 |\n| `recorded` | 2 KB | 1 | stale |\n<!-- /generated -->\n")
    text, kept = docs_tables.fill(doc, docs_tables.tables(results, REPO / "bench", configs_dir=RECORDED), "doc")
    assert kept == [] and "old evidence" not in text and "| final | 2 KB | 356 |" in text
    assert "stale" not in text and "zebra" not in text
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert [row.split(" | ")[1] for row in rows] == ["2 KB", "100 KB"] and all(row.startswith("| `recorded` |") for row in rows)


def test_an_unknown_block_is_named(results, tmp_path):
    doc = tmp_path / "cost.md"
    doc.write_text("<!-- generated: tabel5 -->\n<!-- /generated -->\n")
    assert cli.main(["docs-tables", str(doc), "--results", str(results), "--summaries", str(tmp_path / "summaries"), "--configs", str(RECORDED), "--figures", str(tmp_path / "figures")]) == 1
    assert "tabel5" in doc.read_text()


def test_only_the_named_tables_are_written(results, tmp_path):
    doc = tmp_path / "cost.md"
    doc.write_text("<!-- generated: runs -->\nold runs\n<!-- /generated -->\n<!-- generated: bench -->\nold bench\n<!-- /generated -->\n")
    assert cli.main(["docs-tables", str(doc), "--results", str(results), "--summaries", str(tmp_path / "summaries"), "--configs", str(RECORDED), "--bench", str(REPO / "bench"), "--only", "bench"]) == 0
    text = doc.read_text()
    assert "old runs" in text and "old bench" not in text and "| started (UTC) |" in text
    assert cli.main(["docs-tables", str(doc), "--results", str(results), "--summaries", str(tmp_path / "summaries"), "--configs", str(RECORDED), "--only", "bnech"]) == 1


def test_the_paper_rounds_table_is_kept_without_a_study_of_the_papers_network(recorded_results):
    assert docs_tables.tables(recorded_results, REPO / "bench", configs_dir=RECORDED)["paper-rounds"] is None  # 16 nodes, not the paper's 1000


def test_table5_is_only_of_the_papers_network(recorded_results):
    assert docs_tables.tables(recorded_results, recorded_results, configs_dir=RECORDED)["table5"] is None  # 16 nodes, not the paper's 1000


def test_a_studys_simulations_say_how_they_shared_the_machine():
    overlapping = pd.DataFrame({"started_utc": ["2026-11-25T03:00:00.000+00:00", "2026-11-25T03:00:05.000+00:00"],
                                "wall_s": [10.0, 10.0]})
    assert summary_tables.simulation_span(overlapping) == (
        "2 simulations, 20 s of run wall time in 15 s from the first start to the last finish (1.3 at once on average)")
    recorded_before = pd.DataFrame({"started_utc": [None], "wall_s": [3.0]})
    assert summary_tables.simulation_span(pd.concat([overlapping, recorded_before], ignore_index=True)) is None


def test_the_paper_studys_cost_per_size_beside_the_largest_n_that_fits(results, tmp_path, monkeypatch):
    bench = tmp_path / "bench"
    bench.mkdir()
    # peak memory = 0.5 GiB + N x (5 MiB + 0.05 MiB x KB)
    (bench / "cost-law.json").write_text(json.dumps({
        "base_gib": 0.5, "idle_mib_per_node": 5.0, "mib_per_node_per_kb": 0.05, "wall_us_per_node_second": 3000.0,
        "wall_us_per_node_second_per_kb": 20.0, "build": "v0.37.1-beta-orc-malloc", "cores": 2, "runs": ["a", "b", "c"]}))
    block = docs_tables.sections(docs_tables.tables(results, bench, configs_dir=RECORDED)["paper-cost"])["recorded"].rstrip()
    assert block.startswith("**recorded** (2 validated runs; ")
    assert "| size | runs | wall time | peak memory | largest N here (22 GiB) | largest N in 250 GiB |" in block
    # wall time and peak memory as the recorded run_stats.json say: 1.503 s, 219 230 208 B (2 KB); 3.506 s,
    # 217 460 736 B (100 KB). Largest N: (22 - 0.5) GiB x 1024 / per node, (250 - 0.5) GiB x 1024 / per node;
    # per node 5 + 0.05 x 2 = 5.1 MiB at 2 KB (4316.9 and 50 095.7), 5 + 0.05 x 100 = 10 MiB at 100 KB (2201.6
    # and 25 548.8)
    assert block.splitlines()[-2:] == ["| 2 KB | 1 | 2 s | 0.2 GiB (machine) | 4,316 | 50,095 |",
                                       "| 100 KB | 1 | 4 s | 0.2 GiB (machine) | 2,201 | 25,548 |"]
    without_law = docs_tables.tables(results, results, tmp_path / "summaries", configs_dir=RECORDED)["paper-cost"]
    assert without_law.splitlines()[2] == "| size | runs | wall time | peak memory |"


def test_the_papers_first_latency_group_counts_its_publishers_direct_peers():
    # the paper's 2 KB receipts fall into groups: 356-366 ms, then from 436 ms; 25 KB: 432-545, then from 589
    for size_kb, first_group_ends in ((2, 400), (25, 570)):
        latencies = papers_latencies(size_kb)
        expected = (latencies < first_group_ends).sum() / 9  # nine measured messages
        assert summary_tables.paper_first_group(size_kb * 1000) == expected
    assert summary_tables.paper_first_group(2000) == 53 and summary_tables.paper_first_group(25000) == 55
    assert summary_tables.paper_first_group(500_000) is None  # 500 KB copies queue into one another: no groups


def test_reach_and_tail_per_seed_from_the_raw_logs(results, monkeypatch):
    section = docs_tables.sections(docs_tables.tables(results, REPO / "bench", configs_dir=RECORDED)["reach-and-tail"])["recorded"]
    assert section.startswith("**recorded** (ours: one value per seed):")
    with open(RUN_2KB / "schedule.csv") as handle:
        measured = {row["msg_hash"] for row in csv.DictReader(handle) if row["warmup"] == "False"}
    first_hops = [hops for msg_hash, hops in raw_first_hops(RUN_2KB).items() if msg_hash in measured]
    copies, direct = (sum(column) / len(first_hops) for column in zip(*first_hops))
    slowest = measured_latencies(RUN_2KB).max()
    # in 16 well-meshed nodes every receipt is pushed by a mesh peer: none is reached only by gossip
    assert f"| 2 KB | 11 | 53 | {direct:.0f} | {copies:.0f} | 0 | 604 | {slowest:.0f} |" in section
    assert "| 100 KB | 11 |  |" in section  # the paper's 100 KB latencies show no groups


def test_a_study_compared_with_another_shows_both_per_size(recorded_results):
    """report.compare_with: the comparison its analysis writes, the other study's statistics beside ours;
    here the recorded runs compared with a study made of the 2 KB run alone, so only 2 KB is shared."""
    results = recorded_results
    alone = study_in("recorded", results)
    compared = results / "recorded-compared"
    copies = parsed_copies(RUNS, compared / layout.RUNS)
    config = (REPO / "tests/data/recorded.yaml").read_text().replace("study: recorded", "study: recorded-compared")
    (compared / layout.STUDY_CONFIG).write_text(config + "report: {compare_with: recorded-2kb}\n")
    only_2kb = results / "recorded-2kb"
    parsed_copies([RUN_2KB], only_2kb / layout.RUNS)
    (only_2kb / layout.STUDY_CONFIG).write_text(config.replace("recorded-compared", "recorded-2kb").replace("[2 KB, 100 KB]", "[2 KB]"))
    for study_dir, runs in ((only_2kb, list((only_2kb / layout.RUNS).iterdir())), (compared, copies)):
        other = ["--compare-with", str(only_2kb)] if study_dir == compared else []
        assert cli.main(["summarize", "--study-config", str(study_dir / layout.STUDY_CONFIG), "--out", str(study_dir),
                         "--runs", *map(str, runs)]) == 0
        assert cli.main(["analyse", "--study-dir", str(study_dir), "--runs", *map(str, runs), *other]) == 0
    # receipt by receipt: one receipt a nanosecond later, another from another parent
    receipts_path = compared / layout.RUNS / RUN_2KB.name / layout.RECEIPTS
    receipts = pd.read_parquet(receipts_path)
    receipts.loc[0, "received_ns"] += 1
    receipts.loc[1, "from_host"] = "another-parent"
    receipts.to_parquet(receipts_path)
    section = docs_tables.tables(results, REPO / "bench", configs_dir=RECORDED)["comparisons"]["recorded-compared"]
    kept = (len(receipts) - 1) / len(receipts)
    assert f"| 2 KB | 1 | {kept:.1%} | {kept:.1%} |" in section.splitlines()
    assert section.startswith("**recorded-compared** beside recorded-2kb (n16-size2000B-seed11, n16-size100000B-seed11):")
    latencies = measured_latencies(RUN_2KB)
    same = (latencies.min(), latencies.mean(), np.percentile(latencies, 95), latencies.max())
    assert "| 2 KB | " + " | ".join(f"{v:.0f} / {v:.0f} (1.00)" for v in same) + " |" in section
    assert "100 KB" not in section  # the other study has no 100 KB
    (metrics_row,) = [line for line in section.splitlines() if line.startswith("| 2 KB | 100.00% / 100.00% |")]
    copies = study_tables.run_metrics(only_2kb / layout.RUNS / RUN_2KB.name)["relay_copies"]
    assert f"| {copies:.2f} / {copies:.2f} |" in metrics_row  # the same run on both sides
    assert alone.name not in docs_tables.tables(results, REPO / "bench", configs_dir=RECORDED)["comparisons"]  # compared with nothing


def test_the_tree_shape_sets_our_hops_beside_the_papers_steps(results, monkeypatch):
    section = docs_tables.tables(results, REPO / "bench", configs_dir=RECORDED)["tree-shape"]
    (row_2kb,) = [line for line in section.splitlines() if line.startswith("| 2 KB |")]
    cells = [cell.strip() for cell in row_2kb.strip("|").split("|")]
    # the paper's 2 KB steps: 477, 2529, 5058 and 927 of its 8991 measured receipts in hops 1 to 4
    assert [cell.split(" / ")[0] for cell in cells[1:5]] == ["5.3", "28.1", "56.3", "10.3"]
    ours = [float(cell.split(" / ")[1]) for cell in cells[1:6]]
    assert sum(ours) == pytest.approx(100, abs=0.3)
    assert "| 100 KB |" not in section  # the paper's 100 KB latencies show no steps


def test_paper_rounds_measure_each_study_from_both_rounds_of_the_papers_runs(results, monkeypatch):
    block = docs_tables.tables(results, REPO / "bench", configs_dir=RECORDED)["paper-rounds"]
    assert "| first | 2 KB | 312 |" in block and "| final | 2 KB | 356 |" in block
    receipts = pd.read_csv(REPO / "data" / "paper" / "shadow_latency_receipts_first_round.csv.gz")
    first_2kb = receipts.query("size_kb == 2 and seq != 0")["latency_ms"].to_numpy()
    ks_final = ecdf_distances(measured_latencies(RUN_2KB), papers_latencies(2))[0]
    ks_first = ecdf_distances(measured_latencies(RUN_2KB), first_2kb)[0]
    assert f"| `recorded` | 2 KB | 1 | {ks_final:.3f} | {ks_first:.3f} |" in block.splitlines()


def test_the_memory_split_sets_shadows_memory_beside_the_nodes_per_size(results, tmp_path, monkeypatch):
    assert docs_tables.tables(results, tmp_path, configs_dir=RECORDED)["memory-split"] is None  # recorded before the breakdown
    stats_path = results / "recorded" / layout.RUNS / RUN_100KB.name / layout.RUN_STATS
    stats = json.loads(stats_path.read_text())
    stats["own_peak_memory_bytes"] = 3 * 2**30
    stats["memory_at_peak"] = {"wall_seconds": 3.0, "taken_bytes": 3 * 2**30, "shadow_rss_bytes": 2**30, "processes": 16,
                               "processes_anon_bytes": 24 * 2**20 * 16, "processes_file_bytes": 0, "shmem_bytes": 0}
    stats_path.write_text(json.dumps(stats))
    block = docs_tables.tables(results, tmp_path, configs_dir=RECORDED)["memory-split"]
    assert block.startswith("**recorded** (1 validated runs):")
    # an own peak (before 2026-12-08) has no kernel's growth beside it
    assert block.splitlines()[-1] == "| 100 KB | 3.0 GiB (own) | 0.2 GiB |  | 1.0 GiB | 16 | 24.0 MiB |"
    stats["resident_peak_bytes"] = 3 * 2**30 + 384 * 2**20
    stats["memory_at_peak"].update(own_bytes=stats["resident_peak_bytes"], kernel_bytes=256 * 2**20)
    stats_path.write_text(json.dumps(stats))
    block = docs_tables.tables(results, tmp_path, configs_dir=RECORDED)["memory-split"]
    assert block.splitlines()[-1] == "| 100 KB | 3.4 GiB (resident) | 0.2 GiB | 0.25 GiB | 1.0 GiB | 16 | 24.0 MiB |"
