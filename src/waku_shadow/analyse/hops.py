"""The delivery trees' hops: per-hop times, the Table 3 decomposition, hop histograms, first hops, and hops read off latency steps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from waku_shadow import layout
from waku_shadow.analyse import stats
from waku_shadow.configuration import loader


def verification_ms(run_dirs: list[Path]) -> dict[int, float]:
    """L_v of each size's runs (ms), from the runs' own configs: a size may set its own (by_size)."""
    studies = [loader.load(run_dir / layout.RUN_CONFIG) for run_dir in run_dirs]
    return {study.message_sizes[0]: study.rln.verification_delay_ns(study.message_sizes[0]) / 1e6 for study in studies}


def per_hop_table(receipts: pd.DataFrame, publishes: pd.DataFrame, verification_ms: dict[int, float],
                  keys: tuple[str, ...] = ("size_bytes",)) -> pd.DataFrame:
    """The paper's Table 3 for a simulated network: mean L_g, and per hop position mean L_t and L_v,
    per point (size, or swept value and size).

    A hop's time is the child's receipt minus its parent's (the publish, for the first
    hop); L_v is the configured validation delay of the size and L_t the rest.
    ``verification_ms`` maps a size to its L_v in ms. Receipts and publishes carry their run:
    the runs of a sweep share message hashes.
    """
    keys = list(keys)
    measured = stats.measured(receipts)
    measured = measured.assign(hop_ms=hop_times_ms(measured))
    generation = stats.measured(publishes)
    generation_ms = ((generation["publish_ns"] - generation["intent_ns"]) / 1e6).groupby([generation[k] for k in keys]).mean()
    rows = []
    for point, group in measured.groupby(keys):
        at = dict(zip(keys, point))
        rows.append({**at, "component": "L_g", "hop": 0, "mean_ms": generation_ms.loc[point]})
        lv = verification_ms[at["size_bytes"]]
        for hop, at_hop in group.groupby("hop"):
            rows.append({**at, "component": "L_t", "hop": hop, "mean_ms": at_hop["hop_ms"].mean() - lv})
            rows.append({**at, "component": "L_v", "hop": hop, "mean_ms": lv})
        rows.append({**at, "component": "total", "hop": int(group["hop"].max()), "mean_ms": group["latency_ms"].mean()})
    return pd.DataFrame(rows)


def first_hops(receipts: pd.DataFrame, sends: pd.DataFrame, keys: tuple[str, ...] = ("size_bytes",)) -> pd.DataFrame:
    """Per message and run: peers the publisher sent to (flood publish) and receivers whose first copy came from it."""
    keys = list(keys)
    columns = ["publisher", "message", *keys, "warmup"]
    messages = receipts[["run", "msg_hash", *(c for c in columns if c not in sends)]].drop_duplicates(["run", "msg_hash"])
    publisher_sends = sends.merge(messages, left_on=["run", "msg_hash", "sender"], right_on=["run", "msg_hash", "publisher"])
    sent = publisher_sends.groupby(["run", "msg_hash", "message", *keys, "warmup"]).size().rename("publisher_sent_to")
    direct = receipts[receipts["hop"] == 1].groupby(["run", "msg_hash"]).size().rename("first_hop_receivers")
    return sent.reset_index().join(direct, on=["run", "msg_hash"])


def hop_times_ms(receipts: pd.DataFrame) -> pd.Series:
    """How long each receipt's last hop took (ms), aligned with ``receipts``: its receipt minus its
    parent's, or minus the publish for a receipt straight from the publisher. Receipts carry their
    run (the runs of a sweep share message hashes)."""
    received = receipts.set_index(["run", "msg_hash", "receiver"])["received_ns"]
    parent_received = received.reindex(list(zip(receipts["run"], receipts["msg_hash"], receipts["from_host"]))).to_numpy()
    from_publisher = (receipts["from_host"] == receipts["publisher"]).to_numpy()
    parent_ns = pd.Series(parent_received, index=receipts.index).where(~from_publisher, receipts["publish_ns"])
    return (receipts["received_ns"] - parent_ns) / 1e6


def relay_hop_times(receipts: pd.DataFrame, keys: tuple[str, ...] = ("size_bytes",)) -> pd.DataFrame:
    """Per point, how long the relayed hops took (hop 2 on: a relay's receipt to its child's, each
    the end of a verification sleep): their count, median and p95 (ms), the commonest time to the
    tenth of a millisecond and its share. Measured receipts only."""
    keys = list(keys)
    relayed = stats.measured(receipts).assign(hop_ms=lambda r: hop_times_ms(r))
    relayed = relayed[relayed["hop"] >= 2]
    rows = []
    for point, group in relayed.groupby(keys):
        tenths = group["hop_ms"].round(1).value_counts()
        rows.append({**stats.point_at(keys, point), "relayed_hops": len(group), "median_ms": group["hop_ms"].median(),
                     "p95_ms": group["hop_ms"].quantile(0.95), "commonest_ms": tenths.index[0],
                     "commonest_share": tenths.iloc[0] / len(group)})
    return pd.DataFrame(rows, columns=[*keys, "relayed_hops", "median_ms", "p95_ms", "commonest_ms", "commonest_share"])


def relay_hop_time_histogram(receipts: pd.DataFrame, keys: tuple[str, ...] = ("size_bytes",),
                             bin_ms: float = 0.5) -> pd.DataFrame:
    """Relayed hops (as relay_hop_times counts them) per point and time to the nearest bin_ms: keys,
    hop_ms, relayed_hops."""
    keys = list(keys)
    relayed = stats.measured(receipts).assign(hop_ms=lambda r: hop_times_ms(r))
    relayed = relayed[relayed["hop"] >= 2].assign(hop_ms=lambda r: (r["hop_ms"] / bin_ms).round() * bin_ms)
    return relayed.groupby([*keys, "hop_ms"]).size().rename("relayed_hops").reset_index()


def hop_histogram(receipts: pd.DataFrame, keys: tuple[str, ...] = ("size_bytes",)) -> pd.DataFrame:
    """Receipts per point (size, or swept value and size) and hop count, warm-up excluded."""
    measured = stats.measured(receipts)
    return measured.groupby([*keys, "hop"]).size().rename("receipts").reset_index()


def hops_from_latency_steps(
    latency_ms: pd.Series, min_gap_ms: float = 20.0, min_share: float = 0.01, step_tolerance: float = 0.1
) -> pd.Series | None:
    """Hop counts read off latencies alone, for receipts that name no parent (the paper's raw
    latencies): aligned with ``latency_ms``, or None when the latencies do not fall into steps.

    When every link has the same latency, every hop adds the same fixed cost (the link's latency,
    L_v, one copy's transmission), while the receipts of one hop spread only by how long their
    copies queued on the uplinks before them (about size / bandwidth a copy). For small messages
    that spread is shorter than a hop, so the sorted latencies fall into groups with empty gaps
    between them: the fastest group is one hop, the next two, and so on (the paper's Figure 3 at
    2 and 25 KB). A gap here is a jump of more than ``min_gap_ms`` between consecutive latencies:
    far more than a small message's queueing (2 ms a copy at 25 KB and 100 Mbit) and less than a
    hop wherever hops show as steps at all (a link's latency plus L_v: tens of ms).

    The groups are taken for hops only if they look like steps: there are at least two, each
    holds at least ``min_share`` of the receipts, their fastest receipts are one step apart (each
    difference within ``step_tolerance`` of the median step) and each is narrower than a step.
    Larger messages spread a hop over more than a step and the groups merge; what gaps remain
    (single slow receipts, the publisher's copies queued 40 ms apart at 500 KB) fail these tests.
    """
    starts = latency_steps(latency_ms, min_gap_ms, min_share, step_tolerance)
    if starts is None:
        return None
    hop = np.searchsorted(starts[1:], latency_ms.to_numpy(dtype=float), side="right") + 1
    return pd.Series(hop, index=latency_ms.index, name="hop")


def latency_steps(
    latency_ms: pd.Series, min_gap_ms: float = 20.0, min_share: float = 0.01, step_tolerance: float = 0.1
) -> np.ndarray | None:
    """The fastest latency of each hop's group, read off the latencies as hops_from_latency_steps
    describes; None when they do not fall into steps."""
    values = np.sort(latency_ms.to_numpy(dtype=float))
    group_starts = values[1:][np.diff(values) > min_gap_ms]
    if len(group_starts) == 0:
        return None
    counts = np.bincount(np.searchsorted(group_starts, values, side="right"))
    if counts.min() < min_share * len(values):
        return None
    starts = np.concatenate([values[:1], group_starts])
    ends = np.concatenate([values[np.cumsum(counts)[:-1] - 1], values[-1:]])
    step = np.median(np.diff(starts))
    if (np.abs(np.diff(starts) - step) > step_tolerance * step).any() or (ends - starts >= step).any():
        return None
    return starts
