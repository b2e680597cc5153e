"""The release sign-off page: a candidate nwaku build against a base build on the same battery of
studies (the same networks and seeds), a verdict per metric by the rule of analyse/signoff.py.

    <out>/verdicts.csv      per study, point and metric: base, candidate, difference, its interval, verdict
    <out>/receipts.csv      per pair of runs: the receipts both have and the share identical to the nanosecond
    <out>/signoff.md, .html the page: the builds' provenance, the verdicts, the receipts' agreement
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path

import mistune
import pandas as pd

from waku_shadow import layout
from waku_shadow.analyse import signoff
from waku_shadow.configuration.units import human_size
from waku_shadow.cost import bench
from waku_shadow.errors import ConfigError
from waku_shadow.paper.study_results import StudyResults
from waku_shadow.report import summaries
from waku_shadow.report import tables as written

VERDICTS, RECEIPTS, PAGE = "verdicts.csv", "receipts.csv", "signoff"


@dataclass
class Side:
    """One build's side of the battery: its studies' validated runs, in the battery's order."""

    label: str
    studies: list[StudyResults]

    def build(self) -> dict:
        """The nwaku build every run of this side ran on; refused when they differ."""
        builds = {json.dumps(run_build(run_dir), sort_keys=True) for results in self.studies for run_dir in results.run_dirs}
        if len(builds) != 1:
            raise ConfigError(f"{self.label}: its runs ran on {len(builds)} nwaku builds; a side is one build")
        return json.loads(builds.pop())


def run_build(run_dir: Path) -> dict:
    return summaries.nwaku_build(json.loads((run_dir / layout.PROVENANCE).read_text())["nwaku"])


def verdicts(base: Side, candidate: Side) -> pd.DataFrame:
    """signoff.compare per battery study, paired by position (the same config on either build); refused
    when the two sides share no metric."""
    parts = []
    for ours, theirs in zip(base.studies, candidate.studies, strict=True):
        compared = signoff.compare(ours.runs, theirs.runs, ours.keys)
        if compared.empty:
            raise ConfigError(f"{ours.study.name} and {theirs.study.name} share no metric to compare")
        parts.append(compared.assign(study=ours.study.name.removesuffix(f"-{base.label}")))
    return pd.concat(parts, ignore_index=True)


def receipts(base: Side, candidate: Side) -> pd.DataFrame:
    """Per pair of runs of the same name (the same network, seed and schedule): bench.receipt_agreement."""
    rows = []
    for ours, theirs in zip(base.studies, candidate.studies, strict=True):
        theirs_by_run = theirs.receipts.groupby("run")
        for run, own in ours.receipts.groupby("run"):
            if run in theirs_by_run.groups:
                rows.append({"study": ours.study.name.removesuffix(f"-{base.label}"), "run": run,
                             **bench.receipt_agreement(own, theirs_by_run.get_group(run))})
    return pd.DataFrame(rows)


def interval_cell(row: dict) -> str:
    if pd.isna(row["ci_low"]):
        return "one seed: none"
    return f"[{row['ci_low']:+.3g}, {row['ci_high']:+.3g}]"


def verdict_table(table: pd.DataFrame) -> written.Table:
    rows = [[row["study"], human_size(int(row["size_bytes"])), row["metric"], str(row["seeds"]), f"{row['base']:.4g}",
             f"{row['candidate']:.4g}", f"{row['difference']:+.3g}", interval_cell(row),
             f"± {row['margin']:.3g}", f"**{row['verdict']}**"] for row in table.to_dict("records")]
    return written.table(rows, ["study", "size", "metric", "seeds", "base", "candidate", "difference", "95 % interval",
                                "same within", "verdict"], "lllrrrrrrl")


def agreement_table(table: pd.DataFrame) -> written.Table:
    rows = [[row["study"], row["run"], f"{row['receipts_in_both']:,}", f"{row['identical_share']:.2%}",
             f"{row['same_parent_share']:.2%}", f"{row['max_abs_difference_ms']:.3f}"] for row in table.to_dict("records")]
    return written.table(rows, ["study", "run", "receipts in both", "identical to the ns", "same parent",
                                "largest difference (ms)"], "llrrrr")


def page(base: Side, candidate: Side, verdict_rows: pd.DataFrame, agreement: pd.DataFrame) -> str:
    cost = verdict_rows["metric"].isin(signoff.COST_METRICS)
    simulated, costs = verdict_rows[~cost], verdict_rows[cost]
    counts = simulated["verdict"].value_counts()
    summary = ", ".join(f"{counts.get(v, 0)} {v}" for v in (signoff.SAME, signoff.HIGHER, signoff.LOWER, signoff.UNDECIDED))
    builds = written.table([[label, b["nwaku_tag"], b["patch_set"], b["patch_tiers"] or "",
                             f"{b['memory_manager']}/{b['allocator']}"] for label, b in
                            (("base", base.build()), ("candidate", candidate.build()))],
                           ["side", "nwaku", "patch set", "tiers", "memory"], "lllll")
    return "\n".join([
        f"# Sign-off: {candidate.label} against {base.label}", "",
        f"**Verdicts:** {summary} (of {len(simulated)} simulated metric × point).", "",
        "Rule: per metric and point, the candidate's value less the base's at each seed both ran; the 95 % "
        "interval of their mean (Student's t); **same** when the interval lies within ± the margin (a share of "
        "the base's mean), **higher**/**lower** when it lies wholly above/below zero, **undecided** otherwise "
        "(more seeds settle it).", "",
        "## Builds", "", builds.markdown(), "",
        "## Verdicts", "", verdict_table(simulated).markdown(), "",
        "## What the runs cost", "",
        "Wall time and peak memory depend on the machine and on what else ran beside each run, as much as on "
        "the build: read these verdicts only for runs made on one machine alone.", "",
        verdict_table(costs).markdown() if not costs.empty else "Not measured.", "",
        "## Receipts, run by run", "",
        "Where a run is the same network, seed and schedule on both builds, its receipts side by side:", "",
        agreement_table(agreement).markdown() if not agreement.empty else "No run in common.", ""])


def write(base: Side, candidate: Side, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    verdict_rows, agreement = verdicts(base, candidate), receipts(base, candidate)
    verdict_rows.to_csv(out / VERDICTS, index=False)
    agreement.to_csv(out / RECEIPTS, index=False)
    text = page(base, candidate, verdict_rows, agreement)
    (out / f"{PAGE}.md").write_text(text)
    body = mistune.create_markdown(plugins=["table"])(text)
    (out / f"{PAGE}.html").write_text(f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(text.splitlines()[0][2:])}</title></head>"
                                      f"<body>\n{body}</body></html>\n")
    return out / f"{PAGE}.md"
