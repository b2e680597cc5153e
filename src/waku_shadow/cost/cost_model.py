"""What a run needs, memory, time and threads, from a cost law fitted to measured runs.

    peak memory = base + N x (idle + per KB x message KB)
    wall time   = N x simulated seconds x (per node-second + per node-second and KB x message KB)

Both are fitted by non-negative least squares (scipy.optimize.nnls) over completed runs of one
nwaku build whose memory was measured one way, the run's own resident memory (run_stats'
resident measure; `waku-shadow cost-law`), and written to bench/cost-law.json with the runs
behind them. The simulate rule declares what the law predicts, times resources.cost_margin, as its
mem_mb and runtime, so Snakemake (or Slurm) runs as many runs at once as the host has room for;
the memory guard holds each run to that budget.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import nnls

from waku_shadow import checkout, layout
from waku_shadow.configuration import loader
from waku_shadow.configuration.study import Study
from waku_shadow.errors import ConfigError
from waku_shadow.run.run_stats import RESIDENT_MEASURE, read_stats

NODES_PER_THREAD = 125  # Shadow's speed-up flattens beyond a worker per ~100 hosts


@dataclass(frozen=True)
class CostLaw:
    base_gib: float
    idle_mib_per_node: float
    mib_per_node_per_kb: float
    wall_us_per_node_second: float
    wall_us_per_node_second_per_kb: float
    build: str  # the nwaku build the runs used
    cores: int  # the cores the runs had
    runs: list[str]

    def memory_gib(self, nodes: int, size_bytes: int) -> float:
        return self.base_gib + nodes * (self.idle_mib_per_node + self.mib_per_node_per_kb * size_bytes / 1000) / 1024

    def wall_s(self, nodes: int, size_bytes: int, simulated_s: float) -> float:
        per = self.wall_us_per_node_second + self.wall_us_per_node_second_per_kb * size_bytes / 1000
        return nodes * simulated_s * per / 1e6


@dataclass(frozen=True)
class Needs:
    mem_mb: int
    runtime_min: int
    threads: int


def measured_runs(results_dir: Path) -> pd.DataFrame:
    """Every completed run under results_dir: its N, size, simulated seconds, wall time, peak memory and build."""
    rows = []
    for stats_path in sorted(results_dir.glob(f"*/{layout.RUNS}/*/{layout.RUN_STATS}")):
        run_dir = stats_path.parent
        stats = read_stats(run_dir)
        if stats.status != "completed" or not (run_dir / layout.PROVENANCE).exists():
            continue
        study = loader.load(run_dir / layout.RUN_CONFIG)
        nwaku = json.loads((run_dir / layout.PROVENANCE).read_text())["nwaku"]
        rows.append({
            "study": study.name, "run": run_dir.name, "nodes": study.nodes, "size_bytes": study.message_sizes[0],
            "simulated_s": study.stop_time_ns / 1e9, "wall_s": stats.wall_seconds,
            "peak_memory_gib": stats.memory_bytes / 2**30, "memory_measure": stats.memory_measure,
            "build": f"{nwaku['nwaku_tag']}-{nwaku.get('memory_manager', 'refc')}-{nwaku.get('allocator', 'nim')}",
        })
    return pd.DataFrame(rows, columns=["study", "run", "nodes", "size_bytes", "simulated_s", "wall_s", "peak_memory_gib",
                                       "memory_measure", "build"])


def fit(runs: pd.DataFrame, build: str, cores: int, measure: str = RESIDENT_MEASURE) -> CostLaw:
    """The law fitted to the runs of ``build`` whose memory was measured by ``measure`` (the run's own
    resident peak): N and the message size must each take two values or more, or the per-node and
    per-KB terms are not apart."""
    runs = runs[(runs["build"] == build) & (runs["memory_measure"] == measure)]
    if runs["nodes"].nunique() < 2 or runs["size_bytes"].nunique() < 2:
        raise ConfigError(f"the cost law needs completed runs of {build} with the {measure} memory measure at two "
                          f"or more N and two or more message sizes; found {len(runs)} runs at N = "
                          f"{sorted(map(int, runs['nodes'].unique()))}, sizes {sorted(map(int, runs['size_bytes'].unique()))}")
    kb = runs["size_bytes"].to_numpy() / 1000
    nodes = runs["nodes"].to_numpy(dtype=float)
    memory, _ = nnls(np.column_stack([np.ones_like(nodes), nodes / 1024, nodes * kb / 1024]), runs["peak_memory_gib"].to_numpy())
    node_seconds = nodes * runs["simulated_s"].to_numpy()
    wall, _ = nnls(np.column_stack([node_seconds, node_seconds * kb]) / 1e6, runs["wall_s"].to_numpy())
    return CostLaw(*map(float, memory), *map(float, wall), build=build, cores=cores, runs=sorted(runs["run"]))


def largest_nodes(law: CostLaw, size_bytes: int, memory_gib: float) -> int:
    """The largest N whose predicted peak memory at this message size stays within ``memory_gib``."""
    per_node_gib = (law.idle_mib_per_node + law.mib_per_node_per_kb * size_bytes / 1000) / 1024
    return nodes_within(memory_gib, law.base_gib, per_node_gib)


def nodes_within(memory_gib: float, base_gib: float, per_node_gib: float) -> int:
    """The largest N whose peak memory, base + N x per node (the law's form at one message size),
    stays within ``memory_gib``: the one "largest N", of the cost law and of a benchmark's scaling fit."""
    # the tolerance keeps a quotient that is whole but for rounding (a fitted slope) from losing a node
    return int((memory_gib - base_gib) / per_node_gib + 1e-9)


def write(law: CostLaw, path: Path) -> None:
    path.write_text(json.dumps(asdict(law), indent=2) + "\n")


def read(path: Path | None = None) -> CostLaw:
    path = path or checkout.path(checkout.COST_LAW)
    try:
        return CostLaw(**json.loads(Path(path).read_text()))
    except (OSError, TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: not a cost law ({exc}); write one with waku-shadow cost-law") from None


def needs(run: Study, law: CostLaw, cores: int | None) -> Needs:
    """What one run (a study of one run) needs: the law's prediction x resources.cost_margin, unless the study
    sets resources.run_memory or run_runtime; threads: one per NODES_PER_THREAD nodes, at most ``cores``
    (None: no limit, on a cluster)."""
    (size,) = run.message_sizes
    margin = run.resources.cost_margin
    memory = run.resources.run_memory_bytes or law.memory_gib(run.hosts, size) * margin * 2**30
    runtime = run.resources.run_runtime_ns / 60e9 if run.resources.run_runtime_ns else (
        law.wall_s(run.hosts, size, run.stop_time_ns / 1e9) * margin / 60)
    threads = run.resources.threads_per_run or min(cores or math.inf, max(1, math.ceil(run.hosts / NODES_PER_THREAD)))
    return Needs(mem_mb=math.ceil(memory / 2**20), runtime_min=max(1, math.ceil(runtime)), threads=threads)
