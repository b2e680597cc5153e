"""Command line of the workflow's stages: each Snakemake rule calls one subcommand."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from waku_shadow import checkout, layout
from waku_shadow.configuration import loader, sources, units
from waku_shadow.configuration.study import Study
from waku_shadow.errors import ConfigError, StackError, ValidationError, WakuShadowError
from waku_shadow.run import allocator, collect, guard
from waku_shadow.stack import builds

# Each command imports the stages it runs: the ones before the analysis (render, simulate) need no
# pandas, scipy or matplotlib, whose imports took 1.5 s of every job.


def rendered_run(value: str) -> str:
    """A --run-dir that render wrote: the stages after it need its run config."""
    if not (Path(value) / layout.RUN_CONFIG).is_file():
        raise argparse.ArgumentTypeError(f"{value} is not a rendered run folder (it has no {layout.RUN_CONFIG})")
    return value


def load_run(run_dir: Path) -> Study:
    path = run_dir / layout.RUN_CONFIG
    return sources.study_on_this_machine(loader.read_yaml(path), source=str(path))


def cmd_check_config(args) -> None:
    from waku_shadow.run import open_files

    study = loader.load(*args.configs)
    open_files.check(study)
    print(f"{study.name}: {study.nodes} nodes, runs: {', '.join(study.run_ids())}")


def cmd_render(args) -> None:
    from waku_shadow.render import plan, provenance, run_folder

    run_dir = Path(args.run_dir)
    study = sources.study_on_this_machine(json.loads(args.config_json), source="run config")
    (size,) = study.message_sizes
    wakunode2 = shutil.which(args.wakunode2)
    curl = shutil.which(study.stack.curl)
    if wakunode2 is None:
        raise StackError(f"wakunode2 not found or not executable: {args.wakunode2}")
    if curl is None:
        raise StackError(f"stack.curl: {study.stack.curl!r} not found; the publisher processes need curl")
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run = plan.plan(study, size)
    run_folder.render(run, run_dir, str(Path(wakunode2).resolve()), str(Path(curl).resolve()))
    (run_dir / layout.RUN_CONFIG).write_text(loader.dump_study(study))
    nwaku_identity = json.loads(Path(args.nwaku_identity).read_text())
    provenance.write(run_dir, run, shadow=args.shadow, curl=curl, nwaku_identity=nwaku_identity)


def cmd_identify_nwaku(args) -> None:
    binary = Path(args.binary)
    if not binary.is_file():
        raise StackError(f"wakunode2 not found: {binary}")
    patches = None if args.prebuilt else [checkout.listed_patch(Path(p)) for p in args.patches]
    identity = builds.nwaku_identity(
        args.tag, patches, binary, args.built_from, args.make_flag, args.memory_manager, args.allocator,
        None if args.prebuilt else args.patch_tiers,
    )
    Path(args.out).write_text(json.dumps(identity, indent=2) + "\n")


def cmd_adopt_nwaku(args) -> None:
    """Install a wakunode2 built with nwaku-patches/ where the build rule would have put it."""
    study = sources.study_from_snakemake({})
    target = builds.nwaku_build_dir(study)
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy2(args.binary, target / "wakunode2")
    nwaku = study.stack
    identity = builds.nwaku_identity(
        nwaku.nwaku_tag,
        checkout.build_patches(nwaku.nwaku_tag, nwaku.nwaku_memory_manager, nwaku.nwaku_patches),
        target / "wakunode2",
        args.built_from,
        list(nwaku.nwaku_make_flags),
        nwaku.nwaku_memory_manager,
        nwaku.nwaku_allocator,
        nwaku.nwaku_patches,
    )
    (target / builds.IDENTITY).write_text(json.dumps(identity, indent=2) + "\n")
    print(target / "wakunode2")


def cmd_simulate(args) -> None:
    from waku_shadow.run import open_files

    run_dir = Path(args.run_dir)
    study = load_run(run_dir)
    open_files.check(study)
    study_dir = layout.study_dir_of(run_dir)
    stats_ = guard.run(
        args.shadow,
        run_dir,
        memory_floor_bytes=study.resources.memory_floor_bytes,
        poll_interval_s=study.resources.memory_poll_interval_ns / 1e9,
        stall_timeout_s=None if study.resources.stall_timeout_ns is None else study.resources.stall_timeout_ns / 1e9,
        merge_identical_pages=study.resources.merge_identical_pages,
        attempts_log=layout.attempts(study_dir, run_dir.name),
        failures_dir=layout.failures(study_dir, run_dir.name),
        parallelism=args.parallelism,
        memory_budget_bytes=args.memory_budget_mb * 2**20 if args.memory_budget_mb else None,
        preload=allocator.preload(study.stack.shadow_allocator),
    )
    collect.collect(run_dir)
    print(
        f"{run_dir.name}: {stats_.wall_seconds:.0f} s wall, peak memory {stats_.peak_memory_bytes / 2**30:.1f} GiB",
        file=sys.stderr,
    )


def cmd_parse(args) -> None:
    import pandas as pd

    from waku_shadow.parse import node_logs, trees

    run_dir = Path(args.run_dir)
    tables = node_logs.parse_run(run_dir)
    receipts = tables["receipts"]
    try:
        receipts["hop"] = trees.hops(receipts)
    except ValidationError:
        receipts["hop"] = pd.NA  # the validate stage names what is wrong with the tree
    for name, file in (("receipts", layout.RECEIPTS), ("publishes", layout.PUBLISHES), ("sends", layout.SENDS),
                       ("receipts_again", layout.RECEIPTS_AGAIN), ("spam_receipts", layout.SPAM_RECEIPTS),
                       ("rln_events", layout.RLN_EVENTS), ("withheld", layout.WITHHELD)):
        tables[name].to_parquet(run_dir / file, index=False)


def cmd_traffic(args) -> None:
    from waku_shadow.analyse import bandwidth
    from waku_shadow.parse import pcap

    run_dir = Path(args.run_dir)
    study = load_run(run_dir)
    pcap.node_traffic(run_dir, study.traffic_interval_ns).to_parquet(run_dir / layout.TRAFFIC, index=False)
    bandwidth.run_amplification(run_dir, study).to_parquet(run_dir / layout.AMPLIFICATION, index=False)


def cmd_closes(args) -> None:
    from waku_shadow.analyse import connections
    from waku_shadow.render import schedule

    run_dir = Path(args.run_dir)
    open_at_s = args.open_at
    if open_at_s is None:
        open_at_s = schedule.read(run_dir)["scheduled_ns"].min() / 1e9
    closes = connections.connection_closes(run_dir, open_at_s, args.host or None)
    if args.out:
        closes.to_csv(args.out, index=False)
    print(closes.to_string(index=False, float_format=lambda value: f"{value:.3f}"))
    print(connections.summary(closes, open_at_s))
    if (run_dir / layout.TRAFFIC).exists() and (run_dir / layout.RECEIPTS).exists():
        last_receipt_s, after, share = connections.sent_after_last_receipt(run_dir, open_at_s)
        print(f"after the last receipt ({last_receipt_s:.3f} s) the nodes still sent {after / 1e6:.0f} MB, "
              f"{share:.1%} of what they sent from {open_at_s:g} s on")


def cmd_validate(args) -> None:
    import pandas as pd

    from waku_shadow.render import churn_plan, schedule
    from waku_shadow.run import run_stats
    from waku_shadow.validate import publish_retries, validation

    run_dir = Path(args.run_dir)
    study = load_run(run_dir)
    hosts = list(pd.read_csv(run_dir / layout.IDENTITIES)["host"])
    result = validation.check(
        study.runs()[0].run_id,
        run_stats.read_stats(run_dir),
        hosts,
        schedule.read(run_dir),
        pd.read_parquet(run_dir / layout.PUBLISHES),
        pd.read_parquet(run_dir / layout.RECEIPTS),
        publish_retries.publish_retries(run_dir),
        study.min_delivery,
        churn_plan.read(run_dir),
        len(pd.read_parquet(run_dir / layout.RECEIPTS_AGAIN)),
    )
    validation.require(result, run_dir)


def cmd_summarize(args) -> None:
    from waku_shadow.analyse import load_study
    from waku_shadow.paper.study_results import StudyResults
    from waku_shadow.report import plots, study_analysis, study_report, tables

    study = loader.load(args.study_config)
    out = Path(args.out)
    results = StudyResults(study, [Path(d) for d in args.runs])
    results.receipts.to_parquet(out / layout.STUDY_RECEIPTS, index=False)
    results.summary.to_csv(out / layout.LATENCY_SUMMARY, index=False, float_format="%.3f")
    (out / layout.LATENCY_SUMMARY_MD).write_text(tables.latency_summary(results.summary).markdown())
    results.runs.to_csv(out / layout.RUNS_TABLE, index=False, float_format="%.6g")
    results.points.to_csv(out / layout.POINTS_TABLE, index=False, float_format="%.6g")
    study_analysis.figure3(results, out / layout.LATENCY_FIGURE)
    if study.sweep:
        plots.sweep_tradeoff(results.points, study.sweep.name, out / layout.SWEEP_FIGURE)
    knees = None
    if load_study.is_load_study(study):
        load_points = load_study.load_points(results.runs, study)
        knees = load_study.knees(load_points)
        load_points.to_csv(out / layout.LOAD_TABLE, index=False, float_format="%.6g")
        knees.to_csv(out / layout.KNEES_TABLE, index=False, float_format="%.6g")
        plots.load_curves(load_points, knees, out / layout.LOAD_FIGURE)
    (out / layout.REPORT_MD).write_text(study_report.study_report(results, knees))


def cmd_analyse(args) -> None:
    """Every table and figure of the study's analysis/ folder (study_analysis.outputs names them)."""
    from waku_shadow.paper.study_results import StudyResults
    from waku_shadow.report import study_analysis

    study_dir = Path(args.study_dir)
    results = StudyResults(loader.load(study_dir / layout.STUDY_CONFIG), [Path(d) for d in args.runs])
    study_analysis.write(results, study_dir / layout.ANALYSIS, args.compare_with)


