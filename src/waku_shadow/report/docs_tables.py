"""The measured tables of the README and docs/, written from summaries/, results/ and bench/.

A doc marks where a table goes:

    <!-- generated: table5 -->
    ...replaced by `waku-shadow docs-tables`...
    <!-- /generated -->

Every table says which runs it comes from. The blocks of report/summary_tables.py are written from
the committed summaries alone (report/summaries.py), which the command first refreshes from the
results on this machine: a fresh clone rewrites them byte for byte. The blocks of bench/ and of the
paper's published data are written whole too. The other blocks (report/results_tables.py) hold one
section per study, headed by its name in bold: a section is rewritten when its study's results are
on this machine and kept as it was otherwise, and a block with no results here at all keeps what it
holds; the command names what it kept.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pandas as pd

from waku_shadow import checkout
from waku_shadow.analyse import study_runs
from waku_shadow.analyse.study_runs import studies
from waku_shadow.configuration import signoff
from waku_shadow.configuration.units import human_size
from waku_shadow.cost import container, cost_model, profile, select_census
from waku_shadow.errors import ConfigError
from waku_shadow.paper import compare
from waku_shadow.paper.study_results import StudyResults
from waku_shadow.report import (class_tables, cost_answers, discovery_tables, light_tables, results_tables, scaling_tables, shard_tables,
                                summaries, summary_tables, switch_table)
from waku_shadow.report import tables as written
from waku_shadow.run import run_stats

BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /generated -->)", re.S)
SECTION = re.compile(r"^\*\*(?P<study>[\w.-]+)\*\*", re.M)

STUDY_ROW = re.compile(r"^\| `(?P<study>[\w.-]+)` \|.*$", re.M)


# a block's content: one text, or one section per study name
Block = str | dict[str, str] | None


def study_results(gathered: list[study_runs.StudyRuns]) -> dict[str, StudyResults]:
    """One StudyResults per study with validated runs, by name: each result is computed once for every block."""
    return {g.study.name: StudyResults(g.study, g.validated) for g in gathered if g.validated}


def scaling(bench_dir: Path) -> str | None:
    rows = []
    for path in sorted(bench_dir.glob("scaling-*.json")):
        document = json.loads(path.read_text())
        law = document["law"]
        fits = document.get("largest_n_in_gib", {})
        rows.append([path.stem, f"{law['wall_s']}", f"{law['peak_memory_gib']}",
                     ", ".join(f"{gib} GiB: N = {n}" for gib, n in fits.items())])
    if not rows:
        return None
    return written.table(rows, ["fit (bench/…json)", "wall time (s)", "peak memory (GiB)", "largest N that fits"],
                        "llll").markdown()


CAPACITY_SIZES = (2_000, 25_000, 100_000, 500_000)


def cost_law(bench_dir: Path) -> cost_model.CostLaw | None:
    """The cost law in bench_dir (bench/cost-law.json), or None when there is none."""
    path = bench_dir / Path(checkout.COST_LAW).name
    return cost_model.read(path) if path.exists() else None


def capacity(law: cost_model.CostLaw | None) -> str | None:
    """Per message size, what the cost law (bench/cost-law.json) predicts for N = 1000 and the largest N
    whose predicted memory fits a 24 GiB and a 256 GB host."""
    if law is None:
        return None
    simulated_s = 85  # the paper study's runs: 20 s bootstrap, 10 messages 5 s apart, 10 s drain
    rows = [[human_size(size), f"{law.memory_gib(1000, size):.1f} GiB", f"{law.wall_s(1000, size, simulated_s) / 60:.0f} min",
             *summary_tables.largest_nodes_cells(law, size)] for size in CAPACITY_SIZES]
    return "\n".join([
        f"Fitted to {len(law.runs)} runs of nwaku {law.build} on {law.cores} cores ({Path(checkout.COST_LAW).name}): "
        f"peak memory = {law.base_gib:.2f} GiB + N x ({law.idle_mib_per_node:.2f} MiB + {law.mib_per_node_per_kb:.4f} MiB x KB).",
        "",
        written.table(rows, ["message size", "N = 1000: memory", "N = 1000: wall time",
                            *(f"largest N in {gib} GiB" for gib in summary_tables.CAPACITY_GIB)],
                      "lrr" + "r" * len(summary_tables.CAPACITY_GIB)).markdown()])


def bench_rows(bench_dir: Path) -> str | None:
    path = bench_dir / "results.csv"
    if not path.exists():
        return None
    table = pd.read_csv(path)
    # runs recorded before they measured their own memory have only the machine's
    table["memory_measure"] = table.get("memory_measure", pd.Series(index=table.index, dtype=object)).fillna(run_stats.MACHINE_MEASURE)
    rows = [[f"{r.started_utc}", f"{r.label}", f"{r.run}", f"{r.status}", f"{r.wall_s:.0f} s",
             f"{r.peak_memory_gib:.2f} GiB ({r.memory_measure})", f"{r.node_seconds_per_wall_second:.0f}", f"{r.waku_shadow}"]
            for r in table.itertuples()]
    return written.table(rows, ["started (UTC)", "config", "run", "status", "wall time", "peak memory", "node-s per s",
                               "waku-shadow"], "llllrrrl").markdown()


def profiles(bench_dir: Path) -> str | None:
    """Where the CPU time of the profiled runs went (waku-shadow profile → bench/profiles/*/), side by side."""
    return profile.comparison(sorted(p.parent for p in (bench_dir / "profiles").glob(f"*/{profile.SPLIT_TABLE}")))


def selects(bench_dir: Path) -> str | None:
    """What the nodes' event loops asked the OS in the censused runs (waku-shadow select-census → bench/selects/*/)."""
    return select_census.comparison(sorted(p.parent for p in (bench_dir / "selects").glob(f"*/{select_census.CENSUS_TABLE}")))


def summarise(gathered: list[study_runs.StudyRuns], results_of: dict[str, StudyResults], summaries_dir: Path,
              configs_dir: Path | None) -> None:
    """Write summaries_dir/<study>/ for every study with a config whose runs are all validated here
    (unsummarised names the others; a study with only some of its runs keeps the summary it had, said
    on stderr). A study of the paper's network without a config is refused: the docs quote it."""
    for g in gathered:
        if g.study.name not in results_of or not summarised_here(g.study, configs_dir):
            continue
        if len(g.validated) < len(g.states):
            print(f"{g.study.name}: {len(g.validated)} of its {len(g.states)} runs are validated here; "
                  "its summary is left as it was", file=sys.stderr)
            continue
        summaries.write(results_of[g.study.name], summaries_dir, configs_dir)


def summarised_here(study, configs_dir: Path | None) -> bool:
    """A study is summarised when it has a config, or must be (is_paper_network); a sign-off's battery
    studies (signoff-<build>) are the sign-off page's, not the docs'."""
    if study.name.startswith(signoff.STUDY_PREFIX):
        return False
    return summaries.is_paper_network(study) or has_config(study.name, configs_dir)


def has_config(study: str, configs_dir: Path | None) -> bool:
    try:
        summaries.config_of(study, configs_dir)
    except ConfigError:
        return False
    return True


def unsummarised(results_dir: Path, configs_dir: Path | None) -> list[str]:
    """The studies with validated runs in results_dir that summarise leaves out."""
    return [g.study.name for g in study_runs.gather(studies(results_dir))
            if g.validated and not summarised_here(g.study, configs_dir)]


def tables(results_dir: Path, bench_dir: Path, summaries_dir: Path | None = None,
           configs_dir: Path | None = None) -> dict[str, Block]:
    """Every generated block by name. The studies whose runs are here are summarised into summaries_dir
    (default: summaries/ beside results_dir) first (summarise); the blocks of summary_tables are written
    from the summaries alone; configs_dir is where the studies' configs are (configs/)."""
    gathered = study_runs.gather(studies(results_dir))
    law = cost_law(bench_dir)
    results_of = study_results(gathered)
    summaries_dir = summaries_dir or results_dir.parent / summaries.SUMMARIES
    summarise(gathered, results_of, summaries_dir, configs_dir)
    summarised = summaries.read_all(summaries_dir)
    table5, distances, hop_times = summary_tables.single_host_tables(summarised)
    return {
        "headline": summary_tables.headline(summarised, summary_tables.default_nwaku_build()),
        "table5": table5, "distances": distances, "relay-hop-times": hop_times,
        "runs": summary_tables.runs(summarised), "paper-cost": summary_tables.paper_cost(summarised, law),
        "memory-split": summary_tables.memory_split(summarised),
        "reach-and-tail": summary_tables.reach_and_tail(summarised), "tree-shape": summary_tables.tree_shape(summarised),
        "paper-rounds": summary_tables.paper_rounds(summarised), "open-files": summary_tables.open_files(summarised),
        "table3": results_tables.table3(gathered), "sweeps": results_tables.sweeps(gathered),
        "comparisons": results_tables.comparisons(gathered, results_of),
        "features": results_tables.features(gathered, results_of),
        "knees": results_tables.knees(gathered), "churn": results_tables.churn_delivery(gathered),
        "spam": results_tables.spam_answers(gathered), "scaling": scaling(bench_dir), "bench": bench_rows(bench_dir),
        "profiles": profiles(bench_dir), "selects": selects(bench_dir), "capacity": capacity(law),
        "link-evidence": written.link_evidence(compare.link_evidence(), compare.CANDIDATE_LINKS_MS).markdown(),
        "light-answer": light_tables.answer(summarised),
        "light-latency": light_tables.latency_by_path(summarised),
        "light-latency-parts": light_tables.light_latency_parts(summarised),
        "service-load": light_tables.service_load(summarised),
        "store-recovery": light_tables.store_recovery(summarised),
        "light-churn-answer": light_tables.churn_answer(summarised),
        "light-cost": light_tables.cost_by_role(summarised),
        "targets": cost_answers.targets(summarised),
        "performance-answer": cost_answers.performance_answer(summarised, law),
        "container": container.block(bench_dir),
        "time-savers": switch_table.time_savers(bench_dir), "trades": switch_table.trades(bench_dir),
        "shards-answer": shard_tables.answer(summarised), "shards-by-point": shard_tables.by_point(summarised),
        "classes-answer": class_tables.answer(summarised), "classes-by-class": class_tables.by_class(summarised),
        "classes-by-location": class_tables.by_location(summarised),
        "discovery-answer": discovery_tables.answer(summarised), "discovery-by-point": discovery_tables.by_point(summarised),
        "scaling-answer": scaling_tables.answer(summarised), "scaling-by-n": scaling_tables.by_n(summarised),
    }


def generated_docs(root: Path) -> list[Path]:
    """README.md and every page under docs/ that holds a generated block."""
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    return [page for page in pages if page.exists() and BLOCK.search(page.read_text())]


def sections(body: str) -> dict[str, str]:
    """A generated block's sections by study name, in the block's order."""
    starts = list(SECTION.finditer(body))
    ends = [m.start() for m in starts[1:]] + [len(body)]
    return {m["study"]: body[m.start():end].rstrip() + "\n" for m, end in zip(starts, ends)}


def fill(text: str, generated: dict[str, Block], source: str) -> tuple[str, list[str]]:
    """``text`` with its generated blocks written from ``generated``; and what was kept as it was: a
    block's name, or ``name: study`` for a study section whose results are not here."""
    kept = []

    def replace(match: re.Match) -> str:
        name = match["name"]
        if name not in generated:
            raise ConfigError(f"{source}: no table is called {name!r}; known: {', '.join(generated)}")
        new = generated[name]
        if new is None:
            kept.append(name)
            return match[0]
        if isinstance(new, dict):
            merged = sections(match["body"])
            kept.extend(f"{name}: {study}" for study in merged if study not in new)
            merged.update(new)
            new = "\n".join(section.rstrip() + "\n" for section in merged.values())
        return f"{match[1]}{new.rstrip()}\n{match[4]}"

    return BLOCK.sub(replace, text), kept
