"""A discv5 network's own check: every node found a mesh peer on each shard it serves."""

from __future__ import annotations

import pandas as pd

from waku_shadow.validate.validation import Report, listing


def check(report: Report, mesh_times: pd.DataFrame) -> None:
    """``mesh_times`` (analyse/discovery.mesh_times): a node that never had a mesh peer on one of its
    shards fails the run by name."""
    meshless = mesh_times[mesh_times["first_mesh_peer_ns"].isna()]
    report.counts["nodes_without_mesh_peer"] = int(meshless["host"].nunique())
    report.checks["meshes"] = "ok" if meshless.empty else (
        f"{meshless['host'].nunique()} nodes never had a mesh peer on a shard they serve: "
        + listing([f"{host} (shard {shard})" for host, shard in zip(meshless["host"], meshless["shard"])], len(meshless)))
