"""The light clients' checks (light_clients.*): every client gets every message on its content topics
through its service node's filter exactly once (its own included: the service node's relay hands its
own publish to its filter too), and no other message, but for the messages a client that left may
miss (those its store query covers); every lightpush reaches the client's lightpush service node
once; every returning client's store query is answered in one page."""

from __future__ import annotations

import pandas as pd

from waku_shadow.parse.light_clients import subscribed
from waku_shadow.render.light_clients import in_window
from waku_shadow.validate.validation import Report, listing


def check(report: Report, clients: pd.DataFrame, schedule: pd.DataFrame, filter_receipts: pd.DataFrame,
          lightpushes: pd.DataFrame, windows: pd.DataFrame, store_queries: pd.DataFrame,
          min_delivery: float = 1.0) -> None:
    """Add the light clients' checks and counts to ``report``; ``clients`` is identities.csv's light
    clients (parse.light_clients.clients), ``windows`` the clients' outages with their store windows
    (render.light_clients.away_windows)."""
    service_of = dict(zip(clients["host"], clients["service_node"]))
    honest = schedule[~schedule["spam"].astype(bool)]
    expected = subscribed(honest, clients)
    honest_receipts = filter_receipts[filter_receipts["message"].isin(honest["message"])]
    got = pd.MultiIndex.from_frame(honest_receipts[["message", "receiver"]])
    missing = expected.difference(got)
    unsubscribed = got.unique().difference(expected)
    away = missed_while_away(missing.to_frame(index=False), honest, windows)
    missing = missing[~away.to_numpy()]
    duplicated = got[got.duplicated()]
    wrong_service = honest_receipts[honest_receipts["from_host"] != honest_receipts["receiver"].map(service_of)]
    report.counts.update({"light_clients": len(clients), "filter_receipts_expected": len(expected),
                          "filter_receipts": len(honest_receipts), "filter_receipts_missing": len(missing),
                          "filter_receipts_missed_away": int(away.sum())})
    problems = []
    if len(missing) > (1 - min_delivery) * len(expected):
        problems.append(f"{len(missing)} of {len(expected)} filter receipts missing: "
                        + listing([f"{r} (service node {service_of[r]}) never got message {m}" for m, r in missing]))
    if len(unsubscribed):
        topic_of = dict(zip(honest["message"], honest["content_topic"]))
        problems.append(f"{len(unsubscribed)} filter receipts of a content topic the client did not subscribe to: "
                        + listing([f"{r} got message {m} ({topic_of[m]})" for m, r in unsubscribed]))
    if len(duplicated):
        problems.append(f"{len(duplicated)} duplicate filter receipts: "
                        + listing([f"{r} got message {m} twice" for m, r in duplicated]))
    if not wrong_service.empty:
        problems.append(f"{len(wrong_service)} filter receipts from a node other than the client's service node: "
                        + listing([f"{r} got message {m} from {h}" for r, m, h in
                                   zip(wrong_service["receiver"], wrong_service["message"], wrong_service["from_host"])]))
    report.checks["filter receipts"] = "; ".join(problems) or "ok"

    lightpushed = honest[honest["light_client"] != ""]
    handled = lightpushes.merge(lightpushed[["message", "light_client", "publisher"]], on="message", how="inner")
    report.counts["lightpushes_scheduled"] = len(lightpushed)
    by_message = handled.groupby("message").size()
    unhandled = lightpushed[~lightpushed["message"].isin(by_message.index)]
    repeated = by_message[by_message > 1]
    astray = handled[(handled["service_node"] != handled["publisher"]) | (handled["client"] != handled["light_client"])]
    problems = []
    if not unhandled.empty:
        problems.append(f"{len(unhandled)} of {len(lightpushed)} lightpushes never reached a service node: "
                        + listing([f"message {m} of {c} (service node {s})" for m, c, s in
                                   zip(unhandled["message"], unhandled["light_client"], unhandled["publisher"])]))
    if not repeated.empty:
        problems.append(f"{len(repeated)} lightpushes handled more than once: " + listing([f"message {m}" for m in repeated.index]))
    if not astray.empty:
        problems.append(f"{len(astray)} lightpushes handled by another service node or from another client: "
                        + listing([f"message {m}: {c} to {s}" for m, c, s in
                                   zip(astray["message"], astray["client"], astray["service_node"])]))
    report.checks["lightpushes"] = "; ".join(problems) or "ok"

    _store_check(report, windows, store_queries, dict(zip(clients["host"], clients["store_node"])))


def missed_while_away(missing: pd.DataFrame, schedule: pd.DataFrame, windows: pd.DataFrame) -> pd.Series:
    """Which missing filter receipts (columns message, receiver) fall in the receiver's store window:
    published while it was away, or in the store_lookback before it left."""
    if windows.empty or missing.empty:
        return pd.Series(False, index=missing.index)
    published = missing["message"].map(schedule.set_index("message")["scheduled_ns"])
    candidates = missing.assign(published=published).reset_index().merge(windows, left_on="receiver", right_on="host")
    inside = candidates[in_window(candidates["published"], candidates["from_ns"], candidates["to_ns"])]
    return pd.Series(missing.index.isin(inside["index"]), index=missing.index)


def _store_check(report: Report, windows: pd.DataFrame, store_queries: pd.DataFrame, store_of: dict) -> None:
    planned = windows.dropna(subset=["query_ns"])
    answered = planned.merge(store_queries, left_on=["host", "query_ns"], right_on=["client", "query_ns"], how="left")
    report.counts.update({"store_queries_planned": len(planned), "store_queries": len(store_queries)})
    if planned.empty:
        return
    unanswered = answered[answered["http_code"].isna()]
    failed = answered[answered["http_code"].notna() & ((answered["http_code"] != 200) | (answered["status_code"] != 200))]
    paged = answered[answered["more_pages"].fillna(False).astype(bool)]
    problems = []
    for frame, what in ((unanswered, "have no answer"), (failed, "failed"), (paged, "needed more than one page")):
        if not frame.empty:
            problems.append(f"{len(frame)} of {len(planned)} store queries {what}: " + listing(
                [f"{h} (service node {store_of.get(h)}) at {q / 1e9:g} s" + _codes(http, status)
                 for h, q, http, status in zip(frame["host"], frame["query_ns"], frame["http_code"], frame["status_code"])]))
    report.checks["store queries"] = "; ".join(problems) or "ok"


def _codes(http, status) -> str:
    return "" if pd.isna(http) else f" (HTTP {int(http)}" + ("" if pd.isna(status) else f", store {int(status)}") + ")"
