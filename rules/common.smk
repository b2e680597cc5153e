import shlex
import sys
from pathlib import Path

from waku_shadow import checkout, layout
from waku_shadow.analyse import load_study
from waku_shadow.configuration import loader, sources
from waku_shadow.configuration import signoff as signoff_config
from waku_shadow.cost import cost_model
from waku_shadow.paper import studies
from waku_shadow.report import study_analysis
from waku_shadow.stack import builds
from waku_shadow.errors import WakuShadowError

# Validated before any job starts: a bad config stops here, with every problem and where it was set.
try:
    STUDY = sources.study_from_snakemake(config, workflow.config_settings)
except WakuShadowError as exc:
    sys.exit(f"waku-shadow: {exc}")
sources.export_machine(STUDY)
STUDY_DIR = sources.study_dir(STUDY)
RUNS = STUDY.run_ids()
RUN_DIR = str(layout.run_dir(STUDY_DIR, "{run}"))
BUILD_DIR = Path(STUDY.resources.build_dir)
# by absolute path: the workflow may run in another directory (--directory)
# the patches of the tiers stack.nwaku.patches chooses, in their series' order
PATCHES = [str(p.path) for p in checkout.build_patches(STUDY.stack.nwaku_tag, STUDY.stack.nwaku_memory_manager, STUDY.stack.nwaku_patches)]
SHADOW_PATCHES = [str(p) for p in checkout.shadow_patches()]

SHADOW_DIR = builds.shadow_build_dir(STUDY)
SHADOW = STUDY.stack.shadow_binary or str(SHADOW_DIR / "bin" / "shadow")
if STUDY.stack.nwaku_binary:
    NWAKU_DIR = BUILD_DIR / "nwaku" / "prebuilt"
    WAKUNODE2 = STUDY.stack.nwaku_binary
else:
    NWAKU_DIR = builds.nwaku_build_dir(STUDY)
    WAKUNODE2 = str(NWAKU_DIR / "wakunode2")
NWAKU_IDENTITY = str(NWAKU_DIR / builds.IDENTITY)


# compared by their times, as any input: a binary local.yaml names, and a prebuilt wakunode2's identity
# (one folder for any binary), so that another binary reruns the runs
CONFIGURED_BUILDS = {STUDY.stack.shadow_binary, STUDY.stack.nwaku_binary} | ({NWAKU_IDENTITY} if STUDY.stack.nwaku_binary else set())


def built(path):
    """A binary as the runs' input. One this workflow builds lives in a folder named after what makes it
    (tag, patches, flags), so its time says nothing the name does not: `ancient`."""
    return path if path in CONFIGURED_BUILDS else ancient(path)


def finished_build(*files):
    return all(Path(f).exists() for f in files)


COST_LAW = cost_model.read()
# a cluster executor sets no total of cores: a build job then asks for a node's usual share
BUILD_THREADS = workflow.resource_settings.cores or 8


def run_needs(run_id):
    """Memory, wall time and threads one run of the study needs (cost_model.needs)."""
    run = sources.study_on_this_machine(STUDY.run_config(run_id), source=f"run {run_id}")
    # a cluster executor sets no total of cores: each job gets a node's share
    return cost_model.needs(run, COST_LAW, workflow.resource_settings.cores)


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
