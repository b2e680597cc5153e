"""Propagation trees: who delivered each message to whom, and in how many hops.

Every receipt names the peer the message came from (nwaku logs a short peer
ID; logs.parse_run maps it back to a host). Per message these parent links
must form a tree rooted at the publisher that reaches every receiver.
"""

from __future__ import annotations

import pandas as pd

from waku_shadow.errors import ValidationError


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
