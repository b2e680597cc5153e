"""The stream-muxer switch (nwaku patch 0013, libp2p.stream_muxer), replayed on recorded real runs:
tests/data/recorded-muxer* is one small 500 KB study recorded with nwaku's own order (yamux offered
first) and with mplex offered first, the same seed (tests/data/recorded-muxer.yaml says how)."""

import pandas as pd
import pytest
import yaml
from conftest import RECORDED
from recorded import parsed_copies

from waku_shadow import layout

RUN = "n20-size500000B-seed4"
ROUND_TRIP_MS = 2 * 150  # the fixture's link: 150 ms each way
YAMUX_WINDOW_BYTES = 256 * 1024


@pytest.fixture(scope="module")
def receipts(tmp_path_factory):
    """Each variant's measured receipts, parsed and validated as the workflow does it."""
    base = tmp_path_factory.mktemp("muxer")
    measured = {}
    for variant in ("recorded-muxer", "recorded-muxer-mplex"):
        (run,) = parsed_copies([RECORDED / variant / RUN], base / variant)
        every = pd.read_parquet(run / layout.RECEIPTS)
        measured[variant] = every[~every["warmup"]]
    return measured


def test_the_runs_record_which_muxer_their_nodes_offered_first():
    chosen = {variant: yaml.safe_load((RECORDED / variant / RUN / "config.yaml").read_text())["libp2p"]["stream_muxer"]
              for variant in ("recorded-muxer", "recorded-muxer-mplex")}
    assert chosen == {"recorded-muxer": None, "recorded-muxer-mplex": "mplex"}


def test_yamux_holds_every_message_back_one_round_trip_for_its_window(receipts):
    """A 500 KB copy is larger than yamux's window: after the first 256 KiB the sender waits for the
    receiver's window update, one round trip of the link. mplex has no window, so the first copy of
    each message arrives a round trip sooner, and the rest of the run then follows from that."""
    assert receipts["recorded-muxer"]["size_bytes"].iloc[0] > YAMUX_WINDOW_BYTES
    first = {variant: at.groupby("msg_hash")["received_ns"].min() - at.groupby("msg_hash")["publish_ns"].min()
             for variant, at in receipts.items()}
    held_back_ms = (first["recorded-muxer"].sort_index().to_numpy()
                    - first["recorded-muxer-mplex"].sort_index().to_numpy()) / 1e6
    assert len(held_back_ms) == 3
    assert all(abs(held_back - ROUND_TRIP_MS) < 0.05 * ROUND_TRIP_MS for held_back in held_back_ms)


def test_both_muxers_deliver_every_message_to_every_node(receipts):
    for at in receipts.values():
        assert at.groupby("msg_hash")["receiver"].nunique().tolist() == [19, 19, 19]
    assert receipts["recorded-muxer-mplex"]["latency_ms"].max() < receipts["recorded-muxer"]["latency_ms"].max()
