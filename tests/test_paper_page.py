"""The paper's page gathered from recorded real runs, with a run that failed and one never run."""

import json

import numpy as np
import pandas as pd
import pytest
from conftest import RECORDED, drawn
from recorded import CASCADE_RUNS, RUN_2KB, RUNS, parsed_copies, raw_latencies_ms

from waku_shadow import layout
from waku_shadow.configuration import loader
from waku_shadow.configuration.study import Study, merge
from waku_shadow.report import figures_page


def study_in(name: str, results_dir) -> Study:
    return loader.resolve(merge(loader.read_yaml(RECORDED / f"{name}.yaml"), {"resources": {"results_dir": str(results_dir)}}))


def test_the_page_shows_what_validated_runs_allow_and_names_the_rest(tmp_path, recorded_stands_for_the_paper):
    results = tmp_path / "results"
    single, cascade = study_in("recorded", results), study_in("recorded-cascade", results)
    parsed_copies(RUNS, results / single.name / layout.RUNS)
    parsed_copies(CASCADE_RUNS[:1], results / cascade.name / layout.RUNS)
    failed_run = CASCADE_RUNS[1].name
    evidence = layout.failures(results / cascade.name, failed_run) / "20261123T120000Z"
    evidence.mkdir(parents=True)
    (evidence / layout.RUN_STATS).write_text(json.dumps({"status": "stopped by memory guard", "simulated_reached": "00:00:29"}))
    out = tmp_path / "figures"

    missing = figures_page.write([single, cascade], out)

    assert missing == [f"recorded-cascade: {failed_run} failed: stopped by memory guard at simulated 00:00:29 ({evidence})"]
    states = pd.read_csv(out / "runs.csv")
    assert dict(zip(states["run"], states["state"])) == {
        RUNS[0].name: "validated", RUNS[1].name: "validated", CASCADE_RUNS[0].name: "validated",
        failed_run: "failed: stopped by memory guard at simulated 00:00:29",
    }
    table5 = pd.read_csv(out / "table5.csv").set_index(["size_bytes", "statistic"])["ours_ms"]
    assert sorted(table5.index) == [(size, s) for size in (2000, 100000) for s in ("max", "mean", "min", "p95")]
    for run in RUNS:  # ours: the measured receipts' latencies in the raw nwaku logs
        latencies = np.array(list(raw_latencies_ms(run, measured_only=True).values()))
        size = 2000 if run == RUN_2KB else 100000
        assert table5[size].to_dict() == pytest.approx({"min": latencies.min(), "mean": latencies.mean(),
                                                        "p95": np.percentile(latencies, 95), "max": latencies.max()})
    table3 = pd.read_csv(out / "table3.csv")
    assert list(table3["size_bytes"].unique()) == [2000]  # the failed 500 KB run gives no column
    for figure in ("figure3-recorded.png", "figure3-recorded.svg", "figure2.png", "figure2.svg"):
        assert drawn(out / figure), figure
    page = (out / "index.html").read_text()
    assert "Table 5" in page and "Table 3" in page and 'src="figure3-recorded.png"' in page
    assert f"{failed_run} failed: stopped by memory guard" in page


def test_a_study_that_never_ran_is_named_missing(tmp_path):
    study = study_in("recorded", tmp_path / "results")
    missing = figures_page.write([study], tmp_path / "figures")
    assert [m.split(" ", 2)[1] for m in missing[:2]] == [r.name for r in RUNS]
    assert missing[-1] == "recorded: no validated run, so no Table 5, Figure 3 or Figure 2 from it"
    assert "Table 5" not in (tmp_path / "figures" / "index.html").read_text().split("Missing")[1].split("Runs and")[0].replace("no Table 5", "")
