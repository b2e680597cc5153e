"""The study report notebook, executed on the recorded real runs as the workflow executes it."""

import shutil

import nbformat
import pandas as pd

from waku_shadow import cli

from conftest import REPO
from recorded import CASCADE_RUNS, RUNS, parsed_copies


def summarized_study(base, name, recorded_runs):
    """A study folder as the workflow leaves it before the report: parsed, validated, summarized."""
    study_dir = base / name
    runs = parsed_copies(recorded_runs, study_dir / "runs")
    shutil.copy(runs[0] / "config.yaml", study_dir / "study.yaml")
    assert cli.main(["summarize", "--study-config", str(study_dir / "study.yaml"), "--out", str(study_dir),
                     "--runs", *map(str, runs)]) == 0
    return study_dir, runs


def report(study_dir, runs, *extra):
    assert cli.main([
        "report", "--notebook", str(REPO / "analysis" / "study_report.ipynb"), "--study-dir", str(study_dir),
        "--out-notebook", str(study_dir / "report.ipynb"), "--out-html", str(study_dir / "report.html"),
        "--runs", *map(str, runs), *extra,
    ]) == 0
    executed = nbformat.read(study_dir / "report.ipynb", as_version=4)
    assert not [o for c in executed.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    return (study_dir / "report.html").read_text()


def test_report_notebook_renders_every_section(tmp_path):
    study_dir, runs = summarized_study(tmp_path, "recorded", RUNS)
    html = report(study_dir, runs, "--compare-with", str(tmp_path / "never-run"))

    html = (study_dir / "report.html").read_text()
    for section in ("Figure 3", "Figure 2", "Delivery trees", "Equation 1 along every receipt", "Per-hop decomposition",
                    "Validation and cost", "Provenance"):
        assert section in html, section
    assert "Not a cascade over locations" in html and "No packet capture in this study" in html
    assert "never-run has no results yet: run its study first" in html
    # figures 3 and 2, hop histogram, residuals: embedded, so the file stands alone
    assert html.count("<img alt=") == 4 and html.count("src=\"data:image/png;base64") == 4
    for table in ("residuals_by_size.csv", "residuals_by_hop.csv", "per_hop.csv", "first_hops.csv", "hop_histogram.csv"):
        assert (study_dir / "analysis" / table).stat().st_size > 0, table


def test_cascade_report_shows_table3_bandwidth_and_the_compared_study(tmp_path):
    summarized_study(tmp_path, "recorded", RUNS)
    study_dir, runs = summarized_study(tmp_path, "recorded-cascade", CASCADE_RUNS)
    for run in runs:
        assert cli.main(["traffic", "--run-dir", str(run)]) == 0
    html = report(study_dir, runs, "--compare-with", str(tmp_path / "recorded"))
    cost = pd.read_csv(study_dir / "analysis" / "bandwidth_by_size.csv")
    assert list(cost["size_bytes"]) == [2000, 500000] and "Net bytes = " in html
    assert "Singapore → Bangalore" in html and "New York → Frankfurt" in html
    compared = pd.read_csv(study_dir / "analysis" / "compared_with_recorded.csv")
    assert set(compared["size_bytes"]) == {2000}  # the only size both studies ran
    assert (study_dir / "analysis" / "table3_comparison.csv").stat().st_size > 0
    assert html.count("src=\"data:image/png;base64") == 6  # the four figures, bandwidth and the comparison
