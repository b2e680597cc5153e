"""Checks every run must pass before its numbers are used."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.errors import ValidationError
from waku_shadow.parse import trees
from waku_shadow.run.run_stats import RunStats

VALIDATION_FAILED = "validation.failed.json"
SHOWN = 10


@dataclass
class Report:
    run: str
    checks: dict[str, str] = field(default_factory=dict)  # check -> "ok" or what is wrong
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def problems(self) -> dict[str, str]:
        return {name: text for name, text in self.checks.items() if text != "ok"}

    def write(self, run_dir: Path) -> Path:
        """validation.json when every check passed, validation.failed.json otherwise."""
        passed = not self.problems
        data = {"run": self.run, "passed": passed, "checks": self.checks, "counts": self.counts}
        path = run_dir / (layout.VALIDATION if passed else VALIDATION_FAILED)
        (run_dir / (VALIDATION_FAILED if passed else layout.VALIDATION)).unlink(missing_ok=True)
        path.write_text(json.dumps(data, indent=2) + "\n")
        return path


def listing(items: list, total: int | None = None) -> str:
    total = len(items) if total is None else total
    shown = ", ".join(str(i) for i in items[:SHOWN])
    return shown + (f" and {total - SHOWN} more" if total > SHOWN else "")


def check(
    run: str,
    stats: RunStats,
    hosts: list[str],
    schedule: pd.DataFrame,
    publishes: pd.DataFrame,
    receipts: pd.DataFrame,
    publish_retries: dict[str, int] | None = None,
    min_delivery: float = 1.0,
    outages: pd.DataFrame | None = None,
    receipts_again: int = 0,
    served: dict[str, frozenset[int]] | None = None,
) -> Report:
    """Every check on one run; ``publish_retries`` (host -> retried REST publishes) is reported, not judged.
    Up to 1 - ``min_delivery`` of the expected receipts may be missing (validation.min_delivery);
    receipts missed by a node that was away or rejoining (``outages``, churn.csv) are counted apart,
    as are ``receipts_again``: messages nodes received again after they came back. The spammers'
    messages (spam.*) are counted, not judged: nobody is expected to receive them; nor are the
    spammers expected to receive the honest messages (their peers cut them off), which are counted.
    On a cluster of several shards (``served``: each host's shards) a node is expected to receive
    exactly the messages of the shards it serves."""
    report = Report(run)
    spam = schedule["spam"]
    spam_hashes = set(schedule.loc[spam, "msg_hash"])
    spam_publishes = publishes[publishes["msg_hash"].isin(spam_hashes)]
    spammers = set(schedule.loc[spam, "publisher"])
    at_spammers = receipts["receiver"].isin(spammers)
    receivers = [h for h in hosts if h not in spammers]
    schedule = schedule[~spam]
    publishes = publishes[~publishes["msg_hash"].isin(spam_hashes)]
    expected_messages = len(schedule)
    expected = expected_receipts(schedule, receivers, served)
    report.counts = {
        "nodes": len(hosts),
        "messages_scheduled": expected_messages,
        "messages_published": int(publishes["publish_ns"].notna().sum()),
        "publish_retries": sum((publish_retries or {}).values()),
        "receipts_expected": len(expected),
        "receipts": int((~at_spammers).sum()),
        "receipts_again_after_rejoin": receipts_again,
    }
    if spam_hashes:
        report.counts["spam_scheduled"] = len(spam_hashes)
        report.counts["spam_published"] = int(spam_publishes["publish_ns"].notna().sum())
        report.counts["receipts_at_spammers"] = int(at_spammers.sum())

    if stats.status != "completed" or stats.failed_processes:
        failed = [f"{f['process']} ({f['actual']})" for f in stats.failed_processes]
        report.checks["processes"] = (
            f"Shadow run {stats.status} with exit code {stats.shadow_exit_code}"
            + (f"; processes not in their expected final state: {listing(failed)}" if failed else "")
        )
    else:
        report.checks["processes"] = "ok"

    unpublished = publishes[publishes["publish_ns"].isna()]
    wrong_host = publishes[publishes["publish_ns"].notna() & (publishes["publish_host"] != publishes["publisher"])]
    if not unpublished.empty:
        report.checks["publishes"] = (
            f"{len(unpublished)} of {expected_messages} scheduled messages were never published: "
            + listing([f"message {m} by {p}" for m, p in zip(unpublished["message"], unpublished["publisher"])])
        )
    elif not wrong_host.empty:
        report.checks["publishes"] = "messages published by a host other than the scheduled one: " + listing(
            [f"message {m}: {h} instead of {p}" for m, h, p in zip(wrong_host["message"], wrong_host["publish_host"], wrong_host["publisher"])]
        )
    else:
        report.checks["publishes"] = "ok"

    intents = publishes["intent_logged"]
    if intents.any() and not intents.all():
        missing = publishes.loc[~intents, "message"].tolist()
        report.checks["intent records"] = f"messages published without an intent record: {listing(missing)}"
    else:
        report.checks["intent records"] = "ok"

    receipts_check, missing_by_reason = _receipts_check(expected, receipts[~at_spammers], publishes, min_delivery, outages)
    report.checks["receipts"] = receipts_check
    report.counts.update(missing_by_reason)
    report.checks["delivery trees"] = _trees_check(receipts)

    unknown_from = receipts[receipts["from_host"].isna()]
    report.checks["from peers"] = (
        "ok"
        if unknown_from.empty
        else f"{len(unknown_from)} receipts name a from_peer_id of no node: {listing(sorted(set(unknown_from['from_peer'])))}"
    )

    sizes = receipts["payload_bytes"] != receipts["size_bytes"]
    report.checks["payload sizes"] = (
        "ok" if not sizes.any() else f"{int(sizes.sum())} receipts carry a payload of another size than scheduled"
    )

    negative = receipts[(receipts["latency_ms"] < 0) | (receipts["received_ns"] < receipts["publish_ns"])]
    report.checks["latency"] = (
        "ok"
        if negative.empty
        else f"{len(negative)} receipts arrive before their message was published: "
        + listing([f"{r} got message {m}" for r, m in zip(negative["receiver"], negative["message"])])
    )
    return report


def _trees_check(receipts: pd.DataFrame) -> str:
    """Every message's from-peer links must form a tree rooted at its publisher."""
    try:
        trees.hops(receipts[receipts["from_host"].notna()])
    except ValidationError as problem:
        return str(problem)
    return "ok"


def expected_receipts(schedule: pd.DataFrame, hosts: list[str], served: dict[str, frozenset[int]] | None) -> pd.MultiIndex:
    """(message, receiver) for every host that serves the message's shard, except its publisher."""
    return pd.MultiIndex.from_tuples(
        [(m, h) for m, p, shard in zip(schedule["message"], schedule["publisher"], schedule["shard"]) for h in hosts
         if h != p and (served is None or shard in served[h])],
        names=["message", "receiver"],
    )


def publishers_receipts(publishes: pd.DataFrame) -> pd.MultiIndex:
    """(message, its publisher): a receipt no node should log."""
    return pd.MultiIndex.from_arrays([publishes["message"], publishes["publisher"]], names=["message", "receiver"])


def _receipts_check(expected: pd.MultiIndex, receipts: pd.DataFrame, publishes: pd.DataFrame,
                    min_delivery: float, outages: pd.DataFrame | None) -> tuple[str, dict[str, int]]:
    """What is wrong with the receipts ("ok" if nothing), and the missing ones counted by why:
    lost, or missed while the receiver was away or rejoining (churn)."""
    got = pd.MultiIndex.from_frame(receipts[["message", "receiver"]])
    duplicated = got[got.duplicated()]
    missing = expected.difference(got)
    unexpected = got.difference(expected)
    reasons = explained(missing.to_frame(index=False), receipts, publishes, outages)
    lost = missing[(reasons == "").to_numpy()]
    counts = {"receipts_missing": len(missing), "receipts_lost": len(lost),
              "receipts_missed_away": int((reasons == "away").sum()),
              "receipts_missed_rejoining": int((reasons == "rejoining").sum())}
    present = len(expected) - counts["receipts_missed_away"] - counts["receipts_missed_rejoining"]
    problems = []
    if len(lost) > (1 - min_delivery) * present:
        by_message = pd.Series(lost.get_level_values("message")).value_counts().sort_index()
        problems.append(
            f"{len(lost)} of {len(expected)} receipts missing"
            + (f" at nodes that were up ({len(missing) - len(lost)} more missed by nodes away or rejoining)"
               if len(lost) < len(missing) else "")
            + (f", more than validation.min_delivery = {min_delivery:g} allows" if min_delivery < 1 else "")
            + " ("
            + listing([f"message {m}: {n} receivers" for m, n in by_message.items()])
            + "); first missing: "
            + listing([f"{r} never got message {m}" for m, r in lost])
        )
    if len(duplicated):
        problems.append(f"{len(duplicated)} duplicate receipts: " + listing([f"{r} got message {m} twice" for m, r in duplicated]))
    by_publisher = unexpected[unexpected.isin(publishers_receipts(publishes))]
    off_shard = unexpected.difference(by_publisher)
    if len(by_publisher):
        problems.append(f"{len(by_publisher)} receipts by a message's own publisher: "
                        + listing([f"{r}, message {m}" for m, r in by_publisher]))
    if len(off_shard):
        problems.append(f"{len(off_shard)} receipts by a node that does not serve the message's shard: "
                        + listing([f"{r}, message {m}" for m, r in off_shard]))
    return "; ".join(problems) or "ok", counts


def require(report: Report, run_dir: Path) -> None:
    written = report.write(run_dir)
    if report.problems:
        lines = [f"  {name}: {text}" for name, text in report.problems.items()]
        raise ValidationError(f"run {report.run} failed validation ({written}):\n" + "\n".join(lines))


def explained(missing: pd.DataFrame, receipts: pd.DataFrame, publishes: pd.DataFrame, found: pd.DataFrame | None) -> pd.Series:
    """Why each missing receipt (columns message, receiver) is missing: "away" when the receiver was
    down at some time between the message's publish and its last receipt anywhere, "rejoining" when
    it had come back before the publish but had not received any message since, "" otherwise (a loss)."""
    if found is None or found.empty or missing.empty:
        return pd.Series("", index=missing.index, dtype=object)
    published = publishes.set_index("message")["publish_ns"]
    last_receipt = receipts.groupby("message")["received_ns"].max()
    reasons = []
    for message, receiver in zip(missing["message"], missing["receiver"]):
        start = published.get(message)
        end = last_receipt.get(message, start)
        mine = found[found["host"] == receiver]
        if (start is None or pd.isna(start)) or mine.empty:
            reasons.append("")
            continue
        if ((mine["leave_ns"] <= end) & (mine["rejoin_ns"] >= start)).any():
            reasons.append("away")
            continue
        back = mine.loc[mine["rejoin_ns"] < start, "rejoin_ns"]
        since_back = receipts[(receipts["receiver"] == receiver) & (receipts["received_ns"] >= back.max())] if not back.empty else None
        first_since = None if since_back is None or since_back.empty else since_back["received_ns"].min()
        reasons.append("rejoining" if since_back is not None and (first_since is None or first_since > start) else "")
    return pd.Series(reasons, index=missing.index, dtype=object)
