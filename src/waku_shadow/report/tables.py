"""Every table as it is written: the cells as text in a frame, and how each column aligns.

One renderer per format: ``Table.markdown`` (report.md, the docs' generated blocks, the notebook)
and ``Table.html`` (the paper's page). The results themselves are computed elsewhere, as frames of
numbers (paper.study_results); the functions here only write them.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from waku_shadow.analyse import load_study
from waku_shadow.analyse.stats import SUMMARY_COLUMNS
from waku_shadow.configuration.units import human_size
from waku_shadow.paper.published import STATISTICS


@dataclass(frozen=True)
class Table:
    frame: pd.DataFrame  # the cells as written; its columns are the header
    align: str  # a letter per column: "l" left, "r" right

    def __post_init__(self):
        if len(self.align) != len(self.frame.columns) or set(self.align) - {"l", "r"}:
            raise ValueError(f"align {self.align!r} does not fit the columns {list(self.frame.columns)}")

    def markdown(self) -> str:
        """A markdown table, | a | b |, each row on its own line and one after the last."""
        rule = "|" + "".join("---:|" if side == "r" else "---|" for side in self.align)
        rows = ["| " + " | ".join(str(cell) for cell in row) + " |" for row in self.frame.itertuples(index=False, name=None)]
        return "\n".join(["| " + " | ".join(str(name) for name in self.frame.columns) + " |", rule, *rows]) + "\n"

    def html(self) -> str:
        return self.frame.to_html(index=False, border=0)


def table(rows: list[list], columns: list[str], align: str) -> Table:
    """A Table of rows of cells already written (the column names may repeat)."""
    return Table(pd.DataFrame(rows, columns=range(len(columns))).set_axis(columns, axis=1), align)


def number(value, form: str) -> str:
    """``value`` in ``form`` (e.g. "{:.0f} s"), or blank when there is none."""
    return "" if value is None or pd.isna(value) else form.format(value)


def point_labels(frame: pd.DataFrame, keys: list[str]) -> pd.Series:
    """'10 KB', or 'd=3, 10 KB' in a sweep: the name of each row's point."""
    labels = frame["size_bytes"].map(lambda b: human_size(int(b)))
    for key in reversed([k for k in keys if k != "size_bytes"]):
        labels = f"{key}=" + frame[key].astype(str) + ", " + labels
    return labels


def size(value) -> str:
    return human_size(int(value))


def latency_summary(summary: pd.DataFrame) -> Table:
    """stats.latency_summary: per point, the count and latency statistics (ms)."""
    extra = [c for c in summary.columns if c not in SUMMARY_COLUMNS]
    rows = [[*(f"{r[c]}" for c in extra), size(r["size_bytes"]), f"{int(r['count'])}",
             *(f"{r[s]:.1f}" for s in ("min", "mean", "p50", "p95", "max"))] for r in summary.to_dict("records")]
    columns = [*extra, "size", "count", "min (ms)", "mean (ms)", "p50 (ms)", "p95 (ms)", "max (ms)"]
    return table(rows, columns, "r" * len(extra) + "lrrrrrr")


def points(wide: pd.DataFrame, keys: list[str], metrics: list[str]) -> Table:
    """study_tables.wide: per point, each metric's mean over repetitions ± half its 95 % interval."""
    def cell(row, metric):
        half = row[f"{metric} ±"]
        return f"{row[metric]:.4g}" + ("" if pd.isna(half) else f" ± {half:.2g}")

    rows = [[*(size(row[k]) if k == "size_bytes" else str(row[k]) for k in keys), *(cell(row, m) for m in metrics)]
            for row in wide.to_dict("records")]
    return table(rows, [k if k != "size_bytes" else "size" for k in keys] + metrics, "r" * (len(keys) + len(metrics)))


def _beside(other: float, ours: float, ratio: float) -> str:
    return f"{other:.0f} / {ours:.0f} ({ratio:.2f})"


def load_points(points: pd.DataFrame) -> Table:
    """A load study's latency, delivery and uplink demand per size and rate (load_study.load_points)."""
    demand = "uplink_demand" in points
    rows = [[human_size(int(r.size_bytes)), load_study.rate_text(r.messages_per_second), f"{r.latency_p50_ms:.0f}", f"{r.latency_p95_ms:.0f}",
             f"{r.delivery:.2%}", *([number(r.uplink_demand, "{:.2f}")] if demand else [])]
            for r in points.itertuples()]
    return table(rows, ["size", "messages/s", "p50 (ms)", "p95 (ms)", "delivery", *(["uplink demand"] if demand else [])],
                 "lrrrr" + ("r" if demand else ""))


