"""Light clients' results (light_clients.*): latency by path, where a light client's latency goes,
what the service nodes carry, and what a client that left gets back from the store.

A path is the publisher's role and the receiver's: a relay node publishes through its REST API, a
light client by lightpush (its service node generates the proof and hands the message to relay);
a relay node receives by relay, a light client by its service node's filter.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from waku_shadow import layout
from waku_shadow.analyse import bandwidth, stats
from waku_shadow.analyse.study_tables import run_columns
from waku_shadow.configuration import loader
from waku_shadow.parse.light_clients import clients as light_clients_of
from waku_shadow.render import churn_plan
from waku_shadow.render.light_clients import away_windows, in_window
from waku_shadow.render.nwaku import CONTENT_TOPIC
from waku_shadow.run import run_stats

PATHS = ["relay → relay", "light → relay", "relay → light", "light → light"]
PARTS = ["lightpush_ms", "service_node_ms", "relay_ms", "filter_push_ms"]


def path_receipts(run_dir: Path) -> pd.DataFrame:
    """Every measured receipt of one run, relay and filter, with its path and latency."""
    relay = stats.measured(pd.read_parquet(run_dir / layout.RECEIPTS)).assign(by="relay")
    light = stats.measured(pd.read_parquet(run_dir / layout.FILTER_RECEIPTS))
    light = light[~light["spam"].astype(bool)].assign(by="light")
    published = pd.read_parquet(run_dir / layout.PUBLISHES).set_index("message")["light_client"]
    frame = pd.concat([relay, light], ignore_index=True)
    sender = np.where(frame["message"].map(published).fillna("") != "", "light", "relay")
    frame["path"] = pd.Categorical([f"{s} → {r}" for s, r in zip(sender, frame["by"])], categories=PATHS)
    return frame[["message", "size_bytes", "receiver", "path", "latency_ms"]].assign(**run_columns(run_dir))


def latency_by_path(receipts: pd.DataFrame, keys: tuple[str, ...] = ("size_bytes",)) -> pd.DataFrame:
    """Receipts, p50, p95 and max latency (ms) per path (and point), pooling a point's seeds."""
    grouped = receipts.groupby([*keys, "path"], observed=True)["latency_ms"]
    return grouped.agg(receipts="size", p50_ms=lambda v: v.quantile(0.5), p95_ms=lambda v: v.quantile(0.95),
                       max_ms="max").reset_index()


def decomposition(run_dir: Path) -> pd.DataFrame:
    """Each measured light → light receipt of one run in four parts: the lightpush (client's intent
    to its lightpush service node's receipt), the service node (proof and validation, until it hands
    the message to relay), relay (to the receiving client's filter service node, with the publishing
    service node's own filter pushes, which gossipsub awaits before it sends; 0 when that is the same
    node) and the filter push (to the client)."""
    identities = pd.read_csv(run_dir / layout.IDENTITIES, keep_default_na=False)
    service_of = dict(zip(identities["host"], identities["service_node"]))
    receipts = stats.measured(pd.read_parquet(run_dir / layout.FILTER_RECEIPTS))
    receipts = receipts[receipts["light_client"] != ""]
    pushes = pd.read_parquet(run_dir / layout.LIGHTPUSHES).set_index("message")["received_ns"]
    relay = pd.read_parquet(run_dir / layout.RECEIPTS).set_index(["message", "receiver"])["received_ns"]
    service = receipts["receiver"].map(service_of)
    at_service = [publish if node == publisher else relay.get((message, node), np.nan)
                  for message, node, publisher, publish in
                  zip(receipts["message"], service, receipts["publisher"], receipts["publish_ns"])]
    parts = pd.DataFrame({
        "message": receipts["message"].to_numpy(),
        "size_bytes": receipts["size_bytes"].to_numpy(),
        "receiver": receipts["receiver"].to_numpy(),
        "lightpush_ms": (receipts["message"].map(pushes) - receipts["intent_ns"]).to_numpy() / 1e6,
        "service_node_ms": (receipts["publish_ns"] - receipts["message"].map(pushes)).to_numpy() / 1e6,
        "relay_ms": (np.asarray(at_service, dtype=float) - receipts["publish_ns"].to_numpy()) / 1e6,
        "filter_push_ms": (receipts["received_ns"].to_numpy() - np.asarray(at_service, dtype=float)) / 1e6,
        "latency_ms": receipts["latency_ms"].to_numpy(),
    })
    return parts.assign(**run_columns(run_dir))


