"""A sweep of network.nodes beside the paper's model: per N and size, Equation 2's best-topology hops
and Equation 1's latency along a path of that many hops (model.best_topology), for each point's own
settings (by_size: the calibrated 2 KB runs are on a 75 ms link)."""

from __future__ import annotations

import pandas as pd

from waku_shadow.analyse import model
from waku_shadow.configuration import loader
from waku_shadow.configuration.study import NODES_PARAMETER, Study

MODEL_COLUMNS = ["eq2_hops", "eq1_latency_ms"]


def is_nodes_sweep(study: Study) -> bool:
    return study.sweep is not None and study.sweep.parameter == NODES_PARAMETER


def model_lines(study: Study) -> pd.DataFrame:
    """One row per N and message size: nodes, size_bytes, eq2_hops, eq1_latency_ms."""
    rows = []
    for run in study.runs():
        if run.seed == study.seed:
            hops, latency_ms = model.best_topology(loader.resolve(study.run_config(run.run_id), source=run.run_id))
            rows.append({"nodes": run.value, "size_bytes": run.size_bytes, "eq2_hops": hops, "eq1_latency_ms": latency_ms})
    return pd.DataFrame(rows, columns=["nodes", "size_bytes", *MODEL_COLUMNS])
