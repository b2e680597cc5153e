"""The whole workflow, run by Snakemake from another directory, on stand-ins that replay the recorded real
runs (tests/stand_ins/replay_shadow.py): what a newcomer's first run does, and what reruns when."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest
import yaml
from conftest import RECORDED, REPO

from waku_shadow import layout
from waku_shadow.configuration import loader, sources
from waku_shadow.report import study_analysis

STUDY = RECORDED / "recorded.yaml"


def write_executable(path, text):
    path.write_text(text)
    path.chmod(0o755)


# Shadow's stand-in: replays the recorded real runs
REPLAY_SHADOW = f'#!/bin/sh\nexec "{sys.executable}" "{REPO / "tests" / "stand_ins" / "replay_shadow.py"}" "$@"\n'


def write_stand_ins(workdir, bin_dir: str) -> None:
    """Shadow, wakunode2 and curl stand-ins in ``workdir/bin_dir``, and a local config naming them by
    ``bin_dir``'s path (relative to workdir when it is relative)."""
    (workdir / bin_dir).mkdir()
    write_executable(workdir / bin_dir / "shadow", REPLAY_SHADOW)
    write_executable(workdir / bin_dir / "wakunode2", "#!/bin/sh\necho 'version / git commit hash: v0.37.1-beta (stand-in)'\n")
    write_executable(workdir / bin_dir / "curl", "#!/bin/sh\necho 'curl 8 (stand-in)'\n")
    local = {
        "stack": {"shadow": {"binary": f"{bin_dir}/shadow"}, "nwaku": {"binary": f"{bin_dir}/wakunode2"},
                  "curl": f"{bin_dir}/curl"},
        "resources": {"memory_floor": "1 GiB"},
    }
    (workdir / "local.yaml").write_text(yaml.safe_dump(local))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A directory to run the workflow in, with Shadow, wakunode2 and curl stand-ins under bin/ and a
    local config naming them by relative paths, as a newcomer's build rules would leave them."""
    workdir = tmp_path_factory.mktemp("workflow")
    write_stand_ins(workdir, "bin")
    done = snakemake(workdir)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return workdir


def snakemake(workdir, *args, study=STUDY, snakefile=REPO / "Snakefile", local=None):
    """The workflow in workdir, with its local.yaml or the local config given."""
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(snakefile), "--directory", str(workdir),
         "--cores", "2", *args, "--configfile", str(study)],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, sources.LOCAL_CONFIG_ENV: str(local or workdir / "local.yaml"),
             "REPLAY_RECORDED": str(RECORDED / "recorded")},
    )


