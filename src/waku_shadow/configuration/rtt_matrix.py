"""Latency matrices between locations (``network.locations.rtt_matrix``): reading one, and one-way latencies."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from waku_shadow.errors import ConfigError

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


def one_way_ns(matrix: RttMatrix, a: str, b: str, one_way_fraction: float) -> int:
    # whole microseconds: far finer than any measured RTT
    return round(matrix.rtt(a, b) * one_way_fraction / 1000) * 1000
