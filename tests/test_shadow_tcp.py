"""Shadow's TCP after an idle period, with and without shadow/patches/0001 (slow start after idle),
and a half-closed socket's epoll events (what nwaku patch 0023 relies on).

Two Shadow hosts 50 ms apart (one way) run tests/tcp_idle_transfer.py: the client sends a burst
that opens its congestion window, sleeps, then sends SIZE bytes; the server notes when it has
them all. A window that stayed open delivers them in one flight (one one-way latency); a window
restarted to W segments needs the slow-start round trips that W, 2W, 4W, ... segments take.

Shadow is found in this order: $WAKU_SHADOW_TEST_SHADOW, local.yaml's stack.shadow.binary, the
Shadow the workflow built (build/shadow/<tag>-patches-<hash>/bin/shadow). Without one the tests
are skipped, saying why; the cases that set the option also need the patch.
"""

import json
import math
import os
import shutil
import subprocess
import sys

import pytest
import yaml
from conftest import REPO, patches_missing_from

from waku_shadow.configuration import sources
from waku_shadow.stack import builds, shadow_options

pytestmark = pytest.mark.stack

SHADOW_ENV = "WAKU_SHADOW_TEST_SHADOW"
SCRIPT = REPO / "tests" / "tcp_idle_transfer.py"
HALF_CLOSED_SCRIPT = REPO / "tests" / "half_closed_writer.py"
ONE_WAY_MS = 50
RTT_MS = 2 * ONE_WAY_MS
PORT = 8000
SIZE = 73_000  # 50 segments of 1460 bytes: three slow-start rounds from 10 (10 + 20 + 40)
LARGE_BURST = 2_000_000  # opens the window far past 50 segments
SMALL_BURST = 146_000  # opens it to about 100 segments: two halvings leave about 25
RESTART_WINDOW = 10  # segments, Linux's initial window
TOLERANCE_MS = 15  # Shadow's 1 ms delayed ACK per round and the 1 Gbit serialization, with room
SERVER_IP = "11.0.0.1"


def configured_shadow() -> str | None:
    if os.environ.get(SHADOW_ENV):
        return os.environ[SHADOW_ENV]
    study = sources.study_from_snakemake({})
    return study.stack.shadow_binary or str(REPO / builds.shadow_build_dir(study) / "bin" / "shadow")


@pytest.fixture(scope="module")
def shadow() -> str:
    binary = configured_shadow()
    if not binary or not shutil.which(binary):
        pytest.skip(f"no Shadow binary at {binary}: set ${SHADOW_ENV} or stack.shadow.binary in "
                    f"{sources.local_config_path()}, or let the workflow build Shadow")
    return binary


def slow_start_rounds(window: int, segments: int) -> int:
    """Round trips slow start takes to send ``segments`` from ``window``: window x (2^r - 1) >= segments."""
    return math.ceil(math.log2(segments / window + 1))


def window_after_idle(cwnd: int, idle_rtos: float) -> int:
    """RFC 2861 as Linux does it: halve once per whole RTO past the first, down to min(10, cwnd)."""
    if idle_rtos <= 1:
        return cwnd
    return max(cwnd >> (math.ceil(idle_rtos) - 1), min(RESTART_WINDOW, cwnd))