def decomposition_summary(parts: pd.DataFrame, keys: tuple[str, ...] = ("size_bytes",)) -> pd.DataFrame:
    """The median and 95th percentile of each part per point."""
    tidy = parts.melt(id_vars=list(keys), value_vars=[*PARTS, "latency_ms"], var_name="part", value_name="ms")
    grouped = tidy.groupby([*keys, "part"], sort=False)["ms"]
    return grouped.agg(p50_ms=lambda v: v.quantile(0.5), p95_ms=lambda v: v.quantile(0.95)).reset_index()


def service_load(run_dir: Path) -> pd.DataFrame:
    """Per service node of one run: its clients, the lightpushes it handled, the filter pushes it
    sent, and with a packet capture its bytes in and out from the first publish on (idle traffic
    subtracted), in all and per client."""
    identities = pd.read_csv(run_dir / layout.IDENTITIES, keep_default_na=False)
    services = identities.loc[identities["role"] == "service", "host"]
    clients = light_clients_of(identities).groupby("service_node").size()
    pushes = pd.read_parquet(run_dir / layout.LIGHTPUSHES).groupby("service_node").size()
    filtered = pd.read_parquet(run_dir / layout.FILTER_RECEIPTS).groupby("from_host").size()
    load = pd.DataFrame({"service_node": services.to_numpy()})
    load["clients_served"] = load["service_node"].map(clients).fillna(0).astype(int)
    load["lightpushes"] = load["service_node"].map(pushes).fillna(0).astype(int)
    load["filter_pushes"] = load["service_node"].map(filtered).fillna(0).astype(int)
    if loader.load(run_dir / layout.RUN_CONFIG).traffic_capture:
        load = load.join(busy_bytes(run_dir), on="service_node")
        load["bytes_out_per_client"] = load["bytes_out"] / load["clients_served"].where(load["clients_served"] > 0)
    return load.assign(**run_columns(run_dir))


def bytes_by_role(run_dir: Path) -> pd.DataFrame:
    """Per role (relay, service, light) of one run with a packet capture: nodes, and the mean bytes a
    node received and sent from the first publish on (idle traffic subtracted)."""
    return bytes_per_node(run_dir, pd.read_csv(run_dir / layout.IDENTITIES, keep_default_na=False), "role")


BYTES_PER_NODE_COLUMNS = ["nodes", "bytes_in_per_node", "bytes_out_per_node"]  # of bytes_per_node, beside its grouping


def bytes_per_node(run_dir: Path, hosts: pd.DataFrame, by: str) -> pd.DataFrame:
    """Per value of ``hosts[by]`` in one run with a packet capture: nodes, and the mean bytes a node
    received and sent from the first publish on (busy_bytes; a node that sent nothing counts 0)."""
    nodes = hosts.join(busy_bytes(run_dir), on="host").fillna({"bytes_in": 0, "bytes_out": 0})
    table = nodes.groupby(by).agg(nodes=("host", "size"), bytes_in_per_node=("bytes_in", "mean"),
                                  bytes_out_per_node=("bytes_out", "mean")).reset_index()
    return table.assign(**run_columns(run_dir))


def busy_bytes(run_dir: Path) -> pd.DataFrame:
    """Bytes in and out per node of one run with a packet capture, from the first publish on, idle
    traffic subtracted (bandwidth.busy_traffic)."""
    study = loader.load(run_dir / layout.RUN_CONFIG)
    busy = bandwidth.busy_traffic(run_dir, study, pd.read_parquet(run_dir / layout.PUBLISHES))
    return busy.groupby("node")[["bytes_in", "bytes_out"]].sum()


