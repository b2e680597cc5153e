"""The paper's figures and tables, ours beside the paper's, from every study behind them, in one folder.

    <out>/index.html       every figure and table below, what is missing and why, and where each came from
    <out>/runs.csv         every run the studies call for: its state, cost and provenance
    <out>/table5.csv       Table 5 (single-host latency statistics), per single-host study
    <out>/figure3-<study>.png/.svg  Figure 3 (latency distributions, the multi-host best and worst case in red)
    <out>/figure2.png/.svg, equation2.csv   Figure 2 (hops against D) with our deepest hops
    <out>/distances.csv    KS and Wasserstein distances from the paper's raw latencies, per study and size
    <out>/table3.csv       Table 3 (the multi-host cascade, per hop), per cascade study over locations

Only validated runs are read, so a study with runs that failed or never ran still gives what its
other runs allow; the page names the rest. Every result is paper.study_results' of those runs, the
same computation as the study's own report.md and analysis/ (of all its runs).
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from waku_shadow.analyse.study_runs import VALIDATED, gather
from waku_shadow.configuration.study import Study
from waku_shadow.paper.study_results import StudyResults
from waku_shadow.report import plots, study_analysis, tables

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
    table5, distances, equation2, figure2, figures3 = [], [], [], [], []
    for g in single:
        if not g.validated:
            missing.append(f"{g.study.name}: no validated run, so no Table 5, Figure 3 or Figure 2 from it")
            continue
        results = StudyResults(g.study, g.validated)
        table5.append(results.table5.assign(study=g.study.name))
        distances.append(results.distances.assign(study=g.study.name))
        equation2.append(results.equation2.assign(study=g.study.name))
        figure2.append(results.figure2)
        figure = _figure_paths(out, f"figure3-{g.study.name}")
        study_analysis.figure3(results, figure)
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
        figure = _figure_paths(out, "figure2")
        plots.figure2(pd.concat(figure2, ignore_index=True), figure)
        sections.append(("Figure 2: hops to reach every node against D (★ our deepest hop)",
                         f'<img src="{figure[0].name}" width="900">' + _frame_html(table)))

    table3 = []
    for g in (g for g in gathered if not g.single_host):
        if not g.validated:
            missing.append(f"{g.study.name}: no validated run, so no Table 3")
            continue
        table = StudyResults(g.study, g.validated).table3
        if table.empty:  # a cascade in one place
            continue
        table3.append(table.assign(study=g.study.name))
        sections.append((f"Table 3: the multi-host cascade per hop (ms), paper / ours (ours ÷ paper), {g.study.name}",
                         tables.table3(table).html()))
    if table3:
        pd.concat(table3, ignore_index=True).to_csv(out / "table3.csv", index=False)

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
