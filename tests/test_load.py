"""The load study's knee: where p95 latency doubles or delivery falls, per message size."""

import math

import pandas as pd
import pytest
from conftest import CONFIGS

from waku_shadow.analyse import load_study
from waku_shadow.configuration import loader
from waku_shadow.configuration.study import merge
from waku_shadow.report import tables


def the_load_study(**overrides):
    return loader.resolve(merge(loader.read_yaml(CONFIGS / "load.yaml"), overrides))


def runs_at(rates, p95, delivery, size=100_000, net_bytes=None):
    table = pd.DataFrame({
        "size_bytes": size, "interval_ms": [1000 / r for r in rates], "latency_p50_ms": [v / 2 for v in p95],
        "latency_p95_ms": p95, "delivery": delivery, "seed": 1,
    })
    if net_bytes is not None:
        table["net_bytes"] = net_bytes
    return table


def test_the_knee_is_the_first_rate_where_p95_doubles():
    study = the_load_study()
    points = load_study.load_points(runs_at([1, 10, 50, 100], [500, 900, 1100, 3000], [1, 1, 1, 1]), study)
    (knee,) = load_study.knees(points).itertuples()
    assert (knee.knee_rate, knee.last_good_rate, knee.broken_by) == (50, 10, "latency")


def test_a_loss_breaks_delivery_before_latency():
    study = the_load_study()
    points = load_study.load_points(runs_at([1, 10, 50], [500, 600, 700], [1, 0.98, 0.5]), study)
    (knee,) = load_study.knees(points).itertuples()
    assert (knee.knee_rate, knee.broken_by, knee.delivery_at_knee) == (10, "delivery", 0.98)


def test_a_rate_between_whole_numbers_is_said_to_a_tenth():
    study = the_load_study()
    points = load_study.load_points(runs_at([1, 1000 / 70], [500, 1100], [1, 1]), study)
    (sentence,) = load_study.knee_sentences(load_study.knees(points), lambda size: f"{size // 1000} KB")
    assert sentence.startswith("- 100 KB: the knee is at 14.3 messages/s") and sentence.endswith("; 1 messages/s still held.")
    assert tables.load_points(points).markdown().splitlines()[3].startswith("| 100 KB | 14.3 |")
    assert load_study.rate_text(1000) == "1000" and load_study.rate_text(1000 / 3) == "333.3"


def test_no_knee_is_said_as_such():
    study = the_load_study()
    points = load_study.load_points(runs_at([1, 10], [500, 600], [1, 1]), study)
    (knee,) = load_study.knees(points).itertuples()
    assert math.isnan(knee.knee_rate) and knee.last_good_rate == 10
    (sentence,) = load_study.knee_sentences(load_study.knees(points), lambda size: f"{size // 1000} KB")
    assert sentence.startswith("- 100 KB: no knee up to 10 messages/s")


def test_uplink_demand_is_bytes_sent_per_second_of_publishing_over_capacity():
    study = the_load_study()
    # 102 messages at 10/s publish for 10.2 s; 100 nodes x 100 Mbit = 1.25e9 bytes/s of uplink in all
    sent_at_capacity = 1.25e9 * 10.2
    points = load_study.load_points(runs_at([10], [500], [1], net_bytes=[2 * sent_at_capacity]), study)
    assert points["uplink_demand"].item() == pytest.approx(1.0)


def test_repetitions_are_averaged_per_size_and_rate():
    study = the_load_study()
    runs = pd.concat([runs_at([1, 10], [500, 600], [1, 1]), runs_at([1, 10], [700, 800], [1, 0.9])])
    points = load_study.load_points(runs, study)
    assert points["latency_p95_ms"].tolist() == [600, 700] and points["delivery"].tolist() == [1, 0.95]


def test_the_docs_table_has_a_row_per_size_and_rate_with_the_uplink_demand_when_captured():
    study = the_load_study()
    captured = load_study.load_points(runs_at([1, 10], [500, 1200], [1, 0.995], net_bytes=[1.25e9 * 102, 2 * 1.25e9 * 10.2]), study)
    lines = tables.load_points(captured).markdown().splitlines()
    assert lines[0] == "| size | messages/s | p50 (ms) | p95 (ms) | delivery | uplink demand |"
    assert lines[2:] == ["| 100 KB | 1 | 250 | 500 | 100.00% | 0.50 |", "| 100 KB | 10 | 600 | 1200 | 99.50% | 1.00 |"]
    uncaptured = load_study.load_points(runs_at([1], [500], [1]), study)
    assert "uplink demand" not in tables.load_points(uncaptured).markdown()
