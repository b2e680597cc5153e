"""The light clients' records (nwaku patch 0039): filter receipts at clients, lightpushes at service nodes.

* ``received filter push``: a light client got a message from its service node's filter;
  ``receivedTime`` in ns.
* ``handling lightpush request``: a service node got a client's lightpush (nwaku's own NOTICE
  line); ``receivedTime`` in ns, ``peer_id`` the client.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from waku_shadow.errors import LogError
from waku_shadow.render.identities import short_peer_id
from waku_shadow.render.nwaku import CONTENT_TOPIC, SIMULATION_EPOCH_NS

FILTER_RECEIVED = "received filter push"
LIGHTPUSH_HANDLED = "handling lightpush request"
READ = (FILTER_RECEIVED, LIGHTPUSH_HANDLED)
TABLES = ("filter_receipts", "lightpushes")
FILTER_COLUMNS = ["msg_hash", "message", "warmup", "spam", "size_bytes", "payload_bytes", "publisher", "light_client",
                  "receiver", "from_peer", "from_host", "intent_ns", "publish_ns", "received_ns", "latency_ms"]
LIGHTPUSH_COLUMNS = ["msg_hash", "message", "service_node", "client", "received_ns"]
CLIENT_COLUMNS = ["role", "service_node", "lightpush_node", "store_node", "content_topics"]


def clients(identities: pd.DataFrame) -> pd.DataFrame:
    """identities.csv's light clients, with their service nodes (service_node, its filter's;
    lightpush_node, store_node) and content_topics (comma-separated); none in a run rendered before
    light clients, whose identities.csv has no role column. In a run rendered before those columns,
    each client used its service_node for all three protocols and the one content topic."""
    if "role" not in identities:
        return identities.iloc[:0].assign(**{column: pd.Series(dtype=object) for column in CLIENT_COLUMNS})
    light = identities[identities["role"] == "light"]
    return light.assign(lightpush_node=light.get("lightpush_node", light["service_node"]),
                        store_node=light.get("store_node", light["service_node"]),
                        content_topics=light.get("content_topics", CONTENT_TOPIC))


def subscribed(messages: pd.DataFrame, clients: pd.DataFrame) -> pd.MultiIndex:
    """The (message, receiver) pairs the clients' subscriptions cover: each of ``messages``
    (columns message and content_topic) at every client subscribed to its topic."""
    topics = clients[["host", "content_topics"]].assign(content_topic=clients["content_topics"].str.split(","))
    pairs = messages[["message", "content_topic"]].merge(topics.explode("content_topic"), on="content_topic")
    pairs = pairs.sort_values(["message", "host"])
    return pd.MultiIndex.from_arrays([pairs["message"], pairs["host"]], names=["message", "receiver"])


def row(host: str, record: dict) -> tuple[str, dict]:
    """The table one record goes to, and its row."""
    time_ns = int(record["receivedTime"]) - SIMULATION_EPOCH_NS
    if record["msg"] == FILTER_RECEIVED:
        return "filter_receipts", {"receiver": host, "from_peer": record["from_peer_id"], "msg_hash": record["msg_hash"],
                                   "received_ns": time_ns, "payload_bytes": int(record["payloadSizeBytes"])}
    return "lightpushes", {"service_node": host, "client_peer": record["peer_id"], "msg_hash": record["msg_hash"],
                           "received_ns": time_ns}


def tables(records: dict[str, list[dict]], identities: pd.DataFrame, publishes: pd.DataFrame,
           run_dir: Path) -> dict[str, pd.DataFrame]:
    """filter_receipts (one row per message a client's filter delivered, with its latency from the
    publisher's intent) and lightpushes (one row per push a service node handled)."""
    host_of = {**dict(zip(identities["short_peer_id"], identities["host"])),
               **dict(zip(identities["peer_id"], identities["host"]))}
    known = publishes.set_index("msg_hash")
    receipts = pd.DataFrame(records["filter_receipts"], columns=["receiver", "from_peer", "msg_hash", "received_ns", "payload_bytes"])
    _require_scheduled(receipts, known, "filter", run_dir)
    receipts["from_host"] = receipts["from_peer"].map(host_of)
    receipts = receipts.join(known[["message", "warmup", "spam", "size_bytes", "publisher", "light_client", "intent_ns",
                                    "publish_ns"]], on="msg_hash")
    receipts["latency_ms"] = (receipts["received_ns"] - receipts["intent_ns"]) / 1e6
    receipts = receipts[FILTER_COLUMNS].sort_values(["message", "received_ns", "receiver"], ignore_index=True)

    pushes = pd.DataFrame(records["lightpushes"], columns=["service_node", "client_peer", "msg_hash", "received_ns"])
    _require_scheduled(pushes, known, "lightpushed", run_dir)
    pushes["client"] = pushes.pop("client_peer").map(lambda peer: host_of.get(peer, host_of.get(short_peer_id(peer))))
    pushes = pushes.join(known[["message"]], on="msg_hash")[LIGHTPUSH_COLUMNS].sort_values("message", ignore_index=True)
    return {"filter_receipts": receipts, "lightpushes": pushes}


def _require_scheduled(frame: pd.DataFrame, known: pd.DataFrame, what: str, run_dir: Path) -> None:
    unknown = sorted(set(frame["msg_hash"]) - set(known.index))
    if unknown:
        raise LogError(f"{run_dir}: {len(unknown)} {what} message hashes are not in the schedule, e.g. {unknown[0]}")
