"""The commands of what runs cost: benchmarks, profiles, censuses of a run's selects and a node's heap, the cost laws."""

from __future__ import annotations

import json
import os
from pathlib import Path

from waku_shadow.cli.runs import load_run
from waku_shadow.configuration import units
from waku_shadow.errors import ConfigError
from waku_shadow.run import allocator


def cmd_bench(args) -> None:
    """Run one or two study configs at one message size and record what each run cost."""
    from waku_shadow.cost import bench

    if len(args.configs) > 2:
        raise ConfigError(f"bench compares at most two configs, got {len(args.configs)}")
    rows, receipts = bench.run(args.configs, args.size, Path(args.out), args.cores, args.nodes)
    print(bench.to_text(rows, receipts))


def cmd_profile(args) -> None:
    """Rerun a run folder's simulation under perf and write where its CPU time went."""
    from waku_shadow.cost import profile

    run_dir = Path(args.run_dir)
    study = load_run(run_dir)
    out = Path(args.out or Path("bench") / "profiles" / f"{study.name}-{run_dir.name}")
    out.mkdir(parents=True, exist_ok=True)
    parts, syscalls, wall_seconds = profile.profile_run(
        run_dir, out, args.shadow, study.resources.memory_floor_bytes, args.frequency, args.keep,
        allocator.preload(study.stack.shadow_allocator),
    )
    print(f"{run_dir.name} under perf: {wall_seconds:.0f} s wall; tables in {out}\n")
    print(profile.to_markdown(parts, syscalls))


def cmd_select_census(args) -> None:
    """Rerun a run folder's simulation with strace logging and count what its event loops ask the OS."""
    from waku_shadow.cost import select_census

    run_dir = Path(args.run_dir)
    study = load_run(run_dir)
    out = Path(args.out or Path("bench") / "selects" / f"{study.name}-{run_dir.name}")
    out.mkdir(parents=True, exist_ok=True)
    table = select_census.census_run(run_dir, out, args.shadow, study.resources.memory_floor_bytes, args.keep,
                                     allocator.preload(study.stack.shadow_allocator))
    print(f"{run_dir.name}: {out / select_census.CENSUS_TABLE}")
    for name, count in select_census.summary(table).items():
        print(f"{name}: {count:,}")


def cmd_heap_census(args) -> None:
    """Count a running node's heap chunks by size."""
    from waku_shadow.cost import heap_census

    pid = int(args.node) if args.node.isdigit() else heap_census.node_process(args.node)
    start, heap, chunks = heap_census.read_heap(pid)
    print(heap_census.to_text(pid, len(heap), chunks, heap_census.census(chunks), args.top))
    for size in args.holders:
        print()
        print(heap_census.holders_text(size, *heap_census.holders(heap, start, chunks, size), args.top))


def cmd_bench_scaling(args) -> None:
    """Fit wall time and memory against N (or message size) from the benchmark table; write the table,
    the laws and a figure."""
    import pandas as pd

    from waku_shadow.cost import bench, cost_model
    from waku_shadow.report import plots

    out = Path(args.out)
    results = pd.read_csv(out / bench.RESULTS_TABLE)
    if args.against == "nodes":
        size = units.size_bytes(args.size, "--size")
        runs, law = bench.scaling(results, args.label, size)
        name, x, xlabel = f"scaling-{args.label}-{size}B", "nodes", "nodes N"
        title = f"{args.label}, {units.human_size(size)} messages: cost against N"
        predicted = args.predict
        base_gib, per_node_gib = law["memory_base_gib"], law["memory_per_node_mib"] / 1024
        fits = {"largest_n_in_gib": {str(gib): cost_model.nodes_within(gib, base_gib, per_node_gib) for gib in args.memory_gib}}
    else:
        runs, law = bench.size_scaling(results, args.label, args.nodes)
        name, x, xlabel = f"scaling-{args.label}-n{args.nodes}-by-size", "size_bytes", "message size (KB)"
        title = f"{args.label}, N = {args.nodes}: cost against message size"
        predicted = list(runs.loc[runs["status"] != "completed", "size_bytes"])
        fits = {}
    predictions = [bench.predict(law, int(value)) for value in predicted]
    document = {"law": law, "predictions": predictions, **fits}
    runs.to_csv(out / f"{name}.csv", index=False, float_format="%.4g")
    (out / f"{name}.json").write_text(json.dumps(document, indent=2) + "\n")
    plots.scaling(runs, bench.fitted_curve(law, runs), law, x, xlabel, title, out / f"{name}.png")
    print(runs.round(3).to_string(index=False))
    print(f"wall = {law['wall_s']}; peak memory = {law['peak_memory_gib']}")
    for row in predictions:
        point = f"N = {row['nodes']}" if x == "nodes" else units.human_size(row["size_bytes"])
        print(f"{point}: {row['wall_s'] / 60:.1f} min, {row['peak_memory_gib']:.1f} GiB predicted")
    for gib, n in fits.get("largest_n_in_gib", {}).items():
        print(f"largest N in {gib} GiB: {n}")


def cmd_cost_law(args) -> None:
    """Fit the cost law to the completed runs of one nwaku build under results/ and write it."""
    from waku_shadow.cost import cost_model

    runs = cost_model.measured_runs(Path(args.results))
    if runs.empty:
        raise ConfigError(f"no completed runs under {args.results}")
    build = args.build or runs["build"].mode()[0]
    law = cost_model.fit(runs, build, os.cpu_count() or 1)
    cost_model.write(law, Path(args.out))
    print(runs[runs["build"] == build].round(2).to_string(index=False))
    print(f"{args.out}: {law}")
