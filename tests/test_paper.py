import subprocess
import sys

import pandas as pd
import pytest

from waku_shadow import paper, stats

from conftest import REPO


def test_table5_is_the_papers():
    table = paper.table5()
    sh = table[table["setup"] == "s-h"].set_index(["size_bytes", "statistic"])["latency_ms"]
    assert sh[(2000, "min")] == 356 and sh[(500000, "p95")] == 1665 and sh[(25000, "mean")] == 756
    assert len(table[table["setup"] == "m-h"]) == 8


def test_comparison_ratios_and_markdown():
    summary = pd.DataFrame(
        {"size_bytes": [2000, 10000], "count": [9990, 9990], "min": [312.0, 1.0], "mean": [497.0, 1.0],
         "p50": [0.0, 0.0], "p95": [597.0 * 2, 1.0], "max": [302.0, 1.0]}
    )
    table = paper.table5_comparison(summary)
    assert set(table["size_bytes"]) == {2000}  # 10 KB is not in Table 5
    ratios = table.set_index("statistic")["ratio"]
    assert ratios["mean"] == 1.0 and ratios["p95"] == 2.0 and ratios["max"] == pytest.approx(0.5)
    text = paper.table5_markdown(table)
    assert "| 2 KB | 356 / 312 (0.88) | 497 / 497 (1.00) | 597 / 1194 (2.00) | 604 / 302 (0.50) |" in text


@pytest.fixture(scope="module")
def shadow_receipts():
    return paper.shadow_receipts()


def test_the_papers_raw_latencies_are_one_publisher_times_ten_messages(shadow_receipts):
    assert list(shadow_receipts.columns) == ["size_bytes", "receiver", "seq", "latency_ms", "warmup"]
    for size, receipts in shadow_receipts.groupby("size_bytes"):
        assert len(receipts) == 9990, size
        assert receipts["receiver"].nunique() == 999 and "peer1" not in set(receipts["receiver"])  # peer1 published
        assert (receipts.groupby("receiver")["seq"].apply(sorted) == [list(range(10))] * 999).all()
        assert (receipts["warmup"] == (receipts["seq"] == 0)).all() and (~receipts["warmup"]).sum() == 8991
    assert sorted(shadow_receipts["size_bytes"].unique()) == [2000, 25000, 100000, 500000]


def test_the_papers_receipts_after_seq_0_give_table5(shadow_receipts):
    summary = stats.latency_summary(shadow_receipts).set_index("size_bytes")
    table = paper.table5()
    table = table[table["setup"] == "s-h"].set_index(["size_bytes", "statistic"])["latency_ms"]
    for (size, statistic), value in table.items():
        if (size, statistic) == (500000, "max"):
            continue
        assert round(summary.loc[size, statistic]) == value, (size, statistic)
    # Table 5's 500 KB maximum is the multi-host total of Table 3, not the simulation's
    assert summary.loc[500000, "max"] == 2292 and table[(500000, "max")] == 2468
    assert 2468 in set(paper.table3().query("component == 'total'")["latency_ms"])


def test_the_import_script_rebuilds_the_committed_file_and_checks_the_lines(tmp_path, shadow_receipts):
    # a repository holding the raw files in their original form, rebuilt from the committed rows
    research = tmp_path / "research"
    raw = research / "rln-delay-simulations" / "raw"
    raw.mkdir(parents=True)
    for size, receipts in shadow_receipts.groupby("size_bytes"):
        lines = [f"shadow.data/hosts/{r.receiver}/wakunode2.1000.stdout:{80 + r.seq}:rx_msg msg_sender=1 "
                 f"seq={r.seq} arrival_diff={r.latency_ms:.0f} milliseconds\n" for r in receipts.itertuples()]
        (raw / f"paper_latency_{size // 1000}kb_v2.txt").write_text("".join(reversed(lines)))

    def run(out):
        git = ["git", "-C", str(research), "-c", "user.name=test", "-c", "user.email=test@example.org"]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "."], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "raw"], check=True)
        return subprocess.run([sys.executable, str(REPO / "scripts" / "import_paper_latencies.py"),
                               "--git-dir", str(research / ".git"), "--commit", "HEAD", "--out", str(out)],
                              capture_output=True, text=True)

    done = run(tmp_path / "out.csv.gz")
    assert done.returncode == 0, done.stderr
    assert "500 KB: 9990 receipts, 999 receivers, seq 0..9" in done.stdout
    committed = (REPO / "data" / "paper" / paper.SHADOW_RECEIPTS).read_bytes()
    assert (tmp_path / "out.csv.gz").read_bytes() == committed
    second_publisher = raw / "paper_latency_25kb_v2.txt"
    second_publisher.write_text(second_publisher.read_text().replace("msg_sender=1 seq=3", "msg_sender=7 seq=3", 1))
    done = run(tmp_path / "refused.csv.gz")
    assert done.returncode != 0 and "msg_sender=7, expected 1" in done.stderr