def two_hosts(shadow: str, run_dir, script, server_args: list, client_args: list, experimental: dict | None = None) -> dict:
    """Run ``script`` as the server and, a second later, as the client; their JSON lines, merged."""
    gml = (
        'graph [\n  node [\n    id 0\n    host_bandwidth_down "1 Gbit"\n    host_bandwidth_up "1 Gbit"\n  ]\n'
        f'  edge [\n    source 0\n    target 0\n    latency "{ONE_WAY_MS} ms"\n    packet_loss 0.0\n  ]\n]\n'
    )

    def process(args: list, start: str) -> dict:
        return {"path": sys.executable, "args": [str(script), *map(str, args)], "start_time": start,
                "expected_final_state": {"exited": 0}}

    config = {
        "general": {"stop_time": "120 s", "seed": 1},
        "network": {"graph": {"type": "gml", "inline": gml}},
        "hosts": {
            "server": {"network_node_id": 0, "ip_addr": SERVER_IP, "processes": [process(["server", *server_args], "0 s")]},
            "client": {"network_node_id": 0, "ip_addr": "11.0.0.2", "processes": [process(["client", *client_args], "1 s")]},
        },
    }
    if experimental:
        config["experimental"] = experimental
    run_dir.mkdir()
    (run_dir / "shadow.yaml").write_text(yaml.safe_dump(config))
    done = subprocess.run([shadow, "shadow.yaml"], cwd=run_dir, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    lines = {}
    for host in ("server", "client"):
        (stdout,) = (run_dir / "shadow.data" / "hosts" / host).glob("*.stdout")
        lines.update(json.loads(stdout.read_text()))
    return lines


def transfer(shadow: str, run_dir, burst: int, idle: str, slow_start_after_idle: bool | None) -> dict:
    experimental = None
    if slow_start_after_idle is not None:
        experimental = {shadow_options.TCP_SLOW_START_AFTER_IDLE: slow_start_after_idle}
    return two_hosts(shadow, run_dir, SCRIPT, [PORT, burst, SIZE], [SERVER_IP, PORT, burst, SIZE, idle], experimental)


@pytest.mark.parametrize(
    "burst, idle_rtos, slow_start_after_idle",
    [
        # without the option the idle time is 30 s, as long as Shadow's TCP_INFO cannot say the RTO
        pytest.param(LARGE_BURST, None, None, id="upstream-default"),
        pytest.param(LARGE_BURST, None, False, id="off"),
        pytest.param(LARGE_BURST, 30, True, id="on-restarts-from-10-segments"),
        pytest.param(SMALL_BURST, 2.5, True, id="on-halves-once-per-rto"),
        pytest.param(LARGE_BURST, 0.5, True, id="on-keeps-the-window-within-an-rto"),
    ],
)
def test_delivery_after_idle_takes_the_expected_round_trips(shadow, tmp_path, burst, idle_rtos, slow_start_after_idle):
    patch = shadow_options.PATCHED_SHADOW_OPTIONS[shadow_options.TCP_SLOW_START_AFTER_IDLE][1]
    if slow_start_after_idle is not None and patch in patches_missing_from(shadow):
        pytest.skip(f"{shadow} is not built with {patch}")
    idle = "30" if idle_rtos is None else f"{idle_rtos}rto"
    result = transfer(shadow, tmp_path / "run", burst, idle, slow_start_after_idle)
    segments = math.ceil(SIZE / result["mss"])
    assert result["cwnd"] >= segments, f"the burst did not open the window past {segments} segments: {result}"
    if slow_start_after_idle:
        assert result["rto"] > 0, result
        window = window_after_idle(result["cwnd"], idle_rtos)
    else:
        window = result["cwnd"]
    rounds = slow_start_rounds(window, segments)
    expected_ms = (rounds - 1) * RTT_MS + ONE_WAY_MS
    took_ms = (result["received_at"] - result["sent_at"]) * 1000
    assert abs(took_ms - expected_ms) <= TOLERANCE_MS, (
        f"{SIZE} B ({segments} segments) after an idle of {idle} took {took_ms:.1f} ms; "
        f"expected {expected_ms} ms ({rounds} rounds from a window of {window} segments): {result}"
    )


def test_a_half_closed_socket_wakes_a_writer_only_when_asked_for_rdhup(shadow, tmp_path):
    """Why nwaku patch 0023 ends the stalls of the mplex load runs: a socket whose peer has sent its
    FIN, with a full send buffer, answers every wait for room that includes EPOLLRDHUP at once and
    with no simulated time passing (chronos's writer then loops for ever); without EPOLLRDHUP the
    wait blocks until there is room, and the clock moves on."""
    result = two_hosts(shadow, tmp_path / "run", HALF_CLOSED_SCRIPT, [PORT], [SERVER_IP, PORT])
    assert result["written"] > 0, result
    for wait in result["with_rdhup"]:
        assert wait["events"] == [result["EPOLLRDHUP"]] and wait["took"] == 0, result
    first = result["without_rdhup"][0]
    assert first["took"] > 0, result
    assert not any(mask & result["EPOLLRDHUP"] for wait in result["without_rdhup"] for mask in wait["events"]), result
