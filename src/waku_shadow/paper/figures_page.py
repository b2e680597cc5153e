"""The paper's figures and tables, ours beside the paper's, from every study behind them, in one folder.

    <out>/index.html       every figure and table below, what is missing and why, and where each came from
    <out>/runs.csv         every run the studies call for: its state, cost and provenance
    <out>/table5.csv       Table 5 (single-host latency statistics), per single-host study
    <out>/figure3-<study>.png/.svg  Figure 3 (latency distributions, the multi-host best and worst case in red)
    <out>/figure2.png/.svg, equation2.csv   Figure 2 (hops against D) with our deepest hops
    <out>/distances.csv    KS and Wasserstein distances from the paper's raw latencies, per study and size
    <out>/table3.csv       Table 3 (the multi-host cascade, per hop), from a cascade study

Only validated runs are read, each on its own, so a study with runs that failed or never ran
still gives what its other runs allow; the page names the rest.
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from waku_shadow import layout
from waku_shadow.analyse import hops, stats, study_tables
from waku_shadow.analyse.study_runs import VALIDATED, gather
from waku_shadow.configuration.study import Study
from waku_shadow.paper import compare, published
from waku_shadow.report import plots, tables

FIGURE_FORMATS = (".png", ".svg")


def _figure_paths(out: Path, stem: str) -> list[Path]:
    return [out / f"{stem}{suffix}" for suffix in FIGURE_FORMATS]


def write(studies: list[Study], out: Path) -> list[str]:
    """Write the folder; return what is missing, one sentence each (also on the page)."""
    out.mkdir(parents=True, exist_ok=True)
    gathered = gather(studies)
    states = pd.concat([g.states for g in gathered], ignore_index=True)
    states.to_csv(out / "runs.csv", index=False)
    missing = [f"{row.study}: {row.run} {row.state}" + (f" ({row.detail})" if row.detail else "")
               for row in states.itertuples() if row.state != VALIDATED]
    sections = []

    single = [g for g in gathered if g.single_host]
    table5, distances, equation2, figures3 = [], [], [], []
    for g in single:
        if not g.validated:
            missing.append(f"{g.study.name}: no validated run, so no Table 5, Figure 3 or Figure 2 from it")
            continue
        receipts = pd.concat([study_tables.run_table(r, layout.RECEIPTS) for r in g.validated], ignore_index=True)
        sends = pd.concat([study_tables.run_table(r, layout.SENDS) for r in g.validated], ignore_index=True)
        summary = stats.latency_summary(receipts)
        table5.append(compare.table5_comparison(summary).assign(study=g.study.name))
        distances.append(compare.distances(receipts, ["size_bytes"]).assign(study=g.study.name))
        equation2.append(compare.equation2_table(g.study, receipts, hops.first_hops(receipts, sends))
                         .assign(study=g.study.name))
        figure = _figure_paths(out, f"figure3-{g.study.name}")
        plots.latency_distributions(receipts, summary, f"{g.study.name}: {g.study.nodes} nwaku nodes in Shadow",
                                    figure, reference=published.multihost_extremes())
        figures3.append((g.study.name, figure[0].name))
    if table5:
        table = pd.concat(table5, ignore_index=True)
        table.to_csv(out / "table5.csv", index=False)
        sections.append(("Table 5: single-host latency (ms), paper / ours (ours ÷ paper)",
                         "".join(f"<h3>{html.escape(name)}</h3>" + tables.table5(part).html()
                                 for name, part in table.groupby("study", sort=False))))
    for name, image in figures3:
        sections.append((f"Figure 3: latency distributions, {name} (red dashed: the paper's multi-host best and "
                         "worst case)", f'<img src="{image}" width="900">'))
    if distances:
        table = pd.concat(distances, ignore_index=True)
        table.to_csv(out / "distances.csv", index=False)
        sections.append(("Whole distributions against the paper's raw Shadow latencies (KS 0–1, Wasserstein ms)",
                         _frame_html(table)))
    if equation2:
        table = pd.concat(equation2, ignore_index=True)
        table.to_csv(out / "equation2.csv", index=False)
        deepest = table.groupby(["study", "N", "D"], as_index=False)["observed max"].max()
        observed = pd.DataFrame({"nodes": deepest["N"], "degree": deepest["D"], "max_hop": deepest["observed max"],
                                 "label": deepest["study"]})
        figure = _figure_paths(out, "figure2")
        plots.figure2(observed, figure)
        sections.append(("Figure 2: hops to reach every node against D (★ our deepest hop)",
                         f'<img src="{figure[0].name}" width="900">' + _frame_html(table)))

    for g in (g for g in gathered if not g.single_host):
        if not g.validated:
            missing.append(f"{g.study.name}: no validated run, so no Table 3")
            continue
        table = compare.multihost_table3(g.validated)
        table.to_csv(out / "table3.csv", index=False)
        sections.append((f"Table 3: the multi-host cascade per hop (ms), paper / ours (ours ÷ paper), {g.study.name}",
                         tables.table3(table).html()))

    sections.append(("Runs and their provenance (runs.csv)", _frame_html(states)))
    (out / "index.html").write_text(_page(sections, missing))
    return missing


def _frame_html(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, float_format=lambda v: f"{v:.3g}", na_rep="", border=0)


def _page(sections: list[tuple[str, str]], missing: list[str]) -> str:
    missing_html = ("<p>Nothing is missing: every run validated.</p>" if not missing else
                    "<ul>" + "".join(f"<li>{html.escape(m)}</li>" for m in missing) + "</ul>")
    body = "".join(f"<h2>{html.escape(title)}</h2>\n{content}\n" for title, content in sections)
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>waku-shadow: the paper's figures and tables</title>"
        "<style>body{font-family:sans-serif;max-width:1000px;margin:auto}table{border-collapse:collapse;font-size:13px}"
        "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}</style></head><body>"
        "<h1>Message Latency in Waku Relay with RLN: the paper's figures and tables, regenerated</h1>"
        "<p>Every figure and table is computed from the validated runs listed at the end; "
        "the paper's numbers come from data/paper/.</p>"
        f"<h2>Missing</h2>\n{missing_html}\n{body}</body></html>\n"
    )
