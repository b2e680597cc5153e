"""The paper's published numbers (data/paper/): Table 5, Table 3 and its raw Shadow latencies."""

from __future__ import annotations

from functools import cache

import pandas as pd

from waku_shadow import checkout

STATISTICS = ["min", "mean", "p95", "max"]
SHADOW_RECEIPTS = "shadow_latency_receipts.csv.gz"
# waku-org/research holds two rounds of the paper's Shadow runs under the same file names: the one
# Table 5 reports (commit b3c3900, 2024-03-04) and the round before it (870d889, 2024-02-15).
ROUNDS = {"final": SHADOW_RECEIPTS, "first": "shadow_latency_receipts_first_round.csv.gz"}


# The paper's analysis (rln-delay-simulations/analyze.py in waku-org/research) leaves out every
# receiver's first message, seq 0, "due to tcp flow control"; Table 5 is the other nine.
WARMUP_SEQS = (0,)
LINK_BANDWIDTH_BPS = 100_000_000  # the paper's shadow.yaml: 100 Mbit up and down (data/paper/README.md)


def table5() -> pd.DataFrame:
    """Table 5 as size_bytes, setup (s-h / m-h), statistic, latency_ms."""
    table = checkout.paper_table("table5_latency_ms.csv")
    table["size_bytes"] = table.pop("size_kb") * 1000
    return table


def shadow_receipts(round_name: str = "final") -> pd.DataFrame:
    """The paper's single-host Shadow latencies of one round of its runs (ROUNDS), one row per
    receipt: size_bytes, receiver, seq, latency_ms (whole ms, as its nodes logged them) and warmup.

    One node published ten messages (seq 0..9) per size and the other 999 received each once.
    ``warmup`` marks seq 0, which the paper's analysis left out; the other 8991 receipts of a size
    of the final round are the sample Table 5 summarises.
    """
    table = checkout.paper_table(ROUNDS[round_name])
    table["size_bytes"] = table.pop("size_kb") * 1000
    table["latency_ms"] = table["latency_ms"].astype(float)
    table["warmup"] = table["seq"].isin(WARMUP_SEQS)
    return table[["size_bytes", "receiver", "seq", "latency_ms", "warmup"]]


def table5_sizes() -> frozenset[int]:
    """The message sizes of Table 5's single-host study."""
    table = table5()
    return frozenset(int(size) for size in table.loc[table["setup"] == "s-h", "size_bytes"])


@cache
def simulated_sizes() -> frozenset[int]:
    """The message sizes of the paper's raw Shadow latencies."""
    return frozenset(int(size) for size in shadow_receipts()["size_bytes"].unique())


def multihost_extremes() -> dict[int, tuple[float, float]]:
    """size_bytes -> the multi-host deployment's best and worst latency (Table 5, m-h)."""
    table = table5()
    mh = table[table["setup"] == "m-h"].pivot(index="size_bytes", columns="statistic", values="latency_ms")
    return {int(size): (float(row["min"]), float(row["max"])) for size, row in mh.iterrows()}


def table3() -> pd.DataFrame:
    """Table 3 as size_bytes, component, from, to, latency_ms ('' where a column does not apply)."""
    table = checkout.paper_table("table3_multihost_per_hop_ms.csv").fillna("")
    table["size_bytes"] = table.pop("size_kb") * 1000
    return table
