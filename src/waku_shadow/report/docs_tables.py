"""The measured tables of the README and docs/, written from summaries/, results/ and bench/.

A doc marks where a table goes:

    <!-- generated: table5 -->
    ...replaced by `waku-shadow docs-tables`...
    <!-- /generated -->

Every table says which runs it comes from. The tables of the paper's network (headline, table5,
distances, relay-hop-times) are written from the committed summaries alone (report/summaries.py),
which the command first refreshes from the results on this machine: a fresh clone rewrites them
byte for byte. The other blocks hold one section per study, headed by its name in bold: a section
is rewritten when its study's results are on this machine and kept as it was otherwise (in the
paper-rounds block, one table of every study, the same holds for each study's rows), and a block
with no results here at all keeps what it holds; the command names what it kept.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd

from waku_shadow import checkout, layout
from waku_shadow.analyse import hops, load_study, stats, study_runs, study_tables
from waku_shadow.analyse.study_runs import studies
from waku_shadow.configuration import schema
from waku_shadow.configuration.units import human_size
from waku_shadow.cost import bench, cost_model, profile, select_census
from waku_shadow.errors import ConfigError
from waku_shadow.paper import compare, published
from waku_shadow.paper.study_results import StudyResults
from waku_shadow.report import summaries
from waku_shadow.report import tables as written
from waku_shadow.report.tables import number
from waku_shadow.run import run_stats
from waku_shadow.run.memory import GIB
from waku_shadow.stack import builds

BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /generated -->)", re.S)
SECTION = re.compile(r"^\*\*(?P<study>[\w.-]+)\*\*", re.M)

STUDY_ROW = re.compile(r"^\| `(?P<study>[\w.-]+)` \|.*$", re.M)


@dataclass
class StudyRows:
    """A text ending in a table whose rows each name their study first (`` `name` ``): rows of a study
    whose results are here are rewritten, those of the others kept, all in the order of the studies' names."""

    text: str  # the text before the table's header, and the header, ending in a newline
    rows: dict[str, list[str]]  # each study's rows as written


# a block's content: one text, one section per study name, or a table of rows per study
Block = str | dict[str, str] | StudyRows | None


def simulation_span(run_dirs: list[Path]) -> str | None:
    """How a study's simulations shared the machine: their wall times summed against the wall clock
    from the first start to the last finish; None when a run has no start time."""
    stats = [run_stats.read_stats(d) for d in run_dirs if (d / layout.RUN_STATS).exists()]
    if not stats or any(s.started_utc is None for s in stats):
        return None
    starts = [datetime.fromisoformat(s.started_utc) for s in stats]
    span = (max(start + timedelta(seconds=s.wall_seconds) for start, s in zip(starts, stats)) - min(starts)).total_seconds()
    summed = sum(s.wall_seconds for s in stats)
    return (f"{len(stats)} simulations, {summed:.0f} s of run wall time in {span:.0f} s from the first start "
            f"to the last finish ({summed / span:.1f} at once on average)")


def runs_table(gathered: list[study_runs.StudyRuns]) -> Block:
    parts = {}
    for g in gathered:
        rows = []
        for row in g.states.to_dict("records"):
            if row["state"] == "not run":
                continue
            run_dir = layout.run_dir(g.study_dir, row["run"])
            provenance = run_dir / layout.PROVENANCE
            build = ""
            if provenance.exists():
                nwaku = json.loads(provenance.read_text())["nwaku"]
                build = f"{nwaku['nwaku_tag']} {nwaku.get('memory_manager', 'refc')}/{nwaku.get('allocator', 'nim')}"
            wall, memory = row.get("wall_s"), number(row.get("peak_memory_GiB"), "{:.2f} GiB")
            measure = f" ({row['memory_measure']})" if isinstance(row.get("memory_measure"), str) else ""
            rows.append([row["run"], number(wall, "{:.0f} s"), f"{memory}{measure}", row["state"].replace("|", "/"), build])
        if rows:
            span = simulation_span([layout.run_dir(g.study_dir, run) for run in g.states["run"]])
            parts[g.study.name] = f"**{g.study.name}**{': ' + span if span else ''}:\n\n{MEMORY_MEASURES}\n\n" + written.table(
                rows, ["run", "wall time", "peak memory", "state", "nwaku build"], "lrrll").markdown()
    return parts or None


