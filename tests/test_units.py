import pytest

from waku_shadow.configuration import units
from waku_shadow.errors import ConfigError


@pytest.mark.parametrize(
    "text, ns",
    [("150 ms", 150_000_000), ("1.5 s", 1_500_000_000), ("250us", 250_000), ("2 min", 120_000_000_000), (0, 0)],
)
def test_durations(text, ns):
    assert units.duration_ns(text, "k") == ns


@pytest.mark.parametrize(
    "text, n", [("2 KB", 2000), ("25 KiB", 25 * 1024), ("500 KB", 500_000), (1234, 1234), ("1 MiB", 1 << 20)]
)
def test_sizes(text, n):
    assert units.size_bytes(text, "k") == n


def test_bandwidths():
    assert units.bandwidth_bps("83 Mbit", "k") == 83_000_000
    assert units.shadow_bandwidth(83_000_000) == "83 Mbit"
    assert units.shadow_bandwidth(1_500) == "1500 bit"


def test_shadow_time_keeps_precision():
    assert units.shadow_time(150_000_000) == "150 ms"
    assert units.shadow_time(20_000_000_000) == "20 s"
    assert units.shadow_time(1_000_001) == "1000001 ns"


@pytest.mark.parametrize("bad", ["150", "150 parsecs", "fast", True, "1.5 ns"])
def test_bad_duration_names_the_key(bad):
    with pytest.raises(ConfigError, match="network.latency"):
        units.duration_ns(bad, "network.latency")
