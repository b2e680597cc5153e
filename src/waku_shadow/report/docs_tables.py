"""The measured tables of the README and docs/, written from summaries/, results/ and bench/.

A doc marks where a table goes:

    <!-- generated: table5 -->
    ...replaced by `waku-shadow docs-tables`...
    <!-- /generated -->

Every table says which runs it comes from. The blocks of report/summary_tables.py are written from
the committed summaries alone (report/summaries.py), which the command first refreshes from the
results on this machine: a fresh clone rewrites them byte for byte. The blocks of bench/ and of the
paper's published data are written whole too. The other blocks hold one section per study, headed
by its name in bold: a section is rewritten when its study's results are on this machine and kept
as it was otherwise, and a block with no results here at all keeps what it holds; the command names
what it kept.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from waku_shadow import checkout, layout
from waku_shadow.analyse import load_study, study_runs, study_tables
from waku_shadow.analyse.study_runs import studies
from waku_shadow.configuration import signoff
from waku_shadow.configuration.units import human_size
from waku_shadow.cost import bench, cost_model, profile, select_census
from waku_shadow.errors import ConfigError
from waku_shadow.paper import compare
from waku_shadow.paper.study_results import StudyResults
from waku_shadow.report import summaries, summary_tables
from waku_shadow.report import tables as written
from waku_shadow.report.tables import number
from waku_shadow.run import run_stats

BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /generated -->)", re.S)
SECTION = re.compile(r"^\*\*(?P<study>[\w.-]+)\*\*", re.M)

STUDY_ROW = re.compile(r"^\| `(?P<study>[\w.-]+)` \|.*$", re.M)


# a block's content: one text, or one section per study name
Block = str | dict[str, str] | None


def study_results(gathered: list[study_runs.StudyRuns]) -> dict[str, StudyResults]:
    """One StudyResults per study with validated runs, by name: each result is computed once for every block."""
    return {g.study.name: StudyResults(g.study, g.validated) for g in gathered if g.validated}


def table3(gathered: list[study_runs.StudyRuns]) -> Block:
    parts = {}
    for g in gathered:
        if g.single_host or not g.validated or g.study.locations is None:
            continue
        slow_start = "on" if g.study.tcp_slow_start_after_idle else "off"
        parts[g.study.name] = (f"**{g.study.name}** (TCP slow start after idle {slow_start}; "
                               f"{', '.join(r.name for r in g.validated)}):\n\n"
                               + written.table3(StudyResults(g.study, g.validated).table3).markdown())
    return parts or None


def sweeps(gathered: list[study_runs.StudyRuns]) -> Block:
    parts = {}
    for g in gathered:
        points = g.study_dir / layout.POINTS_TABLE
        if g.study.sweep is None or not points.exists():
            continue
        keys = study_tables.point_keys(g.study)
        table = pd.read_csv(points)
        losses_measured = g.study.min_delivery < 1
        metrics = [m for m in ("latency_mean_ms", "latency_p95_ms", "hops_mean", "amplification", "net_bytes_per_message",
                               *(("delivery", "delivery_when_up") if losses_measured else ()))
                   if m in set(table["metric"])]
        parts[g.study.name] = (f"**{g.study.name}** ({len(g.validated)} validated runs):\n\n"
                               + written.points(study_tables.wide(table, keys, metrics), keys, metrics).markdown())
    return parts or None


COMPARED_METRICS = {"delivery": "{:.2%}", "relay_copies": "{:.2f}", "one_way_copies": "{:.0f}", "amplification": "{:.2f}",
                    "net_bytes_per_message": "{:,.0f}", "wall_s": "{:.0f}", "peak_memory_gib": "{:.1f}"}


def compared_metrics(ours: pd.DataFrame, theirs: pd.DataFrame, other: str) -> str:
    """Two studies' run metrics (COMPARED_METRICS both have), mean per size: the other's / ours."""
    metrics = [m for m in COMPARED_METRICS if m in ours and m in theirs]
    both = ours.groupby("size_bytes")[metrics].mean().merge(theirs.groupby("size_bytes")[metrics].mean(),
                                                           left_index=True, right_index=True, suffixes=("", "_other"))
    rows = [[human_size(int(size_bytes)), *(f"{COMPARED_METRICS[m].format(row[m + '_other'])} / "
                                            f"{COMPARED_METRICS[m].format(row[m])}" for m in metrics)]
            for size_bytes, row in both.iterrows()]
    return written.table(rows, ["size", *(f"{m}: {other} / ours" for m in metrics)], "l" + "r" * len(metrics)).markdown()


def comparisons(gathered: list[study_runs.StudyRuns], results_of: dict[str, StudyResults]) -> Block:
    """Each study compared with another (report.compare_with): the other's latency statistics and
    ours per size, from the comparison its analysis wrote, and both studies' run metrics."""
    parts = {}
    for g in gathered:
        other = g.study.compare_with
        path = g.study_dir / layout.ANALYSIS / layout.compared_with(other, ".csv") if other else None
        if path is None or not path.exists() or (table := pd.read_csv(path)).empty:
            continue
        text = (f"**{g.study.name}** beside {other} ({', '.join(r.name for r in g.validated)}):\n\n"
                + written.compared(table, other).markdown())
        if g.study.name in results_of and other in results_of:
            text += "\n" + compared_metrics(results_of[g.study.name].runs, results_of[other].runs, other)
            if agreement := receipts_agreement(results_of[g.study.name], results_of[other]):
                text += "\n" + agreement
        parts[g.study.name] = text
    return parts or None


