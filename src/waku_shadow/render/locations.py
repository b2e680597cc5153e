"""Where the nodes are: a round-trip matrix between named locations, nodes spread over them, the graph."""

from __future__ import annotations

import math
import random

from waku_shadow.configuration.rtt_matrix import RttMatrix, one_way_ns
from waku_shadow.configuration.units import shadow_bandwidth, shadow_time


def quotas(nodes: int, weights: list[tuple[str, float]]) -> list[int]:
    """Nodes per location in proportion to the weights, remainders to the largest fractions."""
    total = sum(weight for _, weight in weights)
    exact = [nodes * weight / total for _, weight in weights]
    counts = [math.floor(x) for x in exact]
    by_fraction = sorted(range(len(weights)), key=lambda i: (counts[i] - exact[i], i))
    for i in by_fraction[: nodes - sum(counts)]:
        counts[i] += 1
    return counts


def assign(nodes: int, weights: list[tuple[str, float]], assignment: str, seed: int) -> list[str]:
    """The location of every node: exact proportional counts, in the weights' order or shuffled by seed."""
    placed = [name for (name, _), count in zip(weights, quotas(nodes, weights)) for _ in range(count)]
    if assignment == "random":
        random.Random(f"waku-shadow locations seed={seed}").shuffle(placed)
    return placed


def gml(
    matrix: RttMatrix,
    used: list[str],
    one_way_fraction: float,
    bandwidth_down_bps: int,
    bandwidth_up_bps: int,
    packet_loss: float,
) -> str:
    """One network node per location in ``used`` (ids in that order) and an edge for every pair.

    The graph is complete, self-loops included, so Shadow can route every pair
    directly (use_shortest_path: false) and the matrix is honoured as given.
    Shadow's GML parser wants one attribute per line.
    """
    lines = ["graph [", "  directed 0"]
    for index, name in enumerate(used):
        lines += [
            "  node [",
            f"    id {index}",
            f'    label "{name}"',
            f'    host_bandwidth_down "{shadow_bandwidth(bandwidth_down_bps)}"',
            f'    host_bandwidth_up "{shadow_bandwidth(bandwidth_up_bps)}"',
            "  ]",
        ]
    for i, a in enumerate(used):
        for j in range(i, len(used)):
            lines += [
                "  edge [",
                f"    source {i}",
                f"    target {j}",
                f'    latency "{shadow_time(one_way_ns(matrix, a, used[j], one_way_fraction))}"',
                f"    packet_loss {packet_loss}",
                "  ]",
            ]
    return "\n".join(lines + ["]", ""])
