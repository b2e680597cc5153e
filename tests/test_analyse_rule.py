"""The analyse rule declares every file it writes, and the report notebook reads only what the rules
declare: a dry run's declared files against what `waku-shadow analyse` writes for the recorded studies,
and the notebook executed in a folder that holds nothing but the report rule's declared inputs."""

import os
import shutil
import subprocess
import sys

import pytest
from conftest import RECORDED, REPO
from recorded import CASCADE_RUNS, parsed_copies

from waku_shadow import cli, layout
from waku_shadow.configuration import sources

SWEEP_RUNS = sorted((RECORDED / "recorded-sweep").iterdir())


def declared(tmp_path, name, *config) -> dict[str, list[str]]:
    """Per rule of a dry run of the study, the files it declares (output, and the report's input)."""
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "2", "--configfile", str(RECORDED / f"{name}.yaml"),
         "--config", f"resources={{results_dir: {tmp_path}/results, build_dir: {tmp_path}/build}}", *config],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, sources.LOCAL_CONFIG_ENV: str(tmp_path / "no-such-local.yaml")},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    jobs = {}
    for block in done.stdout.split("rule ")[1:]:
        rule = block.split(":", 1)[0]
        fields = dict(line.strip().split(": ", 1) for line in block.splitlines()[1:] if line.startswith("    ") and ": " in line)
        jobs[rule] = {"output": fields.get("output", "").split(", "), "input": fields.get("input", "").split(", ")}
    return jobs


@pytest.mark.parametrize("name, runs, config, compare", [
    ("recorded-cascade", CASCADE_RUNS, ["report={compare_with: recorded}"], True),  # Table 3, bandwidth, another study
    ("recorded-sweep", SWEEP_RUNS, [], False),  # a D sweep: its points, no Table 5, no line to fit
])
def test_analyse_writes_what_its_rule_declares_and_the_notebook_reads_nothing_else(tmp_path, name, runs, config, compare):
    jobs = declared(tmp_path, name, *config)
    study_dir = tmp_path / "results" / name
    analysis = study_dir / layout.ANALYSIS
    outputs = {path for path in jobs["analyse"]["output"]}
    assert outputs and all(path.startswith(f"{analysis}/") for path in outputs)
    report_inputs = set(jobs["report"]["input"])
    assert outputs <= report_inputs

    # the rules' commands, on the recorded runs, in the folder the dry run planned
    copies = parsed_copies(runs, study_dir / layout.RUNS)
    for run in copies:
        assert cli.main(["traffic", "--run-dir", str(run)]) == 0
    shutil.copy(RECORDED / f"{name}.yaml", study_dir / layout.STUDY_CONFIG)
    other = ["--compare-with", str(tmp_path / "results" / "recorded")] if compare else []  # never run: no results
    assert cli.main(["summarize", "--study-config", str(study_dir / layout.STUDY_CONFIG), "--out", str(study_dir),
                     "--runs", *map(str, copies)]) == 0
    assert cli.main(["analyse", "--study-dir", str(study_dir), "--runs", *map(str, copies), *other]) == 0
    assert {str(path) for path in analysis.iterdir()} == outputs

    # a folder with the report rule's inputs of the study and nothing else: no runs, no other file
    alone = tmp_path / "alone" / name
    for path in report_inputs:
        if path.startswith(f"{study_dir}/"):
            target = alone / os.path.relpath(path, study_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    assert not (alone / layout.RUNS).exists()
    assert cli.main(["report", "--notebook", str(REPO / "analysis" / "study_report.ipynb"), "--study-dir", str(alone),
                     "--out-notebook", str(alone / layout.REPORT_NOTEBOOK), "--out-html", str(alone / layout.REPORT_HTML),
                     *other]) == 0
    html = (alone / layout.REPORT_HTML).read_text()
    assert "Traceback" not in html and "Per-hop decomposition" in html
    if compare:
        assert "Singapore → Bangalore" in html and "recorded has no results yet" in html
    else:
        assert "No sweep in this study" not in html and "no line to fit" in html