def cmd_report(args) -> None:
    """Execute the analysis notebook for a study and render it as one self-contained HTML file."""
    import nbformat
    import papermill
    from nbconvert import HTMLExporter

    out = Path(args.out_notebook)
    papermill.execute_notebook(
        args.notebook,
        str(out),
        parameters={"study_dir": args.study_dir, "compare_with": args.compare_with or ""},
        kernel_name="python3",
        progress_bar=False,
        cwd=str(Path.cwd()),
    )
    exporter = HTMLExporter(exclude_input=True, require_js_url="", mathjax_url="")
    html, _ = exporter.from_notebook_node(nbformat.read(out, as_version=4))
    Path(args.out_html).write_text(html)


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
    start, heap = heap_census.heap_mapping(pid)
    chunks = heap_census.walk_chunks(heap, f"process {pid}'s heap", heap_census.cached_chunks(heap, start))
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


def cmd_config_reference(args) -> None:
    """The configuration reference (docs/configuration.md), from the study schema."""
    from waku_shadow.report import config_reference

    print(config_reference.markdown(), end="")


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


def cmd_docs_tables(args) -> None:
    """Fill the generated tables of the README and docs/ from summaries/, results/ and bench/, and draw
    the docs' figures from summaries/."""
    from waku_shadow.report import docs_tables, summaries, summary_figures

    generated = docs_tables.tables(Path(args.results), Path(args.bench), Path(args.summaries), Path(args.configs))
    if args.only:
        unknown = sorted(set(args.only) - set(generated))
        if unknown:
            raise ConfigError(f"--only: no table is called {', '.join(map(repr, unknown))}; known: {', '.join(generated)}")
        # the others are kept as they are, e.g. tables of studies whose results are on another machine
        generated = {name: table if name in args.only else None for name, table in generated.items()}
    for doc in map(Path, args.docs or docs_tables.generated_docs(Path("."))):
        text, kept = docs_tables.fill(doc.read_text(), generated, str(doc))
        doc.write_text(text)
        print(f"{doc}: " + (f"kept as they were, no results here: {', '.join(kept)}" if kept else "every table written"))
    if left_out := docs_tables.unsummarised(Path(args.results), Path(args.configs)):
        print(f"not summarised, no config under {args.configs}: {', '.join(left_out)}")
    if not args.only:
        for path in summary_figures.write(summaries.read_all(Path(args.summaries)), Path(args.figures)):
            print(f"{path}: drawn from its summary")


