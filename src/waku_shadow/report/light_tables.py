"""The docs' blocks of the studies with light clients, written from their committed summaries alone
(report/summaries.py): latency by path, a light client's latency in parts, what service nodes
and each role carry, and what clients that left got back from the store."""

from __future__ import annotations

from waku_shadow.analyse.light_clients import PARTS, recovery_summary
from waku_shadow.configuration.units import human_size
from waku_shadow.report import tables as written
from waku_shadow.report.summaries import StudySummary
from waku_shadow.report.summary_tables import heading, joined
from waku_shadow.report.tables import number

PART_NAMES = {"lightpush_ms": "lightpush to the service node", "service_node_ms": "service node, until relay",
              "relay_ms": "relay, to the receiver's service node", "filter_push_ms": "filter push",
              "latency_ms": "end to end"}


def _with_light_clients(summarised: dict[str, StudySummary]) -> list[StudySummary]:
    return [summary for summary in summarised.values() if summary.light_clients]


def _point(row, keys: list[str]) -> str:
    swept = [f"{key} {_value(row[key])}" for key in keys if key != "size_bytes"]
    return ", ".join([*swept, human_size(int(row["size_bytes"]))])


def _value(value) -> str:
    """A swept value as set, though a mean over seeds made it a float."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def latency_by_path(summarised: dict[str, StudySummary]) -> str | None:
    """Per study with light clients and per point: each path's receipts and p50 / p95 / max latency."""
    parts = []
    for summary in _with_light_clients(summarised):
        rows = [[_point(row, summary.keys), row["path"], f"{row['receipts']:.0f}", number(row["p50_ms"], "{:.0f}"),
                 number(row["p95_ms"], "{:.0f}"), number(row["max_ms"], "{:.0f}")]
                for _, row in summary.latency_by_path.iterrows()]
        table = written.table(rows, ["point", "path", "receipts", "p50 (ms)", "p95 (ms)", "max (ms)"], "llrrrr")
        parts.append(heading(summary) + table.markdown())
    return joined(parts)


def light_latency_parts(summarised: dict[str, StudySummary]) -> str | None:
    """Per study with light clients and per point: the median and p95 of each part of a light → light latency."""
    parts = []
    for summary in _with_light_clients(summarised):
        frame = summary.light_decomposition
        rows = []
        for point, group in frame.groupby(summary.keys, sort=True):
            by_part = group.set_index("part")
            first = group.iloc[0]
            rows += [[_point(first, summary.keys), PART_NAMES[part], number(by_part.at[part, "p50_ms"], "{:.0f}"),
                      number(by_part.at[part, "p95_ms"], "{:.0f}")] for part in [*PARTS, "latency_ms"]]
        table = written.table(rows, ["point", "part", "p50 (ms)", "p95 (ms)"], "llrr")
        parts.append(heading(summary) + table.markdown())
    return joined(parts)


def service_load(summarised: dict[str, StudySummary]) -> str | None:
    """Per study with light clients and per point: a service node's clients, filter pushes and bytes
    (means over its service nodes and seeds), and each role's bytes per node."""
    parts = []
    for summary in _with_light_clients(summarised):
        load = summary.service_load.merge(summary.run_metrics[["run", "size_bytes"]], on="run", how="left")
        keys = summary.keys
        rows = []
        for _, row in load.groupby(keys, sort=True).mean(numeric_only=True).reset_index().iterrows():
            rows.append([_point(row, keys), f"{row['clients_served']:.0f}", f"{row['lightpushes']:.1f}",
                         f"{row['filter_pushes']:.0f}",
                         number(row.get("bytes_out"), "{:,.0f}"), number(row.get("bytes_out_per_client"), "{:,.0f}")])
        table = written.table(rows, ["point", "clients", "lightpushes", "filter pushes", "bytes out", "bytes out ÷ clients"],
                              "lrrrrr")
        text = heading(summary) + "Per service node (mean over service nodes and seeds):\n\n" + table.markdown()
        if not summary.bytes_by_role.empty:
            by_role = summary.bytes_by_role.merge(summary.run_metrics[["run", "size_bytes"]], on="run", how="left")
            means = by_role.groupby([*keys, "role"], sort=True).mean(numeric_only=True).reset_index()
            role_rows = [[_point(row, keys), row["role"], f"{row['nodes']:.0f}", f"{row['bytes_in_per_node']:,.0f}",
                          f"{row['bytes_out_per_node']:,.0f}"] for _, row in means.iterrows()]
            text += ("\nPer node of each role (mean over seeds), from the first publish on, idle traffic subtracted:\n\n"
                     + written.table(role_rows, ["point", "role", "nodes", "bytes in", "bytes out"], "llrrr").markdown())
        parts.append(text)
    return joined(parts)