def runs_to_do(workdir, study) -> dict[str, set[str]]:
    """Per rule, the runs a dry run would execute it for."""
    done = snakemake(workdir, "-n", study=study)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    jobs = re.findall(r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    wildcards: run=(\S+)", done.stdout, re.M)
    todo: dict[str, set[str]] = {}
    for rule, run in jobs:
        todo.setdefault(rule, set()).add(run)
    return todo


def test_a_first_run_from_another_directory_with_relative_paths_completes(workdir):
    study_dir = workdir / "results" / "recorded"
    summary = pd.read_csv(study_dir / layout.LATENCY_SUMMARY)
    assert list(summary["count"]) == [15 * 6, 15 * 6]  # 15 receivers of 6 measured messages, two sizes
    executed = nbformat.read(study_dir / layout.REPORT_NOTEBOOK, as_version=4)
    assert not [o for c in executed.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    html = (study_dir / layout.REPORT_HTML).read_text()
    assert "Validation and cost" in html and "n16-size2000B-seed11" in html and "n16-size100000B-seed11" in html
    for rule in ("render", "simulate", "parse", "validate"):
        assert (layout.job_log(study_dir, rule, "n16-size2000B-seed11")).exists(), rule
    assert (layout.attempts(study_dir, "n16-size2000B-seed11")).read_text().count('"completed"') == 1


def test_the_analyse_rule_wrote_exactly_the_files_it_declares(workdir):
    study_dir = workdir / "results" / "recorded"
    study = loader.load(study_dir / layout.STUDY_CONFIG)
    assert sorted(path.name for path in (study_dir / layout.ANALYSIS).iterdir()) == sorted(study_analysis.outputs(study))
    assert (study_dir / layout.JOB_LOGS / "analyse.log").exists()


def test_machine_settings_rerun_nothing(workdir, tmp_path):
    local = yaml.safe_load((workdir / "local.yaml").read_text())
    local["resources"].update({"memory_floor": "3 GiB", "memory_poll_interval": "2 s"})
    write_executable(workdir / "bin" / "other-curl", "#!/bin/sh\necho 'curl 9 (stand-in)'\n")
    local["stack"]["curl"] = "bin/other-curl"
    changed = tmp_path / "local.yaml"
    changed.write_text(yaml.safe_dump(local))
    done = snakemake(workdir, "-n", local=changed)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Nothing to be done" in done.stdout + done.stderr


def test_another_prebuilt_wakunode2_reruns_every_run(workdir, tmp_path):
    local = yaml.safe_load((workdir / "local.yaml").read_text())
    write_executable(workdir / "bin" / "other-wakunode2", "#!/bin/sh\necho 'version / git commit hash: v0.38.1 (stand-in)'\n")
    local["stack"]["nwaku"]["binary"] = "bin/other-wakunode2"
    changed = tmp_path / "local.yaml"
    changed.write_text(yaml.safe_dump(local))
    done = snakemake(workdir, "-n", local=changed)
    assert done.returncode == 0, done.stderr[-3000:]
    planned = re.findall(r"^(?:local)?rule (\w+):$", done.stdout, re.M)
    assert planned.count("identify_prebuilt_nwaku") == 1
    assert planned.count("render") == planned.count("simulate") == 2  # not only the identity


def test_a_study_key_reruns_exactly_the_runs_it_changes(workdir, tmp_path):
    study = yaml.safe_load(STUDY.read_text())
    study["rln"] = {"verification": "20 ms"}  # every run
    every_run = tmp_path / "verification.yaml"
    every_run.write_text(yaml.safe_dump(study))
    both = {"n16-size2000B-seed11", "n16-size100000B-seed11"}
    todo = runs_to_do(workdir, every_run)
    assert [todo[rule] for rule in ("render", "simulate", "parse", "validate")] == [both] * 4

    study = yaml.safe_load(STUDY.read_text())
    study["traffic"]["message_sizes"] = ["2 KB", "100 KB", "25 KB"]  # one more run, the others as they were
    one_more = tmp_path / "sizes.yaml"
    one_more.write_text(yaml.safe_dump(study))
    todo = runs_to_do(workdir, one_more)
    assert [todo[rule] for rule in ("render", "simulate", "parse", "validate")] == [{"n16-size25000B-seed11"}] * 4


def test_rebuilding_shadow_and_nwaku_in_their_folders_reruns_no_run(tmp_path):
    """A build's folder is named after what makes it, so a change to the build rule that leaves the name
    as it is (a machine's PATH for the build) rebuilds nothing and leaves the runs made with the build as
    they are, while a run not made yet is made (rather than dropped behind a rebuild, as Snakemake does
    with a job it reruns for its params and an `ancient` input)."""
    workflow = tmp_path / "workflow"
    workflow.mkdir()
    shutil.copy(REPO / "Snakefile", workflow)
    shutil.copytree(REPO / "rules", workflow / "rules")
    # stand-ins for the build scripts: each leaves its binary where the real one would
    (workflow / "scripts").mkdir()
    write_executable(workflow / "scripts" / "build_shadow.sh",
                     f'#!/bin/sh\nmkdir -p "$3/bin"\ncat > "$3/bin/shadow" <<"EOF"\n{REPLAY_SHADOW}EOF\nchmod +x "$3/bin/shadow"\n')
    write_executable(workflow / "scripts" / "build_nwaku.sh",
                     '#!/bin/sh\nwhile [ $# -gt 0 ]; do case $1 in *.patch) break ;; esac; out=$1; shift; done\n'
                     "printf '#!/bin/sh\\necho \"version / git commit hash: v0.37.1-beta (stand-in)\"\\n' > \"$out/wakunode2\"\n"
                     'chmod +x "$out/wakunode2"\n')
    write_executable(tmp_path / "curl", "#!/bin/sh\necho 'curl 8 (stand-in)'\n")
    local = {"stack": {"curl": str(tmp_path / "curl")}, "resources": {"memory_floor": "1 GiB", "build_dir": str(tmp_path / "build")}}
    (tmp_path / "local.yaml").write_text(yaml.safe_dump(local))

    def rules_run(size, *args):
        stats = str(layout.run_dir(Path("results") / "recorded", f"n16-size{size}B-seed11") / layout.RUN_STATS)
        done = snakemake(tmp_path, stats, *args, snakefile=workflow / "Snakefile")
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return set(re.findall(r"^(?:local)?rule (\w+):$", done.stdout + done.stderr, re.M))

    assert rules_run(2000) == {"build_shadow", "build_nwaku", "render", "simulate"}
    local["stack"]["nwaku"] = {"path_prepend": [str(tmp_path)]}  # a param of the build rule, not in the folder's name
    (tmp_path / "local.yaml").write_text(yaml.safe_dump(local))
    assert rules_run(2000, "-n") == set()
    assert rules_run(100000, "-n") == {"render", "simulate"}
    shutil.rmtree(tmp_path / "build" / "nwaku")  # deleted: built again, and the runs made with it again
    assert rules_run(2000, "-n") == {"build_nwaku", "render", "simulate"}