MEMORY_MEASURES = (
    f"Peak memory: ({run_stats.OWN_MEASURE}) the run's own, the proportional set size of Shadow and its processes; "
    f"({run_stats.MACHINE_MEASURE}) the fall of the machine's available memory, the only measure of runs recorded before "
    "the run's own, which counts whatever else ran beside the run."
)
MEMORY_MEASURES_BRIEF = f"peak memory {run_stats.OWN_MEASURE}: the run's own; {run_stats.MACHINE_MEASURE}: the machine's fall, see docs/performance.md"


def study_results(gathered: list[study_runs.StudyRuns]) -> dict[str, StudyResults]:
    """One StudyResults per study with validated runs, by name: each result is computed once for every block."""
    return {g.study.name: StudyResults(g.study, g.validated) for g in gathered if g.validated}


def paper_network_results(gathered: list[study_runs.StudyRuns],
                          results_of: dict[str, StudyResults]) -> list[tuple[study_runs.StudyRuns, StudyResults]]:
    """The results of every study of the paper's network (compare.network_differences) that ran a size of Table 5."""
    found = []
    for g in gathered:
        if not g.validated:
            continue
        results = results_of[g.study.name]
        if not results.table5.empty:  # empty: not the paper's network, a sweep, or no size of Table 5
            found.append((g, results))
    return found


def single_host_tables(summarised: dict[str, summaries.StudySummary]) -> tuple[Block, Block, Block]:
    """Table 5 beside ours, the distances from the paper's raw latencies and how long relayed hops
    took, one section per summary (summaries/, each of a study of the paper's network), in the order
    of the studies' names."""
    if not summarised:
        return None, None, None
    table5, distances, hop_times = [], [], []
    for name, summary in summarised.items():
        heading = f"**{name}** ({summary.config}; {', '.join(summary.runs)}):\n\n"
        table5.append(heading + written.table5(summary.table5).markdown())
        distances.append(heading + written.distances(summary.distances, summary.distances_by_seed, summary.keys,
                                                     summary.distances_between_seeds).markdown())
        hop_times.append(heading + written.relay_hop_times(summary.relay_hop_times).markdown())
    return "\n".join(table5), "\n".join(distances), "\n".join(hop_times)


HEADLINE_STUDY = "paper-calibrated"  # the reading of the paper's setup its own data show (docs/paper.md)


def default_nwaku_build() -> dict:
    """The nwaku build a study makes when it names none: its tag and patch set (every tier)."""
    nwaku = schema.with_defaults({}, schema.schema())["stack"]["nwaku"]
    patches = checkout.build_patches(nwaku["tag"], nwaku["memory_manager"])
    return {"nwaku_tag": nwaku["tag"], "patch_set": builds.patch_set_hash([patch.path for patch in patches])}


def headline(summarised: dict[str, summaries.StudySummary], default_build: dict) -> Block:
    """The README's result: HEADLINE_STUDY's Table 5 and distances per size. Refused when its summary is
    not of the default nwaku build: the headline must be what the build we ship gives."""
    summary = summarised.get(HEADLINE_STUDY)
    if summary is None:
        return None
    ran_on = {key: summary.nwaku.get(key) for key in default_build}
    if ran_on != default_build:
        raise ConfigError(
            f"summaries/{HEADLINE_STUDY}: its runs are of nwaku {ran_on['nwaku_tag']} with patch set "
            f"{ran_on['patch_set']}, not of the default build ({default_build['nwaku_tag']}, patch set "
            f"{default_build['patch_set']}); rerun {summary.config} on the default build before the docs quote it")
    seeds = f"seeds {', '.join(map(str, summary.seeds))}" if len(summary.seeds) > 1 else f"seed {summary.seeds[0]}"
    return (f"**{summary.study}** ({summary.config}, {seeds}; nwaku {summary.nwaku['nwaku_tag']}, patch set "
            f"{summary.nwaku['patch_set']}):\n\n"
            + written.headline(summary.table5, summary.distances, summary.distances_by_seed).markdown())