def table5(comparison: pd.DataFrame) -> Table:
    """compare.table5_comparison: one row per size, paper / ours (ours ÷ paper) for min, avg, p95, max."""
    return compared(comparison.rename(columns={"paper_ms": "other_ms"}), "paper")


def compared(comparison: pd.DataFrame, other: str) -> Table:
    """stats.compare: one row per size, the other's / ours (ours ÷ the other's) for min, avg, p95, max."""
    rows = [[size(value), *(_beside(r.other_ms, r.ours_ms, r.ratio)
                            for r in group.set_index("statistic").loc[STATISTICS].itertuples())]
            for value, group in comparison.groupby("size_bytes", sort=True)]
    columns = ["size", *(f"{'avg' if s == 'mean' else s}: {other} / ours" for s in STATISTICS)]
    return table(rows, columns, "lrrrr")


def distances(pooled: pd.DataFrame, by_seed: pd.DataFrame, keys: list[str], between: pd.DataFrame | None = None) -> Table:
    """compare.distances: one row per point, KS, KS with ours 1 ms earlier and later, Wasserstein and
    both sample sizes of the pooled repetitions, and with several seeds the mean of each seed's
    distances and their range, and (given ``between``, stats.largest_distance_between) the largest KS
    between two of our seeds."""
    seeds = by_seed["seed"].nunique() > 1
    extra = [k for k in keys if k != "size_bytes"]
    spread = by_seed.groupby(keys).agg(ks_mean=("ks", "mean"), ks_min=("ks", "min"), ks_max=("ks", "max"),
                                       w_mean=("wasserstein_ms", "mean"), w_min=("wasserstein_ms", "min"),
                                       w_max=("wasserstein_ms", "max"))
    merged = pooled.merge(spread.reset_index(), on=keys)
    show_between = seeds and between is not None
    if show_between:
        merged = merged.merge(between, on=keys, how="left")
    rows = []
    for row in merged.to_dict("records"):
        rows.append([*(f"{row[k]}" for k in extra), size(row["size_bytes"]), f"{row['ks']:.3f}",
                     f"{row['ks_minus_1ms']:.3f} / {row['ks_plus_1ms']:.3f}",
                     f"{row['wasserstein_ms']:.1f}", f"{row['ours_n']}", f"{row['paper_n']}",
                     *([f"{row['ks_mean']:.3f} ({row['ks_min']:.3f}–{row['ks_max']:.3f})",
                        f"{row['w_mean']:.1f} ({row['w_min']:.1f}–{row['w_max']:.1f})"] if seeds else []),
                     *([number(row["ks_between"], "{:.3f}")] if show_between else [])])
    columns = [*extra, "size", "KS", "KS, ours 1 ms earlier / later", "Wasserstein (ms)", "ours n", "paper n",
               *(["KS per seed: mean (range)", "Wasserstein per seed (ms): mean (range)"] if seeds else []),
               *(["KS between our seeds (largest)"] if show_between else [])]
    return table(rows, columns, "r" * len(extra) + "lrrrrr" + ("rr" if seeds else "") + ("r" if show_between else ""))


def headline(table5_comparison: pd.DataFrame, pooled: pd.DataFrame, by_seed: pd.DataFrame) -> Table:
    """One row per size: its seeds, Table 5 beside ours (compare.table5_comparison), then the distances
    from the paper's raw latencies (compare.distances, the seeds pooled, and their range over seeds)."""
    cells = table5_comparison.set_index(["size_bytes", "statistic"])
    spread = by_seed.groupby("size_bytes").agg(seeds=("seed", "nunique"), low=("ks", "min"), high=("ks", "max"))
    rows = []
    for row in pooled.sort_values("size_bytes").to_dict("records"):
        at = row["size_bytes"]
        rows.append([size(at), f"{spread.loc[at, 'seeds']}",
                     *(_beside(c.paper_ms, c.ours_ms, c.ratio) for c in (cells.loc[(at, s)] for s in STATISTICS)),
                     f"{row['ks']:.3f}", f"{spread.loc[at, 'low']:.3f}–{spread.loc[at, 'high']:.3f}",
                     f"{row['ks_minus_1ms']:.3f} / {row['ks_plus_1ms']:.3f}", f"{row['wasserstein_ms']:.1f}"])
    columns = ["size", "seeds", *(f"{'avg' if s == 'mean' else s} (ms): paper / ours" for s in STATISTICS), "KS",
               "KS per seed", "KS, ours 1 ms earlier / later", "Wasserstein (ms)"]
    return table(rows, columns, "l" + "r" * (len(columns) - 1))


