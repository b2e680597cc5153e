"""Returning light clients' store queries (light_clients.churn), read from curl's stdout in each
client's logs: the store's answer (JSON), then the line curl writes after it, with the query's window
and how long the answer took (render/light_clients.py, STORE_QUERY_WRITE_OUT)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.errors import LogError

TABLES = ("store_queries", "store_returns")
QUERY_COLUMNS = ["client", "service_node", "query_ns", "from_ns", "to_ns", "seconds", "http_code", "status_code",
                 "returned", "more_pages"]
RETURN_COLUMNS = ["client", "query_ns", "msg_hash", "message"]
TIMING_KEY = '"store_query_ns"'


def tables(run_dir: Path, clients: pd.DataFrame, publishes: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """store_queries (one row per query a client made) and store_returns (one row per message hash
    a store answer gave); ``clients`` has the columns host and store_node, the service node each asks."""
    message_of = dict(zip(publishes["msg_hash"], publishes["message"]))
    queries, returns = [], []
    for client, service_node in zip(clients["host"], clients["store_node"]):
        for stdout in sorted((run_dir / layout.LOGS / client).glob("curl.*.stdout.gz")):
            with gzip.open(stdout, "rt") as handle:
                text = handle.read()
            if TIMING_KEY not in text:
                continue
            answer, timing = _split(text, stdout)
            hashes = [m["messageHash"] for m in answer.get("messages", [])]
            unknown = [h for h in hashes if h not in message_of]
            if unknown:
                raise LogError(f"{stdout}: the store returned {len(unknown)} message hashes that are not in the "
                               f"schedule, e.g. {unknown[0]}")
            queries.append({"client": client, "service_node": service_node, "query_ns": timing["store_query_ns"],
                            "from_ns": timing["from_ns"], "to_ns": timing["to_ns"], "seconds": timing["seconds"],
                            "http_code": int(timing["http_code"]), "status_code": answer.get("statusCode"),
                            "returned": len(hashes), "more_pages": answer.get("paginationCursor") is not None})
            returns.extend({"client": client, "query_ns": timing["store_query_ns"], "msg_hash": h,
                            "message": message_of[h]} for h in hashes)
    store_queries = pd.DataFrame(queries, columns=QUERY_COLUMNS).astype({"status_code": "Int64"})
    return {"store_queries": store_queries.sort_values(["query_ns", "client"], ignore_index=True),
            "store_returns": pd.DataFrame(returns, columns=RETURN_COLUMNS).sort_values(
                ["client", "query_ns", "message"], ignore_index=True)}


def _split(text: str, stdout: Path) -> tuple[dict, dict]:
    """The store's answer ({} when it is not JSON: an error's text) and curl's timing line."""
    body, _, last = text.rstrip("\n").rpartition("\n")
    try:
        timing = json.loads(last)
    except json.JSONDecodeError:
        raise LogError(f"{stdout}: curl's timing line after a store query is cut short: {last[:120]!r}") from None
    try:
        answer = json.loads(body) if body.strip() else {}
    except json.JSONDecodeError:
        answer = {}
    return (answer if isinstance(answer, dict) else {}), timing
