"""Churn: which nodes leave during a run, when they come back, whom they dial then, and which
missing receipts their absence explains."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from . import layout
from .study import Study

COLUMNS = ["host", "leave_ns", "rejoin_ns", "dials"]


@dataclass(frozen=True)
class Outage:
    node: int
    leave_ns: int
    rejoin_ns: int  # may lie beyond the run's stop time: the node does not come back
    dials: tuple[int, ...]  # the peers it dials when it comes back


def outages(study: Study, publishers: set[int]) -> list[Outage]:
    """Leaves at the times of a Poisson process over the publishing window, each of a node that
    publishes nothing and has been up for at least one downtime (a node that has just come back
    has not yet installed the SIGTERM handler through which it leaves), drawn from the study's seed."""
    if study.churn_leaves_per_minute == 0:
        return []
    rng = random.Random(f"waku-shadow churn seed={study.seed}")
    mean_gap_ns = 60e9 / study.churn_leaves_per_minute
    candidates = [n for n in range(study.nodes) if n not in publishers]
    back_at: dict[int, int] = {}
    found = []
    leave = study.bootstrap_ns
    while True:
        leave += round(rng.expovariate(1 / mean_gap_ns))
        if leave > study.last_publish_ns:
            return found
        up = [n for n in candidates if n not in back_at or back_at[n] + study.churn_downtime_ns <= leave]
        if not up:
            continue
        node = rng.choice(up)
        back_at[node] = leave + study.churn_downtime_ns
        dials = tuple(sorted(rng.sample([n for n in range(study.nodes) if n != node], study.peers_per_node)))
        found.append(Outage(node, leave, back_at[node], dials))


def frame(found: list[Outage], hosts: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        [(hosts[o.node], o.leave_ns, o.rejoin_ns, " ".join(hosts[d] for d in o.dials)) for o in found],
        columns=COLUMNS,
    )


def read(run_dir: Path) -> pd.DataFrame:
    """The run's outages (churn.csv); none in a run without churn or rendered before it existed."""
    path = run_dir / layout.CHURN
    return pd.read_csv(path) if path.exists() else pd.DataFrame(columns=COLUMNS)


def explained(missing: pd.DataFrame, receipts: pd.DataFrame, publishes: pd.DataFrame, found: pd.DataFrame | None) -> pd.Series:
    """Why each missing receipt (columns message, receiver) is missing: "away" when the receiver was
    down at some time between the message's publish and its last receipt anywhere, "rejoining" when
    it had come back before the publish but had not received any message since, "" otherwise (a loss)."""
    if found is None or found.empty or missing.empty:
        return pd.Series("", index=missing.index, dtype=object)
    published = publishes.set_index("message")["publish_ns"]
    last_receipt = receipts.groupby("message")["received_ns"].max()
    reasons = []
    for message, receiver in zip(missing["message"], missing["receiver"]):
        start = published.get(message)
        end = last_receipt.get(message, start)
        mine = found[found["host"] == receiver]
        if (start is None or pd.isna(start)) or mine.empty:
            reasons.append("")
            continue
        if ((mine["leave_ns"] <= end) & (mine["rejoin_ns"] >= start)).any():
            reasons.append("away")
            continue
        back = mine.loc[mine["rejoin_ns"] < start, "rejoin_ns"]
        since_back = receipts[(receipts["receiver"] == receiver) & (receipts["received_ns"] >= back.max())] if not back.empty else None
        first_since = None if since_back is None or since_back.empty else since_back["received_ns"].min()
        reasons.append("rejoining" if since_back is not None and (first_since is None or first_since > start) else "")
    return pd.Series(reasons, index=missing.index, dtype=object)


def received_again(receipts: pd.DataFrame, found: pd.DataFrame) -> pd.Series:
    """Which receipts are a message received again by a node that left and came back after its
    first receipt of it (its seen-cache went with its old process, and gossip delivered it anew)."""
    again = pd.Series(False, index=receipts.index)
    if found.empty or receipts.empty:
        return again
    repeated = receipts[receipts.duplicated(["message", "receiver"], keep=False)]
    for (_, receiver), group in repeated.groupby(["message", "receiver"]):
        group = group.sort_values("received_ns")
        first = group["received_ns"].iloc[0]
        restarts = found.loc[(found["host"] == receiver) & (found["leave_ns"] >= first), "rejoin_ns"]
        for index, received in zip(group.index[1:], group["received_ns"].iloc[1:]):
            again[index] = bool((restarts <= received).any())
    return again
