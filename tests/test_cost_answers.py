"""The README's targets table and the performance page's answer, written from the committed summaries."""

import dataclasses
import re

import pytest
from conftest import REPO

from waku_shadow.cost import cost_model
from waku_shadow.report import cost_answers, summaries
from waku_shadow.report.docs_tables import cost_law
from waku_shadow.report.summary_tables import CAPACITY_GIB


@pytest.fixture(scope="module")
def summarised():
    return {name: s for name, s in summaries.read_all(REPO / "summaries").items()
            if name in (cost_answers.DEFAULT_STUDY, cost_answers.PAPER_STUDY)}


def test_the_answer_gives_each_studys_runs_and_the_paper_studys_largest_run(summarised):
    law = cost_law(REPO / "bench")
    answer = cost_answers.performance_answer(summarised, law)
    paper = summarised[cost_answers.PAPER_STUDY].run_metrics
    largest = paper.loc[paper["peak_memory_gib"].idxmax()]
    assert f"with a peak of {largest['peak_memory_gib']:.1f} GiB" in answer
    assert "12 runs of 1,000 nodes at 2 KB, 25 KB, 100 KB, 500 KB" in answer
    walls = paper.groupby("size_bytes")["wall_s"].mean()
    assert f"a run took {walls[2000]:.0f} s at 2 KB to {walls[500000]:.0f} s at 500 KB" in answer
    assert f"Shadow held {largest['shadow_rss_gib_at_peak']:.1f} GiB" in answer
    assert f"fitted to {len(law.runs)} runs of nwaku {law.build}" in answer
    fitted_elsewhere = dataclasses.replace(law, build="v0.37.1-beta-orc-malloc")
    assert "not fitted" not in answer and "not fitted" in cost_answers.performance_answer(summarised, fitted_elsewhere)
    largest_here = re.search(r"N = ([\d,]+) \(500 KB\)", answer)[1]
    assert largest_here == f"{cost_model.largest_nodes(law, 500_000, CAPACITY_GIB[0]):,}"


def test_the_targets_table_counts_the_simulations_of_the_default_and_the_paper_study(summarised):
    table = cost_answers.targets(summarised)
    default = summarised[cost_answers.DEFAULT_STUDY].run_metrics
    assert table.startswith("| command | what it runs | here (2 cores, 24 GiB) |")
    assert f"default study ({len(default)} runs of {int(default['nodes'].max()):,} nodes" in table
    assert cost_answers.targets({}) is None and cost_answers.performance_answer({}, None) is None
