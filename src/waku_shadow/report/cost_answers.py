"""What the README and the performance page say a study costs here, from the committed summaries: the
default study's and the calibrated paper study's runs (wall time, peak memory, where the memory was)
and what the cost law makes of them."""

from __future__ import annotations

import pandas as pd

from waku_shadow import checkout
from waku_shadow.configuration import loader, signoff
from waku_shadow.configuration.units import human_size
from waku_shadow.cost import cost_model
from waku_shadow.report import tables as written
from waku_shadow.report.summaries import StudySummary
from waku_shadow.report.summary_tables import CAPACITY_GIB, nwaku_build, simulation_span, span_seconds

DEFAULT_STUDY = "default"
PAPER_STUDY = "paper-calibrated"


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def _elapsed(summary: StudySummary) -> str:
    """From its first run's start to its last run's end (the runs' wall times summed when a start is
    missing): what a user waits for the simulations."""
    span = span_seconds(summary.run_metrics)
    if span is None:
        return f"{_minutes(summary.run_metrics['wall_s'].sum())} of simulation"
    return f"{_minutes(span)} of simulation, first start to last end"


def _studies(summarised: dict[str, StudySummary]) -> tuple[StudySummary, StudySummary] | None:
    default, paper = summarised.get(DEFAULT_STUDY), summarised.get(PAPER_STUDY)
    return None if default is None or paper is None else (default, paper)


def _shape(summary: StudySummary) -> str:
    metrics = summary.run_metrics
    sizes = ", ".join(human_size(int(s)) for s in sorted(metrics["size_bytes"].unique()))
    return f"{len(metrics)} runs of {int(metrics['nodes'].max()):,} nodes at {sizes}"


def _battery() -> str:
    """The sign-off's runs: the battery's on each of the two builds."""
    battery = loader.load(checkout.path(signoff.BATTERY))
    return f"{2 * len(battery.run_ids())} runs of {battery.nodes:,} nodes"


def _largest(summary: StudySummary) -> pd.Series:
    """The run that took the most memory."""
    return summary.run_metrics.loc[summary.run_metrics["peak_memory_gib"].idxmax()]


def _peak(summary: StudySummary) -> str:
    largest = _largest(summary)
    return f"{largest['peak_memory_gib']:.1f} GiB ({largest['memory_measure']}, its {human_size(int(largest['size_bytes']))} run)"


def targets(summarised: dict[str, StudySummary]) -> str | None:
    """The README's table of what `all`, `paper` and `signoff` run and what that cost here."""
    studies = _studies(summarised)
    if studies is None:
        return None
    default, paper = studies
    rows = [
        ["`snakemake --cores 64 all`",
         "the study of `--configfile` (default: `configs/default.yaml`), its runs, report and figures",
         f"default study ({_shape(default)}): {_elapsed(default)}, once the stack is built"],
        ["`snakemake --cores 64 paper`",
         "`paper`, `paper-calibrated` (three seeds) and `multihost`, then Table 5, Figures 2 and 3 and Table 3 beside "
         "the paper's, in `results/paper-figures/`",
         f"`paper-calibrated` ({_shape(paper)}): {_elapsed(paper)}, a peak of {_peak(paper)}"],
        ["`snakemake --cores 64 signoff --config 'signoff={base: v0.38.1, candidate: …}'`",
         "the sign-off battery on both builds, then a verdict per metric, same / higher / lower, in `results/signoff/` "
         "([docs/releases.md](docs/releases.md#sign-off-one-build-against-another))",
         _battery()],
    ]
    return written.table(rows, ["command", "what it runs", "here (2 cores, 24 GiB)"], "lll").markdown()


def performance_answer(summarised: dict[str, StudySummary], law: cost_model.CostLaw | None) -> str | None:
    """The performance page's answer: what the two studies cost here, where the paper study's memory
    was at its largest run's peak, and the largest N the cost law fits."""
    studies = _studies(summarised)
    if studies is None:
        return None
    default, paper = studies
    walls = paper.run_metrics.groupby("size_bytes")["wall_s"].mean()
    largest = _largest(paper)
    lines = [
        f"On this 2-core, 24 GiB machine the default study ({_shape(default)}, nwaku {nwaku_build(default)}) took "
        f"{_elapsed(default)} ({simulation_span(default.run_metrics) or 'no start times'}). "
        f"The calibrated paper study ({_shape(paper)}, nwaku {nwaku_build(paper)}) took "
        f"{_elapsed(paper)}: a run took {walls.iloc[0]:.0f} s at {human_size(int(walls.index[0]))} "
        f"to {walls.iloc[-1]:.0f} s at {human_size(int(walls.index[-1]))} (mean over seeds), with a peak of {_peak(paper)}.",
    ]
    if pd.notna(largest.get("shadow_rss_gib_at_peak")):
        lines.append(f"At that run's peak Shadow held {largest['shadow_rss_gib_at_peak']:.1f} GiB and a node "
                     f"{largest['node_private_mib_at_peak']:.1f} MiB of private memory ({largest['processes_at_peak']:.0f} "
                     "nodes sampled).")
    if law is not None:
        sizes = sorted(int(s) for s in walls.index)
        here = [cost_model.largest_nodes(law, s, CAPACITY_GIB[0]) for s in (sizes[-1], sizes[0])]
        big = [cost_model.largest_nodes(law, s, CAPACITY_GIB[-1]) for s in (sizes[-1], sizes[0])]
        lines.append(f"The cost law, fitted to {len(law.runs)} runs of nwaku {law.build}, puts the largest network of "
                     f"the paper's kind at N = {here[0]:,} ({human_size(sizes[-1])}) to {here[1]:,} ({human_size(sizes[0])}) "
                     f"here and {big[0]:,} to {big[1]:,} on a 256 GB host"
                     + ("." if law.build.startswith(paper.nwaku["nwaku_tag"] + "-") else
                        f"; it is not fitted to {paper.nwaku['nwaku_tag']} yet, and predicts "
                        f"{law.memory_gib(int(largest['nodes']), int(largest['size_bytes'])):.1f} GiB for the run that peaked "
                        f"at {largest['peak_memory_gib']:.1f} GiB."))
    return " ".join(lines)
