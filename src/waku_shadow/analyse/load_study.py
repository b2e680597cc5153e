"""The load study (a sweep of traffic.interval): latency and delivery against the messages per
second across the network, where they break (the knee), and how much of the nodes' uplinks the
offered traffic asks for."""

from __future__ import annotations

import pandas as pd

from waku_shadow.configuration.study import LOAD_PARAMETER, Study, exact_counts

RATE = "messages_per_second"
KNEE_LATENCY_FACTOR = 2.0  # p95 latency at twice its value under the lightest load
KNEE_DELIVERY = 0.99  # or fewer than 99 % of the expected receipts
METRICS = ["latency_p50_ms", "latency_p95_ms", "delivery", "uplink_demand"]


def is_load_study(study: Study) -> bool:
    return study.sweep is not None and study.sweep.parameter == LOAD_PARAMETER


def load_points(runs: pd.DataFrame, study: Study) -> pd.DataFrame:
    """Per message size and rate, the mean over repetitions of latency, delivery and, with a traffic
    capture, the uplink demand: the bytes the nodes send per second of publishing over their uplink
    capacity (above 1 the uplinks cannot keep up and queues grow)."""
    rate = 1000 / runs[study.sweep.name]
    table = runs.assign(**{RATE: rate})
    if "net_bytes" in table:
        publishing_s = study.messages_per_run / rate
        sent_per_node = table["net_bytes"] / 2 / study.nodes  # every byte sent is received once
        table["uplink_demand"] = sent_per_node / publishing_s / (mean_uplink_bps(study) / 8)
    metrics = [m for m in METRICS if m in table]
    return table.groupby(["size_bytes", RATE], as_index=False)[metrics].mean().sort_values(["size_bytes", RATE])


def mean_uplink_bps(study: Study) -> float:
    """The relay nodes' mean upload bandwidth: the study's one, or over its classes' exact counts."""
    if not study.bandwidth_classes:
        return float(study.bandwidth_up_bps)
    counts = exact_counts(study.nodes, [c.share for c in study.bandwidth_classes])
    return sum(c.up_bps * count for c, count in zip(study.bandwidth_classes, counts)) / study.nodes


def knees(points: pd.DataFrame) -> pd.DataFrame:
    """Per message size: the lowest rate at which p95 latency passes KNEE_LATENCY_FACTOR times its
    value at the lowest rate or delivery falls below KNEE_DELIVERY (NaN if none did), and the highest
    rate below it."""
    rows = []
    for size, group in points.groupby("size_bytes"):
        group = group.sort_values(RATE)
        baseline = group["latency_p95_ms"].iloc[0]
        slow = group["latency_p95_ms"] > KNEE_LATENCY_FACTOR * baseline
        lossy = group["delivery"] < KNEE_DELIVERY
        broken = group[slow | lossy]
        row = {"size_bytes": size, "baseline_p95_ms": baseline, "highest_rate": group[RATE].max()}
        if broken.empty:
            rows.append({**row, "knee_rate": float("nan"), "last_good_rate": group[RATE].max(), "broken_by": ""})
            continue
        knee = broken.iloc[0]
        below = group[group[RATE] < knee[RATE]]
        rows.append({
            **row,
            "knee_rate": knee[RATE],
            "last_good_rate": below[RATE].max() if not below.empty else float("nan"),
            "broken_by": " and ".join(
                reason for reason, hit in (("latency", slow[knee.name]), ("delivery", lossy[knee.name])) if hit
            ),
            "p95_at_knee_ms": knee["latency_p95_ms"],
            "delivery_at_knee": knee["delivery"],
            **({"uplink_demand_at_knee": knee["uplink_demand"]} if "uplink_demand" in knee else {}),
        })
    return pd.DataFrame(rows)


def rate_text(rate: float) -> str:
    """A rate as the docs say it: to a tenth (an interval of 70 ms is 14.3 messages/s)."""
    return f"{round(rate, 1):g}"


def knee_sentences(found: pd.DataFrame, human_size) -> list[str]:
    """One sentence per message size, for the report."""
    lines = []
    for row in found.itertuples():
        size = human_size(int(row.size_bytes))
        if pd.isna(row.knee_rate):
            lines.append(f"- {size}: no knee up to {rate_text(row.highest_rate)} messages/s (p95 stayed within "
                         f"{KNEE_LATENCY_FACTOR:g}x its {row.baseline_p95_ms:.0f} ms at the lightest load, delivery "
                         f"at least {KNEE_DELIVERY:.0%}).")
            continue
        demand = getattr(row, "uplink_demand_at_knee", float("nan"))
        lines.append(
            f"- {size}: the knee is at {rate_text(row.knee_rate)} messages/s (broken by {row.broken_by}: p95 "
            f"{row.p95_at_knee_ms:.0f} ms against {row.baseline_p95_ms:.0f} ms at the lightest load, delivery "
            f"{row.delivery_at_knee:.1%}"
            + ("" if pd.isna(demand) else f", uplink demand {demand:.2f} of capacity")
            + ")"
            + ("" if pd.isna(row.last_good_rate) else f"; {rate_text(row.last_good_rate)} messages/s still held")
            + "."
        )
    return lines
