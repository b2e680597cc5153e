"""Why the latencies look as they do: hops, the model's residuals, per-hop times, first hops."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import config as cfg

from .study import Study
from . import layout, model, paper, stats, sweep, trees
from .units import human_size

MODELS = {
    "eq1_ms": "Equation 1 as written",
    "eq1_uplink_ms": "+ uplink serialisation",
    "eq1_window_ms": "+ uplink + flow-control window",
}


def run_receipts(run_dir: Path) -> pd.DataFrame:
    """One run's receipts with Equation 1's predictions and their residuals (simulated - predicted)."""
    receipts = pd.read_parquet(run_dir / layout.RECEIPTS)
    sends = pd.read_parquet(run_dir / layout.SENDS)
    study = cfg.load(run_dir / layout.RUN_CONFIG)
    receipts = receipts.join(model.predict(receipts, sends, study, one_way_ns=edge_one_way_ns(run_dir, study, receipts)))
    for column in MODELS:
        receipts[column.replace("_ms", "_residual_ms")] = receipts["latency_ms"] - receipts[column]
    return receipts.assign(**sweep.run_columns(run_dir))


def verification_ms(run_dirs: list[Path]) -> dict[int, float]:
    """L_v of each size's runs (ms), from the runs' own configs: a size may set its own (by_size)."""
    studies = [cfg.load(run_dir / layout.RUN_CONFIG) for run_dir in run_dirs]
    return {study.message_sizes[0]: study.rln.verification_delay_ns(study.message_sizes[0]) / 1e6 for study in studies}


def edge_one_way_ns(run_dir: Path, study: Study, receipts: pd.DataFrame):
    """The one-way latency of every receipt's last edge (from-peer to receiver); None in a single place."""
    if study.locations is None:
        return None
    where = pd.read_csv(run_dir / layout.IDENTITIES).set_index("host")["location"]
    pairs = zip(where.reindex(receipts["from_host"]), where.reindex(receipts["receiver"]))
    return np.array([float(study.locations.one_way_ns(a, b)) for a, b in pairs])


