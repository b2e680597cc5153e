"""The Snakemake workflow's DAG, checked with dry runs (no Shadow or nwaku needed)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO

from waku_shadow import checkout, layout
from waku_shadow.configuration import sources
from waku_shadow.paper import studies
from waku_shadow.stack import builds


def snakemake(*args, cwd=REPO):
    """snakemake, blind to this machine's local.yaml."""
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, sources.LOCAL_CONFIG_ENV: str(cwd / "no-such-local.yaml")},
    )
    return done.returncode, done.stdout + done.stderr


def dry_run(*args, cwd=REPO):
    """snakemake -n, blind to this machine's local.yaml."""
    return snakemake("-n", "--cores", "2", *args, cwd=cwd)


def job_counts(output: str) -> dict[str, int]:
    table = output.split("Job stats:")[1].split("Reasons:")[0]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M)}


def test_default_study_dry_run(tmp_path):
    code, out = dry_run("--config", f"resources={{results_dir: {tmp_path}/results, build_dir: {tmp_path}/build}}")
    assert code == 0, out
    counts = job_counts(out)
    for rule in ("render", "simulate", "parse", "validate"):
        assert counts[rule] == 4, (rule, counts)
    assert counts["summarize"] == 1
    assert "n50-size500000B-seed1" in out


def test_paper_study_dry_run_uses_configured_binaries(tmp_path):
    shadow = tmp_path / "shadow"
    wakunode2 = tmp_path / "wakunode2"
    for binary in (shadow, wakunode2):
        binary.write_text("#!/bin/sh\n")
        binary.chmod(0o755)
    code, out = dry_run(
        "--configfile",
        "configs/paper.yaml",
        "--config",
        f"stack={{shadow: {{binary: {shadow}}}, nwaku: {{binary: {wakunode2}}}}}",
        f"resources={{results_dir: {tmp_path}/results, build_dir: {tmp_path}/build}}",
    )
    assert code == 0, out
    counts = job_counts(out)
    assert "build_shadow" not in counts and "build_nwaku" not in counts
    assert counts["identify_prebuilt_nwaku"] == 1
    assert counts["simulate"] == 4
    assert "n1000-size2000B-seed1" in out


def test_shadow_is_built_with_the_patches_into_a_folder_named_after_them(tmp_path):
    code, out = dry_run("-p", "--config", f"resources={{results_dir: {tmp_path}/results, build_dir: {tmp_path}/build}}")
    assert code == 0, out
    assert job_counts(out)["build_shadow"] == 1
    patches = checkout.shadow_patches()
    names = ["0001-tcp-slow-start-after-idle.patch", "0002-shim-memory-syscalls.patch", "0003-few-descriptors-per-process.patch"]
    assert [p.name for p in patches] == names
    prefix = f"{tmp_path}/build/shadow/v3.3.0-patches-{builds.patch_set_hash(patches)}"
    command = next(line for line in out.splitlines() if "scripts/build_shadow.sh" in line)
    assert f" v3.3.0 {prefix} " + " ".join(f"{REPO}/shadow/patches/{name}" for name in names) in command
    assert f"{prefix}/bin/shadow" in out  # what the simulations run


def test_a_changed_shadow_patch_is_a_new_build(tmp_path):
    patch = tmp_path / "0001-x.patch"
    patch.write_text("one")
    before = builds.shadow_build_name("v3.3.0", [patch])
    patch.write_text("two")
    assert builds.shadow_build_name("v3.3.0", [patch]) != before


