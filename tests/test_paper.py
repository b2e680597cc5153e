import subprocess
import sys

import pandas as pd
import pytest
from conftest import CONFIGS, OVERLAYS, REPO

from waku_shadow.analyse import hops, stats
from waku_shadow.configuration import loader
from waku_shadow.paper import compare, published
from waku_shadow.report import tables


def test_table5_is_the_papers():
    table = published.table5()
    sh = table[table["setup"] == "s-h"].set_index(["size_bytes", "statistic"])["latency_ms"]
    assert sh[(2000, "min")] == 356 and sh[(500000, "p95")] == 1665 and sh[(25000, "mean")] == 756
    assert len(table[table["setup"] == "m-h"]) == 8


def test_comparison_ratios_and_markdown():
    summary = pd.DataFrame(
        {"size_bytes": [2000, 10000], "count": [9990, 9990], "min": [312.0, 1.0], "mean": [497.0, 1.0],
         "p50": [0.0, 0.0], "p95": [597.0 * 2, 1.0], "max": [302.0, 1.0]}
    )
    table = compare.table5_comparison(summary)
    assert set(table["size_bytes"]) == {2000}  # 10 KB is not in Table 5
    ratios = table.set_index("statistic")["ratio"]
    assert ratios["mean"] == 1.0 and ratios["p95"] == 2.0 and ratios["max"] == pytest.approx(0.5)
    text = tables.table5(table).markdown()
    assert "| 2 KB | 356 / 312 (0.88) | 497 / 497 (1.00) | 597 / 1194 (2.00) | 604 / 302 (0.50) |" in text


@pytest.fixture(scope="module")
def shadow_receipts():
    return published.shadow_receipts()


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
    table = published.table5()
    table = table[table["setup"] == "s-h"].set_index(["size_bytes", "statistic"])["latency_ms"]
    for (size, statistic), value in table.items():
        if (size, statistic) == (500000, "max"):
            continue
        assert round(summary.loc[size, statistic]) == value, (size, statistic)
    # Table 5's 500 KB maximum is the multi-host total of Table 3, not the simulation's
    assert summary.loc[500000, "max"] == 2292 and table[(500000, "max")] == 2468
    assert 2468 in set(published.table3().query("component == 'total'")["latency_ms"])


def test_the_papers_first_receipts_and_hop_spacing_name_the_link_each_size_ran_on():
    table = compare.link_evidence().set_index("size_bytes")
    # Table 5's minima, and the 2 KB hop groups starting at 356, 436, 516, 596 ms (25 KB: 432, 589, 746, 907)
    assert table["first_receipt_ms"].tolist() == [356, 432, 439, 471]
    assert table.loc[2000, "hop_spacing_ms"] == 80 and table.loc[25000, "hop_spacing_ms"] == 157
    assert table.loc[[100000, 500000], "hop_spacing_ms"].isna().all()  # their hops overlap: no steps
    # Table 1, Digital Ocean: 276.3 ms generation, 4.5 ms verification; a copy of 25 KB is 25 100 bytes
    # and 40 bytes of TCP/IP headers per 1460, 2.06 ms at 100 Mbit
    assert table.loc[25000, "first_on_150ms"] == pytest.approx(276.3 + 150 + 4.5 + 25100 * 1500 / 1460 * 8 / 1e5)
    assert table.loc[2000, "first_on_75ms"] == pytest.approx(356.0, abs=0.1)
    assert table["link_ms"].tolist() == [75, 150, 150, 150]
    text = tables.link_evidence(table.reset_index(), compare.CANDIDATE_LINKS_MS).markdown()
    assert "| 100 KB | 439 | 364.0 | 439.0 | no steps | 87.7 | 162.7 | 150 ms |" in text


