"""The cost law: fitted to measured runs, and what a run declares from it."""

import numpy as np
import pandas as pd
import pytest
from recorded import RUNS, parsed_copies

from waku_shadow.configuration import loader
from waku_shadow.configuration.study import Study
from waku_shadow.cost import cost_model
from waku_shadow.errors import ConfigError

LAW = cost_model.CostLaw(base_gib=0.5, idle_mib_per_node=5.0, mib_per_node_per_kb=0.02, wall_us_per_node_second=3000.0,
                   wall_us_per_node_second_per_kb=6.0, build="v0.37.1-beta-orc-malloc", cores=2, runs=[])


def runs_from(law: cost_model.CostLaw, points) -> pd.DataFrame:
    return pd.DataFrame([
        {"run": f"n{n}-size{size}B", "nodes": n, "size_bytes": size, "simulated_s": sim,
         "wall_s": law.wall_s(n, size, sim), "peak_memory_gib": law.memory_gib(n, size), "build": law.build}
        for n, size, sim in points
    ])


def test_the_fit_recovers_the_law_its_runs_follow():
    runs = runs_from(LAW, [(50, 2000, 40), (50, 500_000, 40), (1000, 2000, 85), (1000, 100_000, 85), (200, 500_000, 85)])
    fitted = cost_model.fit(pd.concat([runs, runs.assign(build="other", wall_s=1.0)]), LAW.build, cores=2)
    for field in ("base_gib", "idle_mib_per_node", "mib_per_node_per_kb", "wall_us_per_node_second",
                  "wall_us_per_node_second_per_kb"):
        assert getattr(fitted, field) == pytest.approx(getattr(LAW, field), rel=1e-6), field
    assert fitted.runs == sorted(runs["run"])


def test_too_few_points_are_refused():
    with pytest.raises(ConfigError, match="three or more"):
        cost_model.fit(runs_from(LAW, [(50, 2000, 40), (50, 2000, 40), (1000, 2000, 85)]), LAW.build, cores=2)


def run_of(nodes: int, size: str, **resources) -> Study:
    return loader.resolve({"study": "s", "network": {"nodes": nodes, "peers_per_node": 3},
                        "traffic": {"message_sizes": [size]}, "resources": resources})


def test_a_run_declares_the_law_times_the_margin_and_a_thread_per_125_nodes():
    run = run_of(1000, "500 KB")
    needs = cost_model.needs(run, LAW, cores=64)
    assert needs.mem_mb == int(np.ceil(LAW.memory_gib(1000, 500_000) * 1.5 * 1024))
    assert needs.runtime_min == int(np.ceil(LAW.wall_s(1000, 500_000, run.stop_time_ns / 1e9) * 1.5 / 60))
    assert needs.threads == 8
    assert cost_model.needs(run, LAW, cores=2).threads == 2
    assert cost_model.needs(run_of(20, "2 KB"), LAW, cores=64).threads == 1


def test_a_study_overrides_what_its_runs_declare():
    needs = cost_model.needs(run_of(1000, "500 KB", run_memory="40 GiB", run_runtime="120 min", threads_per_run=4), LAW, cores=64)
    assert (needs.mem_mb, needs.runtime_min, needs.threads) == (40 * 1024, 120, 4)


def test_measured_runs_reads_completed_runs_with_their_build(tmp_path):
    parsed_copies(RUNS, tmp_path / "results" / "recorded" / "runs", validate=False)
    runs = cost_model.measured_runs(tmp_path / "results")
    assert sorted(runs["run"]) == sorted(r.name for r in RUNS)
    assert (runs["nodes"] == 16).all() and set(runs["size_bytes"]) == {2000, 100_000}
    assert (runs["wall_s"] > 0).all() and (runs["peak_memory_gib"] > 0).all()


def test_the_committed_law_reads():
    law = cost_model.read()
    assert law.runs and law.memory_gib(1000, 2000) > 0


def test_the_largest_n_that_fits_is_the_last_whose_memory_fits():
    n = cost_model.largest_nodes(LAW, 500_000, 22)
    assert LAW.memory_gib(n, 500_000) <= 22 < LAW.memory_gib(n + 1, 500_000)
