"""What each message costs in bandwidth: bytes on the wire, copies sent, duplicates, amplification."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.analyse import stats
from waku_shadow.configuration.study import Study
from waku_shadow.parse import pcap


def interval_start(time_s: float, interval_s: float) -> float:
    """The start of the traffic table's interval that holds ``time_s``."""
    return time_s // interval_s * interval_s


def measured_sends(sends: pd.DataFrame, measured: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """The sends of the measured messages, and each measured message's publisher by its hash."""
    publisher = measured.drop_duplicates("msg_hash").set_index("msg_hash")["publisher"]
    return sends[sends["msg_hash"].isin(publisher.index)], publisher


def relay_copies(sends: pd.DataFrame, measured: pd.DataFrame) -> float:
    """The mean copies a node sends of a measured message it relays (its publisher's sends left out):
    about its mesh less the peer the message came from, so how wide the delivery tree branches."""
    relayed, publisher = measured_sends(sends, measured)
    relayed = relayed[relayed["sender"] != relayed["msg_hash"].map(publisher)]
    return float(relayed.groupby(["sender", "msg_hash"]).size().mean())


def copies_to_publisher(sends: pd.DataFrame, measured: pd.DataFrame) -> float:
    """The copies per measured message that relays sent back to its own publisher: all that IDONTWANT
    on publish (gossipsub.idontwant_on_publish) can withhold."""
    sent, publisher = measured_sends(sends, measured)
    return float((sent["to_host"] == sent["msg_hash"].map(publisher)).sum() / len(publisher))


def one_way_copies(sends: pd.DataFrame, receipts: pd.DataFrame, measured: pd.DataFrame) -> float:
    """The copies per measured message that a relay pushes to a peer which had pushed the message on
    before the relay got it and pushes the relay nothing: the peer has the relay in its mesh, the relay
    not the peer (one-way mesh links, as gossipsub's rebalance leaves them; nwaku patch 0014).

    A push is a copy sent in the instant its sender first sent the message (a mesh peer's eager
    forward, not a later reply to IWANT); the publisher's own copies are left out."""
    sends, publisher = measured_sends(sends, measured)
    first_sent = sends.groupby(["sender", "msg_hash"])["sent_ns"].min().rename("first_sent_ns")
    pushes = sends.join(first_sent, on=["sender", "msg_hash"]).query("sent_ns == first_sent_ns")
    relayed = pushes[pushes["sender"] != pushes["msg_hash"].map(publisher)]
    received = receipts.set_index(["receiver", "msg_hash"])["received_ns"]
    copies = (relayed.join(received, on=["sender", "msg_hash"])
              .join(first_sent.rename("peer_pushed_ns"), on=["to_host", "msg_hash"])
              .merge(pushes[["sender", "to_host", "msg_hash"]].rename(columns={"sender": "to_host", "to_host": "sender"})
                     .assign(pushed_back=True), on=["sender", "to_host", "msg_hash"], how="left"))
    one_way = (copies["peer_pushed_ns"] < copies["received_ns"]) & copies["pushed_back"].isna()
    return float(one_way.sum() / len(publisher))


def withheld_copies(withheld: pd.DataFrame, measured: pd.DataFrame) -> float:
    """The copies relays left unsent per measured message, because the peer had said IDONTWANT
    or IMRECEIVING (nwaku patch 0016's lines)."""
    messages = measured["msg_hash"].unique()
    return float(withheld["msg_hash"].isin(messages).sum() / len(messages))


def host_bandwidths_bps(run_dir: Path, study: Study) -> tuple[pd.Series, pd.Series]:
    """Each host's uplink and downlink by its bandwidth class (identities.csv), or the study's one bandwidth."""
    hosts = pd.read_csv(run_dir / layout.IDENTITIES, keep_default_na=False).set_index("host")
    if not study.bandwidth_classes:
        return (pd.Series(study.bandwidth_up_bps, index=hosts.index), pd.Series(study.bandwidth_down_bps, index=hosts.index))
    classes = {c.name: c for c in study.bandwidth_classes}
    return (hosts["bandwidth_class"].map(lambda name: classes[name].up_bps),
            hosts["bandwidth_class"].map(lambda name: classes[name].down_bps))


def publisher_busy_ms(busy: pd.DataFrame, publishes: pd.DataFrame, stop_s: float, interval_s: float,
                      uplinks_bps: pd.Series) -> pd.Series:
    """Per message, how long its publisher's uplink was busy sending (idle traffic subtracted):
    the bytes it sent from the publish to the next message's, at its upload rate (``uplinks_bps`` by host)."""
    publisher = publishes.set_index("message")["publisher"]
    busy_ms = {}
    for message, window in message_windows(busy, publishes, stop_s, interval_s):
        sent = window.loc[window["node"] == publisher[message], "bytes_out"].sum()
        busy_ms[message] = sent * 8 / uplinks_bps[publisher[message]] * 1000
    return pd.Series(busy_ms, name="publisher_busy_ms")


def message_windows(busy: pd.DataFrame, publishes: pd.DataFrame, stop_s: float, interval_s: float):
    """(message, the traffic from its publish to the next message's) of every message.

    Messages are published one at a time, an interval apart, so a message owns the traffic
    of the table's intervals from its publish to the next; the table's interval must be
    shorter than the time between messages.
    """
    order = publishes.sort_values("publish_ns")
    starts = [interval_start(ns / 1e9, interval_s) for ns in order["publish_ns"]]
    ends = starts[1:] + [interval_start(stop_s, interval_s)]
    for message, start, end in zip(order["message"], starts, ends):
        yield message, busy[(busy["time_s"] >= start) & (busy["time_s"] < end)]


def message_wire_bytes(busy: pd.DataFrame, publishes: pd.DataFrame, stop_s: float, interval_s: float) -> pd.Series:
    """Bytes all nodes sent (idle traffic subtracted) from each message's publish to the next one's."""
    sent = {message: window["bytes_out"].sum() for message, window in message_windows(busy, publishes, stop_s, interval_s)}
    return pd.Series(sent, name="wire_bytes")


def amplification(
    receipts: pd.DataFrame, sends: pd.DataFrame, publishes: pd.DataFrame, busy: pd.DataFrame, stop_s: float, interval_s: float
) -> pd.DataFrame:
    """Per message: receivers, copies sent (nwaku's "sent relay message"), duplicates per receiver,
    wire bytes, and amplification = wire bytes / (payload x receivers).

    An amplification of 1 would mean every receiver got the payload exactly once and nothing
    else crossed the wire; the paper approximates it by D.
    """
    per_message = receipts.groupby(["msg_hash", "message", "size_bytes", "warmup"]).size().rename("receivers").reset_index()
    copies = sends.groupby("msg_hash").size().rename("copies_sent")
    per_message = per_message.join(copies, on="msg_hash")
    per_message["duplicates_per_receiver"] = per_message["copies_sent"] / per_message["receivers"] - 1
    per_message = per_message.join(message_wire_bytes(busy, publishes, stop_s, interval_s), on="message")
    per_message["amplification"] = per_message["wire_bytes"] / (per_message["size_bytes"] * per_message["receivers"])
    return per_message


def busy_traffic(run_dir, study, publishes: pd.DataFrame) -> pd.DataFrame:
    """The run's traffic from the first publish on, each node's idle rate (measured over the
    second half of bootstrap) subtracted."""
    table = pd.read_parquet(run_dir / layout.TRAFFIC)
    interval_s = study.traffic_interval_ns / 1e9
    return pcap.without_idle(
        table,
        idle_from_s=interval_start(study.bootstrap_ns / 2e9, interval_s),
        first_publish_s=interval_start(publishes["publish_ns"].min() / 1e9, interval_s),
        interval_s=interval_s,
    )


def run_amplification(run_dir, study) -> pd.DataFrame:
    """Amplification of every message of one run."""
    receipts = pd.read_parquet(run_dir / layout.RECEIPTS)
    sends = pd.read_parquet(run_dir / layout.SENDS)
    publishes = pd.read_parquet(run_dir / layout.PUBLISHES)
    busy = busy_traffic(run_dir, study, publishes)
    return amplification(receipts, sends, publishes, busy, study.stop_time_ns / 1e9, study.traffic_interval_ns / 1e9)


def run_cost(run_dir: Path, study: Study) -> dict:
    """What one run's messages cost the network: messages and payload published, net bytes (in +
    out over all nodes from the first publish on, idle traffic subtracted, as the Docker
    evaluation counted them), and the mean amplification, duplicates and publisher's busy uplink
    of measured messages."""
    publishes = pd.read_parquet(run_dir / layout.PUBLISHES)
    busy = busy_traffic(run_dir, study, publishes)
    per_message = pd.read_parquet(run_dir / layout.AMPLIFICATION)
    measured = stats.measured(per_message)
    net_bytes = float(busy["bytes_in"].sum() + busy["bytes_out"].sum())
    return {
        "messages_published": len(publishes),
        "payload_bytes": study.message_sizes[0] * len(publishes),
        "net_bytes": net_bytes,
        "net_bytes_per_message": net_bytes / len(publishes),
        "amplification": float(measured["amplification"].mean()),
        "duplicates_per_receiver": float(measured["duplicates_per_receiver"].mean()),
        "publisher_busy_ms": float(publisher_busy_ms(
            busy, publishes, study.stop_time_ns / 1e9, study.traffic_interval_ns / 1e9,
            host_bandwidths_bps(run_dir, study)[0])[measured["message"]].mean()),
    }


def fit_axis(study: Study) -> str | None:
    """What a study's net bytes are fitted against: the messages published when it sweeps their
    number, the payload published when it runs several sizes, nothing otherwise (a D, load or churn sweep)."""
    if study.sweep is not None:
        counts = ("traffic.publishers", "traffic.messages_per_publisher")
        return "messages_published" if study.sweep.parameter in counts else None
    return "payload_bytes" if len(study.message_sizes) > 1 else None