def store_recovery(run_dir: Path) -> pd.DataFrame:
    """Per light client that left and came back in one run (light_clients.churn): the measured messages
    on its content topics its store window covers, how many its filter missed, how many of those its store query gave back,
    and when it had the store's answer, counted from its return."""
    study = loader.load(run_dir / layout.RUN_CONFIG)
    clients = light_clients_of(pd.read_csv(run_dir / layout.IDENTITIES, keep_default_na=False))
    windows = away_windows(study, churn_plan.read(run_dir), set(clients["host"])).dropna(subset=["query_ns"])
    schedule = pd.read_parquet(run_dir / layout.PUBLISHES)
    rows = []
    if not windows.empty:
        measured = schedule[~schedule["warmup"] & ~schedule["spam"].astype(bool)]
        # a run parsed before content topics had its messages on the first
        measured = measured.assign(content_topic=measured.get("content_topic", CONTENT_TOPIC))
        received = set(zip(*pd.read_parquet(run_dir / layout.FILTER_RECEIPTS)[["message", "receiver"]].T.to_numpy()))
        queries = pd.read_parquet(run_dir / layout.STORE_QUERIES).set_index(["client", "query_ns"])
        returned = pd.read_parquet(run_dir / layout.STORE_RETURNS).groupby(["client", "query_ns"])["message"].agg(set)
        topics = dict(zip(clients["host"], clients["content_topics"].str.split(",")))
        for window in windows.itertuples():
            key = (window.host, int(window.query_ns))
            mine = measured[measured["content_topic"].isin(topics[window.host])]
            covered = mine.loc[in_window(mine["scheduled_ns"], window.from_ns, window.to_ns), "message"]
            missed = {m for m in covered if (m, window.host) not in received}
            seconds = queries.at[key, "seconds"] if key in queries.index else np.nan
            rows.append({"client": window.host, "leave_ns": window.leave_ns, "rejoin_ns": window.rejoin_ns,
                         "window_messages": len(covered), "missed": len(missed),
                         "recovered": len(missed & returned.get(key, set())), "query_s": seconds,
                         "answer_after_return_s": (window.query_ns - window.rejoin_ns) / 1e9 + seconds})
    columns = ["client", "leave_ns", "rejoin_ns", "window_messages", "missed", "recovered", "query_s",
               "answer_after_return_s"]
    return pd.DataFrame(rows, columns=columns).assign(size_bytes=int(schedule["size_bytes"].iloc[0]), **run_columns(run_dir))


def recovery_summary(recovery: pd.DataFrame, keys: tuple[str, ...] = ("size_bytes",)) -> pd.DataFrame:
    """Per point, every run's returning clients pooled: how many, the messages they missed, the share
    their store queries gave back, and the median and largest time from return to the store's answer."""
    grouped = recovery.groupby(list(keys))
    summary = grouped.agg(clients=("client", "size"), missed=("missed", "sum"), recovered=("recovered", "sum"),
                          query_p50_s=("query_s", "median"), answer_p50_s=("answer_after_return_s", "median"),
                          answer_max_s=("answer_after_return_s", "max")).reset_index()
    summary["recovered_share"] = summary["recovered"] / summary["missed"].where(summary["missed"] > 0)
    return summary


def memory_by_role(run_dir: Path) -> pd.DataFrame:
    """Per role of one run: its nwaku processes and their private memory at the run's memory peak
    (run_stats.json's memory_at_peak), beside the run's wall time and peak memory; no rows for a
    run recorded before roles were counted."""
    stats = run_stats.read_stats(run_dir)
    at_peak = stats.memory_at_peak or {}
    nodes, anon = at_peak.get("nodes_by_role", {}), at_peak.get("anon_bytes_by_role", {})
    table = pd.DataFrame({"role": pd.Series(sorted(nodes), dtype=object),
                          "nodes": pd.Series([nodes[r] for r in sorted(nodes)], dtype="int64"),
                          "anon_bytes": pd.Series([anon.get(r, 0) for r in sorted(nodes)], dtype="int64")})
    table["anon_bytes_per_node"] = table["anon_bytes"] / table["nodes"]
    return table.assign(wall_seconds=stats.wall_seconds, peak_memory_bytes=stats.memory_bytes, **run_columns(run_dir))