def test_the_two_rounds_of_the_papers_runs_name_the_setup_each_ran():
    first = published.shadow_receipts("first")
    assert list(first.columns) == ["size_bytes", "receiver", "seq", "latency_ms", "warmup"]
    assert first.groupby("size_bytes").size().tolist() == [9990] * 4
    table = compare.round_evidence().set_index(["round", "size_bytes"])
    for round_name in published.ROUNDS:
        measured = stats.measured(published.shadow_receipts(round_name)).groupby("size_bytes")["latency_ms"]
        assert table.loc[round_name, "first_receipt_ms"].tolist() == measured.min().tolist()
        assert table.loc[round_name, "max_ms"].tolist() == measured.max().tolist()
    # the round before Table 5's: the text's stand-ins, 150 ms proof and 12 ms verification on 150 ms
    assert table.loc[("first", 2000), "predicted: the text's 150 + 12 ms, 150 ms link"] == pytest.approx(
        150 + 150 + 12 + 2100 * 1500 / 1460 * 8 / 1e5)
    assert set(table.loc["first", "setup"]) == {"the text's 150 + 12 ms, 150 ms link"}
    assert table.loc["final", "setup"].tolist() == ["Table 1's 276.3 + 4.5 ms, 75 ms link"] + \
        ["Table 1's 276.3 + 4.5 ms, 150 ms link"] * 3
    text = tables.round_evidence(table.reset_index()).markdown()
    assert "| first | 2 KB | 312 | 312.2 | 356.0 | 431.0 | the text's 150 + 12 ms, 150 ms link |" in text


def test_distances_from_either_round_and_their_table():
    first = published.shadow_receipts("first").assign(seed=1)
    by_round = {r: compare.distances(first, ["size_bytes", "seed"], r) for r in published.ROUNDS}
    assert (by_round["first"]["ks"] == 0).all()
    assert (by_round["final"]["ks"] > 0.2).all()  # Table 5's round ran other timings: every size moved
    rows = pd.concat([t.assign(study="x", round=r) for r, t in by_round.items()])
    rows = rows.groupby(["study", "size_bytes", "round"], sort=False)["ks"].agg(
        ks_mean="mean", ks_min="min", ks_max="max", seeds="count").reset_index()
    text = tables.distances_by_round(rows, list(published.ROUNDS)).markdown()
    assert text.splitlines()[0] == "| study | size | seeds | KS from the final round | KS from the first round |"
    assert text.splitlines()[2].endswith("| 0.000 |") and text.splitlines()[2].startswith("| `x` | 2 KB | 1 |")


def test_hops_read_off_the_papers_latency_steps(shadow_receipts):
    measured = shadow_receipts[~shadow_receipts["warmup"]]
    # the groups between the empty gaps, as the sorted latencies show them (ms, receipts)
    groups = {2000: [(356, 366, 477), (436, 447, 2529), (516, 527, 5058), (596, 604, 927)],
              25000: [(432, 545, 495), (589, 712, 2367), (746, 879, 4968), (907, 993, 1161)]}
    for size, expected in groups.items():
        latency = measured.loc[measured["size_bytes"] == size, "latency_ms"]
        hop = hops.hops_from_latency_steps(latency)
        found = latency.groupby(hop).agg(["min", "max", "size"])
        assert list(found.index) == [1, 2, 3, 4], size
        assert [tuple(row) for row in found.itertuples(index=False)] == expected, size
    # larger messages spread a hop over more than a step: no steps to read
    for size in (100000, 500000):
        assert hops.hops_from_latency_steps(measured.loc[measured["size_bytes"] == size, "latency_ms"]) is None


def test_hop_shares_set_ours_beside_the_papers(shadow_receipts):
    ours = pd.DataFrame({"size_bytes": [2000] * 4 + [100000] * 3 + [7000],
                         "latency_ms": [300.0, 301, 450, 451, 600, 610, 620, 300],
                         "hop": [1, 1, 2, 2, 1, 2, 2, 1], "warmup": False})
    shares = compare.hop_shares(ours, ["size_bytes"]).set_index(["size_bytes", "source", "hop"]).sort_index()
    assert set(shares.index.get_level_values("size_bytes")) == {2000, 100000}  # the paper has no 7 KB
    assert shares.loc[(2000, "paper, from latency steps"), "receipts"].tolist() == [477, 2529, 5058, 927]
    assert shares.loc[(2000, "paper, from latency steps"), "share"].sum() == pytest.approx(1)
    for source in ("ours, from delivery trees", "ours, from latency steps"):
        assert shares.loc[(2000, source), "share"].tolist() == [0.5, 0.5]
    # at 100 KB neither the paper's latencies nor ours fall into steps: only our trees remain
    assert set(shares.loc[100000].index.get_level_values("source")) == {"ours, from delivery trees"}


def test_each_study_says_which_reading_of_the_traffic_it_follows():
    one = compare.traffic_reading(loader.load(CONFIGS / "paper.yaml"))
    assert one.startswith("Traffic: one publisher, as in the paper's raw data") and "one delivery tree" in one
    ten = compare.traffic_reading(loader.load(CONFIGS / "paper.yaml", OVERLAYS / "paper-ten-publishers.yaml"))
    assert ten.startswith("Traffic: 10 publishers, the reading of the paper's text") and "mix 10 delivery trees" in ten


