"""network.bandwidth_classes: relay nodes in classes with their own uplink, downlink and share."""

from __future__ import annotations

import math

from waku_shadow.configuration import units
from waku_shadow.configuration.study import BandwidthClass, exact_counts
from waku_shadow.errors import refused

KEY = "network.bandwidth_classes"


def parse(cfg: dict) -> tuple[BandwidthClass, ...]:
    """The study's classes, none when the key is null; refused by key where they cannot be run (the
    loader refuses bandwidth_up and bandwidth_down beside them)."""
    given = cfg["network"]["bandwidth_classes"]
    if given is None:
        return ()
    names = [entry["name"] for entry in given]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise refused(KEY, f"{', '.join(repeated)} named twice; give each class its own name")
    total = math.fsum(entry["share"] for entry in given)
    if not math.isclose(total, 1.0, abs_tol=1e-9):
        raise refused(KEY, f"the shares sum to {total:g}, not 1")
    if cfg["light_clients"]["clients"]:
        raise refused(KEY, "light clients in bandwidth classes are not built yet: run them at one bandwidth")
    nodes = cfg["network"]["nodes"]
    empty = [name for name, count in zip(names, exact_counts(nodes, [entry["share"] for entry in given])) if count == 0]
    if empty:
        raise refused(KEY, f"{', '.join(empty)} would hold none of {nodes} nodes; give it a larger share or leave it out")
    return tuple(
        BandwidthClass(
            name=entry["name"],
            share=float(entry["share"]),
            up_bps=_positive(units.bandwidth_bps(entry["up"], f"{KEY}[{i}].up"), f"{KEY}[{i}].up"),
            down_bps=_positive(units.bandwidth_bps(entry["down"], f"{KEY}[{i}].down"), f"{KEY}[{i}].down"),
        )
        for i, entry in enumerate(given)
    )


def _positive(bps: int, key: str) -> int:
    if bps <= 0:
        raise refused(key, "must be more than 0")
    return bps
