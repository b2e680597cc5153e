"""Delivery trees rebuilt from the recorded real runs."""

import re

import pandas as pd
import pytest
from conftest import RECORDED
from recorded import RUN_2KB, RUN_100KB, RUNS, copy_run

from waku_shadow.analyse import hops
from waku_shadow.errors import LogError, ValidationError
from waku_shadow.parse import node_logs, trees

SWEEP_RUNS = sorted((RECORDED / "recorded-sweep").iterdir())


@pytest.fixture(scope="module", params=RUNS, ids=lambda r: r.name)
def receipts(request):
    frame = node_logs.parse_run(request.param)["receipts"]
    frame["hop"] = trees.hops(frame)
    return frame


def test_every_receiver_is_reached_once_with_hops_from_one(receipts):
    assert not receipts.duplicated(["message", "receiver"]).any()
    assert receipts["hop"].min() == 1
    direct = receipts["from_host"] == receipts["publisher"]
    assert (receipts.loc[direct, "hop"] == 1).all() and (receipts.loc[~direct, "hop"] > 1).all()


def test_parents_receive_before_their_children(receipts):
    got = receipts.set_index(["message", "receiver"])["received_ns"]
    relayed = receipts[receipts["hop"] > 1]
    parent_times = got.loc[list(zip(relayed["message"], relayed["from_host"]))].to_numpy()
    assert (parent_times < relayed["received_ns"].to_numpy()).all()
    # a child is one hop further than its parent
    hop = receipts.set_index(["message", "receiver"])["hop"]
    parent_hops = hop.loc[list(zip(relayed["message"], relayed["from_host"]))].to_numpy()
    assert (relayed["hop"].to_numpy() == parent_hops + 1).all()


def test_hop_histogram(receipts):
    histogram = hops.hop_histogram(receipts)
    assert histogram["receipts"].sum() == 15 * 6


def test_a_link_to_a_node_that_never_received_is_named():
    frame = node_logs.parse_run(RUN_2KB)["receipts"]
    relayed = frame.index[frame["from_host"] != frame["publisher"]][0]
    dropped_parent = frame.loc[relayed, "from_host"]
    message = frame.loc[relayed, "message"]
    broken = frame.drop(frame.index[(frame["message"] == message) & (frame["receiver"] == dropped_parent)])
    with pytest.raises(ValidationError, match=f"message {message}: .* got it from {dropped_parent}, which never received it"):
        trees.hops(broken)


def test_a_cycle_is_named():
    frame = pd.DataFrame(
        {"message": 0, "publisher": "p", "receiver": ["a", "b"], "from_host": ["b", "a"], "received_ns": [1, 2]}
    )
    with pytest.raises(ValidationError, match="message 0: delivery links form a cycle"):
        trees.hops(frame)


def test_a_child_before_its_parent_is_named():
    frame = pd.DataFrame(
        {"message": 0, "publisher": "p", "receiver": ["a", "b"], "from_host": ["p", "a"], "received_ns": [5, 3]}
    )
    with pytest.raises(ValidationError, match="message 0: b received it at 3 ns from a, which only received it at 5 ns"):
        trees.hops(frame)


def test_ambiguous_short_ids_fail_loudly(tmp_path):
    run = copy_run(RUN_2KB, tmp_path)
    identities = pd.read_csv(run / "identities.csv")
    identities.loc[1, "short_peer_id"] = identities.loc[0, "short_peer_id"]
    identities.to_csv(run / "identities.csv", index=False)
    shared = re.escape(identities.loc[0, "short_peer_id"])
    with pytest.raises(LogError, match=f"short peer ID {shared} is shared by node0000, node0001"):
        node_logs.parse_run(run)


@pytest.mark.parametrize("run", RUNS + SWEEP_RUNS, ids=lambda r: r.name)
def test_latency_steps_give_the_trees_hops_where_they_show_steps(run):
    receipts = node_logs.parse_run(run)["receipts"]
    measured = receipts[~receipts["warmup"]]
    inferred = hops.hops_from_latency_steps(measured["latency_ms"])
    if run == RUN_100KB:
        # 100 KB copies queue on a 38 Mbit uplink for 21 ms each: one hop's receipts spread
        # over more than a hop (hop 1 reaches 526 ms, hop 2 starts at 416), so no steps to read
        assert inferred is None
    else:
        assert (inferred == trees.hops(measured)).all()


def test_latency_steps_need_separated_equal_steps():
    steps = pd.Series([300.0, 301, 302, 400, 401, 402, 403, 500, 501])
    assert list(hops.hops_from_latency_steps(steps)) == [1, 1, 1, 2, 2, 2, 2, 3, 3]
    assert hops.hops_from_latency_steps(pd.Series([300.0, 301, 302])) is None  # one group: nothing to tell hops by
    assert hops.hops_from_latency_steps(pd.Series(range(300, 900, 7), dtype=float)) is None  # no gaps
    # groups two and three 100 ms apart, but the third 180 ms after the second: not one step
    assert hops.hops_from_latency_steps(pd.Series([300.0, 301, 400, 401, 580, 581])) is None
    # the last group runs on for more than a step: later hops without a gap between them
    assert hops.hops_from_latency_steps(pd.Series([300.0, 301, 400, 401, *range(500, 620, 10)])) is None
    # a lone straggler is not a hop: it holds less than 1 % of the receipts
    lone = pd.Series([300.0] * 60 + [400.0] * 60 + [700.0])
    assert hops.hops_from_latency_steps(lone) is None
    assert hops.hops_from_latency_steps(lone, min_share=0.005) is None  # and 300 ms after the last step


def test_relayed_hop_times_worked_by_hand():
    # P publishes at 0; A hears P at 80 ms (hop 1, not relayed); B and C hear A at 160 and 161 ms,
    # D hears B at 240 ms: relayed hops of 80, 81 and 80 ms; the warm-up's receipt is left out
    def receipt(receiver, from_host, hop, received_ms, warmup=False):
        return {"run": "r", "msg_hash": "w" if warmup else "m", "size_bytes": 2000, "publisher": "P",
                "publish_ns": 0, "receiver": receiver, "from_host": from_host, "hop": hop,
                "received_ns": int(received_ms * 1e6), "warmup": warmup}

    receipts = pd.DataFrame([receipt("A", "P", 1, 80), receipt("B", "A", 2, 160), receipt("C", "A", 2, 161),
                             receipt("D", "B", 3, 240), receipt("A", "P", 1, 80, warmup=True),
                             receipt("B", "A", 2, 190, warmup=True)])
    times = hops.relay_hop_times(receipts).iloc[0]
    assert (times["relayed_hops"], times["median_ms"], times["commonest_ms"]) == (3, 80.0, 80.0)
    assert times["p95_ms"] == pytest.approx(80.9) and times["commonest_share"] == pytest.approx(2 / 3)
