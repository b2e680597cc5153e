"""Per-node logs: collecting them out of Shadow's data directory and parsing them into tables.

nwaku runs with ``--log-format=JSON``: one JSON object per line. Three
messages are read:

* ``publish intent`` (nwaku-patches/0001): the publisher's REST handler got the
  message; ``intentTime`` is the moment of intent, before L_g is slept.
* ``received relay message`` with ``from_peer_id = rest``: the publisher hands
  the message to gossipsub (after L_g).
* ``received relay message`` from a peer: the node accepted a message (after
  its validators, so after L_v); ``receivedTime`` is nwaku's clock in ns.
* ``sent relay message``: one line per peer a message is sent to.
* ``rln stand-in rejected message`` (nwaku-patches/0011, with rln.epoch): the node's
  stand-in for RLN's validator rejected a message, and why (spam, invalid proof, ...).
* ``pruning negative score peer`` and ``disconnecting bad score peer`` (0011, at NOTICE
  with rln.epoch): gossipsub's scoring pruned a peer from the mesh or disconnected it.
* ``withheld relay copy`` (0016): a relay left a copy unsent because the peer had said
  IDONTWANT, or (gossipsub v1.4) IMRECEIVING. Its ``msg_hash`` is gossipsub's message id
  (nwaku's: sha256 of the encoded message), which the message lines give in short as ``msg_id``.
* Light clients (0039): ``lightpush intent`` (a client's intent, like ``publish intent``),
  ``received relay message`` from ``lightpush`` (its service node hands the message to relay,
  like ``rest``), ``handling lightpush request`` (the service node got the push) and
  ``received filter push`` (a client's receipt), read by parse/light_clients.py.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.errors import LogError
from waku_shadow.parse import light_clients, store_queries, topology_events
from waku_shadow.render import churn_plan
from waku_shadow.render import schedule as schedule_
from waku_shadow.render.nwaku import SIMULATION_EPOCH_NS
from waku_shadow.run.collect import NWAKU_LOG

INTENT = "publish intent"
RECEIVED = "received relay message"
SENT = "sent relay message"
REJECTED = "rln stand-in rejected message"
SCORE_EVENTS = {"pruning negative score peer": "pruned", "disconnecting bad score peer": "disconnected"}
WITHHELD = "withheld relay copy"
LIGHTPUSH_INTENT = "lightpush intent"
READ = (INTENT, RECEIVED, SENT, REJECTED, WITHHELD, *SCORE_EVENTS, LIGHTPUSH_INTENT, *light_clients.READ, *topology_events.READ)
RLN_EVENT_COLUMNS = ["host", "event", "msg_hash", "reason", "peer_id", "peer_host", "time_ns"]
WITHHELD_COLUMNS = ["sender", "to_peer", "to_host", "msg_hash", "reason", "time_ns"]
REST_SOURCE = "rest"
LIGHTPUSH_SOURCE = "lightpush"  # a service node hands a lightpushed message to relay (0039)
# Lines nwaku prints to stdout that are not log records: v0.37.1-beta's config builder
# echoes its shard setting once at start (waku/factory/conf_builder/waku_conf_builder.nim).
NWAKU_ECHOES = ("bSubscribeShards: ",)
# nim-chronicles before its "json: quote rfc timestamps" fix (the one nwaku v0.37.1-beta pins)
# writes a record's time unquoted: "ts":2000-01-01 00:00:20.475+00:00, which is not JSON.
UNQUOTED_TIMESTAMP = re.compile(r'"ts":(\d{4}-\d\d-\d\d [\d:.]+[+-]\d\d:\d\d),')


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Numbered lines of a (possibly gzipped) log; a cut-off final line raises LogError."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", errors="replace") as handle:
            number = 0
            for number, line in enumerate(handle, start=1):
                if not line.endswith("\n"):
                    raise LogError(f"{path}: line {number} is cut off (the log is truncated): {line[:120]!r}")
                yield number, line
    except (EOFError, gzip.BadGzipFile) as exc:
        raise LogError(f"{path}: the compressed log is truncated or corrupt ({exc})") from exc


def events(path: Path, kinds: tuple[str, ...] = READ) -> Iterator[dict]:
    """The records of one nwaku JSON log whose message starts with one of ``kinds`` (by default the
    intent / received / sent records and the other events the parse stage reads)."""
    for number, line in read_lines(path):
        text = line.strip()
        if not text or text.startswith(NWAKU_ECHOES):
            continue
        if not (text.startswith("{") and text.endswith("}")):
            raise LogError(f"{path}: line {number} is not a JSON log record: {text[:160]!r}")
        if not any('"msg":"' + kind in text for kind in kinds):
            continue
        try:
            record = json.loads(UNQUOTED_TIMESTAMP.sub(r'"ts":"\1",', text, count=1), object_pairs_hook=_first_key_wins)
        except json.JSONDecodeError as exc:
            raise LogError(f"{path}: line {number} is not valid JSON ({exc.msg})") from exc
        record["_line"] = number
        yield record


def _first_key_wins(pairs: list[tuple[str, object]]) -> dict:
    """chronicles repeats "msg" when a record has a field of that name; the first is the message."""
    record: dict = {}
    for key, value in pairs:
        record.setdefault(key, value)
    return record


def parse_host(path: Path, host: str) -> tuple[dict[str, list[dict]], dict[str, set]]:
    """The records one host logged, by table: receipts, publishes, sends, RLN events (rejections,
    prunes and disconnections for score), withheld copies, and the light clients' (filter receipts,
    lightpushes); and the message hashes of each short gossipsub message id its message lines name."""
    receipts, publishes, sends, rln_events, withheld, message_ids = [], [], [], [], [], {}
    light = {table: [] for table in light_clients.TABLES}
    topology = []
    for record in events(path):
        try:
            msg = record["msg"]
            if msg in topology_events.EVENTS:
                topology.append(topology_events.row(host, record, record_time_ns(record["ts"])))
            elif msg in light_clients.READ:
                table, row = light_clients.row(host, record)
                light[table].append(row)
            elif msg == REJECTED:
                rln_events.append({"host": host, "event": "rejected", "msg_hash": record["msg_hash"],
                                   "reason": record["reason"], "peer_id": None,
                                   "time_ns": int(record["rejectedTime"]) - SIMULATION_EPOCH_NS})
            elif msg == WITHHELD:
                withheld.append({"sender": host, "to_peer": record["to_peer"], "msg_id": short_message_id(record["msg_hash"]),
                                 "reason": record["reason"], "time_ns": record_time_ns(record["ts"])})
            elif msg in SCORE_EVENTS:
                rln_events.append({"host": host, "event": SCORE_EVENTS[msg], "msg_hash": None, "reason": None,
                                   "peer_id": record["peer_id"], "time_ns": record_time_ns(record["ts"])})
            elif msg == RECEIVED:
                message_ids.setdefault(record.get("msg_id"), set()).add(record["msg_hash"])
                row = {
                    "msg_hash": record["msg_hash"],
                    "time_ns": int(record["receivedTime"]) - SIMULATION_EPOCH_NS,
                    "payload_bytes": int(record["payloadSizeBytes"]),
                }
                if record["from_peer_id"] in (REST_SOURCE, LIGHTPUSH_SOURCE):
                    publishes.append({"host": host, "kind": "publish", **row})
                else:
                    receipts.append({"receiver": host, "from_peer": record["from_peer_id"], **row})
            elif msg == SENT:
                message_ids.setdefault(record.get("msg_id"), set()).add(record["msg_hash"])
                sends.append(
                    {
                        "sender": host,
                        "to_peer": record["to_peer_id"],
                        "msg_hash": record["msg_hash"],
                        "time_ns": int(record["sentTime"]) - SIMULATION_EPOCH_NS,
                    }
                )
            else:
                publishes.append(
                    {
                        "host": host,
                        "kind": "intent",
                        "msg_hash": record["msg_hash"],
                        "time_ns": int(record["intentTime"]) - SIMULATION_EPOCH_NS,
                        "payload_bytes": int(record["payloadSizeBytes"]),
                    }
                )
        except (KeyError, ValueError, TypeError) as exc:
            raise LogError(f"{path}: line {record['_line']} ({record.get('msg')!r}) lacks a usable field: {exc}") from exc
    tables = {"receipts": receipts, "publishes": publishes, "sends": sends, "rln_events": rln_events,
              "withheld": withheld, topology_events.TABLE: topology, **light}
    return tables, message_ids


def _message_hash(message_ids: dict[str, set], short: str, run_dir: Path) -> str:
    hashes = message_ids.get(short, set())
    if len(hashes) != 1:
        raise LogError(f"{run_dir}: a withheld copy names gossipsub message id {short}, which the message lines give "
                       + (f"to {len(hashes)} messages" if hashes else "to no message"))
    return next(iter(hashes))


def short_message_id(full: str) -> str:
    """A gossipsub message id ("0x" and hex) as nim-libp2p's shortLog writes it in nwaku's message
    lines: its first and last six bytes."""
    digits = full.removeprefix("0x")
    return f"{digits[:12]}...{digits[-12:]}" if len(digits) > 24 else digits


def record_time_ns(ts: str) -> int:
    """A chronicles timestamp ("2000-01-01 00:00:20.475+00:00", millisecond resolution) as
    simulated ns since the start of the run."""
    since_epoch = datetime.fromisoformat(ts) - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return since_epoch // timedelta(microseconds=1) * 1000 - SIMULATION_EPOCH_NS


def host_logs(run_dir: Path, hosts: list[str]) -> dict[str, Path]:
    logs = {}
    missing = []
    for host in hosts:
        path = run_dir / layout.LOGS / host / NWAKU_LOG
        if path.exists():
            logs[host] = path
        else:
            missing.append(host)
    if missing:
        raise LogError(
            f"{run_dir / layout.LOGS}: no nwaku log for {len(missing)} of {len(hosts)} hosts: "
            + ", ".join(missing[:10])
            + (" ..." if len(missing) > 10 else "")
        )
    return logs


def parse_run(run_dir: Path) -> dict[str, pd.DataFrame]:
    """Tidy tables of one run: receipts, publishes and sends, joined with the schedule; a message a
    node received again after it left and came back (churn) goes to receipts_again, its first
    receipt stays in receipts; receipts of spam go to spam_receipts, and the RLN stand-in's
    rejections and gossipsub's prunes and disconnections for score to rln_events; the copies
    relays withheld (IDONTWANT, IMRECEIVING) go to withheld; the light clients' filter receipts,
    lightpushes and store queries go to tables of their own."""
    identities = pd.read_csv(run_dir / layout.IDENTITIES)
    schedule = schedule_.read(run_dir)
    records: dict[str, list[dict]] = {}
    message_ids: dict[str, set] = {}
    for host, path in host_logs(run_dir, list(identities["host"])).items():
        tables, ids = parse_host(path, host)
        for name, rows in tables.items():
            records.setdefault(name, []).extend(rows)
        for short, hashes in ids.items():
            message_ids.setdefault(short, set()).update(hashes)
    receipts, publish_events, sends = records["receipts"], records["publishes"], records["sends"]
    rln_events, withheld = records["rln_events"], records["withheld"]

    short_to_host = short_id_map(identities)
    publishes = _publishes(schedule, pd.DataFrame(publish_events, columns=["host", "kind", "msg_hash", "time_ns", "payload_bytes"]))
    receipts_df = pd.DataFrame(receipts, columns=["receiver", "from_peer", "msg_hash", "time_ns", "payload_bytes"])
    unknown = sorted(set(receipts_df["msg_hash"]) - set(schedule["msg_hash"]))
    if unknown:
        raise LogError(f"{run_dir}: {len(unknown)} received message hashes are not in the schedule, e.g. {unknown[0]}")
    receipts_df = receipts_df.rename(columns={"time_ns": "received_ns"})
    receipts_df["from_host"] = receipts_df["from_peer"].map(short_to_host)
    receipts_df = receipts_df.merge(
        publishes[["msg_hash", "message", "warmup", "spam", "publisher", "size_bytes", "intent_ns", "publish_ns"]],
        on="msg_hash",
        how="left",
    )
    receipts_df["latency_ms"] = (receipts_df["received_ns"] - receipts_df["intent_ns"]) / 1e6
    receipts_df = receipts_df[
        [
            "msg_hash", "message", "warmup", "spam", "size_bytes", "payload_bytes", "publisher", "receiver",
            "from_peer", "from_host", "intent_ns", "publish_ns", "received_ns", "latency_ms",
        ]
    ].sort_values(["message", "received_ns", "receiver"], ignore_index=True)

    again = received_again(receipts_df, churn_plan.read(run_dir))
    receipts_again = receipts_df[again].reset_index(drop=True)
    receipts_df = receipts_df[~again]
    spam = receipts_df.pop("spam").astype(bool)
    spam_receipts = receipts_df[spam].reset_index(drop=True)
    receipts_df = receipts_df[~spam].reset_index(drop=True)
    receipts_again = receipts_again.drop(columns="spam")

    rln_events_df = pd.DataFrame(rln_events, columns=[c for c in RLN_EVENT_COLUMNS if c != "peer_host"])
    host_of_peer = dict(zip(identities["peer_id"], identities["host"]))
    peer_host = rln_events_df["peer_id"].map(host_of_peer)
    rln_events_df = rln_events_df.assign(peer_host=peer_host)[RLN_EVENT_COLUMNS].sort_values(["time_ns", "host"], ignore_index=True)

    sends_df = pd.DataFrame(sends, columns=["sender", "to_peer", "msg_hash", "time_ns"]).rename(columns={"time_ns": "sent_ns"})
    sends_df["to_host"] = sends_df["to_peer"].map(short_to_host)
    # the order a node handed one message to its peers (log order; the times often tie)
    sends_df["send_rank"] = sends_df.groupby(["sender", "msg_hash"]).cumcount() + 1
    sends_df = sends_df.sort_values(["msg_hash", "sender", "send_rank"], ignore_index=True)
    withheld_df = pd.DataFrame(withheld, columns=["sender", "to_peer", "msg_id", "reason", "time_ns"])
    withheld_df["to_host"] = withheld_df["to_peer"].map(host_of_peer)
    withheld_df["msg_hash"] = withheld_df.pop("msg_id").map(lambda short: _message_hash(message_ids, short, run_dir))
    withheld_df = withheld_df[WITHHELD_COLUMNS].sort_values(["msg_hash", "time_ns", "sender"], ignore_index=True)
    return {"receipts": receipts_df, "publishes": publishes, "sends": sends_df, "receipts_again": receipts_again,
            "spam_receipts": spam_receipts, "rln_events": rln_events_df, "withheld": withheld_df,
            topology_events.TABLE: topology_events.table(records[topology_events.TABLE], identities, run_dir),
            **light_clients.tables(records, identities, publishes, run_dir),
            **store_queries.tables(run_dir, light_clients.clients(identities), publishes)}


def short_id_map(identities: pd.DataFrame) -> dict[str, str]:
    """short peer ID -> host; two hosts sharing a short ID would make receipts from it ambiguous."""
    counts = identities["short_peer_id"].value_counts()
    ambiguous = counts[counts > 1]
    if not ambiguous.empty:
        short = ambiguous.index[0]
        hosts = ", ".join(identities.loc[identities["short_peer_id"] == short, "host"])
        raise LogError(f"short peer ID {short} is shared by {hosts}: receipts from it cannot be attributed")
    return dict(zip(identities["short_peer_id"], identities["host"]))


def _publishes(schedule: pd.DataFrame, events_df: pd.DataFrame) -> pd.DataFrame:
    """One row per scheduled message with the times its publisher logged (NaN where it logged none)."""
    wide = {}
    for kind, column in (("intent", "intent_ns"), ("publish", "publish_ns")):
        rows = events_df[events_df["kind"] == kind]
        duplicated = rows[rows.duplicated("msg_hash", keep=False)]
        if not duplicated.empty:
            raise LogError(f"message {duplicated['msg_hash'].iloc[0]} has more than one '{kind}' record")
        wide[column] = rows.set_index("msg_hash")[["time_ns", "host"]].rename(
            columns={"time_ns": column, "host": column + "_host"}
        )
    table = schedule.join(wide["intent_ns"], on="msg_hash").join(wide["publish_ns"], on="msg_hash")
    # An nwaku without the proof-generation patch logs no intent: there intent is the publish itself.
    table["intent_logged"] = table["intent_ns"].notna()
    table["intent_ns"] = table["intent_ns"].fillna(table["publish_ns"])
    table["publish_host"] = table["publish_ns_host"].fillna(table["intent_ns_host"])
    return table.drop(columns=["intent_ns_host", "publish_ns_host"])


def received_again(receipts: pd.DataFrame, found: pd.DataFrame) -> pd.Series:
    """Which receipts are a message received again by a node that left and came back after its
    first receipt of it (its seen-cache went with its old process, and gossip delivered it anew)."""
    again = pd.Series(False, index=receipts.index)
    if found.empty or receipts.empty:
        return again
    repeated = receipts[receipts.duplicated(["message", "receiver"], keep=False)]
    for (_, receiver), group in repeated.groupby(["message", "receiver"]):
        group = group.sort_values("received_ns")
        first = group["received_ns"].iloc[0]
        restarts = found.loc[(found["host"] == receiver) & (found["leave_ns"] >= first), "rejoin_ns"]
        for index, received in zip(group.index[1:], group["received_ns"].iloc[1:]):
            again[index] = bool((restarts <= received).any())
    return again