def test_bad_config_stops_before_any_rule(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("study: x\nnetwork:\n  nodes: 5\n  peers_per_node: 9\n")
    code, out = dry_run("--configfile", str(bad))
    assert code != 0
    assert out.strip() == f"waku-shadow: {bad}: network.peers_per_node: 9 must be less than network.nodes (5)"


def test_a_bad_study_shows_every_problem_with_the_file_or_config_that_set_it(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("study: x\nnetwork:\n  nodes: 8\n  peers_per_node: 3\n  latency: 150 parsecs\n"
                   "gossipsub: {d: 12, d_high: 14}\n")
    code, out = dry_run("--configfile", str(bad), "--config", "repetitions=0")
    assert code != 0
    assert out.strip().splitlines() == [
        "waku-shadow: 3 problems:",
        "  --config: repetitions: 0 is less than the minimum of 1",
        f"  {bad}: gossipsub.d: 12 mesh peers cannot exist: a node of 8 has at most 7 peers",
        f"  {bad}: network.latency: cannot read '150 parsecs' as a duration; use a number and one of the units "
        "ns, us, µs, ms, s, sec, min (e.g. '150 ms')",
    ]


def test_a_nested_config_value_keeps_its_type(tmp_path):
    code, out = dry_run("--config", "network={nodes: 20, latency: 10 ms}",
                        f"resources={{results_dir: {tmp_path}/results, build_dir: {tmp_path}/build}}")
    assert code == 0, out
    assert "n20-size2000B-seed1" in out


def test_world_study_with_fewer_sizes_reports_beside_the_paper_study(tmp_path):
    code, out = dry_run(
        "-p",
        "--configfile",
        "configs/world.yaml",
        "--config",
        'traffic={"message_sizes": ["2 KB", "25 KB"]}',
        f"resources={{results_dir: {tmp_path}/results, build_dir: {tmp_path}/build}}",
    )
    assert code == 0, out
    assert job_counts(out)["simulate"] == 2
    assert f"--compare-with {tmp_path}/results/paper" in out


def test_a_sweep_expands_to_one_run_per_value_size_and_seed(tmp_path):
    code, out = dry_run("--configfile", "configs/dsweep.yaml",
                        "--config", f"resources={{results_dir: {tmp_path}/results, build_dir: {tmp_path}/build}}")
    assert code == 0, out
    counts = job_counts(out)
    # D = 3, 4, 5, 6, 8, 10, 12 at 10 KB and 100 KB, one seed; every run's traffic feeds the summary
    for rule in ("render", "simulate", "parse", "validate", "traffic"):
        assert counts[rule] == 14, (rule, counts)
    assert counts["summarize"] == 1 and counts["report"] == 1
    assert "d12-n500-size100000B-seed1" in out and "d3-n500-size10000B-seed1" in out


def test_repetitions_expand_to_one_run_per_seed(tmp_path):
    code, out = dry_run("--configfile", "configs/docker-eval-count.yaml",
                        "--config", f"resources={{results_dir: {tmp_path}/results, build_dir: {tmp_path}/build}}")
    assert code == 0, out
    assert job_counts(out)["simulate"] == 15  # 5 message counts x 3 seeds
    for seed in (1, 2, 3):
        assert f"messages_per_publisher16-n20-size1B-seed{seed}" in out


def test_the_paper_target_runs_every_paper_study_once(tmp_path):
    resources = f"resources={{results_dir: {tmp_path}/results, build_dir: {tmp_path}/build}}"
    for given in ([], ["--configfile", "configs/paper.yaml"], ["--configfile", "configs/multihost.yaml"]):
        code, out = dry_run("paper", *given, "--config", resources)
        assert code == 0, out
        counts = job_counts(out)
        simulations = {rule: n for rule, n in counts.items() if rule.endswith("simulate")}
        assert sorted(simulations.values()) == [4, 4, 12], (given, simulations)  # paper-calibrated: 3 seeds
        assert counts["paper"] == 1
        assert f"{tmp_path}/results/{studies.PAPER_FIGURES}" in out


@pytest.mark.parametrize("battery, nodes, page", [
    ("", 1000, "signoff"),  # configs/signoff.yaml
    (", battery: configs/signoff-small.yaml", 200, "signoff-small"),
])
def test_the_signoff_target_runs_the_battery_once_on_each_build(tmp_path, battery, nodes, page):
    resources = f"resources={{results_dir: {tmp_path}/results, build_dir: {tmp_path}/build}}"
    signoff = f"signoff={{base: v0.38.1, candidate: {{tag: v0.38.1, patches: essential}}{battery}}}"
    code, out = dry_run("signoff", "--config", resources, signoff)
    assert code == 0, out
    counts = job_counts(out)
    assert counts["signoff_base_simulate"] == counts["signoff_candidate_simulate"] == 6  # 2 KB and 100 KB, seeds 1-3
    assert counts["signoff"] == 1 and counts["build_nwaku"] == 1 and counts["signoff_candidate_build_nwaku"] == 1
    assert f"{tmp_path}/results/{page}/v0.38.1-essential-vs-v0.38.1" in out
    assert f"{tmp_path}/results/{page}-v0.38.1-essential/runs/n{nodes}-size2000B-seed3" in out
    assert f"{tmp_path}/results/{page}-v0.38.1-essential/runs/n{nodes}-size100000B-seed3" in out


def test_a_signoff_needs_two_different_builds(tmp_path):
    code, out = dry_run("signoff", "--config", "signoff={base: v0.38.1, candidate: v0.38.1}")
    assert code != 0 and "the base and the candidate are the same build (v0.38.1)" in out
    code, out = dry_run("signoff", "--config", "signoff={base: v0.38.1}")
    assert code != 0 and "give exactly base and candidate" in out
    code, out = dry_run("signoff", "--config", "signoff={base: v0.38.1, candidate: v0.37.1-beta, battery: configs/nothing.yaml}")
    assert code != 0 and "'configs/nothing.yaml' is no config file of the repository" in out


def test_the_paper_target_keeps_going_past_failed_runs_and_names_them(tmp_path):
    """A Shadow that fails every run: with --keep-going the page is still written, naming each run's evidence."""
    shadow, wakunode2 = tmp_path / "shadow", tmp_path / "wakunode2"
    shadow.write_text('#!/bin/sh\n[ "$1" = --version ] && { echo "Shadow (stand-in)"; exit 0; }\necho failing >&2\nexit 3\n')
    wakunode2.write_text("#!/bin/sh\necho 'v0.37.1-beta (stand-in)'\n")
    for binary in (shadow, wakunode2):
        binary.chmod(0o755)
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", "--keep-going", "paper", "--config",
         f"resources={{results_dir: {tmp_path}/results, build_dir: {tmp_path}/build}}",
         f"stack={{shadow: {{binary: {shadow}}}, nwaku: {{binary: {wakunode2}}}}}"],
        cwd=REPO, capture_output=True, text=True, timeout=900,
        env={**os.environ, sources.LOCAL_CONFIG_ENV: str(tmp_path / "no-such-local.yaml")},
    )
    assert done.returncode != 0
    page = tmp_path / "results" / studies.PAPER_FIGURES
    states = pd.read_csv(page / "runs.csv")
    assert len(states) == 20 and set(states["study"]) == set(studies.PAPER_STUDIES)
    assert states["state"].str.startswith("failed: failed at simulated").all(), states["state"]
    for row in states.itertuples():
        assert (Path(row.detail) / layout.RUN_STATS).exists(), row.detail
    assert "no validated run, so no Table 3" in (page / "index.html").read_text()