def paper_rounds(paper_network: list[tuple[study_runs.StudyRuns, StudyResults]]) -> Block:
    """Which setup each round of the paper's runs used (compare.round_evidence), and how far each study
    of paper_network_results lies from each round: the mean KS over its seeds, per size. None (kept as
    it is) without a study of the paper's network here."""
    if not paper_network:
        return None
    text = written.round_evidence(compare.round_evidence()).markdown()
    parts = []
    for g, results in paper_network:
        for round_name in published.ROUNDS:
            by_seed = compare.distances(results.receipts, ["size_bytes", "seed"], round_name)
            ks = by_seed.groupby("size_bytes")["ks"].agg(ks_mean="mean", ks_min="min", ks_max="max", seeds="count")
            parts.append(ks.reset_index().assign(study=g.study.name, round=round_name))
    table = written.distances_by_round(pd.concat(parts, ignore_index=True), list(published.ROUNDS)).markdown()
    lines = table.splitlines()
    header, rows = lines[:2], lines[2:]
    by_study = {}
    for row in rows:
        by_study.setdefault(STUDY_ROW.match(row)["study"], []).append(row)
    return StudyRows(text + "\n" + "\n".join(header) + "\n", by_study)


def paper_first_group(size_bytes: int) -> float | None:
    """The receivers per message in the fastest latency group of the paper's raw latencies at a size
    (its publisher's direct peers, hops.hops_from_latency_steps); None where they show no steps."""
    theirs = stats.measured(published.shadow_receipts())
    theirs = theirs[theirs["size_bytes"] == size_bytes]
    hop = hops.hops_from_latency_steps(theirs["latency_ms"])
    return None if hop is None else float((hop == 1).sum() / theirs["seq"].nunique())


def reach_and_tail(paper_network: list[tuple[study_runs.StudyRuns, StudyResults]]) -> Block:
    """Per study of paper_network_results and size of the paper's: how many receivers
    the publisher reached directly and how many copies it sent, per message, beside the paper's
    fastest latency group; the receivers reached only by gossip; and the slowest receipt, beside
    the paper's. One value per seed."""
    parts = {}
    for g, results in paper_network:
        runs = results.runs.set_index("run")
        first_hops = results.first_hops[~results.first_hops["warmup"]].groupby("run")
        direct, copies = first_hops["first_hop_receivers"].mean(), first_hops["publisher_sent_to"].mean()
        single_host = published.table5().query("setup == 's-h'")
        paper_max = single_host.set_index(["size_bytes", "statistic"])["latency_ms"]
        rows = []
        for size_bytes, group in runs.groupby("size_bytes"):
            group = group.sort_values("seed")
            first = paper_first_group(int(size_bytes))
            rows.append([human_size(int(size_bytes)), ", ".join(str(s) for s in group["seed"]), number(first, "{:.0f}"),
                         " / ".join(f"{direct[run]:.0f}" for run in group.index),
                         " / ".join(f"{copies[run]:.0f}" for run in group.index),
                         " / ".join(f"{n:.0f}" for n in group["gossip_only_receivers"]),
                         f"{paper_max[(size_bytes, 'max')]:.0f}",
                         " / ".join(f"{m:.0f}" for m in group["latency_max_ms"])])
        parts[g.study.name] = (f"**{g.study.name}** (ours: one value per seed):\n\n" + written.table(
            rows, ["size", "seeds", "direct receivers: paper", "ours", "our publisher's copies", "reached only by gossip",
                   "max (ms): paper", "ours"], "lrrrrrrr").markdown())
    return parts or None


def tree_shape(paper_network: list[tuple[study_runs.StudyRuns, StudyResults]]) -> Block:
    """Per study of paper_network_results and size whose paper latencies show hop steps: the share of
    receipts per hop, the paper's (read off its steps) beside ours (from the delivery trees, all seeds
    pooled), and the copies our relays send per message, one value per seed."""
    parts = {}
    for g, results in paper_network:
        shares = results.hop_shares.pivot_table(index=["size_bytes", "hop"], columns="source", values="share")
        runs = results.runs.sort_values("seed")
        paper, ours = compare.HOP_SOURCES[0], compare.HOP_SOURCES[1]
        rows = []
        for size_bytes, group in shares.groupby(level="size_bytes"):
            if paper not in group or group[paper].isna().all():
                continue
            by_hop = 100 * group.droplevel("size_bytes").fillna(0)
            by_hop = by_hop.reindex(range(1, max(5, int(by_hop.index.max()) + 1)), fill_value=0)
            cells = [f"{by_hop.at[hop, paper]:.1f} / {by_hop.at[hop, ours]:.1f}" for hop in range(1, 5)]
            beyond = by_hop.loc[by_hop.index > 4].sum()
            copies = runs.loc[runs["size_bytes"] == size_bytes, "relay_copies"]
            rows.append([human_size(int(size_bytes)), *cells, f"{beyond[paper]:.1f} / {beyond[ours]:.1f}",
                         " / ".join(f"{c:.1f}" for c in copies)])
        if rows:
            parts[g.study.name] = (f"**{g.study.name}** (receipts per hop, %: paper / ours):\n\n" + written.table(
                rows, ["size", "hop 1", "hop 2", "hop 3", "hop 4", "hop 5+", "copies per relay, per seed"],
                "lrrrrrr").markdown())
    return parts or None


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


