"""The paper's model: Equation 2 in both published forms and with a flooding publisher, Equation 1."""

import pytest

from waku_shadow import checkout
from waku_shadow.analyse import model, scaling
from waku_shadow.configuration import loader


@pytest.mark.parametrize(
    "nodes, degree, expected",
    [
        # ceil(log((N-1)(D-2)/D + 1) / log(D-1)), computed by hand
        (1000, 6, 5),  # log(666.33)/log(5) = 4.04 -> 5, the paper's "h_max = 5"
        (1000, 8, 4),  # log(749.5)/log(7) = 3.40
        (10_000, 6, 6),  # log(6667.67)/log(5) = 5.47
        (100_000, 12, 5),  # log(83333.5)/log(11) = 4.73
        (8, 2, 4),  # ring: ceil(7/2)
    ],
)
def test_equation2_paper_form(nodes, degree, expected):
    assert model.hmax_paper(nodes, degree) == expected


@pytest.mark.parametrize("nodes, degree, expected", [(1000, 6, 4), (10_000, 6, 6), (1000, 12, 3)])
def test_equation2_writeup_form(nodes, degree, expected):
    # ceil(log N / log D): log(1000)/log(6) = 3.86 -> 4, the write-up's "4 hops"
    assert model.hmax_writeup(nodes, degree) == expected


def test_flood_aware_hops_reduce_to_equation2_when_the_first_hop_is_d():
    for nodes in (100, 1000, 10_000):
        for degree in (3, 6, 9):
            assert model.hmax_flood(nodes, degree, degree) == model.hmax_paper(nodes, degree)
    # a publisher flooding 50 peers: log(999*4/50 + 1)/log(5) = 2.73 -> 3
    assert model.hmax_flood(1000, 6, 50) == 3


def test_transmission_is_the_one_way_latency_plus_serialisation():
    # 150 ms one-way; 2000 B at 100 Mbit: 16 000 bit / 1e8 bit/s = 0.16 ms
    assert model.transmission_ns(150_000_000, 2000, 100_000_000) == pytest.approx(150_160_000)
    # 100 KB at 38 Mbit: 800 000 bit / 3.8e7 bit/s = 21.05 ms
    assert model.transmission_ns(100_000_000, 100_000, 38_000_000) == pytest.approx(100_000_000 + 800_000 / 38e6 * 1e9)


@pytest.mark.parametrize(
    "payload_bytes, expected",
    [
        (1360, 1500),  # 1360 + 100 B of framing fill one 1460-byte segment, 1500 B with its headers
        (2000, 2100 * 1500 / 1460),  # 2157.5 B
        (100_000, 100_100 * 1500 / 1460),  # 102 842.5 B
    ],
)
def test_wire_bytes_add_framing_and_tcp_ip_headers(payload_bytes, expected):
    assert model.wire_bytes(payload_bytes) == pytest.approx(expected)


def _line_study():
    from waku_shadow.configuration import loader

    return loader.resolve(
        {
            "study": "line",
            "network": {"nodes": 4, "peers_per_node": 1, "latency": "50 ms", "bandwidth_up": "10 Mbit", "bandwidth_down": "10 Mbit"},
            "traffic": {"publishers": 1, "message_sizes": ["100 KB"]},
            "rln": {"proof_generation": "100 ms", "verification": "10 ms"},
        }
    )


def test_predict_along_a_hand_built_path():
    """p floods x then a; a relays to b. 100 KB at 10 Mbit: one copy = 100100 B x 1500/1460 x 8 / 10 Mbit."""
    import pandas as pd

    study = _line_study()
    copy_ms = 100_100 * 1500 / 1460 * 8 / 10e6 * 1e3  # 82.27 ms
    receipts = pd.DataFrame(
        {
            "msg_hash": "h", "message": 0, "publisher": "p",
            "receiver": ["x", "a", "b"], "from_host": ["p", "p", "a"], "hop": [1, 1, 2],
        }
    )
    sends = pd.DataFrame(
        {"sender": ["p", "p", "a"], "msg_hash": "h", "to_host": ["x", "a", "b"], "send_rank": [1, 2, 1]}
    )
    got = model.predict(receipts, sends, study, window_bytes=1 << 30)
    hop_ms = 50 + copy_ms + 10
    assert list(got["eq1_ms"]) == pytest.approx([100 + hop_ms, 100 + hop_ms, 100 + 2 * hop_ms])
    # a's copy waits behind x's on p's uplink; b's path adds a's single copy
    assert list(got["eq1_uplink_ms"]) == pytest.approx(
        [100 + 50 + copy_ms + 10, 100 + 50 + 2 * copy_ms + 10, 100 + 50 + 2 * copy_ms + 10 + 50 + copy_ms + 10]
    )
    # with a window of 60 KB the 100 KB message needs one more round trip (100 ms) per hop,
    # which hides the queueing of a's copy (one copy, 82 ms, < one round trip)
    windowed = model.predict(receipts, sends, study, window_bytes=60_000)
    assert list(windowed["eq1_window_ms"]) == pytest.approx(
        [100 + 50 + copy_ms + 100 + 10, 100 + 50 + copy_ms + 100 + 10, 100 + 2 * (50 + copy_ms + 100 + 10)]
    )


def test_the_scaling_study_is_set_beside_the_best_topology_of_each_n():
    """configs/scaling.yaml: D = 6, L_g 276 ms, L_v 4.5 ms, 2 KB on its 75 ms link at 100 Mbit."""
    lines = scaling.model_lines(loader.load(checkout.path("configs/scaling.yaml"))).set_index("nodes")
    assert lines["eq2_hops"].to_dict() == {250: 4, 500: 4, 1000: 5, 2000: 5}
    per_hop_ms = 75 + model.wire_bytes(2000) * 8 / 100e6 * 1e3 + 4.5
    assert lines.loc[1000, "eq1_latency_ms"] == pytest.approx(276 + 5 * per_hop_ms)
    assert lines.loc[250, "eq1_latency_ms"] == pytest.approx(276 + 4 * per_hop_ms)
