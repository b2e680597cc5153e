"""Residuals, per-hop times and first hops on the recorded real runs (100 ms, 38/83 Mbit)."""

import pandas as pd
import pytest
import csv
from collections import Counter

from recorded import RUNS, parsed_copies, raw_first_hops, raw_records

from waku_shadow import layout
from waku_shadow.analyse import bandwidth, gossip, hops, residuals, study_tables
from waku_shadow.paper import compare


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The recorded runs, parsed by the CLI as the workflow parses them (adds hops)."""
    return parsed_copies(RUNS, tmp_path_factory.mktemp("runs"), validate=False)


@pytest.fixture(scope="module")
def receipts(runs):
    return pd.concat([residuals.run_receipts(run) for run in runs], ignore_index=True)


def test_equation1_with_uplink_explains_small_messages(receipts):
    summary = residuals.residual_summary(receipts, ["size_bytes"]).set_index(["size_bytes", "model"])
    # 2 KB: a hop is 100 ms + 12 ms + 0.4 ms per copy on a 38 Mbit uplink; queued copies
    # are all Equation 1 misses (a few ms), and the uplink term leaves under a ms
    assert 1.0 < summary.loc[(2000, "Equation 1 as written"), "median_abs_residual_ms"] < 5.0
    assert summary.loc[(2000, "+ uplink serialisation"), "median_abs_residual_ms"] < 1.0
    # 100 KB at 38 Mbit up: 22 ms per copy; the publisher's flood queues copies, which only the
    # uplink term sees
    paper = summary.loc[(100000, "Equation 1 as written"), "median_abs_residual_ms"]
    uplink = summary.loc[(100000, "+ uplink serialisation"), "median_abs_residual_ms"]
    assert uplink < paper / 5
    assert set(summary.index.get_level_values("model")) == set(residuals.MODELS.values())


def test_residuals_by_hop_cover_every_measured_receipt(receipts):
    by_hop = residuals.residual_summary(receipts, ["size_bytes", "hop"])
    per_model = by_hop.groupby("model")["receipts"].sum()
    assert (per_model == (~receipts["warmup"]).sum()).all()


def test_per_hop_table_adds_up(receipts, runs):
    publishes = pd.concat([study_tables.run_table(run, layout.PUBLISHES) for run in runs])
    table = hops.per_hop_table(receipts, publishes, {2000: 12.0, 100000: 12.0})
    small = table[table["size_bytes"] == 2000].set_index(["component", "hop"])["mean_ms"]
    assert small[("L_g", 0)] == pytest.approx(150, abs=2)
    assert small[("L_v", 1)] == 12.0
    # at 2 KB a hop's transmission is the 100 ms one-way latency and a little serialisation
    assert small[("L_t", 1)] == pytest.approx(100, abs=3)
    measured = receipts[(~receipts["warmup"]) & (receipts["size_bytes"] == 2000)]
    assert small[("total", int(measured["hop"].max()))] == pytest.approx(measured["latency_ms"].mean())


def test_first_hops_count_the_flood(receipts, runs):
    sends = pd.concat([study_tables.run_table(run, layout.SENDS) for run in runs])
    first = hops.first_hops(receipts, sends)
    assert len(first) == 14  # 7 messages (1 warm-up + 3 publishers x 2) in each run
    for run in runs:  # the copies each publisher sent, and the receipts straight from it, in the raw logs
        ours = first[first["run"] == run.name]
        assert dict(zip(ours["msg_hash"], zip(ours["publisher_sent_to"], ours["first_hop_receivers"]))) == raw_first_hops(run)


def test_equation2_table_observes_measured_messages_only(runs, receipts):
    from waku_shadow.configuration import loader

    study = loader.load(runs[0] / "config.yaml")
    sends = pd.concat([study_tables.run_table(run, layout.SENDS) for run in runs], ignore_index=True)
    first = hops.first_hops(receipts, sends)
    table = compare.equation2_table(study, receipts, first).set_index("size")
    measured = receipts[~receipts["warmup"]]
    assert table.loc["2 KB", "observed max"] == measured.loc[measured["size_bytes"] == 2000, "hop"].max()
    deeper_warmup = receipts.copy()
    deeper_warmup.loc[deeper_warmup["warmup"].idxmax(), "hop"] = 99  # a warm-up receipt far down a tree
    assert compare.equation2_table(study, deeper_warmup, first)["observed max"].max() < 99
    deeper_measured = receipts.copy()
    deeper_measured.loc[(~deeper_measured["warmup"]).idxmax(), "hop"] = 99
    assert compare.equation2_table(study, deeper_measured, first)["observed max"].max() == 99


def test_a_copy_sent_long_after_its_sender_had_it_was_pulled_by_gossip():
    # publisher p publishes m at 0 ms; a gets it straight away, b from a at once (a mesh push),
    # c from a 800 ms after a had it (IHAVE at a heartbeat, IWANT, the reply)
    ms = 1_000_000
    receipts = pd.DataFrame({
        "msg_hash": ["m"] * 3, "publisher": ["p"] * 3, "receiver": ["a", "b", "c"], "from_host": ["p", "a", "a"],
        "publish_ns": [0] * 3, "received_ns": [80 * ms, 160 * ms, 960 * ms]})
    sends = pd.DataFrame({"msg_hash": ["m"] * 4, "sender": ["p", "a", "a", "a"], "to_host": ["a", "b", "c", "c"],
                          "sent_ns": [0, 80 * ms, 880 * ms, 900 * ms]})
    assert gossip.pulled_by_gossip(receipts, sends).tolist() == [False, False, True]


@pytest.mark.parametrize("run", RUNS, ids=lambda run: run.name)
def test_relay_copies_count_what_relays_sent_of_measured_messages(tmp_path, run):
    """The raw "sent relay message" lines per relaying node and measured message, the publisher's own left out."""
    with open(run / "schedule.csv") as handle:
        schedule = list(csv.DictReader(handle))
    publisher = {row["msg_hash"]: row["publisher"] for row in schedule if row["warmup"] == "False"}
    per_relay = Counter((host, r["msg_hash"]) for host, r in raw_records(run, "sent relay message")
                        if r["msg_hash"] in publisher and host != publisher[r["msg_hash"]])
    (copy,) = parsed_copies([run], tmp_path)
    assert study_tables.run_metrics(copy)["relay_copies"] == pytest.approx(sum(per_relay.values()) / len(per_relay))


