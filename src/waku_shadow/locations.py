"""Where the nodes are: a round-trip matrix between named locations, nodes spread over them, the graph."""

from __future__ import annotations

import csv
import math
import random
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError
from .units import shadow_bandwidth, shadow_time

MATRIX_COLUMNS = ("from", "to", "rtt_ms")


@dataclass(frozen=True)
class RttMatrix:
    """Symmetric round-trip times in ns between named locations, a location to itself included."""

    names: tuple[str, ...]
    rtt_ns: dict[frozenset[str], int]

    def rtt(self, a: str, b: str) -> int:
        return self.rtt_ns[frozenset((a, b))]


def read_rtt_matrix(path: Path, same_location_rtt_ns: int) -> RttMatrix:
    """Read a tidy from,to,rtt_ms CSV ('#' lines are comments).

    Where both directions of a pair are measured (the paper's Table 2 measures each
    from both ends) the pair's RTT is their mean: Shadow's graph is undirected. Every
    pair of distinct locations must be present in at least one direction; a location
    to itself takes ``same_location_rtt_ns`` unless the file has a row for it.
    """
    if not path.exists():
        raise ConfigError(f"{path}: no such latency matrix")
    with path.open(newline="") as handle:
        numbered = [(number, line) for number, line in enumerate(handle, start=1) if not line.startswith("#")]
    reader = csv.DictReader(line for _, line in numbered)
    if tuple(reader.fieldnames or ()) != MATRIX_COLUMNS:
        raise ConfigError(f"{path}: a latency matrix has the columns {','.join(MATRIX_COLUMNS)}, not {reader.fieldnames}")
    measured: dict[frozenset[str], list[float]] = {}
    names: list[str] = []
    for (line, _), row in zip(numbered[1:], reader):
        try:
            rtt_ms = float(row["rtt_ms"])
        except (TypeError, ValueError):
            raise ConfigError(f"{path}: line {line}: rtt_ms {row['rtt_ms']!r} is not a number") from None
        if not math.isfinite(rtt_ms) or rtt_ms <= 0:
            raise ConfigError(f"{path}: line {line}: rtt_ms must be more than 0, got {row['rtt_ms']}")
        for name in (row["from"], row["to"]):
            if not name:
                raise ConfigError(f"{path}: line {line}: a location name is empty")
            if name not in names:
                names.append(name)
        measured.setdefault(frozenset((row["from"], row["to"])), []).append(rtt_ms)
    rtt_ns = {pair: round(sum(values) / len(values) * 1e6) for pair, values in measured.items()}
    for i, a in enumerate(names):
        rtt_ns.setdefault(frozenset((a,)), same_location_rtt_ns)
        for b in names[i + 1 :]:
            if frozenset((a, b)) not in rtt_ns:
                raise ConfigError(f"{path}: no RTT between {a!r} and {b!r} in either direction")
    return RttMatrix(tuple(names), rtt_ns)


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


def one_way_ns(matrix: RttMatrix, a: str, b: str, one_way_fraction: float) -> int:
    # whole microseconds: far finer than any measured RTT
    return round(matrix.rtt(a, b) * one_way_fraction / 1000) * 1000