def relay_hop_times(times: pd.DataFrame) -> Table:
    """hops.relay_hop_times: per size, the relayed hops, their median and p95 and the commonest time."""
    rows = [[size(r["size_bytes"]), f"{r['relayed_hops']:,}", f"{r['median_ms']:.1f}", f"{r['p95_ms']:.1f}",
             f"{r['commonest_ms']:.1f}", f"{r['commonest_share']:.1%}"] for r in times.to_dict("records")]
    return table(rows, ["size", "relayed hops", "median (ms)", "p95 (ms)", "commonest (ms)", "its share"], "lrrrrr")


def table3(comparison: pd.DataFrame) -> Table:
    """compare.table3_comparison in Table 3's layout: one row per component and link, one column per
    size, paper / ours (ours ÷ paper)."""
    sizes = sorted(comparison["size_bytes"].unique())
    order = comparison.drop_duplicates(["component", "from", "to"])[["component", "from", "to"]]
    cells = comparison.set_index(["component", "from", "to", "size_bytes"])
    rows = []
    for component, start, end in order.itertuples(index=False):
        beside = [cells.loc[(component, start, end, s)] for s in sizes]
        rows.append([component, " → ".join(part for part in (start, end) if part),
                     *(_beside(c["paper_ms"], c["ours_ms"], c["ratio"]) for c in beside)])
    return table(rows, ["component", "link", *(size(s) for s in sizes)], "ll" + "r" * len(sizes))


def round_evidence(evidence: pd.DataFrame) -> Table:
    """compare.round_evidence: per round of the paper's runs and size, its first receipt beside what
    each candidate setup predicts, the setup that predicts it best, and its p50, p95 and max."""
    setups = [c for c in evidence.columns if c.startswith("predicted: ")]
    rows = [[row["round"], size(row["size_bytes"]), f"{row['first_receipt_ms']:.0f}",
             *(f"{row[c]:.1f}" for c in setups), row["setup"],
             *(f"{row[c]:.0f}" for c in ("p50_ms", "p95_ms", "max_ms"))]
            for row in evidence.to_dict("records")]
    columns = ["round", "size", "first receipt", *setups, "the setup it ran",
               "p50", "p95", "max"]
    return table(rows, columns, "llr" + "r" * len(setups) + "lrrr")


def distances_by_round(distances: pd.DataFrame, rounds: list[str]) -> Table:
    """Per study and size, the mean KS over seeds from each round of the paper's runs, with its range
    (columns study, size_bytes, round, ks_mean, ks_min, ks_max, seeds)."""
    cells = distances.set_index(["study", "size_bytes", "round"])
    rows = []
    for (study, size_bytes), _ in distances.groupby(["study", "size_bytes"], sort=False):
        beside = []
        for round_name in rounds:
            c = cells.loc[(study, size_bytes, round_name)]
            spread = f" ({c['ks_min']:.3f}–{c['ks_max']:.3f})" if c["seeds"] > 1 else ""
            beside.append(f"{c['ks_mean']:.3f}{spread}")
        rows.append([f"`{study}`", size(size_bytes), str(int(cells.loc[(study, size_bytes, rounds[0]), "seeds"])), *beside])
    return table(rows, ["study", "size", "seeds", *(f"KS from the {r} round" for r in rounds)], "llr" + "r" * len(rounds))


def link_evidence(evidence: pd.DataFrame, links_ms) -> Table:
    """compare.link_evidence: per size, the paper's first receipt and hop spacing beside what each
    candidate link predicts, and the link that predicts the first receipt best."""
    on = [f"{'predicted ' if i == 0 else ''}on {link} ms" for i, link in enumerate(links_ms)]
    rows = [[size(row["size_bytes"]), f"{row['first_receipt_ms']:.0f}",
             *(f"{row[f'first_on_{link}ms']:.1f}" for link in links_ms),
             "no steps" if pd.isna(row["hop_spacing_ms"]) else f"{row['hop_spacing_ms']:.0f}",
             *(f"{row[f'hop_on_{link}ms']:.1f}" for link in links_ms), f"{row['link_ms']} ms"]
            for row in evidence.to_dict("records")]
    columns = ["size", "first receipt", *on, "hop spacing", *on, "the link it ran on"]
    return table(rows, columns, "lr" + "r" * len(on) + "r" + "r" * len(on) + "r")
