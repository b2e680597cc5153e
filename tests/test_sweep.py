"""A sweep's runs side by side, on the recorded real sweep in tests/data/recorded-sweep/ (D = 2 and
5, two seeds each, 10 nodes, packet captures)."""

import math

import pandas as pd
import pytest
from conftest import RECORDED
from recorded import parsed_copies

from waku_shadow import cli, layout
from waku_shadow.analyse import hops, residuals, study_tables
from waku_shadow.configuration import loader
from waku_shadow.paper import compare, published
from waku_shadow.report import plots, tables

STUDY = loader.load(RECORDED / "recorded-sweep.yaml")
RECORDED_RUNS = sorted((RECORDED / "recorded-sweep").iterdir())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    copies = parsed_copies(RECORDED_RUNS, tmp_path_factory.mktemp("sweep"))
    for run in copies:
        assert cli.main(["traffic", "--run-dir", str(run)]) == 0
    return copies


@pytest.fixture(scope="module")
def table(runs):
    return study_tables.runs_table(runs, study_tables.point_keys(STUDY))


def test_the_recorded_runs_are_the_runs_the_config_expands_to():
    assert [run.name for run in RECORDED_RUNS] == sorted(STUDY.run_ids())
    for run in RECORDED_RUNS:
        assert loader.load(run / "config.yaml").run_ids() == [run.name]


def test_one_row_per_run_with_its_point(table):
    assert list(table["run"]) == ["d2-n10-size4000B-seed21", "d2-n10-size4000B-seed22",
                                  "d5-n10-size4000B-seed21", "d5-n10-size4000B-seed22"]
    assert list(table["d"]) == [2, 2, 5, 5] and list(table["seed"]) == [21, 22, 21, 22]
    # 4 measured messages (the warm-up left out) reach the 9 other nodes
    assert (table["messages"] == 4).all() and (table["receipts"] == 36).all()
    assert (table["messages_published"] == 5).all() and (table["payload_bytes"] == 5 * 4000).all()
    assert (table["net_bytes_per_message"] == table["net_bytes"] / 5).all()


def test_a_larger_mesh_costs_more_bytes_and_duplicates(table):
    by_seed = table.set_index(["seed", "d"])
    for seed in (21, 22):
        low, high = by_seed.loc[(seed, 2)], by_seed.loc[(seed, 5)]
        assert high["amplification"] > 1.5 * low["amplification"]
        assert high["duplicates_per_receiver"] > low["duplicates_per_receiver"]
        assert high["net_bytes"] > low["net_bytes"]
    # every receiver gets the payload at least once: the wire carries at least payload x receivers
    assert (table["amplification"] > 1).all()


def test_points_give_the_mean_and_a_t_interval_over_seeds(table):
    points = study_tables.points_table(table, ["d", "size_bytes"]).set_index(["d", "metric"])
    values = table.loc[table["d"] == 5, "amplification"]
    row = points.loc[(5, "amplification")]
    half = math.tan(0.475 * math.pi) * values.std(ddof=1) / math.sqrt(2)  # t(0.975) with 1 degree of freedom: Cauchy
    assert row["runs"] == 2
    assert row["mean"] == pytest.approx(values.mean())
    assert (row["ci95_low"], row["ci95_high"]) == pytest.approx((values.mean() - half, values.mean() + half))
    one = study_tables.points_table(table[table["seed"] == 21], ["d", "size_bytes"])
    assert one["runs"].eq(1).all() and one["ci95_low"].isna().all()
    wide = study_tables.wide(one, ["d", "size_bytes"], ["latency_mean_ms", "amplification"])
    assert list(wide.columns) == ["d", "size_bytes", "latency_mean_ms", "latency_mean_ms ±", "amplification", "amplification ±"]
    assert wide["amplification ±"].isna().all() and wide["amplification"].notna().all()
    # a point without runs (here D = 5 at 1 B, which the sweep never ran) has no row
    lopsided = pd.concat([one, one.assign(size_bytes=1).query("d == 2")])
    assert len(study_tables.wide(lopsided, ["d", "size_bytes"], ["amplification"])) == 3