def cmd_signoff(args) -> None:
    """The sign-off page of a candidate build against a base build, from each side's battery studies
    (results/<study>/, their validated runs), paired in the order given."""
    from waku_shadow.analyse import study_runs
    from waku_shadow.paper.study_results import StudyResults
    from waku_shadow.report import signoff_page

    def side(label: str, study_dirs: list[str]) -> signoff_page.Side:
        studies = []
        for study_dir in map(Path, study_dirs):
            study = loader.load(study_dir / layout.STUDY_CONFIG)
            validated = study_runs.StudyRuns(study, study_dir, study_runs.run_states(study, study_dir)).validated
            if not validated:
                raise ConfigError(f"{study_dir}: no validated run to sign off on")
            studies.append(StudyResults(study, validated))
        return signoff_page.Side(label, studies)

    if len(args.base) != len(args.candidate):
        raise ConfigError(f"--base names {len(args.base)} studies and --candidate {len(args.candidate)}: the battery pairs them one by one")
    page = signoff_page.write(side(args.base_label, args.base), side(args.candidate_label, args.candidate), Path(args.out))
    print(f"{page}: {args.candidate_label} against {args.base_label}")


def cmd_paper_page(args) -> None:
    """The paper's figures and tables from the studies' validated runs, in one folder with one page."""
    from waku_shadow.report import figures_page

    studies = [sources.study_on_this_machine(loader.read_yaml(path), source=path) for path in args.studies]
    missing = figures_page.write(studies, Path(args.out))
    print(f"{args.out}/index.html: " + (f"{len(missing)} missing:\n  " + "\n  ".join(missing) if missing else "complete"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="waku-shadow", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check-config", help="validate study config files and list their runs")
    p.add_argument("configs", nargs="+")
    p.set_defaults(func=cmd_check_config)

    p = sub.add_parser("render", help="write a run folder: shadow.yaml, graph, identities, schedule")
    p.add_argument("--run-dir", required=True)
    p.add_argument("--config-json", required=True, help="the run's resolved config as JSON")
    p.add_argument("--wakunode2", required=True)
    p.add_argument("--nwaku-identity", required=True, help="identity.json of the wakunode2 build")
    p.add_argument("--shadow", required=True)
    p.set_defaults(func=cmd_render)

    p = sub.add_parser("identify-nwaku", help="record a wakunode2 build's identity: tag, patch hashes, binary hash")
    p.add_argument("--binary", required=True)
    p.add_argument("--tag", required=True)
    p.add_argument("--built-from", required=True, help="source tree or repository the binary was built from")
    p.add_argument("--out", required=True)
    p.add_argument("--prebuilt", action="store_true", help="a binary built elsewhere: its patches are unknown")
    p.add_argument("--make-flag", action="append", default=[], help="a make argument the build used (repeatable)")
    p.add_argument("--memory-manager", help="the Nim memory manager the build used (--mm:...)")
    p.add_argument("--allocator", help="the allocator the build used: malloc (-d:useMalloc) or nim")
    p.add_argument("--patch-tiers", choices=checkout.PATCH_CHOICES, default="all",
                   help="the tiers of the patches the build applied (stack.nwaku.patches); default: all")
    p.add_argument("patches", nargs="*", help="the patches the build applied, in order, each listed in its folder's series")
    p.set_defaults(func=cmd_identify_nwaku)

    p = sub.add_parser("adopt-nwaku", help="install a wakunode2 built with the patches where the workflow expects it")
    p.add_argument("--binary", required=True)
    p.add_argument("--built-from", required=True, help="how and from what the binary was built")
    p.set_defaults(func=cmd_adopt_nwaku)

    p = sub.add_parser("simulate", help="run Shadow on a rendered run folder under the memory guard")
    p.add_argument("--run-dir", required=True, type=rendered_run)
    p.add_argument("--shadow", required=True)
    p.add_argument("--parallelism", type=int, help="Shadow's worker threads (the job's threads); default: Shadow's")
    p.add_argument("--memory-budget-mb", type=int, help="stop the run when its own memory passes this (its declared mem_mb)")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("parse", help="parse a run's node logs into receipts/publishes/sends tables")
    p.add_argument("--run-dir", required=True, type=rendered_run)
    p.set_defaults(func=cmd_parse)

    p = sub.add_parser("validate", help="check a parsed run; fail naming what is wrong")
    p.add_argument("--run-dir", required=True, type=rendered_run)
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("summarize", help="study tables, figure and report from validated runs")
    p.add_argument("--study-config", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--runs", nargs="+", required=True)
    p.set_defaults(func=cmd_summarize)

    p = sub.add_parser("analyse", help="every table and figure of a study's analysis/ folder, from its validated runs")
    p.add_argument("--study-dir", required=True)
    p.add_argument("--runs", nargs="+", required=True)
    p.add_argument("--compare-with", help="another study's folder, set beside this one")
    p.set_defaults(func=cmd_analyse)

    p = sub.add_parser("report", help="execute the report notebook of a study (on its summary and analysis) into HTML")
    p.add_argument("--notebook", required=True)
    p.add_argument("--study-dir", required=True)
    p.add_argument("--out-notebook", required=True)
    p.add_argument("--out-html", required=True)
    p.add_argument("--compare-with", help="the other study's folder that analyse set beside this one")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("traffic", help="bytes per node and interval from Shadow's packet captures, and each message's amplification")
    p.add_argument("--run-dir", required=True, type=rendered_run)
    p.set_defaults(func=cmd_traffic)

    p = sub.add_parser("closes", help="the long-lived connections a run's nodes closed, and the keep-alive ping failures before them")
    p.add_argument("--run-dir", required=True, type=rendered_run)
    p.add_argument("--open-at", type=float, metavar="SECONDS",
                   help="count the connections open at this simulated time (default: the first scheduled message)")
    p.add_argument("--host", action="append", default=[], help="only this closer (repeatable; default: every node)")
    p.add_argument("--out", help="also write the table as CSV here")
    p.set_defaults(func=cmd_closes)

    p = sub.add_parser("bench", help="measure what a run costs: wall time, memory, speed, log volume")
    p.add_argument("configs", nargs="+", help="one study config, or two to compare (second / first); "
                   "join overlays with '+', e.g. configs/paper.yaml+configs/overlays/baseline.yaml")
    p.add_argument("--size", default="10 KB", help="the message size to run (default: 10 KB)")
    p.add_argument("--nodes", type=int, help="run with this many nodes instead of the config's (scaling)")
    p.add_argument("--cores", type=int, default=os.cpu_count())
    p.add_argument("--out", default="bench", help="where the JSON, results.csv and the runs go")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("profile", help="rerun a run folder under perf: where the CPU time goes, Shadow against the nodes")
    p.add_argument("--run-dir", required=True, type=rendered_run, help="a rendered run folder (results/STUDY/runs/RUN)")
    p.add_argument("--shadow", default="shadow", help="the Shadow binary (default: shadow on PATH)")
    p.add_argument("--frequency", type=int, default=499, help="perf's samples per second and CPU (default: 499)")
    p.add_argument("--out", help="where the tables go (default: bench/profiles/STUDY-RUN)")
    p.add_argument("--keep", action="store_true", help="keep perf.data and the rerun's folder")
    p.set_defaults(func=cmd_profile)

    p = sub.add_parser("select-census", help="rerun a run folder with strace logging: what the nodes' event loops ask the OS")
    p.add_argument("--run-dir", required=True, type=rendered_run, help="a rendered run folder (results/STUDY/runs/RUN)")
    p.add_argument("--shadow", default="shadow", help="the Shadow binary (default: shadow on PATH)")
    p.add_argument("--out", help="where the table goes (default: bench/selects/STUDY-RUN)")
    p.add_argument("--keep", action="store_true", help="keep the rerun's folder with its strace files")
    p.set_defaults(func=cmd_select_census)

    p = sub.add_parser("heap-census", help="count a running node's heap chunks by size: what fills its memory")
    p.add_argument("node", help="a wakunode2 PID, or the Shadow host (e.g. node0143) of a running simulation")
    p.add_argument("--top", type=int, default=15, help="how many chunk sizes to list, largest total first (default: 15)")
    p.add_argument("--holders", type=int, action="append", default=[], metavar="SIZE",
                   help="also list which chunks point at the chunks of this size, by their size and the pointer's offset")
    p.set_defaults(func=cmd_heap_census)

    p = sub.add_parser("bench-scaling", help="fit wall time and memory against N (or message size) from bench/results.csv")
    p.add_argument("--label", default="paper", help="the benchmarked config (its file name without .yaml)")
    p.add_argument("--against", choices=["nodes", "size"], default="nodes",
                   help="nodes: runs at one --size against N; size: runs at --nodes against message size")
    p.add_argument("--size", default="10 KB")
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--out", default="bench")
    p.add_argument("--predict", type=int, nargs="*", default=[10_000])
    p.add_argument("--memory-gib", type=float, nargs="*", default=[22.0, 126.0],
                   help="memory to fit N into (total minus the guard's floor; default 24 and 128 GiB hosts)")
    p.set_defaults(func=cmd_bench_scaling)

    p = sub.add_parser("config-reference", help="print the configuration reference (docs/configuration.md) from the schema")
    p.set_defaults(func=cmd_config_reference)

    p = sub.add_parser("cost-law", help="fit what a run costs (memory, wall time) to the completed runs under results/")
    p.add_argument("--results", default="results")
    p.add_argument("--build", help="the nwaku build whose runs to fit (tag-memory_manager-allocator); default: the commonest")
    p.add_argument("--out", default=checkout.COST_LAW)
    p.set_defaults(func=cmd_cost_law)

    p = sub.add_parser("docs-tables", help="write the measured tables of the README and docs/ from summaries/, results/ and bench/")
    p.add_argument("docs", nargs="*", help="default: README.md and every page of docs/ with a generated table")
    p.add_argument("--results", default="results")
    p.add_argument("--summaries", default="summaries", help="the committed summaries, refreshed from the results here")
    p.add_argument("--configs", default="configs", help="where the configs of the summarised studies are")
    p.add_argument("--bench", default="bench")
    p.add_argument("--figures", default="docs/figures", help="where the figures drawn from the summaries go")
    p.add_argument("--only", action="append", metavar="TABLE",
                   help="write only this generated table (repeatable); the others are kept as they are")
    p.set_defaults(func=cmd_docs_tables)

    p = sub.add_parser("signoff", help="a candidate nwaku build against a base build on the same studies: a verdict per metric")
    p.add_argument("--base", nargs="+", required=True, help="the base build's study folders (results/<study>)")
    p.add_argument("--candidate", nargs="+", required=True, help="the candidate's, in the same order")
    p.add_argument("--base-label", required=True)
    p.add_argument("--candidate-label", required=True)
    p.add_argument("--out", required=True, help="the folder to write (signoff.md, signoff.html, verdicts.csv, receipts.csv)")
    p.set_defaults(func=cmd_signoff)

    p = sub.add_parser("paper-page", help="gather the paper's figures and tables from the studies' validated runs")
    p.add_argument("--studies", nargs="+", required=True, help="the study configs (their resolved study.yaml or configs/*.yaml)")
    p.add_argument("--out", required=True, help="the folder to write (index.html and its figures and tables)")
    p.set_defaults(func=cmd_paper_page)

    args = parser.parse_args(argv)
    try:
        args.func(args)
    except WakuShadowError as exc:
        print(f"waku-shadow {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except FileNotFoundError as exc:
        print(f"waku-shadow {args.command}: error: {exc.filename}: no such file or folder", file=sys.stderr)
        return 1
    return 0