def residual_summary(receipts: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Median |residual|, p95 and worst residual (ms) of every model, warm-up excluded."""
    measured = stats.measured(receipts)
    rows = []
    for keys, group in measured.groupby(by):
        keys = keys if isinstance(keys, tuple) else (keys,)
        for column, name in MODELS.items():
            residual = group[column.replace("_ms", "_residual_ms")]
            worst = residual.loc[residual.abs().idxmax()]
            rows.append(
                {
                    **dict(zip(by, keys)),
                    "model": name,
                    "receipts": len(group),
                    "median_abs_residual_ms": residual.abs().median(),
                    "p95_residual_ms": residual.quantile(0.95),
                    "worst_residual_ms": worst,
                }
            )
    return pd.DataFrame(rows)


def per_hop_table(receipts: pd.DataFrame, publishes: pd.DataFrame, verification_ms: dict[int, float],
                  keys: tuple[str, ...] = ("size_bytes",)) -> pd.DataFrame:
    """The paper's Table 3 for a simulated network: mean L_g, and per hop position mean L_t and L_v,
    per point (size, or swept value and size).

    A hop's time is the child's receipt minus its parent's (the publish, for the first
    hop); L_v is the configured validation delay of the size and L_t the rest.
    ``verification_ms`` maps a size to its L_v in ms. Receipts and publishes carry their run:
    the runs of a sweep share message hashes.
    """
    keys = list(keys)
    measured = stats.measured(receipts)
    measured = measured.assign(hop_ms=trees.hop_times_ms(measured))
    generation = stats.measured(publishes)
    generation_ms = ((generation["publish_ns"] - generation["intent_ns"]) / 1e6).groupby([generation[k] for k in keys]).mean()
    rows = []
    for point, group in measured.groupby(keys):
        at = dict(zip(keys, point))
        rows.append({**at, "component": "L_g", "hop": 0, "mean_ms": generation_ms.loc[point]})
        lv = verification_ms[at["size_bytes"]]
        for hop, at_hop in group.groupby("hop"):
            rows.append({**at, "component": "L_t", "hop": hop, "mean_ms": at_hop["hop_ms"].mean() - lv})
            rows.append({**at, "component": "L_v", "hop": hop, "mean_ms": lv})
        rows.append({**at, "component": "total", "hop": int(group["hop"].max()), "mean_ms": group["latency_ms"].mean()})
    return pd.DataFrame(rows)


def first_hops(receipts: pd.DataFrame, sends: pd.DataFrame, keys: tuple[str, ...] = ("size_bytes",)) -> pd.DataFrame:
    """Per message and run: peers the publisher sent to (flood publish) and receivers whose first copy came from it."""
    keys = list(keys)
    columns = ["publisher", "message", *keys, "warmup"]
    messages = receipts[["run", "msg_hash", *(c for c in columns if c not in sends)]].drop_duplicates(["run", "msg_hash"])
    publisher_sends = sends.merge(messages, left_on=["run", "msg_hash", "sender"], right_on=["run", "msg_hash", "publisher"])
    sent = publisher_sends.groupby(["run", "msg_hash", "message", *keys, "warmup"]).size().rename("publisher_sent_to")
    direct = receipts[receipts["hop"] == 1].groupby(["run", "msg_hash"]).size().rename("first_hop_receivers")
    return sent.reset_index().join(direct, on=["run", "msg_hash"])


def equation2_table(study: Study, receipts: pd.DataFrame, first: pd.DataFrame) -> pd.DataFrame:
    """Per D and size: Equation 2's bound on the hops (as the paper writes it, as the write-up does, and
    aware of the publisher's flood F, the median of ``first``'s publisher_sent_to) beside the deepest hop
    observed. Measured messages only, as every table."""
    swept_d = study.sweep is not None and study.sweep.parameter == "gossipsub.d"
    measured = stats.measured(receipts)
    first = stats.measured(first)
    if not swept_d:
        degree = study.gossipsub.effective()["d"]
        measured, first = measured.assign(d=degree), first.assign(d=degree)
    flood = first.groupby(["d", "size_bytes"])["publisher_sent_to"].median()
    deepest = measured.groupby(["d", "size_bytes"])["hop"].max()
    return pd.DataFrame([
        {"N": study.nodes, "D": d, "size": human_size(int(size)),
         "Eq. 2 (paper)": model.hmax_paper(study.nodes, d), "⌈log N / log D⌉": model.hmax_writeup(study.nodes, d),
         "publisher's flood F": int(flood[(d, size)]), "flood-aware": model.hmax_flood(study.nodes, d, int(flood[(d, size)])),
         "observed max": int(hops)}
        for (d, size), hops in deepest.items()
    ])


def multihost_table3(run_dirs: list[Path]) -> pd.DataFrame:
    """The paper's Table 3 beside a cascade over locations; empty for any other study.

    A cascade's node i is the line's i-th node, so the locations of the nodes in
    index order are the path a message travels.
    """
    study = cfg.load(run_dirs[0] / layout.RUN_CONFIG)
    if study.topology != "cascade" or study.locations is None:
        return pd.DataFrame()
    path = list(pd.read_csv(run_dirs[0] / layout.IDENTITIES)["location"])
    receipts = pd.concat([sweep.run_table(run, layout.RECEIPTS) for run in run_dirs], ignore_index=True)
    publishes = pd.concat([sweep.run_table(run, layout.PUBLISHES) for run in run_dirs], ignore_index=True)
    return paper.table3_comparison(receipts, publishes, path, study)


# An eager push leaves a node in the same instant its copy arrived; a copy pulled by gossip (IHAVE at
# a heartbeat, IWANT, the reply) leaves its sender a round trip or more later.
GOSSIP_WAIT_MS = 50.0


def pulled_by_gossip(receipts: pd.DataFrame, sends: pd.DataFrame) -> pd.Series:
    """Whether each receipt's copy was pulled by gossip: its sender (the receipt's from_host) sent it
    more than GOSSIP_WAIT_MS after it had the message itself (its own receipt, or the publish).
    Aligned with ``receipts``; both tables of one run."""
    received = receipts.set_index(["msg_hash", "receiver"])["received_ns"]
    had = pd.Series(received.reindex(list(zip(receipts["msg_hash"], receipts["from_host"]))).to_numpy(), index=receipts.index)
    had = had.where(receipts["from_host"] != receipts["publisher"], receipts["publish_ns"])
    sent = sends.groupby(["msg_hash", "sender", "to_host"])["sent_ns"].min()
    sent_ns = pd.Series(sent.reindex(list(zip(receipts["msg_hash"], receipts["from_host"], receipts["receiver"]))).to_numpy(),
                        index=receipts.index)
    return (sent_ns - had) / 1e6 > GOSSIP_WAIT_MS


def gossip_only_receivers(run_dir: Path) -> pd.DataFrame:
    """The receivers of a run that got every measured message by gossip, none by a mesh peer's push
    (a node in no peer's mesh): receiver, messages, and their fastest and slowest latency (ms)."""
    receipts = stats.measured(pd.read_parquet(run_dir / layout.RECEIPTS))
    pulled = pulled_by_gossip(receipts, pd.read_parquet(run_dir / layout.SENDS))
    by_receiver = receipts.assign(pulled=pulled).groupby("receiver").agg(
        messages=("msg_hash", "size"), pulled=("pulled", "sum"),
        fastest_ms=("latency_ms", "min"), slowest_ms=("latency_ms", "max"))
    only = by_receiver[by_receiver["pulled"] == by_receiver["messages"]]
    return only.drop(columns="pulled").reset_index()
