"""Command line of the workflow's stages: each Snakemake rule calls one subcommand."""

from __future__ import annotations

import argparse
import os
import sys

from waku_shadow import checkout

# Each command imports the stages it runs: the ones before the analysis (render, simulate) need no
# pandas, scipy or matplotlib, whose imports took 1.5 s of every job.
from waku_shadow.cli import bench, docs, nwaku, pages, runs, studies
from waku_shadow.errors import WakuShadowError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="waku-shadow", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check-config", help="validate study config files and list their runs")
    p.add_argument("configs", nargs="+")
    p.set_defaults(func=runs.cmd_check_config)

    p = sub.add_parser("render", help="write a run folder: shadow.yaml, graph, identities, schedule")
    p.add_argument("--run-dir", required=True)
    p.add_argument("--config-json", required=True, help="the run's resolved config as JSON")
    p.add_argument("--wakunode2", required=True)
    p.add_argument("--nwaku-identity", required=True, help="identity.json of the wakunode2 build")
    p.add_argument("--shadow", required=True)
    p.set_defaults(func=runs.cmd_render)

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
    p.set_defaults(func=nwaku.cmd_identify_nwaku)

    p = sub.add_parser("adopt-nwaku", help="install a wakunode2 built with the patches where the workflow expects it")
    p.add_argument("--binary", required=True)
    p.add_argument("--built-from", required=True, help="how and from what the binary was built")
    p.set_defaults(func=nwaku.cmd_adopt_nwaku)

    p = sub.add_parser("simulate", help="run Shadow on a rendered run folder under the memory guard")
    p.add_argument("--run-dir", required=True, type=runs.rendered_run)
    p.add_argument("--shadow", required=True)
    p.add_argument("--parallelism", type=int, help="Shadow's worker threads (the job's threads); default: Shadow's")
    p.add_argument("--memory-budget-mb", type=int, help="stop the run when its own memory passes this (its declared mem_mb)")
    p.set_defaults(func=runs.cmd_simulate)

    p = sub.add_parser("parse", help="parse a run's node logs into receipts/publishes/sends tables")
    p.add_argument("--run-dir", required=True, type=runs.rendered_run)
    p.set_defaults(func=runs.cmd_parse)

    p = sub.add_parser("validate", help="check a parsed run; fail naming what is wrong")
    p.add_argument("--run-dir", required=True, type=runs.rendered_run)
    p.set_defaults(func=runs.cmd_validate)

    p = sub.add_parser("summarize", help="study tables, figure and report from validated runs")
    p.add_argument("--study-config", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--runs", nargs="+", required=True)
    p.set_defaults(func=studies.cmd_summarize)

    p = sub.add_parser("analyse", help="every table and figure of a study's analysis/ folder, from its validated runs")
    p.add_argument("--study-dir", required=True)
    p.add_argument("--runs", nargs="+", required=True)
    p.add_argument("--compare-with", help="another study's folder, set beside this one")
    p.set_defaults(func=studies.cmd_analyse)

    p = sub.add_parser("report", help="execute the report notebook of a study (on its summary and analysis) into HTML")
    p.add_argument("--notebook", required=True)
    p.add_argument("--study-dir", required=True)
    p.add_argument("--out-notebook", required=True)
    p.add_argument("--out-html", required=True)
    p.add_argument("--compare-with", help="the other study's folder that analyse set beside this one")
    p.set_defaults(func=studies.cmd_report)

    p = sub.add_parser("traffic", help="bytes per node and interval from Shadow's packet captures, and each message's amplification")
    p.add_argument("--run-dir", required=True, type=runs.rendered_run)
    p.set_defaults(func=runs.cmd_traffic)

    p = sub.add_parser("closes", help="the long-lived connections a run's nodes closed, and the keep-alive ping failures before them")
    p.add_argument("--run-dir", required=True, type=runs.rendered_run)
    p.add_argument("--open-at", type=float, metavar="SECONDS",
                   help="count the connections open at this simulated time (default: the first scheduled message)")
    p.add_argument("--host", action="append", default=[], help="only this closer (repeatable; default: every node)")
    p.add_argument("--out", help="also write the table as CSV here")
    p.set_defaults(func=runs.cmd_closes)

    p = sub.add_parser("bench", help="measure what a run costs: wall time, memory, speed, log volume")
    p.add_argument("configs", nargs="+", help="one study config, or two to compare (second / first); "
                   "join overlays with '+', e.g. configs/paper.yaml+configs/overlays/baseline.yaml")
    p.add_argument("--size", default="10 KB", help="the message size to run (default: 10 KB)")
    p.add_argument("--nodes", type=int, help="run with this many nodes instead of the config's (scaling)")
    p.add_argument("--cores", type=int, default=os.cpu_count())
    p.add_argument("--out", default="bench", help="where the JSON, results.csv and the runs go")
    p.set_defaults(func=bench.cmd_bench)

    p = sub.add_parser("profile", help="rerun a run folder under perf: where the CPU time goes, Shadow against the nodes")
    p.add_argument("--run-dir", required=True, type=runs.rendered_run, help="a rendered run folder (results/STUDY/runs/RUN)")
    p.add_argument("--shadow", default="shadow", help="the Shadow binary (default: shadow on PATH)")
    p.add_argument("--frequency", type=int, default=499, help="perf's samples per second and CPU (default: 499)")
    p.add_argument("--out", help="where the tables go (default: bench/profiles/STUDY-RUN)")
    p.add_argument("--keep", action="store_true", help="keep perf.data and the rerun's folder")
    p.set_defaults(func=bench.cmd_profile)

    p = sub.add_parser("select-census", help="rerun a run folder with strace logging: what the nodes' event loops ask the OS")
    p.add_argument("--run-dir", required=True, type=runs.rendered_run, help="a rendered run folder (results/STUDY/runs/RUN)")
    p.add_argument("--shadow", default="shadow", help="the Shadow binary (default: shadow on PATH)")
    p.add_argument("--out", help="where the table goes (default: bench/selects/STUDY-RUN)")
    p.add_argument("--keep", action="store_true", help="keep the rerun's folder with its strace files")
    p.set_defaults(func=bench.cmd_select_census)

    p = sub.add_parser("heap-census", help="count a running node's heap chunks by size: what fills its memory")
    p.add_argument("node", help="a wakunode2 PID, or the Shadow host (e.g. node0143) of a running simulation")
    p.add_argument("--top", type=int, default=15, help="how many chunk sizes to list, largest total first (default: 15)")
    p.add_argument("--holders", type=int, action="append", default=[], metavar="SIZE",
                   help="also list which chunks point at the chunks of this size, by their size and the pointer's offset")
    p.set_defaults(func=bench.cmd_heap_census)

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
    p.set_defaults(func=bench.cmd_bench_scaling)

    p = sub.add_parser("config-reference", help="print the configuration reference (docs/configuration.md) from the schema")
    p.set_defaults(func=docs.cmd_config_reference)

    p = sub.add_parser("cost-law", help="fit what a run costs (memory, wall time) to the completed runs under results/")
    p.add_argument("--results", default="results")
    p.add_argument("--build", help="the nwaku build whose runs to fit (tag-memory_manager-allocator); default: the commonest")
    p.add_argument("--out", default=checkout.COST_LAW)
    p.set_defaults(func=bench.cmd_cost_law)

    p = sub.add_parser("docs-tables", help="write the measured tables of the README and docs/ from summaries/, results/ and bench/")
    p.add_argument("docs", nargs="*", help="default: README.md and every page of docs/ with a generated table")
    p.add_argument("--results", default="results")
    p.add_argument("--summaries", default="summaries", help="the committed summaries, refreshed from the results here")
    p.add_argument("--configs", default="configs", help="where the configs of the summarised studies are")
    p.add_argument("--bench", default="bench")
    p.add_argument("--figures", default="docs/figures", help="where the figures drawn from the summaries go")
    p.add_argument("--only", action="append", metavar="TABLE",
                   help="write only this generated table (repeatable); the others are kept as they are")
    p.set_defaults(func=docs.cmd_docs_tables)

    p = sub.add_parser("signoff", help="a candidate nwaku build against a base build on the same studies: a verdict per metric")
    p.add_argument("--base", nargs="+", required=True, help="the base build's study folders (results/<study>)")
    p.add_argument("--candidate", nargs="+", required=True, help="the candidate's, in the same order")
    p.add_argument("--base-label", required=True)
    p.add_argument("--candidate-label", required=True)
    p.add_argument("--out", required=True, help="the folder to write (signoff.md, signoff.html, verdicts.csv, receipts.csv)")
    p.set_defaults(func=pages.cmd_signoff)

    p = sub.add_parser("paper-page", help="gather the paper's figures and tables from the studies' validated runs")
    p.add_argument("--studies", nargs="+", required=True, help="the study configs (their resolved study.yaml or configs/*.yaml)")
    p.add_argument("--out", required=True, help="the folder to write (index.html and its figures and tables)")
    p.set_defaults(func=pages.cmd_paper_page)

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