# What `snakemake --lint` may say, and why it stays: a lint's title and the rules it may name (a paper
# study's module adds its prefix to them), or "*" for every rule.
ALLOWED_LINTS = {
    # The software is Shadow and nwaku, built by build_shadow and build_nwaku at pinned tags with the
    # checkout's patches, and this checkout's waku-shadow: no conda package holds them. The Dockerfile's
    # image carries the whole workflow instead (docs/running.md).
    "Specify a conda environment or container for each rule.": "*",
    # {workflow.basedir} is the checkout's own build script. Changing these commands would make Snakemake's
    # code trigger rebuild Shadow and nwaku on every machine, and with them rerun every simulation.
    "Shell command directly uses variable workflow from outside of the rule": {"build_shadow", "build_nwaku"},
    # The run folder (Shadow's working directory, which the CLI reads whole) and the build prefixes are
    # folders on the filesystem the workflow shares with its jobs (Shadow runs in place; the Slurm profile
    # shares results/), not storage-plugin paths. Deriving them from the outputs would change these rules'
    # params and so rerun every simulation already made (Snakemake's params trigger).
    "Param run_dir is a prefix of input or output file but hardcoded": {"simulate", "parse", "validate", "traffic"},
    "Param prefix is a prefix of input or output file but hardcoded": {"build_shadow"},
    "Param out is a prefix of input or output file but hardcoded": {"build_nwaku"},
}


def lints(output: str) -> list[tuple[str, str]]:
    """(rule or snakefile, lint title) of every lint in the text of `snakemake --lint` (Snakemake 9.27
    prints text even when asked for JSON)."""
    found, where = [], None
    for line in output.splitlines():
        if header := re.match(r"Lints for (?:rule (\w+) \(|snakefile (\S+):$)", line):
            where = header[1] or Path(header[2]).name
        elif lint := re.match(r"    \* (.+):$", line):
            found.append((where, lint[1]))
    return found


def allowed(where: str, title: str) -> bool:
    rules = ALLOWED_LINTS.get(title, ())
    return rules == "*" or any(where == rule or where.endswith(f"_{rule}") for rule in rules)


@pytest.mark.parametrize("configfile", [[], ["--configfile", "configs/paper.yaml"]], ids=["default", "paper"])
def test_the_workflow_lints_clean_but_for_what_is_allowed(tmp_path, configfile):
    code, out = snakemake("--lint", *configfile, "--config",
                          f"resources={{results_dir: {tmp_path}/results, build_dir: {tmp_path}/build}}")
    found = lints(out)
    assert code == (1 if found else 0), out  # 1: lints found; anything else without lints: the workflow did not load
    assert [lint for lint in found if not allowed(*lint)] == [], out
    assert {title for _, title in found} == set(ALLOWED_LINTS), "an allowed lint is gone: take it off ALLOWED_LINTS"


def test_a_stack_that_cannot_run_the_papers_studies_stops_only_the_paper_target(tmp_path):
    resources = f"resources={{results_dir: {tmp_path}/results, build_dir: {tmp_path}/build}}"
    older = "stack={nwaku: {tag: v0.37.1-beta}}"  # no patch 0038, which the paper era's overlay needs
    code, out = dry_run("--config", resources, older)
    assert code == 0, out
    code, out = dry_run("paper", "--config", resources, older)
    assert code != 0 and "the paper's studies cannot run on this stack: paper-calibrated" in out
    assert "nwaku-patches/v0.37.1-beta/ has no patch 0038" in out