def paper_network_studies(gathered: list[study_runs.StudyRuns]) -> list[study_runs.StudyRuns]:
    """The studies of the paper's network (compare.network_differences), not sweeps, with validated runs."""
    return [g for g in gathered if not g.study.sweep and g.validated and not compare.network_differences(g.study)]


def paper_cost(gathered: list[study_runs.StudyRuns], law: cost_model.CostLaw | None) -> Block:
    """Per single-host study of the paper's 1000 nodes: what its validated runs cost, per size (the
    mean over seeds), how long its simulations took end to end, and the largest N of each size that
    the cost law fits on this machine and on a 256 GB host."""
    parts = {}
    for g in paper_network_studies(gathered):
        runs = g.validated_states
        by_size = runs.groupby("size_bytes").agg(runs=("run", "size"), wall_s=("wall_s", "mean"),
                                                 memory=("peak_memory_GiB", "mean"),
                                                 measure=("memory_measure", lambda m: "/".join(sorted(set(m)))))
        columns = ["size", "runs", "wall time", "peak memory"]
        if law:
            columns += [f"largest N here ({CAPACITY_GIB[0]} GiB)", *(f"largest N in {gib} GiB" for gib in CAPACITY_GIB[1:])]
        rows = [[human_size(int(size)), f"{int(row.runs)}", f"{row.wall_s:.0f} s", f"{row.memory:.1f} GiB ({row.measure})",
                 *(largest_nodes_cells(law, int(size)) if law else [])]
                for size, row in by_size.iterrows()]
        span = simulation_span(g.validated) or f"{runs['wall_s'].sum():.0f} s of simulation in all"
        parts[g.study.name] = (f"**{g.study.name}** ({len(runs)} validated runs; {span}; {MEMORY_MEASURES_BRIEF}):\n\n"
                               + written.table(rows, columns, "l" + "r" * (len(columns) - 1)).markdown())
    return parts or None


def memory_split(gathered: list[study_runs.StudyRuns]) -> Block:
    """Per single-host study of the paper's 1000 nodes and per size (the mean over seeds): the run's own
    peak, and where the memory was at the sample where the machine had least available: Shadow's own
    resident memory (among it the simulated network's packets in flight) against the nodes' private memory."""
    parts = {}
    for g in paper_network_studies(gathered):
        split = []
        for run, size in zip(g.validated_states["run"], g.validated_states["size_bytes"]):
            stats = run_stats.read_stats(layout.run_dir(g.study_dir, run))
            at_peak = stats.memory_at_peak
            if at_peak is None or stats.own_peak_memory_bytes is None:
                continue
            split.append({"size": size, "own": stats.own_peak_memory_bytes / GIB,
                          "shadow": at_peak["shadow_rss_bytes"] / GIB, "sampled": at_peak["processes"],
                          "per_node": at_peak["processes_anon_bytes"] / max(at_peak["processes"], 1) / 2**20})
        if not split:
            continue
        by_size = pd.DataFrame(split).groupby("size").mean()
        rows = [[human_size(int(size)), f"{row.own:.1f} GiB", f"{row.shadow:.1f} GiB", f"{row.sampled:.0f}",
                 f"{row.per_node:.1f} MiB"] for size, row in by_size.iterrows()]
        parts[g.study.name] = (f"**{g.study.name}** ({len(split)} validated runs):\n\n" + written.table(
            rows, ["size", "own peak", "Shadow's resident memory", "nodes sampled", "a node's private memory"],
            "lrrrr").markdown())
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
CAPACITY_GIB = (22, 250)  # this 24 GiB machine less the guard's floor; a 256 GB host


