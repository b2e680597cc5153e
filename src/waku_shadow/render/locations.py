"""Where the nodes are and what links they have: nodes spread over named locations, and over bandwidth classes."""

from __future__ import annotations

import random

from waku_shadow.configuration.study import BandwidthClass, exact_counts


def assign(nodes: int, weights: list[tuple[str, float]], assignment: str, seed: int) -> list[str]:
    """The location of every node: exact proportional counts, in the weights' order or shuffled by seed."""
    placed = [name for (name, _), count in zip(weights, exact_counts(nodes, [w for _, w in weights])) for _ in range(count)]
    if assignment == "random":
        random.Random(f"waku-shadow locations seed={seed}").shuffle(placed)
    return placed


def assign_classes(nodes: int, classes: tuple[BandwidthClass, ...], seed: int) -> list[str]:
    """The bandwidth class of every node: exact counts by share, shuffled by the seed apart from the
    locations' draw, so adding classes moves no node to another location."""
    counts = exact_counts(nodes, [c.share for c in classes])
    placed = [c.name for c, count in zip(classes, counts) for _ in range(count)]
    random.Random(f"waku-shadow bandwidth classes seed={seed}").shuffle(placed)
    return placed