def test_distances_per_point_and_seed_and_their_markdown(shadow_receipts):
    paper_2kb = shadow_receipts[(shadow_receipts["size_bytes"] == 2000) & ~shadow_receipts["warmup"]]["latency_ms"]
    # seed 1 is the paper's sample itself, seed 2 the same 100 ms later
    ours = pd.concat([pd.DataFrame({"size_bytes": 2000, "seed": seed, "latency_ms": paper_2kb.to_numpy() + shift,
                                    "warmup": False}) for seed, shift in ((1, 0.0), (2, 100.0))])
    by_seed = compare.distances(ours, ["size_bytes", "seed"]).set_index("seed")
    assert by_seed.loc[1, "ks"] == 0 and by_seed.loc[1, "wasserstein_ms"] == 0
    assert by_seed.loc[2, "wasserstein_ms"] == pytest.approx(100)
    # at 527 ms the paper's 2 KB ECDF has passed its first three hop groups (8064 receipts, see
    # above), while the sample 100 ms later is where the paper is at 427 ms, past the first (477)
    assert by_seed.loc[2, "ks"] == pytest.approx((8064 - 477) / 8991)
    assert list(by_seed["ours_n"]) == [8991, 8991] and list(by_seed["paper_n"]) == [8991, 8991]
    pooled = compare.distances(ours, ["size_bytes"])
    assert pooled.loc[0, "ours_n"] == 2 * 8991 and pooled.loc[0, "wasserstein_ms"] == pytest.approx(50)
    text = tables.distances(pooled, compare.distances(ours, ["size_bytes", "seed"]), ["size_bytes"]).markdown()
    assert ("| size | KS | KS, ours 1 ms earlier / later | Wasserstein (ms) | ours n | paper n | KS per seed: mean (range) |"
            " Wasserstein per seed (ms): mean (range) |") in text
    # the seeds' mean KS: (0 + (8064 - 477) / 8991) / 2 = 0.422
    shifted = f"{pooled.loc[0, 'ks_minus_1ms']:.3f} / {pooled.loc[0, 'ks_plus_1ms']:.3f}"
    assert f"| 2 KB | {pooled.loc[0, 'ks']:.3f} | {shifted} | 50.0 | 17982 | 8991 | 0.422 (0.000–0.844) | 50.0 (0.0–100.0) |" in text
    between = pd.DataFrame({"size_bytes": [2000], "ks_between": [0.8438]})
    text = tables.distances(pooled, compare.distances(ours, ["size_bytes", "seed"]), ["size_bytes"], between).markdown()
    assert text.splitlines()[0].endswith("| KS between our seeds (largest) |")
    assert text.splitlines()[2].endswith("| 50.0 (0.0–100.0) | 0.844 |")
    one_seed = ours[ours["seed"] == 1]
    text = tables.distances(compare.distances(one_seed, ["size_bytes"]),
                            compare.distances(one_seed, ["size_bytes", "seed"]), ["size_bytes"]).markdown()
    assert text.splitlines()[0] == "| size | KS | KS, ours 1 ms earlier / later | Wasserstein (ms) | ours n | paper n |"
    # the paper's own receipts against themselves moved 1 ms: the largest share within one millisecond, 8.3 %
    assert text.splitlines()[2] == "| 2 KB | 0.000 | 0.083 / 0.083 | 0.0 | 8991 | 8991 |"


@pytest.mark.parametrize("round_name", list(published.ROUNDS))
def test_the_import_script_rebuilds_the_committed_file_and_checks_the_lines(tmp_path, round_name):
    # a repository holding the raw files in their original form, rebuilt from the committed rows
    research = tmp_path / "research"
    raw = research / "rln-delay-simulations" / "raw"
    raw.mkdir(parents=True)
    for size, receipts in published.shadow_receipts(round_name).groupby("size_bytes"):
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
    committed = (REPO / "data" / "paper" / published.ROUNDS[round_name]).read_bytes()
    assert (tmp_path / "out.csv.gz").read_bytes() == committed
    second_publisher = raw / "paper_latency_25kb_v2.txt"
    second_publisher.write_text(second_publisher.read_text().replace("msg_sender=1 seq=3", "msg_sender=7 seq=3", 1))
    done = run(tmp_path / "refused.csv.gz")
    assert done.returncode != 0 and "msg_sender=7, expected 1" in done.stderr
