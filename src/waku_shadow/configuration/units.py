"""Parsing of the human-readable quantities used in study configs.

Durations become integer nanoseconds, sizes integer bytes, bandwidths integer
bits per second. Every parser names the config key in its error.
"""

from __future__ import annotations

import re

from waku_shadow.errors import ConfigError

_NUMBER = r"(?P<number>\d+(?:\.\d+)?)"

_DURATION_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "sec": 1_000_000_000,
    "min": 60_000_000_000,
}

# KB/MB are decimal (the paper's 2/25/100/500 KB), KiB/MiB binary.
_SIZE_UNITS_BYTES = {
    "B": 1,
    "KB": 1_000,
    "MB": 1_000_000,
    "GB": 1_000_000_000,
    "KiB": 1_024,
    "MiB": 1_024**2,
    "GiB": 1_024**3,
}

_BANDWIDTH_UNITS_BPS = {
    "bit": 1,
    "Kbit": 1_000,
    "Mbit": 1_000_000,
    "Gbit": 1_000_000_000,
}


def _parse(value: object, key: str, units: dict[str, int], what: str) -> int:
    if isinstance(value, bool):
        raise ConfigError(f"{key}: expected a {what} such as {_example(units)}, got {value!r}", key)
    if isinstance(value, (int, float)) and value == 0:
        return 0
    if isinstance(value, int) and "B" in units:
        if value < 0:
            raise ConfigError(f"{key}: {value} must not be negative", key)
        return value
    if not isinstance(value, str):
        raise ConfigError(
            f"{key}: expected a {what} with a unit such as {_example(units)}, got {value!r}", key
        )
    match = re.fullmatch(_NUMBER + r"\s*(?P<unit>\S+)", value.strip())
    if not match or match["unit"] not in units:
        raise ConfigError(
            f"{key}: cannot read {value!r} as a {what}; use a number and one of the units "
            f"{', '.join(units)} (e.g. {_example(units)})", key
        )
    scaled = float(match["number"]) * units[match["unit"]]
    if abs(scaled - round(scaled)) > 1e-6:
        raise ConfigError(f"{key}: {value!r} is not a whole number of the base unit", key)
    return round(scaled)


def _example(units: dict[str, int]) -> str:
    return {"ns": "'150 ms'", "B": "'25 KB'", "bit": "'100 Mbit'"}[next(iter(units))]


def duration_ns(value: object, key: str) -> int:
    return _parse(value, key, _DURATION_UNITS_NS, "duration")


def size_bytes(value: object, key: str) -> int:
    return _parse(value, key, _SIZE_UNITS_BYTES, "size")


def bandwidth_bps(value: object, key: str) -> int:
    return _parse(value, key, _BANDWIDTH_UNITS_BPS, "bandwidth")


def shadow_time(ns: int) -> str:
    """A duration in the form Shadow's config parser accepts."""
    for unit, factor in (("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)):
        if ns % factor == 0:
            return f"{ns // factor} {unit}"
    return f"{ns} ns"


def shadow_bandwidth(bps: int) -> str:
    for unit, factor in (("Gbit", 1_000_000_000), ("Mbit", 1_000_000), ("Kbit", 1_000)):
        if bps % factor == 0:
            return f"{bps // factor} {unit}"
    return f"{bps} bit"


def human_size(n_bytes: int) -> str:
    for unit, factor in (("MB", 1_000_000), ("KB", 1_000)):
        if n_bytes >= factor and n_bytes % factor == 0:
            return f"{n_bytes // factor} {unit}"
    return f"{n_bytes} B"