def test_the_interval_uses_students_t_quantile_for_the_seeds():
    # closed forms of the 0.975 quantile: Cauchy for 1 degree of freedom, (2p - 1) / sqrt(2p(1 - p)) for 2
    p = 0.975
    for values, quantile in (([1.0, 3.0], math.tan((p - 0.5) * math.pi)),
                             ([1.0, 2.0, 6.0], (2 * p - 1) / math.sqrt(2 * p * (1 - p)))):
        values = pd.Series(values)
        expected = quantile * values.std(ddof=1) / math.sqrt(len(values))
        assert study_tables.ci95_half_width(values) == pytest.approx(expected, rel=1e-9)
    # with many seeds the quantile tends to the normal's 1.96, from above
    many = pd.Series(range(201), dtype=float)
    assert 1.96 * many.std(ddof=1) / math.sqrt(201) < study_tables.ci95_half_width(many) < 1.975 * many.std(ddof=1) / math.sqrt(201)
    assert math.isnan(study_tables.ci95_half_width(pd.Series([5.0])))


def test_tables_keep_runs_that_share_message_hashes_apart(runs):
    # the same seed publishes the same payloads at every D: the hashes repeat across runs
    receipts = pd.concat([residuals.run_receipts(run) for run in runs], ignore_index=True)
    sends = pd.concat([study_tables.run_table(run, layout.SENDS) for run in runs], ignore_index=True)
    publishes = pd.concat([study_tables.run_table(run, layout.PUBLISHES) for run in runs], ignore_index=True)
    assert receipts.groupby("msg_hash")["run"].nunique().max() == 2
    first = hops.first_hops(receipts, sends, ["d", "size_bytes"])
    assert len(first) == 4 * 5  # a row per run and message
    assert (first["publisher_sent_to"] >= first["first_hop_receivers"]).all()
    per_hop = hops.per_hop_table(receipts, publishes, {4000: 12.0}, ["d", "size_bytes"])
    totals = per_hop[per_hop["component"] == "total"].set_index("d")["mean_ms"]
    measured = receipts[~receipts["warmup"]]
    assert totals.to_dict() == pytest.approx(measured.groupby("d")["latency_ms"].mean().to_dict())
    assert per_hop.loc[per_hop["component"] == "L_g", "mean_ms"].between(149, 152).all()


def test_each_seeds_distance_from_the_paper_and_their_figure(runs, tmp_path):
    # the paper simulated no 4 KB: the recorded sweep's receipts stand in for 2 KB ones here
    receipts = pd.concat([residuals.run_receipts(run) for run in runs], ignore_index=True).assign(size_bytes=2000)
    keys = ["d", "size_bytes"]
    pooled = compare.distances(receipts, keys)
    by_seed = compare.distances(receipts, [*keys, "seed"])
    assert list(zip(by_seed["d"], by_seed["seed"])) == [(2, 21), (2, 22), (5, 21), (5, 22)]
    assert (by_seed["ours_n"] == 36).all() and list(pooled["ours_n"]) == [72, 72]
    for row in by_seed.itertuples():
        alone = compare.distances(receipts[(receipts["d"] == row.d) & (receipts["seed"] == row.seed)], keys)
        assert (alone.loc[0, "ks"], alone.loc[0, "wasserstein_ms"]) == (row.ks, row.wasserstein_ms)
    text = tables.distances(pooled, by_seed, keys).markdown()
    assert text.startswith("| d | size | KS | KS, ours 1 ms earlier / later | Wasserstein (ms) | ours n | paper n | KS per seed: mean (range) |"
                           " Wasserstein per seed (ms): mean (range) |")
    assert text.count("\n| 2 | 2 KB |") == 1 and text.count("\n| 5 | 2 KB |") == 1
    out = tmp_path / "paper_distributions.png"
    plots.paper_distributions(receipts, published.shadow_receipts(), pooled, compare.hop_shares(receipts, keys),
                              compare.HOP_SOURCES, out, keys)
    assert out.stat().st_size > 50_000