def store_recovery(summarised: dict[str, StudySummary]) -> str | None:
    """Per study whose light clients left and came back, and per point: the returning clients, the
    messages their filters missed, the share the store gave back, and when they had its answer."""
    parts = []
    for summary in _with_light_clients(summarised):
        if summary.store_recovery.empty:
            continue
        keys = [key for key in summary.keys if key in summary.store_recovery]
        rows = [[_point(row, keys), f"{row['clients']:.0f}", f"{row['missed']:.0f}", f"{row['recovered']:.0f}",
                 number(row["recovered_share"], "{:.1%}"), number(row["query_p50_s"], "{:.2f}"),
                 number(row["answer_p50_s"], "{:.2f}"), number(row["answer_max_s"], "{:.2f}")]
                for _, row in recovery_summary(summary.store_recovery, tuple(keys)).iterrows()]
        table = written.table(rows, ["point", "returning clients", "missed", "recovered", "share",
                                     "store answer p50 (s)", "answer after return p50 (s)", "max (s)"], "lrrrrrrr")
        parts.append(heading(summary) + table.markdown())
    return joined(parts)


LIGHT_HEADLINE_STUDY = "midscale"  # the study whose numbers answer docs/light-clients.md
CHURN_HEADLINE_STUDY = "midscale-churn"  # the same network with clients leaving: the answer on the store


def answer(summarised: dict[str, StudySummary]) -> str | None:
    """The page's answer, per size of LIGHT_HEADLINE_STUDY: light → light against relay → relay, the
    parts, and a service node's bytes per client."""
    summary = summarised.get(LIGHT_HEADLINE_STUDY)
    if summary is None:
        return None
    paths = summary.latency_by_path.set_index(["size_bytes", "path"])
    parts = summary.light_decomposition.set_index(["size_bytes", "part"])
    load = summary.service_load.merge(summary.run_metrics[["run", "size_bytes"]], on="run").groupby("size_bytes").mean(
        numeric_only=True)
    lines = [f"On `{summary.config}` ({len(summary.runs)} validated runs: "
             f"{', '.join(summary.runs)}; nwaku {summary.nwaku['nwaku_tag']}, patch set {summary.nwaku['patch_set']}):", ""]
    for size in sorted({size for size, path in paths.index if path == "light → light"}):
        light, relay = paths.loc[(size, "light → light")], paths.loc[(size, "relay → relay")]
        part = {name: parts.loc[(size, name), "p50_ms"] for name in PARTS}
        per_client = load.at[size, "bytes_out_per_client"] if "bytes_out_per_client" in load else float("nan")
        lines.append(
            f"- **{human_size(int(size))}**: light client to light client p50 {light['p50_ms']:.0f} ms, p95 "
            f"{light['p95_ms']:.0f} ms, against relay to relay {relay['p50_ms']:.0f} / {relay['p95_ms']:.0f} ms. Its "
            f"parts' medians: lightpush {part['lightpush_ms']:.0f} ms, service node {part['service_node_ms']:.0f} ms, "
            f"relay {part['relay_ms']:.0f} ms, filter push {part['filter_push_ms']:.0f} ms. A service node's "
            "upload, relay traffic included, comes to " + number(per_client, "{:,.0f}") + " bytes per client it serves.")
    return "\n".join(lines) + "\n"


