"""Propagation trees: who delivered each message to whom, and in how many hops.

Every receipt names the peer the message came from (nwaku logs a short peer
ID; logs.parse_run maps it back to a host). Per message these parent links
must form a tree rooted at the publisher that reaches every receiver.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import stats
from .errors import ValidationError


def hops(receipts: pd.DataFrame) -> pd.Series:
    """Hop count of every receipt (1 = straight from the publisher), aligned with ``receipts``.

    Raises ValidationError when a message's parent links are not a tree rooted at
    its publisher, or a parent received the message after its child.
    """
    result = pd.Series(0, index=receipts.index, dtype="int64")
    for message, group in receipts.groupby("message", sort=True):
        publisher = group["publisher"].iloc[0]
        parent = dict(zip(group["receiver"], group["from_host"]))
        received = dict(zip(group["receiver"], group["received_ns"]))
        depth: dict[str, int] = {publisher: 0}
        for receiver in group["receiver"]:
            chain = []
            node = receiver
            while node not in depth:
                if node in chain:
                    raise ValidationError(f"message {message}: delivery links form a cycle through {node}")
                chain.append(node)
                if node not in parent:
                    raise ValidationError(
                        f"message {message}: {chain[-2] if len(chain) > 1 else receiver} got it from {node}, "
                        "which never received it"
                    )
                node = parent[node]
            base = depth[node]
            for offset, member in enumerate(reversed(chain), start=1):
                depth[member] = base + offset
        late = [
            r for r, p in parent.items() if p != publisher and received[p] > received[r]
        ]
        if late:
            r = late[0]
            raise ValidationError(
                f"message {message}: {r} received it at {received[r]} ns from {parent[r]}, "
                f"which only received it at {received[parent[r]]} ns"
            )
        result.loc[group.index] = [depth[r] for r in group["receiver"]]
    return result


def hop_times_ms(receipts: pd.DataFrame) -> pd.Series:
    """How long each receipt's last hop took (ms), aligned with ``receipts``: its receipt minus its
    parent's, or minus the publish for a receipt straight from the publisher. Receipts carry their
    run (the runs of a sweep share message hashes)."""
    received = receipts.set_index(["run", "msg_hash", "receiver"])["received_ns"]
    parent_received = received.reindex(list(zip(receipts["run"], receipts["msg_hash"], receipts["from_host"]))).to_numpy()
    from_publisher = (receipts["from_host"] == receipts["publisher"]).to_numpy()
    parent_ns = pd.Series(parent_received, index=receipts.index).where(~from_publisher, receipts["publish_ns"])
    return (receipts["received_ns"] - parent_ns) / 1e6


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
