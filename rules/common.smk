import shlex
import sys
from pathlib import Path

from waku_shadow import checkout, cost, layout, load, pipeline, stack
from waku_shadow.errors import WakuShadowError

# Validated before any rule runs: a bad config stops here, with every problem and where it was set.
try:
    STUDY = pipeline.study_from_snakemake(config, workflow.config_settings)
except WakuShadowError as exc:
    sys.exit(f"waku-shadow: {exc}")
pipeline.export_machine(STUDY)
STUDY_DIR = pipeline.study_dir(STUDY)
RUNS = STUDY.run_ids()
RUN_DIR = str(layout.run_dir(STUDY_DIR, "{run}"))
BUILD_DIR = Path(STUDY.resources.build_dir)
# by absolute path: the workflow may run in another directory (--directory)
PATCHES = [str(p) for p in stack.patches(STUDY.stack.nwaku_tag)]
SHADOW_PATCHES = [str(p) for p in stack.shadow_patches()]

SHADOW_DIR = pipeline.shadow_build_dir(STUDY)
SHADOW = STUDY.stack.shadow_binary or str(SHADOW_DIR / "bin" / "shadow")
if STUDY.stack.nwaku_binary:
    NWAKU_DIR = BUILD_DIR / "nwaku" / "prebuilt"
    WAKUNODE2 = STUDY.stack.nwaku_binary
else:
    NWAKU_DIR = pipeline.nwaku_build_dir(STUDY)
    WAKUNODE2 = str(NWAKU_DIR / "wakunode2")
NWAKU_IDENTITY = str(NWAKU_DIR / stack.IDENTITY)


COST_LAW = cost.read()
# a cluster executor sets no total of cores: a build job then asks for a node's usual share
BUILD_THREADS = workflow.resource_settings.cores or 8


def run_needs(run_id):
    """Memory, wall time and threads one run of the study needs (cost.needs)."""
    run = pipeline.study_on_this_machine(STUDY.run_config(run_id), source=f"run {run_id}")
    # a cluster executor sets no total of cores: each job gets a node's share
    return cost.needs(run, COST_LAW, workflow.resource_settings.cores)


def run_file(name):
    """A file of the run folder, for the {run} wildcard."""
    return f"{RUN_DIR}/{name}"


def job_log(rule):
    return str(layout.job_log(STUDY_DIR, rule, "{run}"))


def every_run(name):
    """That file of every run of the study."""
    return expand(run_file(name), run=RUNS)


wildcard_constraints:
    run=r"([a-z_]+\d+-)?n\d+-size\d+B-seed\d+",
