"""The paper's Table 1, the RLN proof timings of each platform (``rln.platform``)."""

from __future__ import annotations

from waku_shadow import checkout


def platforms() -> dict[str, tuple[float, float]]:
    """Platform -> (proof generation ms, verification ms)."""
    table = checkout.paper_table("table1_rln_platforms.csv")
    return {
        row.platform: (float(row.proof_generation_ms), float(row.proof_verification_ms))
        for row in table.itertuples()
    }