def cost_law(bench_dir: Path) -> cost_model.CostLaw | None:
    """The cost law in bench_dir (bench/cost-law.json), or None when there is none."""
    path = bench_dir / Path(checkout.COST_LAW).name
    return cost_model.read(path) if path.exists() else None


def largest_nodes_cells(law: cost_model.CostLaw, size: int) -> list[str]:
    """Table cells: the largest N of this message size whose predicted memory fits each of CAPACITY_GIB."""
    return [f"{cost_model.largest_nodes(law, size, gib):,}" for gib in CAPACITY_GIB]


def capacity(law: cost_model.CostLaw | None) -> str | None:
    """Per message size, what the cost law (bench/cost-law.json) predicts for N = 1000 and the largest N
    whose predicted memory fits a 24 GiB and a 256 GB host."""
    if law is None:
        return None
    simulated_s = 85  # the paper study's runs: 20 s bootstrap, 10 messages 5 s apart, 10 s drain
    rows = [[human_size(size), f"{law.memory_gib(1000, size):.1f} GiB", f"{law.wall_s(1000, size, simulated_s) / 60:.0f} min",
             *largest_nodes_cells(law, size)] for size in CAPACITY_SIZES]
    return "\n".join([
        f"Fitted to {len(law.runs)} runs of nwaku {law.build} on {law.cores} cores ({Path(checkout.COST_LAW).name}): "
        f"peak memory = {law.base_gib:.2f} GiB + N x ({law.idle_mib_per_node:.2f} MiB + {law.mib_per_node_per_kb:.4f} MiB x KB).",
        "",
        written.table(rows, ["message size", "N = 1000: memory", "N = 1000: wall time",
                            *(f"largest N in {gib} GiB" for gib in CAPACITY_GIB)], "lrr" + "r" * len(CAPACITY_GIB)).markdown()])


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


def tables(results_dir: Path, bench_dir: Path, summaries_dir: Path | None = None,
           configs_dir: Path | None = None) -> dict[str, Block]:
    """Every generated block by name. The studies of the paper's network whose runs are here are
    summarised into summaries_dir (default: summaries/ beside results_dir) first, and their blocks
    are written from the summaries alone; configs_dir is where their configs are (configs/)."""
    gathered = study_runs.gather(studies(results_dir))
    law = cost_law(bench_dir)
    results_of = study_results(gathered)
    paper_network = paper_network_results(gathered, results_of)
    summaries_dir = summaries_dir or results_dir.parent / summaries.SUMMARIES
    for _, results in paper_network:
        summaries.write(results, summaries_dir, configs_dir)
    summarised = summaries.read_all(summaries_dir)
    table5, distances, hop_times = single_host_tables(summarised)
    return {
        "runs": runs_table(gathered), "table5": table5, "distances": distances, "relay-hop-times": hop_times,
        "headline": headline(summarised, default_nwaku_build()), "table3": table3(gathered),
        "sweeps": sweeps(gathered), "comparisons": comparisons(gathered, results_of),
        "features": features(gathered, results_of), "knees": knees(gathered),
        "churn": churn_delivery(gathered),
        "spam": spam_answers(gathered), "scaling": scaling(bench_dir), "bench": bench_rows(bench_dir),
        "profiles": profiles(bench_dir),
        "selects": selects(bench_dir),
        "capacity": capacity(law), "paper-cost": paper_cost(gathered, law),
        "memory-split": memory_split(gathered),
        "reach-and-tail": reach_and_tail(paper_network), "tree-shape": tree_shape(paper_network),
        "paper-rounds": paper_rounds(paper_network),
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
        elif isinstance(new, StudyRows):
            merged = {}
            for row in STUDY_ROW.finditer(match["body"]):
                merged.setdefault(row["study"], []).append(row[0])
            kept.extend(f"{name}: {study}" for study in merged if study not in new.rows)
            merged.update(new.rows)
            new = new.text + "".join(row + "\n" for study in sorted(merged) for row in merged[study])
        return f"{match[1]}{new.rstrip()}\n{match[4]}"

    return BLOCK.sub(replace, text), kept
