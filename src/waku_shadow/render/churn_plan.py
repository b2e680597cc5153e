"""Churn: which nodes leave during a run, when they come back, whom they dial then, and which
missing receipts their absence explains."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.configuration.study import Study

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
    candidates = [n for n in range(study.nodes) if n not in publishers]
    back_at: dict[int, int] = {}
    found = []
    for leave in _leave_times(study, study.churn_leaves_per_minute, rng):
        up = [n for n in candidates if n not in back_at or back_at[n] + study.churn_downtime_ns <= leave]
        if not up:
            continue
        node = rng.choice(up)
        back_at[node] = leave + study.churn_downtime_ns
        dials = tuple(sorted(rng.sample([n for n in range(study.nodes) if n != node], study.peers_per_node)))
        found.append(Outage(node, leave, back_at[node], dials))
    return found


def client_outages(study: Study, candidates: list[int]) -> list[Outage]:
    """Light clients leaving (light_clients.churn) at the times of a Poisson process over the
    publishing window, each of ``candidates`` (the clients that publish nothing) at most once, drawn
    from the study's seed; a client dials nobody when it comes back (it has its service node)."""
    light = study.light_clients
    if light.churn_leaves_per_minute == 0:
        return []
    rng = random.Random(f"waku-shadow light client churn seed={study.seed}")
    staying = list(candidates)
    found = []
    for leave in _leave_times(study, light.churn_leaves_per_minute, rng):
        if not staying:
            break
        client = staying.pop(rng.randrange(len(staying)))
        found.append(Outage(client, leave, leave + light.churn_downtime_ns, ()))
    return found


def _leave_times(study: Study, leaves_per_minute: int, rng: random.Random) -> Iterator[int]:
    """The times of a Poisson process of ``leaves_per_minute`` over the publishing window, drawn one
    at a time from ``rng`` as they are asked for (the caller draws its own choices in between)."""
    mean_gap_ns = 60e9 / leaves_per_minute
    leave = study.bootstrap_ns
    while True:
        leave += round(rng.expovariate(1 / mean_gap_ns))
        if leave > study.last_publish_ns:
            return
        yield leave


def frame(found: list[Outage], hosts: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        [(hosts[o.node], o.leave_ns, o.rejoin_ns, " ".join(hosts[d] for d in o.dials)) for o in found],
        columns=COLUMNS,
    )


def read(run_dir: Path) -> pd.DataFrame:
    """The run's outages (churn.csv); none in a run without churn or rendered before it existed."""
    path = run_dir / layout.CHURN
    return pd.read_csv(path) if path.exists() else pd.DataFrame(columns=COLUMNS)