def receipts_agreement(ours: StudyResults, theirs: StudyResults) -> str | None:
    """The runs both studies validated (the same network, seed and schedule), receipt by receipt:
    per size, the share of receipts at the same nanosecond and from the same parent (mean over
    seeds, their range when several)."""
    ours_by_run, theirs_by_run = ours.receipts.groupby("run"), theirs.receipts.groupby("run")
    in_both = ours.runs[ours.runs["run"].isin(theirs.runs["run"])]
    rows = []
    for size_bytes, at_size in in_both.groupby("size_bytes"):
        shares = pd.DataFrame([bench.receipt_agreement(theirs_by_run.get_group(run), ours_by_run.get_group(run))
                               for run in at_size["run"]])
        rows.append([human_size(int(size_bytes)), str(len(shares)),
                     share_over_seeds(shares["identical_share"]), share_over_seeds(shares["same_parent_share"])])
    if not rows:
        return None
    return written.table(rows, ["size", "runs in both", "receipts identical to the nanosecond", "from the same parent"],
                         "lrrr").markdown()


def share_over_seeds(shares: pd.Series) -> str:
    text = f"{shares.mean():.1%}"
    return text + (f" ({shares.min():.1%}–{shares.max():.1%})" if len(shares) > 1 else "")


# the features block's columns: (metric, heading, form, scale); the latencies give the seeds' range too
FEATURE_COLUMNS = [("latency_min_ms", "first receipt (ms)", "{:.0f}", 1), ("latency_p50_ms", "p50 (ms)", "{:.0f}", 1),
                   ("latency_p95_ms", "p95 (ms)", "{:.0f}", 1), ("latency_max_ms", "max (ms)", "{:.0f}", 1),
                   ("hops_mean", "mean hops", "{:.2f}", 1), ("delivery", "delivery", "{:.2%}", 1),
                   ("duplicates_per_receiver", "duplicates per receiver", "{:.2f}", 1),
                   ("withheld_copies", "copies withheld per message", "{:.0f}", 1),
                   ("net_bytes_per_message", "MB on the wire per message", "{:.1f}", 1e-6),
                   ("amplification", "amplification", "{:.2f}", 1),
                   ("publisher_busy_ms", "publisher's uplink busy (ms)", "{:.0f}", 1)]
RANGED = {"latency_min_ms", "latency_p50_ms", "latency_p95_ms", "latency_max_ms"}


def features(gathered: list[study_runs.StudyRuns], results_of: dict[str, StudyResults]) -> Block:
    """Each study that others are compared with (report.compare_with), beside them: per size,
    latency (mean over seeds and its range), hops, delivery, duplicates, the copies IDONTWANT and
    IMRECEIVING saved, bytes and the publisher's busy uplink."""
    parts = {}
    for base in gathered:
        name = base.study.name
        family = [g for g in gathered if g.study.compare_with == name]
        members = [g for g in [base, *family] if g.study.name in results_of]
        if not family or len(members) < 2:
            continue
        rows = []
        for member in members:
            runs = results_of[member.study.name].runs
            for size_bytes, at_size in runs.groupby("size_bytes"):
                cells = []
                for metric, _, form, scale in FEATURE_COLUMNS:
                    values = (at_size[metric] if metric in at_size else pd.Series(dtype=float)) * scale
                    cell = number(values.mean(), form)
                    if metric in RANGED and values.count() > 1:
                        cell += f" ({number(values.min(), form)}–{number(values.max(), form)})"
                    cells.append(cell)
                label = name if member is base else member.study.name.removeprefix(name + "-")
                rows.append([label, human_size(int(size_bytes)), str(at_size["seed"].nunique()), *cells])
        parts[name] = (f"**{name}** and the studies compared with it ({base.study.nodes} nodes; latency: mean over seeds "
                       f"(range)):\n\n" + written.table(rows, ["variant", "size", "seeds", *(column[1] for column in FEATURE_COLUMNS)],
                                                         "lll" + "r" * len(FEATURE_COLUMNS)).markdown())
    return parts or None


