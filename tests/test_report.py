"""The study report notebook, executed on the recorded real runs as the workflow executes it."""

import shutil

import nbformat

from waku_shadow import cli

from conftest import REPO
from recorded import RUNS, copy_run


def test_report_notebook_renders_every_section(tmp_path):
    study_dir = tmp_path / "recorded"
    runs = [copy_run(run, study_dir / "runs") for run in RUNS]
    for run in runs:
        assert cli.main(["parse", "--run-dir", str(run)]) == 0
        assert cli.main(["validate", "--run-dir", str(run)]) == 0
    shutil.copy(runs[0] / "config.yaml", study_dir / "study.yaml")
    assert cli.main(["summarize", "--study-config", str(study_dir / "study.yaml"), "--out", str(study_dir),
                     "--runs", *map(str, runs)]) == 0
    assert cli.main([
        "report", "--notebook", str(REPO / "analysis" / "study_report.ipynb"), "--study-dir", str(study_dir),
        "--out-notebook", str(study_dir / "report.ipynb"), "--out-html", str(study_dir / "report.html"),
        "--runs", *map(str, runs),
    ]) == 0

    html = (study_dir / "report.html").read_text()
    for section in ("Figure 3", "Figure 2", "Delivery trees", "Equation 1 along every receipt", "Per-hop decomposition",
                    "Validation and cost", "Provenance"):
        assert section in html, section
    # figures 3 and 2, hop histogram, residuals: embedded, so the file stands alone
    assert html.count("<img alt=") == 4 and html.count("src=\"data:image/png;base64") == 4
    executed = nbformat.read(study_dir / "report.ipynb", as_version=4)
    assert not [o for c in executed.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    for table in ("residuals_by_size.csv", "residuals_by_hop.csv", "per_hop.csv", "first_hops.csv", "hop_histogram.csv"):
        assert (study_dir / "analysis" / table).stat().st_size > 0, table
