"""The generated blocks of the docs still written from results/ rather than from summaries/: one
section per study whose results are on this machine, headed by its name in bold (docs_tables keeps
the sections of the others as they are)."""

from __future__ import annotations

import pandas as pd

from waku_shadow import layout
from waku_shadow.analyse import load_study, study_runs, study_tables
from waku_shadow.configuration.units import human_size
from waku_shadow.cost import bench
from waku_shadow.paper import compare
from waku_shadow.paper.study_results import StudyResults
from waku_shadow.report import tables as written
from waku_shadow.report.tables import number


def table3(gathered: list[study_runs.StudyRuns]) -> dict[str, str] | None:
    parts = {}
    for g in gathered:
        if g.single_host or not g.validated or not compare.is_located_cascade(g.study):
            continue
        slow_start = "on" if g.study.tcp_slow_start_after_idle else "off"
        parts[g.study.name] = (f"**{g.study.name}** (TCP slow start after idle {slow_start}; "
                               f"{', '.join(r.name for r in g.validated)}):\n\n"
                               + written.table3(StudyResults(g.study, g.validated).table3).markdown())
    return parts or None


def sweeps(gathered: list[study_runs.StudyRuns]) -> dict[str, str] | None:
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


def comparisons(gathered: list[study_runs.StudyRuns], results_of: dict[str, StudyResults]) -> dict[str, str] | None:
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


def features(gathered: list[study_runs.StudyRuns], results_of: dict[str, StudyResults]) -> dict[str, str] | None:
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


def knees(gathered: list[study_runs.StudyRuns]) -> dict[str, str] | None:
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


def churn_delivery(gathered: list[study_runs.StudyRuns]) -> dict[str, str] | None:
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


def spam_answers(gathered: list[study_runs.StudyRuns]) -> dict[str, str] | None:
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