def knees(gathered: list[study_runs.StudyRuns]) -> Block:
    """Each load study's knee per message size, as its report says it, and its latency, delivery and
    uplink demand per size and rate."""
    parts = {}
    for g in gathered:
        knees_path, points_path = g.study_dir / layout.KNEES_TABLE, g.study_dir / layout.LOAD_TABLE
        if not load_study.is_load_study(g.study) or not knees_path.exists():
            continue
        parts[g.study.name] = (f"**{g.study.name}** ({g.study.nodes} nodes, {len(g.validated)} validated runs):\n\n"
                               + "\n".join(load_study.knee_sentences(pd.read_csv(knees_path), human_size)) + "\n"
                               + (f"\n{written.load_points(pd.read_csv(points_path)).markdown()}" if points_path.exists() else ""))
    return parts or None


def churn_delivery(gathered: list[study_runs.StudyRuns]) -> Block:
    """Each churn sweep's delivery and p95 latency per churn rate and size."""
    parts = {}
    for g in gathered:
        points = g.study_dir / layout.POINTS_TABLE
        if g.study.sweep is None or g.study.sweep.parameter != "churn.leaves_per_minute" or not points.exists():
            continue
        keys = study_tables.point_keys(g.study)
        table = study_tables.wide(pd.read_csv(points), keys, ["delivery", "delivery_when_up", "latency_p95_ms"])
        rows = [[f"{int(r.leaves_per_minute)}", human_size(int(r.size_bytes)), f"{r.delivery:.2%}",
                 f"{r.delivery_when_up:.2%}", f"{r.latency_p95_ms:.0f}"] for r in table.itertuples()]
        parts[g.study.name] = (f"**{g.study.name}** ({g.study.nodes} nodes, {len(g.validated)} validated runs):\n\n"
                               + written.table(rows, ["leaves per minute", "size", "delivery", "delivery when up",
                                                     "p95 latency (ms)"], "rlrrr").markdown())
    return parts or None


# the spam block's columns and how each is written
SPAM_FORMS = {"spam_over_limit": "{:.0f}", "spam_reach_mean": "{:.2f}", "spam_payload_bytes_sent": "{:,.0f}",
              "disconnected_share": "{:.0%}", "prune_s_median": "{:.1f}", "disconnect_s_median": "{:.1f}",
              "latency_p95_ms": "{:.0f}", "delivery": "{:.2%}"}
SPAM_COLUMNS = ["over the limit", "reach (nodes)", "spam payload bytes sent", "peers disconnected", "pruned after (s)",
                "disconnected after (s)", "honest p95 (ms)", "honest delivery"]


def spam_answers(gathered: list[study_runs.StudyRuns]) -> Block:
    """Each spam sweep per spam rate: what over-limit messages reach and cost, when the spammers'
    peers prune and disconnect them, and the honest messages' p95 latency meanwhile."""
    parts = {}
    for g in gathered:
        points = g.study_dir / layout.POINTS_TABLE
        if g.study.sweep is None or g.study.sweep.parameter != "spam.messages_per_epoch" or not points.exists():
            continue
        table = study_tables.wide(pd.read_csv(points), study_tables.point_keys(g.study), list(SPAM_FORMS))
        rows = [[f"{int(row['messages_per_epoch'])}", *(number(row.get(metric), form) for metric, form in SPAM_FORMS.items())]
                for row in table.to_dict("records")]
        rate = f"{g.study.rln.messages_per_epoch} per {g.study.rln.epoch_ns / 1e9:g} s epoch"
        parts[g.study.name] = (
            f"**{g.study.name}** ({g.study.nodes} nodes, rate limit {rate}, {g.study.spam.spammers} spammer(s) for "
            f"{g.study.spam.duration_ns / 1e9:g} s; {len(g.validated)} validated runs):\n\n"
            + written.table(rows, ["spam per epoch", *SPAM_COLUMNS], "r" * (1 + len(SPAM_COLUMNS))).markdown())
    return parts or None


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
    """Write summaries_dir/<study>/ for every study with validated runs here and a config (unsummarised
    names the others). A study of the paper's network without a config is refused: the docs quote it."""
    for g in gathered:
        if g.study.name in results_of and summarised_here(g.study, configs_dir):
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
        "table3": table3(gathered), "sweeps": sweeps(gathered), "comparisons": comparisons(gathered, results_of),
        "features": features(gathered, results_of), "knees": knees(gathered), "churn": churn_delivery(gathered),
        "spam": spam_answers(gathered), "scaling": scaling(bench_dir), "bench": bench_rows(bench_dir),
        "profiles": profiles(bench_dir), "selects": selects(bench_dir), "capacity": capacity(law),
        "link-evidence": written.link_evidence(compare.link_evidence(), compare.CANDIDATE_LINKS_MS).markdown(),
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
