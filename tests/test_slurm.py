"""The Slurm profile: its dry run everywhere; a study through a real Slurm when one is up on this machine."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import RECORDED, REPO
from test_workflow_runs import write_stand_ins

from waku_shadow.configuration import sources

PROFILE = REPO / "profiles" / "slurm"

pytest.importorskip(
    "snakemake_executor_plugin_slurm",
    reason="the Slurm executor plugin is not installed (pip install -e '.[slurm]'); the profile needs it",
)


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
         "--profile", str(PROFILE), "--configfile", str(RECORDED / "recorded.yaml"), *args],
        capture_output=True, text=True, timeout=1200,
        env={**os.environ, sources.LOCAL_CONFIG_ENV: str(workdir / "local.yaml"), "REPLAY_RECORDED": str(RECORDED / "recorded")},
    )


@pytest.fixture
def workdir(tmp_path):
    """Stand-ins that replay the recorded runs (tests/stand_ins/replay_shadow.py), named by absolute paths
    as a cluster's shared file system would hold them."""
    write_stand_ins(tmp_path, str(tmp_path / "bin"))
    return tmp_path


def test_the_profile_submits_every_run_with_its_resources(workdir):
    done = snakemake(workdir, "-n")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "simulate" in done.stdout and "mem_mb=" in done.stdout and "runtime=" in done.stdout


def slurm_is_up() -> str:
    if shutil.which("sinfo") is None:
        return "no Slurm here (sinfo not found; scripts/local-slurm.sh starts a one-node cluster)"
    state = subprocess.run(["sinfo", "--noheader", "-o", "%T"], capture_output=True, text=True)
    if state.returncode != 0 or "idle" not in state.stdout.split():
        return f"Slurm is not up with an idle node (sinfo: {(state.stdout + state.stderr).strip()[:200]}); scripts/local-slurm.sh start"
    return ""


@pytest.mark.skipif(bool(slurm_is_up()), reason=slurm_is_up() or "Slurm is up")
def test_a_study_runs_through_slurm(workdir):
    done = snakemake(workdir, "--slurm-status-command", "squeue", "--slurm-no-account", "--slurm-keep-successful-logs",
                     "--slurm-init-seconds-before-status-checks", "1")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    logs = list((workdir / ".snakemake" / "slurm_logs").rglob("*.log"))
    submitted = {path.parts[-3] if path.parent.name.startswith("n16") else path.parts[-2] for path in logs}
    assert {"rule_render", "rule_simulate", "rule_parse", "rule_validate"} <= submitted, sorted(submitted)
    assert not any("rule_summarize" in str(path) for path in logs)  # a local rule
    assert (workdir / "results" / "recorded" / "report.html").exists()


def test_the_profile_builds_nwaku_as_a_job_of_its_own(workdir):
    """Under a cluster executor Snakemake sets no total of cores; the build rules still say what they need."""
    local = yaml.safe_load((workdir / "local.yaml").read_text())
    local["stack"]["nwaku"] = {"source": str(workdir / "nwaku")}
    (workdir / "local.yaml").write_text(yaml.safe_dump(local))
    done = snakemake(workdir, "-n")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    build = done.stdout.split("rule build_nwaku:")[1].split("\n\n")[0]
    assert "mem_mb=4096" in build and "runtime=60" in build