def churn_answer(summarised: dict[str, StudySummary]) -> str | None:
    """The store's answer, per size of CHURN_HEADLINE_STUDY: what returning clients missed and got back,
    and when; and the latency of the light publishers' messages beside LIGHT_HEADLINE_STUDY's (no churn)."""
    summary = summarised.get(CHURN_HEADLINE_STUDY)
    if summary is None or summary.store_recovery.empty:
        return None
    calm = summarised.get(LIGHT_HEADLINE_STUDY)
    calm_paths = calm.latency_by_path.set_index(["size_bytes", "path"]) if calm is not None else None
    paths = summary.latency_by_path.set_index(["size_bytes", "path"])
    lines = [f"On `{summary.config}` ({len(summary.runs)} validated runs: "
             f"{', '.join(summary.runs)}; nwaku {summary.nwaku['nwaku_tag']}, patch set {summary.nwaku['patch_set']}):", ""]
    for _, row in recovery_summary(summary.store_recovery).iterrows():
        size = int(row["size_bytes"])
        line = (f"- **{human_size(size)}**: {row['clients']:.0f} clients came back; their filters had missed "
                f"{row['missed']:.0f} messages, and the store gave back {row['recovered']:.0f} of them "
                f"({number(row['recovered_share'], '{:.1%}')}). A returning client had the store's answer "
                f"{row['answer_p50_s']:.2f} s after it came back (median; {row['answer_max_s']:.2f} s at most).")
        for path in ("light → relay", "light → light"):
            here = paths.loc[(size, path)]
            line += f" {path}: p50 / p95 / max {here['p50_ms']:.0f} / {here['p95_ms']:.0f} / {here['max_ms']:.0f} ms"
            if calm_paths is not None and (size, path) in calm_paths.index:
                other = calm_paths.loc[(size, path)]
                line += f", without churn {other['p50_ms']:.0f} / {other['p95_ms']:.0f} / {other['max_ms']:.0f} ms"
            line += "."
        lines.append(line)
    return "\n".join(lines) + "\n"


def cost_by_role(summarised: dict[str, StudySummary]) -> str | None:
    """Per study with light clients whose runs counted each role's memory, per point and role: the runs'
    wall time and own peak memory, and a node's private memory at the peak (means over seeds)."""
    parts = []
    for summary in _with_light_clients(summarised):
        memory = summary.memory_by_role
        if memory.empty:
            continue
        with_size = memory.merge(summary.run_metrics[["run", "size_bytes"]], on="run", how="left")
        keys = summary.keys
        # a run's wall time and peak once per run, whichever roles its snapshot caught
        runs = with_size.drop_duplicates("run").groupby(keys).agg(
            runs=("run", "size"), wall_seconds=("wall_seconds", "mean"), peak_memory_bytes=("peak_memory_bytes", "mean"))
        means = with_size.groupby([*keys, "role"], sort=True).agg(
            nodes=("nodes", "mean"), anon_bytes_per_node=("anon_bytes_per_node", "mean")).reset_index().join(runs, on=keys)
        rows = [[_point(row, keys), f"{row['runs']:.0f}", f"{row['wall_seconds']:.0f}",
                 f"{row['peak_memory_bytes'] / 2**30:.1f}", row["role"], f"{row['nodes']:.0f}",
                 f"{row['anon_bytes_per_node'] / 2**20:.1f}"] for _, row in means.iterrows()]
        table = written.table(rows, ["point", "runs", "wall (s)", "peak memory (GiB)", "role", "nwaku processes",
                                     "private memory per node (MiB)"], "lrrrlrr")
        parts.append(heading(summary) + table.markdown())
    return joined(parts)