def test_copies_to_publisher_are_the_sends_of_a_message_to_its_own_publisher():
    """q's message m1 goes back to q once; p's m2 never goes back to p; a warm-up message is not measured."""
    measured = pd.DataFrame({"msg_hash": ["m1", "m1", "m2"], "publisher": ["q", "q", "p"]})
    sends = pd.DataFrame({"msg_hash": ["m1", "m1", "m1", "m2", "m2", "w"], "sender": ["q", "a", "b", "p", "a", "a"],
                          "to_host": ["a", "b", "q", "a", "b", "p"]})
    assert bandwidth.copies_to_publisher(sends, measured) == 0.5
    assert bandwidth.copies_to_publisher(sends[sends["to_host"] != "q"], measured) == 0.0


def test_one_way_copies_are_pushes_to_a_peer_that_pushed_on_before_and_sent_nothing_back():
    """p publishes to a and b. b pushes to d at once; a, later, pushes to b and c. b had pushed on before
    a had the message and pushes a nothing (b has not a in its mesh, a has b): a's copy to b is one-way.
    Then b's push reaches a too (no one-way copy), or b sends a a copy later, an IWANT reply (still one)."""
    ms = 1_000_000
    receipts = pd.DataFrame({"msg_hash": ["m"] * 4, "publisher": ["p"] * 4, "warmup": [False] * 4,
                             "receiver": ["a", "b", "c", "d"], "received_ns": [90 * ms, 10 * ms, 100 * ms, 20 * ms]})
    sends = pd.DataFrame({"msg_hash": ["m"] * 6, "sender": ["p", "p", "a", "a", "b", "c"],
                          "to_host": ["a", "b", "b", "c", "d", "d"],
                          "sent_ns": [0, 0, 90 * ms, 90 * ms, 10 * ms, 100 * ms]})
    assert bandwidth.one_way_copies(sends, receipts, receipts) == 1.0
    b_to_a = {"msg_hash": ["m"], "sender": ["b"], "to_host": ["a"]}
    pushed_back = pd.concat([sends, pd.DataFrame({**b_to_a, "sent_ns": [10 * ms]})])
    assert bandwidth.one_way_copies(pushed_back, receipts, receipts) == 0.0
    sent_back_later = pd.concat([sends, pd.DataFrame({**b_to_a, "sent_ns": [500 * ms]})])
    assert bandwidth.one_way_copies(sent_back_later, receipts, receipts) == 1.0
